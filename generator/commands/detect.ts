/**
 * `variant-matrix detect`: recommend the package variant for this host (or a recorded one) and say why.
 *
 *   detect [--json] [--package NAME (default torch-env)] [--prefer wait|newest] [--cpuinfo FILE] [--nvidia-smi FILE]
 *          [--machine ARCH] [--matrix FILE]
 *
 * Without files it reads /proc/cpuinfo, runs `nvidia-smi --query-gpu=compute_cap,name,driver_version
 * --format=csv,noheader` (absent → no NVIDIA GPU) and takes the machine from `uname -m` (os.machine()). With
 * `--cpuinfo` the machine is the one that file describes unless `--machine` says otherwise, and the GPU list is
 * `--nvidia-smi` or none (a recorded CPU is never mixed with this machine's GPUs).
 *
 * With no --package it recommends the torch-env variant (the Python environment of the whole stack).
 *
 * Exit status: 0 when every GPU (or, without GPU, the CPU) has a variant; 1 when some or none fit (the output says
 * why and which matrix.ts change would add one); 2 for bad input (unknown --package or --machine, a host file that
 * cannot be opened or parsed — the message names the line — or an invalid matrix).
 */
import { UsageError } from "../errors.ts";
import { PREFER_VALUES, type Prefer } from "../constants.ts";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { PACKAGES, type PackageName } from "../catalog/packages.ts";
import { environmentOf } from "../matrix/naming.ts";
import type { Variant } from "../matrix/schema.ts";
import { runOf } from "./shared.ts";
import { DEFAULT_PACKAGE, hostOptions, installLineOptions, matrixOption, outputOptions, packagePickOption, preferOption, type ArgsOf, type OptionTypes } from "./options.ts";

export { DEFAULT_PACKAGE } from "./options.ts";

/** The options of `detect` (yargs), each group defined once in options.ts. */
const detectOptions = {
  json: { ...outputOptions.json, describe: "print the recommendation as JSON" },
  ...packagePickOption,
  ...preferOption,
  ...hostOptions,
  ...matrixOption,
  ...installLineOptions,
} as const;

/**
 * Arguments of `detect` as yargs infers them from its options (each may be left out: `--package` defaults to
 * torch-env, `--org` and `--substituter` shape the install line).
 */
export type DetectArgs = Partial<ArgsOf<typeof detectOptions>>;


/**
 * Check `--package` against PACKAGES.
 * @throws UsageError naming the allowed values.
 */
export function parsePackage(value: string | undefined): PackageName {
  const v = value ?? DEFAULT_PACKAGE;
  // A named environment of matrix.ts (`llm-env`) is checked against the matrix once it is loaded (checkEnvironment).
  if (!(PACKAGES as readonly string[]).includes(v) && environmentOf(v) === null)
    throw new UsageError(`--package: unknown package "${v}"; allowed values: ${PACKAGES.join(", ")}, or NAME-env for an environment of matrix.ts`);
  return v as PackageName;
}

/**
 * Check `--prefer` against PREFER_VALUES (yargs checks its choices; a caller of runDetect may not).
 * @throws UsageError naming the allowed values.
 */
export function parsePrefer(value: string | undefined): Prefer {
  const v = value ?? PREFER_VALUES[0];
  if (!(PREFER_VALUES as readonly string[]).includes(v)) throw new UsageError(`--prefer: unknown value "${v}"; allowed values: ${PREFER_VALUES.join(", ")}`);
  return v as Prefer;
}

/**
 * A `--package NAME-env` that is no environment of the matrix (matrix.ts `environments`).
 * @throws UsageError naming the environments the matrix has.
 */
export function checkEnvironment(pkg: PackageName, variants: readonly Pick<Variant, "package" | "role">[]): void {
  if ((PACKAGES as readonly string[]).includes(pkg)) return;
  const envs = [...new Set(variants.filter((x) => x.role === "env").map((x) => x.package))];
  if (!envs.includes(pkg))
    throw new UsageError(
      `--package: the matrix has no environment "${pkg}"; its environments: ${envs.join(", ") || "(none)"} (matrix.ts environments)`,
    );
}

/** The yargs command module; generator/cli.ts registers it. Sets its run's exit status (0, 1 or 2, see above). */
export const detectCommand: CommandModule<object, OptionTypes<typeof detectOptions>> = {
  command: "detect",
  describe: "recommend the package variant for this host (GPU, driver, CPU ISA, machine) and say why (default package: torch-env)",
  builder: (y: Argv<object>) => y.options(detectOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof detectOptions>>) => {
    const run = runOf(argv);
    const [{ runDetect }, { loadVariants }] = await Promise.all([import("./detect-main.ts"), import("../matrix/variant-source.ts")]);
    run.exitCode = await runDetect(argv, loadVariants, run.io);
  },
};
