/**
 * Pick the package variant(s) of the generated matrix for a host, and say why — or why none fits and which
 * `matrix.ts` change would add one. Pure: host, variants and catalog in, a `Recommendation` out.
 *
 * Selection rule (every step is a hard filter except the last, which orders what is left):
 * 1. package (`--package`, default torchaudio) and Nix system (`uname -m`: x86_64 → x86_64-linux, aarch64 →
 *    aarch64-linux) equal the host's;
 * 2. GPU: the variant is built for the host GPU's SM (`sm` equals the GPU's compute capability without the dot),
 *    and its code runs there: some capability in `cudaCapabilities` has the GPU's major and a minor ≤ the GPU's
 *    (CUDA C++ Programming Guide, "Binary Compatibility"; no PTX is shipped, so nothing newer and no other major);
 *    a host without an NVIDIA GPU gets a CPU-only variant (`sm` null);
 * 3. driver: the minimum Linux driver of the variant's CUDA version (catalog `minDriverLinux`, toolkit release
 *    notes Table 3) is ≤ the host driver, compared numerically per component; or, through CUDA minor-version
 *    compatibility, the minimum of its major family (catalog `cudaMajors`) is, and the variant's code on the GPU is
 *    SASS from every origin (compat.ts `variantDriverSupport`: no PTX JIT);
 * 4. CPU: the host has every `requiredCpuFeatures` entry of the variant's ISA (catalog; `/proc/cpuinfo` spelling);
 * 5. order: native code before binary-compatible code (native = the GPU's own capability is in
 *    `cudaCapabilities`), then full driver support before minor-version compatibility, then the shortest wait (model/wait.ts: the cache model's dependency builds plus the
 *    build estimates; `prefer: "newest"` skips this step), then the widest ISA (highest catalog `rank`), then the
 *    newest CUDA version, then the
 *    newest PyTorch release, then the newest Python. Python comes last because the variants differ in nothing
 *    else and a project that pins an older Python finds that variant among `alternatives`.
 *
 * Several GPUs: GPUs are grouped by compute capability. Since each variant targets exactly one SM, GPUs of
 * different capabilities cannot share a variant: one pick per group, and the result says so.
 *
 * The steps are rules.ts's ordered rules: each pick walks GPU_RULES (a GPU group) or CPU_RULES (no NVIDIA GPU, or
 * the CPU-only fallback); the first rule picks by the rule above, the others say where a miss stopped and what to
 * add to matrix.ts. The host-level reasons are HOST_FINDINGS below.
 */
import { gccarchFeature } from "../catalog/lib/machines.ts";
import type { Excluded, Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import { nixpkgsBrokenWarnings, type PackageName } from "../catalog/lib/packages.ts";
import { closurePackages } from "../matrix/naming.ts";
import { armCoreName, armHostHint, compareVersions, type GpuInfo, type HostInfo } from "../host/read-host.ts";
import { cudaMajorOf, driverSupport } from "../matrix/compat.ts";
import { insecureNote } from "../catalog/lib/packages.ts";
import {
  CPU_RULES,
  GPU_RULES,
  cpuCase,
  decide,
  factsOf,
  gpuCase,
  isNative,
  oldestDriver,
  uniq,
  type Facts,
  type Verdict,
} from "./rules.ts";
import type { Prefer } from "../constants.ts";
import type { Capacity } from "../model/concurrency.ts";

/** Options of `recommend`. */
export interface RecommendOptions {
  /** Which package to recommend: "pytorch", a package built on torch (catalog/packages.ts) or the environment "torch-env". */
  package: PackageName;
  /** How many runner-up names to list per pick (default 5). */
  maxAlternatives?: number;
  /**
   * The matrix's dropped combinations (Project.excluded): where the matrix asks for a GPU but drops this package's
   * variants for it (flash-attn below SM80), the pick says why instead of suggesting to add the GPU.
   */
  excluded?: readonly Excluded[];
  /** The order after native code: "wait" (default: shortest modelled wait first) or "newest" (newest CUDA first). */
  prefer?: Prefer;
  /** The build capacity the waits are scheduled on (model/concurrency.ts); default the host's (hostCapacity). */
  capacity?: Capacity;
  /** Earlier build durations by name (driver/report.ts durationsFromReports); default none. */
  history?: ReadonlyMap<string, number>;
}

/** The recommendation for one group of identical GPUs, or for the CPU when the host has no NVIDIA GPU. */
export interface Pick {
  /** "gpu" for a GPU group, "cpu" for a host without NVIDIA GPU. */
  kind: "gpu" | "cpu";
  /** nvidia-smi indices of the GPUs this pick serves ([] for "cpu"). */
  gpuIndices: number[];
  /** GPU product name(s) of the group, joined ("NVIDIA H100 80GB HBM3"); null for "cpu". */
  gpuName: string | null;
  /** Compute capability "9.0" of the group; null for "cpu". */
  capability: string | null;
  /** SM "90"; null for "cpu". */
  sm: string | null;
  /** Chosen variant name, or null when none fits. */
  variant: string | null;
  /** True when the chosen variant serves the GPU through same-major binary compatibility. */
  binaryCompat: boolean;
  /** Why this variant (or, when `variant` is null, what was checked). */
  reasons: string[];
  /** Why no variant fits (empty when one does). */
  problems: string[];
  /** Concrete changes that would add a (better) variant: `matrix.ts` edits, a driver upgrade. */
  suggestions: string[];
  /** Other variants that fit, best first. */
  alternatives: string[];
  /**
   * What nixpkgs says against the chosen variant's CUDA build (catalog/lib/packages.ts nixpkgsBrokenWarnings, explain's
   * words): [] when nothing of its closure is marked broken at its nixpkgs, or when none is chosen.
   */
  warnings: string[];
}

/** The result of `recommend`. */
export interface Recommendation {
  package: PackageName;
  /**
   * "ok": every GPU group (or the CPU-only host) has a variant; "partial": some GPU groups have none;
   * "none": nothing fits (see `cpuFallback`).
   */
  status: "ok" | "partial" | "none";
  /** The chosen names, one per pick that has one, in pick order. */
  variants: string[];
  picks: Pick[];
  /** Host-level findings: CPU ISA, driver → CUDA, several GPUs. */
  reasons: string[];
  /** The best CPU-only variant when GPUs exist but no GPU variant fits all of them; null otherwise. */
  cpuFallback: string | null;
  /** The host as detect saw it (for --json consumers). */
  host: {
    system: string;
    machine: string;
    cpu: string;
    features: string[];
    /** Widest catalog ISA the CPU runs, or null. */
    isa: string | null;
    /**
     * The gccarch system features of every catalog ISA this CPU runs (catalog/cpu-isas.ts): what this host may
     * declare as a builder (nix.conf `extra-system-features`), since it runs the code of those variants' builds.
     */
    systemFeatures: string[];
    gpus: { index: number; name: string; capability: string; sm: string; driver: string }[];
    /** Newest catalog CUDA version the driver runs with full support, or null (no GPU, or driver older than every one). */
    maxCuda: string | null;
    /** Catalog CUDA versions the driver runs only through CUDA minor-version compatibility (for SASS-only code), ascending. */
    minorCompatCuda: string[];
    sources: HostInfo["sources"];
    gpuAbsentReason: string | null;
    /** Logical CPUs and memory (read-host.ts readMemory), what the waits are scheduled on. */
    logicalCpus: number;
    memory: HostInfo["memory"];
    /** The build capacity the waits are scheduled on (model/concurrency.ts): slots, the machine and its sources. */
    buildCapacity: { slots: number; machine: string; from: string };
  };
}

/** One line describing the host CPU: model name (x86) or core types with MIDR ids (aarch64), named by the catalog. */
export function describeCpu(host: HostInfo, cat: { armCores: Catalog["armCores"]; armHostHints: Catalog["armHostHints"] }): string {
  const c = host.cpu;
  if (c.arch === "x86_64")
    return `${c.modelName ?? "unknown x86_64 CPU"}${c.vendor ? ` (${c.vendor})` : ""}, ${c.logicalCpus} logical CPUs`;
  if (c.armCores.length === 0) return `aarch64 CPU (no CPU implementer/part lines), ${c.logicalCpus} logical CPUs`;
  return c.armCores
    .map((k) => {
      const name = armCoreName(cat, k);
      const hint = armHostHint(cat, name);
      return `${name ?? "unknown core"} ×${k.count} (${k.implementer}/${k.part}${hint ? `; ${hint}` : ""})`;
    })
    .join(" + ");
}

/** True when a variant carries code compiled for a capability itself (rules.ts; fleet/cover.ts imports it from here). */
export { isNative };

/**
 * Recommend the variant(s) of `variants` for `host`. See the module comment for the rule; the steps are rules.ts's
 * ordered rules (GPU_RULES for each GPU group, CPU_RULES for a host without an NVIDIA GPU and for the fallback).
 * Never throws for a well-formed host and catalog; a variant whose CUDA version or ISA the catalog does not know
 * never fits.
 */
export function recommend(
  host: HostInfo,
  variants: readonly Variant[],
  catalog: Catalog,
  opts: RecommendOptions,
): Recommendation {
  const f = factsOf(host, variants, catalog, opts);
  const reasons = HOST_FINDINGS.map((finding) => finding(f)).filter((r): r is string => r !== null);
  const picks = f.groups.size === 0 ? [cpuPick(f)] : [...f.groups].map(([cap, gs]) => gpuPick(f, cap, gs));
  const cpuFallback = offerCpuFallback(f, picks);
  const chosen = picks.filter((p) => p.variant !== null);
  return {
    package: opts.package,
    status: chosen.length === picks.length ? "ok" : chosen.length > 0 ? "partial" : "none",
    variants: chosen.map((p) => p.variant!),
    picks,
    reasons,
    cpuFallback,
    host: hostSummary(f),
  };
}

// --- host findings: the host-level reasons, in order ------------------------------------------------------------

/** The widest catalog ISA this CPU runs and what the wider ones lack, or that none runs. */
function cpuIsaFinding(f: Facts): string {
  const { isas, bestIsa } = f;
  if (!bestIsa)
    return (
      `CPU ISA: none of the catalog's ${f.host.system} ISAs runs on this CPU: ` +
      isas.all.map((i) => `${i.key} lacks ${isas.missing.get(i.key)!.join(" ")}`).join("; ")
    );
  const wider = isas.all.filter((i) => i.rank > bestIsa.rank);
  return (
    `CPU ISA: ${bestIsa.key} (${bestIsa.label}) is the widest ${f.host.system} ISA in the catalog this CPU runs: it has ` +
    `${bestIsa.requiredCpuFeatures.join(" ")}` +
    (wider.length ? `; not ${wider.map((i) => `${i.key} (lacks ${isas.missing.get(i.key)!.join(" ")})`).join(", ")}` : "")
  );
}

/**
 * The newest catalog CUDA version the (oldest) driver runs with full support, the ones it runs only through CUDA
 * minor-version compatibility (catalog `cudaMajors`), and what the next one needs; null without a GPU.
 */
function driverFinding(f: Facts): string | null {
  const { driver, catalog } = f;
  if (!driver) return null;
  const top = f.driverCuda[0];
  const compat = catalog.cuda
    .filter((t) => driverSupport(driver, t, catalog.cudaMajors) === "minorCompat")
    .sort((a, b) => compareVersions(a.version, b.version));
  const majors = uniq(compat.map((t) => cudaMajorOf(t.version, catalog.cudaMajors)!));
  const compatWords = compat.length
    ? `under CUDA minor-version compatibility it ${top ? "also " : ""}runs ${compat.map((t) => `${t.version} (needs ≥ ${t.minDriverLinux})`).join(", ")}, ` +
      `being ≥ ${majors.map((m) => `${m.minDriverLinux} (CUDA ${m.major}.x)`).join(", ")}: a variant of those whose code on the GPU is ` +
      `SASS runs, losing ${majors[0]!.loses.join("; ")}`
    : "";
  if (!top) {
    const oldest = [...catalog.cuda].sort((a, b) => compareVersions(a.minDriverLinux, b.minDriverLinux))[0];
    return (
      `driver ${driver} is older than every CUDA version in the catalog needs with full support (the oldest requirement is ` +
      `CUDA ${oldest.version}: ≥ ${oldest.minDriverLinux})` +
      (compat.length ? `; ${compatWords}` : "")
    );
  }
  const next = catalog.cuda
    .filter((c) => compareVersions(c.version, top.version) > 0 && !compat.includes(c))
    .sort((a, b) => compareVersions(a.version, b.version))[0];
  return (
    `driver ${driver} runs CUDA up to ${top.version} of the catalog's ${catalog.cuda.map((c) => c.version).join(", ")} ` +
    `with full support (${top.version} needs ≥ ${top.minDriverLinux}` +
    (next ? `; ${next.version} would need ≥ ${next.minDriverLinux})` : ")") +
    (compat.length ? `; ${compatWords}` : "")
  );
}

/** Several GPUs: one variant per compute capability, or one for all; null for at most one GPU. */
function gpuGroupsFinding(f: Facts): string | null {
  const { groups, host } = f;
  if (groups.size > 1)
    return (
      `this host has GPUs of ${groups.size} different compute capabilities ` +
      `(${[...groups].map(([cap, gs]) => `${cap}: GPU ${gs.map((g) => g.index).join(",")}`).join("; ")}); ` +
      `each variant is built for one GPU's SM (lower same-major code could load on several, but would give up ` +
      `native code on the newer GPU), so one variant per GPU kind is recommended — install each and pick the ` +
      `GPU with CUDA_VISIBLE_DEVICES`
    );
  if (host.gpus.length > 1)
    return `all ${host.gpus.length} GPUs have compute capability ${host.gpus[0].capability}: one variant covers them all`;
  return null;
}

/** The host-level findings of `Recommendation.reasons`, in order: CPU ISA, driver → CUDA, GPU groups. */
const HOST_FINDINGS: readonly ((f: Facts) => string | null)[] = [cpuIsaFinding, driverFinding, gpuGroupsFinding];

// --- picks ------------------------------------------------------------------------------------------------------

/** A pick with its header reason and no verdict yet. */
function emptyPick(kind: Pick["kind"], gpus: readonly GpuInfo[], cap: string | null, header: string): Pick {
  const names = uniq(gpus.map((g) => g.name));
  return {
    kind,
    gpuIndices: gpus.map((g) => g.index),
    gpuName: gpus.length ? names.join(" / ") : null,
    capability: cap,
    sm: gpus.length ? gpus[0].sm : null,
    variant: null,
    binaryCompat: false,
    reasons: [header],
    problems: [],
    suggestions: [],
    alternatives: [],
    warnings: [],
  };
}

/** `p` with the verdict of its rules applied (a chosen variant with nixpkgs' verdict against its CUDA build). */
function withVerdict(p: Pick, v: Verdict, catalog: Catalog): Pick {
  if (v.kind === "pick") {
    p.variant = v.variant.name;
    p.binaryCompat = v.binaryCompat;
    p.reasons.push(...v.reasons);
    p.alternatives = v.alternatives;
    p.warnings = nixpkgsBrokenWarnings(catalog, closurePackages(v.variant), { rev: v.variant.nixpkgs, cuda: v.variant.cuda, system: v.variant.system });
    // nixpkgs' insecure mark on the package itself (catalog/advisories.ts): evaluation may refuse it.
    const own = catalog.packagesOnTorch.find((x) => x.name === v.variant.package);
    const insecure = own ? insecureNote(catalog, own, v.variant.version, v.variant.nixpkgs, v.variant.python) : null;
    if (insecure) p.warnings.push(insecure);
  } else p.problems.push(...v.problems);
  p.suggestions.push(...v.suggestions);
  return p;
}

/** The CPU pick: CPU_RULES on the CPU-only variants. */
function cpuPick(f: Facts): Pick {
  const header = `${f.host.gpuAbsentReason ?? "no NVIDIA GPU"}: so a CPU-only variant`;
  return withVerdict(emptyPick("cpu", [], null, header), decide(CPU_RULES, cpuCase(f)), f.catalog);
}

/** The pick of the GPU group `gs` of compute capability `cap`: GPU_RULES. */
function gpuPick(f: Facts, cap: string, gs: GpuInfo[]): Pick {
  const names = uniq(gs.map((g) => g.name));
  const header =
    `GPU ${gs.map((g) => g.index).join(",")}: ${names.join(" / ")}${gs.length > 1 ? ` ×${gs.length}` : ""}, ` +
    `compute capability ${cap} (sm${gs[0].sm}), driver ${oldestDriver(gs)}`;
  return withVerdict(emptyPick("gpu", gs, cap, header), decide(GPU_RULES, gpuCase(f, cap, gs)), f.catalog);
}

/**
 * When some GPU group has no variant, the best CPU-only variant (or null): each such pick gets a problem naming it.
 */
function offerCpuFallback(f: Facts, picks: readonly Pick[]): string | null {
  if (f.host.gpus.length === 0 || !picks.some((p) => p.variant === null)) return null;
  const c = cpuPick(f);
  if (!c.variant) return null;
  for (const p of picks)
    if (p.variant === null) p.problems.push(`the CPU-only variant ${c.variant} runs on this host, without using this GPU`);
  return c.variant;
}

/** `Recommendation.host`: the host as detect saw it. */
function hostSummary(f: Facts): Recommendation["host"] {
  const { host } = f;
  return {
    system: host.system,
    machine: host.machine,
    cpu: describeCpu(host, f.catalog),
    features: host.cpu.features,
    isa: f.bestIsa?.key ?? null,
    systemFeatures: f.isas.runnable.map(gccarchFeature),
    gpus: host.gpus.map(({ index, name, capability, sm, driver }) => ({ index, name, capability, sm, driver })),
    maxCuda: f.driverCuda[0]?.version ?? null,
    minorCompatCuda: f.driver
      ? f.catalog.cuda
          .filter((t) => driverSupport(f.driver!, t, f.catalog.cudaMajors) === "minorCompat")
          .map((t) => t.version)
          .sort(compareVersions)
      : [],
    sources: host.sources,
    gpuAbsentReason: host.gpuAbsentReason,
    logicalCpus: host.cpu.logicalCpus,
    memory: host.memory,
    buildCapacity: { slots: f.capacity.slots, machine: f.capacity.machine, from: f.capacity.from },
  };
}

/**
 * How to install `name` on a host, each a whole command to copy: from a Flox catalog (`flox install ORG/NAME`, when
 * the variants were published with `publish --org ORG`), and the README's route, `npx variant-matrix install NAME`
 * (it checks the host, builds, links ./PACKAGE, takes the host's GPU-driver route and verifies), substituting from
 * `substituter` when given (`publish --to`) through NIX_CONFIG (the Nix manual: NIX_CONFIG holds nix.conf lines), with
 * `--matrix` when the answer came from a matrix given so (`from.matrix`). Pure; detect and verify print it.
 */
export function installLines(name: string, o: { org?: string; substituter?: string; from?: { matrix?: string } }): string[] {
  const quote = (w: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
  const env = o.substituter ? `NIX_CONFIG=${quote(`extra-substituters = ${o.substituter}`)} ` : "";
  // The matrix that gave the answer (--matrix), so that install builds the variant of that matrix.
  const matrix = o.from?.matrix !== undefined ? ` --matrix ${quote(o.from.matrix)}` : "";
  return [...(o.org ? [`flox install ${o.org}/${name}`] : []), `${env}npx variant-matrix install ${name}${matrix}`];
}
