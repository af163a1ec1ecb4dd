/**
 * Constants shared by the schema and the command-line definitions, kept apart from zod so that `--help` and the
 * command definitions load nothing heavy.
 */

/**
 * A repeatable string option of the command line: one value per occurrence (`--filter isa=armv9 --filter sm=121`),
 * so variant names written after it stay names (`build --nix-option substituters= NAME...`). yargs' `array: true`
 * alone takes every following word up to the next option (yargs docs, ".array(key)"); `nargs: 1` stops it after
 * one, and `requiresArg` makes a bare `--filter` an error. Every repeatable option of generator/commands/ spreads it
 * (tests/options.test.ts checks).
 */
export const REPEATABLE = { type: "string", array: true, nargs: 1, requiresArg: true } as const;

/**
 * A nixpkgs attribute name as Nix's lexer reads an identifier (`[a-zA-Z_][a-zA-Z0-9_'-]*`, Nix manual "Identifiers"):
 * what a named environment's extras are (matrix.ts `environments`, `pin inspect --extra`).
 */
export const NIX_ATTR_RE = /^[A-Za-z_][A-Za-z0-9_'-]*$/;

/** A Nix system double, e.g. `aarch64-linux`. */
export const SYSTEMS = ["x86_64-linux", "aarch64-linux"] as const;
export type System = (typeof SYSTEMS)[number];

/**
 * The local catalog file, beside the matrix file (matrix.ts's directory): pins, PyTorch releases, releases of packages
 * built on torch, extras and arch lists the built-in catalog does not know yet (`variant-matrix pin add` writes pins),
 * read by every command that loads the matrix (generator/catalog/local.ts). Validated with the built-in catalog's schemas.
 */
export const LOCAL_CATALOG_FILE = "local-catalog.json";

/**
 * detect's `--prefer` (and install's, doctor's, fleet's pick): how fitting variants are ordered after native code.
 * "wait": the shortest modelled wait first (model/wait.ts), the default; "newest": the newest CUDA first (the order
 * before the wait was modelled). The default first.
 */
export const PREFER_VALUES = ["wait", "newest"] as const;
export type Prefer = (typeof PREFER_VALUES)[number];

/** Seconds Nix may take by default to say what a plan would build and fetch (`--ask-nix-timeout`, driver/ask-nix.ts). */
export const ASK_NIX_TIMEOUT_S = 20;

/** A resolved build backend (driver/backend.ts builds with it). */
export type Backend = "flox" | "nix";
/** What the user may ask for. */
export type BackendChoice = Backend | "auto";
/**
 * The values `--backend` accepts: here, not in driver/backend.ts, so that the command definitions load no process
 * module (node:child_process) at start-up.
 */
export const BACKEND_CHOICES: readonly BackendChoice[] = ["auto", "flox", "nix"];

/**
 * What detect, doctor, install, fleet and verify pick for by default: the Python environment of the whole stack
 * (catalog/lib/packages.ts ENV_PACKAGE, `torch-env`).
 */
export const DEFAULT_PACKAGE = "torch-env";
