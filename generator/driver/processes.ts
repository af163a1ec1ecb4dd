/**
 * The build processes of a run: each spawned detached into its own process group, and the one way to end them all
 * (nix-fast-build's `ensure_stop`: SIGTERM, a grace period, then SIGKILL).
 *
 * Why process groups: nix-build starts helpers of its own, and `process.kill(-pid)` reaches all of them; a build
 * left behind by a driver that died would go on for hours with nobody reading its log.
 */
import { spawn, type ChildProcess } from "node:child_process";

/** How one build process ended. */
interface ProcessExit {
  /** Exit code; null when a signal ended it or it never started. */
  code: number | null;
  /** Why it never started (`cannot run nix-build: spawn nix-build ENOENT`), else undefined. */
  spawnError?: string;
}

/** What to start: an argument vector (no shell), its directory and environment. */
interface ProcessCommand {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The running build processes of one run, by key (the variant's name).
 *
 * Once `terminate` has been called the set is closed: `run` starts nothing more, so a job that was between two
 * attempts cannot slip a new process past the stop.
 */
export class ProcessGroups {
  private readonly running = new Map<string, { child: ChildProcess; exited: Promise<void> }>();
  private killTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** Names of the processes running now. */
  names(): string[] {
    return [...this.running.keys()];
  }

  /** True once `terminate` was called. */
  get stopping(): boolean {
    return this.closed;
  }

  /**
   * Start `cmd` detached, in its own process group, with stdout and stderr both on `fd` (so the log interleaves
   * them exactly as produced, and no pipe through this process is kept busy by a build of hours).
   * Never rejects: a process that cannot start resolves with `spawnError`.
   * @param key the name `names()` lists while it runs (one process per key at a time)
   * @param fd an open file descriptor the child writes to
   * @returns how it ended; `{ code: null, spawnError: "not started: …" }` when the set is already stopping
   */
  run(key: string, cmd: ProcessCommand, fd: number): Promise<ProcessExit> {
    if (this.closed) return Promise.resolve({ code: null, spawnError: "not started: the run is stopping" });
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        // The raw spawn stays here, on purpose: zx's ProcessPromise pipes output through Node streams and kills via
        // its own tree walk, which gives neither the shared descriptor nor the process group.
        child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { cwd: cmd.cwd, env: cmd.env, detached: true, stdio: ["ignore", fd, fd] });
      } catch (e) {
        resolve({ code: null, spawnError: (e as Error).message });
        return;
      }
      let resolveExited!: () => void;
      const exited = new Promise<void>((r) => (resolveExited = r));
      this.running.set(key, { child, exited });
      let done = false;
      const finish = (res: ProcessExit) => {
        if (done) return;
        done = true;
        this.running.delete(key);
        resolveExited();
        resolve(res);
      };
      child.on("error", (e) => finish({ code: null, spawnError: `cannot run ${cmd.argv[0]}: ${e.message}` }));
      child.on("exit", (code) => finish({ code }));
    });
  }

  /** Send `signal` to the process group of every running process (one already gone is skipped). */
  signalAll(signal: NodeJS.Signals): void {
    for (const { child } of this.running.values()) {
      if (child.pid === undefined) continue;
      try {
        process.kill(-child.pid, signal);
      } catch {
        /* already gone */
      }
    }
  }

  /**
   * Close the set and end every running process: SIGTERM to each group now (nix-build then stops its builder,
   * which runs in its own session), SIGKILL to the groups still there after `graceMs` milliseconds. Returns at
   * once; `settled()` waits for the exits. Calling it again does nothing.
   */
  terminate(graceMs: number): void {
    if (this.closed) return;
    this.closed = true;
    this.signalAll("SIGTERM");
    this.killTimer = setTimeout(() => this.signalAll("SIGKILL"), graceMs);
    this.killTimer.unref();
  }

  /** Resolves when every process running now has exited. */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.exited));
  }

  /** Close the set, end every process (`terminate`) and wait until all have exited: what every run ends with. */
  async stopAll(graceMs: number): Promise<void> {
    this.terminate(graceMs);
    await this.settled();
    this.dispose();
  }

  /** Cancel a pending SIGKILL (once every process has exited). */
  dispose(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
    this.killTimer = undefined;
  }
}
