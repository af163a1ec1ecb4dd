/**
 * Benchmark: what each caching layer saves on a command users run, each measured warm (the cache in place) against
 * cold (that one cache removed before the run, everything else warm), interleaved (cold, warm, cold, warm, …) so that
 * drift hits both alike; whole processes of the compiled CLI. A layer stays only where it saves more than 50 ms:
 * - the matrix compile cache (load-matrix.ts, node_modules/.cache/variant-matrix/matrix-HASH.mjs): `list --json`;
 * - the templates precompiled by nunjucks (render/env.ts, …/templates/): `generate --check`, which renders;
 * - the generate stamp (stamp.ts): `generate` with nothing to write;
 * - dist/ (bin/build-dist.mjs): `list --json` from the bundle against the same through tsx;
 * - the lazy string-width (lazy-string-width.ts): `list --json` from the bundle against a bundle built without it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cacheDir } from "../generator/paths.ts";
import { cachedModule } from "../generator/matrix/load-matrix.ts";
import { clearStamp } from "../generator/generate/stamp.ts";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/variant-matrix.js");
const node = process.execPath;

function timeIt(argv: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One layer: the command, and what makes the next run cold (or the cold command itself). */
interface Layer {
  name: string;
  warm: string[];
  cold: string[];
  chill?: () => void;
  /** Before every timed run, warm or cold (the templates layer: no stamp, so that generate --check renders). */
  before?: () => void;
}

/** Run the benchmark; returns per layer the warm and cold medians in seconds. */
export async function main(runs = 7) {
  const work = mkdtempSync(join(ROOT, "dist", ".tmp-bench-caches-"));
  try {
    const matrix = join(work, "matrix.ts");
    writeFileSync(matrix, `import { defineMatrix } from ${JSON.stringify(join(ROOT, "generator/matrix/schema.ts"))};\nexport default defineMatrix({ releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.8", "13.0"], gpus: ["90", "121"], isas: ["avx512bf16", "armv9"], cpuOnly: true });\n`);
    const out = join(work, "out");
    const { bundle, ensureDist } = (await import(join(ROOT, "bin/build-dist.mjs"))) as { bundle: (dir: string, o?: object) => Promise<void>; ensureDist: () => Promise<string> };
    const cli = await ensureDist();
    const noShim = join(work, "no-lazy-string-width");
    await bundle(noShim, { lazyStringWidth: false });
    const list = ["list", "--json", "--matrix", matrix];
    timeIt([node, BIN, "generate", "--matrix", matrix, "--out", out]);
    const layers: Layer[] = [
      { name: "matrix compile cache (list --json)", warm: [node, cli, ...list], cold: [node, cli, ...list], chill: () => rmSync(cachedModule(matrix).path, { force: true }) },
      {
        name: "precompiled templates (generate --check)",
        warm: [node, cli, "generate", "--check", "--matrix", matrix, "--out", out],
        cold: [node, cli, "generate", "--check", "--matrix", matrix, "--out", out],
        chill: () => { for (const f of readdirSync(cacheDir("templates"))) rmSync(join(cacheDir("templates"), f), { force: true }); },
        // generate --check answers from the stamp when it can (freshness.ts): without one it renders.
        before: () => clearStamp(out),
      },
      { name: "generate stamp (generate, nothing to write)", warm: [node, cli, "generate", "--matrix", matrix, "--out", out], cold: [node, cli, "generate", "--matrix", matrix, "--out", out], chill: () => clearStamp(out) },
      { name: "dist/ (list --json; cold: through tsx)", warm: [node, cli, ...list], cold: [join(ROOT, "node_modules/.bin/tsx"), join(ROOT, "generator/cli.ts"), ...list] },
      { name: "lazy string-width (list --json)", warm: [node, cli, ...list], cold: [node, join(noShim, "cli.js"), ...list] },
    ];
    console.log(`caches (whole processes, ${runs} interleaved cold/warm runs each; a layer stays where it saves > 50 ms):`);
    const result: Record<string, { warm: number; cold: number }> = {};
    for (const l of layers) {
      const time = (argv: string[]) => (l.before?.(), timeIt(argv));
      time(l.warm);
      const warm: number[] = [];
      const cold: number[] = [];
      for (let i = 0; i < runs; i++) {
        l.chill?.();
        cold.push(time(l.cold));
        time(l.warm); // the cold run's cache written back, so the warm one is warm
        warm.push(time(l.warm));
      }
      const w = median(warm);
      const c = median(cold);
      result[l.name] = { warm: w, cold: c };
      console.log(`  ${l.name.padEnd(46)} warm ${w.toFixed(3)} s  cold ${c.toFixed(3)} s  saves ${Math.round((c - w) * 1000)} ms (warm/cold ${(w / c).toFixed(2)})`);
    }
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
