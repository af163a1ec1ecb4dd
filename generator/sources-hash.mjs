// What a build of the CLI is made from, and its hash: every file under generator/, package-lock.json (the bundled
// dependencies' versions) and bin/build-dist.mjs (the build options). One module for both readers: the launcher's
// bin/build-dist.mjs names each bundle dist/<hash>/ by it, and generator/generate/stamp.ts keys its stamp by the same
// hash when the generator runs from source (through tsx), so the two can never compute it differently.
//
// Plain JavaScript, not TypeScript: the launcher runs it before anything is compiled. Only node: built-ins, so the
// generator's bundle can carry it.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Every file below `dir`, sorted by name at each level, as absolute paths; a directory that cannot be read adds none.
 * @param {string} dir
 * @param {string[]} [out] where to append (default: a new array)
 * @returns {string[]}
 */
function walk(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * The files a bundle is built from, below the repository root `root`: every file under generator/, then
 * package-lock.json and bin/build-dist.mjs (absolute paths, in hashing order).
 * @param {string} root the repository root
 * @returns {string[]}
 */
export function sourceFiles(root) {
  return [...walk(join(root, "generator")), join(root, "package-lock.json"), join(root, "bin", "build-dist.mjs")];
}

/**
 * The hash of `files`: the first 16 hex digits of a SHA-256 over each file's path relative to `root` and its content
 * (a file that cannot be read counts as "(missing)"), each followed by a NUL byte. Reads them all (about 1.4 MB).
 * @param {string} root the repository root
 * @param {string[]} [files] default: sourceFiles(root)
 * @returns {string} e.g. "3f2a9c0d1b4e5f60"
 */
export function sourcesHash(root, files = sourceFiles(root)) {
  const h = createHash("sha256");
  for (const f of files) {
    h.update(relative(root, f)).update("\0");
    try {
      h.update(readFileSync(f));
    } catch {
      h.update("(missing)");
    }
    h.update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

/**
 * The build identity of the code running: the <hash> of the bundle dist/<hash>/ that `moduleUrl` (default: this
 * module's own URL, which in the bundle is a file of dist/<hash>/) lies in, the sourcesHash its sources had; or null
 * when it is not such a bundle (the sources under tsx, a bundle written elsewhere). The one reading of a bundle's
 * name: generate/stamp.ts keys its stamp by it, matrix/project-cache.ts its entries.
 * @param {string} [moduleUrl]
 * @returns {string | null} e.g. "3f2a9c0d1b4e5f60"
 */
export function bundleIdentity(moduleUrl = import.meta.url) {
  if (!moduleUrl.startsWith("file:")) return null;
  const dir = dirname(fileURLToPath(moduleUrl));
  return /^[0-9a-f]{16}$/.test(basename(dir)) && basename(dirname(dir)) === "dist" ? basename(dir) : null;
}
