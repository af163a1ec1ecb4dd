/**
 * Benchmark: generate a synthetic matrix of ≥ 5,000 package variants into a fresh directory, then regenerate it
 * with nothing to change (the no-op run). Prints seconds, files per second and the no-op/full ratio, both measured
 * in this one run. Targets: full < 2 s, no-op < 0.5 s.
 *
 * The synthetic catalog is the real one plus 50 made-up GPU architectures (SM 200–249, compute capability
 * 20.0–24.9) that every CUDA version "compiles": it exists only to make the matrix large.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
import { syncFiles } from "../generator/generate/write.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";
import type { Catalog } from "../generator/catalog/schema.ts";

/** The real catalog plus `n` synthetic GPUs. */
export function syntheticCatalog(n = 50): Catalog {
  const fake = Array.from({ length: n }, (_, i) => {
    const major = 20 + Math.floor(i / 10);
    const capability = `${major}.${i % 10}`;
    return {
      sm: `${major}${i % 10}`,
      capability,
      family: "Synthetic",
      products: [`Synthetic GPU ${i}`],
      label: `Synthetic ${i}`,
      systems: ["x86_64-linux", "aarch64-linux"] as ("x86_64-linux" | "aarch64-linux")[],
      source: "bench/generate.ts (synthetic, benchmark only)",
    };
  });
  return {
    ...catalog,
    gpus: [...catalog.gpus, ...fake],
    cuda: catalog.cuda.map((c) => ({ ...c, capabilities: [...c.capabilities, ...fake.map((g) => g.capability)] })),
  };
}

/** A matrix over the synthetic catalog: the releases with hashed pins × 3 Python × 2 CUDA × 50 GPUs × 6 ISAs (+ CPU-only). */
export function syntheticMatrix(cat: Catalog): MatrixInput {
  return {
    releases: cat.nixpkgs
      .filter((p) => p.sha256 !== null)
      .map((p) => ({ torch: p.torch, nixpkgs: p.rev }))
      .filter((r, i, all) => all.findIndex((x) => x.torch === r.torch) === i),
    python: ["3.12", "3.13", "3.14"],
    cuda: ["12.8", "12.9"],
    gpus: cat.gpus.filter((g) => g.family === "Synthetic").map((g) => g.sm),
    isas: cat.isas.map((i) => i.key),
    cpuOnly: true,
  };
}

async function time<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = process.hrtime.bigint();
  const r = await f();
  return [r, Number(process.hrtime.bigint() - t0) / 1e9];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs: number[]) => `median ${median(xs).toFixed(3)} s (min ${Math.min(...xs).toFixed(3)}, max ${Math.max(...xs).toFixed(3)})`;

/**
 * Run the benchmark and print its figures: `runs` full generations, each into a fresh directory, and `runs` no-op
 * regenerations of the last one, interleaved (full, no-op, full, no-op, ...) so that both see the same machine.
 * Medians are reported because this machine is shared and noisy (the first writes after a large delete can
 * stall for seconds).
 */
export async function main(runs = 3): Promise<{ full: number; noop: number; files: number; variants: number }> {
  const cat = syntheticCatalog();
  const m = syntheticMatrix(cat);
  const dirs: string[] = [];
  const fulls: number[] = [];
  const noops: number[] = [];
  let files = 0;
  let variants = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const dir = mkdtempSync(join(tmpdir(), "vm-bench-"));
      dirs.push(dir);
      const generate = async () => {
        const p = projectFromMatrix(m, cat, dir);
        const fm = renderAll(p);
        return { p, fm, r: await syncFiles(dir, fm) };
      };
      const [first, full] = await time(generate);
      const [second, noop] = await time(generate);
      if (second.r.written.length || second.r.removed.length) throw new Error("no-op run wrote files");
      if (first.r.written.length !== first.fm.size) throw new Error("full run did not write every file");
      fulls.push(full);
      noops.push(noop);
      files = first.fm.size;
      variants = first.p.variants.length;
    }
    const full = median(fulls);
    const noop = median(noops);
    console.log(`generate: ${variants} package variants, ${files} files, ${runs} runs each`);
    console.log(`  full run:  ${fmt(fulls)}  ${Math.round(files / full)} files/s  target < 2 s: ${full < 2 ? "met" : "NOT met"}`);
    console.log(`  no-op run: ${fmt(noops)}  ${Math.round(files / noop)} files/s  target < 0.5 s: ${noop < 0.5 ? "met" : "NOT met"}`);
    console.log(`  ratio no-op / full (medians): ${(noop / full).toFixed(2)}`);
    return { full, noop, files, variants };
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
