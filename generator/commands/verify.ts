/**
 * `variant-matrix verify [NAME]`: run the probe (generator/verify/probe.py) in a Python environment and check the
 * promise of a variant's name against what it finds, one line per promise.
 *
 *   verify [NAME] [--python PATH] [--json] [--probe FILE] [--proof DIR] [--no-gpu] [--host-driver [NIXGLHOST]]
 *          [--cpuinfo FILE] [--nvidia-smi FILE] [--machine ARCH] [--matrix FILE]
 *
 * NAME defaults to the variant `detect` picks for this host (the torchaudio variant when the environment has
 * torchaudio, else the pytorch one); verify also says which variant of the matrix, if any, the installation is.
 * `--python PATH`: an interpreter, a directory with `bin/python3` (a flox environment, a venv), or a package output
 * such as a `result-*` link of a variant (its `lib/python3.X/site-packages` and those of its propagated inputs
 * are put on PYTHONPATH of the `python3` on PATH). Default: `python3` on PATH. `--probe FILE` replays a probe
 * recorded elsewhere (e.g. on a GPU machine: `python3 generator/verify/probe.py --gpu --cuobjdump > probe.json`).
 * `--proof DIR`: the variant's proof (its static check's output, release.nix `tests.NAME.static`: probe.json and
 * report.txt); the probe then runs the GPU part only and the device code is judged from the proof, when the proof is
 * about the same library files (else the report says why it was set aside, and cuobjdump runs here).
 *
 * Exit status: 0 when every promise holds (those that cannot be checked here, such as GPU ones on a host without
 * a GPU, are shown as "–" and do not fail); 1 when one fails, torch is missing or dies on import; 2 for bad input
 * (an unknown NAME, a Python that cannot be run, an unreadable file, a --proof path that does not exist or is not a
 * directory).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { runOf } from "./shared.ts";
import type { OptionTypes } from "./options.ts";
import { verifyOptions, verifyPositional } from "./verify-options.ts";

/** The yargs command module; generator/cli.ts registers it. Sets its run's exit status (0, 1 or 2). */
export const verifyCommand: CommandModule<object, OptionTypes<typeof verifyPositional & typeof verifyOptions>> = {
  command: "verify [name]",
  describe:
    "check a Python environment's torch and the packages on it against a variant's promise (default: detect's pick: " +
    "the torch-env variant when the environment holds every package of torch-env)",
  builder: (y: Argv<object>) => y.positional("name", verifyPositional.name).options(verifyOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof verifyPositional & typeof verifyOptions>>) => {
    const run = runOf(argv);
    const { verifyMain } = await import("./verify-main.ts");
    run.exitCode = await verifyMain(argv, undefined, run.io);
  },
};
