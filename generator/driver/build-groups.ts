/**
 * The build processes of a run, on top of generator/process.ts (which starts each detached in its own process group
 * and signals the group): which builds run now, and the one way to end them all (nix-fast-build's `ensure_stop`:
 * SIGTERM, a grace period, then SIGKILL).
 *
 * Why process groups: nix-build starts helpers of its own, and `process.kill(-pid)` reaches all of them; a build
 * left behind by a driver that died would go on for hours with nobody reading its log.
 */
import { signalGroup, startInGroup, type ProcessCommand, type ProcessExit } from "../process.ts";

/**
 * The running build processes of one run, by key (the variant's name).
 *
 * Once `terminate` has been called the set is closed: `run` starts nothing more, so a job that was between two
 * attempts cannot slip a new process past the stop.
 */
export class ProcessGroups {
  private readonly running = new Map<string, { pid: number | undefined; exited: Promise<void> }>();
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
   * @param onStderrLine stderr through a pipe instead, line by line (process.ts startInGroup): a structured log
   * @returns how it ended; `{ code: null, spawnError: "not started: …" }` when the set is already stopping
   */
  run(key: string, cmd: ProcessCommand, fd: number, onStderrLine?: (line: string) => void): Promise<ProcessExit> {
    if (this.closed) return Promise.resolve({ code: null, spawnError: "not started: the run is stopping" });
    // startInGroup, not a captured run: a build's output goes to the shared descriptor, and its group is what stops.
    const started = startInGroup(cmd, fd, onStderrLine);
    const exited = started.exit.then(() => {
      this.running.delete(key);
    });
    this.running.set(key, { pid: started.pid, exited });
    return exited.then(() => started.exit);
  }

  /** Send `signal` to the process group of every running process (one already gone is skipped). */
  signalAll(signal: NodeJS.Signals): void {
    for (const { pid } of this.running.values()) signalGroup(pid, signal);
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
