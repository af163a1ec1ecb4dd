/**
 * The `build` command's printing, thin over the build as plan then run (generator/driver/build.ts): planBuild decides
 * (options, selection, host checks, evaluation, plan, the store's answers), then this prints the plan (`--dry-run`) or runs it
 * (runBuildPlan) and prints the report. Loaded only when `build` runs (commands/build.ts holds the light yargs
 * definition).
 */
import { planBuild, runBuildPlan, type BuildPlan } from "../driver/build.ts";
import { dryRunText } from "../driver/dry-run-text.ts";
import { proofLines, summaryTable } from "../driver/report.ts";
import { shortPath } from "../driver/run.ts";
import { liveStatus, plainStatus } from "../driver/status.ts";
import type { BuildArgs } from "../driver/build-options.ts";
import { evaluationFailureText } from "../driver/eval-first.ts";
import { nixAnswerLine } from "../driver/ask-nix.ts";
import { formatChecks, type CheckResult } from "../preflight/checks.ts";
import { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";
import { errorLine, withExitCode } from "../errors.ts";
import { wrap, wrapLines } from "../text.ts";
import { parseNixOptions, terminalWidth, type Io } from "./shared.ts";
import { redactCredentials, redactDeep } from "../redact.ts";

/**
 * Run `build` with parsed options: plan (exit 2 with the fix when the host cannot build, or a variant does not
 * evaluate), then print the plan (`--dry-run`) or build. Writes to `io` (out: the plan or the report; err: progress,
 * warnings, errors).
 * @returns the exit code
 */
export async function buildMain(a: BuildArgs, io: Io): Promise<number> {
  return await withExitCode(io.err, () => buildMainInner(a, io));
}

/** build's steps: plan (driver/build.ts planBuild), then print the plan (`--dry-run`) or run it and print the report. */
async function buildMainInner(a: BuildArgs, io: Io): Promise<number> {
  const width = terminalWidth(io);
  const plan = await planBuild({ args: a, projectRoot: PROJECT_ROOT, parseNixOptions, width, onWarning: io.err });
  if (plan.dryRun) return printDryRun(plan, width, io);
  warn(plan.checks.failed.filter((r) => !r.blocking), width, io);
  // install asks Nix before it builds (askNixTimeout): which answer it goes by, before the build's own lines.
  if (plan.nixAnswer) io.err(wrap(nixAnswerLine(plan.nixAnswer, `${plan.toBuild.length} variant(s) to build`), width, { hang: "  " }) + "\n");
  return await runAndReport(plan, io);
}

/** `build --dry-run`: the plan with its estimate, as text or JSON on stdout, and its warnings on stderr. @returns 0 */
function printDryRun(p: BuildPlan, width: number, io: Io): number {
  const { args: a, options: o, rule, capped, plan, checks } = p;
  const { needs, rows } = p.dryRun!;
  const coresPerBuild = o.backend === "nix" ? rule.coresPerBuild : null;
  if (a.json)
    io.out(
      JSON.stringify(
        // Credentials (a substituter's user:password@, ?token=, access-tokens) redacted as in report.json (redact.ts).
        redactDeep({
          dryRun: true, forHost: a.forHost ?? null, backend: o.backend, root: o.root, source: p.selection.source, jobs: rule.jobs, coresPerBuild, jobsRule: rule.explanation, slots: p.capacity.slots, capacity: { machine: p.capacity.machine, from: p.capacity.from },
          // Builds given fewer cores than coresPerBuild: a package whose compile jobs need more memory
          // (model/concurrency.ts coresForPackage).
          coresCapped: Object.fromEntries(capped), force: !!a.force, toBuild: rows.toBuild, toFetch: rows.toFetch, cached: rows.cached,
          estimatedMakespanS: rows.estimatedMakespanS, estimatedMakespanUnknown: rows.estimatedMakespanUnknown, wait: rows.wait, variantsMakespanS: rows.variantsMakespanS,
          cudaClosures: rows.cudaClosures, store: rows.store, cacheModel: rows.cacheModel, nixAnswer: rows.nixAnswer,
          systemFeatures: needs.groups, preflight: checks.results, waves: plan.waves, variants: rows.rows,
          // What a build would stop on before building anything: null when nothing was instantiated (no --ask-store).
          evaluationErrors: p.instantiated ? p.evaluationFailures : null,
        }),
        null,
        2,
      ) + "\n",
    );
  else
    io.out(
      wrapLines(
        redactCredentials(dryRunText({
          d: rows, backend: o.backend, rule, coresPerBuild, capped, capacity: p.capacity, fromHistory: p.selection.history.size > 0, askedStore: !!a.askStore, needs,
          preflight: checks.failed.length ? formatChecks(checks.failed, width) : "",
          verbose: !!a.verbose, checksShown: !!a.checksShown,
          forHost: a.forHost,
        })).replace(/\n$/, ""),
        width,
      ) + "\n",
    );
  dryRunWarnings(p, width, io);
  return 0;
}

/**
 * A dry run's warnings on stderr (stdout keeps the plan, or its JSON): the variants a build would stop on (known only
 * when it instantiated: --ask-store), and each environment extra close to one the catalog knows (a likely typo that
 * only Nix's evaluation would otherwise find).
 */
function dryRunWarnings(p: BuildPlan, width: number, io: Io): void {
  const say = (text: string) => io.err(wrap(text, width, { indent: "warning: ", hang: "  " }) + "\n");
  if (p.evaluationFailures.length) io.err(`warning: ${evaluationFailureText(p.evaluationFailures, p.selection.targets.length, width, true)}\n`);
  for (const { extra, names, suggestion } of p.dryRun!.extraTypos)
    say(`extra "${extra}" of ${names.join(", ")} is not one the catalog knows; ${suggestion} (a pin whose Python set lacks it stops the evaluation)`);
}

/** Non-blocking failures (store space) as warnings on stderr. */
function warn(results: readonly CheckResult[], width: number, io: Io): void {
  if (results.length) io.err(`warning:\n${formatChecks(results, width)}\n`);
}

/** Run the plan with live or plain status, print the summary (or the JSON report); returns the run's exit code. */
async function runAndReport(p: BuildPlan, io: Io): Promise<number> {
  const { args: a, plan } = p;
  // Live status only on a terminal that reports its size (Io.terminal): log-update would draw nothing on rows 0.
  const terminal = !a.plain && !a.json ? io.terminal : undefined;
  const { run, status, problem, exitCode } = await runBuildPlan(p, {
    status: (t0) => (terminal ? liveStatus(terminal, plan.order.length, t0) : plainStatus({ write: io.err, isTTY: io.isTTY }, t0)),
  });
  status.close();
  if (run) {
    const { report } = run;
    if (a.json) io.out(JSON.stringify(report, null, 2) + "\n");
    else {
      io.out(summaryTable(report) + (run.written.length ? `\nreport: ${run.written.map((f) => shortPath(f)).join(", ")}\n` : "\n"));
      // The last lines: each variant's proof (its static check's output, beside its result), or why it has none.
      const proofs = proofLines(report, shortPath);
      if (proofs.length) io.out(proofs.join("\n") + "\n");
    }
  }
  if (problem) io.err(errorLine(problem));
  return exitCode;
}
