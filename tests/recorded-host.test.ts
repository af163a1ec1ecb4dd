/**
 * A recorded host directory's nvidia-smi output may be named nvidia-smi.txt or nvidia-smi.csv (the same
 * `--format=csv,noheader` output); any other nvidia-smi* file is named in an error instead of the host silently
 * becoming CPU-only. Real files, detect and fleet through the real CLI.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { makeHost } from "./helpers/host-model.ts";

const SPARK = join(ROOT, "tests/fixtures/hosts/dgx-spark");

function hostDir(files: Record<string, string>): string {
  const dir = join(tempDir("vm-rec-host-"), "spark");
  mkdirSync(dir);
  copyFileSync(join(SPARK, "cpuinfo"), join(dir, "cpuinfo"));
  for (const [n, text] of Object.entries(files)) writeFileSync(join(dir, n), text);
  return dir;
}

const SMI = readFileSync(join(SPARK, "nvidia-smi.txt"), "utf8");

test("nvidia-smi.csv is the host's GPU list in detect and fleet, as nvidia-smi.txt is", async () => {
  const dir = hostDir({ "nvidia-smi.csv": SMI });
  const d = await runMain(["detect", "--cpuinfo", dir, "--json"]);
  assert.is(d.status, 0, d.stderr);
  const j = JSON.parse(d.stdout) as { host: { gpus: { capability: string }[] }; variants: string[] };
  assert.equal(j.host.gpus.map((g) => g.capability), ["12.1"]);
  assert.match(j.variants[0]!, /-sm121-/);
  const f = await runMain(["fleet", dir, "--json"]);
  assert.is(f.status, 0, f.stderr);
  assert.match(f.stdout, /sm121/);
  assert.not.match(f.stdout, /"cpu-only"|-cpu-armv9/);
});

test("another nvidia-smi* file, or both .txt and .csv, is an error naming the file, not a CPU-only host", async () => {
  const other = hostDir({ "nvidia-smi.log": SMI });
  for (const args of [["detect", "--cpuinfo", other], ["fleet", other]]) {
    const r = await runMain(args);
    assert.is(r.status, 2, `${args[0]}: ${r.stdout}`);
    assert.match(r.stderr, /nvidia-smi\.log: a recorded host directory's nvidia-smi output is named nvidia-smi\.txt or nvidia-smi\.csv/);
  }
  const both = hostDir({ "nvidia-smi.txt": SMI, "nvidia-smi.csv": SMI });
  const r = await runMain(["detect", "--cpuinfo", both]);
  assert.is(r.status, 2);
  assert.match(r.stderr, /holds both nvidia-smi\.txt and nvidia-smi\.csv: keep one/);
});

test("install --dry-run of a recorded GPU host: the GPU driver from the recording and the nixglhost route it takes; this machine's checks say so", async () => {
  const cpuinfo = join(SPARK, "cpuinfo");
  const smi = join(SPARK, "nvidia-smi.txt");
  // --verbose: every check, the ones that pass or do not stop install included (issue 53 keeps the short plan to
  // the checks to act on).
  const r = await runMain(["install", "--dry-run", "--verbose", "--backend", "nix", "--cpuinfo", cpuinfo, "--nvidia-smi", smi, "--machine", "aarch64", "--dir", join(tempDir("vm-rec-install-"), "torch-env")]);
  const flat = r.stdout.replace(/\s+/g, " ");
  assert.ok(r.status === 0 || r.status === 2, r.stderr);
  assert.match(flat, `(picked by detect for the recorded host (${cpuinfo}))`);
  assert.match(flat, `GPU driver: the recorded host (${smi}): nvidia-smi sees 1 GPU(s), driver 580.95.05`);
  assert.not.match(flat, /no NVIDIA driver here/);
  assert.match(flat, /run through nix-gl-host|run through nixglhost/);
  assert.match(flat, /✓ Nix store space: this machine: |✗ Nix version: this machine: |– flox: this machine: /);
});

test("the recorded DGX Spark planned on another machine: no nix.conf line offers a gccarch feature this machine's CPU cannot run, in install's checks, the build's preflight or doctor", async () => {
  // This machine's Nix, modelled (2.24.9, no gccarch feature declared); the CPU judged is this machine's own, whose
  // nix.conf the line would go to. Where it runs Armv9 with i8mm (a Spark itself), offering the line is right.
  const h = makeHost({ nix: "2.24.9" });
  const rec = ["--cpuinfo", join(SPARK, "cpuinfo"), "--nvidia-smi", join(SPARK, "nvidia-smi.txt"), "--machine", "aarch64", "--backend", "nix"];
  const install = await runMain(["install", "--dry-run", "--verbose", ...rec, "--dir", join(tempDir("vm-rec-features-"), "torch-env")], { env: h.env });
  assert.ok(install.status === 0 || install.status === 2, install.stderr);
  const doctor = await runMain(["doctor", ...rec], { env: h.env });
  assert.is(doctor.status, 1, doctor.stderr);
  const thisCpuRunsIt = process.arch === "arm64" && /\bi8mm\b/.test(readFileSync("/proc/cpuinfo", "utf8")) && /\bsve2\b/.test(readFileSync("/proc/cpuinfo", "utf8"));
  for (const [what, r] of [["install", install], ["doctor", doctor]] as const) {
    const offered = r.stdout.split("\n").flatMap((l) => /^\s*extra-system-features = (.*)$/.exec(l)?.[1]?.split(" ") ?? []);
    const refused = [...r.stdout.matchAll(/this CPU cannot run (.+?): build on a machine that can/g)].flatMap((m) => m[1]!.split(", "));
    assert.equal(offered.filter((f) => refused.includes(f)), [], `${what} offers what it says this CPU cannot run:\n${r.stdout}`);
    if (thisCpuRunsIt) continue;
    assert.not.ok(offered.includes("gccarch-armv9-a+i8mm"), `${what}:\n${r.stdout}`);
    assert.ok(refused.includes("gccarch-armv9-a+i8mm"), `${what}:\n${r.stdout}`);
  }
  // install says it twice (its own checks, then the build's preflight), the same way both times.
  if (!thisCpuRunsIt) assert.is([...install.stdout.matchAll(/this CPU cannot run gccarch-armv9-a\+i8mm: build on a machine that can/g)].length, 2, install.stdout);
});

test.run();
