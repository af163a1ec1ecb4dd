/**
 * Build targets: what the driver can build, and the selection a user asks for.
 *
 * Two sources of targets:
 * - the generator's variant list (`loadProject()` of `generator/project.ts`), used for the project's own
 *   `.flox/pkgs` when `--pkgs-dir` is not given;
 * - a scan of a package directory (`DIR/*.nix`, names parsed with `parseName`), used for `--pkgs-dir DIR`
 *   (tests, foreign directories) and as the fallback when the project module is not available.
 *
 * Selection (`selectTargets`) is pure: names, `--filter KEY=VALUE` (the `list` filters) and `--package`, closed
 * over `dependsOn` (selecting torchaudio-X pulls in pytorch-X). Unknown names throw `SelectionError` listing
 * close names (Levenshtein distance).
 */
import { existsSync, readdirSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { closest, distance } from "fastest-levenshtein";
import { parseName, torchSiblingName } from "../naming.ts";
import { checkFilterValues, matchFilters, parseFilters, type Filterable } from "../filters.ts";
import type { PackageName, Variant } from "../schema.ts";

/** One package variant the driver can build. */
export interface BuildTarget {
  /** Variant name, e.g. "torchaudio-python313-cuda12_8-sm121-armv9". */
  name: string;
  package: PackageName;
  /** Names of variants this one is built against (must be built first). */
  dependsOn: string[];
  /** Absolute path of the variant's `.nix` file. */
  file: string;
  /** "3.13" */
  python: string;
  /** "12.8", or null for CPU-only. */
  cuda: string | null;
  /** "121", or null for CPU-only. */
  sm: string | null;
  /** ISA key, "armv9". */
  isa: string;
  /** Nix system the variant is for ("aarch64-linux"), or "unknown" when the ISA is unknown. */
  system: string;
}

/** Thrown for a selection that cannot be satisfied (unknown name, bad filter, nothing selected). */
export class SelectionError extends Error {}

/**
 * ISA key → Nix system, from the catalog (`generator/catalog/index.ts`, `catalog.isas`) when it loads; otherwise
 * null, and callers fall back to `guessSystem`.
 */
export async function loadIsaSystems(): Promise<Map<string, string> | null> {
  try {
    const mod = (await import(pathToFileURL(resolve(import.meta.dirname, "../catalog/index.ts")).href)) as {
      catalog?: { isas?: { key: string; system: string }[] };
    };
    const isas = mod.catalog?.isas;
    if (!Array.isArray(isas)) return null;
    return new Map(isas.map((i) => [i.key, i.system]));
  } catch {
    return null;
  }
}

/**
 * Fallback ISA → system for a foreign directory when the catalog does not know the key:
 * `avx*` → x86_64-linux, `armv*` → aarch64-linux, anything else "unknown".
 */
export function guessSystem(isa: string): string {
  if (isa.startsWith("avx") || isa.startsWith("x86")) return "x86_64-linux";
  if (isa.startsWith("armv") || isa.startsWith("neoverse")) return "aarch64-linux";
  return "unknown";
}

/**
 * Discover targets by scanning `dir/*.nix`. Files whose base name is not a variant name are ignored (returned
 * in `ignored`). A torchaudio variant depends on its pytorch sibling when that file exists in `dir`.
 * @param dir package directory (absolute or relative to the current directory)
 * @param isaSystems ISA key → system (from `loadIsaSystems`); unknown keys use `guessSystem`
 * @throws SelectionError when `dir` does not exist
 */
export function scanPkgsDir(
  dir: string,
  isaSystems: Map<string, string> | null = null,
): { targets: BuildTarget[]; ignored: string[] } {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new SelectionError(`package directory ${abs} does not exist`);
  const files = readdirSync(abs)
    .filter((f) => f.endsWith(".nix"))
    .sort();
  const names = new Set(files.map((f) => basename(f, ".nix")));
  const targets: BuildTarget[] = [];
  const ignored: string[] = [];
  for (const f of files) {
    const name = basename(f, ".nix");
    const parts = parseName(name);
    if (!parts) {
      ignored.push(f);
      continue;
    }
    const dependsOn: string[] = [];
    if (parts.package === "torchaudio") {
      const sib = torchSiblingName(parts);
      if (names.has(sib)) dependsOn.push(sib);
    }
    targets.push({
      name,
      package: parts.package,
      dependsOn,
      file: join(abs, f),
      python: parts.python,
      cuda: parts.cuda,
      sm: parts.sm,
      isa: parts.isa,
      system: isaSystems?.get(parts.isa) ?? guessSystem(parts.isa),
    });
  }
  return { targets, ignored };
}

/**
 * Targets from the generator's variant list.
 * @param variants `Variant[]` (as `loadProject()` returns them); `file` is relative to `root`
 * @param root project root the variants' `file` is relative to
 */
export function targetsFromVariants(variants: readonly Variant[], root: string): BuildTarget[] {
  return variants.map((v) => ({
    name: v.name,
    package: v.package,
    dependsOn: [...v.dependsOn],
    file: isAbsolute(v.file) ? v.file : join(root, v.file),
    python: v.python,
    cuda: v.cuda,
    sm: v.sm,
    isa: v.isa,
    system: v.system,
  }));
}

/** Where the targets came from, for messages and the dry-run plan. */
export type TargetSource = "project" | "scan";

/**
 * Load the targets for a run.
 * - `pkgsDir` given: scan it.
 * - otherwise `variants` given (injected, e.g. by tests or the lead's CLI): use them.
 * - otherwise try `loadProject()` from `generator/project.ts`; when that module does not exist yet, scan
 *   `root/.flox/pkgs`. An error thrown by `loadProject()` itself propagates (a broken matrix is not hidden).
 * @throws SelectionError when a variant's file is missing (run `generate` first) or the directory is missing
 */
export async function loadTargets(opts: {
  root: string;
  pkgsDir?: string;
  variants?: readonly Variant[];
}): Promise<{ targets: BuildTarget[]; source: TargetSource; ignored: string[] }> {
  const isaSystems = await loadIsaSystems();
  if (opts.pkgsDir !== undefined) {
    const { targets, ignored } = scanPkgsDir(resolve(opts.root, opts.pkgsDir), isaSystems);
    return { targets, source: "scan", ignored };
  }
  let variants = opts.variants;
  if (!variants) {
    const projectFile = resolve(import.meta.dirname, "../project.ts");
    // Only the project's own root uses its variant list; another root is scanned.
    if (existsSync(projectFile) && resolve(opts.root) === resolve(import.meta.dirname, "../..")) {
      const mod = (await import(pathToFileURL(projectFile).href)) as {
        loadProject?: () => Promise<{ variants: Variant[] }>;
      };
      if (typeof mod.loadProject === "function") variants = (await mod.loadProject()).variants;
    }
  }
  if (!variants) {
    const { targets, ignored } = scanPkgsDir(join(opts.root, ".flox", "pkgs"), isaSystems);
    return { targets, source: "scan", ignored };
  }
  const targets = targetsFromVariants(variants, opts.root);
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
  return { targets, source: "project", ignored: [] };
}

/** What the user asked for. */
export interface Selection {
  /** Variant names given on the command line (empty: all, subject to filters). */
  names?: readonly string[];
  /** `KEY=VALUE` filters as typed (`--filter`), parsed with `parseFilters`. */
  filters?: readonly string[];
  /** Only this package (`--package`); dependencies are still pulled in. */
  package?: PackageName;
}

/** Result of `selectTargets`: the closed selection in input order, and why each target is in it. */
export interface SelectedTargets {
  targets: BuildTarget[];
  /** name → "requested" (named or matched the filters) or "dependency" (pulled in by a dependent). */
  why: Map<string, "requested" | "dependency">;
}

/**
 * Up to `n` names close to `name`: edit distance ≤ max(3, a third of its length), nearest first, plus names
 * that contain it; always at least the single closest name.
 */
export function closeNames(name: string, candidates: readonly string[], n = 5): string[] {
  if (candidates.length === 0) return [];
  const limit = Math.max(3, Math.floor(name.length / 3));
  const scored = candidates
    .map((c) => ({ c, d: c.includes(name) ? 0 : distance(name, c) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .map((x) => x.c);
  if (scored.length === 0) return [closest(name, candidates as string[])];
  return scored.slice(0, n);
}

/**
 * Select targets by names, filters and package, then close the selection over `dependsOn`.
 * Names and filters combine as: a named target is selected when it also passes the filters.
 * @throws SelectionError for an unknown name (with close names), a malformed filter, a dependency that is not
 *   a known target, or an empty selection
 */
export function selectTargets(all: readonly BuildTarget[], sel: Selection): SelectedTargets {
  const byName = new Map(all.map((t) => [t.name, t]));
  let filters;
  try {
    filters = parseFilters(sel.filters);
    checkFilterValues(filters, all as unknown as Filterable[]);
  } catch (e) {
    throw new SelectionError((e as Error).message);
  }
  const names = sel.names ?? [];
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    const all_ = [...byName.keys()];
    throw new SelectionError(
      unknown
        .map((n) => {
          const close = closeNames(n, all_);
          return `unknown variant "${n}"` + (close.length ? `; close names: ${close.join(", ")}` : "");
        })
        .join("\n"),
    );
  }
  const pass = (t: BuildTarget) =>
    matchFilters(t as unknown as Filterable, filters) && (sel.package === undefined || t.package === sel.package);
  const requested = (names.length > 0 ? names.map((n) => byName.get(n)!) : all).filter(pass);
  if (requested.length === 0) throw new SelectionError("the selection is empty: no variant matches");
  const why = new Map<string, "requested" | "dependency">();
  const stack: BuildTarget[] = [];
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
