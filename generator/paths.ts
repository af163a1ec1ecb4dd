/**
 * The repository root, found once: the nearest directory above this module holding the project's package.json
 * (so the same answer comes from the TypeScript sources in generator/ and from the compiled JavaScript in dist/).
 * @throws Error when no such directory exists (a broken install)
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
export const TEMPLATES_DIR = join(REPO_ROOT, "generator", "render", "templates");

/**
 * A writable cache directory for compiled inputs (matrix.ts, templates, generate stamps):
 * ROOT/node_modules/.cache/variant-matrix[/sub], or a per-user directory in the OS temp dir when that cannot be
 * created. The one in the temp dir has a name anyone can guess, and what the cache holds is imported (run): it is
 * used only when it belongs to this user and no one else may write into it (output-file.ts ensurePrivateDir).
 * @throws Error when neither is writable
 */
export function cacheDir(sub = ""): string {
  const uid = process.getuid?.() ?? "u";
  const shared = join(tmpdir(), `variant-matrix-cache-${uid}`);
  for (const base of [join(REPO_ROOT, "node_modules", ".cache", "variant-matrix"), shared]) {
    const d = sub ? join(base, sub) : base;
    try {
      if (base === shared) ensurePrivateDir(base);
      mkdirSync(d, { recursive: true });
      return d;
    } catch {
      /* try the next */
    }
  }
  throw new Error("variant-matrix: no writable cache directory");
}
