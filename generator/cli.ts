/**
 * variant-matrix command line (yargs): registers the commands of generator/commands/ (one file per command:
 * generate, list, explain, build, eval, detect, fleet, ci, verify, pin, publish) and maps errors to exit codes with errors.ts's
 * one map (0 done; 1 a finding: drift, a failed build or check, a host nothing serves; 2 bad input; 130
 * interrupted). Only cli.ts and commands/ import yargs.
 */
import yargs, { type Argv, type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { resolve } from "node:path";
// Only light modules load at start; each command imports what it uses in its handler (fast --help, list, explain).
import { EXIT, exitCodeOf } from "./errors.ts";
export { variantJson, UsageError } from "./commands/shared.ts";
import { generateCommand } from "./commands/generate.ts";
import { listCommand } from "./commands/list.ts";
import { explainCommand } from "./commands/explain.ts";
import { ciCommand } from "./commands/ci.ts";
import { buildCommand } from "./commands/build.ts";
import { detectCommand } from "./commands/detect.ts";
import { verifyCommand } from "./commands/verify.ts";
import { evalCommand } from "./commands/eval.ts";
import { fleetCommand } from "./commands/fleet.ts";
import { pinCommand } from "./commands/pin.ts";
import { publishCommand } from "./commands/publish.ts";
import { doctorCommand } from "./commands/doctor.ts";

/** Build the yargs parser (exported for tests). */
export function cli(args: string[]): Argv {
  return yargs(args)
    .scriptName("variant-matrix")
    .command(generateCommand as CommandModule)
    .command(listCommand as CommandModule)
    .command(explainCommand as CommandModule)
    .command(buildCommand as CommandModule)
    .command(detectCommand as CommandModule)
    .command(evalCommand as CommandModule)
    .command(ciCommand as CommandModule)
    .command(fleetCommand as CommandModule)
    .command(verifyCommand as CommandModule)
    .command(pinCommand as CommandModule)
    .command(publishCommand as CommandModule)
    .command(doctorCommand as CommandModule)
    .demandCommand(1, "name a command: generate, list, explain, build, eval, detect, fleet, ci, verify, pin, publish, doctor")
    .strict()
    .help()
    .alias("h", "help")
    .fail((msg, err) => {
      if (err) throw err;
      console.error(`error: ${msg}\nrun with --help for usage`);
      process.exit(EXIT.input);
    });
}

/** Entry point: runs the CLI; maps MatrixError / FilterError / UsageError to exit 2 with their message. */
export async function main(argv = hideBin(process.argv)): Promise<void> {
  // `variant-matrix list | head`: a closed pipe ends the output quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
  try {
    await cli(argv).parseAsync();
  } catch (e) {
    const exit = exitCodeOf(e);
    if (exit !== null) {
      console.error(`error: ${(e as Error).message}`);
      process.exitCode = exit;
      return;
    }
    // A path the user gave that cannot be written or read: say so plainly, no stack trace.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code && ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOTDIR", "EROFS", "EEXIST"].includes(code)) {
      console.error(`error: ${(e as Error).message}`);
      process.exitCode = EXIT.input;
      return;
    }
    throw e;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) await main();
