/**
 * `variant-matrix build [NAME...]`: the yargs command module (`buildCommand`) and the function behind it
 * (`buildMain`). Register with `yargs(...).command(buildCommand)`.
 *
 * Exit codes (the run's exit status, returned by main): 0 every selected variant built or cached (or a dry run), 1 a variant
 * failed or was skipped, 2 a usage error (unknown name, bad filter, bad option, a selection that matches no
 * variant: nothing is built), 130 interrupted.
 */
import { UsageError } from "../errors.ts";
import type { Argv, ArgumentsCamelCase, CommandModule } from "yargs";
import { ASK_NIX_TIMEOUT_S, REPEATABLE } from "../constants.ts";
import { PACKAGES } from "../catalog/lib/packages.ts";
import { hostRootOption, matrixOption, nixOptions, outputOptions, selectionOptions, type BuiltTypes } from "./options.ts";
import { runOf } from "./shared.ts";
import { slotsFormula } from "../catalog/lib/machines.ts";

/** The project root this package lives in (where `.flox/pkgs` and `logs` are by default); see paths.ts. */
export { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";

export { type BuildArgs } from "../driver/build-options.ts";

const JOBS_HELP =
  `most builds at once. Default: slots = ${slotsFormula("CPUs", "memory GiB")} ` +
  `(the memory a CUDA compile job of torch needs), shared out among the ready builds as they start (by priority: ` +
  `torch alone gets every slot), each started with --cores its share; with --cores N, floor(slots / N) builds of N cores`;

/** The options of `build` (yargs), the shared groups defined once in options.ts. */
const buildOptions = {
  ...selectionOptions,
  package: { type: "string", choices: PACKAGES, describe: "only this package (dependencies still built)" },
  "dry-run": { type: "boolean", describe: "print the plan (order, commands, what is built) and build nothing; offline: only result-NAME links say what is built" },
  verbose: { type: "boolean", describe: "with --dry-run: every variant's command, estimate basis and cache reasons in full" },
  "ask-store": {
    type: "boolean",
    // The option's name before "probe" came to mean the GPU probe only: scripts that pass it keep working.
    alias: "probe-store",
    describe:
      "with --dry-run: instantiate each file and ask Nix what it would build and fetch with your substituters " +
      "(nix-store --realise --dry-run; fetches the pinned nixpkgs: network); without it the dry run uses the cache model",
  },
  "ask-nix-timeout": {
    type: "number",
    describe:
      `with --dry-run: seconds Nix may take to say what it would build and fetch (default ${ASK_NIX_TIMEOUT_S}; 0: the cache model, Nix not asked; ` +
      "past it, Nix's answer for what it answered and the model for the rest); a build's evaluation before it builds ends there too (default 600 s)",
  },
  "skip-cached": { type: "boolean", describe: "skip variants whose outputs a substituter already holds (nothing is built or fetched for them)" },
  json: { ...outputOptions.json, describe: "print the plan (dry run) or the report as JSON on stdout" },
  backend: nixOptions.backend,
  root: { type: "string", describe: "project root (flox runs here; default result links and logs go here)" },
  "pkgs-dir": nixOptions["pkgs-dir"],
  matrix: { ...matrixOption.matrix, describe: "matrix file whose variants are selected from (default: ROOT/matrix.ts)" },
  "out-dir": { type: "string", describe: "where result-NAME links go (nix backend; default the root)" },
  builders: { type: "string", describe: "Nix remote builders, passed as --builders (nix backend): a spec, or @FILE for a machines file" },
  "max-jobs": { type: "number", describe: "passed as --max-jobs (nix backend); 0 = build only on remote builders" },
  "copy-to": { type: "string", describe: "push each finished closure to this store URI (nix copy --to; file://, s3://, ssh://)" },
  substituter: { ...REPEATABLE, describe: "binary cache URL for this run, instead of nix.conf's (repeat for several; nix backend: --option substituters)" },
  // The old spelling, kept working but not shown: one option name per concept across commands.
  substituters: { type: "string", hidden: true },
  cores: { type: "number", describe: "NIX_BUILD_CORES per build, passed as --cores (nix backend)" },
  jobs: { type: "number", alias: "j", describe: JOBS_HELP },
  retries: { type: "number", default: 0, describe: "rerun a failed build up to N more times" },
  "fail-fast": { type: "boolean", describe: "after a failure, start nothing more and end running builds" },
  force: { type: "boolean", describe: "run the build command even for variants already built" },
  report: { type: "string", describe: "also write the JSON report to this file" },
  "logs-dir": outputOptions["logs-dir"],
  "nix-option": { ...nixOptions["nix-option"], describe: "NAME=VALUE passed as --option NAME VALUE to nix-build and the store's dry runs (e.g. substituters=)" },
  verify: {
    type: "boolean",
    default: true,
    describe:
      "after each variant builds, build its static check of the name's promise (nix-build, no GPU): its output, result-NAME-proof, is the variant's proof; " +
      "--no-verify skips the checks and leaves the variants unproven",
  },
  "verify-gpu": { type: "boolean", describe: "also build each CUDA variant's GPU check (needs a builder with the `cuda` system feature)" },
  plain: outputOptions.plain,
  "kill-grace": { type: "number", default: 10, describe: "seconds between SIGTERM and SIGKILL when ending builds" },
  ...hostRootOption,
  "connect-timeout": {
    type: "number",
    default: 30,
    describe: "seconds ssh waits for a remote builder to connect and answer (NIX_SSHOPTS ConnectTimeout); a builder that does not is named in the failure",
  },
} as const;

const builder = (y: Argv<object>) =>
  y
    .positional("names", { type: "string", array: true, describe: "variant names (default: all, after filters)" })
    .options(buildOptions)
    .example("$0 build --filter isa=armv9 --dry-run", "show what would be built for Arm v9")
    .example("$0 build --filter sm=121 --filter cuda=12.9", "build the DGX Spark variants of CUDA 12.9 and what they are built on")
    .example("$0 build NAME", "build one variant (a name `variant-matrix list` prints) and what it is built on, with logs and a report");

/** The yargs command module: `build [names..]`. */
export const buildCommand: CommandModule<object, BuiltTypes<typeof builder>> = {
  command: "build [names..]",
  describe: "build selected variants in parallel, in dependency order, with logs, resume and a report",
  builder,
  handler: async (argv: ArgumentsCamelCase<BuiltTypes<typeof builder>>) => {
    const { buildMain } = await import("./build-main.ts");
    if (argv.substituter?.length && argv.substituters !== undefined)
      throw new UsageError("give --substituter (repeatable), not both it and the old --substituters");
    const run = runOf(argv);
    run.exitCode = await buildMain(argv.substituter?.length ? { ...argv, substituters: argv.substituter.join(" ") } : argv, run.io);
  },
};
