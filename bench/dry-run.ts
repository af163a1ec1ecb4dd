/**
 * `build --dry-run` against the variant count: the repository's matrix.ts with N named environments (each adds one
 * variant per kept combination), the whole dry run in-process (commands/build-main.ts buildMain: selection, checks,
 * plan, simulation, rows, text; stdout counted, not written), over a --pkgs-dir of empty files named like the variants
 * (the dry run reads no file's content). Two sizes side by side; printed: each time per 10,000 variants and their
 * ratio (a linear plan keeps it near 1; a quadratic one grows with the variant count).
 *
 * Run: `npx tsx bench/dry-run.ts` (BENCH_DRY_ENVS="20 80" by default: 3,792 and about 14,000 variants; "400" is the
 * 63,832-variant matrix of issue 55), or through bench/index.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { buildMain } from "../generator/commands/build-main.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";

const ROOT = resolve(import.meta.dirname, "..");

/**
 * One dry run: the variant count, its seconds (expand excluded), the CPU seconds this process spent in it (user +
 * system, `process.cpuUsage`: the figure that holds on a shared, loaded machine, where wall time counts the waiting
 * too) and the characters it printed.
 */
export async function dryRunSeconds(envCount: number): Promise<{ variants: number; seconds: number; cpuSeconds: number; chars: number }> {
  const base = (await import(pathToFileURL(resolve(ROOT, "matrix.ts")).href)).default as MatrixInput;
  const environments = Object.fromEntries(Array.from({ length: envCount }, (_, i) => [`bench${i}`, ["einops"]]));
  const project = projectFromMatrix({ ...base, environments });
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-dry-"));
  try {
    const pkgs = join(dir, "pkgs");
    mkdirSync(pkgs);
    for (const v of project.variants) writeFileSync(join(pkgs, `${v.name}.nix`), "");
    let chars = 0;
    // The plan is counted, not written: an Io whose out and err only add up the characters (commands/shared.ts Io).
    const io = { out: (s: string) => void (chars += s.length), err: (s: string) => void (chars += s.length), columns: 80 };
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const code = await buildMain({ dryRun: true, backend: "nix", variants: project.variants, pkgsDir: pkgs, outDir: join(dir, "out"), logsDir: join(dir, "logs"), askNixTimeout: 0 }, io);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(c0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    if (code !== 0) throw new Error(`build --dry-run exited ${code}`);
    return { variants: project.variants.length, seconds, cpuSeconds, chars };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Both sizes and the ratio of their time per 10,000 variants, printed. */
export async function main(): Promise<void> {
  const sizes = (process.env.BENCH_DRY_ENVS ?? "20 80").split(/\s+/).filter(Boolean).map(Number);
  const runs = [];
  for (const n of sizes) runs.push({ n, ...(await dryRunSeconds(n)) });
  console.log("build --dry-run against the variant count (in-process, a --pkgs-dir of empty files)");
  const per = (r: { seconds: number; variants: number }) => (r.seconds / r.variants) * 10_000;
  for (const r of runs)
    console.log(
      `  ${r.n} environments, ${r.variants} variants: ${r.seconds.toFixed(1)} s (CPU ${r.cpuSeconds.toFixed(1)} s), ` +
        `${per(r).toFixed(1)} s per 10,000 variants (CPU ${((r.cpuSeconds / r.variants) * 10_000).toFixed(1)} s) (${(r.chars / 1e6).toFixed(1)} MB of plan)`,
    );
  if (runs.length > 1) console.log(`  ratio of time per 10,000 variants, largest to smallest: ${(per(runs.at(-1)!) / per(runs[0]!)).toFixed(2)} (linear: about 1)`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename))
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
