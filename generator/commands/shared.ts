/**
 * What the generate, list, explain and ci commands share: the matrix option, loading the project, the `list --json`
 * shape, the untracked-files warning, and their usage error.
 */
import { resolve } from "node:path";
import { InputError } from "../errors.ts";
import type { Project } from "../project.ts";
import type { Variant, VariantJson } from "../schema.ts";

/** Thrown for bad command-line input; exits 2 with its message. */
export class UsageError extends InputError {}

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

export const matrixOption = {
  matrix: { type: "string", describe: "matrix file to read (default: matrix.ts in the repository root)" },
} as const;

/** Load the project, turning a bad matrix into exit 2 with the field paths and allowed values. */
export async function project(matrix?: string): Promise<Project> {
  const { loadProject } = await import("../project.ts");
  return loadProject({ matrixFile: matrix ? resolve(process.cwd(), matrix) : undefined });
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
  // node:child_process rather than zx here, on purpose: `generate` runs on every edit of matrix.ts and loading zx
  // costs about 15 ms of its start-up for one short, argument-array git call (bench/cli.ts).
  const { execFile } = await import("node:child_process");
  const out = await new Promise<string | null>((res) =>
    execFile("git", ["ls-files", "-z", "--", ".flox", "pkgs"], { cwd: root, maxBuffer: 64 << 20 }, (err, stdout) => res(err ? null : stdout)),
  );
  if (out === null) return; // not a git checkout (or no git): nothing to say
  const tracked = new Set(out.split("\0").filter(Boolean));
  const untracked = files.filter((f) => (f.startsWith(".flox/") || f.startsWith("pkgs/")) && !tracked.has(f));
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
