/**
 * Benchmark: verify's attribution of device code to origins (generator/verify/origins.ts `attribute`) on the H100
 * recording of PyPI torch 2.11.0 (tests/fixtures/probes/h100-verify-fast/probe.json: libtorch_cuda.so's 2,789 cubins
 * and the other libraries), before and after each head was classified once per library; and verify's `identify`
 * (generator/verify/compare.ts: which variants of the matrix the installation is), before and after the candidates
 * shared each library's attribution.
 *
 * - before: the attribution as origins.ts did it until this benchmark was written, copied below: every head of every
 *   block classified again (its library's owner looked up again each time), so a kernel's head recurring in the
 *   cubin of every arch is classified once per arch.
 * - after: `attribute` of generator/verify/origins.ts.
 * - identify before: `checkPromise` of every candidate (the default matrix's CUDA pytorch variants), each attributing
 *   every library again; after: `identify`, whose candidates share one attribution per library.
 * Both run in-process, side by side (before, after, before, after, …), on the same facts; the results are compared
 * first (the same origins, SASS and PTX per library). Prints the medians and their ratio.
 *
 * Run: `npx tsx bench/attribute.ts`, or through bench/index.ts.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { catalog } from "../generator/catalog/index.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { attribute, ownerOf, type LibDeviceCode } from "../generator/verify/origins.ts";
import { checkPromise, identify, type Probe } from "../generator/verify/compare.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import defaultMatrix from "../matrix.ts";
import type { CheckerFacts } from "../generator/catalog/lib/checker-facts.ts";
import type { DeviceCodeOrigin } from "../generator/catalog/lib/device-code.ts";

const ROOT = resolve(import.meta.dirname, "..");
const PROBE = join(ROOT, "tests/fixtures/probes/h100-verify-fast/probe.json");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Attribution = { origin: DeviceCodeOrigin | null; by: "helper" | "name" | "own" | "default" };

/** The attribution before: origins.ts's `classify` and `attribute` as they were (one classification per block head). */
function attributeBefore(libPath: string, d: LibDeviceCode, facts: CheckerFacts) {
  const re = (xs: readonly string[]) => xs.map((x) => new RegExp(x));
  const pt = { helpers: re(facts.compilerHelperNames), bundled: facts.bundledDeviceCode.map((b) => ({ b, re: re(b.names) })), own: facts.ownDeviceCode.map((o) => ({ o, re: re(o.names) })) };
  const classify = (head: string): Attribution => {
    if (pt.helpers.some((r) => r.test(head))) return { origin: null, by: "helper" };
    for (const { b, re } of pt.bundled) if (re.some((r) => r.test(head))) return { origin: b.origin, by: "name" };
    const owner = ownerOf(libPath, facts);
    const own = pt.own.find((x) => x.o.origin === owner);
    if (own && own.re.some((r) => r.test(head))) return { origin: owner, by: "own" };
    const def = facts.bundledDeviceCode.find((b) => b.libraryDefault && b.library === libPath.split("/").pop()!);
    return { origin: def && owner === "torch" ? def.origin : owner, by: "default" };
  };
  const byOrigin = new Map<DeviceCodeOrigin, { sass: Set<string>; ptx: Set<string> }>();
  const heads = d.heads ?? [];
  const owner = ownerOf(libPath, facts);
  for (const b of d.blocks ?? []) {
    if (b.kind === "ptx" && b.heads === null) continue;
    const attributions = (b.heads ?? []).map((i) => classify(heads[i] ?? ""));
    const named = attributions.find((a) => a.by === "name")?.origin ?? null;
    const origins = new Set<DeviceCodeOrigin>();
    for (const a of attributions) if (a.origin) origins.add(a.by === "default" && named ? named : a.origin);
    if (origins.size === 0) origins.add(classify("").origin ?? owner);
    for (const o of origins) {
      const e = byOrigin.get(o) ?? { sass: new Set<string>(), ptx: new Set<string>() };
      (b.kind === "elf" ? e.sass : e.ptx).add(b.arch);
      byOrigin.set(o, e);
    }
  }
  return byOrigin;
}

/** A comparable text of one attribution: origin → sorted SASS and PTX. */
const text = (m: Map<DeviceCodeOrigin, { sass: Set<string>; ptx: Set<string> }>) =>
  JSON.stringify([...m].map(([o, e]) => [o, [...e.sass].sort(), [...e.ptx].sort()]).sort());

/** Run the benchmark; returns the medians (seconds) and the ratio before/after. */
export async function main(runs = 7) {
  const facts = catalogCheckerFacts(catalog);
  const probe = JSON.parse(readFileSync(PROBE, "utf8")) as Probe & { cuobjdump: { libs: Record<string, LibDeviceCode> } };
  const libs = Object.entries(probe.cuobjdump.libs);
  for (const [p, d] of libs)
    if (text(attributeBefore(p, d, facts)) !== text(attribute(p, d, facts).byOrigin)) throw new Error(`${p}: before and after attribute differently`);
  const blocks = libs.reduce((n, [, d]) => n + (d.blocks?.length ?? 0), 0);
  const candidates = projectFromMatrix(defaultMatrix).variants.filter((v) => v.package === "pytorch" && v.cuda !== null);
  const identifyBefore = () => {
    const failed = candidates.map((v) => ({ name: v.name, failed: checkPromise(v, probe, facts).filter((c) => c.ok === false).length }));
    return failed.filter((x) => x.failed === 0).map((x) => x.name);
  };
  if (JSON.stringify(identifyBefore()) !== JSON.stringify(identify(candidates, probe, facts).matches)) throw new Error("identify before and after differ");
  const once = (f: () => void) => {
    const t0 = process.hrtime.bigint();
    f();
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };
  const t = { before: [] as number[], after: [] as number[], idBefore: [] as number[], idAfter: [] as number[] };
  for (let i = 0; i < runs; i++) {
    t.before.push(once(() => libs.forEach(([p, d]) => attributeBefore(p, d, facts))));
    t.after.push(once(() => libs.forEach(([p, d]) => attribute(p, d, facts))));
    t.idBefore.push(once(identifyBefore));
    t.idAfter.push(once(() => identify(candidates, probe, facts)));
  }
  const [b, a, ib, ia] = [median(t.before), median(t.after), median(t.idBefore), median(t.idAfter)];
  console.log(`verify on the H100 PyPI torch 2.11.0 probe (${libs.length} libraries, ${blocks} blocks; in-process, median of ${runs}, side by side):`);
  console.log(`  attribute, every library: before (each block's heads classified again) ${b.toFixed(3)} s  after (each head once per library) ${a.toFixed(3)} s  ${(b / a).toFixed(1)}×`);
  console.log(`  identify among ${candidates.length} CUDA pytorch variants: before (each candidate attributes again) ${ib.toFixed(3)} s  after (one attribution per library) ${ia.toFixed(3)} s  ${(ib / ia).toFixed(1)}×`);
  console.log("  (identify's before uses the new attribute: its ratio is the sharing alone)");
  return { beforeS: b, afterS: a, ratio: b / a, identifyBeforeS: ib, identifyAfterS: ia, identifyRatio: ib / ia };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
