/**
 * The `build` command's printing, thin over the build as plan then run (generator/driver/build.ts): planBuild decides
 * (options, selection, host checks, evaluation, plan, probes), then this prints the plan (`--dry-run`) or runs it
 * (runBuildPlan) and prints the report. Loaded only when `build` runs (commands/build.ts holds the light yargs
 * definition).
 */
import { planBuild, runBuildPlan, type BuildPlan } from "../driver/build.ts";
import { dryRunText } from "../driver/dry-run-text.ts";
import { summaryTable } from "../driver/report.ts";
import { shortPath } from "../driver/run.ts";
import { liveStatus, plainStatus } from "../driver/status.ts";
import type { BuildArgs } from "../driver/options.ts";
import { evaluationFailureText } from "../driver/eval-first.ts";
import { nixAnswerLine } from "../driver/ask-nix.ts";
import { formatChecks, type CheckResult } from "../preflight/checks.ts";
import { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";
import { errorLine, withExitCode } from "../errors.ts";
import { wrap, wrapLines } from "../text.ts";
import { parseNixOptions, terminalWidth } from "./shared.ts";

/**
 * Run `build` with parsed options: plan (exit 2 with the fix when the host cannot build, or a variant does not
 * evaluate), then print the plan (`--dry-run`) or build. Writes to stdout/stderr and sets `process.exitCode`.
 * @returns the exit code
 */
export async function buildMain(a: BuildArgs): Promise<number> {
  const code = await withExitCode((s) => process.stderr.write(s), () => buildMainInner(a));
  process.exitCode = code;
  return code;
}

/** build's steps: plan (driver/build.ts planBuild), then print the plan (`--dry-run`) or run it and print the report. */
async function buildMainInner(a: BuildArgs): Promise<number> {
  const width = terminalWidth();
  const plan = await planBuild({ args: a, projectRoot: PROJECT_ROOT, parseNixOptions, width, onWarning: (text) => process.stderr.write(text) });
  if (plan.dryRun) return printDryRun(plan, width);
  warn(plan.checks.failed.filter((r) => !r.blocking), width);
  // install asks Nix before it builds (askNixTimeout): which answer it goes by, before the build's own lines.
  if (plan.nixAnswer) process.stderr.write(wrap(nixAnswerLine(plan.nixAnswer, `${plan.toBuild.length} variant(s) to build`), width, { hang: "  " }) + "\n");
  return await runAndReport(plan);
}

/** `build --dry-run`: the plan with its estimate, as text or JSON on stdout, and its warnings on stderr. @returns 0 */
function printDryRun(p: BuildPlan, width: number): number {
  const { args: a, options: o, rule, capped, plan, checks } = p;
  const { needs, rows } = p.dryRun!;
  const coresPerBuild = o.backend === "nix" ? rule.coresPerBuild : null;
  if (a.json)
    process.stdout.write(
      JSON.stringify(
        {
          dryRun: true, backend: o.backend, root: o.root, source: p.selection.source, jobs: rule.jobs, coresPerBuild, jobsRule: rule.explanation,
          // Builds given fewer cores than coresPerBuild: a package whose compile jobs need more memory (jobs.ts coresForPackage).
          coresCapped: Object.fromEntries(capped), force: !!a.force, toBuild: rows.toBuild, cached: rows.cached,
          estimatedMakespanS: rows.estimatedMakespanS, estimatedMakespanUnknown: rows.estimatedMakespanUnknown, cudaClosures: rows.cudaClosures, store: rows.store, cacheModel: rows.cacheModel, nixAnswer: rows.nixAnswer,
          systemFeatures: needs.groups, preflight: checks.results, waves: plan.waves, variants: rows.rows,
          // What a build would stop on before building anything: null when nothing was instantiated (no --probe-store).
          evaluationErrors: p.instantiated ? p.evaluationFailures : null,
        },
        null,
        2,
      ) + "\n",
    );
  else
    process.stdout.write(
      wrapLines(
        dryRunText({
          d: rows, backend: o.backend, rule, coresPerBuild, capped, fromHistory: p.selection.history.size > 0, probed: !!a.probeStore, needs,
          preflight: checks.failed.length ? formatChecks(checks.failed, width) : "",
        }).replace(/\n$/, ""),
        width,
      ) + "\n",
    );
  dryRunWarnings(p, width);
  return 0;
}

/**
 * A dry run's warnings on stderr (stdout keeps the plan, or its JSON): the variants a build would stop on (known only
 * when it instantiated: --probe-store), and each environment extra close to one the catalog knows (a likely typo that
 * only Nix's evaluation would otherwise find).
 */
function dryRunWarnings(p: BuildPlan, width: number): void {
  const say = (text: string) => process.stderr.write(wrap(text, width, { indent: "warning: ", hang: "  " }) + "\n");
  if (p.evaluationFailures.length) process.stderr.write(`warning: ${evaluationFailureText(p.evaluationFailures, p.selection.targets.length, width, true)}\n`);
  for (const { extra, names, suggestion } of p.dryRun!.extraTypos)
    say(`extra "${extra}" of ${names.join(", ")} is not one the catalog knows; ${suggestion} (a pin whose Python set lacks it stops the evaluation)`);
}

/** Non-blocking failures (store space) as warnings on stderr. */
function warn(results: readonly CheckResult[], width: number): void {
  if (results.length) process.stderr.write(`warning:\n${formatChecks(results, width)}\n`);
}

/** Run the plan with live or plain status, print the summary (or the JSON report); returns the run's exit code. */
async function runAndReport(p: BuildPlan): Promise<number> {
  const { args: a, plan } = p;
  // A terminal that reports no size (rows 0, e.g. `script` without a size) gets plain lines: log-update would draw nothing.
  const live = !a.plain && !a.json && process.stderr.isTTY === true && (process.stderr.rows ?? 0) > 0;
  const { run, status, problem, exitCode } = await runBuildPlan(p, {
    status: (t0) => (live ? liveStatus(process.stderr, plan.order.length, t0) : plainStatus(process.stderr, t0)),
  });
  status.close();
  if (run) {
    const { report } = run;
    if (a.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    else process.stdout.write(summaryTable(report) + (run.written.length ? `\nreport: ${run.written.map((f) => shortPath(f)).join(", ")}\n` : "\n"));
  }
  if (problem) process.stderr.write(errorLine(problem));
  process.exitCode = exitCode;
  return exitCode;
}
