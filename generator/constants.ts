/**
 * Constants shared by the schema and the command-line definitions, kept apart from zod so that `--help` and the
 * command definitions load nothing heavy.
 */

/** A Nix system double, e.g. `aarch64-linux`. */
export const SYSTEMS = ["x86_64-linux", "aarch64-linux"] as const;
export type System = (typeof SYSTEMS)[number];

/** The two packages the generator writes per kept combination. */
export const PACKAGES = ["pytorch", "torchaudio"] as const;
export type PackageName = (typeof PACKAGES)[number];

/**
 * The local catalog file, beside the matrix file (matrix.ts's directory): pins, PyTorch and torchaudio releases the
 * built-in catalog does not know yet, written by `variant-matrix pin add` and read by every command that loads the
 * matrix (generator/pin/local.ts). Validated with the built-in catalog's schemas.
 */
export const LOCAL_CATALOG_FILE = "local-catalog.json";
