/**
 * The no-op fast path of `generate` (like make's timestamps, but by content of the inputs): after a generate, a
 * stamp records a hash of the inputs and the size and modification time of every generated file. The next
 * generate with the same inputs whose files all still have that size and time has nothing to write, and says so
 * without loading the catalog, validating or rendering. `generate --check` never uses the stamp (it compares
 * contents, for CI).
 *
 * Inputs: the matrix file's path and text, the local catalog beside it (local-catalog.json), and the size and time of every file of the running generator (its
 * code, catalog and templates), so a changed catalog or template is never hidden. A matrix that imports other
 * local files is not stamped (their changes would be invisible).
 * The stamp also records the listing of the managed directories (write.ts managedListing), so a stray file there
 * (one an interrupted run or a hand left behind) is never hidden behind "up to date"; and a writing generate removes
 * the stamp before its first write (`clearStamp`), so a run killed halfway never leaves a stamp that vouches for a
 * half-written tree.
 * Stamps live in the cache directory (paths.ts cacheDir, "stamps"), one per output directory.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { replaceFileSync } from "../output-file.ts";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheDir, TEMPLATES_DIR } from "../paths.ts";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import { managedListing } from "./write.ts";

interface Stamp {
  inputs: string;
  /** rel path → [size, mtimeMs] */
  files: Record<string, [number, number]>;
  /** write.ts managedListing after the generate: every name in the managed directories. */
  listing: string[];
}

function stampFile(outRoot: string): string {
  return join(cacheDir("stamps"), `${createHash("sha256").update(outRoot).digest("hex").slice(0, 24)}.json`);
}

/** Every file below `dir` (sorted), for the inputs hash. */
function walk(dir: string, out: string[] = []): string[] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** Hash of what a generate's output depends on (see the module comment). */
function inputsHash(matrixFile: string): string {
  const h = createHash("sha256").update(matrixFile).update("\0").update(readFileSync(matrixFile));
  // The local catalog beside the matrix (pin add) is an input too.
  const local = join(dirname(matrixFile), LOCAL_CATALOG_FILE);
  if (existsSync(local)) h.update("\0local\0").update(readFileSync(local));
  const codeDir = dirname(fileURLToPath(import.meta.url)); // generator/ or dist/generator/
  for (const f of [...walk(codeDir), ...walk(TEMPLATES_DIR)]) {
    const s = statSync(f);
    h.update(`\0${f}\0${s.size}\0${s.mtimeMs}`);
  }
  return h.digest("hex");
}

/** True when the stamp of `outRoot` matches `matrixFile` and every generated file is as it was left. */
export function upToDate(outRoot: string, matrixFile: string): { upToDate: boolean; files: number } {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile(outRoot), "utf8")) as Stamp;
  } catch {
    return { upToDate: false, files: 0 };
  }
  try {
    if (stamp.inputs !== inputsHash(matrixFile)) return { upToDate: false, files: 0 };
    if (!Array.isArray(stamp.listing) || stamp.listing.join("\0") !== managedListing(outRoot).join("\0")) return { upToDate: false, files: 0 };
    for (const [rel, [size, mtime]] of Object.entries(stamp.files)) {
      const s = statSync(join(outRoot, rel));
      if (s.size !== size || s.mtimeMs !== mtime) return { upToDate: false, files: 0 };
    }
  } catch {
    return { upToDate: false, files: 0 };
  }
  return { upToDate: true, files: Object.keys(stamp.files).length };
}

/** Record the stamp after a successful generate (best effort: a cache that cannot be written is skipped). */
export function writeStamp(outRoot: string, matrixFile: string, rels: Iterable<string>, singleFileMatrix: boolean): void {
  const file = stampFile(outRoot);
  try {
    if (!singleFileMatrix) return;
    const files: Stamp["files"] = {};
    for (const rel of rels) {
      const s = statSync(join(outRoot, rel));
      files[rel] = [s.size, s.mtimeMs];
    }
    replaceFileSync(file, JSON.stringify({ inputs: inputsHash(matrixFile), files, listing: managedListing(outRoot) } satisfies Stamp));
  } catch {
    /* no cache: the next generate takes the full path */
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
