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

test.run();
