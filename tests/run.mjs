#!/usr/bin/env node
// `npm test`: every tests/*.test.ts file under uvu, in N worker processes (N = this machine's available cores plus
// one; `--jobs N` or VM_TEST_JOBS to choose). Each worker (tests/worker.cjs) starts Node, tsx and the modules the tests
// import once, then runs the files it is handed one after another, each as `npx uvu -r tsx tests '^FILE$'` runs it; a
// worker asks for the next file when it ends one, so both cores stay busy to the end. Starting uvu, tsx and the
// generator's modules costs a quick file more than its tests (20 quick files: 45 CPU s one process each, 18 CPU s in
// one; 2026-11-28). `--solo` runs every file in a uvu process of its own instead, as uvu's own command does.
//
// Prints one line per file as it ends (✓/✗, its tests, its seconds from being handed out to its end), the output of a
// file that failed, then uvu's own closing lines summed over the files (`Total:`, `Passed:`, `Skipped:`, `Duration:`;
// .ci/run reads them). A file that ends without uvu's count (it could not load, or its worker died while it ran)
// counts as one failed test; a worker that dies is replaced, and the files it had not started go on. Exit status 1
// when any file failed, 130/143 when interrupted.
//
// Usage: node tests/run.mjs [--jobs N] [--solo] [PATTERN]   (PATTERN: a regular expression on file names, as uvu's)
//
// Scheduling only (results never depend on it): the longest files are handed out first, from the times of earlier
// runs on this checkout (node_modules/.cache/variant-matrix/test-times.json), else the files named in SLOW_FIRST.
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
const WORKER = join(TESTS, "worker.cjs");
/** The line tests/worker.cjs prints after each file's output, `DONE_MARK FILE` (given it in VM_TEST_DONE_MARK). */
const DONE_MARK = "@@vm-test-file-done";
const TIMES = join(ROOT, "node_modules/.cache/variant-matrix/test-times.json");
/**
 * Every file that took 3 s or more on the 2-core machine (a clean clone's `.ci/run` of 2026-11-29, the machine
 * otherwise idle), longest first: the order when no times are cached, as on CI's clean clone. A file of 10 s or more
 * missing here is named after the run (a clean clone would start it late and end on it).
 */
const SLOW_FIRST = ["proof", "project-cache", "build", "signed-cache", "install", "generate-interrupt", "build-proof", "nix-contract", "cache", "ci", "install-places", "scale", "checker-facts", "build-errors", "output-files", "pin", "one-wait", "fleet", "one-torch", "doctor", "verify-fast", "device-code", "cuda-extensions", "flox", "compiled", "publish", "newcomer", "isa-features", "scale-out", "release", "arguments", "team-cache", "environments", "build-log-memory", "verify-proof", "surface", "read-only", "eval", "terminal-safe", "recorded-plan", "pins", "cli-startup", "verify", "generated-state", "eval-first", "process-module", "signals", "install-cause", "generate", "options", "silent-builder", "failure-cause", "vllm", "recorded-host", "detect", "stale-matrix", "function-length", "generated-strings", "output-lock", "install-plan", "load-matrix", "real-builds", "comment-names", "flake"];
/** A file that took this long (seconds) and is not in SLOW_FIRST is named after the run. */
const SLOW_SECONDS = 10;
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

/** The files matching `pattern`, longest first (by `times`, else SLOW_FIRST's order, else UNKNOWN_SECONDS). */
function ordered(pattern, times) {
  const files = readdirSync(TESTS).filter((f) => f.endsWith(".test.ts") && pattern.test(f)).sort();
  const base = (f) => f.replace(/\.test\.ts$/, "");
  const slowRank = (f) => (SLOW_FIRST.includes(base(f)) ? 1e6 - SLOW_FIRST.indexOf(base(f)) : null);
  const time = (f) => times[f] ?? slowRank(f) ?? UNKNOWN_SECONDS;
  return files.sort((a, b) => time(b) - time(a) || (a < b ? -1 : 1));
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
 * One file's result from its plain uvu output (a file alone: uvu's closing counts). No counts (it could not load, or
 * its process died): one failed test.
 */
function counted(file, plain, seconds) {
  const count = (label) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(plain)?.[1] ?? NaN);
  let [total, passed, skipped] = [1, 0, 0];
  if (!Number.isNaN(count("Total"))) [total, passed, skipped] = [count("Total"), count("Passed"), count("Skipped")];
  return { file, ok: passed + skipped === total && total > 0, total, passed, skipped, seconds };
}

/** Print a file's line, and its whole output when it failed. */
function report(r, out, why = "") {
  const counts = `${r.passed}/${r.total} passed${r.skipped ? `, ${r.skipped} skipped` : ""}`;
  process.stdout.write(`${r.ok ? "✓" : "✗"} ${r.file}  ${counts}  ${r.seconds.toFixed(1)} s\n`);
  if (!r.ok) process.stdout.write(`${out.trimEnd()}\n${why}\n`);
}

/** Run one file in a uvu process of its own (`--solo`); resolves with its result. */
function runSolo(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const child = spawn(process.execPath, [UVU, "-r", "tsx", "tests", `^${escaped}$`], { cwd: ROOT, env: TEST_ENV, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code, signal) => {
      children.delete(child);
      const r = counted(file, strip(out), (Date.now() - t0) / 1000);
      if (code !== 0) r.ok = false; // it failed after its counts (a crash, an exit hook)
      report(r, out, signal ? `(ended by ${signal})\n` : "");
      resolve(r);
    });
  });
}

/**
 * Run `queue` (consumed from the front) in one worker process until it is empty; resolves with the results of the
 * files this worker ran. A worker that dies while running a file fails that file, and a new worker goes on.
 */
function runWorker(queue) {
  return new Promise((resolve) => {
    const results = [];
    const child = spawn(process.execPath, [WORKER], { cwd: ROOT, env: { ...TEST_ENV, VM_TEST_DONE_MARK: DONE_MARK }, stdio: ["pipe", "pipe", "pipe"] });
    children.add(child);
    let current = null;
    let t0 = 0;
    let out = "";
    let pending = "";
    const next = () => {
      current = queue.shift() ?? null;
      out = "";
      t0 = Date.now();
      if (current === null) child.stdin.end();
      else child.stdin.write(`${current}\n`);
    };
    child.stdin.on("error", () => {}); // a worker that died: "close" says so
    child.stdout.on("data", (d) => {
      pending += d;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const l of lines) {
        if (current !== null && l === `${DONE_MARK} ${current}`) {
          const r = counted(current, strip(out), (Date.now() - t0) / 1000);
          report(r, out);
          results.push(r);
          next();
        } else out += `${l}\n`;
      }
    });
    child.stderr.on("data", (d) => (out += d));
    child.on("close", async (code, signal) => {
      children.delete(child);
      if (current !== null) {
        out += pending;
        const r = counted(current, strip(out), (Date.now() - t0) / 1000);
        r.ok = false;
        report(r, out, `(its worker ended ${signal ? `by ${signal}` : `with exit status ${code}`} before the file did)\n`);
        results.push(r);
        if (queue.length > 0 && !interrupted) results.push(...(await runWorker(queue)));
      }
      resolve(results);
    });
    next();
  });
}

let interrupted = false;

async function main() {
  const opts = options(process.argv.slice(2));
  const times = readTimes();
  const files = ordered(opts.pattern, times);
  if (files.length === 0) throw new Error(`no test file matches ${opts.pattern}`);
  const t0 = Date.now();
  // One bundle for every test process's CLI runs, built before they start (bin/build-dist.mjs).
  await ensureDist({ log: (l) => process.stdout.write(`${l}\n`) });
  const jobs = Math.min(opts.jobs, files.length);
  process.stdout.write(`${files.length} test files in ${opts.solo ? `a process each, ${jobs}` : `${jobs} worker processes`} at a time\n`);
  let results;
  if (opts.solo) {
    const limit = pLimit(jobs);
    results = await Promise.all(files.map((f) => limit(() => runSolo(f))));
  } else {
    const queue = [...files];
    results = (await Promise.all(Array.from({ length: jobs }, () => runWorker(queue)))).flat();
  }
  const sum = (k) => results.reduce((a, r) => a + r[k], 0);
  try {
    mkdirSync(dirname(TIMES), { recursive: true });
    writeFileSync(TIMES, JSON.stringify({ ...times, ...Object.fromEntries(results.map((r) => [r.file, r.seconds])) }, null, 1));
  } catch {
    /* the times only order the next run */
  }
  const unlisted = results.filter((r) => r.seconds >= SLOW_SECONDS && !SLOW_FIRST.includes(r.file.replace(/\.test\.ts$/, "")));
  for (const r of unlisted) process.stdout.write(`note: ${r.file} took ${r.seconds.toFixed(0)} s and is not in SLOW_FIRST (tests/run.mjs): a run without cached times starts it late\n`);
  const failed = results.filter((r) => !r.ok).map((r) => r.file);
  if (failed.length) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
  process.stdout.write(`\n  Total:     ${sum("total")}\n  Passed:    ${sum("passed")}\n  Skipped:   ${sum("skipped")}\n  Duration:  ${Date.now() - t0}ms\n\n`);
  process.exitCode = failed.length ? 1 : 0;
}

// Ctrl-C or a CI timeout ends the test processes too.
for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]])
  process.once(sig, () => {
    interrupted = true;
    for (const c of children) c.kill(sig);
    process.exit(code);
  });

main().catch((e) => {
  process.stderr.write(`tests/run.mjs: error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
});
