/**
 * Build targets: what the build driver can build, and the selection a user asks for.
 *
 * One source: the expanded variant list of the matrix (`loadProject()`, the same list `generate` writes from),
 * each variant with its own system; its file is `ROOT/.flox/pkgs/NAME.nix`, or `PKGS_DIR/NAME.nix` when
 * `--pkgs-dir` points the build driver at another directory of files named like the variants (tests use tiny
 * stand-in derivations there; only the variants with a file there are targets). Names and systems always come
 * from the variant list; nothing is parsed from file names and no system is guessed.
 *
 * Selection (`selectTargets`) is pure: names, `--filter KEY=VALUE` (the `list` filters) and `--package`, closed
 * over `dependsOn` (selecting torchaudio-X pulls in pytorch-X). Unknown names throw `SelectionError` listing the
 * nearest names (`nearestNames` of suggest.ts, the one nearest-name search).
 */
import { existsSync } from "node:fs";
import { GPU_CHECK_FEATURE } from "../system-features.ts";
import { isAbsolute, join, relative, resolve } from "node:path";
import { InputError } from "../errors.ts";
import { checkFilterValues, matchFilters, parseFilters, type Filterable } from "../matrix/filters.ts";
import { nearestNames, shown, type NearestCandidate } from "../matrix/suggest.ts";
import { loadProject, type Project } from "../matrix/project.ts";
import type { Variant } from "../matrix/schema.ts";
import type { TeamCache } from "../matrix/team-cache.ts";
import type { PackageName } from "../catalog/lib/packages.ts";
import { commentText, nixString } from "../nix-literals.ts";
import { staticCheckDeps, staticCheckName } from "../model/plan.ts";

/**
 * One package variant the driver can build: the Variant's own fields (read, never copied one by one; `nixpkgsKey`
 * as expand computed it), with its file made absolute. `nixpkgs` (the cache model), `requiredSystemFeatures` (what a
 * builder must declare), `extras` and `cudaCapabilities` (plan.ts estimateBuild) may be absent: a target a test
 * writes by hand, or a check.
 */
export type BuildTarget = Pick<Variant, "name" | "package" | "dependsOn" | "python" | "cuda" | "sm" | "isa" | "system" | "torchVersion" | "cudaCapabilitiesForPackageSet" | "nixpkgsKey"> &
  Partial<Pick<Variant, "nixpkgs" | "requiredSystemFeatures" | "extras" | "cudaCapabilities">> & {
    /** Absolute path of the variant's `.nix` file. */
    file: string;
    /** A check of a variant (built by default; `--no-verify` skips them), not a variant: built with nix-build whatever the backend. */
    check?: { of: string; kind: "static" | "gpuCheck" };
  };

/**
 * The requiredSystemFeatures of a check derivation, as pkgs/checks.nix writes them: the variant's `gccarch-…`
 * features (pkgs/isa-features.nix), and for the GPU check `cuda` before them. Not the variant's `big-parallel`.
 */
export function checkFeatures(v: Pick<BuildTarget, "requiredSystemFeatures">, kind: "static" | "gpuCheck"): string[] {
  const isa = (v.requiredSystemFeatures ?? []).filter((f) => f.startsWith("gccarch-"));
  return kind === "gpuCheck" ? [GPU_CHECK_FEATURE, ...isa] : isa;
}

export { GPU_CHECK_FEATURE };

/**
 * The check targets of a build (by default; `--no-verify` adds none): for each variant, a node `check-static-NAME`
 * (and with `gpu`, `check-gpu-NAME` for CUDA variants) that depends on it and builds `(import FILE { }).tests.static`
 * (or `.gpuCheck`) of the variant's own file (called when it is a function, as nix-build does), through a .nix file
 * written to `dir`; each with the system
 * features its derivation requires (`checkFeatures`), so builders are chosen and refused as Nix would. A variant's
 * static check also waits for the static checks of the variants it is built on that are in `variants` (an
 * environment's proof lists its members' proofs: pkgs/checks.nix members.json), as plan.ts staticCheckDeps says.
 * @returns the check targets and the files to write (path → contents); nothing is written here.
 */
export function checkTargets(variants: readonly BuildTarget[], dir: string, gpu: boolean): { targets: BuildTarget[]; files: Map<string, string> } {
  const targets: BuildTarget[] = [];
  const files = new Map<string, string>();
  const names = new Set(variants.filter((v) => !v.check).map((v) => v.name));
  for (const v of variants) {
    if (v.check) continue;
    const kinds: ("static" | "gpuCheck")[] = gpu && v.cuda !== null ? ["static", "gpuCheck"] : ["static"];
    for (const kind of kinds) {
      const name = kind === "static" ? staticCheckName(v.name) : `check-gpu-${v.name}`;
      const file = join(dir, `${name}.nix`);
      // The variant's file as nix-build takes it: a function (a generated wrapper) is called, an attribute set is used as it is.
      files.set(
        file,
        `# variant-matrix build: the ${kind} check of ${commentText(v.name)} (pkgs/checks.nix)\n` +
          `let f = import ${nixString(v.file)}; in (if builtins.isFunction f then f { } else f).tests.${kind}\n`,
      );
      const dependsOn = kind === "static" ? staticCheckDeps(v, names) : [v.name];
      targets.push({ ...v, name, file, dependsOn, check: { of: v.name, kind }, requiredSystemFeatures: checkFeatures(v, kind) });
    }
  }
  return { targets, files };
}

/** Thrown for a selection that cannot be satisfied (unknown name, bad filter, nothing selected). */
export class SelectionError extends InputError {}

/**
 * Targets from the generator's variant list: each variant as it is, its `file` made absolute.
 * @param variants `Variant[]` (as `loadProject()` returns them); `file` is relative to `root`
 * @param root project root the variants' `file` is relative to
 */
export function targetsFromVariants(variants: readonly Variant[], root: string): (Variant & BuildTarget)[] {
  return variants.map((v) => ({ ...v, file: isAbsolute(v.file) ? v.file : join(root, v.file) }));
}

/** Where the targets' files are: the project's `.flox/pkgs`, or `--pkgs-dir`. */
type TargetSource = "project" | "pkgs-dir";

/**
 * Load the targets for a run: `variants` when given (tests, a caller that expanded the matrix), else the variants
 * of `matrixFile` (default: the root's matrix.ts); files under `root` (`v.file`) or `pkgsDir/NAME.nix`.
 * @returns the targets, where their files are, and the project they were expanded from (when `variants` was not
 *   given): what generated-state.ts assertGeneratedCurrent compares the generated files with
 * @throws SelectionError when a variant's file is missing (run `generate` first)
 * @throws MatrixError (from loadProject) for a bad matrix
 */
export async function loadTargets(opts: {
  root: string;
  pkgsDir?: string;
  variants?: readonly Variant[];
  matrixFile?: string;
}): Promise<{ targets: BuildTarget[]; source: TargetSource; project?: Project; caches: TeamCache[] }> {
  const project = opts.variants ? undefined : await loadProject({ root: opts.root, matrixFile: opts.matrixFile });
  const variants = opts.variants ?? project!.variants;
  let targets = targetsFromVariants(variants, opts.root);
  // --pkgs-dir: the variants of the matrix that have a file there (the directory restricts the list; it is never
  // a second source of names or systems).
  if (opts.pkgsDir !== undefined) {
    const dir = resolve(opts.root, opts.pkgsDir);
    if (!existsSync(dir)) throw new SelectionError(`--pkgs-dir ${dir} does not exist`);
    targets = targets.map((t) => ({ ...t, file: join(dir, `${t.name}.nix`) })).filter((t) => existsSync(t.file));
    return { targets, source: "pkgs-dir", caches: project?.matrix.caches ?? [] };
  }
  const missing = targets.filter((t) => !existsSync(t.file));
  if (missing.length > 0)
    throw new SelectionError(
      `${missing.length} variant file(s) are missing (run \`variant-matrix generate\` first): ` +
        missing
          .slice(0, 5)
          .map((t) => relative(opts.root, t.file))
          .join(", ") +
        (missing.length > 5 ? ", …" : ""),
    );
  return { targets, source: "project", project, caches: project?.matrix.caches ?? [] };
}

/** @throws SelectionError naming the selected targets whose file does not exist. */
export function checkFiles(targets: readonly BuildTarget[]): void {
  const missing = targets.filter((t) => !existsSync(t.file));
  if (missing.length) throw new SelectionError(`no file for ${missing.map((t) => `${t.name} (${t.file})`).join(", ")}`);
}

/** What the user asked for. */
interface Selection {
  /** Variant names given on the command line (empty: all, subject to filters). */
  names?: readonly string[];
  /** `KEY=VALUE` filters as typed (`--filter`), parsed with `parseFilters`. */
  filters?: readonly string[];
  /** Only this package (`--package`); dependencies are still pulled in. */
  package?: PackageName;
}

/** What selection reads of a build target or a variant. */
type Selectable = NearestCandidate & Filterable & { dependsOn: readonly string[]; package: PackageName };

/** Result of `selectTargets`: the closed selection in input order, and why each target is in it. */
interface SelectedTargets<T extends Selectable = BuildTarget> {
  targets: T[];
  /** name → "requested" (named or matched the filters) or "dependency" (pulled in by a dependent). */
  why: Map<string, "requested" | "dependency">;
}

/**
 * The one selection of the CLI (build, eval, ci github): select targets (or variants) by names, filters and
 * package, then close the selection over `dependsOn`.
 * Names and filters combine as: a named target is selected when it also passes the filters.
 * @throws SelectionError for an unknown name (with close names), a malformed filter, a dependency that is not
 *   a known target, or an empty selection (named: build and publish then do nothing and exit 2)
 */
export function selectTargets<T extends Selectable>(all: readonly T[], sel: Selection): SelectedTargets<T> {
  const byName = new Map(all.map((t) => [t.name, t]));
  let filters;
  try {
    filters = parseFilters(sel.filters);
    checkFilterValues(filters, all);
  } catch (e) {
    throw new SelectionError((e as Error).message);
  }
  const names = sel.names ?? [];
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    const all_ = [...byName.values()];
    throw new SelectionError(
      unknown
        .map((n) => {
          const close = nearestNames(n, all_, 5).map((x) => x.name);
          return `unknown variant ${shown(n)}` + (close.length ? `; close names: ${close.join(", ")}` : "");
        })
        .join("\n"),
    );
  }
  const pass = (t: T) =>
    matchFilters(t, filters) && (sel.package === undefined || t.package === sel.package);
  const requested = (names.length > 0 ? names.map((n) => byName.get(n)!) : all).filter(pass);
  // Every value occurs alone (checkFilterValues), but not together: nothing is built or published (exit 2), and
  // the message names the selection so the user sees which parts exclude each other.
  if (requested.length === 0) {
    const parts = [
      ...names.map((n) => n),
      ...(sel.filters ?? []).map((f) => `--filter ${f}`),
      ...(sel.package !== undefined ? [`--package ${sel.package}`] : []),
    ];
    throw new SelectionError(
      `the selection is empty: no variant matches ${parts.join(" ") || "(nothing selected)"} together ` +
        `(filters on different keys must all hold); nothing was built or published. \`variant-matrix list\` with the same --filter options shows what each selects`,
    );
  }
  const why = new Map<string, "requested" | "dependency">();
  const stack: T[] = [];
  for (const t of requested) {
    why.set(t.name, "requested");
    stack.push(t);
  }
  while (stack.length > 0) {
    const t = stack.pop()!;
    for (const d of t.dependsOn) {
      const dep = byName.get(d);
      if (!dep) throw new SelectionError(`${t.name} depends on ${d}, which is not a known variant`);
      if (!why.has(d)) {
        why.set(d, "dependency");
        stack.push(dep);
      }
    }
  }
  return { targets: all.filter((t) => why.has(t.name)), why };
}
