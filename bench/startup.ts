/**
 * Benchmark: start-up of `--help`, `list --json` and `explain NAME`, whole processes, against the floor `node -e 0`
 * measured in the same run, interleaved (floor, A, B, …, floor, A, B, …) so that drift hits all alike. Target: each
 * ≤ 3× the floor (medians). Where the time goes is measured beside them:
 * - the same three commands on the bundle itself (`node dist/<hash>/cli.js …`): the launcher's share is the difference;
 * - `list --json` on a miss of the project cache (generator/matrix/project-cache.ts: its entries are removed before
 *   each such run), the full path of zod, the catalog and expand that the rows above skip once the first run has
 *   written the entry (the warm-up does);
 * - the launcher's freshness check alone (bin/build-dist.mjs `currentHash()`: a stat of every source, their contents
 *   read only when a file's metadata is new) against hashing every source's contents (`sourcesHash()`, what each start
 *   did before the check looked at metadata first).
 * Each row gives the wall time and the CPU time (user + system, all of the process's threads, read by the child
 * itself at exit through a preloaded module), since wall time on a loaded machine holds other processes' turns too.
 * Usage: tsx bench/startup.ts [RUNS]   (default 15)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cacheDir } from "../generator/paths.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/variant-matrix.js");
const NAME = "torchaudio-python313-cuda12_9-sm121-armv9";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Run the benchmark; returns the medians (wall and CPU seconds) per row. */
export async function main(runs = Number(process.argv[2]) || 15) {
  const node = process.execPath;
  // The launcher compiles dist/ when it is missing or stale; do it before the timings start.
  const built = spawnSync(node, [BIN, "--version"], { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`the launcher cannot run: ${built.stderr}`);
  const { compiledEntry } = (await import(join(ROOT, "bin/build-dist.mjs"))) as { compiledEntry: () => string };
  const entry = compiledEntry();
  const work = mkdtempSync(join(tmpdir(), "vm-bench-startup-"));
  try {
    // Preloaded into every process (the floor too): at exit, write this process's CPU time in µs to a file of its own.
    const hook = join(work, "cpu.cjs");
    writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(process.env.VM_BENCH_CPU_FILE, JSON.stringify(process.cpuUsage())));\n`);
    const check = (fn: string) => [node, "--input-type=module", "-e", `const m = await import(${JSON.stringify(join(ROOT, "bin/build-dist.mjs"))}); m.${fn}();`];
    const cmds: Record<string, string[]> = {
      floor: [node, "-e", "0"],
      help: [node, BIN, "--help"],
      list: [node, BIN, "list", "--json"],
      explain: [node, BIN, "explain", NAME],
      "bundle help": [node, entry, "--help"],
      "bundle list": [node, entry, "list", "--json"],
      "bundle explain": [node, entry, "explain", NAME],
      "list (miss)": [node, BIN, "list", "--json"],
      "check (stat)": check("currentHash"),
      "check (hash)": check("sourcesHash"),
    };
    const wall: Record<string, number[]> = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
    const cpuFile = join(work, "cpu.json");
    // The project cache's entries (removed before each "(miss)" run, so that it computes the project as a first run does).
    const entries = cacheDir("projects");
    const once = (k: string) => {
      const argv = cmds[k]!;
      if (k.endsWith("(miss)")) for (const f of readdirSync(entries)) if (f.endsWith(".v8")) rmSync(join(entries, f), { force: true });
      const t0 = process.hrtime.bigint();
      const r = spawnSync(argv[0]!, ["--require", hook, ...argv.slice(1)], {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "pipe"],
        encoding: "utf8",
        env: { ...process.env, VM_BENCH_CPU_FILE: cpuFile },
      });
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.status !== 0) throw new Error(`${k}: ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
      const u = JSON.parse(readFileSync(cpuFile, "utf8")) as { user: number; system: number };
      return { s, cpu: (u.user + u.system) / 1e6 };
    };
    for (const k of Object.keys(cmds)) once(k); // warm-up
    for (let i = 0; i < runs; i++)
      for (const k of Object.keys(cmds)) {
        const r = once(k);
        wall[k]!.push(r.s);
        cpu[k]!.push(r.cpu);
      }
    const m = Object.fromEntries(Object.keys(cmds).map((k) => [k, { wall: median(wall[k]!), cpu: median(cpu[k]!) }]));
    const f = m.floor!;
    console.log(`startup (whole processes, ${runs} interleaved runs, medians; bundle ${dirname(entry).split("/").pop()}): floor \`node -e 0\` ${(f.wall * 1000).toFixed(0)} ms wall, ${(f.cpu * 1000).toFixed(0)} ms CPU`);
    for (const k of Object.keys(cmds).filter((k) => k !== "floor")) {
      const target = ["help", "list", "explain"].includes(k) ? `  ≤ 3× floor: ${m[k]!.wall / f.wall <= 3 ? "met" : "NOT met"}` : "";
      console.log(
        `  ${k.padEnd(15)} ${(m[k]!.wall * 1000).toFixed(0).padStart(5)} ms wall ${(m[k]!.wall / f.wall).toFixed(2)}×   ${(m[k]!.cpu * 1000).toFixed(0).padStart(5)} ms CPU ${(m[k]!.cpu / f.cpu).toFixed(2)}×${target}`,
      );
    }
    return m;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
