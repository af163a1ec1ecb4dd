/**
 * Benchmark: how long `verify` waits on its probe (generator/verify/probe.py), old against new, and the floor below
 * which no probe can go: `import torch` + CUDA init + the longest single cuobjdump run of the largest library.
 *
 * - On a host whose python3 has torch with a GPU and cuobjdump on PATH: both probes run here, side by side in one run
 *   (old, new, old, new, … per mode), the old one being tests/fixtures/probes/h100-verify-fast/probe_old.py (main
 *   f48a4ad: one child Python a GPU check, cuobjdump one run after another), the new one generator/verify/probe.py;
 *   the floor's parts are measured here too.
 * - Anywhere else (CI, this project's 2-core machine): the recorded H100 run of that fixture (timings.jsonl, the same
 *   side-by-side comparison made on the device machine), said so; plus `verify --probe` of its recorded probe here,
 *   which is verify's own work beside the probe (host, matrix, comparison), measured live.
 * Prints medians; verify itself is about the probe plus that own work (which runs while the probe does). Then the
 * recorded H200 runs of the whole `verify`, old against new, and `verify --proof` (tests/fixtures/probes/h200-verify-proof).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const REC = join(ROOT, "tests/fixtures/probes/h100-verify-fast");
const HOST = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130");
const NEW = join(ROOT, "generator/verify/probe.py");
const OLD = join(REC, "probe_old.py");
const MODES: Record<string, string[]> = { plain: [], "--gpu": ["--gpu"], "--cuobjdump": ["--cuobjdump"], "--gpu --cuobjdump (verify)": ["--gpu", "--cuobjdump"] };

/** The median (the mean of the middle two for an even count). */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (s: number) => `${s.toFixed(1)} s`;

/** Wall seconds of one process (it must exit 0, or 1 for verify's "a promise failed"). */
function timeIt(argv: string[], ok = [0]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (!ok.includes(r.status ?? -1)) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** A timing record of timings.jsonl (record.py). */
interface Rec {
  kind: string;
  probe?: string;
  mode?: string;
  wall_s?: number;
  part?: string;
  s?: number;
  lib?: string;
  bytes?: number;
  job?: string;
}

/** The floor from floor-part and cuobjdump records: import torch, CUDA init, the largest library's longest run. */
function floorOf(recs: Rec[]): { importTorch: number; cudaInit: number; lib: string; longestRun: number; libTotal: number } {
  const part = (p: string) => median(recs.filter((r) => r.kind === "floor-part" && r.part === p).map((r) => r.s!));
  const runs = recs.filter((r) => r.kind === "cuobjdump");
  const largest = runs.reduce((a, b) => (b.bytes! > a.bytes! ? b : a)).lib!;
  const own = runs.filter((r) => r.lib === largest).map((r) => r.s!);
  return { importTorch: part("import torch"), cudaInit: part("CUDA init"), lib: largest, longestRun: Math.max(...own), libTotal: own.reduce((a, b) => a + b, 0) };
}

/** Print the old/new table and the floor; returns the medians of the verify mode. */
function report(recs: Rec[], where: string): { old: number; new: number; floor: number } {
  console.log(`verify's probe, old (main f48a4ad) vs new, ${where}:`);
  const key = { plain: "plain", "--gpu": "gpu", "--cuobjdump": "cuobjdump", "--gpu --cuobjdump (verify)": "both" } as Record<string, string>;
  let verifyMode = { old: 0, new: 0 };
  for (const label of Object.keys(MODES)) {
    const m = (p: string) => recs.filter((r) => r.kind === "probe" && r.probe === p && r.mode === key[label]).map((r) => r.wall_s!);
    const [o, n] = [m("old"), m("new")];
    if (!o.length || !n.length) continue;
    console.log(`  ${label.padEnd(28)} old ${fmt(median(o)).padStart(7)} (${o.length})  new ${fmt(median(n)).padStart(7)} (${n.length})  ${(median(o) / median(n)).toFixed(1)}×`);
    if (key[label] === "both") verifyMode = { old: median(o), new: median(n) };
  }
  const f = floorOf(recs);
  const floor = f.importTorch + f.cudaInit + f.longestRun;
  console.log(`  floor ${fmt(floor)} = import torch ${fmt(f.importTorch)} + CUDA init ${fmt(f.cudaInit)} + longest cuobjdump run of ${f.lib} ${fmt(f.longestRun)} (its runs one after another: ${fmt(f.libTotal)})`);
  return { ...verifyMode, floor };
}

/** Whether python3 here has torch seeing a GPU and cuobjdump is on PATH (then the probes run live). */
function gpuHere(): boolean {
  const r = spawnSync("python3", ["-c", "import shutil, torch; print(bool(torch.cuda.is_available() and shutil.which('cuobjdump')))"], { encoding: "utf8" });
  return r.status === 0 && r.stdout.trim() === "True";
}

/** Live: old and new probes interleaved per mode, and the floor's parts, here. */
function live(runs: number): Rec[] {
  const recs: Rec[] = [];
  const code = "import time; t=time.time(); import torch; a=time.time(); torch.cuda.init(); torch.zeros(1).cuda(); torch.cuda.synchronize(); print(a-t, time.time()-a)";
  for (let i = 0; i < runs; i++) {
    const [imp, init] = spawnSync("python3", ["-c", code], { encoding: "utf8" }).stdout.trim().split(" ").map(Number);
    recs.push({ kind: "floor-part", part: "import torch", s: imp }, { kind: "floor-part", part: "CUDA init", s: init });
  }
  const lines = spawnSync("python3", ["-c", `import sys, json, os, time; sys.path.insert(0, ${JSON.stringify(join(ROOT, "generator/verify"))}); import probe, torch
d = os.path.join(os.path.dirname(torch.__file__), "lib")
for lib in probe.shared_objects(d):
    for job, flag, key, a in probe.LIST_JOBS:
        t = time.time(); probe.list_archs("cuobjdump", flag, lib, key, a); print(json.dumps({"kind": "cuobjdump", "lib": os.path.basename(lib), "bytes": os.path.getsize(lib), "job": job, "s": time.time() - t}))
    t = time.time(); probe.read_symbols("cuobjdump", lib); print(json.dumps({"kind": "cuobjdump", "lib": os.path.basename(lib), "bytes": os.path.getsize(lib), "job": "symbols+ptx", "s": time.time() - t}))`], { encoding: "utf8" }).stdout;
  recs.push(...lines.trim().split("\n").map((l) => JSON.parse(l) as Rec));
  const key = { plain: "plain", "--gpu": "gpu", "--cuobjdump": "cuobjdump", "--gpu --cuobjdump (verify)": "both" } as Record<string, string>;
  for (let i = 0; i < runs; i++)
    for (const [label, args] of Object.entries(MODES))
      for (const [p, file] of [["old", OLD], ["new", NEW]] as const) recs.push({ kind: "probe", probe: p, mode: key[label], wall_s: timeIt(["python3", file, ...args]) });
  return recs;
}

/** Run the benchmark (live with a GPU here, else the recording); returns the verify mode's medians and the floor. */
export async function main(runs = 3) {
  let r: { old: number; new: number; floor: number };
  if (gpuHere()) {
    r = report(live(runs), "measured here (python3's torch sees a GPU)");
  } else {
    const recs = readFileSync(join(REC, "timings.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
    r = report(recs, "NO GPU HERE: the recorded run of tests/fixtures/probes/h100-verify-fast (one H100, 16 cores, PyPI torch 2.11, 2026-11-27)");
    // The launcher compiles dist/ when it is missing or stale: do that before the timings start.
    timeIt([process.execPath, join(ROOT, "bin/variant-matrix.js"), "--version"]);
    const own = median(
      Array.from({ length: runs }, () =>
        timeIt([process.execPath, join(ROOT, "bin/variant-matrix.js"), "verify", "--probe", join(REC, "probe.json"), "--cpuinfo", join(HOST, "cpuinfo"), "--nvidia-smi", join(HOST, "nvidia-smi.txt"), "--machine", "x86_64"], [0, 1]),
      ),
    );
    console.log(`  verify's own work here (verify --probe of the recorded probe, whole process): ${fmt(own)}; verify ≈ ${fmt(r.new + own)} at most (new), ${fmt(r.old + own)} (old)`);
    early();
    proofRuns();
  }
  return r;
}

/**
 * The recorded H200 run of tests/fixtures/probes/h200-verify-early: the probe that starts cuobjdump before torch
 * imports (new) against the one before it (prev), `--gpu --cuobjdump`, alternating in one run. Returns new / prev.
 */
function early(): number {
  const recs = readFileSync(join(ROOT, "tests/fixtures/probes/h200-verify-early/timings.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { probe: string; wall_s: number });
  const m = (k: string) => median(recs.filter((x) => x.probe === k).map((x) => x.wall_s));
  const ratio = m("new") / m("prev");
  console.log(
    `  recorded H200 (16 cores, 2026-11-29; tests/fixtures/probes/h200-verify-early): probe --gpu --cuobjdump, cuobjdump ` +
      `after import torch ${fmt(m("prev"))}, before it ${fmt(m("new"))}: new / prev ${ratio.toFixed(3)}`,
  );
  return ratio;
}

/**
 * The recorded H200 runs of tests/fixtures/probes/h200-verify-proof: the whole `verify NAME` of main 84856a1 (old)
 * against this tree's (new), and `verify NAME --proof` (the GPU part only), alternating in one run; the parts beside
 * them. Prints each run's medians and the per-round ratios; returns the last run's medians.
 */
export function proofRuns(): { old: number; new: number; proof: number } {
  const dir = join(ROOT, "tests/fixtures/probes/h200-verify-proof");
  let last = { old: 0, new: 0, proof: 0 };
  for (const [file, what] of [
    ["run1-timings.jsonl", "new = verify as a library, the probe started first"],
    ["run3-timings.jsonl", "new = that, and the probe ends once its output is written"],
  ] as const) {
    const recs = readFileSync(join(dir, file), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { run: string; round: number; wall_s: number });
    const of = (run: string) => recs.filter((x) => x.run === run && x.round > 0);
    const m = (run: string) => median(of(run).map((x) => x.wall_s));
    const ratios = (run: string) => of(run).map((x) => (x.wall_s / of("old").find((o) => o.round === x.round)!.wall_s).toFixed(3)).join(" ");
    last = { old: m("old"), new: m("new"), proof: m("new-proof") };
    console.log(`  recorded H200 (16 cores, 2026-11-29; h200-verify-proof/${file}; ${what}), medians of ${of("old").length} rounds:`);
    console.log(`    verify NAME: old ${fmt(last.old)}, new ${fmt(last.new)} (new / old per round ${ratios("new")}); verify NAME --proof ${fmt(last.proof)} (/ old ${ratios("new-proof")})`);
    const parts = ["probe", "probe-gpu", "import-torch", "import-torchvision", "own-new"].filter((p) => of(p).length).map((p) => `${p} ${fmt(m(p))}`);
    console.log(`    parts: ${parts.join(", ")}`);
  }
  return last;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
