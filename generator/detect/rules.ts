/**
 * The rules of `recommend` (recommend.ts) as ordered lists of small named checks, in the style of archspec's
 * `cpu/detect.py` (detection as small registered functions) and nixpkgs' `_cuda/lib` helpers. Pure.
 *
 * A rule reads one pick's case — the facts every pick shares (`Facts`: host, matrix variants, catalog) and, for a
 * GPU pick, the GPU group (`GpuCase`) — and returns its verdict (`Verdict`): a pick (the variant, why, what would
 * make it better), a drop (why no variant fits, and the `matrix.ts` change or driver upgrade that would add one),
 * or null, "not mine", leaving the case to the next rule. `decide` walks a list in order and takes the first
 * verdict; the last rule of each list always gives one.
 *
 * GPU_RULES, in order: gpuVariantFits, gpuNotInCatalog, gpuNotOnSystem, packageNotBuilt, gpuDroppedByMatrix,
 * gpuNotInMatrix, gpuCodeDoesNotRun, driverTooOld, gpuIsaNotRunnable.
 * CPU_RULES, in order: cpuVariantFits, packageNotBuilt, noCpuOnlyVariants, cpuIsaNotRunnable.
 * The first rule of each list is the selection rule (compat.ts `variantRunsOn`, ordered by `bestFirst`); the rest
 * only explain a miss, each at the first filter that left nothing.
 *
 * Sources of the facts the rules encode: binary compatibility (same major, minor ≤ the GPU's) from the CUDA C++
 * Programming Guide, "Binary Compatibility" (compat.ts `capabilitiesRunOn`); a CUDA version's minimum Linux driver
 * from the toolkit release notes, Table 3 (catalog `minDriverLinux`), and its major family's minimum under CUDA
 * minor-version compatibility, for a variant that needs no PTX JIT (catalog `cudaMajors`, compat.ts
 * `variantDriverSupport`): such a fit is named, with what it loses, and ranks after the fits with full driver
 * support; which capabilities an nvcc compiles (catalog
 * `cuda[].capabilities`); the CPU features an ISA needs (catalog/cpu-isas.ts `requiredCpuFeatures`); which nixpkgs
 * pin carries a CUDA version with a working torch (catalog `nixpkgs[].cuda`, `brokenCuda`).
 */
import { capabilitiesRunOn, cudaForDriver, cudaMajorOf, isaFit, variantDriverSupport, variantRunsOn } from "../matrix/compat.ts";
import type { Excluded, Variant } from "../matrix/schema.ts";
import type { Catalog, CpuIsa, CudaToolkit, GpuArch } from "../catalog/schema.ts";
import type { PackageName } from "../catalog/lib/packages.ts";
import { compareVersions, type GpuInfo, type HostInfo } from "../host/read-host.ts";
import { BUILD_LABEL, variantWait, type Wait } from "../model/wait.ts";
import { hostCapacity, type Capacity } from "../model/concurrency.ts";
import { formatDuration } from "../driver/report.ts";
import type { Prefer } from "../constants.ts";

const MATRIX = "matrix.ts";

/**
 * What every pick of one `recommend` call shares: the host, the matrix, the catalog, and the tables derived from
 * them once. Built by `factsOf`; the rules only read it.
 */
export interface Facts {
  host: HostInfo;
  /** Every variant of the matrix (all packages, all systems). */
  variants: readonly Variant[];
  catalog: Catalog;
  /** The package asked for (`--package`). */
  pkg: PackageName;
  /** The matrix's dropped combinations (Project.excluded); [] when not given. */
  excluded: readonly Excluded[];
  /** How many runner-up names a pick lists. */
  maxAlternatives: number;
  /** compat.ts `isaFit` of the host: its system's catalog ISAs (widest first), those it runs, what each lacks. */
  isas: ReturnType<typeof isaFit>;
  /** The widest catalog ISA this CPU runs, or null. */
  bestIsa: CpuIsa | null;
  /** Catalog rank of an ISA key; -1 for a key the host's system does not have. */
  rankOf: (isa: string) => number;
  cudaByVersion: Map<string, CudaToolkit>;
  /** The candidates: variants of `pkg` for the host's system. */
  pool: Variant[];
  /** ISA keys of the matrix's variants for the host's system. */
  matrixIsas: string[];
  /** CUDA versions of the matrix (every system). */
  matrixCuda: string[];
  /** Packages the matrix has variants of. */
  packagesInMatrix: string[];
  /** The host's GPUs grouped by compute capability, in nvidia-smi order; empty without an NVIDIA GPU. */
  groups: Map<string, GpuInfo[]>;
  /** The oldest driver of the host's GPUs, or null without one. */
  driver: string | null;
  /** The catalog CUDA versions `driver` runs, newest first ([] without a GPU). */
  driverCuda: CudaToolkit[];
  /** How fitting variants are ordered after native code: "wait" (shortest wait first) or "newest" (newest CUDA first). */
  prefer: Prefer;
  /** A variant's modelled wait (model/wait.ts variantWait over `variants`), computed once per variant. */
  wait: (v: Variant) => Wait;
  /** The host's build capacity the waits are scheduled on (model/concurrency.ts hostCapacity). */
  capacity: Capacity;
}


/** The CPU pick's case: a host without an NVIDIA GPU, or the CPU-only fallback of one with GPUs. */
export interface CpuCase {
  f: Facts;
  /** Always null: no GPU. */
  sm: null;
  /** The CPU-only variants of the pool, fitting or not. */
  cpuOnly: Variant[];
  /** The CPU-only variants that run on this host, best first (`bestFirst`). */
  fits: Variant[];
}

/** One GPU group's case: the group's capability and driver, and the pool narrowed filter by filter. */
export interface GpuCase {
  f: Facts;
  /** SM "90" of the group. */
  sm: string;
  /** Compute capability "9.0" of the group. */
  cap: string;
  /** The oldest driver of the group's GPUs. */
  driver: string;
  /** The catalog's entry for `sm`, or undefined for a GPU the catalog does not know. */
  arch: GpuArch | undefined;
  /** Candidates built for this SM. */
  forSm: Variant[];
  /** Of `forSm`, those whose code runs on `cap` (same major, minor ≤ it). */
  runs: Variant[];
  /** Of `runs`, those the driver runs: its CUDA's own minimum driver ≤ `driver`, or minor-version compatibility. */
  driverOk: Variant[];
  /** Of `runs`, those whose CUDA version's own minimum driver is ≤ `driver` (full support). */
  fullDriver: Variant[];
  /** Of `fits`, those that run only through CUDA minor-version compatibility (compat.ts `variantDriverSupport`). */
  minorCompat: Variant[];
  /** The candidates that run on this GPU (compat.ts `variantRunsOn`), best first (`bestFirst`). */
  fits: Variant[];
}

/**
 * A rule's verdict. "pick": `variant` serves the case; `reasons` say why, `suggestions` what would serve it better,
 * `alternatives` name the runners-up, best first. "drop": no variant serves it; `problems` say where the filters
 * left nothing, `suggestions` the `matrix.ts` edits or driver upgrade that would add one.
 */
export type Verdict =
  | { kind: "pick"; variant: Variant; binaryCompat: boolean; reasons: string[]; suggestions: string[]; alternatives: string[] }
  | { kind: "drop"; problems: string[]; suggestions: string[] };

/** A rule: its verdict on a case, or null when the case is not its to decide. The function's name is the rule's. */
export type Rule<C> = (c: C) => Verdict | null;

// --- small helpers ----------------------------------------------------------------------------------------------

/** `xs` without repeats, first occurrence first. */
export function uniq<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/** `add "VALUE" to FIELD in matrix.ts`. */
export function addTo(field: string, value: string): string {
  return `add "${value}" to ${field} in ${MATRIX}`;
}

/** True when `v` carries code compiled for compute capability `cap` itself (not binary-compatible code). */
export function isNative(v: Variant, cap: string): boolean {
  return !v.binaryCompat && v.cudaCapabilities.includes(cap);
}

/** Newest first; null (CPU-only) last. */
function cmpDesc(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareVersions(b, a);
}

/**
 * The preference order of fitting variants, best first: native code on `cap` before binary-compatible code (no
 * native test for `cap` null), then full driver support before CUDA minor-version compatibility (`minorCompat`: it
 * loses PTX JIT and the newer APIs), then with `wait` the shortest modelled wait (model/wait.ts; an unknown wait last),
 * then the widest ISA, the newest CUDA, the newest PyTorch, the newest Python, the name. Without `wait` (`--prefer
 * newest`) the wait is not compared.
 */
export function bestFirst(cap: string | null, rankOf: (k: string) => number, wait?: (v: Variant) => Wait, minorCompat?: (v: Variant) => boolean) {
  const secs = (v: Variant) => wait!(v).seconds ?? Infinity;
  return (a: Variant, b: Variant): number => {
    if (cap !== null) {
      const n = Number(isNative(b, cap)) - Number(isNative(a, cap));
      if (n !== 0) return n;
    }
    if (minorCompat) {
      const m = Number(minorCompat(a)) - Number(minorCompat(b));
      if (m !== 0) return m;
    }
    if (wait) {
      const w = secs(a) - secs(b);
      if (w !== 0 && !Number.isNaN(w)) return w;
    }
    return (
      rankOf(b.isa) - rankOf(a.isa) ||
      cmpDesc(a.cuda, b.cuda) ||
      compareVersions(b.torchVersion, a.torchVersion) ||
      compareVersions(b.python, a.python) ||
      a.name.localeCompare(b.name)
    );
  };
}

/** The wait to order by, or undefined with `--prefer newest`. */
function byWait(f: Facts): ((v: Variant) => Wait) | undefined {
  return f.prefer === "wait" ? f.wait : undefined;
}

/**
 * Whose figures detect's wait is: the host's compile slots, scheduled as `build` runs them (model/wait.ts
 * variantWait on the host's Capacity), so install and `build --dry-run` print the same figure for the same pick.
 */
export function waitBasis(cap: Capacity): string {
  return `scheduled as \`build\` runs it on ${cap.slots} compile slot${cap.slots === 1 ? "" : "s"}, ${cap.machine}`;
}

/**
 * "about 2h46m" with what of it the cache cannot serve ("4.0 h of NCCL, NVSHMEM, magma and triton from source"); a
 * wait with a build of no estimate is unknown, said with the rest as a lower bound and that build named (a rebuilt
 * dependency by its attribute: "cupy").
 */
export function waitWords(w: Wait): string {
  if (w.seconds === null) {
    const named = w.unknown.map((n) => w.offCache.find((b) => b.key === n)?.attr ?? n);
    return `unknown: more than ${formatDuration(w.parts.reduce((a, p) => a + p.seconds, 0))}, with no estimate for ${named.join(", ")}`;
  }
  return `about ${formatDuration(w.seconds)}` + (w.offCache.length ? `, of which ${hours(w.offCacheSeconds)} of ${offCacheWords(w)} from source` : ", nothing built from source besides its own packages");
}

/** Hours with one decimal: "4.0 h". */
export function hours(s: number): string {
  return `${(s / 3600).toFixed(1)} h`;
}

/** "NCCL, NVSHMEM, magma and triton": the dependency builds of a wait, in the model's order. */
export function offCacheWords(w: Pick<Wait, "offCache">): string {
  const order = Object.keys(BUILD_LABEL);
  const labels = uniq([...w.offCache].sort((x, y) => order.indexOf(x.what) - order.indexOf(y.what)).map((b) => BUILD_LABEL[b.what]));
  return labels.length > 1 ? `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}` : (labels[0] ?? "");
}

/** The oldest driver of a GPU group (numeric per component). */
export function oldestDriver(gs: readonly GpuInfo[]): string {
  return gs.map((g) => g.driver).sort(compareVersions)[0];
}

const drop = (problems: string[], suggestions: string[] = []): Verdict => ({ kind: "drop", problems, suggestions });

// --- facts and cases --------------------------------------------------------------------------------------------

/**
 * The facts of one `recommend` call (see `Facts`). Pure; never throws for a well-formed host and catalog.
 * @param opts the package asked for, how many alternatives to list (default 5), the matrix's drops (default none)
 */
export function factsOf(
  host: HostInfo,
  variants: readonly Variant[],
  catalog: Catalog,
  opts: { package: PackageName; maxAlternatives?: number; excluded?: readonly Excluded[]; prefer?: Prefer; capacity?: Capacity; history?: ReadonlyMap<string, number> },
): Facts {
  const isas = isaFit(host, catalog);
  const groups = new Map<string, GpuInfo[]>();
  for (const g of host.gpus) groups.set(g.capability, [...(groups.get(g.capability) ?? []), g]);
  const driver = host.gpus.length ? oldestDriver(host.gpus) : null;
  const waits = new Map<string, Wait>();
  const capacity = opts.capacity ?? hostCapacity(host);
  const wait = (v: Variant) => waits.get(v.name) ?? waits.set(v.name, variantWait(v, variants, catalog, capacity, { history: opts.history })).get(v.name)!;
  return {
    prefer: opts.prefer ?? "wait",
    wait,
    capacity,
    host,
    variants,
    catalog,
    pkg: opts.package,
    excluded: opts.excluded ?? [],
    maxAlternatives: opts.maxAlternatives ?? 5,
    isas,
    bestIsa: isas.runnable[0] ?? null,
    rankOf: (k: string) => isas.byKey.get(k)?.rank ?? -1,
    cudaByVersion: new Map(catalog.cuda.map((c) => [c.version, c] as [string, CudaToolkit])),
    pool: variants.filter((v) => v.package === opts.package && v.system === host.system),
    matrixIsas: uniq(variants.filter((v) => v.system === host.system).map((v) => v.isa)),
    matrixCuda: uniq(variants.map((v) => v.cuda).filter((c): c is string => c !== null)),
    packagesInMatrix: uniq(variants.map((v) => v.package)),
    groups,
    driver,
    driverCuda: driver ? cudaForDriver(driver, catalog.cuda) : [],
  };
}

/** The CPU pick's case (see `CpuCase`). */
export function cpuCase(f: Facts): CpuCase {
  return {
    f,
    sm: null,
    cpuOnly: f.pool.filter((v) => v.sm === null),
    fits: f.pool.filter((v) => variantRunsOn(v, f.host, null, f.catalog)).sort(bestFirst(null, f.rankOf, byWait(f))),
  };
}

/** The case of the GPU group `gs` of compute capability `cap` (see `GpuCase`). */
export function gpuCase(f: Facts, cap: string, gs: readonly GpuInfo[]): GpuCase {
  const sm = gs[0].sm;
  const driver = oldestDriver(gs);
  const forSm = f.pool.filter((v) => v.sm === sm);
  const runs = forSm.filter((v) => capabilitiesRunOn(v.cudaCapabilities, cap));
  const support = new Map(runs.map((v) => [v, variantDriverSupport(v, { capability: cap, driver }, f.catalog)] as const));
  const driverOk = runs.filter((v) => support.get(v) !== null);
  const fullDriver = runs.filter((v) => support.get(v) === "full");
  const isMinorCompat = (v: Variant) => support.get(v) === "minorCompat";
  // The one rule (compat.ts); the narrowing above only explains a miss.
  const fits = f.pool
    .filter((v) => variantRunsOn(v, f.host, { capability: cap, driver }, f.catalog))
    .sort(bestFirst(cap, f.rankOf, byWait(f), isMinorCompat));
  const minorCompat = fits.filter(isMinorCompat);
  return { f, sm, cap, driver, arch: f.catalog.gpus.find((g) => g.sm === sm), forSm, runs, driverOk, fullDriver, minorCompat, fits };
}

/**
 * Walk `rules` in order and return the first verdict.
 * @throws Error when no rule decides: a bug, since the last rule of GPU_RULES and CPU_RULES always does
 */
export function decide<C>(rules: readonly Rule<C>[], c: C): Verdict {
  for (const rule of rules) {
    const v = rule(c);
    if (v) return v;
  }
  throw new Error(`no rule decided (${rules.map((r) => r.name).join(", ")})`);
}

// --- advice shared by several rules -----------------------------------------------------------------------------

/** The runner-up names of a pick: the fits after the best, at most `maxAlternatives`. */
function alternativesOf(c: CpuCase | GpuCase): string[] {
  return c.fits.slice(1, 1 + c.f.maxAlternatives).map((v) => v.name);
}

/** "add the widest ISA" when the pick's ISA is narrower than the CPU runs and the matrix lacks the widest. */
function widerIsaSuggestion(f: Facts, best: Variant): string[] {
  const b = f.bestIsa;
  if (!b || f.rankOf(best.isa) >= b.rank || f.matrixIsas.includes(b.key)) return [];
  return [addTo("isas", b.key) + ` for code using ${b.requiredCpuFeatures.join(" ")}`];
}

/** Candidates exist, but only for ISAs this CPU cannot run: which, what each lacks, and the ISA to add. */
function isaProblem(f: Facts, candidates: readonly Variant[], what: string): Verdict {
  const keys = uniq(candidates.map((v) => v.isa));
  const lacks = keys.map((k) =>
    f.isas.byKey.has(k) ? `${k} needs ${f.isas.missing.get(k)!.join(" ")}` : `${k} is not in the catalog`,
  );
  return drop(
    [`${what} exist only for ISA ${keys.join(", ")}, which this CPU cannot run: ` + lacks.join("; ")],
    f.bestIsa
      ? [addTo("isas", f.bestIsa.key) + ` (the widest ISA this CPU runs)`]
      : [`no CPU ISA in the catalog runs on this CPU; the catalog (generator/catalog/cpu-isas.ts) needs one`],
  );
}

/**
 * "add "12.9" to cuda in matrix.ts", plus the release to add when no release of the matrix has a nixpkgs pin that
 * carries that CUDA version with a working torch (a pin's `brokenCuda` counts as not carrying it).
 */
function cudaAddition(f: Facts, version: string): string {
  const matrixPins = new Set(f.variants.map((v) => v.nixpkgs));
  const pins = f.catalog.nixpkgs
    .filter((n) => n.cuda.includes(version) && !(version in n.brokenCuda))
    .sort((a, b) => compareVersions(b.torch, a.torch));
  if (pins.length === 0)
    return `${addTo("cuda", version)}, once a nixpkgs pin in the catalog carries a working torch for CUDA ${version} (none does yet)`;
  if (pins.some((n) => matrixPins.has(n.rev))) return addTo("cuda", version);
  const pin = pins[0];
  return (
    `${addTo("cuda", version)} with a release whose nixpkgs carries it: ` +
    `{ torch: "${pin.torch}", nixpkgs: "${pin.rev}" } in releases`
  );
}

/** The catalog's CUDA versions whose nvcc compiles `cap` natively, oldest first. */
function nativeToolkits(f: Facts, cap: string): CudaToolkit[] {
  return f.catalog.cuda.filter((t) => t.capabilities.includes(cap)).sort((a, b) => compareVersions(a.version, b.version));
}

/**
 * For a binary-compatible pick: why the matrix's native variants do not fit (a reason), or where native code would
 * come from (a suggestion: the oldest CUDA version whose nvcc compiles `cap`).
 */
function nativeHint(c: GpuCase): { reasons: string[]; suggestions: string[] } {
  const { f, cap, driver } = c;
  const nativeInMatrix = c.forSm.filter((v) => isNative(v, cap));
  if (nativeInMatrix.length) {
    const why = nativeInMatrix.map((v) => {
      const t = f.cudaByVersion.get(v.cuda!);
      if (t && !c.driverOk.includes(v)) return `${v.name} needs driver ≥ ${t.minDriverLinux}${minorCompatFloor(f, t, cap, v)}`;
      if (!f.isas.runnable.some((i) => i.key === v.isa)) return `${v.name} needs ${f.isas.missing.get(v.isa)?.join(" ") ?? v.isa}`;
      return `${v.name} does not fit`;
    });
    return { reasons: [`native variants exist but do not fit: ${uniq(why).slice(0, 3).join("; ")}`], suggestions: [] };
  }
  const native = nativeToolkits(f, cap)[0];
  if (!native) return { reasons: [], suggestions: [] };
  const newer = compareVersions(native.minDriverLinux, driver) > 0;
  return {
    reasons: [],
    suggestions: [
      `for native ${cap} code: ` +
        cudaAddition(f, native.version) +
        (newer ? ` (CUDA ${native.version} needs driver ≥ ${native.minDriverLinux}; this one is ${driver})` : ""),
    ],
  };
}

/** "CUDA 13.x's minor-version-compatibility minimum 580.65.06": the family floor of toolkit `t`, or null without one. */
function majorFloor(f: Facts, t: CudaToolkit): { words: string; min: string; loses: string[] } | null {
  const m = cudaMajorOf(t.version, f.catalog.cudaMajors);
  return m ? { words: `the CUDA ${m.major}.x minimum under minor-version compatibility`, min: m.minDriverLinux, loses: m.loses } : null;
}

/**
 * For a variant the driver does not run: " (or ≥ M under CUDA minor-version compatibility)" when its major family has
 * a floor and the variant needs no PTX JIT on `cap`; why that does not help when it needs JIT; "" without a floor.
 */
function minorCompatFloor(f: Facts, t: CudaToolkit, cap: string, v: Variant): string {
  const m = majorFloor(f, t);
  if (!m) return "";
  if (variantDriverSupport(v, { capability: cap, driver: m.min }, f.catalog) === null)
    return ` (minor-version compatibility cannot serve it: it would need PTX JIT on ${cap})`;
  return ` (or ≥ ${m.min} under CUDA minor-version compatibility)`;
}

/** "CUDA 13.2 (needs ≥ 595.45.04)" per CUDA version of `vs`, in order. */
function ownMinimums(f: Facts, vs: readonly Variant[]): string {
  return uniq(vs.map((v) => v.cuda!))
    .map((ver) => `CUDA ${ver} (needs ≥ ${f.cudaByVersion.get(ver)!.minDriverLinux})`)
    .join(", ");
}

/**
 * The reason line of a pick that runs through CUDA minor-version compatibility: the driver is below its CUDA's own
 * minimum but ≥ its major's, its code on `cap` is SASS from every origin (no PTX JIT), and what it loses.
 */
function minorCompatPickLine(c: GpuCase, best: Variant): string {
  const t = c.f.cudaByVersion.get(best.cuda!)!;
  const m = majorFloor(c.f, t)!;
  return (
    `runs under CUDA minor-version compatibility: driver ${c.driver} is below ${t.minDriverLinux}, CUDA ${t.version}'s own minimum, ` +
    `but ≥ ${m.min}, ${m.words}, and ${best.name} needs no PTX JIT on ${c.cap} (SASS from torch and from the bundled NCCL, MAGMA ` +
    `and NVSHMEM); loses ${m.loses.join("; ")}`
  );
}

/**
 * The fits other than `best` that run only through CUDA minor-version compatibility, one per CUDA version, with their
 * wait against `best` and what they lose; [] when there are none.
 */
function minorCompatFitsLine(c: GpuCase, best: Variant): string[] {
  const { f } = c;
  const others = c.minorCompat.filter((v) => v !== best);
  if (!others.length) return [];
  const perCuda = uniq(others.map((v) => v.cuda!)).map((ver) => others.find((v) => v.cuda === ver && v.isa === best.isa) ?? others.find((v) => v.cuda === ver)!);
  const wb = f.wait(best).seconds;
  const delta = (v: Variant) => {
    const w = f.wait(v).seconds;
    if (wb === null || w === null) return "";
    const d = w - wb;
    return `, ${d >= 0 ? "+" : "−"}${hours(Math.abs(d))} against the pick`;
  };
  const m = majorFloor(f, f.cudaByVersion.get(perCuda[0].cuda!)!)!;
  return [
    `runs under CUDA minor-version compatibility (driver ${c.driver} ≥ ${m.min}, ${m.words}; below each one's own minimum; SASS ` +
      `for ${c.cap} from every origin, so no PTX JIT): ` +
      perCuda.map((v) => `${v.name} (CUDA ${v.cuda} needs ≥ ${f.cudaByVersion.get(v.cuda!)!.minDriverLinux}${delta(v)})`).join(", ") +
      `; loses ${m.loses.join("; ")}; ranked after the variants the driver fully supports`,
  ];
}

/**
 * What a newer driver adds when the pick or other fits run only through minor-version compatibility: the driver that
 * runs all of them with full support, and what that gives back. [] when none does.
 */
function driverUpgradeAdds(c: GpuCase, best: Variant): string[] {
  const { f } = c;
  if (!c.minorCompat.length) return [];
  const ts = uniq(c.minorCompat.map((v) => v.cuda!)).map((ver) => f.cudaByVersion.get(ver)!);
  const top = [...ts].sort((a, b) => compareVersions(b.minDriverLinux, a.minDriverLinux))[0];
  const vers = ts.map((t) => t.version).sort(compareVersions).join(", ");
  return [
    `a driver ≥ ${top.minDriverLinux} runs CUDA ${vers} with full support` +
      (c.minorCompat.includes(best) ? ` (the pick's CUDA ${best.cuda} needs ≥ ${f.cudaByVersion.get(best.cuda!)!.minDriverLinux})` : "") +
      `: it adds JIT of their PTX (extensions or libraries that load PTX of CUDA ${vers}) and the CUDA ${vers} APIs that need their driver`,
  ];
}

// --- the rules --------------------------------------------------------------------------------------------------

/** Pick: the best CPU-only variant that runs on this CPU. */
function cpuVariantFits(c: CpuCase): Verdict | null {
  const best = c.fits[0];
  if (!best) return null;
  return {
    kind: "pick",
    variant: best,
    binaryCompat: false,
    reasons: [
      `${best.name}: ISA ${best.isa}, PyTorch ${best.torchVersion}, Python ${best.python} ` +
        `(${c.f.prefer === "wait" ? "shortest wait, then " : ""}widest ISA, then newest PyTorch, then newest Python of ${c.fits.length} fitting CPU-only variant(s))`,
      `wait (model: build estimates ${waitBasis(c.f.capacity)}): ${waitWords(c.f.wait(best))}`,
    ],
    suggestions: widerIsaSuggestion(c.f, best),
    alternatives: alternativesOf(c),
  };
}

/** Pick: the best variant for this GPU, native code first; a binary-compatible pick says where native code is. */
function gpuVariantFits(c: GpuCase): Verdict | null {
  const best = c.fits[0];
  if (!best) return null;
  const { cap, driver, f } = c;
  const binaryCompat = !isNative(best, cap);
  const toolkit = f.cudaByVersion.get(best.cuda!)!;
  const hint = binaryCompat ? nativeHint(c) : { reasons: [], suggestions: [] };
  return {
    kind: "pick",
    variant: best,
    binaryCompat,
    reasons: [
      binaryCompat
        ? `binary-compatible code: CUDA ${best.cuda}'s nvcc cannot compile ${cap}, so ${best.name} carries ` +
          `${best.cudaCapabilities.join(", ")} code, which runs on ${cap} (same major, lower or equal minor)`
        : `native code: ${best.name} carries ${best.cudaCapabilities.join(", ")} code compiled by CUDA ${best.cuda}'s nvcc`,
      c.minorCompat.includes(best) ? minorCompatPickLine(c, best) : `driver ${driver} ≥ ${toolkit.minDriverLinux}, the minimum CUDA ${best.cuda} needs`,
      `ISA ${best.isa}, CUDA ${best.cuda}, PyTorch ${best.torchVersion}, Python ${best.python}: ` +
        `of ${c.fits.length} fitting variant(s), ordered native first, then full driver support before minor-version compatibility, then ${f.prefer === "wait" ? "shortest wait, " : ""}widest ISA, newest CUDA, newest PyTorch, newest Python` +
        (f.prefer === "newest" ? " (--prefer newest)" : ""),
      `wait (model: cache misses and build estimates ${waitBasis(f.capacity)}): ${waitWords(f.wait(best))}`,
      ...hint.reasons,
      ...newerCudaTrade(c, best),
      ...minorCompatFitsLine(c, best),
    ],
    suggestions: [...hint.suggestions, ...driverUpgradeLines(c, best), ...widerIsaSuggestion(f, best)],
    alternatives: alternativesOf(c),
  };
}

/**
 * The trade, in one line, when a newer CUDA fits too but waits longer ("cuda13_0 also fits: about +4.0 h of NCCL,
 * NVSHMEM, magma and triton from source"); [] when none does or with `--prefer newest`.
 */
function newerCudaTrade(c: GpuCase, best: Variant): string[] {
  const { f, cap } = c;
  if (f.prefer !== "wait" || best.cuda === null) return [];
  const newer = c.fits
    .filter(
      (v) =>
        v.cuda !== null &&
        compareVersions(v.cuda, best.cuda!) > 0 &&
        isNative(v, cap) === isNative(best, cap) &&
        v.isa === best.isa &&
        c.minorCompat.includes(v) === c.minorCompat.includes(best),
    )
    .sort((a, b) => compareVersions(b.cuda!, a.cuda!))[0];
  if (!newer) return [];
  const [wb, wn] = [f.wait(best), f.wait(newer)];
  if (wb.seconds === null || wn.seconds === null) return [];
  const extra = wn.offCacheSeconds - wb.offCacheSeconds;
  const what = wn.offCache.length ? ` of ${offCacheWords(wn)} from source` : "";
  return [
    `cuda${newer.cuda!.replace(".", "_")} also fits: about +${hours(Math.max(0, wn.seconds - wb.seconds))}${extra > 0 ? what : ""} ` +
      `(${newer.name}; \`--prefer newest\` picks it)`,
  ];
}

/**
 * Where the driver limits the choice: the fitting-but-for-the-driver variant of this SM and ISA with the shortest wait,
 * when it waits less than `best`: "a driver ≥ X (CUDA Y) would save about N h". [] otherwise.
 */
function driverUpgradeSaves(c: GpuCase, best: Variant): string[] {
  const { f, cap } = c;
  const wb = f.wait(best).seconds;
  if (f.prefer !== "wait" || wb === null) return [];
  const blocked = c.runs.filter((v) => v.isa === best.isa && isNative(v, cap) >= isNative(best, cap) && !c.fullDriver.includes(v) && f.cudaByVersion.has(v.cuda!));
  const better = blocked
    .map((v) => ({ v, s: f.wait(v).seconds }))
    .filter((x): x is { v: Variant; s: number } => x.s !== null && x.s < wb)
    .sort((a, b) => a.s - b.s || compareVersions(f.cudaByVersion.get(a.v.cuda!)!.minDriverLinux, f.cudaByVersion.get(b.v.cuda!)!.minDriverLinux))[0];
  if (!better) return [];
  const t = f.cudaByVersion.get(better.v.cuda!)!;
  return [
    `a driver ≥ ${t.minDriverLinux} (CUDA ${t.version}) would save about ${hours(wb - better.s)}: ${better.v.name} ` +
      `waits ${waitWords(f.wait(better.v))} (this driver ${c.driver} allows CUDA ≤ ${f.driverCuda[0]?.version ?? "none"} with full support` +
      (c.minorCompat.includes(better.v) ? `; ${better.v.name} runs on it already under CUDA minor-version compatibility, ranked after full support)` : ")"),
  ];
}

/**
 * The driver-upgrade suggestions of a pick: what a newer driver would save (`driverUpgradeSaves`) and what it adds over
 * minor-version compatibility (`driverUpgradeAdds`), as one line when both name the same driver.
 */
function driverUpgradeLines(c: GpuCase, best: Variant): string[] {
  const saves = driverUpgradeSaves(c, best);
  const adds = driverUpgradeAdds(c, best);
  const driverOf = (line: string) => /^a driver ≥ (\S+)/.exec(line)?.[1];
  if (saves.length && adds.length && driverOf(saves[0]!) === driverOf(adds[0]!))
    return [`${saves[0]}; it also ${adds[0]!.replace(/^a driver ≥ \S+ /, "")}`];
  return [...saves, ...adds];
}

/** Drop: the catalog (generator/catalog/gpus.ts) does not know this GPU, so no matrix.ts change can add it. */
function gpuNotInCatalog(c: GpuCase): Verdict | null {
  if (c.arch) return null;
  return drop([
    `compute capability ${c.cap} (sm${c.sm}) is not in the catalog (generator/catalog/gpus.ts); ` +
      `no ${MATRIX} change can add it until the catalog knows this GPU`,
  ]);
}

/** Drop: the catalog lists this GPU for other systems only (e.g. a Jetson SM on x86_64). */
function gpuNotOnSystem(c: GpuCase): Verdict | null {
  const system = c.f.host.system;
  if (!c.arch || c.arch.systems.includes(system)) return null;
  return drop([`the catalog lists sm${c.sm} (${c.arch.label}) for ${c.arch.systems.join(", ")} only, not ${system}`]);
}

/**
 * Drop: the matrix has no variant of the package for this system. A package the matrix lists whose every
 * combination was dropped yields no variant, yet is in `packages`: its drops (with the catalog's reasons) tell it
 * apart from a package the matrix does not list.
 */
function packageNotBuilt(c: CpuCase | GpuCase): Verdict | null {
  const { f } = c;
  if (f.pool.length) return null;
  const problems = [`the matrix has no ${f.pkg} variants for ${f.host.system}`];
  const suggestions: string[] = [];
  if (!f.packagesInMatrix.includes(f.pkg)) {
    const dropped = f.excluded.filter((e) => e.package === f.pkg);
    if (dropped.length)
      problems.push(
        `${f.pkg} is in packages of ${MATRIX}, but every one of its ${dropped.length} combination(s) is dropped: ` +
          `${dropped[0]!.reasons[0] ?? "no reason recorded"} (first: ${dropped[0]!.name}; \`variant-matrix list --excluded\` shows all)`,
      );
    else suggestions.push(`add "${f.pkg}" to packages in ${MATRIX}`);
  }
  if (f.bestIsa && !f.matrixIsas.includes(f.bestIsa.key)) suggestions.push(addTo("isas", f.bestIsa.key));
  if (c.sm !== null && !f.variants.some((v) => v.sm === c.sm)) suggestions.push(addTo("gpus", c.sm));
  return drop(problems, suggestions);
}

/** "the matrix has no PKG variant for smSM (LABEL) on SYSTEM". */
const noVariantForSm = (c: GpuCase, arch: GpuArch) =>
  `the matrix has no ${c.f.pkg} variant for sm${c.sm} (${arch.label}) on ${c.f.host.system}`;

/**
 * Drop: the matrix asks for this GPU but drops the package for it (flash-attn below SM80): say why (the catalog's
 * reasons) and suggest nothing.
 */
function gpuDroppedByMatrix(c: GpuCase): Verdict | null {
  const { f, sm } = c;
  if (!c.arch || c.forSm.length) return null;
  const systemOf = (isa: string) => f.catalog.isas.find((i) => i.key === isa)?.system;
  const dropped = f.excluded.filter((e) => e.package === f.pkg && e.sm === sm && systemOf(e.isa) === f.host.system);
  if (!dropped.length || !f.variants.some((v) => v.sm === sm && v.system === f.host.system)) return null;
  return drop([noVariantForSm(c, c.arch), ...uniq(dropped.flatMap((e) => e.reasons)).map((r) => `dropped: ${r}`)]);
}

/**
 * Drop: the matrix has no variant for this GPU's SM: add it to gpus, and a CUDA version whose nvcc compiles for it
 * when none of the matrix's does. Variants of another SM of the same major are named, not offered.
 */
function gpuNotInMatrix(c: GpuCase): Verdict | null {
  const { f, sm, cap } = c;
  if (!c.arch || c.forSm.length) return null;
  const problems = [noVariantForSm(c, c.arch)];
  const sameMajor = uniq(
    f.pool.filter((v) => v.sm !== null && v.sm !== sm && capabilitiesRunOn(v.cudaCapabilities, cap)).map((v) => `sm${v.sm}`),
  );
  if (sameMajor.length)
    problems.push(
      `(${sameMajor.join(", ")} variants carry code that would load on ${cap}, but they are built and named ` +
        `for another GPU; detect recommends only variants for this GPU)`,
    );
  return drop(problems, [addTo("gpus", sm), ...cudaForGpu(c)]);
}

/**
 * When no CUDA version of the matrix compiles for the GPU (natively or same-major): the newest catalog version
 * whose nvcc compiles it natively and the driver runs (else the oldest such), as a matrix.ts addition.
 */
function cudaForGpu(c: GpuCase): string[] {
  const { f, cap, driver } = c;
  const servable = f.matrixCuda.filter((ver) => {
    const t = f.cudaByVersion.get(ver);
    return t !== undefined && capabilitiesRunOn(t.capabilities, cap);
  });
  if (servable.length) return [];
  const add = nativeToolkits(f, cap);
  const okDriver = add.filter((t) => compareVersions(t.minDriverLinux, driver) <= 0);
  const t = okDriver[okDriver.length - 1] ?? add[0];
  if (!t) return [`no CUDA version in the catalog compiles for ${cap}`];
  return [
    `no CUDA version of the matrix (${f.matrixCuda.join(", ") || "none"}) compiles for ${cap}: ` +
      cudaAddition(f, t.version) +
      (compareVersions(t.minDriverLinux, driver) > 0 ? ` (CUDA ${t.version} needs driver ≥ ${t.minDriverLinux})` : ""),
  ];
}

/** Drop: the matrix's variants for this SM carry no code that runs on its capability (a generator or catalog bug). */
function gpuCodeDoesNotRun(c: GpuCase): Verdict | null {
  if (c.runs.length) return null;
  return drop([
    `the matrix's sm${c.sm} variants carry ${uniq(c.forSm.flatMap((v) => v.cudaCapabilities)).join(", ")} code, ` +
      `none of which runs on ${c.cap} (a generator or catalog bug)`,
  ]);
}

/**
 * Drop: the driver is older than every CUDA version of the matrix's variants for this GPU needs: upgrade it, or
 * add a CUDA version it runs (one a catalog pin carries).
 */
function driverTooOld(c: GpuCase): Verdict | null {
  const { f, sm, driver } = c;
  if (c.driverOk.length) return null;
  const needs = uniq(c.runs.map((v) => v.cuda!))
    .map((ver) => f.cudaByVersion.get(ver))
    .filter((t): t is CudaToolkit => t !== undefined)
    .sort((a, b) => compareVersions(a.minDriverLinux, b.minDriverLinux));
  const lowest = needs[0];
  const floors = uniq(needs.map((t) => majorFloor(f, t)).filter((m): m is NonNullable<typeof m> => m !== null).map((m) => `${m.min} (${m.words})`));
  const problems = [
    `driver ${driver} is too old for the matrix's sm${sm} variants: ` +
      needs.map((t) => `CUDA ${t.version} needs ≥ ${t.minDriverLinux}`).join(", ") +
      (floors.length ? `, and it is below ${floors.join(", ")}` : ""),
  ];
  const compatOk = lowest ? c.runs.find((v) => v.cuda === lowest.version) : undefined;
  const floor = lowest ? majorFloor(f, lowest) : null;
  const viaCompat =
    floor && compatOk && variantDriverSupport(compatOk, { capability: c.cap, driver: floor.min }, f.catalog) !== null
      ? `, or to ≥ ${floor.min} to run it under CUDA minor-version compatibility (losing ${floor.loses.join("; ")})`
      : "";
  const upgrade = lowest ? [`upgrade the NVIDIA driver to ≥ ${lowest.minDriverLinux} (CUDA ${lowest.version})${viaCompat}`] : [];
  return drop(problems, [...upgrade, cudaForOldDriver(c)]);
}

/** The CUDA version a too-old driver runs that could serve the GPU, as advice (or why none can). */
function cudaForOldDriver(c: GpuCase): string {
  const { f, cap, driver } = c;
  const supported = cudaForDriver(driver, f.catalog.cuda).filter((t) => capabilitiesRunOn(t.capabilities, cap));
  const carried = supported.filter((t) =>
    f.catalog.nixpkgs.some((n) => n.cuda.includes(t.version) && !(t.version in n.brokenCuda)),
  );
  if (carried.length) return `or ${cudaAddition(f, carried[0].version)} (CUDA ${carried[0].version} runs on driver ${driver})`;
  if (supported.length) return `CUDA ${supported[0].version} runs on driver ${driver}, but no nixpkgs pin in the catalog carries it`;
  return `(no CUDA version in the catalog runs on driver ${driver}, so no ${MATRIX} change can help: upgrade the driver)`;
}

/** Drop: the variants for this GPU that the driver runs are all for ISAs this CPU cannot run. */
function gpuIsaNotRunnable(c: GpuCase): Verdict {
  return isaProblem(c.f, c.driverOk, `${c.f.pkg} variants for sm${c.sm} that this driver runs`);
}

/** Drop: the matrix has no CPU-only variants of the package for this system: set cpuOnly. */
function noCpuOnlyVariants(c: CpuCase): Verdict | null {
  const { f } = c;
  if (c.cpuOnly.length) return null;
  const isa = f.bestIsa && !f.matrixIsas.includes(f.bestIsa.key) ? [addTo("isas", f.bestIsa.key)] : [];
  return drop([`the matrix has no CPU-only ${f.pkg} variants for ${f.host.system}`], [`set cpuOnly: true in ${MATRIX}`, ...isa]);
}

/** Drop: the CPU-only variants are all for ISAs this CPU cannot run. */
function cpuIsaNotRunnable(c: CpuCase): Verdict {
  return isaProblem(c.f, c.cpuOnly, `CPU-only ${c.f.pkg} variants for ${c.f.host.system}`);
}

/** The rules of a GPU group's pick, in order (see the module comment); the last always decides. */
export const GPU_RULES: readonly Rule<GpuCase>[] = [
  gpuVariantFits,
  gpuNotInCatalog,
  gpuNotOnSystem,
  packageNotBuilt,
  gpuDroppedByMatrix,
  gpuNotInMatrix,
  gpuCodeDoesNotRun,
  driverTooOld,
  gpuIsaNotRunnable,
];

/** The rules of the CPU pick, in order (see the module comment); the last always decides. */
export const CPU_RULES: readonly Rule<CpuCase>[] = [cpuVariantFits, packageNotBuilt, noCpuOnlyVariants, cpuIsaNotRunnable];
