/**
 * What the commands share: their usage error, `--nix-option` parsing, loading the project, the `list --json` shape,
 * the untracked-files warning, the terminal's width, and where a command writes (Io). The options they share are in
 * options.ts; the mapping of an error to an exit status is errors.ts withExitCode.
 */
import { resolve } from "node:path";
import { UsageError } from "../errors.ts";
import type { Project } from "../project.ts";
import type { Variant, VariantJson } from "../schema.ts";
import { terminalSafe } from "../terminal-safe.ts";


/**
 * `--nix-option NAME=VALUE` occurrences as [name, value] pairs (passed to Nix as `--option NAME VALUE`).
 * @throws UsageError for an occurrence without `=` or without a name
 */
export function parseNixOptions(specs: readonly string[] | undefined): (readonly [string, string])[] {
  return (specs ?? []).map((s) => {
    const eq = s.indexOf("=");
    if (eq < 1) throw new UsageError(`--nix-option "${s}": expected NAME=VALUE (e.g. substituters=)`);
    return [s.slice(0, eq), s.slice(eq + 1)] as const;
  });
}

/** Where a command writes its output (`out`) and its errors and warnings (`err`); tests hand in recorders. */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * The process's own streams: stdout and stderr, every control character escaped (terminal-safe.ts): what a command
 * prints quotes recordings, host files, `detect --json` files and arguments, and none of them may drive the terminal.
 * JSON passes through unchanged in meaning.
 */
export const processIo: Io = { out: (s) => process.stdout.write(terminalSafe(s)), err: (s) => process.stderr.write(terminalSafe(s)) };

/**
 * Load the matrix's project as the commands name it: `matrix` relative to the working directory (default
 * ROOT/matrix.ts, or `root`/matrix.ts), the local catalog beside it. project.ts loads only when this runs.
 * @throws MatrixError (exit 2) for a missing, unloadable or invalid matrix, with the field paths and allowed values
 */
export async function project(matrix?: string, root?: string): Promise<Project> {
  const { loadProject } = await import("../project.ts");
  return loadProject({ root, matrixFile: matrix ? resolve(process.cwd(), matrix) : undefined });
}

/** The `list --json` contract of ARCHITECTURE.md for one variant. */
export function variantJson(v: Variant): VariantJson {
  return {
    name: v.name,
    package: v.package,
    version: v.version,
    torchVersion: v.torchVersion,
    python: v.python,
    cuda: v.cuda,
    sm: v.sm,
    isa: v.isa,
    system: v.system,
    cudaCapabilities: v.cudaCapabilities,
    cflags: v.cflags,
    nixpkgs: v.nixpkgs,
    dependsOn: v.dependsOn,
    file: v.file,
    notes: v.notes,
  };
}

/** Warn about generated files git does not track: `flox build` evaluates a store copy of tracked files only. */
export async function warnUntracked(root: string, files: string[]): Promise<void> {
  const { untrackedGenerated } = await import("../git-tracked.ts");
  const untracked = await untrackedGenerated(root, files);
  if (untracked === null) return; // not a git checkout (or no git): nothing to say
  if (untracked.length)
    console.error(
      `warning: ${untracked.length} generated file(s) are not git-tracked, and flox build sees only tracked files:` +
        ` run \`git add .flox pkgs\` (first: ${untracked.slice(0, 3).join(", ")})`,
    );
}

/**
 * The width human output wraps to, in columns: `$COLUMNS` when set to a number, else the terminal's width
 * (`process.stdout.columns`), else 80 (a pipe, a file, CI).
 */
export function terminalWidth(): number {
  const env = Number(process.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80;
}

/** `word` quoted for a POSIX shell when it needs it (single quotes; a quote inside as '\''). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A command line a user copies: `npx variant-matrix WORDS…`, each word shell-quoted, with the host options that
 * produced the answer (`--cpuinfo`, `--nvidia-smi`, `--machine`) and `--matrix` when they were given, so the next
 * command reads the same host and matrix.
 */
export function copyableCommand(words: readonly string[], from: { cpuinfo?: string; "nvidia-smi"?: string; machine?: string; matrix?: string } = {}): string {
  const flags = (["cpuinfo", "nvidia-smi", "machine", "matrix"] as const).flatMap((k) => (from[k] !== undefined ? [`--${k}`, from[k]!] : []));
  return ["npx", "variant-matrix", ...words, ...flags].map(shellWord).join(" ");
}
