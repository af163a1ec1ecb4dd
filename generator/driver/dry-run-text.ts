/**
 * `build --dry-run` as text (pure): the plan's summary, what is built besides the variants (Nix's answer or the cache
 * model), the system features builders must declare, then one block per variant with its command. build-main.ts
 * prints it; --json prints the same data as an object instead.
 */
import { formatDuration } from "./report.ts";
import { shortPath } from "./run.ts";
import { DEFAULT_CUDA_CLOSURE_SECONDS } from "../model/plan.ts";
import type { dryRunRows } from "./dry-run.ts";
import { nixAnswerLine } from "./ask-nix.ts";
import type { BuilderNeeds } from "./builders.ts";
import type { Capacity, JobsRule } from "../model/concurrency.ts";
import { BUILD_LABEL, type WaitPart } from "../model/wait.ts";
import { CATALOG_FIGURE, CHECK_FIGURE } from "../model/plan.ts";
import { variantsAndChecks } from "../system-features.ts";

type DryRun = ReturnType<typeof dryRunRows>;

/** What the text needs besides the rows. */
interface DryRunTextInput {
  d: DryRun;
  backend: string;
  rule: Pick<JobsRule, "jobs" | "explanation">;
  coresPerBuild: number | null;
  /** The schedule's capacity (concurrency.ts): slots shared out as builds start, or --cores/--jobs fixed. */
  capacity: Capacity;
  /** Builds given fewer cores (name → cores and why). */
  capped: ReadonlyMap<string, { cores: number; why: string }>;
  /** Whether earlier reports gave any estimate. */
  fromHistory: boolean;
  askedStore: boolean;
  needs: BuilderNeeds;
  /** The preflight's lines (preflight/checks.ts formatChecks), or "" when every check passed. */
  preflight: string;
  /** Every variant's command and reasons in full (`--verbose`); otherwise what variants share is said once. */
  verbose?: boolean;
  /**
   * The plan is for another host (build-options.ts BuildArgs.forHost): its name, system, CPUs and memory (bytes, null
   * when the recording holds none) with where that comes from. Said under the plan's first line.
   */
  forHost?: { label: string; system: string; cpus: number; memBytes: number | null; memSource: string };
  /** The caller printed the host checks already (install's step 2): the plan leaves out the preflight and the builders' features. */
  checksShown?: boolean;
}

/**
 * The dry run's text, lines joined with "\n" (ends with a newline). By default what every variant shares (the cache
 * model's reasons, the command's shape, the estimates' bases) is said once at the top and each variant gets one line
 * of what differs; `verbose` gives every variant's command and reasons in full.
 */
export function dryRunText(i: DryRunTextInput): string {
  const { d } = i;
  const closures = d.cudaClosures;
  const lines = [
    i.verbose
      ? `plan: ${d.rows.length} variant(s), ${d.cached} already built, ${d.toBuild} to build${fetchWords(d)}; backend ${i.backend}; ` +
        scheduleWords(i.capacity, i.backend)
      : `plan: ${headCounts(d)}; ${i.backend}, ${scheduleWords(i.capacity, i.backend)}`,
    ...(i.forHost ? [forHostLine(i.forHost)] : []),
    ...(i.verbose ? [`  (${i.capacity.machine}, from ${i.capacity.from}: ${i.capacity.slots} compile slot(s) = min(CPUs, GiB / 4))`] : []),
    ...[...new Set([...i.capped.values()].map((c) => `  cores per build ${c.cores} for ${c.why}`))],
    ...waitLines(d, i.fromHistory, !!i.verbose),
    ...closureLines(d, !!i.verbose),
    ...answerLines(d, !!i.verbose),
    // Without --verbose the answer line (or the shared reasons below) already says what the model counts.
    ...(i.verbose || (!sharedReasons(d).length && !d.nixAnswer) ? storeLines(d, i.askedStore) : []),
    ...(i.verbose ? [] : sharedLines(d)),
    ...(i.checksShown && !i.verbose ? [] : featureLines(i.needs, !!i.verbose || !i.preflight)),
    ...(i.preflight && !(i.checksShown && !i.verbose) ? ["  preflight (the real run stops on a ✗ of Nix version, system features or flox):", i.preflight] : []),
    "",
  ];
  if (!i.verbose) lines.pop();
  // concat, not push(...rows): a spread of one line per variant overflows the stack past about 100,000 arguments.
  return lines.concat(i.verbose ? d.rows.flatMap((v) => verboseRow(v)) : compactRows(d)).join("\n") + "\n";
}

/** Whose facts the plan reads when it is for another host: the recording's system, CPUs and memory; this machine's store. */
function forHostLine(h: NonNullable<DryRunTextInput["forHost"]>): string {
  const mem = h.memBytes === null ? `its memory (${h.memSource}: taken as not limiting)` : `its memory (${(h.memBytes / 2 ** 30).toFixed(1)} GiB, ${h.memSource})`;
  return (
    `  for ${h.label}: its system ${h.system}, its ${h.cpus} CPUs and ${mem} set the schedule and the estimates; ` +
    `what is built or cached is this machine's (a recording holds none)`
  );
}

/** "1 core", "16 cores". */
function coresText(n: number): string {
  return `${n} core${n === 1 ? "" : "s"}`;
}

/**
 * The compact headline's counts, variants apart from their checks: "1 of 4 variant(s) to build, 3 to fetch; checks: 4 of
 * 4 to build" (a check is no variant: its row says whose proof it is).
 */
function headCounts(d: DryRun): string {
  const variants = d.rows.filter((v) => v.check === null);
  const checks = d.rows.filter((v) => v.check !== null);
  const state = (rs: readonly DryRun["rows"][number][]) => ({ build: rs.filter((v) => !v.cached && !v.fetch).length, fetch: rs.filter((v) => v.fetch).length });
  const v = state(variants);
  const c = state(checks);
  const checkWords = checks.length ? `; checks: ${c.build} of ${checks.length} to build${c.fetch ? `, ${c.fetch} to fetch` : ""}` : "";
  return `${v.build} of ${variants.length} variant(s) to build${v.fetch ? `, ${v.fetch} to fetch` : ""}${checkWords}`;
}

/** ", 4 to fetch" when Nix said it fetches some variants; "" otherwise. */
function fetchWords(d: DryRun): string {
  return d.toFetch ? `, ${d.toFetch} to fetch` : "";
}

/**
 * How the builds get their cores: "16 compile slots shared as builds start" (concurrency.ts startBuilds), or with
 * --cores "jobs 2 × 8 cores"; flox passes no cores (Nix's own setting applies), said.
 */
export function scheduleWords(c: Capacity, backend: string): string {
  if (c.cores !== null) return `jobs ${c.jobs ?? 1} × ${c.cores} cores`;
  const most = c.jobs !== null ? `, at most ${c.jobs} at once` : "";
  return `${c.slots} compile slot${c.slots === 1 ? "" : "s"} shared as builds start${most}${backend === "flox" ? " (modelled: flox passes no --cores)" : ""}`;
}

/** The CUDA closures: in full with --verbose; otherwise only those built from source, named unless they serve every variant. */
function closureLines(d: DryRun, verbose: boolean): string[] {
  const closures = d.cudaClosures;
  const each = `package-set scope, about ${formatDuration(DEFAULT_CUDA_CLOSURE_SECONDS.seconds)} each, in the wait`;
  if (verbose)
    return [
      `  CUDA closures: ${closures.shared.length} nixpkgs instance(s) with the default capabilities for ` +
        `${closures.shared.reduce((a, c) => a + c.variants.length, 0)} variant(s); ${closures.own.length} built from source (${each})` +
        (closures.own.length ? `: ${closures.own.map((c) => `${c.variants.join(", ")}`).join("; ")}` : ""),
    ];
  if (!closures.own.length) return [];
  const all = closures.own.length === 1 && closures.own[0]!.variants.length === d.rows.length;
  return [
    `  CUDA closures from source: ${closures.own.length} (package-set scope, ${formatDuration(DEFAULT_CUDA_CLOSURE_SECONDS.seconds)} each, in the wait)` +
      (all ? "" : `: ${closures.own.map((c) => c.variants.join(", ")).join("; ")}`),
  ];
}

/**
 * The headline: the wait until the last variant is ready, dependency builds included, with its parts (the critical
 * chain: what runs one after another), then the bases of the estimates. The chain is listed part by part with
 * `verbose`, or when no kind of build repeats on it; otherwise it is summarised by kind (chainSummary), so the wait
 * line stays within three lines of 80 columns whatever the plan's size.
 */
function waitLines(d: DryRun, fromHistory: boolean, verbose: boolean): string[] {
  if (d.estimatedMakespanS === null) return [`  wait unknown: ${d.estimatedMakespanUnknown}`];
  const parts = d.wait.parts;
  const deps = parts.filter((p) => p.offCache);
  const own = parts.filter((p) => !p.offCache);
  const label = (p: WaitPart) => (p.offCache ? (BUILD_LABEL[p.what as keyof typeof BUILD_LABEL] ?? p.what) : p.what);
  const repeats = new Set(parts.map((p) => `${p.offCache}:${label(p)}`)).size < parts.length;
  const head = `  wait ${formatDuration(d.estimatedMakespanS)} until the last variant is ready: `;
  const chain =
    verbose || !repeats
      ? (deps.length ? `${deps.map(label).join(", ")} from source ${formatDuration(deps.reduce((a, p) => a + p.seconds, 0))}, then ` : "") +
        (own.length ? own.map((p) => `${p.what} ${formatDuration(p.seconds)}`).join(", ") : "nothing to build")
      : chainSummary(parts, (p) => (!p.offCache && p.what.endsWith("-env") ? "environment" : label(p)), HEADLINE_CHARS - head.length);
  const bases = new Map<string, string[]>();
  // The checks' figure is said on their own line (checkLines).
  for (const r of d.rows) if (!r.cached && r.estimateBasis !== CHECK_FIGURE) bases.set(r.estimateBasis || "unknown", [...new Set([...(bases.get(r.estimateBasis || "unknown") ?? []), r.package])]);
  return [
    head + chain,
    ...(d.wait.offCache.length > deps.length
      ? [`    (${d.wait.offCache.length - deps.length} more dependency build(s) run beside the chain, in the wait too)`]
      : []),
    `  estimates${fromHistory ? " (earlier builds win)" : ""}: ` +
      [...bases].map(([b, pkgs]) => (b === CATALOG_FIGURE && bases.size > 1 ? `others ${b}s` : `${pkgs.join(", ")} ${b}`)).join("; "),
  ];
}

/**
 * Characters the summarised wait line may take in all: three lines of 80 columns, less what word wrapping may leave
 * at each line's end and the wrapped lines' indent (text.ts wrapLines).
 */
const HEADLINE_CHARS = 3 * 80 - 3 * 14;

/**
 * The critical chain summarised by kind, in the order each kind first comes: "CUDA closure 4 × 3h00m, magma 2 ×
 * 1h30m from source, then pytorch 640 × 21h00m on 1 core, environment 3 × 1m00s". A kind's builds of one length give
 * it once, of several the shortest and the longest; the cores are said when all of a kind's builds share them. The
 * kinds that take the longest in all are shown first within `budget` characters; the rest are counted at the end
 * ("and 3 more kinds: --verbose lists the chain").
 * @param parts the chain (wait.ts Wait.parts), in order
 * @param label a part's kind as the line names it (the dependency's label, the package, "environment")
 * @param budget the most characters the summary may take
 * @returns the summary (never longer than `budget` unless the first kind alone is)
 */
export function chainSummary(parts: readonly WaitPart[], label: (p: WaitPart) => string, budget: number): string {
  const groups = new Map<string, { label: string; offCache: boolean; seconds: number[]; cores: Set<number | null> }>();
  for (const p of parts) {
    const key = `${p.offCache}:${label(p)}`;
    const g = groups.get(key) ?? { label: label(p), offCache: p.offCache, seconds: [], cores: new Set() };
    g.seconds.push(p.seconds);
    g.cores.add(p.cores);
    groups.set(key, g);
  }
  const text = (g: { label: string; seconds: number[]; cores: Set<number | null> }) => {
    const lo = Math.min(...g.seconds);
    const hi = Math.max(...g.seconds);
    const each = lo === hi ? formatDuration(lo) : `${formatDuration(lo)}–${formatDuration(hi)}`;
    const [cores] = g.cores;
    const on = g.cores.size === 1 && cores !== null && cores !== undefined ? ` on ${coresText(cores)}` : "";
    return `${g.label} ${g.seconds.length > 1 ? `${g.seconds.length} × ` : ""}${each}${on}`;
  };
  const all = [...groups.values()];
  const total = (g: (typeof all)[number]) => g.seconds.reduce((a, b) => a + b, 0);
  const more = (n: number) => `and ${n} more kind${n === 1 ? "" : "s"}: --verbose lists the chain`;
  // The longest kinds first, as many as fit; then shown in the chain's order.
  const chosen = new Set<(typeof all)[number]>();
  const render = (set: ReadonlySet<(typeof all)[number]>) => {
    const shown = all.filter((g) => set.has(g));
    const deps = shown.filter((g) => g.offCache).map(text);
    const own = shown.filter((g) => !g.offCache).map(text);
    const items = [...deps.map((t, i) => (i === deps.length - 1 ? `${t} from source` : t)), ...own.map((t, i) => (i === 0 && deps.length ? `then ${t}` : t))];
    const left = all.length - shown.length;
    return [...items, ...(left ? [more(left)] : [])].join(", ");
  };
  for (const g of [...all].sort((a, b) => total(b) - total(a))) {
    const next = new Set([...chosen, g]);
    if (chosen.size > 0 && render(next).length > budget) continue;
    chosen.add(g);
  }
  return render(chosen) || "nothing to build";
}

/** One variant in full (--verbose): its estimate, state, directory, command, notes and every reason. */
function verboseRow(v: DryRun["rows"][number]): string[] {
  const state = v.cached ? `already built (${v.cachedBy}): ${v.outPath}` : v.fetch ? "to fetch: Nix substitutes its outputs" : v.cores !== null ? `to build on ${coresText(v.cores)}` : "to build";
  return [
    `${String(v.order).padStart(3)}. [wave ${v.wave}] ${v.name}  est ${estimateText(v)}` + `${v.dependsOn.length ? `  after ${v.dependsOn.join(", ")}` : ""}`,
    `       ${state}`,
    // The directory first, on a line of its own, so the command line below can be pasted as it is.
    `       in ${shortPath(v.command.cwd)}:`,
    `       $ ${shellLine(v.command.argv)}`,
    ...v.notes.map((x) => `       note: ${x}`),
    ...extrasLines(v),
    ...rowStoreLines(v),
  ];
}

/** A named environment's extras: built on this variant's torch from its Python set, not in its estimate. */
function extrasLines(v: DryRun["rows"][number]): string[] {
  if (!v.extras.length) return [];
  return [`       with ${v.extras.join(", ")}: from this variant's Python set, built on its torch (their own time is not estimated)`];
}

/** "1h45m (model: CUDA torch, 1 capability, 16 cores)", or "unknown (why)". */
function estimateText(v: DryRun["rows"][number]): string {
  return v.estimateS === null ? `unknown (${v.estimateUnknown})` : `${formatDuration(v.estimateS)} (${v.estimateBasis || v.estimateSource})`;
}

/** argv as one shell line (each word quoted only where it needs it). */
function shellLine(argv: readonly string[]): string {
  return argv.map((x) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(" ");
}

/**
 * The variants one line each (what differs: name, estimate, state, what it waits for, its own notes and reasons), and
 * the command once with NAME for the variant's name where every variant's has the same shape.
 */
function compactRows(d: DryRun): string[] {
  // The checks after the variants, in lines of their own (checkLines): one line each would double a small plan.
  return variantRows({ ...d, rows: d.rows.filter((v) => v.check === null) }).concat(checkLines(d.rows.filter((v) => v.check !== null)));
}

/**
 * The checks of a compact plan, said once per kind: how many, their estimates and states, and the command's shape
 * ("  then each variant's static check, its proof (result-NAME-proof): 4, 2m00s each"): one line.
 * --verbose lists every check with its command.
 */
function checkLines(rows: DryRun["rows"]): string[] {
  const out: string[] = [];
  for (const kind of ["static", "gpuCheck"] as const) {
    const rs = rows.filter((r) => r.check!.kind === kind);
    if (!rs.length) continue;
    const todo = rs.filter((r) => !r.cached && !r.fetch);
    const ests = [...new Set(todo.map((r) => (r.estimateS === null ? "unknown" : formatDuration(r.estimateS))))];
    const state = [todo.length ? `${todo.length}, ${ests.join(" or ")} each` : "", rs.length - todo.length ? `${rs.length - todo.length} built` : ""].filter(Boolean).join(", ");
    out.push(`  then each variant's ${kind === "static" ? "static check, its proof (result-NAME-proof)" : "GPU check"}: ${state}`);
  }
  return out;
}

/** The variants' rows of a compact plan (compactRows). */
function variantRows(d: DryRun): string[] {
  const anyCores = d.rows.some((v) => v.cores !== null);
  const shape = (v: DryRun["rows"][number]) => {
    const cwd = v.command.cwd.endsWith("/") ? v.command.cwd : `${v.command.cwd}/`;
    const args = v.command.argv.map((a, k) =>
      anyCores && v.command.argv[k - 1] === "--cores" ? "CORES" : (a.startsWith(cwd) ? a.slice(cwd.length) : a).split(v.name).join("NAME"),
    );
    return `in ${shortPath(v.command.cwd)}: $ ${shellLine(args)}`;
  };
  const shapes = new Set(d.rows.map(shape));
  const shared = sharedReasons(d);
  const notes = sharedNotes(d);
  const out: string[] = [];
  for (const v of d.rows) {
    const state = v.cached ? `already built (${v.cachedBy})` : v.fetch ? "to fetch (Nix)" : v.cores !== null ? `to build (${coresText(v.cores)})` : "to build";
    const est = v.estimateS === null ? "est unknown" : `est ${formatDuration(v.estimateS)}`;
    out.push(`${String(v.order).padStart(3)}. ${v.name}  ${est}, ${state}`);
    if (shapes.size > 1) out.push(`       ${shape(v)}`);
    out.push(...v.notes.filter((x) => !notes.includes(x)).map((x) => `       note: ${x}`), ...extrasLines(v));
    const own = v.offCache.filter((r) => !shared.includes(r));
    if (v.store) out.push(...rowStoreLines(v));
    else if (own.length) out.push(...shortReasons(own).map((r) => `       model: ${r}`));
  }
  const coresWord = d.rows.some((v) => v.cores !== null) ? ", CORES: its cores above" : "";
  if (shapes.size === 1 && d.rows.length) out.push(`  each (NAME: the variant${coresWord}; --verbose: each in full): ${[...shapes][0]}`);
  return out;
}

/** The cache model's reasons every modelled CUDA variant of the plan shares. */
function sharedReasons(d: DryRun): string[] {
  const withReasons = d.rows.filter((r) => r.offCache.length);
  if (withReasons.length < 2) return [];
  return withReasons[0]!.offCache.filter((r) => withReasons.every((w) => w.offCache.includes(r)));
}

/**
 * Reasons in short: "nccl: X; the cache's rule…" grouped by their first clause X ("nccl, magma-cuda-static, libnvshmem,
 * triton: cudaPackages_12_8 is not the default cudaPackages at 2c423e0 (CUDA 12.9)"); --verbose prints them whole.
 */
function shortReasons(reasons: readonly string[]): string[] {
  const by = new Map<string, string[]>();
  for (const r of reasons) {
    const m = /^([\w.-]+): ([^;]*)/.exec(r);
    const [what, cause] = m ? [m[1]!, m[2]!] : ["", r.split("; ")[0]!.split(" unless ")[0]!.split(": so ")[0]!];
    by.set(cause, [...(by.get(cause) ?? []), what].filter(Boolean));
  }
  return [...by].map(([cause, whats]) => (whats.length ? `${whats.join(", ")}: ${cause}` : cause));
}

/** The notes every variant of the plan shares (a system other than this host's). */
function sharedNotes(d: DryRun): string[] {
  if (d.rows.length < 2) return [];
  return d.rows[0]!.notes.filter((n) => d.rows.every((r) => r.notes.includes(n)));
}

/** What every variant shares, once at the top: the cache model's reasons (short) and the notes. */
function sharedLines(d: DryRun): string[] {
  const shared = d.store ? [] : sharedReasons(d);
  const notes = sharedNotes(d);
  return [
    ...(shared.length === 0
      ? []
      : shortReasons(shared).length === 1
        ? [`  cache model, every variant: ${shortReasons(shared)[0]}`]
        : [`  cache model, every variant (--ask-store asks Nix):`, ...shortReasons(shared).map((r) => `    ${r}`)]),
    ...(notes.length ? [`  every variant here: ${notes.join("; ")}`] : []),
  ];
}

/**
 * Which answer the plan used (ask-nix.ts): Nix's, or the model's and why Nix was not asked; none when not asked for.
 * Without --verbose, Nix's own error text after the reason is left out (`--verbose` prints it).
 */
function answerLines(d: DryRun, verbose: boolean): string[] {
  if (!d.nixAnswer) return [];
  if (!verbose && !d.nixAnswer.asked) {
    const why = d.nixAnswer.why.replace(/ \(error: [\s\S]*$/, " (--verbose: Nix's error)");
    return answerLines({ ...d, nixAnswer: { asked: false, why } }, true);
  }
  const extra = d.cacheModel ?? [];
  const model =
    `${d.rows.filter((v) => v.check === null && !v.cached && !v.fetch).length} variant(s)` +
    `${d.rows.some((v) => v.check !== null) ? ` + ${d.rows.filter((v) => v.check !== null && !v.cached && !v.fetch).length} check(s)` : ""} to build (result links only)` +
    (extra.length ? `, ${extra.length} dependency build(s) the CUDA cache cannot serve (${modelledHours(extra)})` : "");
  return [`  ${nixAnswerLine(d.nixAnswer, model)}`];
}

/**
 * The duration of the cache model's builds in words: "about 4.0 h", or with builds of no sourced figure (a rebuilt
 * dependency the catalog has no build time for) "at least 4.0 h (build time unknown: cupy, flashinfer)".
 */
function modelledHours(builds: readonly { seconds: number | null; what: string; attr?: string }[]): string {
  const h = (builds.reduce((a, b) => a + (b.seconds ?? 0), 0) / 3600).toFixed(1);
  const unknown = [...new Set(builds.filter((b) => b.seconds === null).map((b) => b.attr ?? b.what))];
  return unknown.length ? `at least ${h} h (build time unknown: ${unknown.join(", ")})` : `about ${h} h`;
}

/** The dry run's summary of what is built besides the variants: Nix's answer, or the cache model. */
function storeLines(d: DryRun, askedStore: boolean): string[] {
  const out: string[] = [];
  if (d.store) {
    out.push(
      `  Nix (nix-store --realise --dry-run, your substituters) for ${d.store.answered} variant(s): ` +
        `${d.store.toBuild.length} derivation(s) to build, ${d.store.toFetch.length} path(s) to fetch (each counted once)`,
    );
    if (d.store.toBuild.length) out.push(`    to build: ${d.store.toBuild.join(", ")}`);
    if (d.store.unreachable.length)
      out.push(`    unreachable substituter(s): ${d.store.unreachable.join(", ")}: their paths count as to build (offline?)`);
  } else if (askedStore) out.push("  Nix could not answer for any variant (not instantiated here, e.g. offline): the cache model follows");
  if (!d.store && d.cacheModel) {
    const count = (w: string) => d.cacheModel!.filter((b) => b.what === w).length;
    if (!d.cacheModel.length) out.push("  model (catalog/binary-cache.ts; --ask-store asks Nix): the CUDA cache serves every dependency of these variants");
    else out.push(
      `  model (catalog/binary-cache.ts; --ask-store asks Nix): besides the variants, ${count("cuda-closure")} CUDA closure(s), ` +
        `${count("nccl")} NCCL, ${count("nvshmem")} NVSHMEM, ${count("magma")} magma, ${count("triton")} triton and ${count("dependency")} rebuilt package dependency build(s) the CUDA cache cannot serve, ${modelledHours(d.cacheModel)}, each counted once, in the wait`,
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
function featureLines(n: BuilderNeeds, hostLine: boolean): string[] {
  const out = ["  system features a builder must declare (requiredSystemFeatures; Nix builds a derivation only where all are declared):"];
  for (const g of n.groups)
    out.push(
      `    ${g.system} ${g.features.join(" ") || "(none)"}: ${variantsAndChecks(g.variants)}; ` +
        (g.takenBy.length ? `taken by ${g.takenBy.join(", ")}` : `warning: no configured builder declares them (Nix will refuse these)`),
    );
  // The setting on a line of its own, so it can be copied (text.ts wrapLines splits a wide one into extra- lines).
  if (hostLine && n.groups.some((g) => !g.takenBy.length) && n.hostLine)
    out.push("    this CPU could declare (nix.conf; NixOS: nixpkgs.hostPlatform.gcc.arch):", `      ${n.hostLine}`);
  return out;
}
