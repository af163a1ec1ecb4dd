/**
 * Bad input that the CLI reports with its message and exit code 2, without a stack trace: an invalid matrix.ts,
 * a bad filter or option, an unknown name. Kept in a module of its own so the CLI can recognise these errors
 * without loading what throws them.
 */
export class InputError extends Error {
  override name = "InputError";
}

/**
 * The one exit-code map of every command: 0 done (every build built, every promise holds, every host served);
 * 1 a finding (a build failed, a promise does not hold, a host nothing serves, a file out of date); 2 bad input
 * (any InputError, and yargs usage errors); 130 interrupted (SIGINT).
 */
export const EXIT = { ok: 0, finding: 1, input: 2, interrupted: 130 } as const;

/** The exit code for an error: EXIT.input for bad input (an InputError), null for anything else (a bug). */
export function exitCodeOf(e: unknown): number | null {
  return e instanceof InputError ? EXIT.input : null;
}
