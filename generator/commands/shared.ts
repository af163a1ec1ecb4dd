/**
 * What the commands share: their usage error, `--nix-option` parsing, loading the project, the `list --json` shape,
 * the untracked-files warning, the terminal's width, and where a command writes (Io). The options they share are in
 * options.ts; the mapping of an error to an exit status is errors.ts withExitCode.
 */
import { resolve } from "node:path";
import { InputError, UsageError } from "../errors.ts";
import type { Project } from "../matrix/project.ts";
import type { Variant, VariantJson } from "../matrix/schema.ts";


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

/**
 * Where a command writes and what it writes to: `out` (its output: stdout), `err` (its errors and warnings: stderr),
 * the width human output wraps to and whether stderr is a terminal. main (generator/cli.ts) makes the process's one
 * (`processIo`); tests hand in recorders. Nothing below main writes anywhere else.
 */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** The width human output wraps to, in columns: `$COLUMNS` when set to a number, else stdout's terminal width, else 80. Absent: 80. */
  columns?: number;
  /** True when stderr is a terminal (colour in build's status lines). Absent: false. */
  isTTY?: boolean;
  /**
   * stderr itself when it is a terminal that reports its size: build's live status redraws it (log-update needs the
   * stream's rows and columns). Absent for a pipe, a file or a recorder: plain status lines go to `err`.
   */
  terminal?: NodeJS.WriteStream;
}

/**
 * One run of a command as main (generator/cli.ts) hands it to the command's handler, through yargs' parse context
 * (the handler's argv carries it under RUN_KEY; read it with runOf): where to write, and the exit status main returns.
 */
export interface CommandRun {
  io: Io;
  /** The exit status main returns: 0 unless the handler sets it (1 the work failed, 2 bad input; errors.ts EXIT). */
  exitCode: number;
  /**
   * End the process now with `code`, without returning through main (cli.ts: process.exit). Only for generate's
   * second signal, which must not wait for the work in flight; every other path returns its code through main.
   */
  exitNow: (code: number) => never;
}

/** The key of the CommandRun in a handler's argv (yargs merges its parse context into argv; strict mode ignores it). */
export const RUN_KEY = "variantMatrixRun";

/**
 * The CommandRun main handed to a handler with `argv`.
 * @throws Error when the handler was called without main (no run in argv): a programming error, not user input
 */
export function runOf(argv: object): CommandRun {
  const run = (argv as Record<string, unknown>)[RUN_KEY] as CommandRun | undefined;
  if (!run) throw new Error("a command handler ran without main (generator/cli.ts): no CommandRun in its arguments");
  return run;
}

/**
 * Load the matrix's project as the commands name it: `matrix` relative to the working directory (default
 * ROOT/matrix.ts, or `root`/matrix.ts), the local catalog beside it, through the project cache (matrix/project-cache.ts:
 * keyed by content, so it returns what loadProject computes). project.ts loads only on a miss.
 * @throws MatrixError (exit 2) for a missing, unloadable or invalid matrix, with the field paths and allowed values
 */
export async function project(matrix?: string, root?: string): Promise<Project> {
  const { loadProjectCached } = await import("../matrix/project-cache.ts");
  return loadProjectCached({ root, matrixFile: matrix ? resolve(process.cwd(), matrix) : undefined });
}

/** The `list --json` contract of docs/contributing.md for one variant. */
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

/** The width human output of a run wraps to, in columns: `io.columns` (main's processIo: $COLUMNS, else the terminal's), else 80. */
export function terminalWidth(io: Pick<Io, "columns">): number {
  return io.columns ?? 80;
}

/** Line writers over `io`: `out(line)` and `err(line)` write the line and a newline (as the console's log and error print a line). */
export function printer(io: Io): { out: (line: string) => void; err: (line: string) => void } {
  return { out: (line) => io.out(`${line}\n`), err: (line) => io.err(`${line}\n`) };
}

export { copyableCommand, shellWord } from "../text.ts";
