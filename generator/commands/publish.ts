/**
 * `variant-matrix publish [NAME...] [--filter K=V]... (--org ORG | --to STORE_URI) [--dry-run] [--json]`: carry built
 * variants to a Flox catalog (`flox publish -o ORG NAME`, pytorch first, on hosts of each variant's system, after
 * checking flox's preconditions) or to a Nix binary cache (`nix copy --to URI` of each built closure; without --org
 * or --to, the first cache of matrix.ts `caches`). See driver/publish.ts.
 *
 * Exit status: 0 done; 1 a publish or copy failed; 2 bad input: both of --org/--to, neither and no cache in matrix.ts, an unknown name, no flox
 * (or one older than 1.5.0) with --org (preflight/checks.ts, as doctor says it), a failed precondition (a dirty tree under .flox/ or pkgs/, an unpushed revision, no manifest.lock, not logged in:
 * with --dry-run too), or (--to) a variant that is not built (its build command is named).
 */
import { UsageError } from "../errors.ts";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { resolve } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import { redactCredentials } from "../redact.ts";
import type { BuildTarget } from "../driver/targets.ts";
import type { Project } from "../matrix/project.ts";
import { parseNixOptions, printer, project, runOf } from "./shared.ts";
import { matrixOption, nixOptions, outputOptions, selectionOptions, type BuiltTypes, type CamelCased } from "./options.ts";

/** The options of `publish` (yargs), the shared groups defined once in options.ts. */
const publishOptions = {
  ...selectionOptions,
  org: { type: "string", describe: "Flox organisation: flox publish -o ORG NAME per variant, on hosts of its system" },
  to: { type: "string", describe: "Nix store URI (file://, s3://, ssh://; ?secret-key=FILE to sign): nix copy --to of each built closure (default: the first cache of matrix.ts `caches`)" },
  "dry-run": { type: "boolean", describe: "print the plan (commands in order) and, with --org, flox's preconditions; run nothing" },
  json: { ...outputOptions.json, describe: "print the plan or the report as JSON" },
  root: { type: "string", describe: "project root (default: the repository root)" },
  matrix: { ...matrixOption.matrix, describe: "matrix file (default: ROOT/matrix.ts)" },
  "out-dir": { type: "string", describe: "--to: where the result-NAME links of the build are (default: the root)" },
  "nix-option": { ...nixOptions["nix-option"], describe: "--to: NAME=VALUE passed to nix copy as --option NAME VALUE" },
} as const;

const builder = (y: Argv<object>) =>
  y.positional("names", { type: "string", array: true, describe: "variant names (default: all, after filters); what they are built on comes first" }).options(publishOptions);

/** Arguments of `publish` as yargs infers them from its builder. */
type PublishArgs = CamelCased<BuiltTypes<typeof builder>>;

/** The yargs command module `publish [names..]`; generator/cli.ts registers it. Sets its run's exit status 1 when one failed. */
export const publishCommand: CommandModule<object, BuiltTypes<typeof builder>> = {
  command: "publish [names..]",
  describe: "publish built variants: to a Flox catalog (--org ORG: flox publish) or a Nix binary cache (--to URI: nix copy)",
  builder,
  handler: (argv: ArgumentsCamelCase<BuiltTypes<typeof builder>>) => runPublish(argv),
};

/**
 * Run publish: select the variants (in build order), then publish them to the Flox catalog (--org) or copy their
 * closures to the Nix store (--to). Prints the plan or the report (to its run's io); sets the run's exit status 1 when one failed.
 * @throws UsageError (exit 2) for neither or both of --org/--to, a bad selection, a failed precondition, a variant
 *   not built (--to)
 */
async function runPublish(argv: PublishArgs): Promise<void> {
  if (argv.org && argv.to)
    throw new UsageError("--org and --to exclude each other: publish to a Flox catalog (--org ORG) or to a Nix binary cache (--to STORE_URI), one per run");
  const [{ orderTargets, selectCurrent }, { targetsFromVariants }] = await Promise.all([import("../driver/build.ts"), import("../driver/targets.ts")]);
  const root = argv.root ? resolve(process.cwd(), argv.root) : REPO_ROOT;
  const p = await project(argv.matrix, root);
  // Without --org or --to: the matrix's first team cache (matrix.ts `caches`), said so.
  const to = argv.org ? undefined : (argv.to ?? defaultCacheTarget(p.matrix.caches, runOf(argv).io.err));
  let sel;
  try {
    // The generated files are compared later, and only for --org (publishToOrg): --to copies what a build made.
    sel = selectCurrent(targetsFromVariants(p.variants, root), { names: argv.names, filters: argv.filter });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const order = orderTargets(sel.targets).order;
  const byName = new Map(sel.targets.map((t) => [t.name, t]));
  const ordered = order.map((n) => byName.get(n)!);
  if (argv.org) await publishToOrg(argv, argv.org, { root, project: p, selected: sel.targets, ordered });
  else await copyToStore(argv, to!, root, ordered);
}

/**
 * publish's target when neither --org nor --to is given: the first cache of matrix.ts `caches`, announced on `err`.
 * @throws UsageError when the matrix names none
 */
function defaultCacheTarget(caches: readonly { url: string }[], err: (s: string) => void): string {
  const first = caches[0];
  if (!first)
    throw new UsageError("publish needs one of --org ORG (a Flox catalog) or --to STORE_URI (a Nix binary cache), or a cache named in matrix.ts `caches` (the first is the default)");
  err(`publish: to ${redactCredentials(first.url)}, the first cache of matrix.ts \`caches\` (--to names another)\n`);
  return first.url;
}

/** What `publish --org` publishes: the project under `root`, the selected targets, and them in dependency order. */
interface OrgSelection {
  root: string;
  project: Project;
  selected: readonly BuildTarget[];
  ordered: readonly BuildTarget[];
}

/**
 * `publish --org ORG`: check flox and its preconditions, print the plan, then (not --dry-run) `flox publish` each
 * variant of this host's system in order, skipping what is built on a failed one.
 * @throws UsageError (exit 2) for a bad organisation name, stale generated files, or a failed precondition
 */
async function publishToOrg(argv: PublishArgs, org: string, s: OrgSelection): Promise<void> {
  const { root, project: p, selected, ordered } = s;
  const cmd = runOf(argv);
  const print = printer(cmd.io);
  const pub = await import("../driver/publish.ts");
  // The organisation name first: it becomes flox publish's -o argument (a bad one is refused before anything else).
  pub.checkFloxOrg(org);
  // flox publish builds the .flox/pkgs files the last generate wrote: they must say what was just expanded.
  // (--to copies store paths a build already made, whatever wrote them.)
  (await import("../generate/generated-state.ts")).assertGeneratedCurrent(p, root, "publish", selected);
  const { hostSystem } = await import("../driver/backend.ts");
  const host = hostSystem();
  const steps = pub.floxPublishPlan(ordered, org, host);
  // flox itself first (preflight/checks.ts, as doctor and build check it): without it nothing below can answer.
  const [{ checkHost, hostContext }, { refuseOnBlocking, formatChecks }, { terminalWidth }] = await Promise.all([
    import("../driver/build.ts"),
    import("../preflight/checks.ts"),
    import("./shared.ts"),
  ]);
  const width = terminalWidth(cmd.io);
  const preflight = checkHost(hostContext("publish", [], { backend: "flox", pinnedNixpkgs: false, hostSystem: host, org }), ["flox"]);
  if (preflight.some((r) => r.status === "fail")) {
    if (argv.json) print.out(JSON.stringify({ dryRun: !!argv.dryRun, org, preflight, steps }, null, 2));
    else print.out(`flox publish to ${org}:\n${formatChecks(preflight, width)}`);
    refuseOnBlocking(preflight, width);
  }
  const pre = await pub.floxPublishPreconditions(root);
  const failed = pre.filter((c) => !c.ok);
  if (argv.json) print.out(JSON.stringify({ dryRun: !!argv.dryRun, org, preflight, preconditions: pre, steps }, null, 2));
  else {
    print.out(`flox publish to ${org}: ${steps.filter((s) => s.action === "publish").length} variant(s) on this host (${host}), ${steps.filter((s) => s.action === "skip").length} for other systems`);
    for (const c of pre) print.out(`  ${c.ok ? "✓" : "✗"} ${c.check}: ${c.detail}`);
    for (const s of steps) print.out(s.action === "publish" ? `  $ ${s.argv.join(" ")}` : `  – ${s.name}: ${s.reason}`);
  }
  if (failed.length) throw new UsageError(`flox publish cannot run here: ${failed.map((c) => `${c.check}: ${c.detail}`).join("; ")}`);
  if (argv.dryRun) return;
  const report = await pub.runFloxPublish(steps, org, root, (name) => ordered.find((t) => t.name === name)!.dependsOn);
  if (argv.json) print.out(JSON.stringify({ org, report }, null, 2));
  else for (const r of report) print.out(`${r.status.padEnd(9)} ${r.name}  ${r.detail}`);
  if (report.some((r) => r.status === "failed")) cmd.exitCode = 1;
}

/**
 * `publish --to URI`: each built variant's closure, one `nix copy` per variant (a closure shared with an earlier one
 * is skipped by Nix); `--dry-run` prints the commands. nix copy's output goes to a private log kept when a copy failed.
 * @throws UsageError (exit 2) naming the variants that are not built, with their build command
 */
async function copyToStore(argv: PublishArgs, to: string, root: string, ordered: readonly BuildTarget[]): Promise<void> {
  const cmd = runOf(argv);
  const print = printer(cmd.io);
  const { readlinkSync, closeSync, rmSync } = await import("node:fs");
  const { join } = await import("node:path");
  const outDir = argv.outDir ? resolve(process.cwd(), argv.outDir) : root;
  const nixOptions = parseNixOptions(argv.nixOption);
  const outs = ordered.map((t) => {
    let out: string | null = null;
    try {
      out = readlinkSync(join(outDir, `result-${t.name}`));
    } catch {
      out = null;
    }
    return { name: t.name, out };
  });
  const missing = outs.filter((o) => o.out === null);
  if (missing.length)
    throw new UsageError(
      `not built (no result link in ${outDir}): ${missing.map((m) => m.name).join(", ")}; build first: ` +
        `npx variant-matrix build ${missing.map((m) => m.name).join(" ")}${argv.outDir ? ` --out-dir ${argv.outDir}` : ""}`,
    );
  if (argv.dryRun) {
    const plan = outs.map((o) => ({ name: o.name, outPath: o.out, argv: ["nix", "copy", "--to", to, o.out!] }));
    if (argv.json) print.out(JSON.stringify({ dryRun: true, to, steps: plan }, null, 2));
    else for (const s of plan) print.out(`  $ ${s.argv.join(" ")}`);
    return;
  }
  const [{ pushClosure }, { openLogFile, privateTempDir }, { redactCredentials }] = await Promise.all([
    import("../driver/run.ts"),
    import("../output-file.ts"),
    import("../redact.ts"),
  ]);
  // nix copy's output, in a fresh private directory (a fixed name in /tmp could be someone else's file or link);
  // kept only when a copy failed, to be read.
  const logDir = privateTempDir("variant-matrix-publish-");
  const log = join(logDir, "publish.log");
  const fd = openLogFile(log, { exclusive: true });
  const shown = redactCredentials(to);
  const report: { name: string; outPath: string; status: "copied" | "failed"; detail: string }[] = [];
  try {
    for (const o of outs) {
      const err = await pushClosure(o.out!, to, fd, nixOptions);
      report.push({ name: o.name, outPath: o.out!, status: err ? "failed" : "copied", detail: err ?? shown });
    }
  } finally {
    closeSync(fd);
  }
  const failed = report.some((r) => r.status === "failed");
  if (!failed) rmSync(logDir, { recursive: true, force: true });
  if (argv.json) print.out(JSON.stringify({ to: shown, log: failed ? log : null, report }, null, 2));
  else {
    for (const r of report) print.out(`${r.status.padEnd(7)} ${r.name}  ${r.outPath}  ${r.detail}`);
    if (failed) print.err(`nix copy's output: ${log}`);
  }
  if (failed) cmd.exitCode = 1;
}
