/**
 * Run a plan: concurrent builds in dependency order, longest first, each started with the cores the schedule gives
 * it, with a log per variant, retries, fail-fast, cached variants skipped, and signal handling. I/O lives here; the
 * choices come from plan.ts and concurrency.ts.
 *
 * The parts, as nix-fast-build splits its runner:
 * - a job (job.ts `runJob`): one variant's build with its retries and log;
 * - the scheduler (`schedule`): whenever a build ends (and at the start), the ready nodes, best first, and the free
 *   compile slots go to concurrency.ts `startBuilds` (the policy the plan's wait is modelled with: plan.ts simulate),
 *   which says which start now and with how many cores; each is started with those `--cores`. Without a Capacity
 *   (`jobs` alone) at most `jobs` builds run, each with the backend's cores;
 * - stop-all (build-groups.ts `ProcessGroups`): every build runs detached in its own process group; ending the run
 *   sends SIGTERM to each group (nix-build then stops its builder, which runs in its own session), and SIGKILL to
 *   the groups still there after a grace period;
 * - the report (`finish`): every run ends with one, whatever stopped it.
 *
 * An error of the driver itself (a log it cannot write on a full disk, a bug) stops the run like --fail-fast does,
 * ends every running build, and is recorded in the report (`driverError`), which is still written where it can be.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join, relative } from "node:path";
import { buildCmd, withSshTimeouts, type BackendOptions, type BuildCmd } from "./backend.ts";
import { DriverIoError, LogFile, push, runJob, type JobContext, type JobOutcome } from "./job.ts";
import { readyNodes, transitiveDependents, type NodeState, type Plan } from "../model/plan.ts";
import { startBuilds, type Capacity } from "../model/concurrency.ts";
import { ProcessGroups } from "./build-groups.ts";
import { brokenPromises, proveVariants, writeReportFiles, type BuildReport, type UnwrittenReport, type VariantReport } from "./report.ts";
import { makeDirs, pointLink } from "../output-file.ts";
import { redactDeep } from "../redact.ts";
import type { StatusSink } from "./status.ts";
import { linkStorePath, type CachedAnswer } from "./store.ts";
import type { BuildTarget } from "./targets.ts";

export { pushClosure } from "./job.ts";

/** Everything a run needs. */
export interface RunOptions {
  plan: Plan<BuildTarget>;
  /** name → why it is selected (from `selectTargets`). */
  why: ReadonlyMap<string, "requested" | "dependency">;
  backend: BackendOptions;
  /** Concurrent builds (≥ 1), when no `capacity` is given. */
  jobs: number;
  /**
   * The host's compile slots (concurrency.ts capacityOf): the driver shares them out as builds start (startBuilds),
   * passing each build its cores (`--cores`, nix backend). Without it, `jobs` builds at once with the backend's cores.
   */
  capacity?: Capacity;
  /** Extra attempts after a failed one (≥ 0). */
  retries: number;
  /** Stop launching and end running builds after the first final failure. */
  failFast: boolean;
  /** The store's answers on already-built variants; those with `cached: true` are not built. Empty under --force. */
  cached: ReadonlyMap<string, CachedAnswer>;
  /** Logs root (`logs`); this run writes `logsRoot/runId/NAME.log` and `report.json`, and `logsRoot/latest`. */
  logsRoot: string;
  runId: string;
  /** Also write the report here. */
  reportFile?: string;
  /** Environment of the builds (default: the driver's). */
  env?: NodeJS.ProcessEnv;
  status: StatusSink;
  /** Milliseconds between SIGTERM and SIGKILL when ending builds (default 10 000). */
  killGraceMs?: number;
  /** Install SIGINT/SIGTERM handlers for the run (default true). */
  handleSignals?: boolean;
}

/** What a run ends with. */
export interface RunResult {
  /** The report, also when it could be written nowhere. */
  report: BuildReport;
  /** The report files that could not be written (`logsRoot/runId/report.json`, `--report`), with why; [] when all were. */
  unwritten: UnwrittenReport[];
  /** The report files written. */
  written: string[];
  /** Builds that were running when an error of the driver stopped the run, and were ended. */
  ended: string[];
}

/** Why a run stops early. */
type Stop = { kind: "interrupt" | "fail-fast" | "driver"; why: string };

/** The state one run shares between its parts. */
interface RunState {
  o: RunOptions;
  runDir: string;
  state: Map<string, NodeState>;
  rep: Map<string, VariantReport>;
  cmds: Map<string, BuildCmd>;
  groups: ProcessGroups;
  stopping: Stop | null;
  /** The first error of the driver (later ones are consequences, e.g. the same full disk), null while there is none. */
  driverError: string | null;
  /** Builds running when the driver error stopped the run. */
  ended: string[];
  emit: StatusSink["event"];
}

/**
 * Point `logsRoot/latest` at `runId` (relative link, replaced atomically; output-file.ts pointLink).
 * @returns null, or why it was not (a directory or file named `latest` is never replaced; a filesystem without
 *   symlinks, or no room for the link): for a note. The run directory is there either way.
 */
function linkLatest(logsRoot: string, runId: string): string | null {
  return pointLink(join(logsRoot, "latest"), runId);
}

/** A new, empty report entry of `name` (status skipped until the run says otherwise). */
function emptyEntry(plan: Plan<BuildTarget>, o: RunOptions, name: string, cmd: BuildCmd): VariantReport {
  const n = plan.nodes.get(name)!;
  return {
    name,
    package: n.target.package,
    status: "skipped",
    reason: null,
    durationS: 0,
    outPath: null,
    log: null,
    exitCode: null,
    attempts: 0,
    selectedAs: o.why.get(name) ?? "requested",
    dependsOn: [...n.deps],
    startedAt: null,
    finishedAt: null,
    command: cmd.argv,
    origin: null,
    machine: null,
    copiedTo: null,
    copyError: null,
    outputs: null,
    floxLog: null,
    narSize: null,
    closureSize: null,
    ...(n.target.check ? { check: n.target.check } : {}),
  };
}

function settle(s: RunState, name: string, status: "built" | "cached" | "failed" | "skipped", reason: string | null): void {
  s.state.set(name, status);
  const r = s.rep.get(name)!;
  r.status = status;
  r.reason = reason;
}

/** Text of an error for the report and the error line: the message, or for something thrown that is no Error, its string. */
function messageOf(e: unknown): string {
  if (e instanceof DriverIoError) return e.message;
  if (e instanceof Error) return `${e.name === "Error" ? "" : `${e.name}: `}${e.message}`;
  return String(e);
}

/**
 * Stop the run (once; the first reason wins): no new job starts, and every running build's process group gets
 * SIGTERM, then SIGKILL after the grace period.
 */
function stopRun(s: RunState, stop: Stop): void {
  if (s.stopping) return;
  s.stopping = stop;
  s.groups.terminate(s.o.killGraceMs ?? 10_000);
}

/** Record an error of the driver (the first one is the run's), and stop the run for it. */
function driverFailed(s: RunState, e: unknown): void {
  const msg = messageOf(e);
  if (s.driverError !== null) return;
  s.driverError = msg;
  s.ended = s.groups.names();
  // Stop first: the status sink may be what failed, and saying so must not keep a build running.
  stopRun(s, { kind: "driver", why: msg });
  try {
    s.emit({ type: "note", text: `error of the driver: ${msg}${s.ended.length ? `; ending ${s.ended.length} running build(s)` : ""}`, at: Date.now() });
  } catch {
    /* the report and the error line still say it */
  }
}

/** The reason a job writes in its log and the report when the run stops under it. */
function stopReason(st: Stop): string {
  return st.kind === "interrupt"
    ? `interrupted (${st.why})`
    : st.kind === "fail-fast"
      ? `stopped by --fail-fast (${st.why})`
      : `stopped: the driver failed (${st.why})`;
}

/** The reason for a variant the run never started. */
function notStartedReason(st: Stop | null): string {
  if (!st) return "not started";
  return st.kind === "interrupt"
    ? `interrupted before start (${st.why})`
    : st.kind === "fail-fast"
      ? `not started: --fail-fast after ${st.why}`
      : `not started: the driver failed (${st.why})`;
}

/** Apply a job's outcome: its status, its dependents skipped after a final failure, --fail-fast, a driver error. */
function applyOutcome(s: RunState, name: string, out: JobOutcome): void {
  const r = s.rep.get(name)!;
  if (out.status === "built") {
    settle(s, name, "built", null);
    s.emit({ type: "built", name, durationS: r.durationS, origin: r.origin ?? undefined, machine: r.machine, at: Date.now() });
  } else {
    settle(s, name, "failed", out.reason);
    s.emit({ type: "failed", name, reason: out.reason, at: Date.now() });
    if (out.final) {
      for (const d of transitiveDependents(s.o.plan, name)) {
        if (s.state.get(d) !== "pending") continue;
        const why = `dependency ${name} failed`;
        settle(s, d, "skipped", why);
        s.emit({ type: "skipped", name: d, reason: why, at: Date.now() });
      }
      if (s.o.failFast) stopRun(s, { kind: "fail-fast", why: `${name} failed` });
    }
  }
  if (out.driverError) driverFailed(s, out.driverError);
}

/**
 * The scheduler: whenever slots are free (at the start, and each time a build ends), start the ready nodes that
 * concurrency.ts startBuilds picks, best first, each with the cores it gives (the nix backend's `--cores`, written into
 * the command and the report); without a Capacity, at most `jobs` at once with the backend's own cores. Until nothing
 * runs and nothing more can start, or the run stops; then wait for every running build to exit. A job that throws (a
 * bug) is an error of the driver: its variant fails and the run stops; the scheduler itself never rejects.
 */
async function schedule(s: RunState, jobs: number, ctx: JobContext): Promise<void> {
  const cap: Capacity = s.o.capacity ?? { slots: Math.max(1, jobs), memGiB: Infinity, cores: s.o.backend.cores ?? 1, jobs: Math.max(1, jobs), gibPerJob: new Map(), machine: "", from: "" };
  const fixed = s.o.capacity === undefined;
  const running = new Map<string, Promise<void>>();
  let used = 0;
  const run = async (name: string, held: number) => {
    try {
      applyOutcome(s, name, await runJob(ctx, s.cmds.get(name)!, s.rep.get(name)!));
    } catch (e) {
      driverFailed(s, e);
      if (s.state.get(name) === "running") {
        const reason = `the driver failed while building it: ${messageOf(e)}`;
        settle(s, name, "failed", reason);
        s.emit({ type: "failed", name, reason, at: Date.now() });
      }
    } finally {
      used -= held;
      running.delete(name);
    }
  };
  const fill = () => {
    if (s.stopping) return;
    const { plan } = s.o;
    const ready = readyNodes(plan, s.state).map((n) => ({ name: n, package: plan.nodes.get(n)!.target.package, weight: plan.nodes.get(n)!.priority }));
    for (const b of startBuilds(ready, { count: running.size, slotsUsed: used }, cap)) {
      s.state.set(b.name, "running");
      if (!fixed) withCores(s, b.name, b.cores);
      used += b.slots;
      running.set(b.name, run(b.name, b.slots));
    }
  };
  try {
    fill();
    while (running.size > 0) {
      await Promise.race(running.values());
      fill();
    }
  } catch (e) {
    driverFailed(s, e);
    await Promise.allSettled(running.values());
  }
  await s.groups.settled();
}

/**
 * The command of `name` as it starts now, with the cores the schedule gives it (nix backend: `--cores N`; a package
 * capped for memory keeps its cap when that is lower); the report's entry shows it. flox takes no --cores.
 */
function withCores(s: RunState, name: string, cores: number): void {
  const { backend } = s.o;
  if (backend.backend !== "nix" || backend.cores === undefined && backend.coresByName === undefined) return;
  const cmd = buildCmd(s.o.plan.nodes.get(name)!.target, { ...backend, cores, coresByName: undefined });
  s.cmds.set(name, cmd);
  s.rep.get(name)!.command = cmd.argv;
}

/**
 * The report: every variant never started gets its reason, cached variants are pushed (--copy-to), and the report
 * is written to `runDir/report.json` and `--report`, each where it can be.
 */
async function finish(s: RunState, startedAt: Date): Promise<RunResult> {
  const { o } = s;
  for (const name of o.plan.order) {
    if (s.state.get(name) !== "pending") continue;
    const why = notStartedReason(s.stopping);
    settle(s, name, "skipped", why);
    s.emit({ type: "skipped", name, reason: why, at: Date.now() });
  }
  // Variants that were already built are pushed too (nix copy skips what the cache already has).
  if (o.backend.copyTo && !s.stopping)
    for (const name of o.plan.order) {
      const r = s.rep.get(name)!;
      if (r.status !== "cached") continue;
      r.origin = "present";
      r.log = join(s.runDir, `${name}.log`);
      try {
        const log = new LogFile(r.log);
        try {
          await push({ backend: o.backend, env: o.env ?? process.env, emit: s.emit }, r, log);
        } finally {
          log.close();
        }
      } catch (e) {
        driverFailed(s, e);
        break;
      }
    }
  const variants = o.plan.order.map((n) => s.rep.get(n)!);
  // Each variant's proof, its static check's output; a broken promise fails the variant (report.ts proveVariants).
  proveVariants(variants, { broken: (c) => brokenPromises(logTail(c.log)), proofLink: (c) => s.cmds.get(c.name)!.outLink });
  const interrupted = s.stopping?.kind === "interrupt";
  const ok = variants.every((v) => (v.status === "built" || v.status === "cached") && !v.copyError);
  // Credentials in URLs (--substituter https://user:TOKEN@host) stay out of report.json and what is printed.
  const report: BuildReport = redactDeep({
    runId: o.runId,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    backend: o.backend.backend,
    jobs: o.jobs,
    interrupted,
    driverError: s.driverError,
    exitCode: s.driverError !== null ? 1 : interrupted ? 130 : ok ? 0 : 1,
    logsDir: s.runDir,
    variants,
  });
  const files = [join(s.runDir, "report.json"), ...(o.reportFile ? [o.reportFile] : [])];
  const unwritten = await writeReportFiles(report, files);
  return { report, unwritten, written: files.filter((f) => !unwritten.some((u) => u.file === f)), ended: s.ended };
}

/** Bytes of a check's log read for its broken promises: its report.txt is printed at its end. */
const CHECK_LOG_TAIL = 1 << 20;

/** The last CHECK_LOG_TAIL bytes of a log file as text; "" when there is none or it cannot be read. */
function logTail(file: string | null): string {
  if (file === null) return "";
  try {
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      const len = Math.min(size, CHECK_LOG_TAIL);
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, size - len);
      return buf.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return "";
  }
}

/** A fresh run's state: nothing started, no entries yet; `emit` forwards to `o.status`, and a throwing sink fails the driver. */
function newRunState(o: RunOptions, runDir: string): RunState {
  const s: RunState = {
    o,
    runDir,
    state: new Map(),
    rep: new Map(),
    cmds: new Map(),
    groups: new ProcessGroups(),
    stopping: null,
    driverError: null,
    ended: [],
    emit: () => {},
  };
  // A status sink that throws (a bug, a closed terminal) is an error of the driver like any other: the run stops
  // and reports it, instead of the exception unwinding past running builds.
  s.emit = (e) => {
    try {
      o.status.event(e);
    } catch (err) {
      driverFailed(s, err);
    }
  };
  return s;
}

/** Give every variant of the plan its command and report entry (pending), then settle those `o.cached` holds. */
function seedVariants(s: RunState): void {
  const { o } = s;
  const { plan } = o;
  for (const name of plan.order) {
    const cmd = buildCmd(plan.nodes.get(name)!.target, o.backend);
    s.cmds.set(name, cmd);
    s.state.set(name, "pending");
    s.rep.set(name, emptyEntry(plan, o, name, cmd));
  }
  for (const name of plan.order) {
    const c = o.cached.get(name);
    if (!c?.cached) continue;
    settle(s, name, "cached", null);
    const r = s.rep.get(name)!;
    r.outPath = c.outPath;
    // --skip-cached: a substituter holds it, and nothing ran (nix-fast-build's meaning); else valid in the store.
    r.origin = c.by === "substituter" ? "substituted" : "present";
    if (c.by === "substituter") r.reason = "a substituter holds its outputs: not built (--skip-cached)";
    s.emit({ type: "cached", name, at: Date.now() });
  }
}

/**
 * Every cached variant gets its result link (`result-NAME` in the out directory) as a built one does: a fresh
 * `--out-dir`, or a deleted link, otherwise leaves a variant that is in the store without one. A link that cannot be
 * made is a note, not a failure (the variant is built).
 */
function linkCached(s: RunState): void {
  for (const name of s.o.plan.order) {
    const c = s.o.cached.get(name);
    // --skip-cached's substitutable variants are not in the store: nothing to link.
    if (!c?.cached || c.by === "substituter" || !c.outPath) continue;
    const why = linkStorePath(c.outPath, s.cmds.get(name)!.outLink);
    if (why !== null) s.emit({ type: "note", text: `warning: ${name} is built, but has no result link: ${why}`, at: Date.now() });
  }
}

/**
 * Unless `o.handleSignals` is false: SIGINT/SIGTERM stop the run (the first one), a second one kills every build.
 * @returns what removes the handlers again
 */
function handleSignals(s: RunState): () => void {
  let signalCount = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signalCount++;
    if (signalCount === 1) {
      s.emit({ type: "interrupt", signal: sig, at: Date.now() });
      stopRun(s, { kind: "interrupt", why: sig });
    } else s.groups.signalAll("SIGKILL");
  };
  const handle = s.o.handleSignals !== false;
  if (handle) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  return () => {
    if (handle) {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  };
}

/** What each build job reads of the run: its directory, attempts, backend, environment, process groups, status. */
function jobContext(s: RunState): JobContext {
  const { o } = s;
  return {
    runDir: s.runDir,
    maxAttempts: 1 + Math.max(0, o.retries),
    backend: o.backend,
    env: withSshTimeouts(o.env ?? process.env, o.backend.connectTimeoutS),
    groups: s.groups,
    emit: s.emit,
    stopReason: () => (s.stopping ? stopReason(s.stopping) : null),
  };
}

/**
 * Run the plan and write the report (`logsRoot/runId/report.json`, and `reportFile`).
 * Never throws for a failed build (a report entry) nor for an error of the driver (`report.driverError`): every
 * running build is ended first, and the report is returned even when no file could hold it (`unwritten` says why).
 * @returns the report (`report.exitCode`: 0 when every variant is built or cached, 130 when interrupted, 1
 *   otherwise or after a driver error) and where it was and was not written
 */
export async function runBuilds(o: RunOptions): Promise<RunResult> {
  const startedAt = new Date();
  const runDir = join(o.logsRoot, o.runId);
  const s = newRunState(o, runDir);
  seedVariants(s);
  const unhandleSignals = handleSignals(s);
  const ctx = jobContext(s);
  try {
    let ready = true;
    try {
      makeDirs(runDir);
    } catch (e) {
      driverFailed(s, new DriverIoError(logDirProblem(o.logsRoot, runDir, e), e));
      ready = false;
    }
    if (ready) {
      const latestProblem = linkLatest(o.logsRoot, o.runId);
      if (latestProblem) s.emit({ type: "note", text: `warning: ${latestProblem}`, at: Date.now() });
      linkCached(s);
      await schedule(s, o.jobs, ctx);
    }
    return await finish(s, startedAt);
  } catch (e) {
    // A bug past the scheduler: still no build left running, and still a report.
    driverFailed(s, e);
    await s.groups.stopAll(o.killGraceMs ?? 10_000);
    return await finish(s, startedAt);
  } finally {
    // Whatever happened above, nothing this run started outlives it.
    await s.groups.stopAll(o.killGraceMs ?? 10_000);
    unhandleSignals();
  }
}

/**
 * What the driver was doing when the run's log directory could not be made, for DriverIoError: a read-only or
 * unwritable logs directory said as such, with the option that moves it.
 */
function logDirProblem(logsRoot: string, runDir: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  const what = `creating the log directory ${runDir}`;
  if (code === "EROFS") return `${what} (the logs directory ${logsRoot} is not writable, on a read-only filesystem: give --logs-dir a writable directory)`;
  if (code === "EACCES" || code === "EPERM") return `${what} (the logs directory ${logsRoot} is not writable by this user: give --logs-dir a writable directory)`;
  return what;
}

/** Path of `file` relative to the current directory when that is shorter (for messages). */
export function shortPath(file: string): string {
  const r = relative(process.cwd(), file);
  if (r === "") return ".";
  return r.length < file.length && !r.startsWith("../..") ? r : file;
}
