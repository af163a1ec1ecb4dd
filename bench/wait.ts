/**
 * The modelled wait of the default pick on a 16-core, 128 GiB host, before and after the critical path gets the cores,
 * side by side in one run from the model's own figures (model/plan.ts TORCH_BUILD_MODEL and the catalog's):
 *
 * - before: the fixed jobs rule (every build min(8, slots) cores, floor(slots / 8) builds at once): torch gets 8 of
 *   the 16 cores while nothing can build beside it;
 * - after: the driver's schedule (model/concurrency.ts startBuilds): the free slots shared out as builds start, so
 *   torch, ready alone, gets all 16, then torchaudio and torchvision 8 each.
 *
 * The pick is detect's for the recorded H100 host with driver 580 (tests/fixtures/hosts/h100-driver580, 16 CPUs)
 * given 128 GiB; the wait is model/wait.ts variantWait, the one detect, install and `build --dry-run` print.
 * Target: after ≤ 3h10m (torch alone at 16 cores is about 2h38m, then torchaudio 30 min and the environment 1 min).
 *
 * Run: `npx tsx bench/wait.ts`, or through bench/index.ts (`npm run bench`). No timing: the figures are the model's.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { loadProject } from "../generator/matrix/project.ts";
import { readHost } from "../generator/host/read-host.ts";
import { recommend } from "../generator/detect/recommend.ts";
import { capacityOf, hostCapacity, DEFAULT_CORES_PER_BUILD } from "../generator/model/concurrency.ts";
import { variantWait } from "../generator/model/wait.ts";
import { formatDuration } from "../generator/driver/report.ts";

const ROOT = resolve(import.meta.dirname, "..");
const HOST = join(ROOT, "tests/fixtures/hosts/h100-driver580");

/** Print the before and after waits and their ratio; returns them in seconds. */
export async function main(): Promise<{ before: number; after: number }> {
  const p = await loadProject();
  const host = await readHost({ cpuinfo: join(HOST, "cpuinfo"), nvidiaSmi: join(HOST, "nvidia-smi.txt"), mem: 128 });
  const pick = recommend(host, p.variants, p.catalog, { package: "torch-env" }).variants[0]!;
  const v = p.variants.find((x) => x.name === pick)!;
  const after = hostCapacity(host);
  // The old rule: --cores min(8, slots) for every build, floor(slots / 8) builds at once.
  const before = capacityOf({ cpus: host.cpu.logicalCpus, memBytes: host.memory.bytes }, { cores: Math.min(DEFAULT_CORES_PER_BUILD, after.slots) });
  const wb = variantWait(v, p.variants, p.catalog, before);
  const wa = variantWait(v, p.variants, p.catalog, after);
  const parts = (w: typeof wa) => w.parts.map((x) => `${x.what} ${formatDuration(x.seconds)}${x.cores ? ` @${x.cores}` : ""}`).join(" → ");
  console.log(`\nwait of ${pick} on ${after.machine}`);
  console.log(`  before (jobs ${before.jobs} × ${before.cores} cores):    ${formatDuration(wb.seconds!)}  ${parts(wb)}`);
  console.log(`  after  (${after.slots} slots shared as builds start): ${formatDuration(wa.seconds!)}  ${parts(wa)}`);
  console.log(`  after / before: ${(wa.seconds! / wb.seconds!).toFixed(3)} (target: after ≤ 3h10m: ${wa.seconds! <= 3 * 3600 + 10 * 60 ? "met" : "NOT met"})`);
  return { before: wb.seconds!, after: wa.seconds! };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
