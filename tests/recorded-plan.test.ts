/**
 * One source per fact, said (issue 55): with a recording (--cpuinfo/--nvidia-smi), install --dry-run plans for that
 * host (its system and CPUs set the jobs, the cores and the estimates, and the plan says so, with this machine's
 * memory and store named as this machine's), and doctor judges the recorded GPU driver, not this machine's absence of
 * one. Plus: a plan of more variants than a spread argument takes prints (dryRunText, one line per variant).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOSTS } from "./helpers/host-model.ts";
import { runMain } from "./helpers/main.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { parseNixOptions } from "../generator/commands/shared.ts";
import { planBuild } from "../generator/driver/build.ts";
import { dryRunText } from "../generator/driver/dry-run-text.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";

const SPARK = ["--cpuinfo", join(HOSTS, "dgx-spark/cpuinfo"), "--nvidia-smi", join(HOSTS, "dgx-spark/nvidia-smi.txt")];
/** The recorded Spark's logical CPUs: its cpuinfo's processor blocks (10 Cortex-X925 + 10 Cortex-A725). */
const SPARK_CPUS = 20;

test("install --dry-run for a recorded DGX Spark: the plan is for aarch64-linux with its 20 CPUs, says so, and takes the nixglhost route", async () => {
  const dir = tempDir("vm-recorded-plan-");
  const r = await runMain(["install", "--dry-run", "--dir", join(dir, "torch-env"), "--backend", "nix", "--logs-dir", join(dir, "logs"), ...SPARK], { columns: 400 });
  assert.is(r.status, 0, r.stderr);
  const flat = r.stdout.replace(/\s+/g, " ");
  assert.match(flat, /^install torch-env-python313-cuda\S+-sm121-armv9 \(picked by detect for the recorded host \(\S+dgx-spark\/cpuinfo\)\)/);
  assert.match(flat, new RegExp(`for the recorded host \\(\\S+dgx-spark/cpuinfo\\): its system aarch64-linux, its ${SPARK_CPUS} CPUs and its memory \\(not recorded \\(no \\S+dgx-spark/meminfo; --mem GIB gives it\\): taken as not limiting\\) set the schedule and the estimates; what is built or cached is this machine's`));
  // Not this machine's system: no remote builder is asked for, whatever this machine is.
  assert.not.match(flat, /differs from this host/);
  // The schedule's slots are the recording's CPUs (its memory is not recorded: not limiting), never this machine's.
  assert.match(flat, `nix, ${SPARK_CPUS} compile slots shared as builds start`);
  assert.match(flat, new RegExp(`pytorch model: CUDA, 1 capability, ${SPARK_CPUS} cores`), "torch, ready alone, gets every slot");
  // The route the Spark takes (DGX OS: its driver outside /run/opengl-driver/lib), from the recording's driver.
  assert.match(flat, /4\. link \S+ to the environment with its Pythons run through nix-gl-host/);
  assert.not.match(flat, /no NVIDIA driver here/);
  // The checks only this machine answers say so.
  for (const line of r.stdout.split("\n").filter((l) => /^ {2}[✓✗–] (Nix version|system features|Nix store space):/.test(l)))
    assert.match(line, /: this machine/, line);
});

test("install --dry-run of a CUDA variant for a recorded host without a GPU: the recording has no driver, not 'here'", async () => {
  const dir = tempDir("vm-recorded-plan-");
  const host = ["--cpuinfo", join(HOSTS, "epyc-nogpu/cpuinfo"), "--nvidia-smi", join(HOSTS, "epyc-nogpu/nvidia-smi.txt")];
  const r = await runMain(["install", "pytorch-python313-cuda12_8-sm90-avx512", "--dry-run", "--dir", join(dir, "p"), "--backend", "nix", "--logs-dir", join(dir, "logs"), ...host], { columns: 400 });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /5\. the GPU driver: no NVIDIA driver on the recorded host: the GPU checks are skipped/);
  assert.not.match(r.stdout, /no NVIDIA driver here/);
});

test("install --dry-run without a recording plans for this machine and says nothing of another host", async () => {
  const dir = tempDir("vm-recorded-plan-");
  const r = await runMain(["install", "pytorch-python313-cpu-avx2", "--dry-run", "--dir", join(dir, "pytorch"), "--backend", "nix", "--logs-dir", join(dir, "logs")]);
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stdout, /recorded host|a recording holds/);
});

test("doctor with a recording: the GPU driver from the recording (driver 580), every other check 'this machine'", async () => {
  const r = await runMain(["doctor", ...SPARK, "--json"]);
  const out = JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string }[] };
  const gpu = out.checks.find((c) => c.id === "gpu-driver")!;
  assert.match(gpu.detail, /^the recorded host \(\S+dgx-spark\/nvidia-smi\.txt\): nvidia-smi sees 1 GPU\(s\), driver 580\.95\.05/);
  assert.match(gpu.detail, /nixglhost/);
  for (const c of out.checks.filter((x) => x.id !== "gpu-driver")) assert.match(c.detail, /^this machine/, `${c.id}: ${c.detail}`);
  // A recorded host without a GPU: no driver to judge, said of the recording.
  const cpu = await runMain(["doctor", "--cpuinfo", join(HOSTS, "epyc-nogpu/cpuinfo"), "--nvidia-smi", join(HOSTS, "epyc-nogpu/nvidia-smi.txt"), "--json"]);
  const gpuless = (JSON.parse(cpu.stdout) as typeof out).checks.find((c) => c.id === "gpu-driver");
  if (gpuless) assert.match(gpuless.detail, /^the recorded host has no NVIDIA GPU/);
});

test("detect with a recording: host facts name the recording; the wait names its basis (the recording's CPUs and memory), not this machine", async () => {
  const r = await runMain(["detect", ...SPARK], { columns: 400 });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Host: aarch64-linux \(machine aarch64; inferred from \S+dgx-spark\/cpuinfo\)/);
  assert.match(r.stdout, /CPU: .* \[\S+dgx-spark\/cpuinfo\]/);
  assert.match(r.stdout.replace(/\s+/g, " "), new RegExp(`wait \\(model: cache misses and build estimates scheduled as \`build\` runs it on ${SPARK_CPUS} compile slots, ${SPARK_CPUS} CPUs, memory not recorded, taken as not limiting\\): about `));
});

test("a dry run's text holds one line per variant past the spread-argument limit (150,000 rows)", async () => {
  const dir = tempDir("vm-plan-rows-");
  const variants = projectFromMatrix(matrix).variants.filter((v) => v.cuda === null && v.system === "x86_64-linux").slice(0, 4);
  const pkgs = join(dir, "pkgs");
  mkdirSync(pkgs);
  for (const v of variants) writeFileSync(join(pkgs, `${v.name}.nix`), "");
  const p = await planBuild({
    args: { dryRun: true, verify: false, backend: "nix", variants, pkgsDir: pkgs, outDir: join(dir, "out"), logsDir: join(dir, "logs"), askNixTimeout: 0 },
    projectRoot: ROOT,
    parseNixOptions,
    width: 80,
  });
  const d = p.dryRun!.rows;
  const rows = Array.from({ length: 150_000 }, (_, i) => ({ ...d.rows[i % d.rows.length]!, order: i + 1 }));
  const text = dryRunText({ d: { ...d, rows }, backend: "nix", rule: p.rule, coresPerBuild: 1, capped: new Map(), capacity: p.capacity, fromHistory: false, askedStore: false, needs: p.dryRun!.needs, preflight: "" });
  assert.ok(text.includes(`150000. ${rows.at(-1)!.name}`), text.slice(-400));
});

test.run();
