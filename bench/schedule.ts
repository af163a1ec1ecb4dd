/**
 * Scheduling benchmark of the build driver: does it start the long builds first and keep every slot busy?
 *
 * A synthetic matrix of 40 tiny real derivations (offline nix-build, no sandbox needed): 20 pytorch-like ones
 * sleeping 1.2–3.6 s, two of them 9 s (late in name order, like CUDA builds for many capabilities among CPU-only
 * ones), and 20 torchaudio-like ones sleeping 0.3–1.0 s, each depending on its pytorch.
 * Durations are fixed (seeded), and the files are generated into a temporary directory with a fresh salt per run
 * so nothing is cached.
 *
 * Three runs:
 *   1. the build driver with `--jobs 4` and no earlier report (pytorch first, otherwise name order);
 *   2. the build driver with `--jobs 4` and run 1's report in its logs dir (durations known: longest first);
 *   3. the sequential loop a user runs today: `nix-build pytorch-X; nix-build torchaudio-X` for each X.
 * Printed: each build driver makespan as a ratio to (a) the lower bound max(critical path, total work / 4), computed
 * from that run's measured per-variant durations, and (b) the sequential loop's measured time. Target (a) ≤ 1.15.
 *
 * Run: `npx tsx bench/schedule.ts` (about 2 minutes), or through bench/index.ts. `BENCH_SCALE=0.5` halves every
 * duration.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { lowerBound, makePlan } from "../generator/model/plan.ts";
import type { BuildReport } from "../generator/driver/report.ts";

const ROOT = resolve(import.meta.dirname, "..");
const JOBS = 4;

/** One synthetic variant pair. */
interface Pair {
  torch: string;
  audio: string;
  /** Sleep of the pytorch-like derivation, seconds. */
  torchS: number;
  /** Sleep of the torchaudio-like derivation, seconds. */
  audioS: number;
}

/** The 20 pairs: names that parse as variants, durations from a fixed LCG (so every run is the same problem). */
export function syntheticPairs(scale = 1): Pair[] {
  const sms = ["80", "86", "89", "90", "100"];
  const isas = ["avx2", "avx512", "armv8_2", "armv9"];
  let x = 12345;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pairs: Pair[] = [];
  for (const isa of isas)
    for (const sm of sms) {
      const suffix = `python313-cuda12_8-sm${sm}-${isa}`;
      // Two heavy ones (like a CUDA build for many capabilities next to CPU-only ones), late in name order.
      const heavy = isa === "armv9" && (sm === "90" || sm === "100");
      pairs.push({
        torch: `pytorch-${suffix}`,
        audio: `torchaudio-${suffix}`,
        torchS: Math.round((heavy ? 9 : 1.2 + 2.4 * rnd()) * scale * 10) / 10,
        audioS: Math.round((0.3 + 0.7 * rnd()) * scale * 10) / 10,
      });
    }
  return pairs;
}

function writePkgs(dir: string, pairs: Pair[]): void {
  const file = (name: string, sleep: number, dep?: string) =>
    `# bench/schedule.ts synthetic variant (stand-in, not PyTorch): sleeps ${sleep}s.\n{ ... }:\n` +
    `let salt = builtins.getEnv "VM_BENCH_SALT";${dep ? ` dep = import ./${dep}.nix { };` : ""} in\n` +
    `derivation {\n  name = "${name}";\n  system = builtins.currentSystem;\n  builder = "/bin/sh";\n  PATH = "/usr/bin:/bin";\n` +
    `  inherit salt;${dep ? " inherit dep;" : ""}\n  args = [ "-c" "sleep ${sleep}; echo ${name} \${salt} > $out" ];\n}\n`;
  for (const p of pairs) {
    writeFileSync(join(dir, `${p.torch}.nix`), file(p.torch, p.torchS));
    writeFileSync(join(dir, `${p.audio}.nix`), file(p.audio, p.audioS, p.torch));
  }
}

function exec(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const c = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d) => (stdout += d));
    c.stderr.on("data", (d) => (stderr += d));
    c.on("close", (code) => res({ code, stdout, stderr }));
  });
}

const salt = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** Result of one build driver run. */
export interface DriverRun {
  makespanS: number;
  criticalPathS: number;
  totalWorkS: number;
  boundS: number;
  ratioToBound: number;
}

async function driverRun(pkgs: string, logs: string, out: string): Promise<DriverRun> {
  const env = { ...process.env, VM_BENCH_SALT: salt(), NO_COLOR: "1" };
  const r = await exec(
    [
      process.execPath,
      "--import",
      "tsx",
      join(ROOT, "generator/cli.ts"),
      "build",
      "--pkgs-dir",
      pkgs,
      "--out-dir",
      out,
      "--logs-dir",
      logs,
      "--backend",
      "nix",
      "--nix-option",
      "substituters=",
      "--jobs",
      String(JOBS),
      "--json",
      "--plain",
    ],
    env,
  );
  if (r.code !== 0) throw new Error(`driver run failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
  const rep = JSON.parse(r.stdout) as BuildReport;
  const makespanS = (Date.parse(rep.finishedAt) - Date.parse(rep.startedAt)) / 1000;
  const measured = new Map(rep.variants.map((v) => [v.name, v.durationS]));
  const plan = makePlan(rep.variants.map((v) => ({ name: v.name, package: v.package as "pytorch" | "torchaudio", dependsOn: v.dependsOn })));
  const lb = lowerBound(plan, JOBS, measured);
  return {
    makespanS,
    criticalPathS: lb.criticalPath,
    totalWorkS: lb.totalWork,
    boundS: lb.bound,
    ratioToBound: makespanS / lb.bound,
  };
}

async function sequentialLoop(pkgs: string, out: string, pairs: Pair[]): Promise<number> {
  const env = { ...process.env, VM_BENCH_SALT: salt() };
  const t0 = Date.now();
  for (const p of pairs)
    for (const n of [p.torch, p.audio]) {
      const r = await exec(["nix-build", join(pkgs, `${n}.nix`), "-o", join(out, `seq-${n}`), "--option", "substituters", ""], env);
      if (r.code !== 0) throw new Error(`nix-build ${n} failed:\n${r.stderr}`);
    }
  return (Date.now() - t0) / 1000;
}

/** Run the benchmark and print the figures; returns them. */
export async function main(): Promise<{ noHistory: DriverRun; withHistory: DriverRun; sequentialS: number }> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const pairs = syntheticPairs(scale);
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-schedule-"));
  chmodSync(dir, 0o755);
  const pkgs = join(dir, "pkgs");
  const logs = join(dir, "logs");
  const out = join(dir, "out");
  mkdirSync(pkgs);
  mkdirSync(out);
  writePkgs(pkgs, pairs);
  const nominal = pairs.reduce((s, p) => s + p.torchS + p.audioS, 0);
  const log = (s: string) => process.stdout.write(s + "\n");
  log(
    `schedule benchmark: ${pairs.length * 2} derivations (${pairs.length} pytorch-like ${Math.min(...pairs.map((p) => p.torchS))}–` +
      `${Math.max(...pairs.map((p) => p.torchS))} s, ${pairs.length} torchaudio-like ${Math.min(...pairs.map((p) => p.audioS))}–` +
      `${Math.max(...pairs.map((p) => p.audioS))} s after them), ${nominal.toFixed(1)} s of nominal work, --jobs ${JOBS}, real nix-build offline`,
  );
  try {
    const noHistory = await driverRun(pkgs, logs, out);
    const withHistory = await driverRun(pkgs, logs, out); // run 1's report is in `logs`: durations known
    const sequentialS = await sequentialLoop(pkgs, out, pairs);
    const row = (label: string, r: DriverRun) =>
      `${label.padEnd(26)} ${r.makespanS.toFixed(1).padStart(6)} s   bound ${r.boundS.toFixed(1).padStart(5)} s ` +
      `(critical path ${r.criticalPathS.toFixed(1)} s, work/${JOBS} ${(r.totalWorkS / JOBS).toFixed(1)} s)   ` +
      `makespan/bound ${r.ratioToBound.toFixed(3)}   makespan/sequential ${(r.makespanS / sequentialS).toFixed(3)}`;
    log(row("driver, no earlier report", noHistory));
    log(row("driver, durations known", withHistory));
    log(`${"sequential loop".padEnd(26)} ${sequentialS.toFixed(1).padStart(6)} s`);
    const ok = withHistory.ratioToBound <= 1.15;
    log(`target makespan/bound ≤ 1.15 (durations known): ${ok ? "met" : "NOT met"} (${withHistory.ratioToBound.toFixed(3)})`);
    return { noHistory, withHistory, sequentialS };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
