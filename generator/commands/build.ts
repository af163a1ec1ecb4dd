/**
 * `variant-matrix build [NAME...]`: the yargs command module (`buildCommand`) and the function behind it
 * (`buildMain`). Register with `yargs(...).command(buildCommand)`.
 *
 * Exit codes (set on `process.exitCode`): 0 every selected variant built or cached (or a dry run), 1 a variant
 * failed or was skipped, 2 a usage error (unknown name, bad filter, bad option, a selection that matches no
 * variant: nothing is built), 130 interrupted.
 */
import type { Argv, ArgumentsCamelCase, CommandModule } from "yargs";
import { PACKAGES, REPEATABLE } from "../constants.ts";
import { FILTER_OPTION } from "../filters.ts";
import type { Variant } from "../schema.ts";
import { BACKEND_CHOICES, type BackendChoice } from "../driver/backend.ts";
import { DEFAULT_CORES_PER_BUILD } from "../driver/jobs.ts";
import { GIB_PER_COMPILE_JOB } from "../catalog/host.ts";

/** The project root this package lives in (where `.flox/pkgs` and `logs` are by default); see paths.ts. */
export { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";

export { UsageError, type BuildArgs } from "../driver/options.ts";
import type { BuildArgs } from "../driver/options.ts";

const JOBS_HELP =
  `concurrent builds. Default from this machine: slots = min(CPUs, floor(memory GiB / ${GIB_PER_COMPILE_JOB})) ` +
  `(a CUDA compile job of torch needs ~${GIB_PER_COMPILE_JOB} GB), cores per build = --cores or min(${DEFAULT_CORES_PER_BUILD}, slots), ` +
  `jobs = max(1, floor(slots / cores per build)); the nix backend then passes --cores floor(slots / jobs)`;

/** The yargs command module: `build [names..]`. */
export const buildCommand: CommandModule<object, BuildArgs> = {
  command: "build [names..]",
  describe: "build selected variants in parallel, in dependency order, with logs, resume and a report",
  builder: (y: Argv<object>) =>
    y
      .positional("names", { type: "string", array: true, describe: "variant names (default: all, after filters)" })
      .option("filter", FILTER_OPTION)
      .option("package", { type: "string", choices: PACKAGES, describe: "only this package (dependencies still built)" })
      .option("dry-run", { type: "boolean", describe: "print the plan (order, commands, what is built) and build nothing; offline: only result-NAME links say what is built" })
      .option("probe-store", {
        type: "boolean",
        describe:
          "with --dry-run: instantiate each file and ask Nix what it would build and fetch with your substituters " +
          "(nix-store --realise --dry-run; fetches the pinned nixpkgs: network); without it the dry run uses the cache model",
      })
      .option("skip-cached", { type: "boolean", describe: "skip variants whose outputs a substituter already holds (nothing is built or fetched for them)" })
      .option("json", { type: "boolean", describe: "print the plan (dry run) or the report as JSON on stdout" })
      .option("backend", {
        type: "string",
        choices: BACKEND_CHOICES,
        default: "auto",
        describe: "flox: `flox build NAME` in the root; nix: `nix-build FILE -o result-NAME`; auto: flox if on PATH",
      })
      .option("root", { type: "string", describe: "project root (flox runs here; default result links and logs go here)" })
      .option("pkgs-dir", { type: "string", describe: "take each selected variant's file from DIR/NAME.nix instead of ROOT/.flox/pkgs" })
      .option("matrix", { type: "string", describe: "matrix file whose variants are selected from (default: ROOT/matrix.ts)" })
      .option("out-dir", { type: "string", describe: "where result-NAME links go (nix backend; default the root)" })
      .option("builders", {
        type: "string",
        describe: "Nix remote builders, passed as --builders (nix backend): a spec, or @FILE for a machines file",
      })
      .option("max-jobs", { type: "number", describe: "passed as --max-jobs (nix backend); 0 = build only on remote builders" })
      .option("copy-to", { type: "string", describe: "push each finished closure to this store URI (nix copy --to; file://, s3://, ssh://)" })
      .option("substituter", {
        ...REPEATABLE,
        describe: "binary cache URL for this run, instead of nix.conf's (repeat for several; nix backend: --option substituters)",
      })
      // The old spelling, kept working but not shown: one option name per concept across commands.
      .option("substituters", { type: "string", hidden: true })
      .option("cores", { type: "number", describe: "NIX_BUILD_CORES per build, passed as --cores (nix backend)" })
      .option("jobs", { type: "number", alias: "j", describe: JOBS_HELP })
      .option("retries", { type: "number", default: 0, describe: "rerun a failed build up to N more times" })
      .option("fail-fast", { type: "boolean", describe: "after a failure, start nothing more and end running builds" })
      .option("force", { type: "boolean", describe: "run the build command even for variants already built" })
      .option("report", { type: "string", describe: "also write the JSON report to this file" })
      .option("logs-dir", {
        type: "string",
        describe: "logs root (default: logs in the project root): <dir>/<run-id>/<NAME>.log, report.json, <dir>/latest",
      })
      .option("nix-option", {
        ...REPEATABLE,
        describe: "NAME=VALUE passed as --option NAME VALUE to nix-build and the store probes (e.g. substituters=)",
      })
      .option("verify", { type: "boolean", describe: "after each variant builds, build its static check of the name's promise (nix-build, no GPU)" })
      .option("verify-gpu", { type: "boolean", describe: "also build each CUDA variant's GPU check (needs a builder with the `cuda` system feature)" })
      .option("plain", { type: "boolean", describe: "one line per event even on a terminal (no live status)" })
      .option("kill-grace", { type: "number", default: 10, describe: "seconds between SIGTERM and SIGKILL when ending builds" })
      .option("connect-timeout", {
        type: "number",
        default: 30,
        describe: "seconds ssh waits for a remote builder to connect and answer (NIX_SSHOPTS ConnectTimeout); a builder that does not is named in the failure",
      })
      .example("$0 build --filter isa=armv9 --dry-run", "show what would be built for Arm v9")
      .example("$0 build --filter sm=121 --filter cuda=12.9", "build the DGX Spark variants of CUDA 12.9 and what they are built on")
      .example("$0 build NAME", "build one variant (a name `variant-matrix list` prints) and what it is built on, with logs and a report") as unknown as Argv<BuildArgs>,
  handler: async (argv: ArgumentsCamelCase<BuildArgs & { substituter?: string[] }>) => {
    const [{ buildMain }, { UsageError }] = await Promise.all([import("./build-main.ts"), import("./shared.ts")]);
    if (argv.substituter?.length) {
      if (argv.substituters !== undefined) throw new UsageError("give --substituter (repeatable), not both it and the old --substituters");
      argv.substituters = argv.substituter.join(" ");
    }
    await buildMain(argv);
  },
};
