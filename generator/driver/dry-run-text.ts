/**
 * `build --dry-run` as text (pure): the plan's summary, what is built besides the variants (Nix's answer or the cache
 * model), the system features builders must declare, then one block per variant with its command. build-main.ts
 * prints it; --json prints the same data as an object instead.
 */
import { formatDuration } from "./report.ts";
import { shortPath } from "./run.ts";
import { DEFAULT_CUDA_CLOSURE_SECONDS } from "./plan.ts";
import type { dryRunRows } from "./dry-run.ts";
import { nixAnswerLine } from "./ask-nix.ts";
import type { BuilderNeeds } from "./builders.ts";
import type { JobsRule } from "./jobs.ts";

type DryRun = ReturnType<typeof dryRunRows>;

/** What the text needs besides the rows. */
interface DryRunTextInput {
  d: DryRun;
  backend: string;
  rule: Pick<JobsRule, "jobs" | "explanation">;
  coresPerBuild: number | null;
  /** Builds given fewer cores (name → cores and why). */
  capped: ReadonlyMap<string, { cores: number; why: string }>;
  /** Whether earlier reports gave any estimate. */
  fromHistory: boolean;
  probed: boolean;
  needs: BuilderNeeds;
  /** The preflight's lines (preflight/checks.ts formatChecks), or "" when every check passed. */
  preflight: string;
}

/** The dry run's text, lines joined with "\n" (ends with a newline). */
export function dryRunText(i: DryRunTextInput): string {
  const { d } = i;
  const closures = d.cudaClosures;
  const toBuild = d.toBuild;
  const lines = [
    `plan: ${d.rows.length} variant(s), ${d.cached} already built, ${toBuild} to build; backend ${i.backend}; ` +
      `jobs ${i.rule.jobs}${i.coresPerBuild ? `, cores per build ${i.coresPerBuild}` : ""}`,
    `  (${i.rule.explanation})`,
    ...[...new Set([...i.capped.values()].map((c) => `  cores per build ${c.cores} for ${c.why}`))],
    d.estimatedMakespanS === null
      ? `  estimated makespan unknown: ${d.estimatedMakespanUnknown}`
      : `  estimated makespan ${formatDuration(d.estimatedMakespanS)} (estimates from ${i.fromHistory ? "earlier reports where known" : "defaults"})`,
    `  CUDA closures: ${closures.shared.length} nixpkgs instance(s) with the default capabilities (what the cache model below says the cache serves) for ` +
      `${closures.shared.reduce((a, c) => a + c.variants.length, 0)} variant(s); ${closures.own.length} built from source ` +
      `(package-set scope, about ${formatDuration(DEFAULT_CUDA_CLOSURE_SECONDS.seconds)} each, not in the makespan)` +
      (closures.own.length ? `: ${closures.own.map((c) => `${c.variants.join(", ")}`).join("; ")}` : ""),
    ...answerLines(d),
    ...storeLines(d, i.probed),
    ...featureLines(i.needs),
    ...(i.preflight ? ["  preflight (the real run stops on a ✗ of Nix version, system features or flox):", i.preflight] : []),
    "",
  ];
  for (const v of d.rows) {
    const state = v.cached ? `already built (${v.cachedBy}): ${v.outPath}` : "to build";
    lines.push(
      `${String(v.order).padStart(3)}. [wave ${v.wave}] ${v.name}  est ${v.estimateS === null ? `unknown (${v.estimateUnknown})` : `${formatDuration(v.estimateS)} (${v.estimateSource})`}` +
        `${v.dependsOn.length ? `  after ${v.dependsOn.join(", ")}` : ""}`,
      `       ${state}`,
      // The directory first, on a line of its own, so the command line below can be pasted as it is.
      `       in ${shortPath(v.command.cwd)}:`,
      `       $ ${v.command.argv.map((x) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(" ")}`,
      ...v.notes.map((x) => `       note: ${x}`),
      ...rowStoreLines(v),
    );
  }
  return lines.join("\n") + "\n";
}

/** Which answer the plan used (ask-nix.ts): Nix's, or the model's and why Nix was not asked; none when not asked for. */
function answerLines(d: DryRun): string[] {
  if (!d.nixAnswer) return [];
  const extra = d.cacheModel ?? [];
  const model =
    `${d.toBuild} variant(s) to build (result links only)` +
    (extra.length ? `, ${extra.length} dependency build(s) the CUDA cache cannot serve (about ${(extra.reduce((a, b) => a + b.seconds, 0) / 3600).toFixed(1)} h)` : "");
  return [`  ${nixAnswerLine(d.nixAnswer, model)}`];
}

/** The dry run's summary of what is built besides the variants: Nix's answer, or the cache model. */
function storeLines(d: DryRun, probed: boolean): string[] {
  const out: string[] = [];
  if (d.store) {
    out.push(
      `  Nix (nix-store --realise --dry-run, your substituters) for ${d.store.answered} variant(s): ` +
        `${d.store.toBuild.length} derivation(s) to build, ${d.store.toFetch.length} path(s) to fetch (each counted once)`,
    );
    if (d.store.toBuild.length) out.push(`    to build: ${d.store.toBuild.join(", ")}`);
    if (d.store.unreachable.length)
      out.push(`    unreachable substituter(s): ${d.store.unreachable.join(", ")}: their paths count as to build (offline?)`);
  } else if (probed) out.push("  Nix could not answer for any variant (not instantiated here, e.g. offline): the cache model follows");
  if (!d.store && d.cacheModel) {
    const hours = d.cacheModel.reduce((a, b) => a + b.seconds, 0) / 3600;
    const count = (w: string) => d.cacheModel!.filter((b) => b.what === w).length;
    out.push(
      `  model (catalog/binary-cache.ts; --probe-store asks Nix): besides the variants, ${count("cuda-closure")} CUDA closure(s), ` +
        `${count("nccl")} NCCL, ${count("nvshmem")} NVSHMEM, ${count("magma")} magma and ${count("triton")} triton build(s) the CUDA cache cannot serve, about ${hours.toFixed(1)} h, each counted once`,
    );
  }
  return out;
}

/** One variant's lines: Nix's answer, else the model's reasons. */
function rowStoreLines(v: DryRun["rows"][number]): string[] {
  if (v.store && "error" in v.store) return [`       Nix: ${v.store.error} (model: ${v.offCache.join("; ") || "served by the cache"})`];
  if (v.store)
    return [`       Nix: builds ${v.store.toBuild.length}${v.store.toBuild.length ? ` (${v.store.toBuild.join(", ")})` : ""}, fetches ${v.store.toFetch.length}`];
  return v.offCache.map((r) => `       model: ${r}`);
}

/** The dry run's lines on builders: per group of variants, its features and who takes it (or that nobody does). */
function featureLines(n: BuilderNeeds): string[] {
  const out = ["  system features a builder must declare (requiredSystemFeatures; Nix builds a derivation only where all are declared):"];
  for (const g of n.groups)
    out.push(
      `    ${g.system} ${g.features.join(" ") || "(none)"}: ${g.variants.length} variant(s); ` +
        (g.takenBy.length ? `taken by ${g.takenBy.join(", ")}` : `warning: no configured builder declares them (Nix will refuse these)`),
    );
  // The setting on a line of its own, so it can be copied (text.ts wrapLines splits a wide one into extra- lines).
  if (n.groups.some((g) => !g.takenBy.length) && n.hostLine)
    out.push("    this CPU could declare (nix.conf; NixOS: nixpkgs.hostPlatform.gcc.arch):", `      ${n.hostLine}`);
  return out;
}
