/**
 * The one place that starts child processes (modelled on numtide nix-fast-build's `processes.py`): every program is
 * run with an argument vector (never a shell), its output captured or written to a descriptor, its time limited, and a
 * build ended with its whole process group.
 *
 * - runCommand / runTool: run to completion and collect stdout and stderr (Nix's store questions, pin/, git, flox).
 * - runCommandSync: the same, synchronously (preflight probes, verify's probe, GC roots).
 * - startInGroup / signalGroup: a long build in its own process group, its output on a file descriptor, and the
 *   signal that reaches the group (driver/processes.ts keeps a run's builds and stops them all).
 * - findExecutable: a program on a PATH, without running it.
 *
 * A low floor: this module imports node builtins only, so any module may use it without a cycle.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * A program that could not be started: not found on PATH (ENOENT), not executable (EACCES), or its working
 * directory missing. The message names the program: `cannot run nix-build: spawn nix-build ENOENT`.
 */
export class ProcessStartError extends Error {
  override name = "ProcessStartError";
  /** The errno code Node gave (`ENOENT`, `EACCES`), when it gave one. */
  readonly code: string | undefined;
  /** Node's own message (`spawn nix-build ENOENT`, `spawnSync nix ENOENT`). */
  readonly reason: string;

  /**
   * @param argv the command that did not start (argv[0] is named in the message)
   * @param cause the error spawn or spawnSync gave
   */
  constructor(
    readonly argv: readonly string[],
    cause: unknown,
  ) {
    const reason = (cause as Error)?.message ?? String(cause);
    super(`cannot run ${argv[0]}: ${reason}`);
    this.reason = reason;
    this.code = (cause as NodeJS.ErrnoException)?.code;
  }
}

/** How a command run to completion ended, and what it printed. */
export interface CommandResult {
  /** Exit code; null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (`SIGTERM` after a timeout, `SIGILL`), else null. */
  signal: NodeJS.Signals | null;
  /** Everything it wrote to stdout, as UTF-8 (up to `maxBuffer`). */
  stdout: string;
  /** Everything it wrote to stderr, as UTF-8 (up to `maxBuffer`). */
  stderr: string;
  /**
   * Why this module ended it, in words, when it did: it ran past `timeoutMs` ("nix ran past its limit of 60000 ms
   * and was stopped with SIGTERM") or printed more than `maxBuffer` bytes; null when it ended by itself.
   */
  stopped: string | null;
}

/** How to run a command to completion. */
export interface RunOptions {
  /** Working directory; the current one when undefined. */
  cwd?: string;
  /** The whole environment (its PATH finds argv[0]); `process.env` when undefined. */
  env?: NodeJS.ProcessEnv;
  /**
   * Text written to its stdin, which is then closed. Without it, runCommand's child inherits this process's stdin
   * (as zx's `$` gave it, so `flox publish` can ask its questions) and runCommandSync's gets an empty pipe.
   */
  input?: string;
  /** Limit in milliseconds, after which the child gets `killSignal`; no limit when undefined or 0. */
  timeoutMs?: number;
  /** The most bytes of stdout and of stderr kept; more ends the child with `killSignal`. Default: 1 GiB. */
  maxBuffer?: number;
  /** The signal a timeout or an overflow sends. Default: SIGTERM. */
  killSignal?: NodeJS.Signals;
}

const DEFAULT_MAX_BUFFER = 1 << 30;

/** The words of CommandResult.stopped for a child this module ended. */
function stoppedWhy(argv: readonly string[], why: "timeout" | "maxBuffer", o: RunOptions): string {
  const signal = o.killSignal ?? "SIGTERM";
  return why === "timeout"
    ? `${argv[0]} ran past its limit of ${o.timeoutMs} ms and was stopped with ${signal}`
    : `${argv[0]} printed more than ${o.maxBuffer ?? DEFAULT_MAX_BUFFER} bytes and was stopped with ${signal}`;
}

/**
 * Run `argv` (no shell: argv[0] found on the environment's PATH) to completion and collect its output.
 * Never rejects for a non-zero exit, a signal, a timeout or an overflow: those are in the result.
 * @param argv the program and its arguments (at least one element)
 * @returns exit code or signal, stdout and stderr, and `stopped` when the limit in `opts` ended it
 * @throws ProcessStartError (the promise rejects) when the program cannot be started
 */
export function runCommand(argv: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    const stdin = opts.input === undefined ? "inherit" : "pipe";
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env ?? process.env, stdio: [stdin, "pipe", "pipe"] });
    } catch (e) {
      reject(new ProcessStartError(argv, e));
      return;
    }
    const max = opts.maxBuffer ?? DEFAULT_MAX_BUFFER;
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], stdoutBytes: 0, stderrBytes: 0 };
    let stopped: string | null = null;
    const stop = (why: "timeout" | "maxBuffer") => {
      stopped ??= stoppedWhy(argv, why, opts);
      child.kill(opts.killSignal ?? "SIGTERM");
    };
    const collect = (which: "stdout" | "stderr") => (chunk: Buffer) => {
      const bytes = (which === "stdout" ? (out.stdoutBytes += chunk.length) : (out.stderrBytes += chunk.length));
      if (bytes > max) stop("maxBuffer");
      else out[which].push(chunk);
    };
    child.stdout!.on("data", collect("stdout"));
    child.stderr!.on("data", collect("stderr"));
    const timer = opts.timeoutMs ? setTimeout(() => stop("timeout"), opts.timeoutMs) : undefined;
    let settled = false;
    child.on("error", (e) => {
      // An error after the start (a failed kill) changes nothing: "close" still reports the end.
      if (settled || child.pid !== undefined) return;
      settled = true;
      clearTimeout(timer);
      reject(new ProcessStartError(argv, e));
    });
    child.on("close", (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = (b: Buffer[]) => Buffer.concat(b).toString("utf8");
      resolve({ code, signal, stdout: text(out.stdout), stderr: text(out.stderr), stopped });
    });
    if (opts.input !== undefined) {
      child.stdin!.on("error", () => {}); // a child that exits without reading its input closes the pipe early
      child.stdin!.end(opts.input);
    }
  });
}

/** The exit status a POSIX shell gives a command it cannot find or run. */
export const NOT_STARTED_EXIT = 127;

/**
 * runCommand for callers that treat a program that cannot start like one that failed (what zx's `$` gave them,
 * through its shell): never rejects for ProcessStartError; it resolves `{ code: 127, signal: null, stdout: "",
 * stderr: "cannot run nix: spawn nix ENOENT" }` instead.
 * @throws only what runCommand throws besides ProcessStartError (a bug)
 */
export async function runTool(argv: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  try {
    return await runCommand(argv, opts);
  } catch (e) {
    if (!(e instanceof ProcessStartError)) throw e;
    return { code: NOT_STARTED_EXIT, signal: null, stdout: "", stderr: e.message, stopped: null };
  }
}

/**
 * Run `argv` to completion synchronously (Node's spawnSync, no shell) and collect its output. A timeout or an
 * overflow ends it with `killSignal` and is in the result (`stopped`), never thrown.
 * @returns exit code or signal, stdout and stderr (UTF-8), `stopped` when a limit ended it
 * @throws ProcessStartError when the program cannot be started (not on PATH: `code` "ENOENT")
 */
export function runCommandSync(argv: readonly string[], opts: RunOptions = {}): CommandResult {
  const r = spawnSync(argv[0]!, argv.slice(1), {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    input: opts.input,
    encoding: "utf8",
    timeout: opts.timeoutMs || undefined,
    maxBuffer: opts.maxBuffer ?? DEFAULT_MAX_BUFFER,
    killSignal: opts.killSignal ?? "SIGTERM",
  });
  const errno = (r.error as NodeJS.ErrnoException | undefined)?.code;
  if (r.error && errno !== "ETIMEDOUT" && errno !== "ENOBUFS") throw new ProcessStartError(argv, r.error);
  const stopped = errno === "ETIMEDOUT" ? stoppedWhy(argv, "timeout", opts) : errno === "ENOBUFS" ? stoppedWhy(argv, "maxBuffer", opts) : null;
  return { code: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "", stopped };
}

/** What to start in its own process group: an argument vector (no shell), its directory and environment. */
export interface ProcessCommand {
  /** The program (found on `env`'s PATH) and its arguments. */
  argv: readonly string[];
  /** Its working directory. */
  cwd: string;
  /** Its whole environment. */
  env: NodeJS.ProcessEnv;
}

/** How a process started by startInGroup ended. */
export interface ProcessExit {
  /** Exit code; null when a signal ended it or it never started. */
  code: number | null;
  /** Why it never started (`cannot run nix-build: spawn nix-build ENOENT`), else undefined. */
  spawnError?: string;
}

/** A process started by startInGroup. */
export interface GroupProcess {
  /** Its pid, which is also its process group's id; undefined when it never started. */
  pid: number | undefined;
  /** Resolves once, when it exits or fails to start; never rejects. */
  exit: Promise<ProcessExit>;
}

/**
 * Start `cmd` detached, in its own process group (its pid is the group's id), with stdout and stderr both on `fd`: a
 * log then interleaves them exactly as produced, and no pipe through this process is kept busy by a build of hours.
 * Never throws: a process that cannot start resolves `exit` with `spawnError`.
 * @param fd an open file descriptor the child writes to
 */
export function startInGroup(cmd: ProcessCommand, fd: number): GroupProcess {
  let child: ChildProcess;
  try {
    child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { cwd: cmd.cwd, env: cmd.env, detached: true, stdio: ["ignore", fd, fd] });
  } catch (e) {
    return { pid: undefined, exit: Promise.resolve({ code: null, spawnError: (e as Error).message }) };
  }
  const exit = new Promise<ProcessExit>((resolve) => {
    let done = false;
    const finish = (res: ProcessExit) => {
      if (done) return;
      done = true;
      resolve(res);
    };
    child.on("error", (e) => finish({ code: null, spawnError: `cannot run ${cmd.argv[0]}: ${e.message}` }));
    child.on("exit", (code) => finish({ code }));
  });
  return { pid: child.pid, exit };
}

/**
 * Send `signal` to the process group `pid` leads (`kill(-pid, signal)`): the process and every helper it started.
 * @returns false when the group is already gone (or `pid` is undefined), true when the signal was sent
 */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // already gone
  }
}

/** Whether `p` is a regular file this process may execute. */
function isExecutableFile(p: string): boolean {
  try {
    accessSync(p, fsConstants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Where `name` would be run from: the first executable regular file `DIR/name` for the directories of `path` (a
 * colon-separated PATH, empty entries skipped); `name` itself when it holds a slash. Starts nothing.
 * @param path the PATH to search; the process's when undefined
 * @returns the absolute (or, for a name with a slash, the given) path; null when none is found
 */
export function findExecutable(name: string, path = process.env.PATH ?? ""): string | null {
  if (name.includes("/")) return isExecutableFile(name) ? name : null;
  for (const dir of path.split(delimiter)) {
    if (dir && isExecutableFile(join(dir, name))) return join(dir, name);
  }
  return null;
}
