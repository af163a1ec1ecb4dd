/**
 * The one place that starts child processes (modelled on numtide nix-fast-build's `processes.py`): every program is
 * run with an argument vector (never a shell), its output captured or written to a descriptor, its time limited, and a
 * build ended with its whole process group.
 *
 * - runCommand / runTool: run to completion and collect stdout and stderr (Nix's store questions, pin/, git, flox),
 *   through Node's spawn with no shell (zx's `$` always starts bash, which reads ~/.bashrc in some parents: see
 *   runCommand); zx's `kill` ends a timed-out child's whole tree. zx is loaded on first use, so a command that
 *   starts nothing never loads it.
 * - runCommandSync: the same, synchronously (preflight's questions to the host, verify's probe, GC roots), through Node's spawnSync:
 *   those callers cannot await.
 * - startInGroup / signalGroup: a long build in its own process group, its output on a file descriptor, and the
 *   signal that reaches the group (driver/build-groups.ts keeps a run's builds and stops them all), through Node's
 *   spawn: a build of hours writes its log straight to the file, not through a pipe of this process as zx's would.
 * - findExecutable: a program on a PATH, without running it (zx's `which`).
 *
 * A low floor: this module imports node builtins and zx only, so any module may use it without a cycle.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";

/** zx, loaded on first use. */
const zx = () => import("zx");

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
  /** Everything it wrote to stdout, as UTF-8 (up to `maxBuffer`; with `tail`, its last lines). */
  stdout: string;
  /** Everything it wrote to stderr, as UTF-8 (up to `maxBuffer`; with `tail`, its last lines). */
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
   * (zx's default, so `flox publish` can ask its questions) and runCommandSync's gets an empty pipe.
   */
  input?: string;
  /** Limit in milliseconds, after which the child gets `killSignal`; no limit when undefined or 0. */
  timeoutMs?: number;
  /** runCommandSync only: the most bytes of stdout and of stderr kept; more ends the child with `killSignal`. Default: 1 GiB. */
  maxBuffer?: number;
  /** The signal a timeout or an overflow sends. Default: SIGTERM. */
  killSignal?: NodeJS.Signals;
  /**
   * runCommand only: keep a bounded tail of stdout, of stderr or both instead of all of it (a child that may print
   * without end, a Python under verify). Default: everything is kept.
   */
  tail?: { stdout?: TailLimit; stderr?: TailLimit };
}

/**
 * How much of a stream runCommand keeps: its last `lines` lines, every line over `lineChars` characters cut with its
 * length said (cutLine); at most about `(lines + 1) × lineChars` characters, however much the child prints.
 */
export interface TailLimit {
  lines: number;
  lineChars: number;
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
 * Run `argv` to completion (Node's spawn: the program itself, no shell) and collect its output. Never rejects for a
 * non-zero exit, a signal or a timeout: those are in the result. A timeout ends the child and every process it started
 * (zx's `kill`: the process tree, then its group).
 *
 * No shell on purpose: zx's `$` runs `bash -c "set -euo pipefail; …"` with its stdin on a socket, and Debian's bash
 * then reads the user's ~/.bashrc whenever the parent is not itself a shell (SHLVL unset or 0: cron, systemd, an IDE,
 * a Python wrapper; bash's shell.c, run_startup_files, "rshd/sshd case"). Measured here, with pyenv's init in
 * ~/.bashrc: 2.6 s per command under SHLVL=0 against 0.14 s under SHLVL=1 (5 runs of `true` through zx), and a
 * ~/.bashrc that prints would have corrupted the output read back.
 * @param argv the program and its arguments (at least one element)
 * @returns exit code or signal, stdout and stderr (UTF-8), and `stopped` when `opts.timeoutMs` ended it
 * @throws ProcessStartError (the promise rejects) when the program is not on the PATH of `opts.env`, or cannot start
 *   (its working directory is missing)
 */
export async function runCommand(argv: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  const env = opts.env ?? process.env;
  if ((await findExecutable(argv[0]!, env.PATH ?? "")) === null)
    throw new ProcessStartError(argv, Object.assign(new Error(`spawn ${argv[0]} ENOENT`), { code: "ENOENT" }));
  return new Promise<CommandResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env, stdio: [opts.input !== undefined ? "pipe" : "inherit", "pipe", "pipe"] });
    } catch (e) {
      reject(new ProcessStartError(argv, e));
      return;
    }
    running.add(child);
    const out = collector(child.stdout!, opts.tail?.stdout);
    const err = collector(child.stderr!, opts.tail?.stderr);
    if (opts.input !== undefined) {
      child.stdin!.on("error", () => {}); // a child that exits without reading its input
      child.stdin!.end(opts.input);
    }
    let stopped: string | null = null;
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          stopped = stoppedWhy(argv, "timeout", opts);
          const signal = opts.killSignal ?? "SIGTERM";
          if (child.pid !== undefined) void zx().then(({ kill }) => kill(child.pid!, signal)).catch(() => child.kill(signal));
        }, opts.timeoutMs)
      : undefined;
    child.on("error", (e) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new ProcessStartError(argv, e)); // a working directory that is not there
    });
    // "close": the process has exited and its stdout and stderr are read to their end.
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout: out(), stderr: err(), stopped });
    });
  });
}

/** The children runCommand started that have not ended yet (stopRunningCommands ends them). */
const running = new Set<ChildProcess>();

/**
 * End every child runCommand started that is still running, each with the processes it started (zx's `kill`: the
 * tree, then its group), with `signal`: a command interrupted by the user ends what it started (install's probe, a Nix
 * query) instead of leaving it running. Their runCommand calls then resolve as for any child ended by a signal.
 * @returns how many were still running
 */
export async function stopRunningCommands(signal: NodeJS.Signals = "SIGTERM"): Promise<number> {
  const children = [...running].filter((c) => c.pid !== undefined && c.exitCode === null && c.signalCode === null);
  const { kill } = await zx();
  await Promise.all(children.map((c) => kill(c.pid!, signal).catch(() => c.kill(signal))));
  return children.length;
}

/** The end cutLine gives a cut line, with the whole line's length. */
const CUT_MARK = /… \((\d{1,3}(?:,\d{3})*) characters, cut\)$/;

/**
 * `line` cut to `max` characters with its length said: "xxxx… (30,000,000 characters, cut)"; a line within `max` as it
 * is. `length` is the line's whole length when only a part of it was kept (default: `line.length`). A line cut before
 * (runCommand's `tail`) is cut again with the length it said, never its own.
 */
export function cutLine(line: string, max: number, length = line.length): string {
  const before = CUT_MARK.exec(line);
  if (before) return `${line.slice(0, Math.min(before.index, max))}… (${before[1]} characters, cut)`;
  return length <= max ? line : `${line.slice(0, max)}… (${length.toLocaleString("en-US")} characters, cut)`;
}

/**
 * Read `stream` as runCommand keeps it: every byte (no `tail`), or its last `tail.lines` lines, each cut at
 * `tail.lineChars` characters (cutLine). @returns what reads the text kept, once the stream has ended
 */
function collector(stream: NodeJS.ReadableStream, tail: TailLimit | undefined): () => string {
  if (!tail) {
    const chunks: Buffer[] = [];
    stream.on("data", (d: Buffer) => chunks.push(d));
    return () => Buffer.concat(chunks).toString("utf8");
  }
  stream.setEncoding("utf8");
  const kept: string[] = [];
  let cur = "";
  let curLength = 0;
  stream.on("data", (chunk: string) => {
    const parts = chunk.split("\n");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (cur.length < tail.lineChars) cur += part.slice(0, tail.lineChars - cur.length);
      curLength += part.length;
      if (i === parts.length - 1) break;
      kept.push(cutLine(cur, tail.lineChars, curLength));
      if (kept.length > tail.lines) kept.shift();
      cur = "";
      curLength = 0;
    }
  });
  // An output that ended with a newline keeps it.
  return () => (curLength > 0 ? [...kept, cutLine(cur, tail.lineChars, curLength)].slice(-tail.lines).join("\n") : kept.length ? kept.join("\n") + "\n" : "");
}

/** The exit status a POSIX shell gives a command it cannot find or run. */
export const NOT_STARTED_EXIT = 127;

/**
 * runCommand for callers that treat a program that cannot start like one that failed (what a shell would give
 * them): never rejects for ProcessStartError; it resolves `{ code: 127, signal: null, stdout: "",
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

/** Characters of one stderr line startInGroup hands to `onStderrLine` at most (the rest of a longer line is dropped). */
const MAX_STDERR_LINE = 1 << 20;

/**
 * Start `cmd` detached, in its own process group (its pid is the group's id), with stdout and stderr both on `fd`: a
 * log then interleaves them exactly as produced, and no pipe through this process is kept busy by a build of hours.
 * With `onStderrLine`, stderr comes through a pipe instead, one line (without its newline, cut at 1 MiB) a call, as it
 * is read (a structured log the caller renders into `fd` itself); `exit` then waits until the pipe is read to its end.
 * Never throws: a process that cannot start resolves `exit` with `spawnError`.
 * @param fd an open file descriptor the child writes to
 * @param onStderrLine called for each line of stderr; it must not throw
 */
export function startInGroup(cmd: ProcessCommand, fd: number, onStderrLine?: (line: string) => void): GroupProcess {
  let child: ChildProcess;
  try {
    child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { cwd: cmd.cwd, env: cmd.env, detached: true, stdio: ["ignore", fd, onStderrLine ? "pipe" : fd] });
  } catch (e) {
    return { pid: undefined, exit: Promise.resolve({ code: null, spawnError: (e as Error).message }) };
  }
  const drained = onStderrLine && child.stderr ? readLines(child.stderr, onStderrLine) : Promise.resolve();
  const exit = new Promise<ProcessExit>((resolve) => {
    let done = false;
    const finish = (res: ProcessExit) => {
      if (done) return;
      done = true;
      resolve(res);
    };
    child.on("error", (e) => finish({ code: null, spawnError: `cannot run ${cmd.argv[0]}: ${e.message}` }));
    // The pipe is read to its end first (a helper of the group that keeps it open is ended with the group).
    child.on("exit", (code) => void drained.then(() => finish({ code })));
  });
  return { pid: child.pid, exit };
}

/** Call `onLine` for every line of `stream` (UTF-8; a line over MAX_STDERR_LINE characters cut); resolves at its end. */
function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): Promise<void> {
  stream.setEncoding("utf8");
  let carry = "";
  let dropping = false;
  stream.on("data", (chunk: string) => {
    const parts = chunk.split("\n");
    for (let i = 0; i < parts.length; i++) {
      if (!dropping) carry += parts[i];
      if (carry.length > MAX_STDERR_LINE) {
        carry = carry.slice(0, MAX_STDERR_LINE);
        dropping = true;
      }
      if (i < parts.length - 1) {
        onLine(carry);
        carry = "";
        dropping = false;
      }
    }
  });
  return new Promise((resolve) => {
    const end = () => {
      if (carry !== "") onLine(carry);
      carry = "";
      resolve();
    };
    stream.on("end", end);
    stream.on("error", end);
    stream.on("close", end);
  });
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

/**
 * Where `name` would be run from (zx's `which`): the first executable `DIR/name` for the directories of `path` (a
 * colon-separated PATH); `name` itself when it holds a slash and is executable. Starts nothing.
 * @param path the PATH to search; the process's when undefined
 * @returns the path found; null when none is
 */
export async function findExecutable(name: string, path = process.env.PATH ?? ""): Promise<string | null> {
  const { which } = await zx();
  return (await which(name, { nothrow: true, path })) ?? null;
}
