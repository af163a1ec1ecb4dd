/**
 * The one way this CLI writes a file a user named (`build --report FILE`, `ci --output FILE`, `fleet --write-matrix
 * FILE`, `fleet --write-manifest DIR`) or a log file, so that writing never turns something else into a regular file
 * and never lands on a name someone else could have prepared.
 *
 * What happens to each kind of thing already at the path (writeOutputFile):
 * - nothing: the file is created atomically (a temporary file beside it, then a rename), parents created;
 * - a regular file: replaced atomically, keeping its permission bits: a reader never sees half a report;
 * - a symbolic link: written THROUGH, the link stays a link. Links are named on purpose: `/dev/stdout`, `/dev/fd/N`
 *   (a shell's `>(jq .)`), a link into a shared directory; replacing them is what turned them into files. A link to
 *   nothing is refused: creating a file wherever a link points is how a planted link does harm, and nothing
 *   legitimate needs it;
 * - a FIFO or a character device (`/dev/null`, a terminal): written through, never truncated or replaced (opening a
 *   FIFO waits for its reader, as a shell's `>` does);
 * - a directory, a block device, a socket: refused (OutputFileError) before anything is written.
 * Whatever is opened is checked again with fstat before the first byte, so a swap after the first look is refused too.
 *
 * Logs (openLogFile) are created readable by their owner only: a build's own output can hold what its command line
 * held (Nix echoes substituter URLs, credentials included, in its warnings), and it reaches the log without passing
 * through this process, so it cannot be redacted (redact.ts redacts what does pass through). Temporary logs live in
 * a fresh `mkdtemp` directory (privateTempDir), never under a predictable name in the shared temp directory.
 */
import { randomBytes } from "node:crypto";
import { constants, closeSync, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { InputError } from "./errors.ts";

/** An output path this CLI will not write to (a directory, a device, a link to nothing): exit 2 with its message. */
class OutputFileError extends InputError {}

/** How writeOutputFile treats an output path: "create" or "replace" (atomically), "through" (open and write). */
type OutputMode = "create" | "replace" | "through";

/** What a path holds, in words, for messages. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSymbolicLink()) return "a symbolic link";
  return st.isFile() ? "a regular file" : "a special file";
}

/** A kind that is written through when found at (or behind) an output path. */
const streamLike = (st: Stats) => st.isFIFO() || st.isCharacterDevice();

/**
 * How `file` would be written, looking only (lstat and stat): see the module comment for the rules.
 * Call it before long work (a build) so that a bad `--report` is refused at the start, not after hours.
 * @param file the output path (relative paths against the current directory)
 * @returns "create" (nothing there), "replace" (a regular file), "through" (a link, a FIFO, a character device)
 * @throws OutputFileError for a directory, a block device, a socket or a symbolic link to nothing
 */
export function outputMode(file: string): OutputMode {
  const path = resolve(file);
  let l: Stats;
  try {
    l = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "create";
    throw new OutputFileError(`cannot write ${file}: ${(e as Error).message}`);
  }
  if (!l.isSymbolicLink()) {
    if (l.isFile()) return "replace";
    if (streamLike(l)) return "through";
    throw new OutputFileError(`cannot write ${file}: it is ${kindOf(l)}; name a file`);
  }
  let t: Stats;
  try {
    t = statSync(path);
  } catch {
    let to = "?";
    try {
      to = readlinkSync(path);
    } catch {
      /* unreadable link: say "?" */
    }
    throw new OutputFileError(`cannot write ${file}: it is a symbolic link to nothing (${to}); remove it or point it at a file`);
  }
  if (t.isFile() || streamLike(t)) return "through";
  throw new OutputFileError(`cannot write ${file}: it is a symbolic link to ${kindOf(t)}; name a file`);
}

/**
 * Write `content` to the output path `file` by the rules of this module (created or replaced atomically when a
 * regular file or nothing is there, written through a link, a FIFO or a character device, refused otherwise).
 * @param file output path; missing parent directories are created
 * @param content the whole content (UTF-8 for a string)
 * @param o.mode permission bits of a newly created file (default 0o666, less the umask); a replaced file keeps its own
 * @throws OutputFileError for a path it will not write (outputMode); other errors (EACCES, ENOSPC) as Node throws them
 */
export async function writeOutputFile(file: string, content: string | Uint8Array, o: { mode?: number } = {}): Promise<void> {
  const path = resolve(file);
  const how = outputMode(path);
  if (how === "through") {
    // No O_CREAT: the link's target or the FIFO/device exists (outputMode), and a vanished one must not be recreated.
    const fh = await open(path, constants.O_WRONLY | constants.O_NOCTTY);
    try {
      const st = await fh.stat();
      if (!st.isFile() && !streamLike(st)) throw new OutputFileError(`cannot write ${file}: it became ${kindOf(st)}`);
      if (st.isFile()) await fh.truncate(0);
      await fh.writeFile(content);
    } finally {
      await fh.close();
    }
    return;
  }
  const dir = dirname(path);
  makeDirs(dir);
  const mode = how === "replace" ? lstatSync(path).mode & 0o7777 : o.mode ?? 0o666;
  // A random name, created exclusively (O_EXCL refuses an existing name and never follows a link there).
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    try {
      await fh.writeFile(content);
      if (how === "replace") await fh.chmod(mode); // the umask applied at creation; the file keeps its own bits
    } finally {
      await fh.close();
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already renamed or gone */
    }
    throw e;
  }
}

/**
 * Open a log file for appending and reading back (`a+`), created with mode 0600 (owner only: see the module comment).
 * A symbolic link at `file` is refused (O_NOFOLLOW: logs live in directories this CLI creates; a link there was
 * planted), and with `exclusive` so is any existing file (O_EXCL: a fresh log, e.g. in a private temp directory).
 * @returns the file descriptor (the caller closes it)
 * @throws Error as Node throws it (ELOOP for a link, EEXIST with `exclusive`)
 */
export function openLogFile(file: string, o: { exclusive?: boolean } = {}): number {
  const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | (o.exclusive ? constants.O_EXCL : 0);
  const fd = openSync(file, flags, 0o600);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new OutputFileError(`cannot log to ${file}: it is not a regular file`);
  }
  return fd;
}

/**
 * A fresh directory in the OS temp directory, `PREFIX` + 6 random characters, mode 0700 (mkdtemp): the place for
 * temporary logs, never a predictable name someone else could have created first.
 * @param prefix e.g. "variant-matrix-publish-"
 * @returns its absolute path
 */
export function privateTempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Make `dir` and its missing parents (`mkdir -p`) one level at a time, so that a failure is the real one: Node's
 * recursive mkdir says ENOENT where the first missing level cannot be made on a read-only filesystem (EROFS) or in a
 * directory this user may not write (EACCES).
 * @throws the error of the first level that cannot be made (its `code`: EROFS, EACCES, ENOSPC, ENOTDIR)
 */
export function makeDirs(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    try {
      statSync(d);
      break;
    } catch {
      if (dirname(d) === d) break;
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    try {
      mkdirSync(d, mode === undefined ? undefined : { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e; // made by another process meanwhile
    }
  }
}

/**
 * Make `dir` (and its parents) if missing and make sure that only this user can write into it: created with mode
 * 0700; an existing one must belong to this user and be writable by no one else. For a fixed per-user directory in
 * a shared place (the OS temp directory), where another user could have made it first and put files in it.
 * @throws OutputFileError when it is not a directory, belongs to someone else, or others may write into it
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new OutputFileError(`${dir} is ${kindOf(st)}, not a directory`);
  if (uid !== undefined && st.uid !== uid) throw new OutputFileError(`${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o022) !== 0) throw new OutputFileError(`${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`);
}

/**
 * Point the symbolic link `link` at `target` (a relative target stays relative), replacing an earlier link
 * atomically (a link made under a random name beside it, then renamed over it).
 * @returns null when done; otherwise why not, for the caller to report: something that is not a link is already
 *   there (a directory, a file: never replaced), or the filesystem refused (no symbolic links, no permission)
 */
export function pointLink(link: string, target: string): string | null {
  try {
    const st = lstatSync(link);
    if (!st.isSymbolicLink()) return `${link} is ${kindOf(st)}, not a link: not pointed at ${target} (remove it to have it kept up to date)`;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return `cannot update ${link}: ${(e as Error).message}`;
  }
  const tmp = join(dirname(link), `.${basename(link)}.${randomBytes(6).toString("hex")}`);
  try {
    symlinkSync(target, tmp);
    renameSync(tmp, link);
    return null;
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* never made */
    }
    return `cannot point ${link} at ${target}: ${(e as Error).message}`;
  }
}


/**
 * Write `content` to `file` all or nothing, for the project's own files (a cache entry, the stamp, the local
 * catalog): into a hidden temporary of a random name beside it, created exclusively (O_EXCL: never an existing name or
 * a link), then renamed over `file`, so a reader or a killed run sees the old content or the new one, never a part.
 * A user-named file goes through writeOutputFile instead (it never replaces a link, FIFO or device).
 * @throws the write's or the rename's error (ENOSPC, EACCES, …), after removing the temporary
 */
export function replaceFileSync(file: string, content: string | Uint8Array): void {
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(tmp, content, { flag: "wx" });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
