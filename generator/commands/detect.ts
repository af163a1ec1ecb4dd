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
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { runOf } from "./shared.ts";
import type { OptionTypes } from "./options.ts";
import { detectOptions } from "./detect-options.ts";

export { DEFAULT_PACKAGE } from "./options.ts";

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
