/**
 * The wait: how long until the last selected variant is ready, counting every build that has to happen. Pure.
 *
 * The plan (plan.ts) holds the variants; the cache model (cache-model.ts) says which of torch's inputs the binary
 * cache cannot serve (NCCL, NVSHMEM, magma, triton, a package-set CUDA closure). Those come before the variants that
 * need them (torch links NCCL, NVSHMEM and magma, and takes triton), so they are nodes of the same plan here, and the
 * list schedule the build driver runs (plan.ts simulate) gives the wait. Its parts are the schedule's critical chain:
 * each build of the chain starts when the one before it ends, so the parts sum to the wait exactly.
 *
 * The schedule is the driver's own (concurrency.ts startBuilds over the host's Capacity: the free compile slots shared
 * out among the ready builds, so torch alone gets every slot), so the wait is what `build` then runs.
 *
 * `variantWait` is one variant's wait with nothing built yet (its closure on the host's capacity, the earlier builds
 * of `history`): what detect, install, `build --dry-run`, fleet and doctor print and rank by: one figure for one pick.
 */
import { TORCH_PACKAGE } from "../catalog/lib/packages.ts";
import type { Variant } from "../matrix/schema.ts";
import { makePlan, simulate, staticCheckInputs, type PlanInput } from "./plan.ts";
import type { Capacity } from "./concurrency.ts";
import { modelCacheMisses, type CacheModelCatalog, type ModelledBuild } from "./cache-model.ts";

/** One build on the wait's critical chain. */
export interface WaitPart {
  /** The variant's name, or the cache model's key of a dependency build. */
  name: string;
  /** The package ("pytorch", "torchaudio", …) or the dependency ("nccl", "magma", "cuda-closure", …). */
  what: string;
  seconds: number;
  /** True for a dependency the binary cache cannot serve (the cache model's). */
  offCache: boolean;
  /** Where the figure comes from (plan.ts PlanNode.estimateBasis, with the cores the schedule gave it). */
  basis: string;
  /** The cores the schedule starts it with (concurrency.ts startBuilds); null in a fixed-jobs replay. */
  cores: number | null;
}

/** A plan's wait: seconds, the critical chain, and the dependency builds it counts. */
export interface Wait {
  /** Seconds until the last node is ready; null when some build to do has no estimate (`unknown` names them). */
  seconds: number | null;
  /** The critical chain in order; its seconds sum to `seconds`. */
  parts: WaitPart[];
  /** The dependency builds the cache cannot serve that the wait counts (each once). */
  offCache: ModelledBuild[];
  /** Seconds of `offCache`, all of it (on the chain or beside it); those of unknown duration count 0 (see `unknown`). */
  offCacheSeconds: number;
  /** Builds without an estimate. */
  unknown: string[];
}

/** A wait part's `what` for a variant's static check (its proof: plan.ts staticCheckName). */
export const STATIC_CHECK_WHAT = "static check";

/** Whether a plan input is a check of a variant (targets.ts BuildTarget.check, plan.ts staticCheckInputs). */
function isCheck(t: PlanInput): boolean {
  return (t as { check?: unknown }).check !== undefined;
}

/** Human names of the cache model's builds. */
export const BUILD_LABEL: Record<ModelledBuild["what"], string> = {
  nccl: "NCCL",
  nvshmem: "NVSHMEM",
  magma: "magma",
  triton: "triton",
  "cuda-closure": "CUDA closure",
  dependency: "rebuilt dependencies",
};

/**
 * The wait of `targets` with the dependency builds `builds` before the variants that need them.
 * @param history earlier durations by name (they win over the estimates)
 * @param o.capacity the host's compile slots and the user's --cores/--jobs (concurrency.ts capacityOf); o.done names
 *   already built or fetched (no time)
 */
export function waitOf(
  targets: readonly PlanInput[],
  builds: readonly ModelledBuild[],
  history: ReadonlyMap<string, number>,
  o: { capacity: Capacity; done?: ReadonlySet<string> },
): Wait {
  const names = new Set(targets.map((t) => t.name));
  const needs = new Map<string, string[]>();
  for (const b of builds) for (const n of b.variants) if (names.has(n)) needs.set(n, [...(needs.get(n) ?? []), b.key]);
  const used = builds.filter((b) => b.variants.some((n) => names.has(n) && !o.done?.has(n)));
  const plan = makePlan(
    [
      // A rebuilt dependency is planned as its own package: with no sourced figure its estimate is unknown (plan.ts).
      ...used.map((b) => ({ name: b.key, package: b.attr ?? TORCH_PACKAGE, dependsOn: [] })),
      ...targets.map((t) => ({ ...t, dependsOn: [...t.dependsOn, ...(needs.get(t.name) ?? []).filter((k) => used.some((b) => b.key === k))] })),
    ],
    history,
    { cores: o.capacity.cores ?? o.capacity.slots, fixed: new Map(used.flatMap((b) => (b.seconds === null ? [] : [[b.key, { seconds: b.seconds, basis: `model: ${BUILD_LABEL[b.what]} from source (${b.source.split(":")[0]})` }]]))) },
  );
  const sim = simulate(plan, o.capacity, new Map(), o.done ?? new Set());
  const byKey = new Map(used.map((b) => [b.key, b]));
  const parts = criticalChain(sim.slots).map((s) => {
    const n = plan.nodes.get(s.name)!;
    const b = byKey.get(s.name);
    const basis = s.cores !== null && n.coreSeconds !== null ? n.estimateBasis.replace(/\d+ cores$/, `${s.cores} cores`) : n.estimateBasis;
    return { name: s.name, what: b ? b.what : isCheck(n.target) ? STATIC_CHECK_WHAT : n.target.package, seconds: s.end - s.start, offCache: !!b, basis, cores: s.cores };
  });
  return {
    seconds: sim.unknown.length ? null : sim.makespan,
    parts,
    offCache: used,
    offCacheSeconds: used.reduce((a, b) => a + (b.seconds ?? 0), 0),
    unknown: sim.unknown,
  };
}

/**
 * The critical chain of a list schedule: from the slot that ends last, back through slots each ending where the next
 * starts (a slot starts at 0 or when another ends), so the chain's durations sum to the makespan.
 */
export function criticalChain<S extends { name: string; start: number; end: number }>(slots: readonly S[]): S[] {
  if (!slots.length) return [];
  let cur = [...slots].sort((a, b) => b.end - a.end)[0]!;
  const chain = [cur];
  while (cur.start > 0) {
    const prev = slots.find((s) => s.end === cur.start && s !== cur);
    if (!prev) break;
    chain.push(prev);
    cur = prev;
  }
  return chain.reverse();
}

/** What `variantWait` reads of each variant. */
export type WaitVariant = Pick<
  Variant,
  "name" | "package" | "dependsOn" | "system" | "python" | "cuda" | "nixpkgs" | "cudaCapabilitiesForPackageSet" | "cudaCapabilities" | "nixpkgsKey"
>;

/**
 * `all` by name, made once per array (detect and fleet ask variantWait for each of thousands of variants with one
 * array: a Map per call was quadratic). The arrays are not changed after they are made (Project's variants).
 */
const byNameOf = new WeakMap<readonly WaitVariant[], Map<string, WaitVariant>>();
function namesOf(all: readonly WaitVariant[]): Map<string, WaitVariant> {
  let m = byNameOf.get(all);
  if (!m) byNameOf.set(all, (m = new Map(all.map((x) => [x.name, x]))));
  return m;
}

/**
 * One variant's wait from nothing built: its closure in `all` (dependsOn, transitively) and the cache model's
 * dependency builds, scheduled on `capacity` as the driver runs them, with the earlier builds of `history`; and, as
 * `build` builds them by default, the static check of every variant of the closure after it (plan.ts
 * staticCheckInputs; an earlier check's duration from `history`, else the check figure, plan.ts estimateBuild, as
 * the build's plan has them): the wait is until the variant is built and proven.
 * @param capacity the host's (concurrency.ts capacityOf): the same record `build` and install schedule with
 * @param o.history earlier durations by name (driver/report.ts durationsFromReports); default none
 * @param o.verify false: no checks (`build --no-verify`); default true
 */
export function variantWait(
  v: WaitVariant,
  all: readonly WaitVariant[],
  cat: CacheModelCatalog,
  capacity: Capacity,
  o: { history?: ReadonlyMap<string, number>; verify?: boolean } = {},
): Wait {
  const history = o.history ?? new Map<string, number>();
  const byName = namesOf(all);
  const closure = new Map<string, WaitVariant>();
  const visit = (x: WaitVariant) => {
    if (closure.has(x.name)) return;
    closure.set(x.name, x);
    for (const d of x.dependsOn) {
      const dv = byName.get(d);
      if (dv) visit(dv);
    }
  };
  visit(v);
  const vs = [...closure.values()];
  // One variant's closure is one nixpkgs instance: torch and the packages on it share one nixpkgsKey.
  const model = modelCacheMisses(vs, cat);
  const targets = vs.map((x) => ({ ...x, dependsOn: x.dependsOn.filter((d) => closure.has(d)) }));
  if (o.verify === false) return waitOf(targets, model.builds, history, { capacity });
  return waitOf([...targets, ...staticCheckInputs(targets)], model.builds, history, { capacity });
}
