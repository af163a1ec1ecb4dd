/**
 * The repository root, found once: the nearest directory above this module holding the project's package.json
 * (so the same answer comes from the TypeScript sources in generator/ and from the compiled JavaScript in dist/).
 * @throws Error when no such directory exists (a broken install)
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePrivateDir } from "./output-file.ts";

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

/**
 * A writable cache directory for compiled inputs (matrix.ts, templates, generate stamps, generate's locks), the first
 * of: ROOT/node_modules/.cache/variant-matrix[/sub]; the per-user one (userCacheDir: a read-only checkout, such as a
 * `:ro` container mount, a CI cache or the Nix store, still runs every command that only reads); a per-user
 * directory in the OS temp dir. A directory that exists but cannot be written (EROFS, EACCES) is passed over. What
 * the cache holds is imported (run), so the per-user and temp ones are used only when they belong to this user and
 * no one else may write into them (output-file.ts ensurePrivateDir).
 * @throws Error when none is writable, naming the ones tried
 */
export function cacheDir(sub = ""): string {
  const uid = process.getuid?.() ?? "u";
  const inRepo = join(REPO_ROOT, "node_modules", ".cache", "variant-matrix");
  const tried: string[] = [];
  for (const base of [inRepo, userCacheDir(), join(tmpdir(), `variant-matrix-cache-${uid}`)]) {
    const d = sub ? join(base, sub) : base;
    try {
      if (base !== inRepo) ensurePrivateDir(base);
      mkdirSync(d, { recursive: true });
      accessSync(d, constants.W_OK);
      return d;
    } catch (e) {
      tried.push(`${d} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  throw new Error(`variant-matrix: no writable cache directory: ${tried.join(", ")}`);
}
