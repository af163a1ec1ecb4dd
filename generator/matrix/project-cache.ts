/**
 * A cache in front of loadProject (project.ts), keyed by content, so that `list`, `explain`, `fleet` and `ci` start
 * without loading zod, the catalog's tables or expand (about half of their start-up): what they get is the Project
 * the full path computes, read back with `v8.deserialize`.
 *
 * The key is a SHA-256 of everything the Project's data is a function of:
 * - the matrix file's path (not an input of the data: it keeps one file's entries apart from another's);
 * - the value matrix.ts exports (not its text: a matrix may import other files or read the environment), run as
 *   every command runs it (load-matrix.ts: its compiled module, cached by the text's hash) and written with
 *   `v8.serialize` (which tells apart what JSON does not: undefined, -0, key order, holes). Only plain data is keyed:
 *   objects and arrays of the realm's own prototypes, with data properties only (no getter, Proxy, class instance,
 *   symbol key or function, any of which could answer differently when read again); anything else is never cached;
 * - the bytes of local-catalog.json beside the matrix (or its absence), read again after the Project is computed,
 *   and nothing is stored when they changed meanwhile;
 * - the code that computes the Project: the bundle's build identity (dist/<hash>/, bin/build-dist.mjs names it by a
 *   hash of every file under generator/ and package-lock.json; sources-hash.mjs bundleIdentity) and Node's version (v8's serialization format).
 *   Running from the TypeScript sources (tsx, the tests' in-process `main`) has no build identity: no cache.
 * So an entry can never disagree with what the full path would compute now; one whose key differs is never read.
 * An entry read back is checked field by field (entryProblem, without zod: a hit loads none) and one of the wrong
 * shape is discarded and computed again; the cache directory is the user's own and private (paths.ts cacheDir).
 * Errors are never cached: an invalid matrix or local catalog goes the full path and throws there.
 *
 * Entries: cacheDir("projects")/KEY.v8 (paths.ts: node_modules/.cache/variant-matrix, else the per-user cache
 * directory for a read-only checkout), written atomically; the newest MAX_ENTRIES are kept.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { types } from "node:util";
import { deserialize, serialize } from "node:v8";
import { cacheDir, REPO_ROOT } from "../paths.ts";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import { replaceFileSync } from "../output-file.ts";
import { importMatrixModule } from "./load-matrix.ts";
import { bundleIdentity } from "../sources-hash.mjs";
import type { Project } from "./project.ts";
import type { Excluded, Matrix, Variant } from "./schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import { parseName } from "./naming.ts";
import { isCacheUrl, isPublicKey, type TeamCache } from "./team-cache.ts";

/** Bumped when what an entry holds changes shape. */
const ENTRY_VERSION = "1";
/** How many entries the cache keeps (newest by mtime); each is about 1 MB for the default matrix (632 variants). */
export const MAX_ENTRIES = 32;
/** A Project of more variants than this is not stored (its entry would pass 25 MB; computing it is the cheaper copy). */
export const MAX_VARIANTS = 20_000;

/**
 * The bytes a matrix value is keyed by (`v8.serialize` of it), or null when it is not plain data: only null,
 * undefined, strings, numbers and booleans, in objects whose prototype is Object.prototype or null and dense arrays
 * of Array.prototype, every property an enumerable data property with a string key. Reads no getter and runs no
 * Proxy trap (util.types.isProxy is checked before anything of an object is read). Walks without recursion.
 */
export function plainDataBytes(value: unknown): Buffer | null {
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length) {
    const x = stack.pop();
    if (x === null || x === undefined || typeof x === "string" || typeof x === "number" || typeof x === "boolean") continue;
    if (typeof x !== "object" || types.isProxy(x)) return null;
    if (seen.has(x)) continue;
    seen.add(x);
    const array = Array.isArray(x);
    const proto = Object.getPrototypeOf(x);
    if (array ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) return null;
    if (Object.getOwnPropertySymbols(x).length) return null;
    const props = Object.getOwnPropertyDescriptors(x);
    const keys = Object.keys(props);
    if (array && keys.length !== (x as unknown[]).length + 1) return null; // holes or extra properties
    for (const k of keys) {
      const d = props[k]!;
      if (array && k === "length") continue;
      if (!("value" in d) || !d.enumerable) return null;
      stack.push(d.value);
    }
  }
  return serialize(value);
}

/**
 * The cache key (64 hex digits) of a Project: the build identity, Node's version, the matrix file's path, the matrix
 * value's bytes (plainDataBytes) and local-catalog.json's bytes (null: no such file), each length-prefixed. (The path
 * is not an input of the Project's data; it keeps one file's entries apart from another's with the same value.)
 */
export function projectCacheKey(k: { identity: string; matrixFile: string; matrix: Uint8Array; localCatalog: Uint8Array | null }): string {
  const h = createHash("sha256").update(`variant-matrix project ${ENTRY_VERSION}\0${k.identity}\0${process.version}\0${k.matrixFile}\0`);
  for (const part of [k.matrix, k.localCatalog]) {
    if (part === null) h.update("absent\0");
    else h.update(`${part.length}\0`).update(part);
  }
  return h.digest("hex");
}

/** The bytes of the local catalog file in `dir`; null when there is none; undefined when it cannot be read. */
function localCatalogBytes(dir: string): Buffer | null | undefined {
  const file = join(dir, LOCAL_CATALOG_FILE);
  try {
    return existsSync(file) ? readFileSync(file) : null;
  } catch {
    return undefined;
  }
}

/** Where the entry of `key` lives: cacheDir("projects")/KEY.v8; null when no cache directory is writable. */
export function projectCacheFile(key: string): string | null {
  try {
    return join(cacheDir("projects"), `${key}.v8`);
  } catch {
    return null;
  }
}

/** The data of a Project an entry holds (root and matrixFile are the caller's). */
type Entry = Pick<Project, "matrix" | "catalog" | "variants" | "excluded">;

/** What a member of an entry holds: its JavaScript kind, "?" where null or absent is allowed too. */
type Kind = "string" | "string?" | "strings" | "strings?" | "boolean" | "record" | "object" | "object?" | "array";

// The shape of an entry's parts, field by field (each list typed by its type's keys: a field added
// to Variant, Excluded, Matrix or Catalog and not here fails the typecheck). Checked without zod: a hit loads none.
const VARIANT: Record<keyof Variant, Kind> = {
  name: "string", package: "string", role: "string", extras: "strings", attr: "string?", version: "string", torchVersion: "string",
  onTorchVersions: "record", python: "string", pythonPackageSet: "string", cuda: "string?", cudaPackageSet: "string?", sm: "string?",
  isa: "string", system: "string", cudaCapabilities: "strings", binaryCompat: "boolean", cudaCapabilitiesForPackageSet: "boolean",
  requiredSystemFeatures: "strings", cflags: "strings", nixpkgs: "string", nixpkgsSha256: "string", nixpkgsKey: "string",
  dependsOn: "strings", packageBuild: "object?", file: "string", description: "string", notes: "strings",
};
const EXCLUDED: Record<keyof Excluded, Kind> = {
  name: "string", package: "string", torchVersion: "string", python: "string", cuda: "string?", sm: "string?", isa: "string", reasons: "strings",
};
const MATRIX: Record<keyof Matrix, Kind> = {
  releases: "array", python: "strings", cuda: "strings", gpus: "strings", isas: "strings", cpuOnly: "boolean", packages: "strings",
  environments: "record", only: "strings?", policy: "object", caches: "array",
};
const CATALOG: Record<keyof Catalog, Kind> = {
  gpus: "array", cuda: "array", isas: "array", python: "array", torch: "array", nixpkgs: "array", packagesOnTorch: "array", extras: "array",
  torchArchLists: "array", bundledDeviceCode: "array", cudaCache: "object", deviceCodeBytes: "object", nixpkgsCapabilities: "object",
  glibcCudaHeaders: "object", publicCudaCaches: "array", rebuildSeconds: "object", buildSeconds: "object", extraSass: "object", compilerHelperNames: "object",
  armCores: "object", armHostHints: "object", cudaMajors: "array", knownVulnerable: "array",
};

/** Whether `v` is of `kind`. */
function isKind(v: unknown, kind: Kind): boolean {
  if (kind.endsWith("?") && (v === null || v === undefined)) return true;
  const isObject = typeof v === "object" && v !== null && !Array.isArray(v);
  switch (kind.replace("?", "")) {
    case "string": return typeof v === "string";
    case "strings": return Array.isArray(v) && v.every((x) => typeof x === "string");
    case "boolean": return typeof v === "boolean";
    case "array": return Array.isArray(v);
    case "record": return isObject && Object.values(v as object).every((x) => typeof x === "string" || (Array.isArray(x) && x.every((y) => typeof y === "string")));
    default: return isObject;
  }
}

/** The first member of `v` that is not of its kind in `shape` (or "itself" when `v` is no object); null when none. */
function misfit(v: unknown, shape: Record<string, Kind>): string | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "itself";
  return Object.keys(shape).find((k) => !isKind((v as Record<string, unknown>)[k], shape[k]!)) ?? null;
}

/**
 * Why an entry read back is not one (null when it is): not the four parts, a part whose members are not of their
 * kinds (VARIANT, EXCLUDED, MATRIX, CATALOG), a variant or dropped combination whose name does not follow the naming
 * rule (naming.ts parseName: a planted name would reach `ci github`'s `run:` lines), a dependency that is no variant
 * of the entry, or a team cache that matrix.ts would not take (team-cache.ts). Reads no zod (a hit loads none).
 */
export function entryProblem(e: unknown): string | null {
  if (typeof e !== "object" || e === null) return "not an object";
  const { matrix, catalog, variants, excluded } = e as Record<string, unknown>;
  if (!Array.isArray(variants) || !Array.isArray(excluded)) return "no variants or dropped combinations";
  for (const [what, v, shape] of [["matrix", matrix, MATRIX], ["catalog", catalog, CATALOG]] as const) {
    const bad = misfit(v, shape);
    if (bad) return `${what}: ${bad}`;
  }
  const names = new Set<string>();
  for (const [what, list, shape] of [["variants", variants, VARIANT], ["excluded", excluded, EXCLUDED]] as const)
    for (const [i, v] of list.entries()) {
      const bad = misfit(v, shape);
      if (bad) return `${what}.${i}: ${bad}`;
      const name = (v as { name: string }).name;
      if (parseName(name) === null) return `${what}.${i}.name: ${JSON.stringify(name.slice(0, 80))} is no variant name`;
      if (what === "variants") names.add(name);
    }
  const orphan = (variants as Variant[]).find((v) => v.dependsOn.some((d) => !names.has(d)));
  if (orphan) return `${orphan.name}: depends on a variant the entry lacks`;
  const caches = (matrix as Matrix).caches as unknown[];
  if (!caches.every((c) => typeof c === "object" && c !== null && isCacheUrl((c as TeamCache).url) && isPublicKey((c as TeamCache).publicKey))) return "matrix.caches: not caches matrix.ts takes";
  return null;
}

/** The entry at `file`, or null when there is none or it is not one (entryProblem; never thrown). */
function readEntry(file: string): Entry | null {
  try {
    const e: unknown = deserialize(readFileSync(file));
    return entryProblem(e) === null ? (e as Entry) : null;
  } catch {
    return null;
  }
}

/** Write `p`'s data as the entry `file` (atomic), then keep the newest MAX_ENTRIES. Best effort: a cache. */
function writeEntry(file: string, p: Project): void {
  try {
    replaceFileSync(file, serialize({ matrix: p.matrix, catalog: p.catalog, variants: p.variants, excluded: p.excluded } satisfies Entry));
    const dir = dirname(file);
    const entries = readdirSync(dir).filter((n) => n.endsWith(".v8"));
    if (entries.length <= MAX_ENTRIES) return;
    const byAge = entries.map((n) => ({ path: join(dir, n), mtime: statSync(join(dir, n)).mtimeMs })).sort((a, b) => b.mtime - a.mtime);
    for (const old of byAge.slice(MAX_ENTRIES)) rmSync(old.path, { force: true });
  } catch {
    /* a cache: the next run computes it again */
  }
}

/**
 * loadProject (project.ts) through the cache: the Project of `matrixFile` (default ROOT/matrix.ts, relative to
 * `root`), read from the entry of its key when there is one, else computed by the full path (and stored when the
 * matrix is plain data and no input changed meanwhile). Same result and same errors as loadProject.
 * @throws MatrixError / LocalCatalogError (exit 2) as loadProject does
 */
export async function loadProjectCached(opts: { matrixFile?: string; root?: string } = {}): Promise<Project> {
  const root = opts.root ?? REPO_ROOT;
  const matrixFile = resolve(root, opts.matrixFile ?? "matrix.ts");
  const identity = bundleIdentity();
  const value = identity ? await matrixValue(matrixFile) : null;
  if (!identity || !value) return (await import("./project.ts")).loadProject({ root, matrixFile });
  const dir = dirname(matrixFile);
  const matrix = plainDataBytes(value.matrix);
  const localCatalog = localCatalogBytes(dir);
  const file = matrix && localCatalog !== undefined ? projectCacheFile(projectCacheKey({ identity, matrixFile, matrix, localCatalog })) : null;
  const hit = file ? readEntry(file) : null;
  if (hit) return { root, matrixFile, ...hit };
  const p = await (await import("./project.ts")).projectOf(value.matrix, { root, matrixFile });
  // Stored only when local-catalog.json is still what the key holds (the Project read it again).
  const after = localCatalogBytes(dir);
  const same = after === null || after === undefined ? after === localCatalog : localCatalog instanceof Buffer && after.equals(localCatalog);
  if (file && same && p.variants.length <= MAX_VARIANTS) writeEntry(file, p);
  return p;
}

/**
 * The value matrix.ts exports (default, or `matrix`), boxed as project.ts importMatrix returns it; null when the file
 * is missing, does not load or exports no object (the full path then says why).
 */
async function matrixValue(file: string): Promise<{ matrix: unknown } | null> {
  try {
    if (!existsSync(file)) return null;
    const mod = await importMatrixModule(file);
    const m = mod.default ?? mod.matrix;
    return typeof m === "object" && m !== null ? { matrix: m } : null;
  } catch {
    return null;
  }
}
