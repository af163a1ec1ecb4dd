/**
 * variant-matrix command line (yargs): registers the commands of generator/commands/ (one file per command:
 * generate, list, explain, build, eval, detect, fleet, ci, verify, pin, publish, doctor, install) and maps errors to exit codes with errors.ts's
 * one map (0 ok; 1 the work failed: drift, a failed build or check, a host nothing serves; 2 bad input or an unmet
 * precondition; 130 interrupted). Every error is one `variant-matrix: error: …` message on stderr. Only cli.ts and
 * commands/ import yargs.
 */
import yargs, { type Argv, type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO_ROOT } from "./paths.ts";
// Only light modules load at start; each command imports what it uses in its handler (fast --help, list, explain).
import { errorLine, EXIT, exitCodeOf } from "./errors.ts";
export { variantJson, UsageError } from "./commands/shared.ts";
import { terminalWidth } from "./commands/shared.ts";
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
import { installCommand } from "./commands/install.ts";

/**
 * The version in package.json of the repository root (paths.ts REPO_ROOT: the same answer from the sources and from
 * the bundle in dist/<hash>/), read when the parser is built (about 0.1 ms). "unknown" only when package.json is
 * missing or unreadable (never thrown: --help must still work).
 */
export function packageVersion(): string {
  try {
    const v = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;
    return typeof v === "string" ? v : "unknown";
  } catch {
    return "unknown";
  }
}

const EPILOGUE =
  "Exit status: 0 ok; 1 the work failed (a build or check failed, a promise does not hold, a host nothing serves, " +
  "generated files out of date); 2 bad input or an unmet precondition (an invalid matrix.ts, a matrix that yields no " +
  "variant, an unknown name, option or value); 130 interrupted. Errors go to stderr as `variant-matrix: error: MESSAGE`.";

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
    .command(installCommand as CommandModule)
    .demandCommand(1, "name a command: generate, list, explain, build, eval, detect, fleet, ci, verify, pin, publish, doctor, install")
    .strict()
    .help()
    .alias("h", "help")
    .version(packageVersion())
    .describe("version", "print the version (package.json) and exit")
    .describe("help", "print this help and exit")
    .epilogue(EPILOGUE)
    .wrap(Math.min(terminalWidth(), 100))
    .fail((msg, err) => {
      if (err) throw err;
      process.stderr.write(errorLine(`${msg}\nrun with --help for usage`));
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
      process.stderr.write(errorLine((e as Error).message));
      process.exitCode = exit;
      return;
    }
    // A path the user gave that cannot be written or read: say so plainly, no stack trace.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code && ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOTDIR", "EROFS", "EEXIST"].includes(code)) {
      process.stderr.write(errorLine((e as Error).message));
      process.exitCode = EXIT.input;
      return;
    }
    throw e;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) await main();
