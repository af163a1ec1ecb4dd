/**
 * The `eval` command (yargs): its options mapped onto one library call, plan then run (driver/eval.ts planEval: the
 * selection, the generated files' freshness, the host's Nix; runEval: evaluate through release.nix), printing one
 * line per variant (`--json`: one JSON object per line, then a `{"summary": …}` line); exit 1 when any evaluation
 * failed or a torchaudio is not built against its pytorch.
 */
import { resolve } from "node:path";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { REPO_ROOT } from "../paths.ts";
import type { EvalResult, StoreRow } from "../driver/eval.ts";
import { matrixOption, nixOptions, outputOptions, selectionOptions, type BuiltTypes } from "./options.ts";
import { parseNixOptions, printer, runOf, terminalWidth } from "./shared.ts";

/** The options of `eval` (yargs), the shared groups defined once in options.ts. */
const evalOptions = {
  ...selectionOptions,
  jobs: { type: "number", describe: "parallel evaluators (default: the number of CPUs)" },
  json: { ...outputOptions.json, describe: "one JSON object per variant, then a summary object" },
  nixpkgs: { type: "string", describe: "Nix expression passed as release.nix's nixpkgs (--arg nixpkgs EXPR)" },
  engine: {
    choices: ["auto", "nix-eval-jobs", "nix-instantiate"],
    default: "auto",
    describe: "evaluator: nix-eval-jobs (parallel workers), nix-instantiate (chunks of variants), auto: nix-eval-jobs when on PATH",
  },
  ...matrixOption,
  root: { type: "string", describe: "directory holding release.nix (default: the repository root)" },
  "ask-store": {
    type: "boolean",
    // The option's name before "probe" came to mean the GPU probe only: scripts that pass it keep working.
    alias: "probe-store",
    describe: "then ask Nix what realising each derivation builds and fetches with your substituters (nix-store --realise --dry-run)",
  },
  "nix-option": { ...nixOptions["nix-option"], describe: "with --ask-store: NAME=VALUE passed to nix-store as --option NAME VALUE" },
} as const;

const builder = (y: Argv<object>) =>
  y.positional("names", { type: "string", array: true, describe: "variant names (default: every variant)" }).options(evalOptions);

function line(r: EvalResult): string {
  if (r.error) return `FAIL  ${r.name}\n      ${r.error.split("\n").join("\n      ")}`;
  const c = r.coupling ? (r.coupling.ok === true ? `  torch = ${r.coupling.pytorch} ✓` : r.coupling.ok === false ? `  NOT built against ${r.coupling.pytorch}${r.coupling.otherTorches?.length ? ` alone: another torch in its closure, ${r.coupling.otherTorches.join(" ")}` : ""}` : "") : "";
  return `ok    ${r.name}  ${r.drvPath}${c}`;
}

/** The yargs command module `eval [names..]`; generator/cli.ts registers it. Sets its run's exit status 1 on a failure. */
export const evalCommand: CommandModule<object, BuiltTypes<typeof builder>> = {
  command: "eval [names..]",
  describe: "evaluate variants to drvPaths through release.nix (in parallel) and prove each package built on torch uses its pytorch",
  builder,
  handler: async (argv: ArgumentsCamelCase<BuiltTypes<typeof builder>>) => {
    const run = runOf(argv);
    const print = printer(run.io);
    const { planEval, runEval } = await import("../driver/eval.ts");
    const plan = await planEval({
      names: argv.names,
      filters: argv.filter,
      matrixFile: argv.matrix ? resolve(process.cwd(), argv.matrix) : undefined,
      root: argv.root ? resolve(process.cwd(), argv.root) : REPO_ROOT,
      jobs: argv.jobs,
      nixpkgsExpr: argv.nixpkgs,
      engine: argv.engine,
      askStore: argv.askStore,
      nixOptions: parseNixOptions(argv.nixOption),
      width: terminalWidth(run.io),
    });
    const { summary, store, exitCode } = await runEval(plan, (r) => print.out(argv.json ? JSON.stringify(r) : line(r)));
    if (store) {
      for (const s of store.rows) print.out(argv.json ? JSON.stringify({ store: s }) : storeLine(s));
      if (!argv.json)
        print.err(
          `Nix (nix-store --realise --dry-run): ${store.toBuild.length} derivation(s) to build, ${store.toFetch.length} path(s) to fetch across ` +
            `${store.rows.length} variant(s), each counted once${store.unreachable.length ? `; unreachable substituter(s): ${store.unreachable.join(", ")}` : ""}`,
        );
    }
    if (argv.json) print.out(JSON.stringify(store ? { summary, store: { toBuild: store.toBuild, toFetch: store.toFetch, unreachable: store.unreachable } } : { summary }));
    else
      print.err(
        `${summary.evaluated} evaluated with ${summary.engine} in ${summary.seconds.toFixed(1)} s: ${summary.errors} error(s); ` +
          `${summary.coupled} of ${summary.pairs} variants built on torch proven built against their pytorch` +
          (summary.uncoupled ? `, ${summary.uncoupled} NOT` : ""),
      );
    run.exitCode = exitCode;
  },
};

function storeLine(s: StoreRow): string {
  return "error" in s ? `store ${s.name}  ${s.error}` : `store ${s.name}  builds ${s.toBuild.length}${s.toBuild.length ? ` (${s.toBuild.join(", ")})` : ""}, fetches ${s.toFetch.length}`;
}
