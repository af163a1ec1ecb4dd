/**
 * One job of a run: a variant's build with its retries (nix-fast-build's build.py), its log, and what the report
 * records of it. The scheduler (run.ts) decides when a job starts and what its outcome means for the others.
 *
 * A job never throws for a failed build: that is an outcome. An error of the driver itself while it writes or
 * reads the log (a full disk, a directory it may not write) is returned as `driverError`, with the build's own
 * outcome as far as it is known, so the scheduler can stop the run and still report it.
 */
import { closeSync, fstatSync, readSync, writeSync } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { openLogFile } from "../output-file.ts";
import { runTool } from "../process.ts";
import { redactCredentials } from "../redact.ts";
import type { BackendOptions, BuildCmd } from "./backend.ts";
import type { ProcessGroups } from "./build-groups.ts";
import { failureText, NixLog } from "./nix-log.ts";
import { originReader, type VariantReport } from "./report.ts";
import type { BuildEvent } from "./status.ts";
import { pathSizes } from "./store.ts";
import { PROOF_LINK_SUFFIX } from "../model/plan.ts";

/** An I/O error of the driver on a file it owns (a log), with the file in its message. */
export class DriverIoError extends Error {
  override name = "DriverIoError";
  /** The errno code (`ENOSPC`, `EACCES`), when the system gave one. */
  readonly code: string | undefined;
  /**
   * @param what what the driver was doing, with the path ("writing log /x/logs/run/NAME.log")
   * @param cause the error the system call threw
   */
  constructor(what: string, cause: unknown) {
    // Node's message ends with the system call and the path ("…, mkdir '/x/logs/run'"), which `what` already names.
    super(`${what}: ${((cause as Error)?.message ?? String(cause)).replace(/, \w+ '[^']*'$/, "")}`);
    this.code = (cause as NodeJS.ErrnoException)?.code;
  }
}

/**
 * A variant's log file, opened for appending by output-file.ts openLogFile: created with mode 0600 (a build's own
 * output can hold credentials), a symbolic link at its path refused (O_NOFOLLOW). Every failed call throws
 * DriverIoError naming the file, so the run's one error line says which file on which disk.
 */
export class LogFile {
  readonly fd: number;
  /**
   * @param path absolute path of the log (created when missing)
   * @throws DriverIoError when it cannot be opened (a link or something else that is no regular file there too)
   */
  constructor(readonly path: string) {
    try {
      this.fd = openLogFile(path);
    } catch (e) {
      throw new DriverIoError(`opening log ${path}`, e);
    }
  }

  /** Append `text`. @throws DriverIoError (ENOSPC on a full disk) */
  write(text: string): void {
    try {
      writeSync(this.fd, text);
    } catch (e) {
      throw new DriverIoError(`writing log ${this.path}`, e);
    }
  }

  /** The file's size in bytes. @throws DriverIoError */
  size(): number {
    try {
      return fstatSync(this.fd).size;
    } catch (e) {
      throw new DriverIoError(`reading log ${this.path}`, e);
    }
  }

  /**
   * What was written since byte `from`, at most the last `max` bytes, as UTF-8: a bounded tail (the whole log is
   * never read into memory; scanLines reads it all line by line). @throws DriverIoError
   */
  readFrom(from: number, max: number): string {
    try {
      const size = fstatSync(this.fd).size;
      const start = Math.max(from, size - max);
      const buf = Buffer.alloc(Math.max(0, size - start));
      readSync(this.fd, buf, 0, buf.length, start);
      return buf.toString("utf8");
    } catch (e) {
      throw new DriverIoError(`reading log ${this.path}`, e);
    }
  }

  /**
   * Every line written since byte `from`, in order, read in 1 MiB chunks: memory stays bounded whatever the build
   * printed (a log of gigabytes is never one string). A line longer than `maxLine` characters is cut to its first
   * `maxLine` (the lines read for are Nix's, which are short). The last line is given even without a final newline.
   * @throws DriverIoError
   */
  scanLines(from: number, onLine: (line: string) => void, maxLine = 65536): void {
    const buf = Buffer.alloc(1 << 20);
    const decoder = new StringDecoder("utf8");
    let carry = "";
    let dropping = false;
    const take = (text: string, ends: boolean) => {
      if (!dropping) carry += text;
      if (carry.length > maxLine) {
        carry = carry.slice(0, maxLine);
        dropping = true;
      }
      if (ends) {
        onLine(carry);
        carry = "";
        dropping = false;
      }
    };
    try {
      for (let pos = from; ; ) {
        const n = readSync(this.fd, buf, 0, buf.length, pos);
        if (n === 0) break;
        pos += n;
        const parts = decoder.write(buf.subarray(0, n)).split("\n");
        parts.forEach((part, i) => take(part, i < parts.length - 1));
      }
      take(decoder.end(), false);
      if (carry !== "") onLine(carry);
    } catch (e) {
      throw new DriverIoError(`reading log ${this.path}`, e);
    }
  }

  /** Close the descriptor; a failure to close is ignored (nothing is left to save). */
  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      /* already closed */
    }
  }
}

/**
 * A one-line failure reason of an attempt. A remote builder that did not answer is named from the human log (Nix then
 * blames the machines' features, see remoteBuilderLine); otherwise Nix's structured log says which derivation failed
 * and its last line (nix-log.ts); without one (flox build, which takes no Nix flags, or a Nix that wrote no record),
 * the human log is read (failureLine). At most 300 characters.
 * @param text the human log the attempt wrote (at most its last 8 KiB)
 * @param nix the attempt's structured log (nix backend), else null
 */
function failureReason(text: string, nix: NixLog | null): string {
  const lines = logLines(text);
  const remote = remoteBuilderLine(lines);
  if (remote !== null) return remote;
  const f = nix?.failure();
  if (f) return failureText(f);
  return failureLine(lines);
}

/** The lines of a human log worth reading for a reason: no driver headers, no substituter warnings or copy progress. */
function logLines(text: string): string[] {
  // Nix's own chatter is not the builder's reason: substituter warnings ("warning: unable to download
  // '…/nix-cache-info'"), copy and fetch progress.
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("===") && !/^(warning:|copying path |copying \d+ paths|these \d+ paths will be fetched|this path will be fetched)/.test(l));
}

/**
 * A remote builder that did not answer (Nix: "cannot build on 'URI': error: cannot connect to 'HOST': SSH's reason"
 * beside "error: unable to start any build"): Nix's last error then blames the machines' features, so name the
 * builder instead (ssh's own complaint about its configuration, when that was it). Null when the log says no such thing.
 */
function remoteBuilderLine(lines: readonly string[]): string | null {
  const silent = lines.map((x) => /^cannot build on '([^']+)': error: cannot connect to '[^']*': (.+)$/.exec(x)).filter((m) => m !== null);
  if (silent.length === 0 || !lines.some((x) => /^error: unable to start any build/.test(x))) return null;
  const who = [...new Set(silent.map((m) => m[1]!))];
  const reason = silent.at(-1)![2]!;
  // ssh refused its own configuration (`~/.ssh/config: line 3: Bad configuration option: …`): nothing was asked.
  const config = lines.find((x) => /(ssh_config|\.ssh\/config|\/etc\/ssh\/)[^:]*: (line \d+: )?(Bad configuration|terminating, \d+ bad configuration)/i.test(x)) ??
    (/bad configuration option|terminating, \d+ bad configuration/i.test(reason) ? reason : undefined);
  const l = config
    ? `ssh could not read its configuration for remote builder ${who.join(", ")} (${config}): fix that ssh_config line; the builder was never asked`
    : `remote builder ${who.join(", ")} did not answer (${reason}); nothing else could build it (see --connect-timeout)`;
  return l.length > 300 ? l.slice(0, 297) + "…" : l;
}

/**
 * The reason from a human log (flox build's): the last `error:` line (Nix's), followed by the last line the builder
 * printed before it when that line is Nix's generic "builder for … failed"; otherwise the last non-empty line.
 */
function failureLine(lines: readonly string[]): string {
  let errAt = -1;
  lines.forEach((x, i) => {
    if (x.startsWith("error:")) errAt = i;
  });
  let l = lines.at(-1) ?? "";
  if (errAt >= 0) {
    l = lines[errAt]!.replace(/\/nix\/store\/[a-z0-9]{32}-/g, "");
    const before = lines.slice(0, errAt).filter((x) => !/^(building|this derivation|\/nix\/store\/|these \d+ derivations)/.test(x));
    if (/builder for .* failed/.test(l) && before.length > 0) l += `; last output: ${before.at(-1)}`;
  }
  return l.length > 300 ? l.slice(0, 297) + "…" : l;
}

/**
 * The outputs a build's result links name: `result-NAME` is `out`, `result-NAME-OUTPUT` each other output (Nix's
 * `--out-link` convention: flox's `nix build --out-link result-NAME 'DRV^*'` links every output; nix-build of a
 * wrapper, the default one). flox's own `result-NAME-log` (a log file in the store, not an output) and the variant's
 * proof `result-NAME-proof` (its static check's output: plan.ts resultLinkName) are left out.
 * Output names are one word (`dev`, `lib`, `cxxdev`), and no variant name extends another by one dash-free word, so
 * the links cannot be confused.
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
    if (!m || m[1] === "log" || m[1] === PROOF_LINK_SUFFIX) continue;
    const p = await readlink(join(dir, f)).catch(() => null);
    if (p !== null) outputs[m[1]!] = p;
  }
  return outputs;
}

/**
 * Push `outPath`'s closure to the store `uri` (`nix copy --to`; Debian's Nix 2.8 needs the nix-command feature),
 * appending its output to the variant's log. Credentials in URLs (`https://user:TOKEN@host`) are redacted in the
 * log's header, in nix copy's output and in the reason returned; nix copy itself gets the real URI.
 * @param log the variant's log: a LogFile, or a raw descriptor (publish's own log)
 * @returns null on success, else the reason
 * @throws DriverIoError when the log cannot be written
 */
export async function pushClosure(
  outPath: string,
  uri: string,
  log: LogFile | number,
  nixOptions: readonly (readonly [string, string])[],
  env?: NodeJS.ProcessEnv,
): Promise<string | null> {
  const write = typeof log === "number" ? (t: string) => void writeSync(log, t) : (t: string) => log.write(t);
  const opts = nixOptions.flatMap(([k, v]) => ["--option", k, v]);
  write(redactCredentials(`=== nix copy --to ${uri} ${outPath} ===\n`));
  const p = await runTool(["nix", "--extra-experimental-features", "nix-command", "copy", ...opts, "--to", uri, outPath], { env: env ?? process.env });
  write(redactCredentials(p.stdout + p.stderr));
  if (p.code === 0) return null;
  const last = (p.stderr.split("\n").filter((l) => l.trim()).at(-1) ?? "").trim();
  return redactCredentials(`exit code ${p.code}: ${last || "(no output)"}`);
}

/** What a job needs from its run. */
export interface JobContext {
  /** This run's log directory: the job writes `runDir/NAME.log`. */
  runDir: string;
  /** Attempts in all (1 + --retries). */
  maxAttempts: number;
  backend: BackendOptions;
  /** Environment of the build processes. */
  env: NodeJS.ProcessEnv;
  groups: ProcessGroups;
  emit: (e: BuildEvent) => void;
  /** Why the run is stopping ("interrupted (SIGINT)", "stopped by --fail-fast (…)"), or null while it goes on. */
  stopReason: () => string | null;
}

/** How a job ended. */
export type JobOutcome =
  | { status: "built"; driverError?: DriverIoError }
  | {
      status: "failed";
      reason: string;
      /** The build itself failed after every attempt (its dependents are skipped, --fail-fast stops the run), as
       * opposed to one the run stopped or the driver could not follow. */
      final: boolean;
      driverError?: DriverIoError;
    };

/**
 * Build one variant: attempts until one succeeds or `maxAttempts` are used, each appended to `runDir/NAME.log`
 * with a header, then its outputs, sizes, where it was built and the push (`--copy-to`). Fills `r` (attempts, exit
 * code, times, outputs, origin, …); the status and reason are the caller's to set from the outcome.
 * @throws only for a bug; I/O errors on the log come back as `driverError`
 */
export async function runJob(ctx: JobContext, cmd: BuildCmd, r: VariantReport): Promise<JobOutcome> {
  const name = r.name;
  const t0 = Date.now();
  r.log = join(ctx.runDir, `${name}.log`);
  r.startedAt = new Date(t0).toISOString();
  let log: LogFile;
  try {
    log = new LogFile(r.log);
  } catch (e) {
    if (!(e instanceof DriverIoError)) throw e;
    return { status: "failed", reason: `not started: the driver failed (${e.message})`, final: false, driverError: e };
  }
  let built = false;
  /** The run stopped under this job: its log says so where it can; the report says why in any case. */
  const stopped = (stop: string): JobOutcome => {
    try {
      log.write(`=== ${stop} ===\n`);
    } catch (e) {
      if (!(e instanceof DriverIoError)) throw e;
      return { status: "failed", reason: stop, final: false, driverError: e };
    }
    return { status: "failed", reason: stop, final: false };
  };
  try {
    for (let k = 1; k <= ctx.maxAttempts; k++) {
      ctx.emit({ type: "start", name, attempt: k, maxAttempts: ctx.maxAttempts, at: Date.now() });
      const early = ctx.stopReason();
      if (early) return stopped(early);
      const from = log.size();
      // nix-build writes its structured log; the file gets its human text (nix-log.ts), the driver reads the records.
      const nix = cmd.nixLog ? new NixLog() : null;
      const argv = nix ? [...cmd.argv, "--log-format", "internal-json"] : cmd.argv;
      // The header records the command with credentials in URLs redacted (--substituter https://user:TOKEN@host).
      log.write(redactCredentials(`=== attempt ${k}/${ctx.maxAttempts} at ${new Date().toISOString()}: ${JSON.stringify(argv)} (cwd ${cmd.cwd}) ===\n`));
      r.attempts = k;
      const human = nix ? humanWriter(nix, log) : null;
      const res = await ctx.groups.run(name, { argv, cwd: cmd.cwd, env: ctx.env }, log.fd, human?.line);
      if (human?.error) throw human.error;
      r.exitCode = res.code;
      r.durationS = (Date.now() - t0) / 1000;
      r.finishedAt = new Date().toISOString();
      if (res.code === 0) {
        built = true;
        // An earlier attempt's failure is not this one's.
        delete r.failedDrv;
        delete r.lastLines;
        await collectOutputs(ctx, cmd, r, { log, from, nix });
        log.write(
          `=== done in ${r.durationS.toFixed(1)}s (${r.origin}${r.machine ? ` ${r.origin === "built" ? "on" : "from"} ${r.machine}` : ""}): ${r.outPath ?? "(no result link)"} ===\n`,
        );
        await push(ctx, r, log);
        return { status: "built" };
      }
      const stop = ctx.stopReason();
      if (stop) return stopped(stop);
      const reason = res.spawnError ?? `exit code ${res.code ?? "(signal)"}: ${failureReason(log.readFrom(from, 8192), nix) || "(no output)"}`;
      const failed = nix?.failure();
      r.failedDrv = failed?.drvPath ?? null;
      r.lastLines = failed?.lastLines ?? [];
      log.write(`=== attempt ${k} failed: ${reason} ===\n`);
      if (k < ctx.maxAttempts) {
        ctx.emit({ type: "retry", name, attempt: k, maxAttempts: ctx.maxAttempts, reason, at: Date.now() });
        continue;
      }
      return { status: "failed", reason, final: true };
    }
    throw new Error(`runJob: no attempt of ${name} ran (maxAttempts ${ctx.maxAttempts})`);
  } catch (e) {
    if (!(e instanceof DriverIoError)) throw e;
    // The build's own outcome stands where it is known: a variant built before its log filled up is built.
    if (built) return { status: "built", driverError: e };
    return { status: "failed", reason: `${r.attempts === 0 ? "not started" : "not followed to its end"}: the driver failed (${e.message})`, final: false, driverError: e };
  } finally {
    log.close();
  }
}

/**
 * The stderr reader of a nix-build with a structured log: each record's human text (nix-log.ts) appended to the log. A
 * failed write is kept (the pipe is still read to its end, so nix-build never blocks) and thrown after the exit.
 */
function humanWriter(nix: NixLog, log: LogFile): { line: (l: string) => void; error: DriverIoError | null } {
  const w = {
    error: null as DriverIoError | null,
    line: (l: string) => {
      const text = nix.line(l);
      if (text === null || w.error) return;
      try {
        log.write(`${text}\n`);
      } catch (e) {
        w.error = e instanceof DriverIoError ? e : new DriverIoError(`writing log ${log.path}`, e);
      }
    },
  };
  return w;
}

/**
 * After a successful attempt: the result links, sizes, flox's log, and where the output came from: Nix's structured
 * log (`attempt.nix`), else the attempt's human log from byte `attempt.from` (flox).
 */
async function collectOutputs(ctx: JobContext, cmd: BuildCmd, r: VariantReport, attempt: { log: LogFile; from: number; nix: NixLog | null }): Promise<void> {
  const { log, from, nix } = attempt;
  r.outPath = await readlink(cmd.outLink).catch(() => null);
  r.outputs = await resultOutputs(cmd.outLink);
  if (r.outPath) {
    const sizes = await pathSizes(r.outPath);
    r.narSize = sizes?.narSize ?? null;
    r.closureSize = sizes?.closureSize ?? null;
  }
  if (ctx.backend.backend === "flox") r.floxLog = await readlink(`${cmd.outLink}-log`).catch(() => null);
  if (nix?.structured) {
    const where = nix.origin(r.name);
    r.origin = where.origin;
    r.machine = where.machine;
    return;
  }
  // The attempt's log is scanned line by line, never read whole: a build may print gigabytes.
  const reader = originReader(r.name);
  log.scanLines(from, reader.line);
  const where = reader.result();
  r.origin = where.origin;
  r.machine = where.machine;
}

/**
 * --copy-to: push a built variant's closure to the cache; a failed push is recorded on the variant (it stays built).
 * @throws DriverIoError when the log cannot be written
 */
export async function push(ctx: Pick<JobContext, "backend" | "env" | "emit">, r: VariantReport, log: LogFile): Promise<void> {
  if (!ctx.backend.copyTo || !r.outPath) return;
  r.copiedTo = ctx.backend.copyTo;
  r.copyError = await pushClosure(r.outPath, ctx.backend.copyTo, log, ctx.backend.nixOptions ?? [], ctx.env);
  if (r.copyError)
    ctx.emit({ type: "note", text: redactCredentials(`push of ${r.name} to ${ctx.backend.copyTo} failed: ${r.copyError}`), at: Date.now() });
}
