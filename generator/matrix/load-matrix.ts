/**
 * Load a user's `matrix.ts` without compiling TypeScript on every run: the file is bundled once with esbuild into
 * JavaScript, cached by the hash of its source, and imported from the cache on later runs (no esbuild then).
 *
 * - `import { defineMatrix } from "…/generator/matrix/schema.ts"` (what matrix.ts files write) is served by a one-line
 *   stub (`defineMatrix` is the identity), so loading a matrix never loads zod or the catalog. The path of earlier
 *   releases, `…/generator/schema.ts`, is served by the same stub, so a matrix file written before the move loads.
 * - npm packages stay external (resolved from the project's node_modules, where the cache lives).
 * - A matrix that imports other local files is bundled afresh on every run (its cache key could not see their
 *   changes); the usual single-file matrix is cached.
 * Cache: ROOT/node_modules/.cache/variant-matrix/matrix-HASH.mjs, else the per-user cache directory (paths.ts cacheDir).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { replaceFileSync } from "../output-file.ts";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cacheDir, cacheWarning } from "../paths.ts";

/** Bumped when the bundling below changes, so old cache entries are not reused. */
const CACHE_VERSION = "1";

/** The hash of the matrix at `file` with its current text (its cache file's name: matrix-HASH.mjs). */
function matrixHash(file: string, source: string): string {
  return createHash("sha256").update(CACHE_VERSION).update("\0").update(file).update("\0").update(source).digest("hex").slice(0, 24);
}

/**
 * The hash of the matrix at `file` with its current text, and its cache file (it exists once imported).
 * @throws Error when no cache directory is usable (paths.ts cacheDir)
 */
export function cachedModule(file: string): { hash: string; path: string } {
  const hash = matrixHash(file, readFileSync(file, "utf8"));
  return { hash, path: join(cacheDir(), `matrix-${hash}.mjs`) };
}

/**
 * True when the matrix at `file` was imported as a single file (no other local imports): only such matrices are
 * cached, so the cache file of its current text exists. The generate stamp is written only for these.
 */
export function isSingleFileMatrix(file: string): boolean {
  try {
    return existsSync(cachedModule(file).path);
  } catch {
    return false;
  }
}

/**
 * Import the matrix module at `file` (absolute path) and return its namespace.
 * @throws Error (esbuild's message) when the file does not compile
 */
export async function importMatrixModule(file: string): Promise<Record<string, unknown>> {
  const hash = matrixHash(file, readFileSync(file, "utf8"));
  let dir: string | null = null;
  try {
    dir = cacheDir();
  } catch (e) {
    cacheWarning(`${(e as Error).message.replace(/^variant-matrix: /, "")}: matrix.ts compiled in memory`);
  }
  const cached = dir === null ? null : join(dir, `matrix-${hash}.mjs`);
  if (cached !== null && existsSync(cached)) return (await import(pathToFileURL(cached).href)) as Record<string, unknown>;
  const { code, localInputs } = await compileMatrix(file);
  // A matrix that imports other local files is compiled on every run (their changes are not in the key), to a file of
  // this run's own, removed once imported: the module is in memory then, and runs never pile files up.
  if (localInputs > 1) return importCompiled(code, dir === null ? null : join(dir, `matrix-${hash}-${process.pid}-${Date.now()}.mjs`), true);
  return importCompiled(code, cached, false);
}

/** matrix.ts bundled by esbuild (see the file header): its code, and how many local files went into it. */
async function compileMatrix(file: string): Promise<{ code: string; localInputs: number }> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    packages: "external",
    metafile: true,
    logLevel: "silent",
    plugins: [
      {
        name: "define-matrix-stub",
        setup(b) {
          b.onResolve({ filter: /(^|[\\/])generator[\\/](matrix[\\/])?schema(\.ts|\.js)?$/ }, () => ({ path: "define-matrix", namespace: "variant-matrix" }));
          b.onLoad({ filter: /.*/, namespace: "variant-matrix" }, () => ({
            contents: "export function defineMatrix(m) { return m; }\n",
            loader: "js",
          }));
        },
      },
    ],
  });
  const localInputs = Object.keys(result.metafile!.inputs).filter((i) => !i.startsWith("variant-matrix:")).length;
  return { code: result.outputFiles[0]!.text, localInputs };
}

/**
 * Import compiled matrix code: written to `path` and imported from there (removed afterwards when `once`); when it
 * cannot be written (a full disk, no usable cache directory: `path` null), imported from memory instead, with a
 * warning (paths.ts cacheWarning): a cache that cannot be written never stops a command, nor is it a matrix error.
 */
async function importCompiled(code: string, path: string | null, once: boolean): Promise<Record<string, unknown>> {
  if (path !== null) {
    let written = false;
    try {
      replaceFileSync(path, code);
      written = true;
    } catch (e) {
      cacheWarning(`cannot write the compiled matrix.ts to ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): compiled in memory, and again next run`);
    }
    if (written) {
      try {
        return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
      } finally {
        if (once) rmSync(path, { force: true });
      }
    }
  }
  return (await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`)) as Record<string, unknown>;
}
