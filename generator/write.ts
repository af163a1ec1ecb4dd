/**
 * Bring the generated files on disk in line with a rendered FileMap: compare, write atomically (temporary file
 * and rename), remove stale generated files, or with `check` change nothing and report what differs.
 *
 * A file is only ever removed when it lies in a managed directory AND carries the generated header
 * (`GENERATED_MARK` within its first five lines): a hand-written file in `.flox/pkgs/` is never touched.
 */
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { GENERATED_MARK } from "./render/literals.ts";
import type { FileMap } from "./render/index.ts";

/** Directories (repo-relative) whose generated files of the given extension are ours to remove when stale. */
export const MANAGED_DIRS: { dir: string; ext: string }[] = [
  { dir: ".flox/pkgs", ext: ".nix" },
  { dir: "docs/matrix", ext: ".md" },
];

/** What a sync did (or, with `check`, would do). Paths are repo-relative, sorted. */
export interface SyncResult {
  /** Files created or changed. */
  written: string[];
  /** Stale generated files removed. */
  removed: string[];
  /** Files already identical. */
  unchanged: number;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** True when `content` carries the generated header near its top. */
export function isGenerated(content: string): boolean {
  return content.split("\n", 5).some((l) => l.includes(GENERATED_MARK));
}

/** Stale generated files under the managed directories of `root` that `files` no longer holds. */
export function staleFiles(root: string, files: FileMap, managed = MANAGED_DIRS): string[] {
  const stale: string[] = [];
  for (const { dir, ext } of managed) {
    let names: string[];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      continue;
    }
    for (const n of names) {
      if (!n.endsWith(ext)) continue;
      const rel = `${dir}/${n}`;
      if (files.has(rel)) continue;
      const content = readOrNull(join(root, rel));
      if (content !== null && isGenerated(content)) stale.push(rel);
    }
  }
  return stale.sort();
}

/** How many file writes are in flight at once (libuv's thread pool does the I/O). */
const WRITE_CONCURRENCY = 32;

/**
 * Sync `files` into `root`. Files whose content already matches are left alone (not even touched); a new file is
 * created exclusively (`wx`: a concurrent writer's file is never clobbered half-written), a changed file is
 * written to a temporary name and renamed over the old one, so a reader sees the old or the new content, never a
 * mix. Writes run concurrently (bounded): creating files is most of a full generate's time.
 * @param opts.check when true, write and remove nothing; the result says what differs.
 * @throws the underlying fs error if a write, rename or removal fails (files already renamed stay complete).
 */
export async function syncFiles(root: string, files: FileMap, opts: { check?: boolean } = {}): Promise<SyncResult> {
  const written: string[] = [];
  let unchanged = 0;
  const madeDirs = new Set<string>();
  // One readdir per directory instead of a failed read per new file (an ENOENT throw costs more than the read).
  const listings = new Map<string, Set<string>>();
  const exists = (dir: string, base: string) => {
    let names = listings.get(dir);
    if (!names) {
      try {
        names = new Set(readdirSync(dir));
      } catch {
        names = new Set();
      }
      listings.set(dir, names);
    }
    return names.has(base);
  };
  const jobs: (() => Promise<void>)[] = [];
  for (const [rel, content] of files) {
    const path = join(root, rel);
    const dir = dirname(path);
    const present = exists(dir, basename(path));
    if (present && readOrNull(path) === content) {
      unchanged++;
      continue;
    }
    written.push(rel);
    if (opts.check) continue;
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    jobs.push(async () => {
      if (!present) {
        try {
          await writeFile(path, content, { flag: "wx" });
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        }
      }
      const tmp = `${path}.tmp-${process.pid}`;
      await writeFile(tmp, content);
      await rename(tmp, path);
    });
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(WRITE_CONCURRENCY, jobs.length) }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
  const removed = staleFiles(root, files);
  if (!opts.check) for (const rel of removed) unlinkSync(join(root, rel));
  return { written: written.sort(), removed, unchanged };
}
