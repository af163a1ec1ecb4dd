/**
 * The record a generate leaves of what it wrote, keyed by content (never by sizes or modification times): the hashes
 * of its inputs and the SHA-256 of every file it wrote. freshness.ts reads it two ways:
 * - as a pure cache in front of the one comparison: when the inputs hash as recorded, the recorded hashes are what a
 *   render would give now, so the files on disk are compared with them without loading the catalog or rendering;
 * - as the memory of the last generate, to say why a file differs: the file is not what that generate wrote (edited
 *   by hand), or it is and an input changed since (which one: the matrix, the local catalog, the generator).
 *
 * Inputs: the matrix file's path and text, the local catalog beside it (local-catalog.json), and the generator's code
 * with its catalog and templates: the hash bin/build-dist.mjs names the bundle by (a SHA-256 of every file under
 * generator/), read off the bundle's directory when it runs compiled, else computed the same way. A matrix that imports
 * other local files is recorded but not `cacheable` (their changes would be invisible to the inputs' hash).
 * A writing generate removes the stamp before its first write (`clearStamp`), so a run killed halfway never leaves a
 * stamp that vouches for a half-written tree. Stamps live in the cache directory (paths.ts cacheDir, "stamps"), one
 * per output directory.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { replaceFileSync } from "../output-file.ts";
import { dirname, join, relative } from "node:path";
import { cacheDir, REPO_ROOT } from "../paths.ts";
import { bundleIdentity, sourcesHash } from "../sources-hash.mjs";
import { LOCAL_CATALOG_FILE } from "../constants.ts";

/** The content keys of a generate's inputs (SHA-256 hex, or the bundle's name for the generator). */
export interface InputKeys {
  /** The matrix file's path and text. */
  matrix: string;
  /** local-catalog.json beside the matrix; null when there is none. */
  local: string | null;
  /** The generator's code, catalog and templates. */
  generator: string;
}

/** The names of the inputs, as a reason names them. */
export type InputName = keyof InputKeys;

/** What a generate recorded (the stamp file's JSON). */
export interface Stamp {
  /** The format: a stamp of another format is not read. */
  version: 2;
  inputs: InputKeys;
  /** Repo-relative path → SHA-256 hex of the content the generate wrote: every file of the render. */
  files: Record<string, string>;
  /** False for a matrix that imports other local files: the record explains, but never stands in for a render. */
  cacheable: boolean;
}

/** SHA-256 hex of `content`. */
export function sha256(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

function stampFile(outRoot: string): string {
  return join(cacheDir("stamps"), `${sha256(outRoot).slice(0, 24)}.json`);
}

let generatorKeyMemo: string | undefined;

/**
 * The generator's key, the same whether it runs compiled or through tsx: the name of the bundle it runs from (this
 * module inside dist/<16 hex digits>/, sources-hash.mjs bundleIdentity), else that name computed by the same function (sources-hash.mjs sourcesHash: the first
 * 16 hex digits of a SHA-256 over the repo-relative path and content of every file under generator/, then
 * package-lock.json and bin/build-dist.mjs). Computed once per process.
 */
function generatorKey(): string {
  if (generatorKeyMemo !== undefined) return generatorKeyMemo;
  return (generatorKeyMemo = bundleIdentity() ?? sourcesHash(REPO_ROOT));
}

/** The content keys of what a generate of `matrixFile` reads now (see the module comment); an unreadable matrix has a key no stamp holds. */
export function inputKeys(matrixFile: string): InputKeys {
  const local = join(dirname(matrixFile), LOCAL_CATALOG_FILE);
  let text: Buffer | string;
  try {
    text = readFileSync(matrixFile);
  } catch (e) {
    text = `(unreadable: ${(e as NodeJS.ErrnoException).code})`;
  }
  return {
    matrix: createHash("sha256").update(matrixFile).update("\0").update(text).digest("hex"),
    local: existsSync(local) ? sha256(readFileSync(local)) : null,
    generator: generatorKey(),
  };
}

/** The inputs whose keys differ between `a` and `b`, in the order matrix, local, generator. */
export function changedInputs(a: InputKeys, b: InputKeys): InputName[] {
  return (["matrix", "local", "generator"] as const).filter((k) => a[k] !== b[k]);
}

/** The stamp of `outRoot`, or null when there is none (or it cannot be read, or is of another format). */
export function readStamp(outRoot: string): Stamp | null {
  try {
    const s = JSON.parse(readFileSync(stampFile(outRoot), "utf8")) as Stamp;
    return s.version === 2 && s.inputs && s.files ? s : null;
  } catch {
    return null;
  }
}

/**
 * Record the stamp after a generate wrote (or a full comparison found) every file of the render (best effort: a cache
 * that cannot be written is skipped).
 * @param files repo-relative path → content hash (freshness.ts hashesOf) of every file of the render
 */
export function writeStamp(outRoot: string, inputs: InputKeys, files: ReadonlyMap<string, string>, cacheable: boolean): void {
  try {
    replaceFileSync(stampFile(outRoot), JSON.stringify({ version: 2, inputs, files: Object.fromEntries(files), cacheable } satisfies Stamp));
  } catch {
    /* no cache: the next comparison renders */
  }
}

/** Remove the stamp of `outRoot` (before a generate writes: a run that dies halfway leaves no stamp). Best effort. */
export function clearStamp(outRoot: string): void {
  try {
    rmSync(stampFile(outRoot), { force: true });
  } catch {
    /* no cache directory: nothing to clear */
  }
}
