/**
 * Run a plan: concurrent builds (p-limit) in dependency order, longest first, with a log per variant, retries,
 * fail-fast, cached variants skipped, and signal handling. I/O lives here; the choices come from plan.ts.
 *
 * Processes: each build is spawned with an argument array (no shell), detached into its own process group, with
 * stdout and stderr both on the log file's descriptor (interleaved exactly as produced). Ending a build sends
 * SIGTERM to its process group (nix-build then stops its builder, which runs in its own session), and SIGKILL to
 * the group after a grace period.
 *
 * Scheduling: every time a node becomes ready, one token enters the p-limit queue; when a token gets a slot it
 * takes the best ready node at that moment (`pickNext`), so priorities are applied at start time, not enqueue
 * time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, writeSync, readSync, fstatSync, mkdirSync } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import pLimit from "p-limit";
import { buildCmd, type BackendOptions, type BuildCmd } from "./backend.ts";
import { pickNext, readyNodes, transitiveDependents, type NodeState, type Plan } from "./plan.ts";
import { $ } from "zx";
import { originFromLog, writeReportFile, type BuildReport, type VariantReport } from "./report.ts";
import { openLogFile, pointLink } from "../output-file.ts";
import { redactCredentials, redactDeep } from "../redact.ts";
import type { StatusSink } from "./status.ts";
import { pathSizes, type CacheProbe } from "./store.ts";
import type { BuildTarget } from "./targets.ts";

/** Everything a run needs. */
export interface RunOptions {
  plan: Plan<BuildTarget>;
  /** name → why it is selected (from `selectTargets`). */
  why: ReadonlyMap<string, "requested" | "dependency">;
  backend: BackendOptions;
  /** Concurrent builds (≥ 1). */
  jobs: number;
  /** Extra attempts after a failed one (≥ 0). */
  retries: number;
  /** Stop launching and end running builds after the first final failure. */
  failFast: boolean;
  /** Probes of already-built variants; those with `cached: true` are not built. Empty under --force. */
  cached: ReadonlyMap<string, CacheProbe>;
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

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

/**
 * Point `logsRoot/latest` at `runId` (relative link, replaced atomically).
 * @returns null, or why it was not (a directory or file named `latest` is never replaced): for a note
 */
function linkLatest(logsRoot: string, runId: string): string | null {
  return pointLink(join(logsRoot, "latest"), runId);
}

/**
 * A one-line failure reason from what an attempt wrote to `fd` since byte `from` (at most the last 8 KiB): the
 * last `error:` line (Nix's), followed by the last line the builder printed before it when that line is Nix's
 * generic "builder for … failed"; otherwise the last non-empty line. At most 300 characters.
 */
function failureLine(fd: number, from: number): string {
  const size = fstatSync(fd).size;
  const start = Math.max(from, size - 8192);
  const buf = Buffer.alloc(size - start);
  readSync(fd, buf, 0, buf.length, start);
  // Nix's own chatter is not the builder's reason: substituter warnings ("warning: unable to download
  // '…/nix-cache-info'"), copy and fetch progress.
  const lines = buf
    .toString("utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("===") && !/^(warning:|copying path |copying \d+ paths|these \d+ paths will be fetched|this path will be fetched)/.test(l));
  let errAt = -1;
  lines.forEach((x, i) => {
    if (x.startsWith("error:")) errAt = i;
  });
  let l = lines.at(-1) ?? "";
  if (errAt >= 0) {
    l = lines[errAt].replace(/\/nix\/store\/[a-z0-9]{32}-/g, "");
    const before = lines.slice(0, errAt).filter((x) => !/^(building|this derivation|\/nix\/store\/|these \d+ derivations)/.test(x));
    if (/builder for .* failed/.test(l) && before.length > 0) l += `; last output: ${before.at(-1)}`;
  }
  return l.length > 300 ? l.slice(0, 297) + "…" : l;
}

/** What an attempt wrote to `fd` since byte `from`. */
function readFrom(fd: number, from: number): string {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(Math.max(0, size - from));
  readSync(fd, buf, 0, buf.length, from);
  return buf.toString("utf8");
}

/**
 * The outputs a build's result links name: `result-NAME` is `out`, `result-NAME-OUTPUT` each other output (Nix's
 * `--out-link` convention: flox's `nix build --out-link result-NAME 'DRV^*'` links every output; nix-build of a
 * wrapper, the default one). flox's own
 * `result-NAME-log` (a log file in the store, not an output) is left out. Output names are one word (`dev`, `lib`,
 * `cxxdev`), and no variant name extends another by one dash-free word, so the links cannot be confused.
 * @param outLink absolute path of `result-NAME`
 * @returns output name → store path; null when `result-NAME` is missing
 */
async function resultOutputs(outLink: string): Promise<Record<string, string> | null> {
  const out = await readlink(outLink).catch(() => null);
  if (out === null) return null;
  const dir = dirname(outLink);
  const prefix = `${basename(outLink)}-`;
  const outputs: Record<string, string> = { out };
  for (const f of await readdir(dir).catch(() => [] as string[])) {
    const m = f.startsWith(prefix) ? /^([A-Za-z][A-Za-z0-9_]*)$/.exec(f.slice(prefix.length)) : null;
    if (!m || m[1] === "log") continue;
    const p = await readlink(join(dir, f)).catch(() => null);
    if (p !== null) outputs[m[1]!] = p;
  }
  return outputs;
}

/**
 * Push `outPath`'s closure to the store `uri` (`nix copy --to`; Debian's Nix 2.8 needs the nix-command feature),
 * appending its output to the variant's log. Returns null on success, else the reason.
 */
export async function pushClosure(outPath: string, uri: string, fd: number, nixOptions: readonly (readonly [string, string])[], env?: NodeJS.ProcessEnv): Promise<string | null> {
  const opts = nixOptions.flatMap(([k, v]) => ["--option", k, v]);
  writeSync(fd, redactCredentials(`=== nix copy --to ${uri} ${outPath} ===\n`));
  const p = await $({ nothrow: true, quiet: true, env: env ?? process.env })`nix --extra-experimental-features nix-command copy ${opts} --to ${uri} ${outPath}`;
  writeSync(fd, redactCredentials(p.stdout + p.stderr));
  if (p.exitCode === 0) return null;
  const last = (p.stderr.split("\n").filter((l) => l.trim()).at(-1) ?? "").trim();
  return redactCredentials(`exit code ${p.exitCode}: ${last || "(no output)"}`);
}

/**
 * Run the plan and write the report (`logsRoot/runId/report.json`, and `reportFile`).
 * Never throws for a failed build; a failed build is a report entry.
 * @returns the report; `report.exitCode` is 0 when every variant is built or cached, 130 when interrupted, else 1
 */
export async function runBuilds(o: RunOptions): Promise<BuildReport> {
  const { plan } = o;
  const startedAt = new Date();
  const runDir = join(o.logsRoot, o.runId);
  mkdirSync(runDir, { recursive: true });
  const latestProblem = linkLatest(o.logsRoot, o.runId);
  const maxAttempts = 1 + Math.max(0, o.retries);
  const grace = o.killGraceMs ?? 10_000;

  const state = new Map<string, NodeState>();
  const rep = new Map<string, VariantReport>();
  const cmds = new Map<string, BuildCmd>();
  for (const name of plan.order) {
    const n = plan.nodes.get(name)!;
    const cmd = buildCmd(n.target, o.backend);
    cmds.set(name, cmd);
    state.set(name, "pending");
    rep.set(name, {
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
    });
  }

  let stopping: null | { kind: "interrupt" | "fail-fast"; why: string } = null;
  const running = new Map<string, Running>();
  const emit = o.status.event.bind(o.status);
  if (latestProblem) emit({ type: "note", text: `warning: ${latestProblem}`, at: Date.now() });
  /** --copy-to: push a finished variant's closure; a failed push is recorded on the variant. */
  const push = async (r: VariantReport, fd: number) => {
    if (!o.backend.copyTo || !r.outPath) return;
    r.copiedTo = o.backend.copyTo;
    r.copyError = await pushClosure(r.outPath, o.backend.copyTo, fd, o.backend.nixOptions ?? [], o.env);
    if (r.copyError) emit({ type: "note", text: redactCredentials(`push of ${r.name} to ${o.backend.copyTo} failed: ${r.copyError}`), at: Date.now() });
  };

  const settle = (name: string, status: "built" | "cached" | "failed" | "skipped", reason: string | null) => {
    state.set(name, status);
    const r = rep.get(name)!;
    r.status = status;
    r.reason = reason;
  };

  const endAll = (signal: NodeJS.Signals) => {
    for (const [, r] of running) {
      if (r.child.pid === undefined) continue;
      try {
        process.kill(-r.child.pid, signal);
      } catch {
        /* already gone */
      }
    }
  };
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (kind: "interrupt" | "fail-fast", why: string) => {
    if (stopping) return;
    stopping = { kind, why };
    endAll("SIGTERM");
    killTimer = setTimeout(() => endAll("SIGKILL"), grace);
    killTimer.unref();
  };

  for (const name of plan.order) {
    const c = o.cached.get(name);
    if (c?.cached) {
      settle(name, "cached", null);
      rep.get(name)!.outPath = c.outPath;
      // --skip-cached: a substituter holds it, and nothing ran (nix-fast-build's meaning); else valid in the store.
      rep.get(name)!.origin = c.by === "substituter" ? "substituted" : "present";
      if (c.by === "substituter") rep.get(name)!.reason = "a substituter holds its outputs: not built (--skip-cached)";
      emit({ type: "cached", name, at: Date.now() });
    }
  }

  /** One attempt: spawn, wait, return exit code (null when killed by a signal or not spawned). */
  const attempt = (name: string, k: number, fd: number): Promise<{ code: number | null; spawnError?: string }> => {
    const cmd = cmds.get(name)!;
    writeSync(
      fd,
      redactCredentials(`=== attempt ${k}/${maxAttempts} at ${new Date().toISOString()}: ${JSON.stringify(cmd.argv)} (cwd ${cmd.cwd}) ===\n`),
    );
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        // The raw spawn stays here, on purpose: the build must (1) write stdout and stderr to the SAME file
        // descriptor, so the log interleaves them exactly as produced, without a pipe through this process that a
        // multi-hour build would keep busy; (2) run detached in its own process group, so SIGTERM/SIGKILL reach
        // nix-build and everything it started (`process.kill(-pid)`), with our own grace period. zx's
        // ProcessPromise pipes output through Node streams and kills via its own tree walk, which gives neither.
        child = spawn(cmd.argv[0], cmd.argv.slice(1), {
          cwd: cmd.cwd,
          env: o.env ?? process.env,
          detached: true,
          stdio: ["ignore", fd, fd],
        });
      } catch (e) {
        resolve({ code: null, spawnError: (e as Error).message });
        return;
      }
      let resolveExited!: () => void;
      const exited = new Promise<void>((r) => (resolveExited = r));
      running.set(name, { child, exited });
      let done = false;
      const finish = (res: { code: number | null; spawnError?: string }) => {
        if (done) return;
        done = true;
        running.delete(name);
        resolveExited();
        resolve(res);
      };
      child.on("error", (e) => finish({ code: null, spawnError: `cannot run ${cmd.argv[0]}: ${e.message}` }));
      child.on("exit", (code) => finish({ code }));
    });
  };

  const buildOne = async (name: string) => {
    const r = rep.get(name)!;
    const logFile = join(runDir, `${name}.log`);
    r.log = logFile;
    const fd = openLogFile(logFile);
    const t0 = Date.now();
    r.startedAt = new Date(t0).toISOString();
    try {
      for (let k = 1; k <= maxAttempts; k++) {
        emit({ type: "start", name, attempt: k, maxAttempts, at: Date.now() });
        const from = fstatSync(fd).size;
        r.attempts = k;
        const res = await attempt(name, k, fd);
        r.exitCode = res.code;
        r.durationS = (Date.now() - t0) / 1000;
        r.finishedAt = new Date().toISOString();
        if (res.code === 0) {
          r.outPath = await readlink(cmds.get(name)!.outLink).catch(() => null);
          r.outputs = await resultOutputs(cmds.get(name)!.outLink);
          if (r.outPath) {
            const sizes = await pathSizes(r.outPath);
            r.narSize = sizes?.narSize ?? null;
            r.closureSize = sizes?.closureSize ?? null;
          }
          if (o.backend.backend === "flox") r.floxLog = await readlink(`${cmds.get(name)!.outLink}-log`).catch(() => null);
          const where = originFromLog(readFrom(fd, from), name);
          r.origin = where.origin;
          r.machine = where.machine;
          writeSync(
            fd,
            `=== done in ${r.durationS.toFixed(1)}s (${where.origin}${where.machine ? ` ${where.origin === "built" ? "on" : "from"} ${where.machine}` : ""}): ${r.outPath ?? "(no result link)"} ===\n`,
          );
          await push(r, fd);
          settle(name, "built", null);
          emit({ type: "built", name, durationS: r.durationS, origin: where.origin, machine: where.machine, at: Date.now() });
          return;
        }
        const st = stopping as null | { kind: string; why: string };
        if (st) {
          const reason = st.kind === "interrupt" ? `interrupted (${st.why})` : `stopped by --fail-fast (${st.why})`;
          writeSync(fd, `=== ${reason} ===\n`);
          settle(name, "failed", reason);
          emit({ type: "failed", name, reason, at: Date.now() });
          return;
        }
        const reason = res.spawnError ?? `exit code ${res.code ?? "(signal)"}: ${failureLine(fd, from) || "(no output)"}`;
        writeSync(fd, `=== attempt ${k} failed: ${reason} ===\n`);
        if (k < maxAttempts) {
          emit({ type: "retry", name, attempt: k, maxAttempts, reason, at: Date.now() });
          continue;
        }
        settle(name, "failed", reason);
        emit({ type: "failed", name, reason, at: Date.now() });
        for (const d of transitiveDependents(plan, name)) {
          if (state.get(d) !== "pending") continue;
          const why = `dependency ${name} failed`;
          settle(d, "skipped", why);
          emit({ type: "skipped", name: d, reason: why, at: Date.now() });
        }
        if (o.failFast) stop("fail-fast", `${name} failed`);
        return;
      }
    } finally {
      closeSync(fd);
    }
  };

  const limit = pLimit(Math.max(1, o.jobs));
  const tokens: Promise<void>[] = [];
  const announced = new Set<string>();
  const slot = async () => {
    if (stopping) return;
    const name = pickNext(plan, state);
    if (name === undefined) return;
    state.set(name, "running");
    await buildOne(name);
    release();
  };
  const release = () => {
    if (stopping) return;
    for (const name of readyNodes(plan, state))
      if (!announced.has(name)) {
        announced.add(name);
        tokens.push(limit(slot));
      }
  };

  let signalCount = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signalCount++;
    if (signalCount === 1) {
      emit({ type: "interrupt", signal: sig, at: Date.now() });
      stop("interrupt", sig);
    } else endAll("SIGKILL");
  };
  const handle = o.handleSignals !== false;
  if (handle) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  try {
    release();
    for (let i = 0; i < tokens.length; i++) await tokens[i];
    await Promise.all([...running.values()].map((r) => r.exited));
  } finally {
    if (killTimer) clearTimeout(killTimer);
    if (handle) {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }

  const stopped = stopping as null | { kind: "interrupt" | "fail-fast"; why: string };
  for (const name of plan.order) {
    if (state.get(name) !== "pending") continue;
    const why = stopped
      ? stopped.kind === "interrupt"
        ? `interrupted before start (${stopped.why})`
        : `not started: --fail-fast after ${stopped.why}`
      : "not started";
    settle(name, "skipped", why);
    emit({ type: "skipped", name, reason: why, at: Date.now() });
  }
  // Variants that were already built are pushed too (nix copy skips what the cache already has).
  if (o.backend.copyTo && !stopped)
    for (const name of plan.order) {
      const r = rep.get(name)!;
      if (r.status !== "cached") continue;
      r.origin = "present";
      r.log = join(runDir, `${name}.log`);
      const fd = openLogFile(r.log);
      try {
        await push(r, fd);
      } finally {
        closeSync(fd);
      }
    }
  const variants = plan.order.map((n) => rep.get(n)!);
  const interrupted = stopped?.kind === "interrupt";
  const ok = variants.every((v) => (v.status === "built" || v.status === "cached") && !v.copyError);
  // Credentials in URLs (--substituter https://user:TOKEN@host) stay out of report.json and what is printed.
  const report: BuildReport = redactDeep({
    runId: o.runId,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    backend: o.backend.backend,
    jobs: o.jobs,
    interrupted,
    exitCode: interrupted ? 130 : ok ? 0 : 1,
    logsDir: runDir,
    variants,
  });
  await writeReportFile(join(runDir, "report.json"), report);
  if (o.reportFile) await writeReportFile(o.reportFile, report);
  return report;
}

/** Path of `file` relative to the current directory when that is shorter (for messages). */
export function shortPath(file: string): string {
  const r = relative(process.cwd(), file);
  if (r === "") return ".";
  return r.length < file.length && !r.startsWith("../..") ? r : file;
}
