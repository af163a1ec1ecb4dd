/**
 * `variant-matrix fleet HOST...` (yargs definition; the work is loaded in the handler): the fewest variants that
 * serve a whole fleet, which host runs which, who cannot be served and why, the `matrix.ts` that generates
 * exactly those variants, and what they cost to build.
 *
 * A HOST is what `detect --json` printed on that machine (a .json file; its `host`), or a directory holding
 * `cpuinfo` (the machine's /proc/cpuinfo) and, when it has NVIDIA GPUs, `nvidia-smi.txt` (the output of
 * `nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader`), as `detect --cpuinfo/--nvidia-smi`
 * reads them.
 */
import { basename, resolve } from "node:path";
import type { CommandModule } from "yargs";
import { InputError } from "../errors.ts";
import { PACKAGES, type PackageName } from "../constants.ts";

export { FleetUsageError, hostId, type FleetArgs } from "../fleet/options.ts";
import type { FleetArgs } from "../fleet/options.ts";

export const fleetCommand: CommandModule<object, FleetArgs> = {
  command: "fleet <hosts..>",
  describe: "the fewest variants that serve every host of a fleet (detect --json files or cpuinfo/nvidia-smi.txt dirs), and their build cost",
  builder: (y) =>
    y
      .positional("hosts", { type: "string", array: true, demandOption: true, describe: "detect --json files or directories of cpuinfo + nvidia-smi.txt" })
      .option("torch", { type: "string", describe: "PyTorch release (default: the matrix's first release)" })
      .option("python", { type: "string", describe: "Python version (default: the newest of the matrix's)" })
      .option("cuda", { type: "string", array: true, describe: "CUDA versions to choose from (default: the matrix's)" })
      .option("package", { choices: PACKAGES, default: "torchaudio" as PackageName, describe: "the package every host needs (torchaudio brings its pytorch)" })
      .option("builders", { type: "number", default: 1, describe: "build machines for the makespan estimate" })
      .option("reports", { type: "string", describe: "logs directory whose report.json files fit the cost model (default: logs)" })
      .option("json", { type: "boolean", default: false })
      .option("write-matrix", { type: "string", describe: "print (or, with a file name, write) the matrix.ts that generates exactly these variants" })
      .option("matrix", { type: "string", describe: "matrix file the defaults come from (default: matrix.ts)" }) as never,
  handler: async (argv) => {
    const { runFleet } = await import("../fleet/run.ts");
    await runFleet(argv);
  },
};

