/**
 * The `eval` command (yargs): select variants of the matrix (names and/or `--filter`), evaluate them through
 * release.nix (generator/driver/eval.ts), print one line per variant (`--json`: one JSON object per line, then a
 * `{"summary": …}` line) and exit 1 when any evaluation failed or a torchaudio is not built against its pytorch.
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { CommandModule } from "yargs";
import { InputError } from "../errors.ts";
import { FILTER_OPTION } from "../filters.ts";
import { REPO_ROOT } from "../paths.ts";
import type { EvalResult } from "../driver/eval.ts";

/** Thrown for a selection that cannot be used; the CLI exits 2 with its message. */
export class EvalUsageError extends InputError {}

interface EvalArgs {
  names?: string[];
  filter?: string[];
  jobs?: number;
  json: boolean;
  nixpkgs?: string;
  engine: "auto" | "nix-eval-jobs" | "nix-instantiate";
  matrix?: string;
  root?: string;
}

function line(r: EvalResult): string {
  if (r.error) return `FAIL  ${r.name}\n      ${r.error.split("\n").join("\n      ")}`;
  const c = r.coupling ? (r.coupling.ok === true ? `  torch = ${r.coupling.pytorch} ✓` : r.coupling.ok === false ? `  NOT built against ${r.coupling.pytorch}` : "") : "";
  return `ok    ${r.name}  ${r.drvPath}${c}`;
}

export const evalCommand: CommandModule<object, EvalArgs> = {
  command: "eval [names..]",
  describe: "evaluate variants to drvPaths through release.nix (in parallel) and prove each torchaudio uses its pytorch",
  builder: (y) =>
    y
      .positional("names", { type: "string", array: true, describe: "variant names (default: every variant)" })
      .option("filter", FILTER_OPTION)
      .option("jobs", { type: "number", describe: "parallel evaluators (default: the number of CPUs)" })
      .option("json", { type: "boolean", default: false, describe: "one JSON object per variant, then a summary object" })
      .option("nixpkgs", { type: "string", describe: "Nix expression passed as release.nix's nixpkgs (--arg nixpkgs EXPR)" })
      .option("engine", { choices: ["auto", "nix-eval-jobs", "nix-instantiate"] as const, default: "auto" as const })
      .option("matrix", { type: "string", describe: "matrix file to read (default: matrix.ts in the repository root)" })
      .option("root", { type: "string", describe: "directory holding release.nix (default: the repository root)" }) as never,
  handler: async (argv) => {
    const [{ loadProject }, { selectTargets }, { evalVariants }] = await Promise.all([
      import("../project.ts"),
      import("../driver/targets.ts"),
      import("../driver/eval.ts"),
    ]);
    const p = await loadProject({ matrixFile: argv.matrix ? resolve(process.cwd(), argv.matrix) : undefined });
    const jobs = argv.jobs ?? availableParallelism();
    if (!Number.isInteger(jobs) || jobs < 1) throw new EvalUsageError(`--jobs ${argv.jobs}: expected a whole number ≥ 1`);
    // The variants asked for, plus the pytorch each torchaudio needs for the coupling proof.
    const variants = selectTargets(p.variants, { names: argv.names, filters: argv.filter }).targets;
    const root = argv.root ? resolve(process.cwd(), argv.root) : REPO_ROOT;
    const { summary } = await evalVariants({
      root,
      variants,
      jobs,
      nixpkgsExpr: argv.nixpkgs,
      engine: argv.engine,
      onResult: (r) => console.log(argv.json ? JSON.stringify(r) : line(r)),
    });
    if (argv.json) console.log(JSON.stringify({ summary }));
    else
      console.error(
        `${summary.evaluated} evaluated with ${summary.engine} in ${summary.seconds.toFixed(1)} s: ${summary.errors} error(s); ` +
          `${summary.coupled} of ${summary.pairs} torchaudio variants proven built against their pytorch` +
          (summary.uncoupled ? `, ${summary.uncoupled} NOT` : ""),
      );
    if (summary.errors || summary.uncoupled) process.exitCode = 1;
  },
};
