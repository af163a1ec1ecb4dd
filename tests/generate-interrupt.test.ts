/**
 * `generate` is all or nothing per file, and an interrupted run never leaves a tree that a rerun cannot mend: it is
 * killed (SIGKILL) at 7 to 40 moments of a run that rewrites 300+ files (until 5 kills have landed mid-write),
 * interrupted (SIGINT) mid-write (tried again, up to a cap, until the signal lands while it writes), and run twice at
 * once, and each time the next `generate` brings the output to exactly what the matrix gives, byte for byte against a
 * tree generated from scratch, with no empty, stray or temporary file, and `generate --check` agrees. The runs that
 * are killed or interrupted are real child processes of the compiled CLI (the launcher); the others run in-process.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const BIN = join(ROOT, "bin/variant-matrix.js");
const ENV = { ...process.env, NO_COLOR: "1", COLUMNS: "400" };
/**
 * A generate that runs to its end, in this process (runMain: main's own exit status and output, no Node start-up);
 * the runs that are killed or interrupted, and the two at once, are child processes of the launcher.
 */
const gen = (args: string[]) => runMain(["generate", ...args]);

/** Two matrices far apart: B drops CUDA 12.8 and AVX2 and adds Python 3.12, so a run from A to B writes 300+ files and removes 100+. */
const A = {
  releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
  python: ["3.13"],
  cuda: ["12.8", "12.9", "13.0"],
  gpus: ["75", "80", "86", "89", "90", "100", "103", "110", "120", "121"],
  isas: ["avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"],
  cpuOnly: true,
};
const B = { ...A, python: ["3.12", "3.13"], cuda: ["12.9", "13.0"], isas: ["avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"] };

/** Every file below `dir`: repo-relative path → content. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

/** Assert `dir` holds exactly the files of `ref` with the same contents (nothing more, nothing less). */
function assertSameTree(dir: string, ref: Map<string, string>, what: string) {
  const got = tree(dir);
  const extra = [...got.keys()].filter((k) => !ref.has(k));
  const missing = [...ref.keys()].filter((k) => !got.has(k));
  const differ = [...ref.keys()].filter((k) => got.has(k) && got.get(k) !== ref.get(k));
  assert.equal({ extra: extra.slice(0, 5), missing: missing.slice(0, 5), differ: differ.slice(0, 5) }, { extra: [], missing: [], differ: [] }, what);
}

/** True when two trees hold the same files with the same contents. */
const same = (x: Map<string, string>, y: Map<string, string>) => x.size === y.size && [...x].every(([k, v]) => y.get(k) === v);

/**
 * Run generate of `matrix` into `out` in a child, watching `.flox/pkgs` every few ms for the first write (a
 * temporary or a file that was not there). Without `kill`, it runs to the end and the times are measured: with
 * `endNames` (the names `.flox/pkgs` holds once the rewrite is done), the writes end when the directory holds exactly
 * those names and no temporary (stale files go last), not when the process exits (its stamp, the untracked-files
 * warning and Node's exit come after: kills there never land mid-write). With `afterStartMs` it is killed (SIGKILL)
 * that long after it started; with `afterNewNames` once `.flox/pkgs` holds that many names it did not hold before
 * (the rewrite's progress, whatever the machine's speed or load).
 * @returns ms from the start to the first write, and from the first write to the last (or the end, or the kill)
 */
async function timedRun(matrix: string, out: string, kill: { afterStartMs?: number; afterNewNames?: number } = {}, endNames?: ReadonlySet<string>) {
  const pkgs = join(out, ".flox/pkgs");
  const before = new Set(readdirSync(pkgs));
  const t0 = Date.now();
  const child = spawn(process.execPath, [BIN, "generate", "--matrix", matrix, "--out", out], { env: ENV, stdio: "ignore" });
  let exited = false;
  const closed = new Promise<number | null>((res) => child.on("close", (code) => ((exited = true), res(code))));
  if (kill.afterStartMs !== undefined) {
    await new Promise((r) => setTimeout(r, kill.afterStartMs));
    child.kill("SIGKILL");
    await closed;
    return { writesStartMs: 0, writeMs: 0 };
  }
  let tw = 0;
  while (!exited && !tw) {
    if (readdirSync(pkgs).some((n) => n.includes("vm-tmp") || !before.has(n))) tw = Date.now();
    else await new Promise((r) => setTimeout(r, 2));
  }
  if (kill.afterNewNames !== undefined) {
    while (!exited && readdirSync(pkgs).filter((n) => !n.includes("vm-tmp") && !before.has(n)).length < kill.afterNewNames) await new Promise((r) => setTimeout(r, 1));
    child.kill("SIGKILL");
  }
  let te = 0;
  while (endNames && !exited && !te) {
    const names = readdirSync(pkgs);
    if (names.length === endNames.size && names.every((n) => endNames.has(n))) te = Date.now();
    else await new Promise((r) => setTimeout(r, 2));
  }
  const code = await closed;
  if (kill.afterNewNames === undefined) assert.is(code, 0);
  assert.ok(tw > 0, "the run wrote into .flox/pkgs");
  return { writesStartMs: tw - t0, writeMs: (te || Date.now()) - tw };
}

/** Reference trees: each matrix generated into an empty directory, its matrix file outside the output. */
async function reference(body: unknown): Promise<Map<string, string>> {
  const m = writeMatrix(tempDir("vm-int-m-"), body);
  const out = tempDir("vm-int-ref-");
  const r = await gen(["--matrix", m, "--out", out]);
  assert.is(r.status, 0, r.stderr);
  return tree(out);
}

test("SIGKILL at moments of a 300+ file rewrite until 5 land mid-write, then generate: exactly the matrix's files, --check passes", async () => {
  const refA = await reference(A);
  const refB = await reference(B);
  // The matrix lives outside the output, at one path the test rewrites (as `git checkout matrix.ts` would).
  const mdir = tempDir("vm-int-matrix-");
  const matrix = join(mdir, "matrix.ts");
  const out = tempDir("vm-int-out-");
  const setMatrix = (body: unknown) => writeMatrix(mdir, body);
  setMatrix(A);
  assert.is((await gen(["--matrix", matrix, "--out", out])).status, 0);
  // What an interrupted older version left: an empty wrapper and a temporary beside a generated file.
  writeFileSync(join(out, ".flox/pkgs/pytorch-python313-cuda12_8-sm90-avx2-old.nix"), "");
  writeFileSync(join(out, "flake.nix.tmp-4242"), "{");
  const check0 = await gen(["--check", "--matrix", matrix, "--out", out]);
  assert.is(check0.status, 1, "--check sees the empty file and the temporary");
  assert.match(check0.stderr, /stale: \.flox\/pkgs\/pytorch-python313-cuda12_8-sm90-avx2-old\.nix/);
  assert.match(check0.stderr, /temporary: flake\.nix\.tmp-4242/);
  // When the writes of an A → B rewrite start (the first temporary or new wrapper appears): BEFORE kills land before
  // that, then kills at points of the rewrite's progress spread over it (the number of new wrappers written, in
  // golden-ratio steps of those the rewrite adds) until MID_WRITE of them have left a half-written tree, at least
  // MIN_KILLS in all, at most MAX_KILLS (a kill may still come after the last write: the child can run ahead of the
  // watcher).
  setMatrix(B);
  const pkgsOf = (ref: Map<string, string>) => new Set([...ref.keys()].filter((k) => k.startsWith(".flox/pkgs/")).map((k) => k.slice(".flox/pkgs/".length)));
  const calib = await timedRun(matrix, out, {}, pkgsOf(refB));
  assertSameTree(out, refB, "a whole run mends what an older version left");
  const [BEFORE, MIN_KILLS, MID_WRITE, MAX_KILLS] = [2, 7, 5, 40];
  let midWrite = 0;
  let i = 0;
  for (; i < MAX_KILLS && (i < MIN_KILLS || midWrite < MID_WRITE); i++) {
    // Start from the other matrix's tree, kill a run towards this one.
    const [from, to, refTo, refFrom] = i % 2 === 0 ? [A, B, refB, refA] : [B, A, refA, refB];
    setMatrix(from);
    assert.is((await gen(["--matrix", matrix, "--out", out])).status, 0);
    setMatrix(to);
    const added = [...pkgsOf(refTo)].filter((n) => !pkgsOf(refFrom).has(n)).length;
    const at = i < BEFORE ? { afterStartMs: Math.round(((i + 0.5) / BEFORE) * calib.writesStartMs) } : { afterNewNames: Math.max(1, Math.round((((i - BEFORE) * 0.618034 + 0.1) % 1) * added)) };
    await timedRun(matrix, out, at);
    const now = tree(out);
    if (!same(now, refFrom) && !same(now, refTo)) midWrite++;
    // Every other time, the user goes back (git checkout matrix.ts) before running generate again.
    const [body, ref] = i % 4 < 2 ? [to, refTo] : [from, refFrom];
    setMatrix(body);
    const r = await gen(["--matrix", matrix, "--out", out]);
    assert.is(r.status, 0, r.stderr);
    assertSameTree(out, ref, `kill ${i} (${JSON.stringify(at)})`);
    for (const [rel] of tree(out)) assert.ok(statSync(join(out, rel)).size > 0, `${rel} is empty`);
    const check = await gen(["--check", "--matrix", matrix, "--out", out]);
    assert.is(check.status, 0, check.stderr);
  }
  assert.ok(midWrite >= MID_WRITE, `kills that left a half-written tree (neither matrix's files): ${midWrite} of ${i}`);
});

test("SIGINT mid-write: one message saying how far it got, exit 130, no temporaries; the next run finishes the tree", async () => {
  const refB = await reference(B);
  const mdir = tempDir("vm-int-matrix-");
  const out = tempDir("vm-int-out-");
  const matrix = writeMatrix(mdir, A);
  /**
   * From A's tree, start a run towards B and send SIGINT as soon as its first new wrapper exists (it is writing then).
   * @returns how it ended; `landed` when the signal stopped it mid-write (exit 130, some but not all files written)
   */
  const attempt = async () => {
    writeMatrix(mdir, A);
    assert.is((await gen(["--matrix", matrix, "--out", out])).status, 0);
    writeMatrix(mdir, B);
    const child = spawn(process.execPath, [BIN, "generate", "--matrix", matrix, "--out", out], { env: ENV });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const closed = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
    const started = Date.now();
    while (!readdirSync(join(out, ".flox/pkgs")).some((n) => n.startsWith("pytorch-python312"))) {
      assert.ok(Date.now() - started < 60_000, "the run started writing");
      await new Promise((r) => setTimeout(r, 2));
    }
    child.kill("SIGINT");
    const code = await closed;
    const m = /after writing (\d+) of (\d+) changed files/.exec(stderr);
    return { code, stderr, landed: code === 130 && m !== null && Number(m[1]) < Number(m[2]) };
  };
  // A fast machine may finish the writes before the signal arrives: try again (from A's tree) until one lands
  // mid-write, at most MAX_TRIES times; the test fails if none does, so it never passes without an interruption.
  const MAX_TRIES = 8;
  const tries: { code: number | null; stderr: string; landed: boolean }[] = [];
  while (tries.length < MAX_TRIES && !tries.at(-1)?.landed) {
    const t = await attempt();
    tries.push(t);
    // Whatever the outcome, the run never leaves a temporary, and a run that was not stopped mid-write ended cleanly.
    assert.not.ok([...tree(out).keys()].some((k) => /vm-tmp/.test(k)), "no temporaries left");
    if (!t.landed) assert.ok(t.code === 0 || t.code === 130 || t.code === null, `try ${tries.length}: exit ${t.code}: ${t.stderr}`);
  }
  const hit = tries.at(-1)!;
  assert.ok(hit.landed, `SIGINT landed mid-write in none of ${tries.length} tries: ${tries.map((t) => `exit ${t.code}`).join(", ")}`);
  assert.is(hit.code, 130);
  assert.match(hit.stderr, /^variant-matrix: error: generate interrupted \(SIGINT\) after writing [1-9]\d* of \d+ changed files; .*run `npm run generate` again to finish/m, hit.stderr);
  assert.is((await gen(["--matrix", matrix, "--out", out])).status, 0);
  assertSameTree(out, refB, "the next run finishes the tree");
});

test("two generates at once: one waits for the other, both succeed, the tree is exactly the matrix's", async () => {
  const refB = await reference(B);
  const mdir = tempDir("vm-int-matrix-");
  const out = tempDir("vm-int-out-");
  const matrix = writeMatrix(mdir, A);
  assert.is((await gen(["--matrix", matrix, "--out", out])).status, 0);
  writeMatrix(mdir, B);
  const run = () =>
    new Promise<{ code: number | null; stderr: string }>((res) => {
      const c = spawn(process.execPath, [BIN, "generate", "--matrix", matrix, "--out", out], { env: ENV });
      let stderr = "";
      c.stderr.on("data", (d) => (stderr += d));
      c.on("close", (code) => res({ code, stderr }));
    });
  const [x, y] = await Promise.all([run(), run()]);
  assert.is(x.code, 0, x.stderr);
  assert.is(y.code, 0, y.stderr);
  assert.not.match(x.stderr + y.stderr, /ENOENT/);
  assertSameTree(out, refB, "after two concurrent runs");
});

test.run();
