/**
 * What `build --dry-run` reports, decided without printing (pure): one row per planned node in plan order, with
 * its wave, estimate, priority, whether it is already built, the exact command and notes; the totals; the CUDA
 * closures the selection needs. commands/build-main.ts prints it as text or JSON.
 */
import { buildCmd, type BackendOptions } from "./backend.ts";
import { cudaClosures, simulate, type Plan } from "./plan.ts";
import { storeName, type CacheProbe, type DryRealise } from "./store.ts";
import type { ModelledBuild } from "./cache-model.ts";
import type { NixAnswer } from "./ask-nix.ts";
import type { BuildTarget } from "./targets.ts";

/** One row of the dry-run plan. */
interface DryRunRow {
  order: number;
  name: string;
  package: string;
  wave: number;
  selectedAs: "requested" | "dependency" | undefined;
  dependsOn: string[];
  system: string;
  file: string;
  /** Estimated build time in seconds; null when unknown (`estimateUnknown` says why). */
  estimateS: number | null;
  /** "history", "package-median", "default" or "unknown" (plan.ts PlanNode.estimateSource). */
  estimateSource: string;
  /** Why the estimate is unknown; null when it is known. */
  estimateUnknown: string | null;
  priorityS: number;
  cached: boolean;
  cachedBy: CacheProbe["by"] | null;
  outPath: string | null;
  command: { argv: string[]; cwd: string };
  notes: string[];
  /**
   * What Nix says realising it builds and fetches (`--probe-store`: nix-store --realise --dry-run with the user's
   * substituters), by store name ("python3.13-torch-2.12.0"); `error` when Nix could not say; null without a probe.
   */
  store: { toBuild: string[]; toFetch: string[]; unreachable: string[] } | { error: string } | null;
  /** The cache model's reasons this variant is off the binary cache (driver/cache-model.ts); [] when it is not. */
  offCache: string[];
}

/** What dryRunRows is told besides the plan (see its parameters). */
interface DryRunOptions {
  host: string;
  force: boolean;
  jobs: number;
  /** Per name, Nix's dry-run answer (build --probe-store). */
  store?: ReadonlyMap<string, DryRealise | { error: string }>;
  /** The cache model of the selection (driver/cache-model.ts modelCacheMisses). */
  model?: { builds: ModelledBuild[]; reasons: ReadonlyMap<string, string[]> };
  /** What Nix said it would build and fetch, or why the model stands (ask-nix.ts). */
  nixAnswer?: NixAnswer | null;
}

/**
 * The dry-run rows and totals of `plan`.
 * @param o.host this machine's Nix system; a node for another system without `builders` gets a note
 * @param o.force every node counts as to build
 * @param o.jobs concurrent builds, for the estimated makespan (list scheduling on the estimates)
 * @returns the rows; counts to build and already built; the estimated makespan in seconds, or null with the reason
 *   when a variant to build has no estimate; the CUDA closures; Nix's answer; the cache model's extra builds
 */
export function dryRunRows(
  plan: Plan<BuildTarget>,
  cached: ReadonlyMap<string, CacheProbe>,
  why: ReadonlyMap<string, "requested" | "dependency">,
  backend: BackendOptions,
  o: DryRunOptions,
) {
  const closures = cudaClosures(plan.order.map((n) => plan.nodes.get(n)!.target));
  const done = new Set([...cached].filter(([, c]) => c.cached).map(([n]) => n));
  const sim = simulate(plan, o.jobs, new Map(), o.force ? new Set() : done);
  const rows: DryRunRow[] = plan.order.map((name, i) => {
    const n = plan.nodes.get(name)!;
    const c = cached.get(name);
    const cmd = buildCmd(n.target, backend);
    const notes: string[] = [];
    // --builders is the nix backend's (driver/options.ts refuses it with flox): advice names what this command takes.
    if (n.target.system !== o.host && backend.builders === undefined)
      notes.push(
        backend.backend === "flox"
          ? `system ${n.target.system} differs from this host (${o.host}): flox builds on this machine only; build it on a ${n.target.system} machine, or with \`--backend nix --builders\``
          : `system ${n.target.system} differs from this host (${o.host}): needs a remote builder (--builders)`,
      );
    if (c?.note && !c.cached) notes.push(`not instantiated here: ${c.note}`);
    return {
      order: i + 1,
      name,
      package: n.target.package,
      wave: n.wave,
      selectedAs: why.get(name),
      dependsOn: n.deps,
      system: n.target.system,
      file: n.target.file,
      estimateS: n.estimateS,
      estimateSource: n.estimateSource,
      estimateUnknown: n.unknownReason,
      priorityS: n.priority,
      cached: o.force ? false : (c?.cached ?? false),
      cachedBy: c?.by ?? null,
      outPath: c?.outPath ?? null,
      command: { argv: cmd.argv, cwd: cmd.cwd },
      notes,
      store: storeRow(o.store?.get(name)),
      offCache: o.model?.reasons.get(name) ?? [],
    };
  });
  // Across the selection, each derivation and path once (variants share torch, magma, nccl, …).
  const answers = [...(o.store?.values() ?? [])].filter((s): s is DryRealise => !("error" in s));
  const store = answers.length
    ? {
        toBuild: [...new Set(answers.flatMap((s) => s.toBuild))].map(storeName),
        toFetch: [...new Set(answers.flatMap((s) => s.toFetch))].map(storeName),
        unreachable: [...new Set(answers.flatMap((s) => s.unreachable))],
        answered: answers.length,
      }
    : null;
  return {
    rows,
    toBuild: rows.filter((v) => !v.cached).length,
    cached: rows.filter((v) => v.cached).length,
    /** Seconds, by list scheduling on the estimates; null when a variant to build has no estimate. */
    estimatedMakespanS: sim.unknown.length ? null : sim.makespan,
    /** Why the makespan is unknown (the variants without an estimate); null when it is known. */
    estimatedMakespanUnknown: sim.unknown.length ? `no estimate for ${sim.unknown.join(", ")}` : null,
    cudaClosures: closures,
    /** Nix's answer across the selection (null without --probe-store or when Nix answered for no variant). */
    store,
    /** The cache model's extra builds, each counted once (null when not modelled). */
    cacheModel: o.model?.builds ?? null,
    /** Which answer the plan used: Nix's (asked: true, with its counts) or the model's (asked: false, with why); null when not asked for. */
    nixAnswer: o.nixAnswer ?? null,
  };
}

function storeRow(s: DryRealise | { error: string } | undefined): DryRunRow["store"] {
  if (s === undefined) return null;
  if ("error" in s) return { error: s.error };
  return { toBuild: s.toBuild.map(storeName), toFetch: s.toFetch.map(storeName), unreachable: s.unreachable };
}
