/**
 * The `eval` command (yargs): select variants of the matrix (names and/or `--filter`), evaluate them through
 * release.nix (generator/driver/eval.ts), print one line per variant (`--json`: one JSON object per line, then a
 * `{"summary": …}` line) and exit 1 when any evaluation failed or a torchaudio is not built against its pytorch.
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { UsageError } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import type { EvalResult } from "../driver/eval.ts";
import { matrixOption, nixOptions, outputOptions, selectionOptions, type BuiltTypes } from "./options.ts";
import { parseNixOptions, printer, project, runOf, terminalWidth } from "./shared.ts";

/** Thrown for a selection that cannot be used; the CLI exits 2 with its message. */

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
  "probe-store": {
    type: "boolean",
    describe: "then ask Nix what realising each derivation builds and fetches with your substituters (nix-store --realise --dry-run)",
  },
  "nix-option": { ...nixOptions["nix-option"], describe: "with --probe-store: NAME=VALUE passed to nix-store as --option NAME VALUE" },
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
    const [{ checkHost, hostContext, selectCurrent }, { evalVariants }, { refuseOnBlocking }] = await Promise.all([
      import("../driver/build.ts"),
      import("../driver/eval.ts"),
      import("../preflight/checks.ts"),
    ]);
    const p = await project(argv.matrix);
    const jobs = argv.jobs ?? availableParallelism();
    if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError(`--jobs ${argv.jobs}: expected a whole number ≥ 1`);
    const root = argv.root ? resolve(process.cwd(), argv.root) : REPO_ROOT;
    // The variants asked for, plus the pytorch each torchaudio needs for the coupling proof; release.nix and
    // pkgs/variants.nix (what Nix evaluates) must say what was just expanded.
    const variants = selectCurrent(p.variants, { names: argv.names, filters: argv.filter }, { project: p, root, command: "eval" }).targets;
    // The preflight build runs (preflight/checks.ts, command "eval"): a Nix older than the catalog's pins need would
    // only print download or minver errors per variant. --nixpkgs hands in the user's own nixpkgs: no catalog pin is
    // evaluated.
    refuseOnBlocking(checkHost(hostContext("eval", variants, { backend: "nix", pinnedNixpkgs: argv.nixpkgs === undefined })), terminalWidth(run.io));
    const { results, summary } = await evalVariants({
      root,
      variants,
      jobs,
      nixpkgsExpr: argv.nixpkgs,
      engine: argv.engine,
      onResult: (r) => print.out(argv.json ? JSON.stringify(r) : line(r)),
    });
    const store = argv.probeStore ? await storeProbe(results, argv.nixOption ?? []) : null;
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
    if (summary.errors || summary.uncoupled) run.exitCode = 1;
  },
};

type StoreRow = { name: string; toBuild: string[]; toFetch: string[] } | { name: string; error: string };

function storeLine(s: StoreRow): string {
  return "error" in s ? `store ${s.name}  ${s.error}` : `store ${s.name}  builds ${s.toBuild.length}${s.toBuild.length ? ` (${s.toBuild.join(", ")})` : ""}, fetches ${s.toFetch.length}`;
}

/** Nix's dry-run answer for every evaluated derivation, and the union across them (each derivation/path once). */
async function storeProbe(results: readonly EvalResult[], nixOption: readonly string[]) {
  const [{ probeStore }, { storeName }, { redactDeep }] = await Promise.all([import("../driver/build.ts"), import("../driver/store.ts"), import("../redact.ts")]);
  const opts = parseNixOptions(nixOption);
  const ok = results.filter((r) => r.drvPath !== null);
  const byName = await probeStore(new Map(ok.map((r) => [r.name, r.drvPath!])), opts);
  const answers = ok.map((r) => byName.get(r.name)!);
  const rows: StoreRow[] = ok.map((r, i) => {
    const a = answers[i]!;
    return "error" in a ? { name: r.name, error: a.error } : { name: r.name, toBuild: a.toBuild.map(storeName), toFetch: a.toFetch.map(storeName) };
  });
  const good = answers.filter((a): a is Exclude<typeof a, { error: string }> => !("error" in a));
  // A substituter's URL (unreachable, or in an error) is printed: credentials redacted (redact.ts).
  return redactDeep({
    rows,
    toBuild: [...new Set(good.flatMap((a) => a.toBuild))].map(storeName),
    toFetch: [...new Set(good.flatMap((a) => a.toFetch))].map(storeName),
    unreachable: [...new Set(good.flatMap((a) => a.unreachable))],
  });
}
