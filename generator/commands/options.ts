/**
 * The options several commands share, each defined once (yargs option objects, `as const` so that yargs infers their
 * types), and the type of the arguments a handler gets for an option object (`ArgsOf`). A command spreads the groups
 * it takes into its own option object (`{ ...hostOptions, json: … }`) and hands that to `y.options(…)`; where one
 * needs another describe or default it overrides the field at its call site (`{ ...outputOptions.json, describe: … }`).
 *
 * - hostOptions: which host to read (`--cpuinfo`, `--nvidia-smi`, `--machine`), as detect reads it; hostRootOption:
 *   the hidden `--host-root` of the commands that check a modelled host (doctor, verify, install; tests).
 * - selectionOptions: which variants (`--filter`); packagePickOption: the package detect picks for (`--package`).
 * - nixOptions: how Nix builds (`--backend`, `--pkgs-dir`, `--nix-option`).
 * - outputOptions: what is printed and where (`--json`, `--plain`, `--logs-dir`); matrixOption: the matrix read.
 * - installLineOptions: where the variants were published (`--org`, `--substituter`): how detect and verify print
 *   the install line.
 *
 * The types: `OptionTypes<O>` is what yargs infers for an option object (a CommandModule's `U`), `ArgsOf<O>` the same
 * with camelCase names (what a command's function takes), `BuiltTypes<B>` what a builder with an inline positional
 * declares; no command writes its arguments' interface by hand.
 */
import type { Argv, InferredOptionType, Options, PositionalOptions } from "yargs";
import { BACKEND_CHOICES, DEFAULT_PACKAGE, PREFER_VALUES, REPEATABLE } from "../constants.ts";
import { PACKAGES, type PackageName } from "../catalog/lib/packages.ts";
import { FILTER_OPTION } from "../matrix/filters.ts";

export { DEFAULT_PACKAGE };

/** Which host to read: a recorded one (files) or this machine (host/read-host.ts readHost). */
export const hostOptions = {
  cpuinfo: {
    type: "string",
    describe: "read this recorded /proc/cpuinfo, or a recorded host directory (cpuinfo and nvidia-smi.txt or .csv, as fleet reads them), instead of this machine",
  },
  "nvidia-smi": {
    type: "string",
    describe: "read this recorded output of `nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader`",
  },
  machine: { type: "string", describe: "machine as `uname -m` prints it: x86_64 | aarch64" },
  mem: {
    type: "number",
    describe: "the host's memory in GiB, for the build schedule and its wait (default: a recorded host directory's meminfo, or this machine's)",
  },
} as const;

/** Root directory host files are read under (tests: a modelled host); default "/". Hidden from help. */
export const hostRootOption = {
  "host-root": { type: "string", hidden: true, describe: "read host files under this root (tests)" },
} as const;

/** Which variants a command works on, besides the names it takes as positionals. */
export const selectionOptions = {
  filter: FILTER_OPTION,
} as const;

/** The package detect picks a variant of (detect, doctor and install; default torch-env). */
export const packagePickOption = {
  package: {
    type: "string",
    default: DEFAULT_PACKAGE,
    describe: `package to recommend: ${PACKAGES.join(" | ")} | NAME-env (an environment of matrix.ts) (default ${DEFAULT_PACKAGE}: the Python environment of the whole stack, what you activate)`,
  },
} as const;

/** How detect orders the variants that fit after native code (detect, install, doctor, fleet). */
export const preferOption = {
  prefer: {
    type: "string",
    choices: PREFER_VALUES,
    default: PREFER_VALUES[0],
    describe: "after native code, pick the shortest wait (wait: the cache model's hours plus the build estimate) or the newest CUDA (newest)",
  },
} as const;

/** How Nix builds: the backend, where the variants' files are, options passed to Nix. */
export const nixOptions = {
  backend: {
    type: "string",
    choices: BACKEND_CHOICES,
    default: "auto",
    describe: "flox: `flox build NAME` in the root; nix: `nix-build FILE -o result-NAME`; auto: flox if on PATH",
  },
  "pkgs-dir": { type: "string", describe: "take each selected variant's file from DIR/NAME.nix instead of ROOT/.flox/pkgs" },
  "nix-option": { ...REPEATABLE, describe: "NAME=VALUE passed to Nix as --option NAME VALUE (repeatable)" },
} as const;

/** The matrix file a command reads. */
export const matrixOption = {
  matrix: { type: "string", describe: "matrix file to read (default: matrix.ts in the repository root)" },
} as const;

/** What a command prints and where its logs go. */
export const outputOptions = {
  json: { type: "boolean", default: false, describe: "print JSON on stdout" },
  plain: { type: "boolean", describe: "one line per event even on a terminal (no live status)" },
  "logs-dir": { type: "string", describe: "logs root (default: logs in the project root): <dir>/<run-id>/<NAME>.log, report.json, <dir>/latest" },
} as const;

/** Where the variants were published: how detect and verify print the install line (detect/recommend.ts installLines). */
export const installLineOptions = {
  org: { type: "string", describe: "Flox organisation the variants were published to: print `flox install ORG/NAME`" },
  substituter: { type: "string", describe: "binary cache the variants were pushed to: added to the Nix install line" },
} as const;

/** `o` with only the options named in `keys` (a command that takes part of a group). */
export function pick<O extends object, K extends keyof O>(o: O, ...keys: K[]): Pick<O, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<O, K>;
}

/** "nvidia-smi" → "nvidiaSmi": the camelCase name yargs also sets for an option. */
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;

/** `T` with each key also by its camelCase name, as yargs sets both ("nvidia-smi" and "nvidiaSmi"). */
export type CamelCased<T> = { [K in keyof T & string as K | CamelCase<K>]: T[K] };

/**
 * The arguments a handler gets for the options (and positionals) `O`, as yargs infers them: each by its declared
 * (kebab-case) name and by its camelCase name, an option without default or demandOption possibly undefined.
 * Without yargs' `_`, `$0` and index signature, so that one command can call another's function with the arguments
 * it sets, and a misspelt option name is a type error.
 */
export type ArgsOf<O extends { [key: string]: Options | PositionalOptions }> = CamelCased<OptionTypes<O>>;

/**
 * The option types yargs infers for the options (and positionals) `O`, by their declared names: the `U` of a
 * `CommandModule<object, U>` whose builder declares `O` (its handler gets `ArgumentsCamelCase<U>`).
 */
export type OptionTypes<O extends { [key: string]: Options | PositionalOptions }> = { [K in keyof O]: InferredOptionType<O[K]> };

/**
 * The option types a builder declares, as yargs infers them from its chain of `.positional(…)` and `.options(…)`
 * (the `U` of the `Argv<U>` it returns): for a command whose positional is written inline in its builder.
 */
export type BuiltTypes<B extends (y: Argv<object>) => Argv<object>> = ReturnType<B> extends Argv<infer U> ? U : never;
