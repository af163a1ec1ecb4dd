/**
 * Benchmark: the CLI as users run it, whole processes (`node bin/variant-matrix.js …`, compiled JavaScript), each
 * against the floor `node -e 0` measured in the same run, interleaved (floor, A, B, …, floor, A, B, …) so that
 * drift hits all alike. Medians of `runs`. Targets: --help ≤ 3× the floor; list --json and explain
 * ≤ 3×; detect ≤ 5×; no-op generate ≤ 0.3 s; full generate of a ≥ 700-file matrix ≥ 3,000 files/s including start-up.
 * Also `npx variant-matrix --help` against the launcher's `--help` (the README's quick start puts the launcher on PATH
 * once, `npm link`, and keeps npx as the fallback): the ratio says what each call through npx costs.
 * Runs the launcher, which compiles dist/ first when it is missing or stale (bin/build-dist.mjs).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/variant-matrix.js");
const HOST = join(ROOT, "tests/fixtures/hosts/dgx-spark");

/** The widest catalog matrix (every release with a hashed pin, every Python, CUDA, GPU, ISA): ≥ 700 files. */
const WIDE = {
  releases: [{ torch: "2.9.1" }, { torch: "2.11.0" }],
  python: ["3.12", "3.13", "3.14"],
  cuda: ["12.8", "12.9", "13.0"],
  gpus: ["70", "72", "75", "80", "86", "87", "89", "90", "100", "103", "110", "120", "121"],
  isas: ["avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"],
  cpuOnly: true,
};

function timeIt(argv: string[], cwd = ROOT): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return s;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Run the benchmark; returns the medians in seconds and the file count of the full generate. */
export async function main(runs = 7) {
  // The launcher compiles dist/ when it is missing or older than the sources; do it before the timings start.
  const built = spawnSync(process.execPath, [BIN, "--version"], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`the launcher cannot run: ${built.stderr}`);
  const work = mkdtempSync(join(tmpdir(), "vm-bench-cli-"));
  let memDir: string | null = null;
  try {
    const matrix = join(work, "matrix.ts");
    writeFileSync(matrix, `import { defineMatrix } from ${JSON.stringify(join(ROOT, "generator/matrix/schema.ts"))};\nexport default defineMatrix(${JSON.stringify(WIDE)});\n`);
    const noopDir = join(work, "noop");
    // The same full generate into memory (tmpfs), when the machine has /dev/shm: the tool without the disk.
    const mem = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/vm-bench-cli-") : null;
    memDir = mem;
    const node = process.execPath;
    const cmds: Record<string, () => string[]> = {
      floor: () => [node, "-e", "0"],
      help: () => [node, BIN, "--help"],
      // npx finds the package's own bin in this directory (--no-install: never a download).
      npxHelp: () => ["npx", "--no-install", "variant-matrix", "--help"],
      list: () => [node, BIN, "list", "--json"],
      explain: () => [node, BIN, "explain", "torchaudio-python313-cuda12_9-sm121-armv9"],
      detect: () => [node, BIN, "detect", "--cpuinfo", join(HOST, "cpuinfo"), "--nvidia-smi", join(HOST, "nvidia-smi.txt"), "--machine", "aarch64"],
      noopGenerate: () => [node, BIN, "generate", "--matrix", matrix, "--out", noopDir],
      fullGenerate: () => [node, BIN, "generate", "--matrix", matrix, "--out", mkdtempSync(join(work, "full-"))],
      ...(mem ? { fullGenerateMem: () => [node, BIN, "generate", "--matrix", matrix, "--out", mkdtempSync(join(mem, "full-"))] } : {}),
    };
    timeIt(cmds.noopGenerate!()); // first run writes the tree the no-op runs compare against
    const files = Number(/(\d+) written/.exec(spawnSync(node, [BIN, "generate", "--matrix", matrix, "--out", join(work, "count")], { encoding: "utf8" }).stdout)?.[1] ?? 0);
    const t: Record<string, number[]> = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
    for (const k of Object.keys(cmds)) timeIt(cmds[k]!()); // warm-up
    for (let i = 0; i < runs; i++) for (const k of Object.keys(cmds)) t[k]!.push(timeIt(cmds[k]!()));
    const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)])) as Record<string, number>;
    const floor = m.floor!;
    const ratio = (k: string) => m[k]! / floor;
    const row = (k: string, target: string, ok: boolean) =>
      console.log(`  ${k.padEnd(13)} median ${m[k]!.toFixed(3)} s  ${ratio(k).toFixed(2)}× floor  ${target}: ${ok ? "met" : "NOT met"}`);
    console.log(`cli (whole processes, compiled JS, ${runs} interleaved runs each): floor \`node -e 0\` median ${floor.toFixed(3)} s`);
    row("help", "≤ 3× floor", ratio("help") <= 3);
    console.log(`  npxHelp       median ${m.npxHelp!.toFixed(3)} s  ${(m.npxHelp! / m.help!).toFixed(2)}× the launcher's --help (npx variant-matrix --help: what each README command costs without the launcher on PATH)`);
    for (const k of ["list", "explain"]) row(k, "≤ 3× floor", ratio(k) <= 3);
    row("detect", "≤ 5× floor", ratio("detect") <= 5);
    row("noopGenerate", "≤ 0.3 s", m.noopGenerate! <= 0.3);
    const rate = files / m.fullGenerate!;
    console.log(`  fullGenerate  median ${m.fullGenerate!.toFixed(3)} s  ${files} files  ${Math.round(rate)} files/s including start-up  ≥ 3000 files/s: ${rate >= 3000 ? "met" : "NOT met"}  (into ${tmpdir()}, this machine's disk)`);
    if (m.fullGenerateMem !== undefined) {
      const r2 = files / m.fullGenerateMem;
      console.log(`  fullGenerate  median ${m.fullGenerateMem.toFixed(3)} s  ${files} files  ${Math.round(r2)} files/s including start-up  ≥ 3000 files/s: ${r2 >= 3000 ? "met" : "NOT met"}  (into /dev/shm: without the disk)`);
    }
    return { medians: m, files, rate };
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (memDir) rmSync(memDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
