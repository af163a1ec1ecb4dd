/**
 * `build --dry-run --backend nix` at about 10,000, 30,000 and 60,000 variants, with Nix asked (the default
 * `--ask-nix-timeout`) and not asked (`--ask-nix-timeout 0`), side by side in one run (issue 64: plans at any scale).
 *
 * The matrix is the repository's matrix.ts with N named environments (bench/dry-run.ts's way); the variants' files, in
 * a --pkgs-dir, are what a generated wrapper evaluates first: the variant's pinned nixpkgs (`builtins.fetchTarball` of
 * its revision). This machine has no network, so the real Nix 2.8 on PATH answers every file with the download's
 * error, as it does for a fresh project offline. Each dry run runs in a process of its own (`node --import tsx`), so
 * its peak memory (`process.resourceUsage().maxRSS`) is its own; the seconds are those of the dry run (buildMain),
 * not of the process's start.
 *
 * Printed: per run the variants, seconds, CPU seconds, seconds per 10,000 variants and peak memory; per mode the
 * ratio of the per-10,000 figures, largest plan to smallest (linear: about 1).
 *
 * Run: `npx tsx bench/scale.ts` (BENCH_SCALE_ENVS="60 186 376" by default: about 10,000, 30,000 and 60,000
 * variants), or through bench/index.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { MatrixInput } from "../generator/matrix/schema.ts";

const ROOT = resolve(import.meta.dirname, "..");

/** What one dry run measured (in its own process). */
interface ScaleRun {
  variants: number;
  /** Seconds of the dry run (buildMain), wall clock. */
  seconds: number;
  /** CPU seconds this process spent in it (user + system). */
  cpuSeconds: number;
  /** Peak resident memory of the process, in bytes. */
  peakBytes: number;
  /** The plan's line about Nix's answer (asked, or why not), as printed. */
  answer: string;
}

/**
 * One dry run of the matrix with `envs` environments, Nix asked (`asked`) or not, in this process.
 * @throws Error when the dry run does not exit 0
 */
async function oneRun(envs: number, asked: boolean): Promise<ScaleRun> {
  const { buildMain } = await import("../generator/commands/build-main.ts");
  const { projectFromMatrix } = await import("../generator/matrix/project.ts");
  const base = (await import(pathToFileURL(resolve(ROOT, "matrix.ts")).href)).default as MatrixInput;
  const environments = Object.fromEntries(Array.from({ length: envs }, (_, i) => [`bench${i}`, ["einops"]]));
  const project = projectFromMatrix({ ...base, environments });
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-scale-"));
  try {
    const pkgs = join(dir, "pkgs");
    mkdirSync(pkgs);
    for (const v of project.variants)
      writeFileSync(join(pkgs, `${v.name}.nix`), `import (builtins.fetchTarball "https://github.com/NixOS/nixpkgs/archive/${v.nixpkgs}.tar.gz") { }\n`);
    let text = "";
    const io = { out: (s: string) => void (text += s), err: (s: string) => void (text += s), columns: 80 };
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const code = await buildMain(
      { dryRun: true, backend: "nix", variants: project.variants, pkgsDir: pkgs, outDir: join(dir, "out"), logsDir: join(dir, "logs"), ...(asked ? {} : { askNixTimeout: 0 }) },
      io,
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(c0);
    if (code !== 0) throw new Error(`build --dry-run exited ${code}: ${text.slice(-2000)}`);
    const flat = text.replace(/\s+/g, " ");
    const answer = /(asked Nix \(.*?\):|modelled: .*?; Nix not asked because [^(;]*)/.exec(flat)?.[1] ?? "(no answer line)";
    return { variants: project.variants.length, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakBytes: process.resourceUsage().maxRSS * 1024, answer };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One dry run in a child process (this file with `--one ENVS asked|model`), for its own peak memory.
 * @throws Error when the child fails
 */
function inChild(envs: number, asked: boolean): ScaleRun {
  const r = spawnSync(process.execPath, ["--import", "tsx", import.meta.filename, "--one", String(envs), asked ? "asked" : "model"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`bench/scale.ts --one ${envs}: exit ${r.status}: ${r.stderr.slice(-3000)}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as ScaleRun;
}

/** Every size with Nix asked and not, interleaved, and the per-10,000 figures and their ratios, printed. */
export async function main(): Promise<void> {
  const sizes = (process.env.BENCH_SCALE_ENVS ?? "60 186 376").split(/\s+/).filter(Boolean).map(Number);
  const runs: { asked: boolean; r: ScaleRun }[] = [];
  for (const n of sizes) for (const asked of [true, false]) runs.push({ asked, r: inChild(n, asked) });
  const per = (r: ScaleRun) => (r.seconds / r.variants) * 10_000;
  // CPU seconds of the planner's own process: on a shared, loaded machine the figure that holds (wall time counts the
  // waiting too; Nix's own processes are not in it).
  const cpuPer = (r: ScaleRun) => (r.cpuSeconds / r.variants) * 10_000;
  console.log("build --dry-run --backend nix at scale (each run its own process; files fetch their pinned nixpkgs, offline)");
  for (const { asked, r } of runs)
    console.log(
      `  ${asked ? "Nix asked" : "not asked"}: ${r.variants} variants: ${r.seconds.toFixed(1)} s (CPU ${r.cpuSeconds.toFixed(1)} s), ` +
        `${per(r).toFixed(1)} s per 10,000 variants (CPU ${cpuPer(r).toFixed(1)} s), peak memory ${(r.peakBytes / 2 ** 20).toFixed(0)} MiB`,
    );
  for (const asked of [true, false]) {
    const mine = runs.filter((x) => x.asked === asked).map((x) => x.r);
    if (mine.length > 1)
      console.log(
        `  ${asked ? "Nix asked" : "not asked"}: per 10,000 variants, largest to smallest: ${(per(mine.at(-1)!) / per(mine[0]!)).toFixed(2)} ` +
          `(CPU ${(cpuPer(mine.at(-1)!) / cpuPer(mine[0]!)).toFixed(2)}; linear: about 1); ` +
          `largest plan ${mine.at(-1)!.seconds.toFixed(1)} s (target < 60 s)`,
      );
  }
  const answered = runs.find((x) => x.asked);
  if (answered) console.log(`  what the plan said of Nix (${answered.r.variants} variants): ${answered.r.answer}`);
}

const argv = process.argv.slice(2);
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  if (argv[0] === "--one")
    oneRun(Number(argv[1]), argv[2] === "asked").then(
      (r) => console.log(JSON.stringify(r)),
      (e: unknown) => {
        console.error(e);
        process.exit(1);
      },
    );
  else
    main().catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
