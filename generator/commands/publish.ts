/**
 * `variant-matrix publish [NAME...] [--filter K=V]... (--org ORG | --to STORE_URI [--secret-key-file FILE]) [--dry-run]
 * [--json]`: carry built variants to a Flox catalog (`flox publish -o ORG NAME`, pytorch first, on hosts of each
 * variant's system, after checking flox's preconditions) or to a Nix binary cache (`nix copy --to URI` of each built
 * closure, every path signed with the key and re-signed where the cache held it unsigned; without --org or --to, the
 * first cache of matrix.ts `caches`). Each path's outcome is printed under its variant (copied, re-signed, already
 * signed, already there, failed); without a key, paths the consumers' key has not signed are counted on stderr.
 * `--to` publishes only proven variants, each with its proof (its static check's output), unless `--allow-unproven`,
 * which copies each unproven one with a marker that says so (driver/proof.ts); `--dry-run` says which are which.
 * See driver/publish.ts.
 *
 * Exit status: 0 done; 1 a publish or copy failed, or (with a key) a path of the cache still lacks its signature;
 * 2 bad input: (--to) a variant not proven (its static check's output, `tests.static` of its file, is not valid in
 * this store) without --allow-unproven, nothing copied; a key file that is not a Nix secret key or not the key matrix.ts gives the cache's consumers, both of --org/--to, neither and no cache in matrix.ts, an unknown name, no flox
 * (or one older than 1.5.0) with --org (preflight/checks.ts, as doctor says it), a failed precondition (a dirty tree under .flox/ or pkgs/, an unpushed revision, no manifest.lock, not logged in:
 * with --dry-run too), or (--to) a variant that is not built (its build command is named). `--to … --dry-run` before a
 * build exits 0: it names the variants not built yet, the build to run first and the copies publish will make.
 * 130 (SIGINT) or 143 (SIGTERM): `--to` was interrupted; the running copy is ended and the copies are reported as far
 * as they went (driver/publish.ts interruptedRun).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { resolve } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import type { CopyRole, PublishPlan } from "../driver/publish.ts";
import { parseNixOptions, printer, runOf, terminalWidth, type Io } from "./shared.ts";
import { matrixOption, nixOptions, outputOptions, selectionOptions, type BuiltTypes, type CamelCased } from "./options.ts";

/** The options of `publish` (yargs), the shared groups defined once in options.ts. */
const publishOptions = {
  ...selectionOptions,
  org: { type: "string", describe: "Flox organisation: flox publish -o ORG NAME per variant, on hosts of its system" },
  to: { type: "string", describe: "Nix store URI (file://, s3://, ssh://): nix copy --to of each built closure (default: the first cache of matrix.ts `caches`)" },
  "secret-key-file": {
    type: "string",
    describe: "--to: sign every path of each closure with this secret key (nix key generate-secret) and re-sign what the cache holds unsigned (default: the URI's secret-key=, else matrix.ts `caches` secretKeyFile)",
  },
  "dry-run": { type: "boolean", describe: "print the plan (commands in order) and, with --org, flox's preconditions; run nothing" },
  json: { ...outputOptions.json, describe: "print the plan or the report as JSON" },
  root: { type: "string", describe: "project root (default: the repository root)" },
  matrix: { ...matrixOption.matrix, describe: "matrix file (default: ROOT/matrix.ts)" },
  "out-dir": { type: "string", describe: "--to: where the result-NAME links of the build are (default: the root)" },
  "nix-option": { ...nixOptions["nix-option"], describe: "--to: NAME=VALUE passed to nix copy as --option NAME VALUE" },
  "pkgs-dir": { ...nixOptions["pkgs-dir"], describe: "--to: take each variant's file (its tests.static is its proof) from DIR/NAME.nix instead of ROOT/.flox/pkgs" },
  "allow-unproven": {
    type: "boolean",
    describe: "--to: publish a variant whose static check has not passed here; the cache then says \"unproven\" for it (install reads that)",
  },
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
  handler: (argv: ArgumentsCamelCase<BuiltTypes<typeof builder>>) => runPublishCommand(argv),
};

/**
 * Run publish: plan (driver/publish.ts planPublish: the road, the selection in build order, the checks), print the
 * plan, refuse one that cannot run (assertPublishable), then (not --dry-run) run it (runPublish) and print the report.
 * Sets the run's exit status 1 when one failed.
 * @throws UsageError (exit 2) for neither or both of --org/--to, a bad selection, a failed precondition, a variant
 *   not built (--to)
 */
async function runPublishCommand(argv: PublishArgs): Promise<void> {
  const cmd = runOf(argv);
  const print = printer(cmd.io);
  const pub = await import("../driver/publish.ts");
  const plan = await pub.planPublish({
    names: argv.names,
    filters: argv.filter,
    org: argv.org,
    to: argv.to,
    root: argv.root ? resolve(process.cwd(), argv.root) : REPO_ROOT,
    matrixFile: argv.matrix ? resolve(process.cwd(), argv.matrix) : undefined,
    outDir: argv.outDir ? { path: resolve(process.cwd(), argv.outDir), typed: argv.outDir } : undefined,
    nixOptions: parseNixOptions(argv.nixOption),
    secretKeyFile: argv.secretKeyFile ? resolve(process.cwd(), argv.secretKeyFile) : undefined,
    pkgsDir: argv.pkgsDir ? resolve(process.cwd(), argv.pkgsDir) : undefined,
    allowUnproven: !!argv.allowUnproven,
    onNote: print.err,
  });
  const [{ formatChecks }, text, { redactCredentials }] = await Promise.all([import("../preflight/checks.ts"), import("../text.ts"), import("../redact.ts")]);
  printPlan(argv, plan, cmd.io, formatChecks);
  if (plan.road === "to" && argv.dryRun) printCopySteps(argv, plan, cmd.io, { ...text, redactCredentials }, pub.copiesOf(plan));
  // The plan with flox's preconditions, unless a blocking flox check left none to ask (then only the checks show).
  if (plan.road === "org" && plan.preconditions !== null) printOrgSteps(argv, plan, print.out);
  await pub.assertPublishable(plan, terminalWidth(cmd.io), !!argv.dryRun);
  if (argv.dryRun) return;
  const r = await pub.runPublish(plan);
  if (r.road === "org") {
    if (argv.json) print.out(JSON.stringify({ org: argv.org, report: r.report }, null, 2));
    else for (const x of r.report) print.out(`${x.status.padEnd(9)} ${x.name}  ${x.detail}`);
  } else if (argv.json) print.out(JSON.stringify({ to: r.to, log: r.log, report: r.report, warnings: r.warnings }, null, 2));
  else {
    const width = terminalWidth(cmd.io);
    for (const x of r.report) {
      print.out(reportLine(`${x.status.padEnd(7)} ${copyLabel(x)}`, [x.outPath, x.detail], width, text.wrap));
      for (const p of x.paths) print.out(reportLine(`  ${p.status.padEnd(14)} ${p.path}`, [p.detail], width, text.wrap));
    }
    if (r.log) print.err(text.wrap(`nix copy's output: ${r.log}`, width, { hang: "  " }));
  }
  if (r.road === "to") for (const w of r.warnings) print.err(text.wrap(w, terminalWidth(cmd.io), { hang: "  " }));
  cmd.exitCode = r.exitCode;
}

/**
 * One line of publish's report, `head` then `parts` two spaces apart; wider than `width`, `head` alone and each part
 * under it on lines of its own, wrapped at its spaces (a store path is one word: never cut). Pure.
 */
function reportLine(head: string, parts: readonly string[], width: number, wrap: typeof import("../text.ts").wrap): string {
  const line = [head, ...parts].join("  ");
  if ([...line].length <= width) return line;
  const hang = " ".repeat(Math.min(head.length - head.trimStart().length + 8, 20));
  return [head, ...parts.map((p) => wrap(p, width, { indent: hang, hang }))].join("\n");
}

/** A copy's name in publish's lines: the variant, "its proof" or "unproven (its marker)" after it. */
function copyLabel(x: { name: string; role: CopyRole }): string {
  return x.role === "variant" ? x.name : x.role === "proof" ? `${x.name}'s proof` : `${x.name} unproven (its marker)`;
}

/** `--to`: each built variant's proof in one line (proven, its proof's path; unproven, why), for the dry run. */
function proofLines(plan: Extract<PublishPlan, { road: "to" }>): string[] {
  return plan.proofs.map((p) =>
    p.state === "proven"
      ? `  proven    ${p.name}: its proof ${p.path} goes with it`
      : `  unproven  ${p.name}: ${p.why}${plan.allowUnproven ? " (--allow-unproven: published with a mark that says so)" : " (publish refuses it: --allow-unproven publishes it with a mark that says so)"}`,
  );
}

/** What publish shows before it refuses or runs: --org with a failed flox check, the plan with its checks. */
function printPlan(argv: PublishArgs, plan: PublishPlan, io: Io, formatChecks: typeof import("../preflight/checks.ts").formatChecks): void {
  const print = printer(io);
  if (plan.road === "to") return;
  const { org, preflight, steps } = plan;
  if (!preflight.some((r) => r.status === "fail")) return;
  if (argv.json) print.out(JSON.stringify({ dryRun: !!argv.dryRun, org, preflight, steps }, null, 2));
  else print.out(`flox publish to ${org}:\n${formatChecks(preflight, terminalWidth(io))}`);
}

/**
 * `publish --to … --dry-run`: the copies, in build order, each `nix copy --to URI` of a built variant's store path; a
 * variant not built yet is said so, with the build to run first and its copy of the result link the build will make.
 * Text wrapped to the terminal's width (text.ts wrapLines; a command through wrapCommand), or JSON: `steps` as before
 * (the built ones), `notBuilt` with the build's argv and each pending copy.
 */
function printCopySteps(
  argv: PublishArgs,
  plan: Extract<PublishPlan, { road: "to" }>,
  io: Io,
  { shellWord, wrapLines, redactCredentials }: Pick<typeof import("../text.ts"), "shellWord" | "wrapLines"> & Pick<typeof import("../redact.ts"), "redactCredentials">,
  copies: readonly { name: string; role: CopyRole; out: string }[],
): void {
  const print = printer(io);
  // What is shown: the URI without its credentials (nix copy gets the real one when publish runs).
  const to = redactCredentials(plan.to);
  const copy = (path: string) => ["nix", "copy", "--to", to, path];
  const steps = copies.map((o) => ({ name: o.name, role: o.role, outPath: o.out, argv: copy(o.out) }));
  const pending = plan.notBuilt;
  const later = (pending?.links ?? []).map((l) => ({ name: l.name, resultLink: l.link, argv: copy(l.link) }));
  if (argv.json) {
    const notBuilt = pending && { names: pending.names, outDir: pending.outDir, build: pending.build, steps: later };
    return print.out(JSON.stringify({ dryRun: true, to, steps, proofs: plan.proofs, ...(notBuilt ? { notBuilt } : {}) }, null, 2));
  }
  const shown = (a: readonly string[]) => `  $ ${a.map(shellWord).join(" ")}`;
  const proofs = plan.proofs.length ? [`proofs (each variant's static check, tests.static of its file):`, ...proofLines(plan)] : [];
  if (!pending) return print.out(wrapLines([...proofs, ...steps.map((s) => shown(s.argv))].join("\n"), terminalWidth(io)));
  const total = steps.length + later.length;
  const lines = [
    `publish to ${to}: ${total} variant(s) in build order, ${pending.names.length} not built yet (no result link in ${pending.outDir}); nothing is run.`,
    "  1. build them first:",
    shown(pending.build),
    `  2. then publish copies each closure (nix copy --to, in build order${steps.length ? "" : "; each reads the result link the build leaves"}):`,
    ...steps.map((s) => shown(s.argv)),
    ...(steps.length && later.length ? ["  and, once built, through the result links the build leaves:"] : []),
    ...later.map((s) => shown(s.argv)),
    ...proofs,
  ];
  print.out(wrapLines(lines.join("\n"), terminalWidth(io)));
}

/** `publish --org`: the plan with flox's preconditions (text or JSON). */
function printOrgSteps(argv: PublishArgs, plan: Extract<PublishPlan, { road: "org" }>, out: (line: string) => void): void {
  const { org, preflight, steps, host } = plan;
  const pre = plan.preconditions ?? [];
  if (argv.json) return out(JSON.stringify({ dryRun: !!argv.dryRun, org, preflight, preconditions: pre, steps }, null, 2));
  out(`flox publish to ${org}: ${steps.filter((s) => s.action === "publish").length} variant(s) on this host (${host}), ${steps.filter((s) => s.action === "skip").length} for other systems`);
  for (const c of pre) out(`  ${c.ok ? "✓" : "✗"} ${c.check}: ${c.detail}`);
  for (const s of steps) out(s.action === "publish" ? `  $ ${s.argv.join(" ")}` : `  – ${s.name}: ${s.reason}`);
}
