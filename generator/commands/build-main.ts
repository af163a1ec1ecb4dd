/**
 * The `build` command's work, thin over the preflight (generator/preflight/checks.ts) and the build driver (generator/driver):
 * resolve options, select, check the host, plan, probe, then print the plan (`--dry-run`) or build. Loaded only when
 * `build` runs (commands/build.ts holds the light yargs definition).
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import { hostSystem, type BackendOptions } from "../driver/backend.ts";
import { coresForPackage, jobsRule } from "../driver/jobs.ts";
import { onTorch } from "../catalog/packages.ts";
import type { Catalog } from "../catalog/schema.ts";
import { DEFAULT_CHECK_SECONDS, makePlan, type Plan } from "../driver/plan.ts";
import { dryRunRows } from "../driver/dry-run.ts";
import { dryRunText } from "../driver/dry-run-text.ts";
import { durationsFromReports, makeRunId, skippedReportsWarning, summaryTable, type SkippedReport } from "../driver/report.ts";
import { runBuilds, shortPath, type RunResult } from "../driver/run.ts";
import { liveStatus, plainStatus } from "../driver/status.ts";
import { dryRealise, probeCached, type CacheProbe, type DryRealise, type NixOptions } from "../driver/store.ts";
import { builderNeeds } from "../driver/builders.ts";
import { modelCacheMisses } from "../driver/cache-model.ts";
import type { BuildTarget } from "../driver/targets.ts";
import { checkFiles, checkTargets, loadTargets, selectTargets } from "../driver/targets.ts";
import { assertGeneratedCurrent } from "../generated-state.ts";
import { resolveBuildOptions, type BuildArgs, type ResolvedBuildOptions } from "../driver/options.ts";
import { checkedVariants, evaluatesPinnedNixpkgs, formatChecks, Probes, refuseOnBlocking, runChecks, type CheckResult } from "../preflight/checks.ts";
import { thisHost } from "../preflight/host.ts";
import { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";
import { errorLine, EXIT, withExitCode } from "../errors.ts";
import { outputMode, writeOutputFile } from "../output-file.ts";
import { wrap, wrapLines } from "../text.ts";
import { EvaluationError, evaluationFailures, evaluationFailureText, evaluationGate, type EvaluationFailure } from "../driver/eval-first.ts";
import { closeCatalogExtras, didYouMean } from "../extra-hints.ts";
import { parseNixOptions, terminalWidth } from "./shared.ts";

/**
 * Run `build` with parsed options: select, check the host (exit 2 with the fix when it cannot build), plan, probe,
 * then print the plan (`--dry-run`) or build. Writes to stdout/stderr and sets `process.exitCode`.
 * @returns the exit code
 */
export async function buildMain(a: BuildArgs): Promise<number> {
  const code = await withExitCode((s) => process.stderr.write(s), () => buildMainInner(a));
  process.exitCode = code;
  return code;
}

/** build's steps: select and check the host, plan and probe, then print the plan (`--dry-run`) or build. */
async function buildMainInner(a: BuildArgs): Promise<number> {
  const o = await resolveBuildOptions(a, PROJECT_ROOT, parseNixOptions);
  const cat = await catalogOf(o.matrixFile);
  // A --report this CLI will not write (a directory, a socket, a link to nothing) is refused now, not after the builds.
  if (a.report !== undefined && !a.dryRun) outputMode(resolve(a.report));
  const { sel, source, history } = await selection(a, o);
  const host = hostSystem();
  const width = terminalWidth();
  // The checks of the host that need nothing built or evaluated: the Nix version (when a catalog pin is evaluated) and flox.
  const context = {
    command: "build" as const,
    variants: checkedVariants(sel.targets.map((t) => ({ ...t, cuda: t.cuda ?? null }))),
    backend: o.backend,
    pinnedNixpkgs: evaluatesPinnedNixpkgs(sel.targets.map((t) => t.file)),
    hostSystem: host,
    builders: a.builders,
    localBuilds: o.maxJobs !== 0,
    nixOptions: o.nixOptions,
  };
  const early = runChecks(thisHost(), context, ["nix-version", "flox"]);
  // Without a usable Nix or flox nothing can be probed; the checks that otherwise wait for the probe (which variants
  // are left to build) run against every selected one, so that one refusal lists every fix, not the first.
  if (!a.dryRun && early.some((r) => r.status === "fail" && r.blocking))
    refuseOnBlocking([...early, ...runChecks(thisHost(), context, ["system-features", "store-space"])], width);

  const plan = makePlan(sel.targets, history);
  const rule = jobsRule({ cpus: availableParallelism(), memBytes: totalmem() }, o.cores, o.jobs);
  const { backendOpts, capped } = backendOptions(cat, a, o, sel.targets, rule);
  // A build instantiates every selected variant before the first build starts, --force included (it only ignores what
  // is built); a dry run only with --probe-store (evaluating a generated file may fetch its pinned nixpkgs).
  const instantiate = !a.dryRun || !!a.probeStore;
  const probes: Map<string, CacheProbe> =
    a.force && !instantiate ? new Map() : await probeCached(sel.targets, backendOpts.outDir, o.nixOptions, { instantiate });
  const cached: Map<string, CacheProbe> = a.force ? new Map() : probes;
  const evalFailures = instantiate ? evaluationFailures(cat, sel.targets, probes, cached) : [];
  const toBuild = sel.targets.filter((t) => !cached.get(t.name)?.cached);
  // The checks of what is left to build: the system features its derivations require, and store space (a warning).
  const late = runChecks(thisHost(), { ...context, variants: context.variants.filter((v) => toBuild.some((t) => t.name === v.name)) }, [
    "system-features",
    "store-space",
  ]);
  const preflight = [...early, ...late];
  const failed = preflight.filter((r) => r.status === "fail");
  // This machine would be refused a variant only once its dependencies are built, hours in: stop now with the fix,
  // before the evaluation's verdict (a host fix first; the matrix's errors after it).
  if (!a.dryRun) refuseOnBlocking(preflight, width);
  if (!a.dryRun && evalFailures.length) evaluationVerdict(o, context.pinnedNixpkgs, evalFailures, sel.targets.length, width);

  // What Nix would build and fetch for each instantiated variant, with the user's substituters: the dry run's real
  // answer (--probe-store) and what --skip-cached decides by.
  const askNix = (a.dryRun && !!a.probeStore) || (!a.dryRun && !!a.skipCached);
  const store = askNix ? await storeAnswers(sel.targets, cached, o.nixOptions) : undefined;
  if (!a.dryRun && a.skipCached && store) markSubstitutable(sel.targets, cached, store);

  if (a.dryRun)
    return printDryRun({ cat, a, o, sel, source, history, plan, rule, backendOpts, capped, cached, store, toBuild, preflight, failed, evalFailures, instantiate, host, width });
  warn(failed.filter((r) => !r.blocking), width);
  return await runAndReport(a, o, plan, sel.why, backendOpts, rule.jobs, rule.explanation, cached);
}

/**
 * The variants that did not evaluate here, when a build is to start: stop on those that must (EvaluationError, exit
 * 2), else a warning naming those that build anyway (eval-first.ts evaluationGate: why they may).
 * @throws EvaluationError when the evaluation's verdict stops the build
 */
function evaluationVerdict(o: ResolvedBuildOptions, pinnedNixpkgs: boolean, evalFailures: EvaluationFailure[], selected: number, width: number): void {
  const gate = evaluationGate(o.backend, pinnedNixpkgs, () => new Probes(thisHost()).nixVersion(), evalFailures);
  if (gate.stop.length) throw new EvaluationError(gate.stop, selected, width);
  const names = gate.pass.map((f) => f.name);
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");
  process.stderr.write(wrap(`${shown} did not evaluate here, but ${gate.why}: building them`, width, { indent: "warning: ", hang: "  " }) + "\n");
}

/** What a dry run prints from: the plan, the probes and the checks buildMainInner gathered. */
interface DryRunInputs {
  cat: Catalog;
  a: BuildArgs;
  o: ResolvedBuildOptions;
  sel: Awaited<ReturnType<typeof selection>>["sel"];
  source: Awaited<ReturnType<typeof selection>>["source"];
  history: ReadonlyMap<string, number>;
  plan: Plan<BuildTarget>;
  rule: ReturnType<typeof jobsRule>;
  backendOpts: BackendOptions;
  capped: Map<string, { cores: number; why: string }>;
  cached: Map<string, CacheProbe>;
  store: Map<string, DryRealise | { error: string }> | undefined;
  toBuild: BuildTarget[];
  preflight: CheckResult[];
  failed: CheckResult[];
  evalFailures: EvaluationFailure[];
  /** Whether the variants were instantiated (--probe-store): only then are evaluation errors known. */
  instantiate: boolean;
  host: string;
  width: number;
}

/** `build --dry-run`: the plan with its estimate, as text or JSON on stdout, and its warnings on stderr. @returns 0 */
async function printDryRun(d: DryRunInputs): Promise<number> {
  const { a, o, sel, plan, rule, backendOpts, capped, cached, store, toBuild, preflight, failed, evalFailures, instantiate, host, width } = d;
  const needs = await builderNeeds(toBuild, { host, builders: a.builders, maxJobs: o.maxJobs, nixOptions: o.nixOptions, backend: o.backend });
  const model = modelCacheMisses(
    sel.targets
      .filter((t): t is BuildTarget & { nixpkgs: string } => t.nixpkgs !== undefined && t.check === undefined)
      .map((t) => ({ name: t.name, system: t.system, python: t.python, cuda: t.cuda, nixpkgs: t.nixpkgs, cudaCapabilitiesForPackageSet: t.cudaCapabilitiesForPackageSet, nixpkgsKey: t.nixpkgsKey })),
    d.cat,
  );
  const rows = dryRunRows(plan, cached, sel.why, backendOpts, { host, force: !!a.force, jobs: rule.jobs, store, model });
  const coresPerBuild = o.backend === "nix" ? rule.coresPerBuild : null;
  if (a.json)
    process.stdout.write(
      JSON.stringify(
        {
          dryRun: true, backend: o.backend, root: o.root, source: d.source, jobs: rule.jobs, coresPerBuild, jobsRule: rule.explanation,
          // Builds given fewer cores than coresPerBuild: a package whose compile jobs need more memory (jobs.ts coresForPackage).
          coresCapped: Object.fromEntries(capped), force: !!a.force, toBuild: rows.toBuild, cached: rows.cached,
          estimatedMakespanS: rows.estimatedMakespanS, estimatedMakespanUnknown: rows.estimatedMakespanUnknown, cudaClosures: rows.cudaClosures, store: rows.store, cacheModel: rows.cacheModel,
          systemFeatures: needs.groups, preflight, waves: plan.waves, variants: rows.rows,
          // What a build would stop on before building anything: null when nothing was instantiated (no --probe-store).
          evaluationErrors: instantiate ? evalFailures : null,
        },
        null,
        2,
      ) + "\n",
    );
  else
    process.stdout.write(
      wrapLines(
        dryRunText({ d: rows, backend: o.backend, rule, coresPerBuild, capped, fromHistory: d.history.size > 0, probed: !!a.probeStore, needs, preflight: failed.length ? formatChecks(failed, width) : "" }).replace(/\n$/, ""),
        width,
      ) + "\n",
    );
  dryRunWarnings(d.cat, sel.targets, evalFailures, width);
  process.exitCode = 0;
  return 0;
}

/**
 * A dry run's warnings on stderr (stdout keeps the plan, or its JSON): the variants a build would stop on (known only
 * when it instantiated: --probe-store), and each environment extra close to one the catalog knows (a likely typo that
 * only Nix's evaluation would otherwise find).
 */
function dryRunWarnings(cat: Catalog, targets: readonly BuildTarget[], failures: readonly EvaluationFailure[], width: number): void {
  const say = (text: string) => process.stderr.write(wrap(text, width, { indent: "warning: ", hang: "  " }) + "\n");
  if (failures.length) process.stderr.write(`warning: ${evaluationFailureText(failures, targets.length, width, true)}\n`);
  const byExtra = new Map<string, string[]>();
  for (const t of targets) if (!t.check) for (const x of t.extras ?? []) if (closeCatalogExtras(cat, x).length) byExtra.set(x, [...(byExtra.get(x) ?? []), t.name]);
  for (const [x, names] of byExtra)
    say(`extra "${x}" of ${names.join(", ")} is not one the catalog knows; ${didYouMean(closeCatalogExtras(cat, x))} (a pin whose Python set lacks it stops the evaluation)`);
}

/** Load the variants, select (names, filters, package), add their checks (--verify), with earlier durations. */
async function selection(a: BuildArgs, o: ResolvedBuildOptions) {
  const { targets: all, source, project } = await loadTargets({
    root: o.root,
    pkgsDir: a.pkgsDir !== undefined ? resolve(a.pkgsDir) : undefined,
    variants: a.variants,
    matrixFile: a.matrix !== undefined ? o.matrixFile : undefined,
  });
  const sel = selectTargets(all, { names: a.names, filters: a.filter, package: a.package });
  // What Nix reads (the last generate's files) must say what was just expanded and is about to be shown or built.
  if (project) assertGeneratedCurrent(project, o.root, "build", sel.targets);
  checkFiles(sel.targets);
  // A foreign or damaged earlier report is left out with a warning: it must not stop this run, nor a dry run.
  const skipped: SkippedReport[] = [];
  const history = durationsFromReports(o.logsRoot, (x) => skipped.push(x));
  const warning = skippedReportsWarning(skipped, shortPath);
  if (warning) process.stderr.write(warning);
  if (a.verify || a.verifyGpu) {
    // Checks of each selected variant's promise, after it (pkgs/checks.nix through the variant's own file).
    const dir = resolve(o.logsRoot, "checks");
    const checks = checkTargets(sel.targets, dir, !!a.verifyGpu);
    for (const [f, text] of checks.files) await writeOutputFile(f, text);
    for (const t of checks.targets) {
      sel.targets.push(t);
      sel.why.set(t.name, "requested");
      if (!history.has(t.name)) history.set(t.name, DEFAULT_CHECK_SECONDS.seconds);
    }
  }
  return { sel, source, history };
}

/** The backend's options, with fewer cores for packages whose compile jobs need more memory (catalog gibPerCompileJob). */
function backendOptions(cat: Catalog, a: BuildArgs, o: ResolvedBuildOptions, targets: readonly BuildTarget[], rule: ReturnType<typeof jobsRule>) {
  const machine = { cpus: availableParallelism(), memBytes: totalmem() };
  const capped = new Map<string, { cores: number; why: string }>();
  if (o.backend === "nix" && o.cores === undefined)
    for (const t of targets) {
      const c = coresForPackage(rule, machine, onTorch(cat, t.package)?.gibPerCompileJob?.gib);
      if (c.why) capped.set(t.name, { cores: c.cores, why: `${t.package}: ${c.why}` });
    }
  const backendOpts: BackendOptions = {
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
  return { backendOpts, capped };
}

/** Non-blocking failures (store space) as warnings on stderr. */
function warn(results: readonly CheckResult[], width: number): void {
  if (results.length) process.stderr.write(`warning:\n${formatChecks(results, width)}\n`);
}

/** Build the plan with live or plain status, print the summary (or the JSON report); returns the report's exit code. */
async function runAndReport(
  a: BuildArgs,
  o: ResolvedBuildOptions,
  plan: Plan<BuildTarget>,
  why: Parameters<typeof runBuilds>[0]["why"],
  backendOpts: BackendOptions,
  jobs: number,
  explanation: string,
  cached: Map<string, CacheProbe>,
): Promise<number> {
  const runId = makeRunId();
  const t0 = Date.now();
  // A terminal that reports no size (rows 0, e.g. `script` without a size) gets plain lines: log-update would draw nothing.
  const live = !a.plain && !a.json && process.stderr.isTTY === true && (process.stderr.rows ?? 0) > 0;
  const status = live ? liveStatus(process.stderr, plan.order.length, t0) : plainStatus(process.stderr, t0);
  status.event({
    type: "note",
    text: `run ${runId}: ${plan.order.length} variant(s), backend ${o.backend}, jobs ${jobs} (${explanation}); logs ${shortPath(resolve(o.logsRoot, runId))}`,
    at: t0,
  });
  let result: RunResult;
  try {
    result = await runBuilds({
      plan,
      why,
      backend: backendOpts,
      jobs,
      retries: o.retries,
      failFast: !!a.failFast,
      cached,
      logsRoot: o.logsRoot,
      runId,
      reportFile: a.report !== undefined ? resolve(a.report) : undefined,
      status,
      killGraceMs: a.killGrace !== undefined ? a.killGrace * 1000 : undefined,
    });
  } catch (e) {
    // runBuilds ends its builds and reports its own errors; reaching here is a bug past that: still one line.
    status.close();
    process.stderr.write(errorLine(`the build driver failed: ${(e as Error)?.message ?? String(e)}`));
    process.exitCode = EXIT.finding;
    return EXIT.finding;
  }
  status.close();
  const { report } = result;
  if (a.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(summaryTable(report) + (result.written.length ? `\nreport: ${result.written.map((f) => shortPath(f)).join(", ")}\n` : "\n"));
  const problem = runProblem(result);
  const code = problem ? Math.max(report.exitCode, EXIT.finding) : report.exitCode;
  if (problem) process.stderr.write(errorLine(problem));
  process.exitCode = code;
  return code;
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

/** --skip-cached: variants whose outputs a substituter holds (Nix builds nothing for them) count as cached. */
function markSubstitutable(targets: readonly BuildTarget[], cached: Map<string, CacheProbe>, store: ReadonlyMap<string, DryRealise | { error: string }>): void {
  for (const t of targets) {
    const c = cached.get(t.name);
    const s = store.get(t.name);
    if (c && !c.cached && c.drvPath && s && !("error" in s) && !s.toBuild.includes(c.drvPath) && s.unknown.length === 0)
      cached.set(t.name, { ...c, cached: true, by: "substituter" });
  }
}

/** Nix's dry-run answer for every target that was instantiated and is not already built. */
async function storeAnswers(
  targets: readonly BuildTarget[],
  cached: ReadonlyMap<string, CacheProbe>,
  nixOptions: NixOptions,
): Promise<Map<string, DryRealise | { error: string }>> {
  const asked = targets.filter((t) => {
    const c = cached.get(t.name);
    return c !== undefined && !c.cached && c.drvPath !== null;
  });
  const answers = await dryRealise(asked.map((t) => cached.get(t.name)!.drvPath!), nixOptions);
  return new Map(asked.map((t, i) => [t.name, answers[i]!]));
}

/** The catalog with the local catalog beside the matrix (catalog/local.ts catalogBeside): pins, extras, releases. */
async function catalogOf(matrixFile: string): Promise<Catalog> {
  const [{ catalog }, { catalogBeside }] = await Promise.all([import("../catalog/index.ts"), import("../catalog/local.ts")]);
  return catalogBeside(catalog, matrixFile);
}
