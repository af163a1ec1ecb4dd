/**
 * Build-cost model of a set of variants: seconds per package build, fitted on the durations of earlier build
 * reports (the build driver's `logs/<run>/report.json`) when there are any, otherwise a default table with its source;
 * total build hours, and the makespan on N builders from the build driver's own scheduler (plan.ts `makePlan` +
 * `simulate`, the list scheduling `build` runs). `leaveOneOut` says how far to trust the fit.
 *
 * Features of a build: package (pytorch, a package built on torch, the environment), CUDA or CPU-only, and the number of compute capabilities
 * it compiles (1 for every variant this generator writes: one SM per name). Per (package, CUDA/CPU) the model is
 * a least-squares line in the number of capabilities when the samples hold at least two different counts, else
 * their mean; a group without samples falls back to the other kind of the same package, then to the build plan's own
 * estimate (model/plan.ts estimateBuild: torch's model, the table for the rest), so fleet and `build --dry-run` agree.
 */
import { cudaClosures, DEFAULT_BUILD_SECONDS, estimateBuild, makePlan, simulate, TORCH_BUILD_MODEL } from "../model/plan.ts";
import { modelCacheMisses, type CacheModelCatalog, type ModelledBuild } from "../model/cache-model.ts";
import { readReports, realBuilds, type SkippedReport } from "../driver/report.ts";
import { parseName } from "../matrix/naming.ts";
import type { Variant } from "../matrix/schema.ts";
import type { PackageName } from "../catalog/lib/packages.ts";

/**
 * Default seconds per build when no report has the group: the build driver's sourced table (model/plan.ts), and for
 * torch the plan's model over it (TORCH_BUILD_MODEL, model/plan.ts estimateBuild), as `predict` uses them.
 */
export { DEFAULT_BUILD_SECONDS, TORCH_BUILD_MODEL };

/** One recorded build. */
export interface BuildSample {
  name: string;
  package: PackageName;
  cuda: boolean;
  capabilities: number;
  seconds: number;
}

/** What the model needs of a variant: what it builds, and the nixpkgs instance it builds in (for the cache model). */
export type CostInput = Pick<
  Variant,
  "name" | "package" | "cuda" | "cudaCapabilities" | "dependsOn" | "cudaCapabilitiesForPackageSet" | "nixpkgs" | "system" | "python" | "nixpkgsKey"
>;

type Line = { a: number; b: number; n: number };

/** A fitted model. */
export interface CostModel {
  /** Per "package|cuda" or "package|cpu": seconds = a + b × capabilities. */
  groups: Map<string, Line>;
  samples: number;
}

/**
 * Builds recorded in `logsDir/<run>/report.json` files: variants the build driver built itself (status built, not
 * substituted or already present), with their wall time. Reports that are not JSON or of another shape are left out.
 * @param onSkip called for each report left out (driver/report.ts readReports)
 */
export function readSamples(logsDir: string, onSkip?: (s: SkippedReport) => void): BuildSample[] {
  const out: BuildSample[] = [];
  for (const rep of readReports(logsDir, onSkip))
    for (const v of realBuilds(rep)) {
      const p = parseName(v.name);
      if (!p) continue;
      out.push({ name: v.name, package: p.package, cuda: p.cuda !== null, capabilities: p.cuda !== null ? 1 : 0, seconds: v.durationS });
    }
  return out;
}

const key = (pkg: PackageName, cuda: boolean) => `${pkg}|${cuda ? "cuda" : "cpu"}`;

/** Fit the model on samples (see the module comment). */
export function fit(samples: readonly BuildSample[]): CostModel {
  const groups = new Map<string, Line>();
  const by = new Map<string, BuildSample[]>();
  for (const s of samples) by.set(key(s.package, s.cuda), [...(by.get(key(s.package, s.cuda)) ?? []), s]);
  for (const [k, ss] of by) {
    const xs = ss.map((s) => s.capabilities);
    const ys = ss.map((s) => s.seconds);
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const sxx = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    if (new Set(xs).size >= 2 && sxx > 0) {
      const b = xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) / sxx;
      groups.set(k, { a: my - b * mx, b, n: ss.length });
    } else groups.set(k, { a: my, b: 0, n: ss.length });
  }
  return { groups, samples: samples.length };
}

/** Predicted seconds for one build, and where the figure comes from. */
export function predict(m: CostModel, v: Pick<CostInput, "package" | "cuda" | "cudaCapabilities">, cores: number | null = null): { seconds: number; from: "fit" | "default" } {
  const cuda = v.cuda !== null;
  const caps = cuda ? v.cudaCapabilities.length : 0;
  const g = m.groups.get(key(v.package, cuda)) ?? m.groups.get(key(v.package, !cuda));
  if (g) return { seconds: Math.max(1, g.a + g.b * caps), from: "fit" };
  // Without samples, the build plan's own estimate (model/plan.ts estimateBuild: torch's model by CUDA or CPU and
  // capabilities, at `cores` (the builder's slots: the same figure as the waits), else the model's reference cores;
  // the catalog figure else).
  const d = estimateBuild({ package: v.package, cuda: v.cuda, cudaCapabilities: v.cudaCapabilities }, cores);
  // Every package the matrix can name has a default (named environments torch-env's); a foreign one is a bug.
  if (d === null) throw new Error(`no default build time for package "${v.package}"`);
  return { seconds: d.seconds, from: "default" };
}

/**
 * Leave-one-out error: each sample predicted by a model fitted on the others.
 * @returns the number of samples and the mean and median absolute percentage errors (null without ≥ 2 samples)
 */
export function leaveOneOut(samples: readonly BuildSample[]): { n: number; meanPct: number | null; medianPct: number | null } {
  if (samples.length < 2) return { n: samples.length, meanPct: null, medianPct: null };
  const errs = samples.map((s, i) => {
    const m = fit(samples.filter((_, j) => j !== i));
    const p = predict(m, { package: s.package, cuda: s.cuda ? "x" : null, cudaCapabilities: Array(s.capabilities).fill("x") }).seconds;
    return (Math.abs(p - s.seconds) / s.seconds) * 100;
  });
  const sorted = [...errs].sort((a, b) => a - b);
  return { n: samples.length, meanPct: errs.reduce((a, b) => a + b, 0) / errs.length, medianPct: sorted[Math.floor(sorted.length / 2)]! };
}

/**
 * Total build hours and the makespan on `builders` machines of building `variants` and what the binary cache cannot
 * serve them, with the build driver's scheduler (dependency order, longest remaining path first). Besides the package
 * builds, the cache model (model/cache-model.ts, from catalog/binary-cache.ts) adds each derivation the CUDA cache
 * does not hold, counted once and scheduled before the variants that need it: a CUDA closure per nixpkgs instance in
 * the package-set scope or on a system the cache does not build for, the NCCL, NVSHMEM and magma torch links from a
 * CUDA set other than the pin's default, triton for a Python set CI evaluation does not recurse into or a CUDA set
 * other than the default.
 * @param cat the catalog: its pins (for their default CUDA set and recursed Python sets) and the cache model's facts
 *   (model/cache-model.ts CacheModelCatalog)
 * @param cores the cores one build gets on a builder (its compile slots, model/concurrency.ts Capacity), as the
 *   waits fleet prints are scheduled with; null: the torch model's reference cores
 * @returns builds (package builds), cudaClosures (closures built from source), sharedCudaSets (default sets used),
 *   rebuilt (the modelled extra builds), hours (all of them), makespanHours, fromDefaults
 */
export function buildCost(
  variants: readonly CostInput[],
  m: CostModel,
  builders: number,
  cat: CacheModelCatalog,
  cores: number | null = null,
): {
  builds: number;
  cudaClosures: number;
  sharedCudaSets: number;
  rebuilt: ModelledBuild[];
  hours: number;
  makespanHours: number;
  fromDefaults: number;
} {
  const est = new Map(variants.map((v) => [v.name, predict(m, v, cores)]));
  const closures = cudaClosures(variants);
  const { builds: rebuilt } = modelCacheMisses(variants, cat);
  const needs = new Map<string, string[]>();
  for (const b of rebuilt) for (const n of b.variants) needs.set(n, [...(needs.get(n) ?? []), b.key]);
  const durations = new Map([...est].map(([n, e]) => [n, e.seconds]));
  // A rebuilt dependency with no sourced build time stays unknown: it counts 0 in the hours and the makespan (a lower bound).
  for (const b of rebuilt) if (b.seconds !== null) durations.set(b.key, b.seconds);
  const plan = makePlan(
    [
      ...rebuilt.map((b) => ({ name: b.key, package: b.attr ?? "pytorch", dependsOn: [] })),
      ...variants.map((v) => ({
        name: v.name,
        package: v.package,
        dependsOn: [...v.dependsOn.filter((d) => est.has(d)), ...(needs.get(v.name) ?? [])],
      })),
    ],
    durations,
  );
  const total = [...est.values()].reduce((a, e) => a + e.seconds, 0) + rebuilt.reduce((a, b) => a + (b.seconds ?? 0), 0);
  return {
    builds: variants.length,
    cudaClosures: rebuilt.filter((b) => b.what === "cuda-closure").length,
    // Default CUDA sets some variant takes from the cache (not built with a closure of its own).
    sharedCudaSets: closures.shared.filter((c) => c.variants.some((n) => !(needs.get(n) ?? []).some((k) => k.startsWith("cuda-closure|")))).length,
    rebuilt,
    hours: total / 3600,
    makespanHours: simulate(plan, builders).makespan / 3600,
    fromDefaults: [...est.values()].filter((e) => e.from === "default").length,
  };
}
