// The one writer of dist/: bundles generator/cli.ts with esbuild into dist/<hash>/, where <hash> names the exact
// sources it was built from (every file under generator/, package-lock.json and this file). The launcher
// (bin/variant-matrix.js) and `npm run prepare` both call ensureDist(), so the CLI always runs the code in the tree:
// after an edit or a `git pull` without `npm ci`, the next command rebuilds (about a second) instead of running old code.
//
// Why one directory per hash: a long `build` keeps loading chunks of its own bundle lazily (the commands import
// their modules on demand); replacing dist/ in place under it would break it. A new build is written to a
// temporary directory and renamed into place (atomic), so two commands that start at once never see half a bundle;
// older bundles are pruned, keeping the newest few.
//
// Every start of the launcher asks which bundle is current: currentHash() stats the source files (a few ms) and reads
// and hashes their contents (some 40 ms) only when their metadata, ctime included, is new; the hash it remembers for
// a metadata key (dist/.by-metadata/) is of the contents as they are, so a changed file is always hashed again.
//
// Plain JavaScript, not TypeScript: it runs before anything is compiled.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles as sourceFilesOf, sourcesHash as hashOf } from "../generator/sources-hash.mjs";

/** Absolute path of the repository root (the directory above bin/). */
export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** Where bundles live: DIST_DIR/<hash>/cli.js. */
export const DIST_DIR = join(ROOT, "dist");
/** How many bundles to keep (the current one and the newest others, for commands still running on them). */
const KEEP = 3;

/** The files the bundle is built from (generator/sources-hash.mjs sourceFiles): every file under generator/, package-lock.json and this file. */
function sourceFiles() {
  return sourceFilesOf(ROOT);
}

/**
 * The hash (16 hex digits of a SHA-256) of what the bundle is built from (sources-hash.mjs, which
 * generator/generate/stamp.ts reads too). Reads them all (about 1.4 MB: some 40 ms on a loaded 2-core machine); the
 * launcher asks currentHash(), which reads them only when a file's metadata changed.
 * @param {string[]} [files] the files (default: sourceFiles())
 * @returns the hash, e.g. "3f2a9c0d1b4e5f60"
 */
export function sourcesHash(files = sourceFiles()) {
  return hashOf(ROOT, files);
}

/**
 * A key of the files' metadata: path, inode, size, mtime and ctime (nanoseconds) of each. Any write to a file moves
 * its ctime to the clock's now, and utimes(2) cannot set it back (it sets mtime and atime only), so an edited file does
 * not keep its key, even at the same size with its mtime restored.
 * @param {string[]} files
 * @returns {{ key: string, newestNs: bigint }} 32 hex digits, and the newest ctime or mtime among the files
 */
function metadataKey(files) {
  const h = createHash("sha256");
  let newestNs = 0n;
  for (const f of files) {
    let st = null;
    try {
      st = statSync(f, { bigint: true });
    } catch {
      /* a missing file has a key too */
    }
    if (st) for (const t of [st.mtimeNs, st.ctimeNs]) if (t > newestNs) newestNs = t;
    h.update(`${relative(ROOT, f)}\0${st ? `${st.ino} ${st.size} ${st.mtimeNs} ${st.ctimeNs}` : "(missing)"}\n`);
  }
  return { key: h.digest("hex").slice(0, 32), newestNs };
}

/** Where currentHash() remembers the content hash of a metadata key: DIST_DIR/.by-metadata/<key>, holding the hash. */
const BY_METADATA = join(DIST_DIR, ".by-metadata");
/**
 * A key is remembered only when every file's times are this much older than the record (nanoseconds). File times
 * come from a coarse clock (a kernel tick; whole seconds on some file systems), so a file written in the same tick as
 * an earlier write could keep its times: git's "racily clean" index entries. Two seconds of age rule that out.
 */
const SETTLED_NS = 2_000_000_000n;

/**
 * sourcesHash() of the current sources, cheaply: a walk of generator/ and a stat of each file (a few ms), and the
 * contents read and hashed only when that metadata has not been seen with these exact values before. The answer is
 * remembered only when the metadata was the same before and after the contents were read and every file had settled
 * (SETTLED_NS), so a remembered hash is always that of the files as they are.
 * @returns the hash, e.g. "3f2a9c0d1b4e5f60"
 */
export function currentHash() {
  const files = sourceFiles();
  const { key, newestNs } = metadataKey(files);
  const memo = join(BY_METADATA, key);
  try {
    const known = readFileSync(memo, "utf8");
    if (/^[0-9a-f]{16}$/.test(known)) return known;
  } catch {
    /* not seen yet */
  }
  const hash = sourcesHash(files);
  if (metadataKey(files).key === key) remember(memo, hash, newestNs);
  return hash;
}

/** Record `hash` at `memo` (atomic) when the record's own time is SETTLED_NS past `newestNs`. Best effort. */
function remember(memo, hash, newestNs) {
  const tmp = `${memo}.tmp-${process.pid}`;
  try {
    mkdirSync(BY_METADATA, { recursive: true });
    writeFileSync(tmp, hash);
    if (statSync(tmp, { bigint: true }).mtimeNs - newestNs > SETTLED_NS) renameSync(tmp, memo);
  } catch {
    /* a read-only dist/: hashed again next time */
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The entry of the bundle built from the current sources: DIST_DIR/<currentHash()>/cli.js (it may not exist yet). */
export function compiledEntry() {
  return join(DIST_DIR, currentHash(), "cli.js");
}

/**
 * esbuild plugin: `import … from "wrap-ansi"` in a module of generator/ resolves to generator/lazy-wrap-ansi.ts, which
 * requires the real module (by its file path) on its first call; other importers (yargs' cliui) are left alone.
 */
const lazyWrapAnsi = {
  name: "lazy-wrap-ansi",
  setup(build) {
    const generator = join(ROOT, "generator") + sep;
    build.onResolve({ filter: /^wrap-ansi$/ }, (args) => (args.importer.startsWith(generator) ? { path: join(ROOT, "generator/lazy-wrap-ansi.ts") } : undefined));
  },
};

/**
 * Bundle generator/cli.ts into `outdir` (esbuild: ESM chunks for Node 20, esbuild itself external).
 * @param {string} outdir where cli.js and its chunks go (created)
 * @param {{ lazyStringWidth?: boolean }} [opts] lazyStringWidth (default true): string-width loaded on its first call
 *   (generator/lazy-string-width.ts); false only for bench/caches.ts, which times the bundle without it
 * @returns {Promise<void>}
 * @throws Error when esbuild fails (its messages are in the error)
 */
export async function bundle(outdir, opts = {}) {
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [join(ROOT, "generator/cli.ts")],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir,
    external: ["esbuild", "fsevents", "chokidar"],
    // A lazy string-width: most commands never measure wide text (generator/lazy-string-width.ts).
    alias: opts.lazyStringWidth === false ? {} : { "string-width": join(ROOT, "generator/lazy-string-width.ts") },
    // A lazy wrap-ansi for generator/'s own imports (cliui keeps its copy): most starts wrap no prose (generator/lazy-wrap-ansi.ts).
    plugins: [lazyWrapAnsi],
    banner: { js: "import { createRequire as __vmCreateRequire } from 'node:module'; const require = __vmCreateRequire(import.meta.url);" },
    logLevel: "warning",
  });
}

/** dist/ cannot take a new bundle: not writable (a read-only checkout, another user's), or full. One line says so. */
export class DistNotWritableError extends Error {
  name = "DistNotWritableError";
}

/**
 * mkdir `dir` (its parent exists), or throw DistNotWritableError naming dist/ and why.
 * @param {string} dir
 * @param {(e: NodeJS.ErrnoException) => boolean} [fine] an error that is no failure (dist/ already there)
 */
function makeWritable(dir, fine = () => false) {
  try {
    mkdirSync(dir);
  } catch (e) {
    if (fine(e)) return;
    if (!["EROFS", "EACCES", "EPERM", "ENOSPC", "EDQUOT"].includes(e.code)) throw e;
    const why = e.code === "EROFS" ? "on a read-only filesystem" : e.code === "ENOSPC" || e.code === "EDQUOT" ? "its filesystem is full" : "not writable by this user";
    throw new DistNotWritableError(
      `${DIST_DIR} is not writable (${why}: ${e.code}), and generator/ changed since its bundle was built, so the CLI cannot be compiled there; ` +
        "make it writable, or run `npm run prepare` where the checkout can be written",
    );
  }
}

/**
 * Make sure dist/ holds a bundle of the current sources, building it when it does not.
 * @param {{ log?: (line: string) => void }} [opts] log: told one line when a rebuild starts (the launcher prints
 *   it on stderr; prepare stays quiet)
 * @returns {Promise<string>} absolute path of the bundle's cli.js
 * @throws DistNotWritableError when dist/ cannot take the new bundle; Error when esbuild fails (its messages are in the error)
 */
export async function ensureDist(opts = {}) {
  const hash = currentHash();
  const dir = join(DIST_DIR, hash);
  const entry = join(dir, "cli.js");
  if (existsSync(entry)) return entry;
  const tmp = join(DIST_DIR, `.tmp-${hash}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  // dist/ must take the new bundle: said once, before esbuild would fail on each of its output files.
  makeWritable(DIST_DIR, (e) => e.code === "EEXIST");
  makeWritable(tmp);
  opts.log?.(`generator/ changed since dist/ was built: compiling it (dist/${hash})`);
  try {
    await bundle(tmp);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another command built the same sources at the same moment: its bundle is as good as ours.
      if (!existsSync(entry)) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  prune(hash);
  return entry;
}

/** Remove all but the KEEP newest bundles (never `keep`), and temporaries of builds that died. Best effort. */
function prune(keep) {
  try {
    const dirs = readdirSync(DIST_DIR, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => ({ name: e.name, path: join(DIST_DIR, e.name), mtime: statSync(join(DIST_DIR, e.name)).mtimeMs }));
    const stale = dirs.filter((d) => d.name.startsWith(".tmp-") && Date.now() - d.mtime > 10 * 60_000);
    const bundles = dirs.filter((d) => /^[0-9a-f]{16}$/.test(d.name) && d.name !== keep).sort((a, b) => b.mtime - a.mtime);
    for (const d of [...stale, ...bundles.slice(KEEP - 1)]) rmSync(d.path, { recursive: true, force: true });
    // Remembered hashes of bundles no longer here (currentHash() then hashes the contents again).
    const kept = new Set(readdirSync(DIST_DIR));
    try {
      for (const m of readdirSync(BY_METADATA)) if (!kept.has(readFileSync(join(BY_METADATA, m), "utf8"))) rmSync(join(BY_METADATA, m), { force: true });
    } catch {
      /* none remembered yet */
    }
    // Bundles of the flat layout that came before (dist/cli.js and its chunks) are not ours to keep.
    for (const e of readdirSync(DIST_DIR, { withFileTypes: true })) if (e.isFile() && e.name.endsWith(".js")) rmSync(join(DIST_DIR, e.name), { force: true });
  } catch {
    /* pruning is housekeeping */
  }
}

// `node bin/build-dist.mjs` (the prepare script): build now, print nothing unless it fails.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureDist().catch((e) => {
    if (e instanceof DistNotWritableError) process.stderr.write(`variant-matrix: error: ${e.message}\n`);
    else process.stderr.write(`variant-matrix: cannot compile generator/ into dist/: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
