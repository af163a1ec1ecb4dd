// verify given a proof (issue 66): the variant's static check's output (probe.json and report.txt, made here as
// pkgs/checks.nix makes it: probe.py --cuobjdump in an environment of the variant, then pkgs/verify-compare.mjs). With
// it, verify runs the probe without cuobjdump and judges the device code from the proof, when the proof is about the
// very library files the live probe finds; a proof of other files is set aside with the reason and cuobjdump runs here.
// Real processes: the stand-in environment's Python, the stand-in cuobjdump behind a wrapper on PATH that counts its
// runs, verify in-process through runMain.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import defaultMatrix from "../matrix.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { modelLibraries, STAND_IN_CUOBJDUMP_DIR, writeStandInEnv } from "./helpers/device-model.ts";
import { formatReport } from "../generator/commands/verify-main.ts";
import type { VerifyReport } from "../generator/verify/verify.ts";

const NAME = "torchaudio-python313-cuda12_9-sm90-avx512";
const v = projectFromMatrix(defaultMatrix).variants.find((x) => x.name === NAME)!;
const torch = { torchVersion: v.torchVersion, torchaudioVersion: v.version, cuda: v.cuda, cudaCapabilities: v.cudaCapabilities, python: v.python, machine: "x86_64" };
const H = join(ROOT, "tests/fixtures/hosts/spr-h100");
const HOST = ["--cpuinfo", join(H, "cpuinfo"), "--nvidia-smi", join(H, "nvidia-smi.txt"), "--machine", "x86_64"];

/** A cuobjdump on PATH that counts its runs (one line each in DIR/runs.log) and runs the stand-in. */
function countingCuobjdump(dir: string): { path: string; runs: () => number } {
  const bin = join(dir, "counting-bin");
  mkdirSync(bin, { recursive: true });
  const log = join(dir, "runs.log");
  writeFileSync(join(bin, "cuobjdump"), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump"))} "$@"\n`);
  chmodSync(join(bin, "cuobjdump"), 0o755);
  return {
    path: `${bin}:${process.env.PATH}`,
    runs: () => {
      const n = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean).length : 0;
      rmSync(log, { force: true });
      return n;
    },
  };
}

/**
 * A proof as pkgs/checks.nix's static check writes it, from the Python `python`: probe.py --cuobjdump (no GPU) into
 * OUT/probe.json, then the compare bundle's lines into OUT/report.txt.
 */
function makeProof(out: string, python: string): string {
  mkdirSync(out, { recursive: true });
  const probe = spawnSync(python, [join(ROOT, "generator/verify/probe.py"), `--cuobjdump=${join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump")}`], { encoding: "utf8" });
  assert.is(probe.status, 0, probe.stderr);
  writeFileSync(join(out, "probe.json"), probe.stdout);
  const promise = join(out, "..", `${NAME}-promise.json`);
  writeFileSync(promise, JSON.stringify(v));
  const cmp = spawnSync(process.execPath, [join(ROOT, "pkgs/verify-compare.mjs"), join(ROOT, "pkgs/verify-facts.json"), promise, join(out, "probe.json")], { encoding: "utf8" });
  assert.is(cmp.status, 0, cmp.stdout + cmp.stderr);
  writeFileSync(join(out, "report.txt"), cmp.stdout);
  return out;
}

/**
 * The static check's environment beside the installed one: another directory whose torch and torchaudio are symbolic
 * links to the installed environment's (as Nix's Python environments link one store path of each package), its own
 * stand-in interpreter reading it.
 */
function linkedEnv(installed: string, dir: string): string {
  const site = (d: string) => join(d, `lib/python${v.python}/site-packages`);
  mkdirSync(site(dir), { recursive: true });
  for (const p of ["torch", "torchaudio"]) symlinkSync(join(site(installed), p), join(site(dir), p));
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin/python3"), readFileSync(join(installed, "bin/python3"), "utf8").replaceAll(site(installed), site(dir)));
  chmodSync(join(dir, "bin/python3"), 0o755);
  return dir;
}

type Report = { checks: { promise: string; ok: boolean | null; found: string }[]; holds: boolean; proof?: { path: string; used: boolean; why: string | null; summary: string | null } };

test("verify --proof: the probe runs without cuobjdump (none runs), the device code judged from the proof, the same checks as without it", async () => {
  const dir = tempDir("vm-proof-");
  const m = writeMatrix(dir, defaultMatrix);
  const env = writeStandInEnv(join(dir, "env"), torch, modelLibraries(v));
  const proof = makeProof(join(dir, "proof"), join(linkedEnv(env, join(dir, "check-env")), "bin/python3"));
  const tool = countingCuobjdump(dir);
  const verify = (...more: string[]) => runMain(["verify", NAME, "--python", env, "--no-gpu", "--matrix", m, ...HOST, ...more], { env: { PATH: tool.path } });

  const plain = await verify("--json");
  assert.is(plain.status, 0, plain.stdout + plain.stderr);
  const without = JSON.parse(plain.stdout) as Report;
  assert.ok(tool.runs() > 0, "without a proof, cuobjdump reads the libraries here");
  assert.ok(without.checks.some((c) => /torch\/lib\/libtorch_cuda\.so: bundled NCCL/.test(c.promise)), "device code is judged");
  assert.is(without.proof, undefined);

  const given = await verify("--json", "--proof", proof);
  assert.is(given.status, 0, given.stdout + given.stderr);
  const withProof = JSON.parse(given.stdout) as Report;
  assert.is(tool.runs(), 0, "given the proof, no cuobjdump runs");
  assert.equal(withProof.checks, without.checks, "the same checks, the same verdicts");
  assert.equal(withProof.proof, { path: proof, used: true, why: null, tool: join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump"), summary: `${NAME}: every promise holds` });

  // What verify prints of it (the report's second line, before the checks).
  const text = await formatReport(withProof as VerifyReport, {}, 1000);
  assert.is(text.split("\n")[1], `device code judged from the proof at ${proof} (its cuobjdump ${join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump")}; its report: ${NAME}: every promise holds); cuobjdump did not run here`);
});

test("verify --proof of other libraries (the same build in another directory): set aside with the reason, cuobjdump runs here as without it", async () => {
  const dir = tempDir("vm-proof-other-");
  const m = writeMatrix(dir, defaultMatrix);
  const env = writeStandInEnv(join(dir, "env"), torch, modelLibraries(v));
  // The same modelled build in another directory: equal contents, other files.
  const other = writeStandInEnv(join(dir, "other"), torch, modelLibraries(v));
  const proof = makeProof(join(dir, "proof"), join(other, "bin/python3"));
  const tool = countingCuobjdump(dir);
  const verify = (...more: string[]) => runMain(["verify", NAME, "--python", env, "--no-gpu", "--matrix", m, ...HOST, "--json", ...more], { env: { PATH: tool.path } });
  const plain = JSON.parse((await verify()).stdout) as Report;
  const withoutRuns = tool.runs();

  const r = await verify("--proof", proof);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const rep = JSON.parse(r.stdout) as Report;
  assert.is(rep.proof!.used, false);
  assert.match(rep.proof!.why!, /^it is about other libraries: \d+ of the \d+ libraries here are not in it \(.*\/env\/lib\/python3\.13\/site-packages\/torch\/lib\/.*; \d+ of its \d+ are not here \(.*\/other\//);
  assert.is(tool.runs(), withoutRuns, "cuobjdump read every library here, as without a proof");
  assert.equal(rep.checks, plain.checks);
  assert.match((await formatReport(rep as VerifyReport, {}, 1000)).split("\n")[1]!, /^the proof at .*\/proof was set aside: it is about other libraries: .*; device code read here with cuobjdump$/);
});

test("verify --proof that cannot be used (a library changed in place, no probe.json, a probe from before proofs, no such path): set aside with the reason, the same checks", async () => {
  const dir = tempDir("vm-proof-bad-");
  const m = writeMatrix(dir, defaultMatrix);
  // The stand-in cuobjdump answered inside the probe's Python (these runs count nothing).
  const env = writeStandInEnv(join(dir, "env"), torch, modelLibraries(v), { cuobjdump: "in-process" });
  const verify = (...more: string[]) =>
    runMain(["verify", NAME, "--python", env, "--no-gpu", "--matrix", m, ...HOST, "--json", ...more], { env: { PATH: `${STAND_IN_CUOBJDUMP_DIR}:${process.env.PATH}` } });
  const plain = JSON.parse((await verify()).stdout) as Report;
  // One library changed in place (same path, other size): not the file the proof read.
  const own = makeProof(join(dir, "own"), join(env, "bin/python3"));
  const probe = JSON.parse(readFileSync(join(own, "probe.json"), "utf8")) as { libraries: Record<string, { bytes: number }> };
  const lib = Object.keys(probe.libraries).find((p) => p.endsWith("libtorch_cuda.so"))!;
  probe.libraries[lib]!.bytes += 1;
  writeFileSync(join(own, "probe.json"), JSON.stringify(probe));
  assert.match((JSON.parse((await verify("--proof", own)).stdout) as Report).proof!.why!, /other libraries: 1 of the \d+ libraries here are not in it/);
  // No probe.json; a probe from before proofs (no resolved paths): each said, never a failure.
  mkdirSync(join(dir, "empty"));
  delete (probe as { libraries?: unknown }).libraries;
  mkdirSync(join(dir, "older"));
  writeFileSync(join(dir, "older/probe.json"), JSON.stringify(probe));
  for (const [p, why] of [
    [join(dir, "empty"), /holds no probe\.json \(a proof is the output of release\.nix tests\.NAME\.static/],
    [join(dir, "older"), /names no library's resolved path/],
  ] as const) {
    const x = await verify("--proof", p);
    assert.is(x.status, 0, x.stderr);
    const got = JSON.parse(x.stdout) as Report;
    assert.is(got.proof!.used, false);
    assert.match(got.proof!.why!, why);
    assert.equal(got.checks, plain.checks);
  }
});

test("verify --proof of no proof at all (no such path, a file): bad input, exit 2 naming --proof (wrapped at 80 columns), and nothing runs", async () => {
  const dir = tempDir("vm-proof-none-");
  const m = writeMatrix(dir, defaultMatrix);
  const env = writeStandInEnv(join(dir, "env"), torch, modelLibraries(v));
  const tool = countingCuobjdump(dir);
  writeFileSync(join(dir, "probe.json"), "{}");
  for (const [p, why] of [
    [join(dir, "nope"), /--proof: \S+\/nope does not exist \(a proof is the output of release\.nix tests\.NAME\.static/],
    [join(dir, "probe.json"), /--proof: \S+\/probe\.json is not a directory \(a proof is/],
  ] as const) {
    for (const json of [[], ["--json"]]) {
      const x = await runMain(["verify", NAME, "--python", env, "--no-gpu", "--matrix", m, ...HOST, ...json, "--proof", p], { env: { PATH: tool.path }, columns: 80 });
      assert.is(x.status, 2, x.stdout + x.stderr);
      assert.is(x.stdout, "", "no report: nothing was verified");
      assert.match(x.stderr.replace(/\s+/g, " "), why);
      assert.match(x.stderr.replace(/\s+/g, " "), /nothing was run \(leave out --proof to read the device code here with cuobjdump\)/);
      assert.is(tool.runs(), 0, "no probe ran");
      for (const l of x.stderr.split("\n")) assert.ok([...l].length <= 80, `wrapped to 80 columns: ${l}`);
    }
  }
});

test.run();
