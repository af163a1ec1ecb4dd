/**
 * `build` as two calls, plan then run (as esbuild parses its options into one object, then `api.Build` runs it):
 * `planBuild` decides everything a build or a dry run needs and returns it as data (a `BuildPlan`); `runBuildPlan`
 * runs that plan and writes its report. Neither prints nor sets the exit status: commands/build-main.ts prints the
 * plan (`--dry-run`) or the run's report, and `eval`, `publish` and `fleet` call the named steps below instead of
 * their own copies.
 *
 * planBuild's steps, in the order build checks (the first that fails stops it, and nothing is built):
 *  1. `resolveBuildOptions` (options.ts): paths, numbers, the backend; a `--report` file this CLI would not write;
 *  2. `select`: the targets of the matrix (or `--pkgs-dir`), the selection closed over dependsOn, the generated files
 *     compared with what matrix.ts gives (`selectCurrent`), earlier durations (`readEarlierReports`), the variants'
 *     static checks (by default; not with --no-verify);
 *  3. `checkHost`: the preflight checks that need nothing evaluated (the Nix version, flox);
 *  4. `orderTargets`: the plan (DAG) with estimates, then the --jobs rule and the backend's options;
 *  5. `evaluateFirst`: every selected variant instantiated, what is built already, what does not evaluate; then the
 *     checks of what is left to build (system features, store space) and the evaluation's verdict (`evaluationVerdict`);
 *  6. `dryRunAnswers`: Nix's dry-run answer with the user's substituters (`askStore`), and for a dry run what its builders
 *     must declare and the cache model (`dryRunData`).
 *
 * Errors planBuild throws, all InputError (exit 2, errors.ts EXIT.input; nothing is built): UsageError (an option),
 * OutputFileError (a --report path), MatrixError, SelectionError (a name, a filter, a missing file), the stale
 * generated files' error (generated-state.ts), PreflightError (a blocking host check), EvaluationError.
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import { hostSystem, type BackendOptions } from "./backend.ts";
import { builderNeeds, type BuilderNeeds } from "./builders.ts";
import { modelCacheMisses } from "../model/cache-model.ts";
import { dryRunRows } from "./dry-run.ts";
import { askNix, ASK_NIX_TIMEOUT_S, evalLimit, NixDeadlineError, type AskedNix, type NixAnswer } from "./ask-nix.ts";
import { cacheNixOptions, type TeamCache } from "../matrix/team-cache.ts";
import { EvaluationError, evaluationFailures, evaluationGate, type EvaluationFailure } from "./eval-first.ts";
import { capacityOf, coresForPackage, jobsRule, type Capacity, type JobsRule } from "../model/concurrency.ts";
import { resolveBuildOptions, type BuildArgs, type ResolvedBuildOptions } from "./build-options.ts";
import { makePlan, type Plan } from "../model/plan.ts";
import { durationsFromReports, makeRunId, readEarlierReports } from "./report.ts";

export { readEarlierReports };
import { runBuilds, shortPath, type RunResult } from "./run.ts";
import type { StatusSink } from "./status.ts";
import { dryRealise, askCached, type CachedAnswer, type DryRealise, type NixOptions } from "./store.ts";
import { checkFiles, checkTargets, loadTargets, selectTargets, type BuildTarget } from "./targets.ts";
import { onTorch } from "../catalog/lib/packages.ts";
import { closeCatalogExtras, didYouMean } from "../matrix/extra-hints.ts";
import type { Catalog } from "../catalog/schema.ts";
import { EXIT } from "../errors.ts";
import { assertGeneratedCurrent, handWrittenWarning, handWrittenWrappers } from "../generate/generated-state.ts";
import { outputMode, writeOutputFile } from "../output-file.ts";
import { checkedVariants, evaluatesPinnedNixpkgs, HostAnswers, refuseOnBlocking, runChecks, type CheckResult, type PreflightContext } from "../preflight/checks.ts";
import { thisHost } from "../preflight/host-root.ts";
import { loadProject, type Project } from "../matrix/project.ts";
import { wrap } from "../text.ts";

/** What planBuild is given. */
export interface PlanBuildOptions {
  /** build's parsed options (commands/build.ts; install hands in its own). */
  args: BuildArgs;
  /** The project root the options resolve against (paths.ts REPO_ROOT). */
  projectRoot: string;
  /** `--nix-option` NAME=VALUE parsing (commands/shared.ts parseNixOptions; it throws the command's UsageError). */
  parseNixOptions: (specs: string[] | undefined) => (readonly [string, string])[];
  /** Columns the refusals' messages are wrapped to. */
  width: number;
  /** Each warning as planning meets it (text ending in a newline), before a later step may refuse: stderr in the CLI. */
  onWarning?: (text: string) => void;
}

/** What `select` returns: the closed selection (with the variants' checks unless --no-verify), where the files are, earlier durations. */
export interface BuildSelection {
  targets: BuildTarget[];
  /** name → "requested" or "dependency" (targets.ts selectTargets). */
  why: Map<string, "requested" | "dependency">;
  /** "project" (.flox/pkgs) or "pkgs-dir" (--pkgs-dir). */
  source: "project" | "pkgs-dir";
  /** name → seconds its last build took (earlier reports). */
  history: Map<string, number>;
  /** The team's binary caches matrix.ts names (team-cache.ts): passed to Nix for this run. */
  caches: TeamCache[];
}

/** What a dry run shows besides the plan: what builders must declare, and the rows with the cache model. */
export interface DryRunData {
  needs: BuilderNeeds;
  rows: ReturnType<typeof dryRunRows>;
  /** Environment extras close to one the catalog knows (a likely typo), with the variants that ask for them. */
  extraTypos: { extra: string; names: string[]; suggestion: string }[];
}

/** Everything planBuild decided; runBuildPlan runs it, commands/build-main.ts prints it. */
export interface BuildPlan {
  args: BuildArgs;
  options: ResolvedBuildOptions;
  /** The catalog with the local catalog beside the matrix (catalog/local.ts catalogBeside): extras, pins, package rows. */
  catalog: Catalog;
  selection: BuildSelection;
  /** This machine's Nix system ("x86_64-linux"). */
  host: string;
  /** The host checks that ran (the early ones, then those of what is left to build), and the failed ones among them. */
  checks: { results: CheckResult[]; failed: CheckResult[] };
  /** Whether the variants were instantiated (a build, or a dry run with --ask-store): only then are `failures` known. */
  instantiated: boolean;
  /** The selected variants to build that did not evaluate (eval-first.ts); [] when none or not instantiated. */
  evaluationFailures: EvaluationFailure[];
  plan: Plan<BuildTarget>;
  rule: JobsRule;
  /** The host's build capacity the driver schedules on (concurrency.ts): the cores each build is started with. */
  capacity: Capacity;
  backend: BackendOptions;
  /** Builds given fewer cores than the rule's (name → cores and why: model/concurrency.ts coresForPackage). */
  capped: Map<string, { cores: number; why: string }>;
  /** What the run treats as built (empty under --force), substitutable ones included with --skip-cached. */
  cached: Map<string, CachedAnswer>;
  /** Nix's dry-run answer per instantiated variant not built yet (--ask-store on a dry run, --skip-cached); else undefined. */
  store: Map<string, DryRealise | { error: string }> | undefined;
  /** The selected targets not already built. */
  toBuild: BuildTarget[];
  /** For `--dry-run` only. */
  dryRun: DryRunData | null;
  /** What Nix said it would build and fetch, or why the model stands (ask-nix.ts); null when not asked for (--ask-store says it its own way). */
  nixAnswer: NixAnswer | null;
}

/** The checks that need nothing evaluated, and those of what is left to build. */
const EARLY_CHECKS = ["nix-version", "flox"];
const LATE_CHECKS = ["system-features", "store-space"];

/**
 * Plan a build: every step of the module comment, in order. Prints nothing.
 * @returns the plan (data); a dry run's part is filled only with `args.dryRun`
 * @throws InputError (exit 2) as the module comment lists; the build then must not start
 */
export async function planBuild(po: PlanBuildOptions): Promise<BuildPlan> {
  const { args: a, width } = po;
  const warn = po.onWarning ?? (() => {});
  const o = await resolveBuildOptions(a, po.projectRoot, po.parseNixOptions);
  const catalog = await catalogOf(o.matrixFile);
  // A --report this CLI will not write (a directory, a socket, a link to nothing) is refused now, not after the builds.
  if (a.report !== undefined && !a.dryRun) outputMode(resolve(a.report));
  const selection = await select(a, o, warn);
  const { targets } = selection;
  // The team's caches reach every Nix command of this run (flox build takes no --option: flox users add them to nix.conf).
  if (o.backend === "nix") o.nixOptions.push(...cacheNixOptions(selection.caches));
  // A dry run for a recorded host plans with its system, CPUs and memory (BuildArgs.forHost).
  const other = a.dryRun ? a.forHost : undefined;
  const host = other?.system ?? hostSystem();
  const machine = { cpus: other?.cpus ?? availableParallelism(), memBytes: other ? other.memBytes : totalmem() };
  const context = hostContext("build", targets, { backend: o.backend, hostSystem: host, builders: a.builders, localBuilds: o.maxJobs !== 0, nixOptions: o.nixOptions });
  const early = checkHost(context, EARLY_CHECKS, a.hostRoot);
  // Without a usable Nix or flox nothing can be asked; the checks that otherwise wait for the store's answers (which variants
  // are left to build) run against every selected one, so that one refusal lists every fix, not the first.
  if (!a.dryRun && early.some((r) => r.status === "fail" && r.blocking)) refuseOnBlocking([...early, ...checkHost(context, LATE_CHECKS, a.hostRoot)], width);

  const rule = jobsRule(machine, o.cores, o.jobs);
  // The schedule's capacity: the host's slots shared out as builds start (concurrency.ts startBuilds), the one the
  // driver runs and every wait is modelled on.
  const capacity = capacityOf(
    machine,
    { cores: o.cores, jobs: o.jobs, gibPerJob: gibPerJobOf(catalog, targets), from: other ? `${other.label}; memory: ${other.memSource}` : "this machine" },
  );
  // The estimates' nominal cores (priorities): --cores, else the slots a build alone gets.
  const plan = orderTargets(targets, selection.history, capacity.cores ?? capacity.slots);
  const { backend, capped } = backendOptions(catalog, a, o, { targets, rule, machine });
  // A real build's questions to Nix before it builds run under one deadline (ask-nix.ts evalLimit): a Nix that hangs
  // stops the run there, with what was waited for (NixDeadlineError).
  const limit = a.dryRun ? null : evalLimit(a.evalTimeout ?? a.askNixTimeout);
  const deadline = limit ? Date.now() + limit.seconds * 1000 : undefined;
  const ev = await evaluateFirst(catalog, targets, backend.outDir, o.nixOptions, { dryRun: !!a.dryRun, askStore: !!a.askStore, force: !!a.force, ownFiles: a.pkgsDir !== undefined, deadline });
  if (limit && ev.late) throw new NixDeadlineError(ev.late, limit);
  const asked = await askFirst(a, o, selection, ev, deadline);
  // Past the build's own deadline (not only the question's shorter --ask-nix-timeout, after which the model stands).
  const lateWhy = asked === null ? null : asked.answer.asked ? (asked.answer.late?.why ?? null) : /did not answer/.test(asked.answer.why) ? asked.answer.why : null;
  if (limit && deadline !== undefined && Date.now() >= deadline && lateWhy !== null) throw new NixDeadlineError(lateWhy, limit);
  const toBuild = targets.filter((t) => !ev.cached.get(t.name)?.cached);
  // The checks of what is left to build: the system features its derivations require, and store space (a warning).
  const left = new Set(toBuild.map((t) => t.name));
  const late = checkHost({ ...context, variants: context.variants.filter((v) => left.has(v.name)) }, LATE_CHECKS, a.hostRoot);
  const results = [...early, ...late];
  // This machine would be refused a variant only once its dependencies are built, hours in: stop now with the fix,
  // before the evaluation's verdict (a host fix first; the matrix's errors after it).
  if (!a.dryRun) refuseOnBlocking(results, width);
  if (!a.dryRun && ev.failures.length) evaluationVerdict(ev.failures, { backend: o.backend, pinnedNixpkgs: context.pinnedNixpkgs, selected: targets.length, width, warn });

  const how = { nixOptions: o.nixOptions, caches: selection.caches, deadline };
  const store = asked?.store ?? (await dryRunAnswers(a, targets, ev.cached, how));
  const partial = { args: a, options: o, catalog, selection, host, plan, rule, capacity, backend, capped, cached: ev.cached, store, toBuild, nixAnswer: asked?.answer ?? null };
  return {
    ...partial,
    checks: { results, failed: results.filter((r) => r.status === "fail") },
    instantiated: ev.instantiated,
    evaluationFailures: ev.failures,
    dryRun: a.dryRun ? await dryRunData(partial) : null,
  };
}

/**
 * The one selection of `build`, `eval` and `publish`: names, filters and package closed over dependsOn
 * (targets.ts selectTargets); with `current`, the generated files Nix would read for `current.command` must say what
 * the project's matrix gives now.
 * @throws SelectionError for an unknown name, a bad filter or an empty selection
 * @throws the stale generated files' error (generated-state.ts assertGeneratedCurrent), exit 2
 */
export function selectCurrent<T extends Parameters<typeof selectTargets>[0][number]>(
  all: readonly T[],
  sel: Parameters<typeof selectTargets>[1],
  current?: { project: Project; root: string; command: string },
) {
  const selected = selectTargets(all, sel);
  // What Nix reads (the last generate's files) must say what was just expanded and is about to be shown or built.
  if (current) assertGeneratedCurrent(current.project, current.root, current.command, selected.targets);
  return selected;
}

/**
 * Ask Nix what it would build and fetch (ask-nix.ts) for a dry run (unless --ask-store, which asks its own way) and
 * for a build given `askNixTimeout` (install); what Nix says is built replaces the result links' word (not under
 * --force). @returns null when not asked for
 */
async function askFirst(
  a: BuildArgs,
  o: ResolvedBuildOptions,
  sel: BuildSelection,
  ev: { instantiated: boolean; cached: Map<string, CachedAnswer> },
  deadline: number | undefined,
): Promise<AskedNix | null> {
  if (a.dryRun ? a.askStore : a.askNixTimeout === undefined) return null;
  const options = o.backend === "nix" ? o.nixOptions : [...o.nixOptions, ...cacheNixOptions(sel.caches)];
  const timeoutS = a.askNixTimeout ?? ASK_NIX_TIMEOUT_S;
  const answered = ev.instantiated && !a.force ? ev.cached : undefined;
  const asked = await askNix(sel.targets, { outDir: o.outDir, nixOptions: options, caches: sel.caches, timeoutS, answered, deadline });
  if (asked.cached && !a.force) for (const [n, c] of asked.cached) ev.cached.set(n, c);
  return asked;
}

/**
 * Whether a build builds the variants' static checks: by default, and whenever `--verify-gpu` asks for the GPU checks;
 * not with `--no-verify` (`verify: false`) alone.
 */
export function verifies(a: Pick<BuildArgs, "verify" | "verifyGpu">): boolean {
  return a.verify !== false || !!a.verifyGpu;
}

/** Step 2: load the targets, select (names, filters, package), check them, add their checks (unless --no-verify), with earlier durations. */
export async function select(a: BuildArgs, o: ResolvedBuildOptions, warn: (text: string) => void): Promise<BuildSelection> {
  const { targets: all, source, project, caches } = await loadTargets({
    root: o.root,
    pkgsDir: a.pkgsDir !== undefined ? resolve(a.pkgsDir) : undefined,
    variants: a.variants,
    matrixFile: a.matrix !== undefined ? o.matrixFile : undefined,
  });
  const sel = selectCurrent(all, { names: a.names, filters: a.filter, package: a.package }, project ? { project, root: o.root, command: "build" } : undefined);
  // A wrapper generate did not write is built as it is, never compared with the matrix: said, not passed over.
  const own = project && a.pkgsDir === undefined ? handWrittenWarning(handWrittenWrappers(project, o.root, sel.targets)) : null;
  if (own) warn(`warning: ${own}\n`);
  checkFiles(sel.targets);
  const history = readEarlierReports((onSkip) => durationsFromReports(o.logsRoot, onSkip), warn, shortPath);
  if (verifies(a)) {
    // Checks of each selected variant's promise, after it (pkgs/checks.nix through the variant's own file): by
    // default; --no-verify leaves the variants unproven.
    const checks = checkTargets(sel.targets, resolve(o.logsRoot, "checks"), !!a.verifyGpu);
    // Their one-line files are written when Nix is to read them: a dry run that does not instantiate changes nothing.
    if (!a.dryRun || a.askStore) for (const [f, text] of checks.files) await writeOutputFile(f, text);
    // Their estimate: an earlier check's time, else the check figure (plan.ts estimateBuild).
    for (const t of checks.targets) {
      sel.targets.push(t);
      sel.why.set(t.name, "requested");
    }
  }
  return { targets: sel.targets, why: sel.why, source, history, caches };
}

/**
 * The preflight context of `command` for `targets` (preflight/checks.ts): `pinnedNixpkgs` defaults to whether a
 * target's file is a generated wrapper (it fetches a catalog pin), `hostSystem` to this machine's.
 */
export function hostContext(
  command: PreflightContext["command"],
  targets: readonly { name: string; system: string; cuda?: string | null; package: string; requiredSystemFeatures?: readonly string[]; file: string }[],
  o: Omit<PreflightContext, "command" | "variants" | "pinnedNixpkgs" | "hostSystem"> & { pinnedNixpkgs?: boolean; hostSystem?: string },
): PreflightContext & { pinnedNixpkgs: boolean } {
  return {
    ...o,
    command,
    variants: checkedVariants(targets.map((t) => ({ ...t, cuda: t.cuda ?? null }))),
    pinnedNixpkgs: o.pinnedNixpkgs ?? evaluatesPinnedNixpkgs(targets.map((t) => t.file)),
    hostSystem: o.hostSystem ?? hostSystem(),
  };
}

/**
 * Step 3: run the checks of `context` against this machine (all of its command's, or `only` those), in order.
 * @param hostRoot read the host's files under this root instead of "/" (the hidden --host-root: a modelled host)
 */
export function checkHost(context: PreflightContext, only?: readonly string[], hostRoot?: string): CheckResult[] {
  return runChecks(hostRoot === undefined ? thisHost() : { ...thisHost(), root: hostRoot }, context, only);
}

/**
 * Step 4: the build plan (DAG, order, waves, estimates from `history`, else from plan.ts estimateBuild at `cores` per
 * build): plan.ts makePlan.
 */
export function orderTargets<T extends BuildTarget>(targets: readonly T[], history?: ReadonlyMap<string, number>, cores: number | null = null): Plan<T> {
  return makePlan(targets, history, { cores });
}

/** GiB per compile process of the selected packages that need more than a slot's (catalog `gibPerCompileJob`), by package. */
function gibPerJobOf(cat: Catalog, targets: readonly BuildTarget[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of targets) {
    const gib = onTorch(cat, t.package)?.gibPerCompileJob?.gib;
    if (gib !== undefined) out.set(t.package, gib);
  }
  return out;
}

/**
 * The backend's options, with fewer cores for packages whose compile jobs need more memory (catalog gibPerCompileJob):
 * `on` holds the selected targets, the --jobs/--cores rule and the machine (CPUs, memory in bytes).
 */
function backendOptions(cat: Catalog, a: BuildArgs, o: ResolvedBuildOptions, on: { targets: readonly BuildTarget[]; rule: JobsRule; machine: { cpus: number; memBytes: number | null } }) {
  const { targets, rule, machine } = on;
  const capped = new Map<string, { cores: number; why: string }>();
  if (o.backend === "nix" && o.cores === undefined)
    for (const t of targets) {
      const c = coresForPackage(rule, machine, onTorch(cat, t.package)?.gibPerCompileJob?.gib);
      if (c.why) capped.set(t.name, { cores: c.cores, why: `${t.package}: ${c.why}` });
    }
  const backend: BackendOptions = {
    backend: o.backend,
    root: o.root,
    outDir: o.outDir,
    builders: a.builders,
    maxJobs: o.maxJobs,
    copyTo: a.copyTo,
    cores: o.backend === "nix" ? rule.coresPerBuild : undefined,
    nixOptions: o.nixOptions,
    connectTimeoutS: o.connectTimeoutS,
    coresByName: new Map([...capped].map(([n, c]) => [n, c.cores])),
  };
  return { backend, capped };
}

/**
 * Step 5: instantiate every selected variant and ask what is built (store.ts askCached). A build instantiates before
 * the first build starts, --force included (it only ignores what is built); a dry run only with --ask-store
 * (evaluating a generated file may fetch its pinned nixpkgs).
 * @param o.ownFiles the targets' files come from `--pkgs-dir` (eval-first.ts failureCause)
 * @param o.deadline epoch ms: every Nix call is stopped then and none started after (store.ts askCached)
 * @returns whether it instantiated, what counts as built (empty under --force), the variants that do not evaluate,
 *   and what was waited for when Nix was not heard for some variant by the deadline (`late`, else null)
 */
export async function evaluateFirst(
  cat: Pick<Catalog, "extras">,
  targets: readonly BuildTarget[],
  outDir: string,
  nixOptions: NixOptions,
  o: { dryRun: boolean; askStore: boolean; force: boolean; ownFiles?: boolean; deadline?: number },
): Promise<{ instantiated: boolean; cached: Map<string, CachedAnswer>; failures: EvaluationFailure[]; late: string | null }> {
  const instantiated = !o.dryRun || o.askStore;
  const answers: Map<string, CachedAnswer> = o.force && !instantiated ? new Map() : await askCached(targets, outDir, nixOptions, { instantiate: instantiated, deadline: o.deadline });
  const cached: Map<string, CachedAnswer> = o.force ? new Map() : answers;
  const late = [...answers.values()].filter((p) => p.late !== undefined);
  // A variant Nix was not heard for by the deadline neither evaluates nor fails to: not a failure of the matrix's.
  const heard = late.length ? targets.filter((t) => answers.get(t.name)?.late === undefined) : targets;
  return {
    instantiated,
    cached,
    failures: instantiated ? evaluationFailures(cat, heard, answers, cached, !!o.ownFiles) : [],
    late: late.length ? `${late[0]!.late}${late.length > 1 ? ` (${late.length} variants not heard)` : ""}` : null,
  };
}

/**
 * The variants that did not evaluate here, when a build is to start: stop on those that must, else a warning naming
 * those that build anyway (eval-first.ts evaluationGate: why they may).
 * @throws EvaluationError (exit 2) when the evaluation's verdict stops the build
 */
export function evaluationVerdict(
  failures: EvaluationFailure[],
  o: {
    backend: "flox" | "nix";
    /** The files fetch a pinned nixpkgs (generated wrappers). */
    pinnedNixpkgs: boolean;
    /** How many targets are selected (the error's count). */
    selected: number;
    /** Terminal columns for the warning. */
    width: number;
    warn: (text: string) => void;
  },
): void {
  const { backend, pinnedNixpkgs, selected, width, warn } = o;
  const gate = evaluationGate(backend, pinnedNixpkgs, () => new HostAnswers(thisHost()).nixVersion(), failures);
  if (gate.stop.length) throw new EvaluationError(gate.stop, selected, width);
  const names = gate.pass.map((f) => f.name);
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");
  warn(wrap(`${shown} did not evaluate here, but ${gate.why}: building them`, width, { indent: "warning: ", hang: "  " }) + "\n");
}

/**
 * Step 6: what Nix would build and fetch for each instantiated variant, with the user's substituters: the dry run's
 * real answer (--ask-store) and what --skip-cached decides by (it then counts the substitutable ones as cached).
 * @param how the run's Nix options, the team's caches, and the run's one deadline (epoch ms), if any
 */
async function dryRunAnswers(
  a: BuildArgs,
  targets: readonly BuildTarget[],
  cached: Map<string, CachedAnswer>,
  how: { nixOptions: NixOptions; caches: readonly TeamCache[]; deadline?: number },
) {
  const { nixOptions, caches, deadline } = how;
  const askNix = (a.dryRun && !!a.askStore) || (!a.dryRun && !!a.skipCached);
  if (!askNix) return undefined;
  const asked = targets.filter((t) => {
    const c = cached.get(t.name);
    return c !== undefined && !c.cached && c.drvPath !== null;
  });
  const store = await storeDryRun(new Map(asked.map((t) => [t.name, cached.get(t.name)!.drvPath!])), nixOptions, caches, deadline);
  if (!a.dryRun && a.skipCached) markSubstitutable(targets, cached, store);
  return store;
}

/**
 * Nix's dry-run answer (nix-store --realise --dry-run) for each derivation, by the name it is given under; with the
 * team's `caches`, a path they hold without a signature this host trusts counts as to build (store.ts dryRealise).
 * @param deadline epoch ms (a real build's one deadline): calls stopped then or not started are `{ error }`
 */
export async function storeDryRun(
  drvPaths: ReadonlyMap<string, string>,
  nixOptions: NixOptions,
  caches: readonly TeamCache[] = [],
  deadline?: number,
): Promise<Map<string, DryRealise | { error: string }>> {
  const names = [...drvPaths.keys()];
  const answers = await dryRealise(names.map((n) => drvPaths.get(n)!), nixOptions, deadline, caches);
  return new Map(names.map((n, i) => [n, answers[i]!]));
}

/** --skip-cached: variants whose outputs a substituter holds (Nix builds nothing for them) count as cached. */
function markSubstitutable(targets: readonly BuildTarget[], cached: Map<string, CachedAnswer>, store: ReadonlyMap<string, DryRealise | { error: string }>): void {
  for (const t of targets) {
    const c = cached.get(t.name);
    const s = store.get(t.name);
    if (c && !c.cached && c.drvPath && s && !("error" in s) && !s.toBuild.includes(c.drvPath) && s.unknown.length === 0)
      cached.set(t.name, { ...c, cached: true, by: "substituter" });
  }
}

/** A dry run's data: what builders must declare (builders.ts), the rows with the cache model, likely typos of extras. */
async function dryRunData(p: Omit<BuildPlan, "checks" | "instantiated" | "evaluationFailures" | "dryRun">): Promise<DryRunData> {
  const { args: a, options: o, selection: sel, host } = p;
  const needs = await builderNeeds(p.toBuild, { host, builders: a.builders, maxJobs: o.maxJobs, nixOptions: o.nixOptions, backend: o.backend, hostRoot: a.hostRoot });
  const model = modelCacheMisses(
    sel.targets.filter((t): t is BuildTarget & { nixpkgs: string } => t.nixpkgs !== undefined && t.check === undefined),
    p.catalog,
  );
  const rows = dryRunRows(p.plan, p.cached, sel.why, p.backend, {
    host, force: !!a.force, capacity: p.capacity, store: p.store, model, nixAnswer: p.nixAnswer, history: sel.history,
  });
  return { needs, rows, extraTypos: extraTypos(p.catalog, sel.targets) };
}

/** Each environment extra close to one the catalog knows (a likely typo that only Nix's evaluation would otherwise find). */
function extraTypos(cat: Pick<Catalog, "extras">, targets: readonly BuildTarget[]): DryRunData["extraTypos"] {
  const byExtra = new Map<string, string[]>();
  for (const t of targets) if (!t.check) for (const x of t.extras ?? []) if (closeCatalogExtras(cat, x).length) byExtra.set(x, [...(byExtra.get(x) ?? []), t.name]);
  return [...byExtra].map(([extra, names]) => ({ extra, names, suggestion: didYouMean(closeCatalogExtras(cat, extra)) }));
}

/** The catalog with the local catalog beside the matrix (catalog/local.ts catalogBeside): pins, extras, releases. */
async function catalogOf(matrixFile: string): Promise<Catalog> {
  const [{ catalog }, { catalogBeside }] = await Promise.all([import("../catalog/index.ts"), import("../catalog/local.ts")]);
  return catalogBeside(catalog, matrixFile);
}

/** What runBuildPlan is given besides the plan. */
export interface RunBuildOptions {
  /** The sink for the run's progress (status.ts liveStatus or plainStatus), made for the run's start time `t0`. */
  status: (t0: number) => StatusSink;
}

/** What a run ends with. */
export interface BuildRunResult {
  /** The run's result (run.ts: the report, the files written and not); null when the driver itself failed (a bug). */
  run: RunResult | null;
  /** The status sink of the run: the caller closes it (restoring the terminal) before it prints. */
  status: StatusSink;
  /**
   * The run's one error line, without the CLI's prefix: a driver error that stopped it (with the builds it ended),
   * the report files that could not be written; null when neither happened.
   */
  problem: string | null;
  /**
   * The exit code (errors.ts EXIT): the report's (0 every variant built or cached, 1 one failed or was skipped, 130
   * interrupted), at least 1 with a problem.
   */
  exitCode: number;
}

/**
 * Run a plan (not a dry run): every build in dependency order with its logs, then the report (run.ts runBuilds writes
 * `logs/RUN/report.json`, `logs/latest` and `--report`). Progress goes to `o.status`; nothing is printed. Throws
 * nothing: runBuilds ends its builds and reports its own errors, and an error past that is the result's `problem`.
 */
export async function runBuildPlan(p: BuildPlan, o: RunBuildOptions): Promise<BuildRunResult> {
  const { args: a, options: opts, plan, rule } = p;
  const runId = makeRunId();
  const t0 = Date.now();
  const status = o.status(t0);
  status.event({
    type: "note",
    text: `run ${runId}: ${plan.order.length} variant(s), backend ${opts.backend}, jobs ${rule.jobs} (${rule.explanation}); logs ${shortPath(resolve(opts.logsRoot, runId))}`,
    at: t0,
  });
  let run: RunResult;
  try {
    run = await runBuilds({
      plan,
      why: p.selection.why,
      backend: p.backend,
      jobs: rule.jobs,
      capacity: p.capacity,
      retries: opts.retries,
      failFast: !!a.failFast,
      cached: p.cached,
      logsRoot: opts.logsRoot,
      runId,
      reportFile: a.report !== undefined ? resolve(a.report) : undefined,
      status,
      killGraceMs: a.killGrace !== undefined ? a.killGrace * 1000 : undefined,
    });
  } catch (e) {
    // runBuilds ends its builds and reports its own errors; reaching here is a bug past that: still one line, exit 1.
    return { run: null, status, problem: `the build driver failed: ${(e as Error)?.message ?? String(e)}`, exitCode: EXIT.finding };
  }
  const problem = runProblem(run);
  return { run, status, problem, exitCode: problem ? Math.max(run.report.exitCode, EXIT.finding) : run.report.exitCode };
}

/**
 * The run's one error line (without the prefix): an error of the build driver that stopped it, with the builds it ended,
 * and every report file that could not be written (where and why) or where the report is; null when neither happened.
 */
function runProblem(r: RunResult): string | null {
  const { report, unwritten, written, ended } = r;
  if (!report.driverError && unwritten.length === 0) return null;
  const parts: string[] = [];
  if (report.driverError)
    parts.push(
      `the build driver stopped the run: ${report.driverError}; ` +
        (ended.length ? `ended ${ended.length} running build(s) (${ended.join(", ")})` : "no build was running"),
    );
  for (const u of unwritten) parts.push(`report not written to ${shortPath(u.file)}: ${u.why}`);
  if (report.driverError && written.length) parts.push(`report: ${written.map((f) => shortPath(f)).join(", ")}`);
  return parts.join("; ");
}
