import { redactCredentials } from "./redact.ts";
import { terminalSafe } from "./terminal-safe.ts";

/**
 * Bad input that the CLI reports with its message and exit code 2, without a stack trace: an invalid matrix.ts,
 * a bad filter or option, an unknown name. Kept in a module of its own so the CLI can recognise these errors
 * without loading what throws them.
 */
export class InputError extends Error {
  override name = "InputError";
}

/** A bad command-line option or argument (a value out of range, a missing or unknown name): the one such class, exit 2. */
export class UsageError extends InputError {}

/**
 * The one exit-code map of every command:
 * - 0 ok: done (every build built, every promise holds, every host served, files up to date);
 * - 1 the work failed: a build or check failed, a promise does not hold, a host nothing serves, a file out of date;
 * - 2 bad input or an unmet precondition: any InputError (an invalid matrix.ts, a matrix that yields no variant, an
 *   unknown name or option value, an unreadable file, a host check or a variant's evaluation that stops `build`
 *   before it builds anything), and yargs usage errors;
 * - 130 interrupted (SIGINT).
 * Every error goes to stderr as one line starting with ERROR_PREFIX (see errorLine).
 */
export const EXIT = { ok: 0, finding: 1, input: 2, interrupted: 130 } as const;

/** The prefix of every error message of every command, on stderr. */
export const ERROR_PREFIX = "variant-matrix: error: ";

/**
 * `message` as every command prints an error: ERROR_PREFIX + message + newline (for an Io's err). A message
 * often quotes the user's arguments or a file's contents: its credentials are redacted (redact.ts) and its control
 * characters escaped (terminal-safe.ts), so an argument holding ESC cannot drive the terminal.
 */
export function errorLine(message: string): string {
  return `${ERROR_PREFIX}${terminalSafe(redactCredentials(message))}\n`;
}

/** The exit code for an error: EXIT.input for bad input (an InputError), null for anything else (a bug). */
export function exitCodeOf(e: unknown): number | null {
  return e instanceof InputError ? EXIT.input : null;
}

/** The longest user value a message shows before cutting it (MAX_SHOWN characters, then how long it was). */
export const MAX_SHOWN = 80;

/**
 * `text` cut to `max` characters, with how long it was: "aaaa… (2000000 characters)". Text within `max` is returned
 * as it is, its control characters escaped (terminal-safe.ts, one line). Messages pass user values through this so a
 * 2 MB string is not echoed whole, nor an escape sequence raw.
 * @param oneLine false for a message of several lines of our own (a compiler's message with its code frame): its
 *   newlines and tabs stay, every other control character is still escaped
 */
export function clip(text: string, max = MAX_SHOWN, oneLine = true): string {
  const safe = terminalSafe(text, oneLine);
  return safe.length <= max ? safe : `${safe.slice(0, max)}… (${text.length} characters)`;
}

/**
 * Run a command's work and map an error to its exit status, the one way every command does: an error with an exit
 * code (exitCodeOf: an InputError) is written to `err` as one errorLine (after `prefix`, e.g. "doctor: ") and its code
 * returned; any other error (a bug) is thrown on.
 * @param err where the error line goes (a command's io.err)
 * @param work the command's work; its result is the exit status
 * @returns the work's exit status, or the error's (EXIT.input)
 */
export async function withExitCode(err: (s: string) => void, work: () => Promise<number>, prefix = ""): Promise<number> {
  try {
    return await work();
  } catch (e) {
    const code = exitCodeOf(e);
    if (code === null) throw e;
    err(errorLine(`${prefix}${(e as Error).message}`));
    return code;
  }
}
