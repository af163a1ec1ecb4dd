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
import { clip, errorLine, EXIT, exitCodeOf, UsageError } from "./errors.ts";
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
import { withArgumentRules } from "./commands/arguments.ts";
import { installCommand } from "./commands/install.ts";

/**
 * The version in package.json of the repository root (paths.ts REPO_ROOT: the same answer from the sources and from
 * the bundle in dist/<hash>/), read when the parser is built (about 0.1 ms). "unknown" only when package.json is
 * missing or unreadable (never thrown: --help must still work).
 */
function packageVersion(): string {
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

/**
 * yargs' own wording of a parse error, as this CLI says it: "Not enough arguments following: report" (a bare option
 * that takes a value) becomes "--report needs a value"; anything else is kept.
 */
function usageMessage(msg: string, args: readonly string[] = []): string {
  const bare = /^Not enough arguments following: (\S+)$/.exec(msg);
  if (bare) return `${bare[1]!.length === 1 ? "-" : "--"}${bare[1]} needs a value`;
  // "Invalid values:\n  Argument: backend, Given: "x", Choices: …" (one line per option): one line in all.
  if (/^Invalid values:/.test(msg)) {
    const each = [...msg.matchAll(/Argument: (\S+), Given: (.*), Choices: (.*)$/gm)].map(
      (m) => `--${m[1]}: ${clip(m[2]!)} is not one of ${m[3]}`,
    );
    if (each.length) return each.join("; ");
  }
  // yargs fills a required positional before it looks past `--`, so `explain -- NAME` lands here.
  if (/^Not enough non-option arguments/.test(msg) && args.includes("--"))
    return `${msg}: this command reads its required arguments before \`--\` only; write them before it`;
  return clip(msg.replace(/\s*\n\s*/g, " "), 2000);
}

/**
 * `--NAME=` with nothing after `=` (before any `--`): yargs reads it as "" for a string and as 0 for a number, so
 * `--kill-grace=` would pass as 0 seconds.
 * @throws UsageError naming the option
 */
function refuseEmptyAssignments(args: readonly string[]): void {
  const end = args.indexOf("--");
  const empty = (end < 0 ? args : args.slice(0, end)).find((a) => /^--?[^=\s]+=$/.test(a));
  if (empty !== undefined) throw new UsageError(`${empty.slice(0, -1)} needs a value`);
}

/** Build the yargs parser (exported for tests). Every command goes through withArgumentRules (commands/arguments.ts). */
function cli(args: string[]): Argv {
  refuseEmptyAssignments(args);
  const rules = <T, U>(m: CommandModule<T, U>, o?: Parameters<typeof withArgumentRules>[1]) => withArgumentRules(m, { ...o, words: args }) as CommandModule;
  return yargs(args)
    .scriptName("variant-matrix")
    .command(rules(generateCommand))
    .command(rules(listCommand))
    .command(rules(explainCommand))
    .command(rules(buildCommand))
    .command(rules(detectCommand))
    .command(rules(evalCommand))
    .command(rules(ciCommand))
    // Bare, --write-matrix prints the matrix instead of writing it.
    .command(rules(fleetCommand, { optionalValue: ["write-matrix"] }))
    .command(rules(verifyCommand))
    .command(rules(pinCommand))
    .command(rules(publishCommand))
    .command(rules(doctorCommand))
    .command(rules(installCommand))
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
      // yargs' own parse errors (YError: a bare option, an unknown argument) are usage errors like any other; an
      // error a handler threw goes on to main, which knows its exit code.
      if (err && err.name !== "YError") throw err;
      process.stderr.write(errorLine(`${usageMessage(msg ?? err?.message ?? "invalid arguments", args)} (run with --help for usage)`));
      process.exit(EXIT.input);
    });
}

/**
 * True for an error of writing output (a `write` system call that failed: a full disk, `> /dev/full`, an I/O error).
 * The work itself may have gone right, but what it printed or wrote is incomplete: exit 1, one line, no stack.
 */
function isWriteError(e: unknown): e is NodeJS.ErrnoException {
  const x = e as NodeJS.ErrnoException | null;
  return typeof x?.code === "string" && x.syscall === "write";
}

/**
 * Entry point: runs the CLI; maps MatrixError / FilterError / UsageError to exit 2 with their message, an unusable
 * path to exit 2 and a failed write (stdout or a file) to exit 1, each as one error line.
 */
export async function main(argv = hideBin(process.argv)): Promise<void> {
  // `variant-matrix list | head`: a closed pipe ends the output quietly. Any other error of an asynchronous stdout
  // (a pipe or socket) is one line and exit 1.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    process.stderr.write(errorLine(`cannot write the output: ${e.message}`));
    process.exit(EXIT.finding);
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
    // stdout to a file or a terminal writes synchronously, so its error is thrown here (`list --json > /dev/full`).
    if (isWriteError(e)) {
      process.stderr.write(errorLine(`cannot write the output: ${e.message}`));
      process.exitCode = EXIT.finding;
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
