/**
 * Fleet plan (pure): the fewest package variants such that every host of a fleet has one that runs on it.
 *
 * Each host contributes elements to cover: one per distinct GPU compute capability it holds (a host with an H100
 * and an RTX A6000 needs code for 9.0 and for 8.6), or one CPU element for a host without an NVIDIA GPU. A
 * candidate variant covers an element when it runs there by the catalog's rules, the same ones `detect` applies:
 * the host's system, an ISA whose instructions the host's CPU has, and for a GPU a variant named for that GPU's SM
 * whose code runs on it (capabilityRunsOn: same major, minor ≤ the GPU's; sm121 on CUDA 12.8 carries 12.0 code)
 * from a CUDA version the GPU driver supports (with full support, or through CUDA minor-version compatibility for a
 * variant that needs no PTX JIT: compat.ts `variantDriverSupport`). Like detect, it never hands a GPU a variant built and named for another
 * GPU, even where that code would load.
 *
 * The choice is a minimum set cover, solved exactly by branch and bound: pick the uncovered element with the
 * fewest candidates and branch on each candidate covering it (every cover holds one of them), pruning branches
 * that cannot beat the best cover found. Among covers of the fewest variants it minimises the total preference
 * cost: native code before binary-compatible code, then full driver support before minor-version compatibility, then
 * the shortest modelled wait (model/wait.ts), then the host's
 * widest ISA, then the newest CUDA: detect's order. Instances
 * are small (tens of candidates); past `maxNodes` the search stops and the greedy cover is used, and `method`
 * says which ran.
 */
import { compareVersions } from "../versions.ts";
import { isaFit, variantDriverSupport, variantRunsOn } from "../matrix/compat.ts";
import type { HostInfo } from "../host/read-host.ts";
import { isNative } from "../detect/recommend.ts";
import { variantWait, type Wait } from "../model/wait.ts";
import { capacityOf, type Capacity } from "../model/concurrency.ts";
import { availableParallelism, totalmem } from "node:os";
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { PackageName } from "../catalog/lib/packages.ts";

/** A host of the fleet, by a name the user recognises (its file or directory). */
export interface FleetHost {
  id: string;
  host: HostInfo;
}

/** Something a variant must cover: one GPU compute capability of a host, or a host without a GPU. */
export interface Element {
  /** "gh200 gpu 9.0" or "graviton3 cpu". */
  key: string;
  hostId: string;
  /** Compute capability, or null for a CPU-only host. */
  capability: string | null;
  /** GPU indices and name, for the report. */
  gpus: { indices: number[]; name: string } | null;
}

/** Where the cover came from. */
export type CoverMethod =
  | { kind: "exact"; nodes: number; candidates: number; elements: number }
  | { kind: "greedy"; reason: string; candidates: number; elements: number };

/** The plan for a fleet. */
export interface FleetCover {
  /** Chosen variants of `package`, in name order. */
  chosen: Variant[];
  /** For each servable element, the chosen variant it runs (its best one). */
  assignment: { element: Element; variant: Variant; native: boolean; isaIsBest: boolean }[];
  /** Elements no candidate covers. */
  unserved: Element[];
  method: CoverMethod;
  /** Total preference cost of the assignment (0 = every element native on its best ISA and newest CUDA). */
  cost: number;
  /** Each chosen variant's modelled wait (model/wait.ts variantWait), by name. */
  waits: Map<string, Wait>;
}

/** The elements of a fleet (see the module comment). */
export function elementsOf(hosts: readonly FleetHost[]): Element[] {
  const out: Element[] = [];
  for (const { id, host } of hosts) {
    if (host.gpus.length === 0) {
      out.push({ key: `${id} cpu`, hostId: id, capability: null, gpus: null });
      continue;
    }
    const byCap = new Map<string, { indices: number[]; name: string }>();
    for (const g of host.gpus) {
      const e = byCap.get(g.capability) ?? { indices: [], name: g.name };
      e.indices.push(g.index);
      byCap.set(g.capability, e);
    }
    for (const [cap, gpus] of byCap) out.push({ key: `${id} gpu ${cap}`, hostId: id, capability: cap, gpus });
  }
  return out;
}

/** ISA keys the host's CPU runs, with their ranks: detect's own rule (matrix/compat.ts isaFit). */
function runnableIsas(host: HostInfo, catalog: Catalog): Map<string, number> {
  return new Map(isaFit(host, catalog).runnable.map((i) => [i.key, i.rank] as [string, number]));
}

/**
 * Does `v` run on element `e` of `host`? (The rules of the module comment.)
 */
export function runsOn(v: Variant, e: Element, host: HostInfo, catalog: Catalog): boolean {
  const gpu = e.capability === null ? null : { capability: e.capability, driver: host.gpus.find((g) => g.capability === e.capability)!.driver };
  return variantRunsOn(v, host, gpu, catalog);
}

/**
 * Preference cost of running `v` on `e` (lower is better), detect's order (detect/rules.ts bestFirst): 10,000,000 for
 * binary-compatible instead of native code, 1,000,000 for a CUDA the GPU driver runs only through minor-version
 * compatibility, then 100 per minute of the variant's modelled wait (`o.waitS`, model/wait.ts;
 * 0 when not given), 10 per ISA rank below the host's widest runnable ISA, 1 per newer CUDA version among the
 * candidates (`o.cudaOrder`, newest first).
 */
export function preferenceCost(v: Variant, e: Element, host: HostInfo, o: { catalog: Catalog; cudaOrder: readonly string[]; waitS?: number }): number {
  const { catalog, cudaOrder, waitS = 0 } = o;
  const ranks = runnableIsas(host, catalog);
  const best = Math.max(...ranks.values());
  const native = e.capability === null || isNative(v, e.capability);
  const cudaPos = v.cuda === null ? 0 : Math.max(0, cudaOrder.indexOf(v.cuda));
  const gpu = e.capability === null ? null : { capability: e.capability, driver: host.gpus.find((g) => g.capability === e.capability)!.driver };
  const minorCompat = gpu !== null && variantDriverSupport(v, gpu, catalog) === "minorCompat";
  return (native ? 0 : 10_000_000) + (minorCompat ? 1_000_000 : 0) + Math.round(waitS / 60) * 100 + (best - (ranks.get(v.isa) ?? 0)) * 10 + cudaPos;
}

/**
 * The cover problem of a fleet, as indices: candidate `vi` (into `pool`) covers element `ei` (into `elements`) when
 * `cost[vi]` has `ei`, at that preference cost. Built once by `coverTable`; the search steps only read it.
 */
interface CoverTable {
  hostOf: Map<string, HostInfo>;
  elements: Element[];
  /** The candidates of the package. */
  pool: Variant[];
  /** waits[vi]: candidate vi's modelled wait. */
  waits: Wait[];
  /** covers[vi]: the element indices candidate vi covers. */
  covers: number[][];
  /** cost[vi]: element index → preference cost of candidate vi there. */
  cost: Map<number, number>[];
  /** byElement[ei]: the candidates covering element ei. */
  byElement: number[][];
  /** Element indices some candidate covers. */
  servable: number[];
  unserved: Element[];
  /** Candidates that cover some element. */
  relevant: number[];
}

/** The cover table of `hosts` for the candidates of `pkg` (see `CoverTable`). */
function coverTable(
  hosts: readonly FleetHost[],
  candidates: readonly Variant[],
  catalog: Catalog,
  pkg: PackageName,
  o: { capacity: Capacity; history: ReadonlyMap<string, number> },
): CoverTable {
  const hostOf = new Map(hosts.map((h) => [h.id, h.host]));
  const elements = elementsOf(hosts);
  const pool = candidates.filter((v) => v.package === pkg);
  const cudaOrder = [...new Set(pool.map((v) => v.cuda).filter((c): c is string => c !== null))].sort((a, b) => compareVersions(b, a));
  const covers: number[][] = pool.map(() => []);
  const cost: Map<number, number>[] = pool.map(() => new Map());
  const waits = pool.map((v) => variantWait(v, candidates, catalog, o.capacity, { history: o.history }));
  elements.forEach((e, ei) => {
    const host = hostOf.get(e.hostId)!;
    pool.forEach((v, vi) => {
      if (runsOn(v, e, host, catalog)) {
        covers[vi]!.push(ei);
        cost[vi]!.set(ei, preferenceCost(v, e, host, { catalog, cudaOrder, waitS: waits[vi]!.seconds ?? 0 }));
      }
    });
  });
  const byElement: number[][] = elements.map((_, ei) => pool.map((_, vi) => vi).filter((vi) => cost[vi]!.has(ei)));
  return {
    hostOf,
    elements,
    pool,
    waits,
    covers,
    cost,
    byElement,
    servable: elements.map((_, ei) => ei).filter((ei) => byElement[ei]!.length > 0),
    unserved: elements.filter((_, ei) => byElement[ei]!.length === 0),
    relevant: pool.map((_, vi) => vi).filter((vi) => covers[vi]!.length > 0),
  };
}

/** Total preference cost of a set of candidates: each servable element at its cheapest candidate of the set. */
function assignmentCost(t: CoverTable, set: readonly number[]): number {
  return t.servable.reduce((s, ei) => s + Math.min(...set.filter((vi) => t.cost[vi]!.has(ei)).map((vi) => t.cost[vi]!.get(ei)!)), 0);
}

/**
 * Branch and bound on (number of variants, preference cost): branch on the candidates of the uncovered element with
 * the fewest, cheapest first; prune a branch that cannot beat the best cover's size. `best` is null when nothing is
 * servable or the search passed `maxNodes` (`aborted`).
 */
function exactCover(t: CoverTable, maxNodes: number): { best: number[] | null; nodes: number; aborted: boolean } {
  let nodes = 0;
  let best: number[] | null = null;
  let bestCost = Infinity;
  let aborted = false;
  const chosen: number[] = [];
  const count = new Array<number>(t.elements.length).fill(0);
  const search = () => {
    if (aborted) return;
    if (++nodes > maxNodes) {
      aborted = true;
      return;
    }
    const uncovered = t.servable.filter((ei) => count[ei] === 0);
    if (uncovered.length === 0) {
      const c = assignmentCost(t, chosen);
      if (best === null || chosen.length < best.length || (chosen.length === best.length && c < bestCost)) {
        best = [...chosen];
        bestCost = c;
      }
      return;
    }
    // Every remaining element needs a variant: at least one more; never more than the best cover's size.
    if (best !== null && chosen.length + 1 > (best as number[]).length) return;
    const pivot = uncovered.reduce((a, b) => (t.byElement[a]!.length <= t.byElement[b]!.length ? a : b));
    for (const vi of [...t.byElement[pivot]!].sort((a, b) => t.cost[a]!.get(pivot)! - t.cost[b]!.get(pivot)!)) {
      if (chosen.includes(vi)) continue;
      chosen.push(vi);
      for (const ei of t.covers[vi]!) count[ei]!++;
      search();
      for (const ei of t.covers[vi]!) count[ei]!--;
      chosen.pop();
    }
  };
  search();
  return { best: aborted ? null : best, nodes, aborted };
}

/** Greedy cover: the candidate covering most uncovered elements (the first on ties), until all are covered. */
function greedyCover(t: CoverTable): number[] {
  const set: number[] = [];
  const covered = new Set<number>();
  while (t.servable.some((ei) => !covered.has(ei))) {
    const gain = (vi: number) => t.covers[vi]!.filter((ei) => !covered.has(ei)).length;
    const vi = t.relevant.reduce((a, b) => (gain(b) > gain(a) ? b : a));
    set.push(vi);
    for (const ei of t.covers[vi]!) covered.add(ei);
  }
  return set;
}

/** For each servable element, the cheapest candidate of `set` that covers it, and whether it is native on its best ISA. */
function assign(t: CoverTable, set: readonly number[], catalog: Catalog): FleetCover["assignment"] {
  return t.servable.map((ei) => {
    const vi = set.filter((x) => t.cost[x]!.has(ei)).sort((a, b) => t.cost[a]!.get(ei)! - t.cost[b]!.get(ei)!)[0]!;
    const e = t.elements[ei]!;
    const v = t.pool[vi]!;
    const ranks = runnableIsas(t.hostOf.get(e.hostId)!, catalog);
    return {
      element: e,
      variant: v,
      native: e.capability === null || isNative(v, e.capability),
      isaIsBest: ranks.get(v.isa) === Math.max(...ranks.values()),
    };
  });
}

/**
 * Choose the fewest variants of `pkg` from `candidates` covering every servable element of `hosts`: the exact
 * search (`exactCover`), or past `maxNodes` nodes the greedy cover (`greedyCover`); `method` says which.
 * @param opts.maxNodes search nodes before falling back to greedy (default 2,000,000)
 * @param opts.capacity the machine the variants are built on, for their waits (model/concurrency.ts; default this
 *   machine's, where `build` runs); opts.history earlier builds by name (driver/report.ts durationsFromReports)
 */
export function coverFleet(
  hosts: readonly FleetHost[],
  candidates: readonly Variant[],
  catalog: Catalog,
  pkg: PackageName,
  opts: { maxNodes?: number; capacity?: Capacity; history?: ReadonlyMap<string, number> } = {},
): FleetCover {
  const capacity = opts.capacity ?? capacityOf({ cpus: availableParallelism(), memBytes: totalmem() });
  const t = coverTable(hosts, candidates, catalog, pkg, { capacity, history: opts.history ?? new Map() });
  const maxNodes = opts.maxNodes ?? 2_000_000;
  const exact = exactCover(t, maxNodes);
  const size = { candidates: t.relevant.length, elements: t.servable.length };
  const set = exact.aborted ? greedyCover(t) : (exact.best ?? []);
  const method: CoverMethod = exact.aborted
    ? { kind: "greedy", reason: `the exact search passed ${maxNodes} nodes`, ...size }
    : { kind: "exact", nodes: exact.nodes, ...size };
  return {
    chosen: set.map((vi) => t.pool[vi]!).sort((a, b) => a.name.localeCompare(b.name)),
    assignment: assign(t, set, catalog),
    unserved: t.unserved,
    method,
    cost: set.length ? assignmentCost(t, set) : 0,
    waits: new Map(set.map((vi) => [t.pool[vi]!.name, t.waits[vi]!])),
  };
}
