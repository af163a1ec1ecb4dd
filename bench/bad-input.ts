/**
 * Benchmark: what a user with bad input waits for, now against the way it was computed before, side by side in one
 * run (medians of `runs`, in-process):
 *   matrix errors   validateMatrix of a matrix with 200,000 duplicate Pythons (the error message, cut to three lines
 *                   and a count), against zod alone raising one issue per duplicate as the schema did before (the
 *                   old path then also mapped and formatted every issue: the ratio understates the gain);
 *   nearest names   nearestNames of a 10,000-character name (explain, build, eval), against the sort that measured
 *                   two edit distances per comparison; and of a one-letter typo, where both must agree;
 *   explain         explainName of a dropped name now, against expanding the whole widened matrix (every catalog
 *                   GPU and ISA), which explain did before for each such name.
 * Run: `npx tsx bench/bad-input.ts`, or through bench/index.ts.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as z from "zod";
import { distance } from "fastest-levenshtein";
import { catalog } from "../generator/catalog/index.ts";
import { catalogAxes } from "../generator/catalog/lib/axes.ts";
import { PACKAGES } from "../generator/catalog/lib/packages.ts";
import { explainName } from "../generator/matrix/explain.ts";
import { expand } from "../generator/matrix/expand.ts";
import { loadProject, validateMatrix } from "../generator/matrix/project.ts";
import { nearestNames } from "../generator/matrix/suggest.ts";
import { time } from "./timing.ts";


const line = (label: string, now: number, before: number) =>
  console.log(`  ${label}: now ${(now * 1000).toFixed(1)} ms, before ${(before * 1000).toFixed(1)} ms, ratio before/now ${(before / now).toFixed(1)}×`);

/** Run the benchmark; returns the medians in seconds. */
export async function main(runs = 3) {
  console.log(`bad input at scale (in-process, median of ${runs} runs):`);
  const base = { releases: [{ torch: "2.9.1" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx2"], cpuOnly: true };
  const dup = { ...base, python: Array(200_000).fill("3.13") };
  const now1 = time(() => {
    try {
      validateMatrix(dup);
      return "";
    } catch (e) {
      return (e as Error).message;
    }
  }, runs);
  if (!/and 199996 more field\(s\)/.test(now1.result)) throw new Error(`unexpected message: ${now1.result.slice(0, 500)}`);
  const python = catalog.python.map((p) => p.version);
  // Built with zod's JIT, as the matrix schema was (its jitless object parser overflows the stack on 200,000 issues).
  z.config({ jitless: false });
  const oldAxis = z.object({
    python: z
      .array(z.string().refine((v) => python.includes(v)))
      .superRefine((arr, ctx) => {
        const seen = new Set<string>();
        arr.forEach((v, i) => {
          if (seen.has(v)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate Python version "${v}"` });
          seen.add(v);
        });
      }),
  });
  z.config({ jitless: true });
  const before1 = time(() => oldAxis.safeParse({ python: dup.python }).error!.issues.length, runs);
  line("200,000 duplicate Pythons", now1.s, before1.s);

  const p = await loadProject();
  const long = "x".repeat(10_000);
  const oldNearest = (name: string) => [...p.variants].sort((a, b) => distance(a.name, name) - distance(b.name, name) || (a.name < b.name ? -1 : 1)).slice(0, 5).map((v) => v.name);
  const now2 = time(() => nearestNames(long, p.variants), runs);
  const before2 = time(() => oldNearest(long), 1);
  line(`nearest names of a 10,000-character name (${p.variants.length} variants)`, now2.s, before2.s);
  const typo = p.variants[0]!.name.replace(/.$/, "_");
  const now3 = time(() => nearestNames(typo, p.variants).map((s) => s.name), runs);
  const before3 = time(() => oldNearest(typo), runs);
  line("nearest names of a one-letter typo", now3.s, before3.s);
  if (now3.result[0] !== before3.result[0]) throw new Error(`nearest name of ${typo}: ${now3.result[0]} now, ${before3.result[0]} before`);

  const dropped = p.excluded.find((e) => e.sm !== null)!;
  const now4 = time(() => explainName(dropped.name, p), runs);
  const wide = { ...p.matrix, ...catalogAxes(catalog), releases: p.matrix.releases, cpuOnly: true, packages: [...PACKAGES], only: undefined };
  const before4 = time(() => expand(wide, catalog).variants.length, runs);
  line(`explain ${dropped.name} (dropped)`, now4.s, before4.s);
  return { matrixErrors: [now1.s, before1.s], nearestLong: [now2.s, before2.s], nearestTypo: [now3.s, before3.s], explain: [now4.s, before4.s] };
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) await main();
