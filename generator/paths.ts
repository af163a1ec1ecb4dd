/**
 * The repository root, found once: the nearest directory above this module holding the project's package.json
 * (so the same answer comes from the TypeScript sources in generator/ and from the compiled JavaScript in dist/).
 * @throws Error when no such directory exists (a broken install)
 */
import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "variant-matrix") return dir;
      } catch {
        /* not ours: keep looking */
      }
    }
    if (dirname(dir) === dir) throw new Error(`variant-matrix: no package.json of variant-matrix above ${start}`);
  }
}

/** Absolute path of the repository root (package.json, matrix.ts, .flox/, pkgs/, release.nix). */
export const REPO_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** The nunjucks templates (kept in the sources; the compiled code reads them from there). */
export const TEMPLATES_DIR = join(REPO_ROOT, "generator", "generate", "render", "templates");

/**
 * The per-user cache directory: $XDG_CACHE_HOME/variant-matrix, else ~/.cache/variant-matrix (XDG Base Directory
 * Specification: "$HOME/.cache" when XDG_CACHE_HOME is unset or not absolute).
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".cache"), "variant-matrix");
}

/** Warnings about the cache directory of this run (cacheWarning), said once each by main (cli.ts) when the command ends. */
const cacheWarnings = new Set<string>();

/** Record a warning about the cache (a directory passed over, an entry that could not be written): the command goes on. */
export function cacheWarning(text: string): void {
  cacheWarnings.add(text);
}

/** The cache warnings recorded since the last call, each once, and forget them (cli.ts main prints them). */
export function takeCacheWarnings(): string[] {
  const all = [...cacheWarnings];
  cacheWarnings.clear();
  return all;
}

/** Why a cache directory is not used: it is someone else's, a symbolic link, or not a directory (cacheDirFrom). */
class CacheDirRefused extends Error {}

/**
 * Make `dir` (and missing parents) with mode 0700 and make sure it is this user's own: a real directory (not a
 * symbolic link), owned by this user, that no one else may write into (what others may only read is made private).
 * @throws CacheDirRefused when it is a symbolic link, not a directory, another user's or writable by others; the fs
 *   error when it cannot be made
 */
function ownPrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) throw new CacheDirRefused(`${dir} is a symbolic link (to ${readlinkSync(dir)})`);
  if (!st.isDirectory()) throw new CacheDirRefused(`${dir} is not a directory`);
  if (uid !== undefined && st.uid !== uid) throw new CacheDirRefused(`${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o022) !== 0) throw new CacheDirRefused(`${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)}; \`chmod 700\` it to have it used)`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/**
 * The first of `bases` (with `sub` under it) that is this user's own private directory and writable: each is made with
 * mode 0700 when missing; one that is a symbolic link, another user's or writable by others is passed over with a warning
 * (cacheWarning: what the cache holds is imported, so another user's file there would run as this user); one that
 * cannot be made or written (EROFS, EACCES: a read-only checkout) is passed over quietly.
 * @throws Error when none is usable, naming the ones tried
 */
export function cacheDirFrom(bases: readonly string[], sub = ""): string {
  const tried: string[] = [];
  for (const base of bases) {
    const d = sub ? join(base, sub) : base;
    try {
      ownPrivateDir(base);
      if (sub) ownPrivateDir(d);
      accessSync(d, constants.W_OK);
      return d;
    } catch (e) {
      if (e instanceof CacheDirRefused) cacheWarning(`the cache directory ${e.message}: not used (what it holds would run as you)`);
      tried.push(`${d} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  throw new Error(`variant-matrix: no writable cache directory: ${tried.join(", ")}`);
}

/**
 * A writable cache directory for compiled inputs (matrix.ts, templates, generate stamps, generate's locks), the first
 * of: ROOT/node_modules/.cache/variant-matrix[/sub]; the per-user one (userCacheDir: a read-only checkout, such as a
 * `:ro` container mount, a CI cache or the Nix store, still runs every command that only reads); a per-user
 * directory in the OS temp dir. What the cache holds is imported (run), so each is used only when it is this user's
 * own, mode 0700, and no symbolic link (cacheDirFrom: another is passed over with a warning); one that cannot be
 * written (EROFS, EACCES) is passed over.
 * @throws Error when none is writable, naming the ones tried
 */
export function cacheDir(sub = ""): string {
  const uid = process.getuid?.() ?? "u";
  return cacheDirFrom([join(REPO_ROOT, "node_modules", ".cache", "variant-matrix"), userCacheDir(), join(tmpdir(), `variant-matrix-cache-${uid}`)], sub);
}
