/**
 * Bring the generated files on disk in line with a rendered FileMap: compare, write every file through a temporary
 * name and a rename, remove stale generated files, or with `check` change nothing and report what differs. One
 * generate at a time per output directory (`lockOutput`, output-lock.ts).
 *
 * What is ours to remove in a managed directory (`MANAGED_DIRS`) when the FileMap no longer holds it: a file with
 * the generated header (`GENERATED_MARK` within its first five lines), an empty file of the directory's extension
 * (what an interrupted writer of an older version left: nothing hand-written is empty), and anywhere we write, our
 * temporaries. A hand-written file in `.flox/pkgs/` is never touched.
 *
 * Interruptions: a file is only ever renamed into place whole, so a reader sees an old or a new file, never a part.
 * A run killed between two renames leaves a mix of old and new files (and, under SIGKILL, temporaries); the next
 * run removes the temporaries and stale files and writes what differs, and `--check` reports all of them.
 */
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { GENERATED_MARK } from "./render/literals.ts";
import type { FileMap } from "./render/index.ts";

/** Directories (repo-relative) whose generated files of the given extension are ours to remove when stale. */
const MANAGED_DIRS: { dir: string; ext: string }[] = [
  { dir: ".flox/pkgs", ext: ".nix" },
  { dir: "docs/matrix", ext: ".md" },
];

/** What a sync did (or, with `check`, would do). Paths are repo-relative, sorted. */
interface SyncResult {
  /** Files created or changed. */
  written: string[];
  /** Stale generated files (and empty files) removed from the managed directories. */
  removed: string[];
  /** Temporaries of an interrupted earlier run removed (with `check`: found). */
  temporaries: string[];
  /** Files already identical. */
  unchanged: number;
}

/**
 * What a running sync has done so far, for a signal handler: how many files are renamed into place, and the
 * temporaries that exist right now (absolute paths), to remove before exiting.
 */
export interface SyncProgress {
  /** Files renamed into place so far. */
  done: number;
  /** Files this sync writes in all. */
  total: number;
  /** Temporaries written and not yet renamed (absolute paths). */
  temporaries: Set<string>;
  /** Set by a signal handler: start no write, rename nothing more, remove the temporaries, then throw SyncInterrupted. */
  interrupted?: NodeJS.Signals;
  /** True while syncFiles writes (a handler that sets `interrupted` then waits for it to unwind). */
  running?: boolean;
}

/** Thrown by syncFiles when `progress.interrupted` was set: every file is whole (old or new), no temporary is left. */
export class SyncInterrupted extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    readonly done: number,
    readonly total: number,
  ) {
    super(`interrupted (${signal}) after writing ${done} of ${total} changed files`);
  }
}

/** The name of a temporary of `base` written by `pid`: hidden, and never ending in a managed extension. */
const tmpName = (base: string) => `.${base}.vm-tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
/** Our temporaries (this version's naming). */
const TMP_RE = /^\..+\.vm-tmp-\d+-[0-9a-z]+$/;
/** Temporaries of earlier versions: `NAME.tmp-PID` beside a file NAME that generate writes. */
const LEGACY_TMP_RE = /^(.+)\.tmp-\d+$/;

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** True when `content` carries the generated header near its top. */
export function isGenerated(content: string): boolean {
  return content.split("\n", 5).some((l) => l.includes(GENERATED_MARK));
}

/**
 * Files under the managed directories of `root` that `files` does not hold and that are ours: generated (header) or
 * empty. Repo-relative, sorted.
 */
function staleFiles(root: string, files: FileMap, managed = MANAGED_DIRS): string[] {
  const stale: string[] = [];
  for (const { dir, ext } of managed)
    for (const n of listOrEmpty(join(root, dir))) {
      if (!n.endsWith(ext)) continue;
      const rel = `${dir}/${n}`;
      if (files.has(rel)) continue;
      const content = readOrNull(join(root, rel));
      if (content !== null && (content === "" || isGenerated(content))) stale.push(rel);
    }
  return stale.sort();
}

/**
 * Temporaries an interrupted run left in the directories `files` writes into (and the managed ones): our
 * `.NAME.vm-tmp-PID-…` files, and `NAME.tmp-PID` beside a file NAME of `files` (an earlier version's naming).
 * Repo-relative, sorted. Only safe to remove while holding the output's lock (`lockOutput`).
 */
function temporaryFiles(root: string, files: FileMap, managed = MANAGED_DIRS): string[] {
  const byDir = new Map<string, Set<string>>();
  for (const rel of files.keys()) {
    const d = dirname(rel);
    if (!byDir.has(d)) byDir.set(d, new Set());
    byDir.get(d)!.add(basename(rel));
  }
  for (const { dir } of managed) if (!byDir.has(dir)) byDir.set(dir, new Set());
  const found: string[] = [];
  for (const [dir, names] of byDir)
    for (const n of listOrEmpty(join(root, dir))) {
      const legacy = LEGACY_TMP_RE.exec(n);
      if (TMP_RE.test(n) || (legacy && names.has(legacy[1]!))) found.push(dir === "." ? n : `${dir}/${n}`);
    }
  return found.sort();
}

/** How many file writes are in flight at once (libuv's thread pool does the I/O). */
const WRITE_CONCURRENCY = 32;

/**
 * Sync `files` into `root`. Files whose content already matches are left alone (not even touched); every other
 * file is written to a temporary name in its directory and renamed over the old one, so a reader (or a run killed
 * at any moment) sees the old or the new content, never a part. Temporaries of an interrupted earlier run are
 * removed first, stale and empty files of the managed directories after. Writes run concurrently (bounded):
 * creating files is most of a full generate's time. Call it holding `lockOutput(root)`.
 * @param opts.check when true, write and remove nothing; the result says what differs (temporaries included).
 * @param opts.progress filled while the sync runs; a signal handler sets its `interrupted` to stop the sync cleanly.
 * @throws SyncInterrupted when `progress.interrupted` was set meanwhile (no temporaries left, nothing removed)
 * @throws the underlying fs error if a write, rename or removal fails (files already renamed stay complete; the
 *   temporary of the failed write is removed).
 */
export async function syncFiles(root: string, files: FileMap, opts: { check?: boolean; progress?: SyncProgress } = {}): Promise<SyncResult> {
  const temporaries = temporaryFiles(root, files);
  if (!opts.check) for (const rel of temporaries) unlinkSync(join(root, rel));
  const written: string[] = [];
  let unchanged = 0;
  const madeDirs = new Set<string>();
  // One readdir per directory instead of a failed read per new file (an ENOENT throw costs more than the read).
  const listings = new Map<string, Set<string>>();
  const exists = (dir: string, base: string) => {
    let names = listings.get(dir);
    if (!names) listings.set(dir, (names = new Set(listOrEmpty(dir))));
    return names.has(base);
  };
  const progress = opts.progress ?? { done: 0, total: 0, temporaries: new Set<string>() };
  const jobs: (() => Promise<void>)[] = [];
  for (const [rel, content] of files) {
    const path = join(root, rel);
    const dir = dirname(path);
    if (exists(dir, basename(path)) && readOrNull(path) === content) {
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
      if (progress.interrupted) return;
      const tmp = join(dir, tmpName(basename(path)));
      progress.temporaries.add(tmp);
      try {
        await writeFile(tmp, content, { flag: "wx" });
        if (progress.interrupted) {
          unlinkSync(tmp);
          return;
        }
        await rename(tmp, path);
      } catch (e) {
        try {
          unlinkSync(tmp);
        } catch {
          /* never created, or already renamed */
        }
        throw e;
      } finally {
        progress.temporaries.delete(tmp);
      }
      progress.done++;
    });
  }
  progress.total = jobs.length;
  let next = 0;
  progress.running = true;
  try {
    await Promise.all(
      Array.from({ length: Math.min(WRITE_CONCURRENCY, jobs.length) }, async () => {
        while (next < jobs.length) await jobs[next++]!();
      }),
    );
  } finally {
    progress.running = false;
  }
  if (progress.interrupted) {
    removeTemporaries(progress);
    throw new SyncInterrupted(progress.interrupted, progress.done, progress.total);
  }
  const removed = staleFiles(root, files);
  if (!opts.check) for (const rel of removed) unlinkSync(join(root, rel));
  return { written: written.sort(), removed, temporaries, unchanged };
}

/** Remove the temporaries a running sync has on disk now (from a signal handler). Best effort, synchronous. */
export function removeTemporaries(progress: SyncProgress): void {
  for (const tmp of progress.temporaries)
    try {
      unlinkSync(tmp);
    } catch {
      /* renamed meanwhile, or never created */
    }
}

/**
 * The names in the managed directories of `root` (repo-relative, sorted): what the no-op fast path compares with
 * the list it recorded, so a stray file there is never hidden behind "up to date".
 */
export function managedListing(root: string, managed = MANAGED_DIRS): string[] {
  return managed.flatMap(({ dir }) => listOrEmpty(join(root, dir)).map((n) => `${dir}/${n}`)).sort();
}

export { lockOutput, LockedError } from "./output-lock.ts";
