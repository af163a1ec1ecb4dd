/**
 * generate's lock of an output directory (one generate at a time writes it), in the cache directory (paths.ts
 * cacheDir). The lock is keyed by the directory's real path, so `--out` through a symbolic link takes the same lock
 * as the directory itself, and it records its owner's identity: the pid, the process' start time (field 22 of
 * /proc/PID/stat, clock ticks since boot, proc(5)) and a random token. A lock whose pid is gone, or now belongs to
 * another process (a different start time: the pid was reused after a generate was killed), is taken over at once.
 */
import { closeSync, existsSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { basename, dirname, join, relative } from "node:path";
import { cacheDir } from "../paths.ts";
import { InputError } from "../errors.ts";

/** Thrown when another generate holds the output's lock past the wait (exit 2: run again when it is done). */
export class LockedError extends InputError {}

/** What a lock file holds: its owner's pid, start time (null where /proc is not readable) and token. */
export interface LockOwner {
  pid: number;
  start: string | null;
  token: string;
}

/**
 * The start time of process `pid` (field 22 of /proc/PID/stat, in clock ticks since boot; proc(5)), or null when
 * /proc cannot tell (no such process, not Linux). The command name (field 2) may hold spaces and parentheses, so the
 * fields are counted after its last ")".
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** True when a process with this pid exists (ours or another user's). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the lock's owner still runs: its pid exists and, when the lock recorded a start time and /proc tells the
 * pid's, they are the same process (a reused pid is not the owner).
 */
export function ownerAlive(owner: LockOwner): boolean {
  if (!pidExists(owner.pid)) return false;
  if (owner.start === null) return true;
  const now = processStart(owner.pid);
  return now === null || now === owner.start;
}

/** A lock file's owner; a file of the earlier format (the pid alone) has no start time. null: empty or unreadable. */
export function readLockOwner(file: string): LockOwner | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
  if (/^\d+$/.test(text)) return { pid: Number(text), start: null, token: "" };
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    return typeof o.pid === "number" ? { pid: o.pid, start: typeof o.start === "string" ? o.start : null, token: String(o.token ?? "") } : null;
  } catch {
    return null;
  }
}

/** The real path of `path`: its nearest existing ancestor resolved (symbolic links followed), the rest appended. */
export function realPathOf(path: string): string {
  if (existsSync(path)) return realpathSync(path);
  const parent = dirname(path);
  return parent === path ? path : join(realPathOf(parent), basename(path));
}

/** The lock file of output directory `root` (by its real path). */
export function lockFileOf(root: string): string {
  return join(cacheDir("locks"), `generate-${createHash("sha256").update(realPathOf(root)).digest("hex").slice(0, 24)}.lock`);
}

/** Try to create the lock file exclusively; the release function when taken, null when it exists. */
function tryTake(file: string): (() => void) | null {
  const me: LockOwner = { pid: process.pid, start: processStart(process.pid), token: randomBytes(8).toString("hex") };
  let fd: number;
  try {
    fd = openSync(file, "wx");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw e;
  }
  writeSync(fd, JSON.stringify(me));
  closeSync(fd);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    try {
      if (readLockOwner(file)?.token === me.token) unlinkSync(file);
    } catch {
      /* already gone */
    }
  };
}

/** Whether an ownerless (empty) lock file was made in the last 2 s: its owner has not written its identity yet. */
function freshlyMade(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < 2_000;
  } catch {
    return false;
  }
}

/** The message of a lock held past the wait: who holds it, the file, and the safe way to clear it. */
function lockedMessage(root: string, file: string, owner: LockOwner | null): string {
  const who = owner ? `pid ${owner.pid}` : "a process that has not written its pid";
  return (
    `another generate (${who}) is still writing ${relative(process.cwd(), root) || "."}; nothing was written: run again when ` +
    `it has finished. The lock is ${file}: if no generate is running (\`ps -p ${owner?.pid ?? "PID"} -o args\` shows another ` +
    `program), remove it (\`rm ${file}\`) and run again`
  );
}

/**
 * Take the lock of output directory `root`. A lock whose owner no longer runs (killed, or its pid reused) is taken
 * over. While another live generate holds it, wait (polling every 100 ms, telling `onWait` once, with the lock
 * file) up to `waitMs` (default 2 minutes).
 * @returns a function that releases the lock (idempotent, synchronous: safe in a signal handler)
 * @throws LockedError naming the owner's pid, the lock file and how to clear it when the wait runs out
 */
export async function lockOutput(root: string, opts: { waitMs?: number; onWait?: (pid: number, file: string) => void } = {}): Promise<() => void> {
  const file = lockFileOf(root);
  const deadline = Date.now() + (opts.waitMs ?? 120_000);
  let told = false;
  for (;;) {
    const release = tryTake(file);
    if (release) return release;
    const owner = readLockOwner(file);
    if (owner ? !ownerAlive(owner) : !freshlyMade(file)) {
      try {
        unlinkSync(file);
      } catch {
        /* another waiter took it over first */
      }
      continue;
    }
    if (Date.now() > deadline) throw new LockedError(lockedMessage(root, file, owner));
    if (!told && owner) {
      told = true;
      opts.onWait?.(owner.pid, file);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
