/**
 * variant-matrix command line (yargs): registers the commands of generator/commands/ (one file per command:
 * generate, list, explain, build, eval, detect, fleet, ci, verify, pin, publish, doctor, install) and maps errors to exit codes with errors.ts's
 * one map (0 ok; 1 the work failed: drift, a failed build or check, a host nothing serves; 2 bad input or an unmet
 * precondition; 130 interrupted). Every error is one `variant-matrix: error: …` message on stderr. Only cli.ts and
 * commands/ import yargs.
 *
 * `main(argv, io)` is the one entry: it returns the exit status, and every command writes through the `io` it is
 * handed (commands/shared.ts Io, CommandRun). This file is the only one under generator/ that touches the process's
 * streams or its exit (processIo, the stdout error guard, `process.exitCode = await main()` at the bottom, and
 * CommandRun.exitNow for generate's second signal); the compiled checker's entry (verify/check-main.ts) is a
 * program of its own. tests/layout.test.ts holds both.
 */
import yargs, { type Argv, type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO_ROOT, takeCacheWarnings } from "./paths.ts";
import { terminalSafe } from "./terminal-safe.ts";
// Only light modules load at start; each command imports what it uses in its handler (fast --help, list, explain).
import { clip, errorLine, EXIT, exitCodeOf, UsageError } from "./errors.ts";
import { RUN_KEY, terminalWidth, type CommandRun, type Io } from "./commands/shared.ts";
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

/**
 * The yargs parser of `args` (main parses them with it, a CommandRun under RUN_KEY). Every command goes through
 * withArgumentRules (commands/arguments.ts); help wraps to `io`'s width; yargs renders no help unless asked (withoutHelpCache).
 * @throws UsageError for `--NAME=` with nothing after `=`
 */
export function commandLine(args: string[], io: Io): Argv {
  refuseEmptyAssignments(args);
  const rules = <T, U>(m: CommandModule<T, U>, o?: Parameters<typeof withArgumentRules>[1]) => withArgumentRules(m, { ...o, words: args }) as CommandModule;
  const parser = yargs(args)
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
    .wrap(Math.min(terminalWidth(io), 100))
    .fail((msg, err) => {
      // yargs' own parse errors (YError: a bare option, an unknown argument) are usage errors like any other (exit 2,
      // one line); an error a handler threw goes on to main, which knows its exit code.
      if (err && err.name !== "YError") throw err;
      throw new UsageError(`${usageMessage(msg ?? err?.message ?? "invalid arguments", args)} (run with --help for usage)`);
    });
  withoutHelpCache(parser);
  return parser;
}

/** What withoutHelpCache reaches of a yargs parser that its types leave out (yargs 18, build/lib/yargs-factory.js). */
interface YargsInternals {
  getInternalMethods?: () => { getUsageInstance?: () => YargsUsage };
}

/** The part of yargs' usage instance withoutHelpCache uses (yargs 18, build/lib/usage.js). */
interface YargsUsage {
  cacheHelpMessage(): void;
  hasCachedHelpMessage(): boolean;
}

/**
 * The usage instance of a yargs parser (`getInternalMethods().getUsageInstance()`, not in yargs' types).
 * @throws Error when this yargs has none (another major version): tests/cli-startup.test.ts runs it, so an upgrade
 *   that moves it fails a test instead of bringing the cost back unseen
 */
export function yargsUsage(parser: Argv): YargsUsage {
  const usage = (parser as Argv & YargsInternals).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage !== "function") throw new Error("yargs has no usage instance with cacheHelpMessage: see cli.ts withoutHelpCache");
  return usage;
}

/**
 * Keep yargs from rendering the chosen command's whole help after every run. yargs 18 calls
 * `usage.cacheHelpMessage()` right after a command's handler starts (build/lib/command.js), so that a help shown
 * after an asynchronous handler fails is that command's. This CLI never shows help for a failure (`.fail` throws, main
 * prints one line), so the text was never read, and rendering it (cliui's string widths over every option) cost each
 * `build` about 100 ms of CPU and `detect` 20 ms (medians of 16, in-process, 2026-11-28). `--help` is unchanged: with
 * nothing cached, yargs renders the help when it is asked for.
 */
function withoutHelpCache(parser: Argv): void {
  yargsUsage(parser).cacheHelpMessage = () => {};
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
 * The process's own streams: stdout and stderr, the width of stdout's terminal (or `$COLUMNS`, read when a command
 * asks) and whether stderr is a terminal. What goes to stdout has its control characters escaped (terminal-safe.ts):
 * it quotes recordings, host files, `detect --json` files and arguments, none of which may drive the terminal (JSON
 * passes through unchanged in meaning). stderr carries the build status' own colours; its error lines are escaped by
 * errorLine.
 */
export const processIo: Io = {
  out: (s) => void process.stdout.write(terminalSafe(s)),
  err: (s) => void process.stderr.write(s),
  get columns() {
    const env = Number(process.env.COLUMNS);
    if (Number.isInteger(env) && env > 0) return env;
    return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80;
  },
  get isTTY() {
    return process.stderr.isTTY === true;
  },
  get terminal() {
    // A terminal that reports no size (rows 0, e.g. `script` without a size) gets plain lines: log-update would draw nothing.
    return process.stderr.isTTY === true && (process.stderr.rows ?? 0) > 0 ? process.stderr : undefined;
  },
};

let stdoutGuarded = false;
/**
 * `variant-matrix list | head`: a closed pipe ends the output quietly. Any other error of an asynchronous stdout (a
 * pipe or socket) is one line and exit 1. Installed once, when main first writes to the process's own streams.
 */
function guardStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    process.stderr.write(errorLine(`cannot write the output: ${e.message}`));
    process.exit(EXIT.finding);
  });
}

/**
 * Entry point: runs the command `argv` names with `io` and returns its exit status (errors.ts EXIT). MatrixError /
 * FilterError / UsageError are exit 2 with their message, an unusable path exit 2 and a failed write (stdout or a
 * file) exit 1, each as one error line on `io.err`; help and the version go to `io.out`. Any other error is thrown
 * (a bug: its stack is the report).
 */
export async function main(argv = hideBin(process.argv), io: Io = processIo): Promise<number> {
  if (io === processIo) guardStdout();
  const run: CommandRun = { io, exitCode: 0, exitNow: (code) => process.exit(code) };
  try {
    return await runCommandLine(argv, io, run);
  } finally {
    // What the cache could not do (paths.ts cacheWarning): the command worked without it.
    for (const w of takeCacheWarnings()) io.err(`warning: ${w}\n`);
  }
}

/** main's work: parse `argv` and run its command with `run`, mapping an error to its exit status (see main). */
async function runCommandLine(argv: string[], io: Io, run: CommandRun): Promise<number> {
  try {
    let help = "";
    // A parse callback keeps yargs from printing (--help, --version) or exiting itself: what it would print comes back here.
    await commandLine(argv, io).parseAsync(argv, { [RUN_KEY]: run }, (_e, _a, output) => void (help = output));
    if (help) io.out(`${help}\n`);
    return run.exitCode;
  } catch (e) {
    const exit = exitCodeOf(e);
    if (exit !== null) {
      io.err(errorLine((e as Error).message));
      return exit;
    }
    // stdout to a file or a terminal writes synchronously, so its error is thrown here (`list --json > /dev/full`).
    if (isWriteError(e)) {
      io.err(errorLine(`cannot write the output: ${e.message}`));
      return EXIT.finding;
    }
    // A path the user gave that cannot be written or read: say so plainly, no stack trace.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code && ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOTDIR", "EROFS", "EEXIST"].includes(code)) {
      io.err(errorLine((e as Error).message));
      return EXIT.input;
    }
    throw e;
  }
}

// Run as a program (`node generator/cli.ts …`; the launcher bin/variant-matrix.js does the same with the bundle). No
// top-level await: tests import this module in-process (tests/helpers/main.ts), and uvu loads them as CommonJS.
if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname))
  void main().then((code) => {
    process.exitCode = code;
  });
