#!/usr/bin/env node
// `npm test`: every tests/*.test.ts file in its own uvu process (`uvu -r tsx tests ^FILE$`, as `npm test` ran them
// one after another before), N files at a time (N = this machine's available cores, at least 2; `--jobs N` or
// VM_TEST_JOBS to choose), so a 2-core CI machine keeps both cores busy. Each file still runs alone, as
// `npx uvu -r tsx tests '^FILE$'` runs it.
//
// Prints one line per file as it ends (✓/✗, its tests, its time), the whole output of a file that failed, then uvu's
// own closing lines summed over the files (`Total:`, `Passed:`, `Skipped:`, `Duration:`; .ci/run reads them). A file
// that ends without uvu's summary (it crashed while loading) counts as one failed test. Exit status 1 when any file
// failed, 130/143 when interrupted.
//
// Usage: node tests/run.mjs [--jobs N] [PATTERN]   (PATTERN: a regular expression on file names, as uvu's)
//
// Scheduling only (results never depend on it): the longest files start first, from the times of the last run on this
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
/** Files that took longest on a 2-core machine (a full run of 2026-11-28, longest first): started first when no times are cached. */
const SLOW_FIRST = ["device-code", "matrix-messages", "nix-contract", "eval", "generate-interrupt", "install", "cuda-extensions", "isa-features", "install-places", "one-torch", "cache", "build"];

/** Options from argv: --jobs N (or VM_TEST_JOBS) and an optional file-name pattern. */
function options(argv) {
  let jobs = Number(process.env.VM_TEST_JOBS || 0) || Math.max(2, availableParallelism());
  let pattern = /\.test\.ts$/;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--jobs") {
      jobs = Number(argv[++i]);
      if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs: "${argv[i]}" is not a whole number of at least 1`);
    } else pattern = new RegExp(argv[i]);
  }
  return { jobs, pattern };
}

/** The files to run, longest first (cached times, else SLOW_FIRST, else by name). */
function schedule(pattern) {
  const files = readdirSync(TESTS).filter((f) => f.endsWith(".test.ts") && pattern.test(f)).sort();
  let times = {};
  try {
    times = JSON.parse(readFileSync(TIMES, "utf8"));
  } catch {
    /* first run on this checkout */
  }
  const rank = (f) => times[f] ?? (SLOW_FIRST.includes(f.replace(/\.test\.ts$/, "")) ? 1e6 - SLOW_FIRST.indexOf(f.replace(/\.test\.ts$/, "")) : 0);
  return files.sort((a, b) => rank(b) - rank(a) || (a < b ? -1 : 1));
}

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
const children = new Set();

/** Run one file in its own uvu process; resolves with its counts, time and output. */
function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const child = spawn(process.execPath, [UVU, "-r", "tsx", "tests", `^${escaped}$`], { cwd: ROOT, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code, signal) => {
      children.delete(child);
      const plain = strip(out);
      const count = (label) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(plain)?.[1] ?? NaN);
      let [total, passed, skipped] = [count("Total"), count("Passed"), count("Skipped")];
      // No summary: the file crashed before its tests ran (or was killed): one failed test.
      if (Number.isNaN(total)) [total, passed, skipped] = [1, 0, 0];
      const ok = code === 0 && passed + skipped === total;
      resolve({ file, ok, code, signal, total, passed, skipped, seconds: (Date.now() - t0) / 1000, out });
    });
  });
}

async function main() {
  const { jobs, pattern } = options(process.argv.slice(2));
  const files = schedule(pattern);
  if (files.length === 0) throw new Error(`no test file matches ${pattern}`);
  const t0 = Date.now();
  // One bundle for every test process's CLI runs, built before they start (bin/build-dist.mjs).
  await ensureDist({ log: (l) => process.stdout.write(`${l}\n`) });
  process.stdout.write(`${files.length} test files, ${jobs} at a time\n`);
  const limit = pLimit(jobs);
  const results = await Promise.all(
    files.map((f) =>
      limit(async () => {
        const r = await runFile(f);
        const counts = `${r.passed}/${r.total} passed${r.skipped ? `, ${r.skipped} skipped` : ""}`;
        process.stdout.write(`${r.ok ? "✓" : "✗"} ${f}  ${counts}  ${r.seconds.toFixed(1)} s\n`);
        if (!r.ok) process.stdout.write(`${r.out.trimEnd()}\n${r.signal ? `(ended by ${r.signal})\n` : ""}\n`);
        return r;
      }),
    ),
  );
  const sum = (k) => results.reduce((a, r) => a + r[k], 0);
  try {
    mkdirSync(dirname(TIMES), { recursive: true });
    writeFileSync(TIMES, JSON.stringify(Object.fromEntries(results.map((r) => [r.file, r.seconds])), null, 1));
  } catch {
    /* the times only order the next run */
  }
  const failed = results.filter((r) => !r.ok).map((r) => r.file);
  if (failed.length) process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
  process.stdout.write(`\n  Total:     ${sum("total")}\n  Passed:    ${sum("passed")}\n  Skipped:   ${sum("skipped")}\n  Duration:  ${Date.now() - t0}ms\n\n`);
  process.exitCode = failed.length ? 1 : 0;
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
