/**
 * Benchmark: evaluating many variants at once (release.nix, one nixpkgs instance per key). For the default matrix and a synthetic matrix of
 * ≥ 5,000 package variants, generated into a temporary tree, against the stand-in nixpkgs (which traces each
 * instantiation), measured side by side in one run:
 *   per file     `nix-instantiate .flox/pkgs/*.nix`: every wrapper evaluated on its own (each imports its
 *                own nixpkgs), what an engine does without an entry point;
 *   release.nix  `nix-instantiate release.nix -A all`: one evaluation, one nixpkgs instance per distinct
 *                (rev, system, CUDA set, capabilities).
 * Prints nixpkgs instantiations, distinct keys, derivations and eval seconds (median of `runs`), and the ratios.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
import { syncFiles } from "../generator/generate/write.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";
import type { Catalog } from "../generator/catalog/schema.ts";
import { nixpkgsInstanceKey } from "../generator/matrix/expand.ts";
import { catalog } from "../generator/catalog/index.ts";
import matrix from "../matrix.ts";
import { syntheticCatalog, syntheticMatrix } from "./generate.ts";

const ROOT = resolve(import.meta.dirname, "..");
const BY_REV = `import ${join(ROOT, "tests/fixtures/stand-in-nixpkgs/by-rev.nix")}`;

const keyOf = nixpkgsInstanceKey;

function instantiate(dir: string, args: string[]): { drvs: number; instances: number; seconds: number } {
  const t0 = process.hrtime.bigint();
  // release.nix takes `nixpkgs`, each .flox/pkgs wrapper `variantMatrixNixpkgs`; Nix passes a function only the
  // arguments it declares.
  const r = spawnSync("nix-instantiate", [...args, "--arg", "nixpkgs", BY_REV, "--arg", "variantMatrixNixpkgs", BY_REV], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 30 });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`nix-instantiate ${args.slice(0, 3).join(" ")} failed: ${r.stderr.slice(-2000)}`);
  return {
    drvs: r.stdout.split("\n").filter((l) => l.endsWith(".drv")).length,
    instances: r.stderr.split("\n").filter((l) => l.includes("stand-in nixpkgs instantiated")).length,
    seconds,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function one(label: string, m: MatrixInput, cat: Catalog, runs: number) {
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-eval-"));
  try {
    const p = projectFromMatrix(m, cat, dir);
    await syncFiles(dir, renderAll(p));
    cpSync(join(ROOT, "pkgs"), join(dir, "pkgs"), { recursive: true, filter: (src) => !src.endsWith("variants.nix") });
    const files = readdirSync(join(dir, ".flox/pkgs")).map((f) => join(".flox/pkgs", f));
    const keys = new Set(p.variants.map(keyOf)).size;
    const per: ReturnType<typeof instantiate>[] = [];
    const rel: ReturnType<typeof instantiate>[] = [];
    for (let i = 0; i < runs; i++) {
      per.push(instantiate(dir, files));
      rel.push(instantiate(dir, ["release.nix", "-A", "all"]));
    }
    const ps = median(per.map((x) => x.seconds));
    const rs = median(rel.map((x) => x.seconds));
    console.log(`eval, ${label}: ${p.variants.length} package variants, ${keys} distinct nixpkgs keys, ${runs} runs each`);
    console.log(`  per file:    ${per[0]!.instances} nixpkgs instantiations, ${per[0]!.drvs} drvs, median ${ps.toFixed(2)} s`);
    console.log(`  release.nix: ${rel[0]!.instances} nixpkgs instantiations, ${rel[0]!.drvs} drvs, median ${rs.toFixed(2)} s`);
    console.log(`  ratio per file / release.nix: instantiations ${(per[0]!.instances / rel[0]!.instances).toFixed(1)}×, time ${(ps / rs).toFixed(1)}×; release.nix instantiations = distinct keys: ${rel[0]!.instances === keys}`);
    return { variants: p.variants.length, keys, perFile: per[0]!, release: rel[0]!, perSeconds: ps, releaseSeconds: rs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Run both sizes. */
export async function main(runs = 3) {
  const small = await one("default matrix (matrix.ts)", matrix, catalog, runs);
  const cat = syntheticCatalog();
  const big = await one("synthetic matrix", syntheticMatrix(cat), cat, Math.max(1, runs - 2));
  return { small, big };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
