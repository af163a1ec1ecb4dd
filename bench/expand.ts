/**
 * Expand's scale in named environments: the default matrix.ts alone, and the same matrix with enough named
 * environments to add 1,000+ environment variants (each environment adds one variant per kept combination).
 * Expand is pure (matrix × catalog → variants), so both are timed in-process, side by side, median of several runs;
 * printed: each median and the ratio of the wide one to the default (linear scale means a ratio near the ratio of
 * variant counts, not its square). Target: the 1,000-environment-variant expand under 2 s on the dev machine.
 *
 * Run: `npx tsx bench/expand.ts`, or through bench/index.ts.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";
import { time } from "./timing.ts";

const ROOT = resolve(import.meta.dirname, "..");


/** Run the benchmark; returns the medians (seconds) and the variant counts. */
export async function main(runs = 5) {
  const base = (await import(pathToFileURL(resolve(ROOT, "matrix.ts")).href)).default as MatrixInput;
  const plain = time(() => projectFromMatrix({ ...base, environments: {} }), runs);
  const combos = plain.result.variants.filter((v) => v.package === "torch-env").length;
  const envCount = Math.ceil(1000 / Math.max(1, combos));
  const environments = Object.fromEntries(Array.from({ length: envCount }, (_, i) => [`bench${i}`, ["einops"]]));
  const wide = time(() => projectFromMatrix({ ...base, environments }), runs);
  const envVariants = wide.result.variants.length - plain.result.variants.length;
  console.log("expand (pure, in-process; median of", runs, "runs):");
  console.log(`  default matrix.ts: ${plain.result.variants.length} variants in ${plain.s.toFixed(3)} s`);
  console.log(`  + ${envCount} named environments: ${wide.result.variants.length} variants (${envVariants} environment variants) in ${wide.s.toFixed(3)} s`);
  console.log(`  ratio wide/default: time ${(wide.s / plain.s).toFixed(2)}×, variants ${(wide.result.variants.length / plain.result.variants.length).toFixed(2)}× (target: 1,000+ environment variants under 2 s)`);
  return { plainS: plain.s, wideS: wide.s, envVariants };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
