#!/usr/bin/env node
// `npm test`: every tests/*.test.ts file under uvu (`uvu -r tsx tests PATTERN`), N processes at a time (N = this
// machine's available cores plus one; `--jobs N` or VM_TEST_JOBS to choose), so a 2-core CI machine keeps both cores
// busy while a test waits on a build, a sleep or a child (the suite's CPU is about 0.9 of its files' summed wall
// time). On the 2-core machine, 2026-11-28, one run each with the same cached times: --jobs 3 took 333 s, --jobs 2
// 359 s, at the same CPU (632 and 638 s). A slow file (≥ SOLO_SECONDS by the last run's times, or named in SLOW_FIRST) runs in a uvu process of its own;
// quick files share processes, a few at a time (batches of about BATCH_SECONDS), because starting uvu, tsx and the
// generator's modules costs a quick file more than its tests (20 quick files: 45 CPU s one process each, 18 CPU s in
// one; tests/run.mjs of 2026-11-28). Each file still runs alone, as `npx uvu -r tsx tests '^FILE$'` runs it, and
// `--solo` runs every file that way.
//
// Prints one line per file as it ends (✓/✗, its tests, its time: a batched file's time is its tests' run, from its
// suite's first line to the next, plus a share of loading them), the whole output of a process in which a file failed, then uvu's own closing lines
// summed over the files (`Total:`, `Passed:`, `Skipped:`, `Duration:`; .ci/run reads them). A file that ends without
// uvu's count (it crashed while loading, or its process did) counts as one failed test. Exit status 1 when any file
// failed, 130/143 when interrupted.
//
// Usage: node tests/run.mjs [--jobs N] [--solo] [PATTERN]   (PATTERN: a regular expression on file names, as uvu's)
//
// Scheduling only (results never depend on it): the longest files start first, from the times of earlier runs on this
// checkout (node_modules/.cache/variant-matrix/test-times.json), else the files named in SLOW_FIRST.
// Plain JavaScript: it starts before tsx.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pLimit from "p-limit";
import { ensureDist } from "../bin/build-dist.mjs";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const TESTS = join(ROOT, "tests");
const UVU = join(ROOT, "node_modules/uvu/bin.js");
const TIMES = join(ROOT, "node_modules/.cache/variant-matrix/test-times.json");
/** Files that took 10 s or more on a 2-core machine (a full run of 2026-11-28, longest first): alone and first when no times are cached. */
const SLOW_FIRST = ["build", "cache", "install", "generate-interrupt", "device-code", "ci", "output-files", "build-log-memory", "checker-facts", "nix-contract", "pin", "cuda-extensions", "build-errors", "doctor", "project-cache", "one-torch", "newcomer", "isa-features", "verify-fast", "scale-out", "install-cause", "compiled", "flox", "surface", "eval", "terminal-safe", "eval-first", "publish", "environments", "install-places"];

/** A file whose last time (seconds) is at least this runs in a process of its own. */
const SOLO_SECONDS = 10;
/** Quick files share a process up to about this many seconds of their last times. */
const BATCH_SECONDS = 25;
/** The time assumed for a file with none recorded (seconds). */
const UNKNOWN_SECONDS = 4;

/** Options from argv: --jobs N (or VM_TEST_JOBS), --solo and an optional file-name pattern. */
function options(argv) {
  let jobs = Number(process.env.VM_TEST_JOBS || 0) || availableParallelism() + 1;
  let pattern = /\.test\.ts$/;
  let solo = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--solo") solo = true;
    else if (argv[i] === "--jobs") {
      jobs = Number(argv[++i]);
      if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs: "${argv[i]}" is not a whole number of at least 1`);
    } else pattern = new RegExp(argv[i]);
  }
  return { jobs, pattern, solo };
}

/** The times of earlier runs (file → seconds), or none. */
function readTimes() {
  try {
    return JSON.parse(readFileSync(TIMES, "utf8"));
  } catch {
    return {}; // first run on this checkout
  }
}

/**
 * The processes to run, longest first: each a list of files. A slow file (or every file, `solo`) is a list of one;
 * quick files are packed into lists of about BATCH_SECONDS, at least `jobs` of them when there are that many files.
 */
function schedule(pattern, times, { jobs, solo }) {
  const files = readdirSync(TESTS).filter((f) => f.endsWith(".test.ts") && pattern.test(f)).sort();
  const base = (f) => f.replace(/\.test\.ts$/, "");
  const slowRank = (f) => (SLOW_FIRST.includes(base(f)) ? 1e6 - SLOW_FIRST.indexOf(base(f)) : null);
  const time = (f) => times[f] ?? slowRank(f) ?? UNKNOWN_SECONDS;
  const byTime = files.sort((a, b) => time(b) - time(a) || (a < b ? -1 : 1));
  const alone = solo ? byTime : byTime.filter((f) => time(f) >= SOLO_SECONDS);
  const quick = byTime.filter((f) => !alone.includes(f));
  const total = quick.reduce((a, f) => a + time(f), 0);
  const count = Math.min(quick.length, Math.max(jobs, Math.ceil(total / BATCH_SECONDS)));
  // Longest first into the batch with the least time so far.
  const batches = Array.from({ length: count }, () => ({ files: [], seconds: 0 }));
  for (const f of quick) {
    const b = batches.reduce((m, x) => (x.seconds < m.seconds ? x : m));
    b.files.push(f);
    b.seconds += time(f);
  }
  const units = [...alone.map((f) => ({ files: [f], seconds: time(f) })), ...batches.filter((b) => b.files.length)];
  return units.sort((a, b) => b.seconds - a.seconds).map((u) => u.files.sort());
}

/**
 * The test processes' environment: this one's, with Nix offline. Nothing downloads at test time, and on a machine
 * without network every nix-build and nix-store --realise that may substitute waited about 5 s for the default
 * substituter (cache.nixos.org) to fail: `substituters =` (NIX_CONFIG holds nix.conf lines, after the user's own)
 * makes them ask none. A test that means a substituter names it (team-cache, install-cause); a file run alone without
 * this runner passes the same, only slower.
 */
const TEST_ENV = { ...process.env, NIX_CONFIG: `${process.env.NIX_CONFIG ? `${process.env.NIX_CONFIG}\n` : ""}substituters =` };

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
const children = new Set();

/**
 * Run `files` in one uvu process; resolves with each file's counts and time, and the process' output. uvu loads every
 * file, then runs their suites in name order, each starting with a line that is the file's name: a file's time is from
 * its line to the next file's (or the closing counts), and its counts are the "(passed / total)" on its line of dots.
 */
function runFiles(files) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const escaped = files.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const child = spawn(process.execPath, [UVU, "-r", "tsx", "tests", `^(${escaped.join("|")})$`], { cwd: ROOT, env: TEST_ENV, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let out = "";
    const started = new Map();
    let pending = "";
    child.stdout.on("data", (d) => {
      out += d;
      pending += d;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const l of lines) {
        const name = strip(l).trim();
        if (files.includes(name) && !started.has(name)) started.set(name, Date.now());
        else if (/^Total:/.test(name)) started.set("(end)", Date.now());
      }
    });
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code, signal) => {
      children.delete(child);
      const end = Date.now();
      resolve({ files: perFile(files, strip(out), { started, t0, end }), code, signal, seconds: (end - t0) / 1000, out });
    });
  });
}

/**
 * Each file's counts and seconds from a uvu process' plain output and the times its suites' lines appeared. A file
 * alone: uvu's closing counts. Files together: the "(passed / total)" that ends a line of its part of the output (from
 * its name's line to the next file's, or the closing counts; a test may print lines between the dots).
 */
function perFile(files, plain, { started, t0, end }) {
  const marks = [...started.entries()].sort((a, b) => a[1] - b[1]);
  const heads = files.map((f) => plain.search(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m")));
  const closing = plain.search(/^\s*Total:/m);
  return files.map((file, k) => {
    let passed = 0;
    let total = 1;
    let skipped = 0;
    if (files.length === 1) {
      const count = (label) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(plain)?.[1] ?? NaN);
      if (!Number.isNaN(count("Total"))) [total, passed, skipped] = [count("Total"), count("Passed"), count("Skipped")];
    } else if (heads[k] >= 0) {
      const next = [...heads.filter((h) => h > heads[k]), closing >= 0 ? closing : plain.length].sort((a, b) => a - b)[0];
      const c = /\(\s*(\d+)\s*\/\s*(\d+)\s*\)\s*$/m.exec(plain.slice(heads[k], next));
      if (c) [passed, total] = [Number(c[1]), Number(c[2])];
    }
    const i = marks.findIndex(([n]) => n === file);
    // Loading the files (before the first suite's line) is shared out evenly: a file may do its slow part at load.
    const loading = ((marks[0]?.[1] ?? end) - t0) / files.length;
    const seconds = (files.length === 1 ? end - t0 : loading + (i < 0 ? 0 : (marks[i + 1]?.[1] ?? end) - marks[i][1])) / 1000;
    return { file, ok: passed + skipped === total && total > 0, total, passed, skipped, seconds };
  });
}

async function main() {
  const opts = options(process.argv.slice(2));
  const times = readTimes();
  const units = schedule(opts.pattern, times, opts);
  if (units.length === 0) throw new Error(`no test file matches ${opts.pattern}`);
  const t0 = Date.now();
  // One bundle for every test process's CLI runs, built before they start (bin/build-dist.mjs).
  await ensureDist({ log: (l) => process.stdout.write(`${l}\n`) });
  const fileCount = units.reduce((a, u) => a + u.length, 0);
  process.stdout.write(`${fileCount} test files in ${units.length} processes, ${opts.jobs} at a time\n`);
  const limit = pLimit(opts.jobs);
  const results = (await Promise.all(units.map((u) => limit(() => runUnit(u))))).flat();
  const sum = (k) => results.reduce((a, r) => a + r[k], 0);
  try {
    mkdirSync(dirname(TIMES), { recursive: true });
    writeFileSync(TIMES, JSON.stringify({ ...times, ...Object.fromEntries(results.map((r) => [r.file, r.seconds])) }, null, 1));
  } catch {
    /* the times only order the next run */
  }
  const failed = results.filter((r) => !r.ok).map((r) => r.file);
  if (failed.length) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
  process.stdout.write(`\n  Total:     ${sum("total")}\n  Passed:    ${sum("passed")}\n  Skipped:   ${sum("skipped")}\n  Duration:  ${Date.now() - t0}ms\n\n`);
  process.exitCode = failed.length ? 1 : 0;
}

/** Run one process' files; print a line per file, and the process' whole output when one of them failed. */
async function runUnit(files) {
  const r = await runFiles(files);
  // A process that failed while every file's count says passed (it crashed after them): its files failed.
  if (r.code !== 0 && r.files.every((f) => f.ok)) for (const f of r.files) f.ok = false;
  for (const f of r.files) {
    const counts = `${f.passed}/${f.total} passed${f.skipped ? `, ${f.skipped} skipped` : ""}`;
    process.stdout.write(`${f.ok ? "✓" : "✗"} ${f.file}  ${counts}  ${f.seconds.toFixed(1)} s\n`);
  }
  if (r.files.some((f) => !f.ok)) process.stdout.write(`${r.out.trimEnd()}\n${r.signal ? `(ended by ${r.signal})\n` : ""}\n`);
  return r.files;
}

// Ctrl-C or a CI timeout ends the test processes too.
for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]])
  process.once(sig, () => {
    for (const c of children) c.kill(sig);
    process.exit(code);
  });

main().catch((e) => {
  process.stderr.write(`tests/run.mjs: error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
});
