/**
 * The build report (`logs/<run-id>/report.json`, and `--report FILE`), the closing summary table, and durations
 * read back from earlier reports for the scheduler.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeOutputFile } from "../output-file.ts";
import { redactDeep } from "../redact.ts";
import type { Backend } from "./backend.ts";
import { historyFloor } from "../model/plan.ts";

/** Final status of a variant in a run. */
type VariantStatus = "built" | "cached" | "failed" | "skipped";

/** One selected variant in the report. */
export interface VariantReport {
  name: string;
  package: string;
  status: VariantStatus;
  /** Why it failed or was skipped ("dependency pytorch-… failed", "exit code 1: …"); null otherwise. */
  reason: string | null;
  /** Wall time of all attempts in seconds (0 for cached and skipped). */
  durationS: number;
  /** Output store path (built or cached), else null. */
  outPath: string | null;
  /** Log file path (absolute), null when nothing ran. */
  log: string | null;
  /** Exit code of the last attempt; null when nothing ran or the process was killed by a signal. */
  exitCode: number | null;
  /** Number of times the build command ran (0 for cached and skipped). */
  attempts: number;
  /** Why it is in the selection: named/filtered, or pulled in as a dependency. */
  selectedAs: "requested" | "dependency";
  dependsOn: string[];
  /** ISO times of the first start and the last end, null when nothing ran. */
  startedAt: string | null;
  finishedAt: string | null;
  /** The build command (argv) that ran or would run. */
  command: string[];
  /**
   * How the variant's own output came to be, read from Nix's log: "built" (its derivation was built in this run),
   * "substituted" (copied from a binary cache), "present" (already valid in the store), or null (nothing ran).
   */
  origin: "built" | "substituted" | "present" | null;
  /** Where its derivation was built: "local", or the remote builder ("ssh://big"); the cache it came from when
   * substituted; null otherwise. */
  machine: string | null;
  /**
   * The derivation whose builder failed in the last attempt, from Nix's structured log (driver/nix-log.ts); null when
   * no builder failed (an evaluation error, a fetch) or the backend gives no such log (flox). Optional in older reports.
   */
  failedDrv?: string | null;
  /** That builder's last lines (at most 10), oldest first; [] otherwise. Optional in older reports. */
  lastLines?: string[];
  /** `--copy-to` store URI the closure was pushed to, null when not pushed. */
  copiedTo: string | null;
  /** Why the push failed (the variant stays built; the run exits 1), else null. */
  copyError: string | null;
  /**
   * Store path of every output whose `result-NAME[-OUTPUT]` link the build left, by output name (`out` is
   * `result-NAME`; flox's `nix build --out-link result-NAME 'DRV^*'` links every output, the others as
   * `result-NAME-OUTPUT`, e.g. torch's dev, lib, cxxdev; nix-build of a wrapper links its default output only); null
   * when nothing was built. Optional in older reports.
   */
  outputs?: Record<string, string> | null;
  /** flox backend: the build log flox added to the store and linked as `result-NAME-log`, else null. */
  floxLog?: string | null;
  /** Bytes of the output's NAR (`nix-store --query --size OUT`), when built; null otherwise. Optional in older reports. */
  narSize?: number | null;
  /**
   * Bytes of the output's whole runtime closure: the sum of `nix-store --query --size` over `nix-store --query
   * --requisites OUT` (what `nix path-info -S` gives), when built; null otherwise. What a host downloads to run it.
   */
  closureSize?: number | null;
  /** On a check's entry (`check-static-NAME`, `check-gpu-NAME`): the variant it checks and which check; absent on a variant's. */
  check?: { of: string; kind: "static" | "gpuCheck" };
  /**
   * A variant's proof: the store path of its static check's output (pkgs/checks.nix: probe.json and report.txt; an
   * environment's also members.json, its members' proofs), when that check passed in this run or was built before;
   * null when the variant is unproven (`unproven` says why). Absent on a check's entry and in older reports.
   */
  proof?: string | null;
  /** The link to the proof beside the variant's result (`OUTDIR/result-NAME-proof`: plan.ts resultLinkName); null when unproven. */
  proofLink?: string | null;
  /**
   * Why the variant has no proof, in words: "not checked (--no-verify)", "not built", "its static check failed
   * (check-static-NAME): ✗ …" (the broken promises), "its static check did not run: …"; null when it is proven.
   */
  unproven?: string | null;
}

/** The whole report. */
export interface BuildReport {
  runId: string;
  /** ISO 8601 times. */
  startedAt: string;
  finishedAt: string;
  backend: Backend;
  jobs: number;
  /** True when SIGINT/SIGTERM stopped the run. */
  interrupted: boolean;
  /**
   * An error of the driver itself that stopped the run (a log it could not write: "writing log /…/NAME.log: ENOSPC:
   * no space left on device, write"; a bug), else null. Its running builds were ended; the run exits 1. Optional in
   * older reports.
   */
  driverError?: string | null;
  /** Exit code of the run: 0 all built or cached, 1 otherwise (a driver error included), 130 interrupted. */
  exitCode: number;
  /** Directory holding this run's logs. */
  logsDir: string;
  variants: VariantReport[];
}

/**
 * How a variant's output came to be, from the log Nix wrote while building it (pure).
 * Nix 2.8 prints "building '/nix/store/…-NAME-VERSION.drv'..." for a local build, "building '…drv' on
 * 'ssh://host'..." for a remote one, and "copying path '/nix/store/…-NAME-VERSION' from 'URI'..." for a
 * substitution (src/libmain/progress-bar.cc, src/nix-build / build/derivation-goal.cc log lines).
 * @param log the log text of the successful attempt
 * @param name the variant name (the derivation's name is NAME-VERSION, or NAME)
 */
export function originFromLog(log: string, name: string): { origin: "built" | "substituted" | "present"; machine: string | null } {
  const o = originReader(name);
  for (const line of log.split("\n")) o.line(line);
  return o.result();
}

/**
 * originFromLog one line at a time, so that a log of any size is read in bounded memory (job.ts collectOutputs): feed every
 * line with `line`, then ask `result`. The last matching line of each kind wins, as in originFromLog.
 * @param name the variant name (the derivation's name is NAME-VERSION, or NAME)
 */
export function originReader(name: string): { line: (line: string) => void; result: () => { origin: "built" | "substituted" | "present"; machine: string | null } } {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const built = new RegExp(`building '/nix/store/[a-z0-9]{32}-${esc}(?:-[0-9][^/']*)?\\.drv'(?: on '([^']+)')?`);
  const copied = new RegExp(`copying path '/nix/store/[a-z0-9]{32}-${esc}(?:-[0-9][^/']*)?' from '([^']+)'`);
  let b: RegExpExecArray | null = null;
  let c: RegExpExecArray | null = null;
  return {
    line: (line) => {
      // Nix's lines are short; a builder's own line (which can be megabytes long) cannot match: skip the regexes.
      if (line.length > 4096 || !line.includes("'/nix/store/")) return;
      b = built.exec(line) ?? b;
      c = copied.exec(line) ?? c;
    },
    result: () => {
      if (b) return { origin: "built", machine: b[1] ?? "local" };
      if (c) return { origin: "substituted", machine: c[1]! };
      return { origin: "present", machine: null };
    },
  };
}

/**
 * A sortable, unique run id: UTC time to the second plus 4 random hex digits, e.g. "20251122T044610Z-3f9a".
 */
export function makeRunId(now = new Date()): string {
  const t = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `${t}-${Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, "0")}`;
}

/**
 * Write a report as JSON (2-space indent) to `file`, credentials in URLs redacted (redact.ts), by the rules of
 * output-file.ts: created or replaced atomically, written through a link, a FIFO or `/dev/null`, parents created.
 * A failed write removes its temporary file, so a full disk leaves no half-written temporary behind.
 * @throws OutputFileError for a path it will not write (a directory, a socket, a link to nothing); the system error
 *   (ENOSPC, EACCES, EROFS, …) when the file cannot be written; `file` is then unchanged
 */
async function writeReportFile(file: string, report: BuildReport): Promise<void> {
  await writeOutputFile(file, JSON.stringify(redactDeep(report), null, 2) + "\n");
}

/** A report file that could not be written, and why (the system's message). */
export interface UnwrittenReport {
  file: string;
  why: string;
}

/**
 * Write `report` to every file of `files` (each by writeReportFile: redacted, by output-file.ts's rules); one that
 * fails does not stop the others.
 * @returns the files that could not be written, with why; [] when all were
 */
export async function writeReportFiles(report: BuildReport, files: readonly string[]): Promise<UnwrittenReport[]> {
  const failed: UnwrittenReport[] = [];
  for (const f of files) {
    try {
      await writeReportFile(f, report);
    } catch (e) {
      // The caller names the file already ("report not written to FILE: why"): output-file.ts's own "cannot write
      // FILE: " prefix would say it twice.
      const msg = (e as Error)?.message ?? String(e);
      const prefix = `cannot write ${f}: `;
      failed.push({ file: f, why: msg.startsWith(prefix) ? msg.slice(prefix.length) : msg });
    }
  }
  return failed;
}

/** An earlier report that was left out of the history, and why ("null, not an object", "not JSON: …"). */
export interface SkippedReport {
  file: string;
  why: string;
}

/** What `value` is, in two words ("null", "a string", "an array"), for messages. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Why `value` is not a report the history can read, in a few words; null when it is one. The history reads an
 * object whose `variants` is a list of objects, each with a string `name` and `status`; other fields are left as
 * they are (older and newer reports differ there), and what a reader needs of a variant is checked where it is
 * read (realBuilds).
 */
function reportShapeProblem(value: unknown): string | null {
  if (kindOf(value) !== "an object") return `${kindOf(value)}, not an object`;
  const variants = (value as { variants?: unknown }).variants;
  if (!Array.isArray(variants)) return `variants is ${variants === undefined ? "missing" : kindOf(variants)}, not a list`;
  const bad = variants.findIndex((v) => kindOf(v) !== "an object" || typeof v.name !== "string" || typeof v.status !== "string");
  return bad < 0 ? null : `variants[${bad}] is no variant (an object with a name and a status)`;
}

/**
 * The one reader of earlier reports: every `logsDir/<run-id>/report.json` (not the `latest` link), in run-id order
 * (oldest first). A file that cannot be read, is not JSON, or is JSON of another shape (`null`, `{"variants":"x"}`)
 * is left out and passed to `onSkip`, so one foreign file cannot stop every later run.
 * @param onSkip called once per file left out (the caller says so: libraries do not print)
 * @returns the reports, each with `variants` a list; [] when there are none
 */
export function readReports(logsDir: string, onSkip: (s: SkippedReport) => void = () => {}): (Partial<BuildReport> & { variants: VariantReport[] })[] {
  if (!existsSync(logsDir)) return [];
  let runs: string[];
  try {
    runs = readdirSync(logsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== "latest")
      .map((d) => d.name)
      .sort();
  } catch (e) {
    onSkip({ file: logsDir, why: `cannot list it: ${(e as Error).message}` });
    return [];
  }
  const out: (Partial<BuildReport> & { variants: VariantReport[] })[] = [];
  for (const run of runs) {
    const f = join(logsDir, run, "report.json");
    if (!existsSync(f)) continue;
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(f, "utf8"));
    } catch (e) {
      onSkip({ file: f, why: e instanceof SyntaxError ? `not JSON (${e.message})` : (e as Error).message });
      continue;
    }
    const problem = reportShapeProblem(value);
    if (problem !== null) onSkip({ file: f, why: problem });
    else out.push(value as Partial<BuildReport> & { variants: VariantReport[] });
  }
  return out;
}

/**
 * One warning line for the earlier reports left out (readReports), for stderr; null when none was.
 * @param shown how to print a path (e.g. relative to the current directory)
 */
export function skippedReportsWarning(skipped: readonly SkippedReport[], shown: (file: string) => string = (f) => f): string | null {
  if (skipped.length === 0) return null;
  const list = skipped.map((s) => `${shown(s.file)} (${s.why})`).join("; ");
  return `warning: ${skipped.length === 1 ? "an earlier report was" : `${skipped.length} earlier reports were`} left out of the build history, so no estimate comes from ${skipped.length === 1 ? "it" : "them"}: ${list}\n`;
}

/**
 * The builds an earlier report says really happened here: status `built` with a positive duration, and an output
 * built in that run (not substituted from a cache or already present: those durations say nothing about a build),
 * at least the model's floor for its package (plan.ts historyFloor: a 5-second stand-in of torch is no torch build).
 * Both the plan's estimates (durationsFromReports) and the fleet cost model (fleet/cost.ts) count exactly these.
 */
export function realBuilds(r: Partial<BuildReport>): VariantReport[] {
  return (Array.isArray(r.variants) ? r.variants : []).filter(
    (v) =>
      typeof v === "object" && v !== null && typeof v.name === "string" &&
      v.status === "built" && typeof v.durationS === "number" && Number.isFinite(v.durationS) && v.durationS > 0 && (!v.origin || v.origin === "built") &&
      v.durationS >= historyFloor(v.package, v.check !== undefined || v.name.startsWith("check-")),
  );
}

/**
 * Durations of earlier builds (readReports, realBuilds): runs in id order, so the newest wins.
 * @param onSkip called for each report left out (readReports)
 * @returns name → seconds (finite, > 0); empty when there are no reports.
 */
export function durationsFromReports(logsDir: string, onSkip?: (s: SkippedReport) => void): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of readReports(logsDir, onSkip)) for (const v of realBuilds(r)) out.set(v.name, v.durationS);
  return out;
}

/**
 * What the earlier reports under a logs directory give (`read`: durations for build, samples for fleet); a foreign or
 * damaged report is left out with one warning through `warn` (skippedReportsWarning), never an error.
 * @param shown how a skipped file's path is shown
 */
export function readEarlierReports<T>(read: (onSkip: (s: SkippedReport) => void) => T, warn: (text: string) => void, shown?: (file: string) => string): T {
  const skipped: SkippedReport[] = [];
  const out = read((x) => skipped.push(x));
  const warning = skippedReportsWarning(skipped, shown);
  if (warning) warn(warning);
  return out;
}

/** Seconds as "1h02m", "3m05s" or "4.2s"; "unknown" for a value that is no finite number (never "NaNhNaNm"). */
export function formatDuration(s: number): string {
  if (!Number.isFinite(s)) return "unknown";
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** Bytes for people: "812.4 MB", "1.3 GB", "4.1 kB" (powers of 1000, as `nix path-info -h` does not: said here). */
function formatBytes(n: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  let x = n;
  while (x >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  return i === 0 ? `${n} B` : `${x.toFixed(1)} ${units[i]}`;
}

/** What unproven says for a variant built without its static check. */
export const NOT_CHECKED = "not checked (--no-verify)";

/** The broken promises a check's log names: its report.txt's ✗ lines (pkgs/checks.nix prints report.txt), each once, in order. */
export function brokenPromises(log: string): string[] {
  const out: string[] = [];
  for (const line of log.split("\n")) {
    const l = line.trim();
    if (l.startsWith("✗ ") && !out.includes(l)) out.push(l);
  }
  return out;
}

/** The most broken promises a variant's reason quotes; the rest are counted ("and 3 more: see LOG"). */
const PROMISES_QUOTED = 5;

/**
 * Each variant's proof from its static check's entry (pure; changes `entries`): a check that passed (built or built
 * before) is the variant's proof (its output, and the link `proofLink(check)` it left); a failed check fails the
 * variant, its reason the broken promises (`broken(check)`: brokenPromises of the check's log), or the check's own
 * reason when its log names none (the probe could not run); a check that did not run, or none (--no-verify: `verified`
 * false), leaves it unproven with why. A variant that was not built is unproven, "not built". Check entries get no
 * proof fields.
 * @param entries the run's entries, variants and checks alike
 * @param o.broken the broken promises of a failed check's entry; o.proofLink where a passed check's link is
 */
export function proveVariants(
  entries: VariantReport[],
  o: { broken: (check: VariantReport) => string[]; proofLink: (check: VariantReport) => string },
): void {
  const checks = new Map(entries.filter((e) => e.check?.kind === "static").map((e) => [e.check!.of, e]));
  for (const v of entries) {
    if (v.check) continue;
    const c = checks.get(v.name);
    v.proof = null;
    v.proofLink = null;
    if (v.status !== "built" && v.status !== "cached") v.unproven = "not built";
    else if (!c) v.unproven = NOT_CHECKED;
    else if (c.status === "built" || c.status === "cached") {
      v.proof = c.outPath;
      v.proofLink = c.outPath ? o.proofLink(c) : null;
      v.unproven = c.outPath ? null : `its static check ${c.name} left no result link`;
    } else if (c.status === "failed") {
      const broken = o.broken(c);
      const quoted = broken.slice(0, PROMISES_QUOTED).join("; ");
      const more = broken.length > PROMISES_QUOTED ? `; and ${broken.length - PROMISES_QUOTED} more${c.log ? ` (${c.log})` : ""}` : "";
      v.unproven = `its static check ${c.name} failed: ${broken.length ? quoted + more : (c.reason ?? "no reason given")}`;
      // The broken promise fails the variant itself: its output is there, but it is not what its name promises.
      v.status = "failed";
      v.reason = broken.length ? `a promise does not hold: ${quoted}${more}` : `its static check failed: ${c.reason ?? "no reason given"}`;
    } else v.unproven = `its static check did not run: ${c.reason ?? "not started"}`;
  }
}

/**
 * The summary's last lines about proofs: each proven variant with its proof's link and store path, each unproven one
 * with why; the variants left unproven by --no-verify in one line. [] for a report without proof fields (older ones).
 * @param shown how a path is shown (e.g. relative to the current directory)
 */
export function proofLines(report: BuildReport, shown: (file: string) => string = (f) => f): string[] {
  const vs = report.variants.filter((v) => !v.check && v.proof !== undefined);
  const unchecked = vs.filter((v) => v.unproven === NOT_CHECKED).map((v) => v.name);
  return [
    ...vs.filter((v) => v.proof).map((v) => `proof of ${v.name}: ${v.proofLink ? `${shown(v.proofLink)} -> ` : ""}${v.proof}`),
    ...vs.filter((v) => !v.proof && v.unproven !== NOT_CHECKED).map((v) => `unproven: ${v.name}: ${v.unproven}`),
    ...(unchecked.length ? [`unproven (built without their static checks, --no-verify): ${unchecked.join(", ")}`] : []),
  ];
}

/** The closing summary: a table of every variant, then counts. Plain text, no colour. */
export function summaryTable(report: BuildReport): string {
  const rows = report.variants.map((v) => [
    v.name,
    v.status,
    v.status === "built" || v.status === "failed" ? formatDuration(v.durationS) : "",
    v.attempts > 0 ? String(v.attempts) : "",
    v.closureSize != null ? formatBytes(v.closureSize) : "",
    v.origin === "built" ? `built on ${v.machine}` : v.origin === "substituted" ? `from ${v.machine}` : v.origin ?? "",
    [v.reason, v.copyError ? `push to ${v.copiedTo ?? "cache"} failed: ${v.copyError}` : v.copiedTo ? `pushed to ${v.copiedTo}` : null]
      .filter(Boolean)
      .join("; "),
  ]);
  const head = ["VARIANT", "STATUS", "TIME", "TRIES", "CLOSURE", "WHERE", "REASON"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  const counts = (["built", "cached", "failed", "skipped"] as const)
    .map((s) => `${report.variants.filter((v) => v.status === s).length} ${s}`)
    .join(", ");
  // The variants (not their checks) proven and not (reports with proof fields).
  const judged = report.variants.filter((v) => !v.check && v.proof !== undefined);
  const proven = judged.length ? ` (${judged.filter((v) => v.proof).length} proven, ${judged.filter((v) => !v.proof).length} unproven)` : "";
  const took = (Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000;
  return [
    line(head),
    ...rows.map(line),
    "",
    `${counts}${proven} in ${formatDuration(took)}${report.interrupted ? " (interrupted)" : ""}${report.driverError ? " (stopped by an error of the driver)" : ""}; exit ${report.exitCode}`,
  ].join("\n");
}
