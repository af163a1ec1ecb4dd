/**
 * Bring the generated files on disk in line with a rendered FileMap: what differs is the one comparison's answer
 * (freshness.ts compareGenerated, which also says what is ours to remove: stale generated files and temporaries);
 * write every file that differs through a temporary name and a rename, remove stale generated files, or with `check`
 * change nothing and report what differs. One generate at a time per output directory (`lockOutput`,
 * output-lock.ts). A hand-written file in `.flox/pkgs/` is never touched.
 *
 * Interruptions: a file is only ever renamed into place whole, so a reader sees an old or a new file, never a part.
 * A run killed between two renames leaves a mix of old and new files (and, under SIGKILL, temporaries); the next
 * run removes the temporaries and stale files and writes what differs, and `--check` reports all of them.
 */
import { mkdirSync, unlinkSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileMap } from "./render/index.ts";
import { compareGenerated, expectedFromRender, type Freshness } from "./freshness.ts";

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
 * @param opts.freshness the one comparison's answer for the whole tree against `files` (freshness.ts
 *   compareGenerated with expectedFromRender(files)), when the caller has it; else compared here
 * @throws SyncInterrupted when `progress.interrupted` was set meanwhile (no temporaries left, nothing removed)
 * @throws the underlying fs error if a write, rename or removal fails (files already renamed stay complete; the
 *   temporary of the failed write is removed).
 */
export async function syncFiles(
  root: string,
  files: FileMap,
  opts: { check?: boolean; progress?: SyncProgress; freshness?: Freshness } = {},
): Promise<SyncResult> {
  const f = opts.freshness ?? compareGenerated(root, expectedFromRender(files), null);
  const of = (...kinds: Freshness["differences"][number]["kind"][]) => f.differences.filter((d) => kinds.includes(d.kind)).map((d) => d.file);
  const [changed, removed, temporaries] = [of("missing", "differs"), of("stale"), of("temporary")];
  const result = { written: [...changed].sort(), removed, temporaries, unchanged: f.unchanged };
  if (opts.check) return result;
  for (const rel of temporaries) unlinkSync(join(root, rel));
  const progress = opts.progress ?? { done: 0, total: 0, temporaries: new Set<string>() };
  await writeAll(root, changed.map((rel) => [rel, files.get(rel)!] as const), progress);
  for (const rel of removed) unlinkSync(join(root, rel));
  return result;
}

/**
 * Write each [repo-relative path, content] through a temporary name and a rename, `WRITE_CONCURRENCY` at a time.
 * @throws SyncInterrupted when `progress.interrupted` was set meanwhile (its temporaries removed)
 */
async function writeAll(root: string, entries: readonly (readonly [string, string])[], progress: SyncProgress): Promise<void> {
  const madeDirs = new Set<string>();
  const jobs: (() => Promise<void>)[] = [];
  for (const [rel, content] of entries) {
    const path = join(root, rel);
    const dir = dirname(path);
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

export { lockOutput, LockedError } from "./output-lock.ts";
export { isGenerated, managedListing } from "./freshness.ts";
