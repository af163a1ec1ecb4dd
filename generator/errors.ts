/**
 * Bad input that the CLI reports with its message and exit code 2, without a stack trace: an invalid matrix.ts,
 * a bad filter or option, an unknown name. Kept in a module of its own so the CLI can recognise these errors
 * without loading what throws them.
 */
export class InputError extends Error {
  override name = "InputError";
}
