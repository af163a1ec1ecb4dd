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
 * 3. GPU driver: the minimum Linux GPU driver of the variant's CUDA version (catalog `minDriverLinux`, toolkit release
 *    notes Table 3) is ≤ the host driver, compared numerically per component;
 * 4. CPU: the host has every `requiredCpuFeatures` entry of the variant's ISA (catalog; `/proc/cpuinfo` spelling);
 * 5. order: native code before binary-compatible code (native = the GPU's own capability is in
 *    `cudaCapabilities`), then the widest ISA (highest catalog `rank`), then the newest CUDA version, then the
 *    newest PyTorch release, then the newest Python. Python comes last because the variants differ in nothing
 *    else and a project that pins an older Python finds that variant among `alternatives`.
 *
 * Several GPUs: GPUs are grouped by compute capability. Since each variant targets exactly one SM, GPUs of
 * different capabilities cannot share a variant: one pick per group, and the result says so.
 */
import { capabilitiesRunOn, cudaForDriver, isaFit, variantRunsOn } from "../compat.ts";
import { gccarchFeature } from "../expand.ts";
import type { Catalog, CpuIsa, CudaToolkit, Excluded, PackageName, Variant } from "../schema.ts";
import { armHostHint, compareVersions, type GpuInfo, type HostInfo } from "./host.ts";

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
  /** Concrete changes that would add a (better) variant: `matrix.ts` edits, a GPU driver upgrade. */
  suggestions: string[];
  /** Other variants that fit, best first. */
  alternatives: string[];
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
  /** Host-level findings: CPU ISA, GPU driver → CUDA, several GPUs. */
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
    /** Newest catalog CUDA version the GPU driver runs, or null (no GPU, or a GPU driver older than every one). */
    maxCuda: string | null;
    sources: HostInfo["sources"];
    gpuAbsentReason: string | null;
  };
}

const MATRIX = "matrix.ts";

/** One line describing the host CPU: model name (x86) or core types with MIDR ids (aarch64). */
export function describeCpu(host: HostInfo): string {
  const c = host.cpu;
  if (c.arch === "x86_64")
    return `${c.modelName ?? "unknown x86_64 CPU"}${c.vendor ? ` (${c.vendor})` : ""}, ${c.logicalCpus} logical CPUs`;
  if (c.armCores.length === 0) return `aarch64 CPU (no CPU implementer/part lines), ${c.logicalCpus} logical CPUs`;
  return c.armCores
    .map((k) => {
      const hint = armHostHint(k.name);
      return `${k.name ?? "unknown core"} ×${k.count} (${k.implementer}/${k.part}${hint ? `; ${hint}` : ""})`;
    })
    .join(" + ");
}

function cmpDesc(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareVersions(b, a);
}

/** True when `v` carries code compiled for compute capability `cap` itself (not binary-compatible code). */
export function isNative(v: Variant, cap: string): boolean {
  return !v.binaryCompat && v.cudaCapabilities.includes(cap);
}

function sortKey(cap: string | null, rankOf: (k: string) => number) {
  return (a: Variant, b: Variant): number => {
    if (cap !== null) {
      const n = Number(isNative(b, cap)) - Number(isNative(a, cap));
      if (n !== 0) return n;
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

function uniq<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

function addTo(field: string, value: string): string {
  return `add "${value}" to ${field} in ${MATRIX}`;
}

/**
 * Recommend the variant(s) of `variants` for `host`. See the module comment for the rule.
 * Never throws for a well-formed host and catalog; a variant whose CUDA version or ISA the catalog does not know
 * never fits.
 */
export function recommend(
  host: HostInfo,
  variants: readonly Variant[],
  catalog: Catalog,
  opts: RecommendOptions,
): Recommendation {
  const maxAlt = opts.maxAlternatives ?? 5;
  const isas = isaFit(host, catalog);
  const runnableKeys = new Set(isas.runnable.map((i) => i.key));
  const rankOf = (k: string) => isas.byKey.get(k)?.rank ?? -1;
  const bestIsa = isas.runnable[0] ?? null;
  const cudaByVersion = new Map(catalog.cuda.map((c) => [c.version, c] as [string, CudaToolkit]));

  const pool = variants.filter((v) => v.package === opts.package && v.system === host.system);
  const systemVariants = variants.filter((v) => v.system === host.system);
  const matrixIsas = uniq(systemVariants.map((v) => v.isa));
  const matrixCuda = uniq(variants.map((v) => v.cuda).filter((c): c is string => c !== null));
  const packagesInMatrix = uniq(variants.map((v) => v.package));

  const reasons: string[] = [];

  // --- CPU ISA -------------------------------------------------------------------------------------------
  if (bestIsa) {
    const wider = isas.all.filter((i) => i.rank > bestIsa.rank);
    reasons.push(
      `CPU ISA: ${bestIsa.key} (${bestIsa.label}) is the widest ${host.system} ISA in the catalog this CPU runs: it has ` +
        `${bestIsa.requiredCpuFeatures.join(" ")}` +
        (wider.length
          ? `; not ${wider.map((i) => `${i.key} (lacks ${isas.missing.get(i.key)!.join(" ")})`).join(", ")}`
          : ""),
    );
  } else {
    reasons.push(
      `CPU ISA: none of the catalog's ${host.system} ISAs runs on this CPU: ` +
        isas.all.map((i) => `${i.key} lacks ${isas.missing.get(i.key)!.join(" ")}`).join("; "),
    );
  }

  // --- GPU driver → CUDA --------------------------------------------------------------------------------------
  const driver = host.gpus.length
    ? host.gpus.map((g) => g.driver).sort(compareVersions)[0]
    : null;
  const driverCuda = driver ? cudaForDriver(driver, catalog.cuda) : [];
  if (driver) {
    if (driverCuda.length) {
      const top = driverCuda[0];
      const next = catalog.cuda
        .filter((c) => compareVersions(c.version, top.version) > 0)
        .sort((a, b) => compareVersions(a.version, b.version))[0];
      reasons.push(
        `driver ${driver} runs CUDA up to ${top.version} of the catalog's ${catalog.cuda.map((c) => c.version).join(", ")} ` +
          `(${top.version} needs ≥ ${top.minDriverLinux}` +
          (next ? `; ${next.version} would need ≥ ${next.minDriverLinux})` : ")"),
      );
    } else {
      const oldest = [...catalog.cuda].sort((a, b) => compareVersions(a.minDriverLinux, b.minDriverLinux))[0];
      reasons.push(
        `driver ${driver} is older than every CUDA version in the catalog needs (the oldest requirement is ` +
          `CUDA ${oldest.version}: ≥ ${oldest.minDriverLinux})`,
      );
    }
  }

  // --- GPU groups -------------------------------------------------------------------------------------------
  const groups = new Map<string, GpuInfo[]>();
  for (const g of host.gpus) groups.set(g.capability, [...(groups.get(g.capability) ?? []), g]);
  if (groups.size > 1) {
    reasons.push(
      `this host has GPUs of ${groups.size} different compute capabilities ` +
        `(${[...groups].map(([cap, gs]) => `${cap}: GPU ${gs.map((g) => g.index).join(",")}`).join("; ")}); ` +
        `each variant is built for one GPU's SM (lower same-major code could load on several, but would give up ` +
        `native code on the newer GPU), so one variant per GPU kind is recommended — install each and pick the ` +
        `GPU with CUDA_VISIBLE_DEVICES`,
    );
  } else if (host.gpus.length > 1) {
    reasons.push(`all ${host.gpus.length} GPUs have compute capability ${host.gpus[0].capability}: one variant covers them all`);
  }

  // A package the matrix lists whose every combination was dropped yields no variant, yet is in `packages`: its drops
  // (with the catalog's reasons) tell it apart from a package the matrix does not list.
  const droppedPackage = (opts.excluded ?? []).filter((e) => e.package === opts.package);
  const noPackage = (p: Pick): string[] => {
    const out: string[] = [];
    if (!packagesInMatrix.includes(opts.package)) {
      if (droppedPackage.length)
        p.problems.push(
          `${opts.package} is in packages of ${MATRIX}, but every one of its ${droppedPackage.length} combination(s) is dropped: ` +
            `${droppedPackage[0]!.reasons[0] ?? "no reason recorded"} (first: ${droppedPackage[0]!.name}; \`variant-matrix list --excluded\` shows all)`,
        );
      else out.push(`add "${opts.package}" to packages in ${MATRIX}`);
    }
    if (bestIsa && !matrixIsas.includes(bestIsa.key)) out.push(addTo("isas", bestIsa.key));
    return out;
  };

  const picks: Pick[] = [];
  if (groups.size === 0) {
    picks.push(cpuPick());
  } else {
    for (const [cap, gs] of groups) picks.push(gpuPick(cap, gs));
  }

  let cpuFallback: string | null = null;
  if (host.gpus.length > 0 && picks.some((p) => p.variant === null)) {
    const c = cpuPick();
    if (c.variant) {
      cpuFallback = c.variant;
      for (const p of picks)
        if (p.variant === null)
          p.problems.push(`the CPU-only variant ${c.variant} runs on this host, without using this GPU`);
    }
  }

  const chosen = picks.filter((p) => p.variant !== null);
  const status: Recommendation["status"] =
    chosen.length === picks.length ? "ok" : chosen.length > 0 ? "partial" : "none";

  return {
    package: opts.package,
    status,
    variants: chosen.map((p) => p.variant!),
    picks,
    reasons,
    cpuFallback,
    host: {
      system: host.system,
      machine: host.machine,
      cpu: describeCpu(host),
      features: host.cpu.features,
      isa: bestIsa?.key ?? null,
      systemFeatures: isas.runnable.map(gccarchFeature),
      gpus: host.gpus.map(({ index, name, capability, sm, driver }) => ({ index, name, capability, sm, driver })),
      maxCuda: driverCuda[0]?.version ?? null,
      sources: host.sources,
      gpuAbsentReason: host.gpuAbsentReason,
    },
  };

  // --- helpers (closures over the tables above) -------------------------------------------------------------

  function isaProblem(candidates: Variant[], what: string): { problems: string[]; suggestions: string[] } {
    const keys = uniq(candidates.map((v) => v.isa));
    const problems = [
      `${what} exist only for ISA ${keys.join(", ")}, which this CPU cannot run: ` +
        keys
          .map((k) =>
            isas.byKey.has(k) ? `${k} needs ${isas.missing.get(k)!.join(" ")}` : `${k} is not in the catalog`,
          )
          .join("; "),
    ];
    const suggestions = bestIsa
      ? [addTo("isas", bestIsa.key) + ` (the widest ISA this CPU runs)`]
      : [`no CPU ISA in the catalog runs on this CPU; the catalog (generator/catalog/cpu-isas.ts) needs one`];
    return { problems, suggestions };
  }

  function cpuPick(): Pick {
    const p: Pick = {
      kind: "cpu",
      gpuIndices: [],
      gpuName: null,
      capability: null,
      sm: null,
      variant: null,
      binaryCompat: false,
      reasons: [`${host.gpuAbsentReason ?? "no NVIDIA GPU"}: so a CPU-only variant`],
      problems: [],
      suggestions: [],
      alternatives: [],
    };
    const cpuOnly = pool.filter((v) => v.sm === null);
    const fits = pool.filter((v) => variantRunsOn(v, host, null, catalog)).sort(sortKey(null, rankOf));
    if (fits.length) {
      const best = fits[0];
      p.variant = best.name;
      p.reasons.push(
        `${best.name}: ISA ${best.isa}, PyTorch ${best.torchVersion}, Python ${best.python} ` +
          `(widest ISA, then newest PyTorch, then newest Python of ${fits.length} fitting CPU-only variant(s))`,
      );
      p.alternatives = fits.slice(1, 1 + maxAlt).map((v) => v.name);
      if (bestIsa && rankOf(best.isa) < bestIsa.rank && !matrixIsas.includes(bestIsa.key))
        p.suggestions.push(addTo("isas", bestIsa.key) + ` for code using ${bestIsa.requiredCpuFeatures.join(" ")}`);
      return p;
    }
    if (pool.length === 0) {
      p.problems.push(`the matrix has no ${opts.package} variants for ${host.system}`);
      p.suggestions.push(...noPackage(p));
    } else if (cpuOnly.length === 0) {
      p.problems.push(`the matrix has no CPU-only ${opts.package} variants for ${host.system}`);
      p.suggestions.push(`set cpuOnly: true in ${MATRIX}`);
      if (bestIsa && !matrixIsas.includes(bestIsa.key)) p.suggestions.push(addTo("isas", bestIsa.key));
    } else {
      const r = isaProblem(cpuOnly, `CPU-only ${opts.package} variants for ${host.system}`);
      p.problems.push(...r.problems);
      p.suggestions.push(...r.suggestions);
    }
    return p;
  }

  function gpuPick(cap: string, gs: GpuInfo[]): Pick {
    const sm = gs[0].sm;
    const gdriver = gs.map((g) => g.driver).sort(compareVersions)[0];
    const names = uniq(gs.map((g) => g.name));
    const p: Pick = {
      kind: "gpu",
      gpuIndices: gs.map((g) => g.index),
      gpuName: names.join(" / "),
      capability: cap,
      sm,
      variant: null,
      binaryCompat: false,
      reasons: [
        `GPU ${gs.map((g) => g.index).join(",")}: ${names.join(" / ")}${gs.length > 1 ? ` ×${gs.length}` : ""}, ` +
          `compute capability ${cap} (sm${sm}), driver ${gdriver}`,
      ],
      problems: [],
      suggestions: [],
      alternatives: [],
    };
    const arch = catalog.gpus.find((g) => g.sm === sm);

    const forSm = pool.filter((v) => v.sm === sm);
    const runs = forSm.filter((v) => capabilitiesRunOn(v.cudaCapabilities, cap));
    const driverOk = runs.filter((v) => {
      const t = v.cuda === null ? undefined : cudaByVersion.get(v.cuda);
      return t !== undefined && compareVersions(t.minDriverLinux, gdriver) <= 0;
    });
    // The one rule (compat.ts); the steps above only explain a miss.
    const fits = pool.filter((v) => variantRunsOn(v, host, { capability: cap, driver: gdriver }, catalog)).sort(sortKey(cap, rankOf));

    if (fits.length) {
      const best = fits[0];
      p.variant = best.name;
      p.binaryCompat = !isNative(best, cap);
      const toolkit = cudaByVersion.get(best.cuda!)!;
      p.reasons.push(
        p.binaryCompat
          ? `binary-compatible code: CUDA ${best.cuda}'s nvcc cannot compile ${cap}, so ${best.name} carries ` +
              `${best.cudaCapabilities.join(", ")} code, which runs on ${cap} (same major, lower or equal minor)`
          : `native code: ${best.name} carries ${best.cudaCapabilities.join(", ")} code compiled by CUDA ${best.cuda}'s nvcc`,
        `driver ${gdriver} ≥ ${toolkit.minDriverLinux}, the minimum CUDA ${best.cuda} needs`,
        `ISA ${best.isa}, CUDA ${best.cuda}, PyTorch ${best.torchVersion}, Python ${best.python}: ` +
          `of ${fits.length} fitting variant(s), ordered native first, then widest ISA, newest CUDA, newest PyTorch, newest Python`,
      );
      p.alternatives = fits.slice(1, 1 + maxAlt).map((v) => v.name);
      if (p.binaryCompat) nativeHint(p, cap, gdriver, forSm);
      if (bestIsa && rankOf(best.isa) < bestIsa.rank && !matrixIsas.includes(bestIsa.key))
        p.suggestions.push(addTo("isas", bestIsa.key) + ` for code using ${bestIsa.requiredCpuFeatures.join(" ")}`);
      return p;
    }

    // --- nothing fits: say where it stopped ---
    if (!arch) {
      p.problems.push(
        `compute capability ${cap} (sm${sm}) is not in the catalog (generator/catalog/gpus.ts); ` +
          `no ${MATRIX} change can add it until the catalog knows this GPU`,
      );
      return p;
    }
    if (!arch.systems.includes(host.system)) {
      p.problems.push(`the catalog lists sm${sm} (${arch.label}) for ${arch.systems.join(", ")} only, not ${host.system}`);
      return p;
    }
    if (pool.length === 0) {
      p.problems.push(`the matrix has no ${opts.package} variants for ${host.system}`);
      p.suggestions.push(...noPackage(p));
      if (!variants.some((v) => v.sm === sm)) p.suggestions.push(addTo("gpus", sm));
      return p;
    }
    if (forSm.length === 0) {
      p.problems.push(`the matrix has no ${opts.package} variant for sm${sm} (${arch.label}) on ${host.system}`);
      // The matrix asks for this GPU but drops the package for it: say why (the catalog's reasons), suggest nothing.
      const systemOf = (isa: string) => catalog.isas.find((i) => i.key === isa)?.system;
      const dropped = (opts.excluded ?? []).filter((e) => e.package === opts.package && e.sm === sm && systemOf(e.isa) === host.system);
      if (dropped.length && variants.some((v) => v.sm === sm && v.system === host.system)) {
        for (const r of uniq(dropped.flatMap((e) => e.reasons))) p.problems.push(`dropped: ${r}`);
        return p;
      }
      const sameMajor = uniq(
        pool
          .filter((v) => v.sm !== null && v.sm !== sm && capabilitiesRunOn(v.cudaCapabilities, cap))
          .map((v) => `sm${v.sm}`),
      );
      if (sameMajor.length)
        p.problems.push(
          `(${sameMajor.join(", ")} variants carry code that would load on ${cap}, but they are built and named ` +
            `for another GPU; detect recommends only variants for this GPU)`,
        );
      p.suggestions.push(addTo("gpus", sm));
      // Can any CUDA version of the matrix compile for this GPU (natively or same-major)?
      const servable = matrixCuda.filter((ver) => {
        const t = cudaByVersion.get(ver);
        return t !== undefined && capabilitiesRunOn(t.capabilities, cap);
      });
      if (servable.length === 0) {
        const add = catalog.cuda
          .filter((t) => t.capabilities.includes(cap))
          .sort((a, b) => compareVersions(a.version, b.version));
        const okDriver = add.filter((t) => compareVersions(t.minDriverLinux, gdriver) <= 0);
        const pickT = okDriver[okDriver.length - 1] ?? add[0];
        if (pickT)
          p.suggestions.push(
            `no CUDA version of the matrix (${matrixCuda.join(", ") || "none"}) compiles for ${cap}: ` +
              cudaAddition(pickT.version) +
              (compareVersions(pickT.minDriverLinux, gdriver) > 0
                ? ` (CUDA ${pickT.version} needs driver ≥ ${pickT.minDriverLinux})`
                : ""),
          );
        else p.suggestions.push(`no CUDA version in the catalog compiles for ${cap}`);
      }
      return p;
    }
    if (runs.length === 0) {
      p.problems.push(
        `the matrix's sm${sm} variants carry ${uniq(forSm.flatMap((v) => v.cudaCapabilities)).join(", ")} code, ` +
          `none of which runs on ${cap} (a generator or catalog bug)`,
      );
      return p;
    }
    if (driverOk.length === 0) {
      const needs = uniq(runs.map((v) => v.cuda!))
        .map((ver) => cudaByVersion.get(ver))
        .filter((t): t is CudaToolkit => t !== undefined)
        .sort((a, b) => compareVersions(a.minDriverLinux, b.minDriverLinux));
      const lowest = needs[0];
      p.problems.push(
        `driver ${gdriver} is too old for the matrix's sm${sm} variants: ` +
          needs.map((t) => `CUDA ${t.version} needs ≥ ${t.minDriverLinux}`).join(", "),
      );
      if (lowest) p.suggestions.push(`upgrade the NVIDIA driver to ≥ ${lowest.minDriverLinux} (CUDA ${lowest.version})`);
      const supported = cudaForDriver(gdriver, catalog.cuda).filter((t) => capabilitiesRunOn(t.capabilities, cap));
      const carried = supported.filter((t) =>
        catalog.nixpkgs.some((n) => n.cuda.includes(t.version) && !(t.version in n.brokenCuda)),
      );
      if (carried.length)
        p.suggestions.push(`or ${cudaAddition(carried[0].version)} (CUDA ${carried[0].version} runs on driver ${gdriver})`);
      else if (supported.length)
        p.suggestions.push(
          `CUDA ${supported[0].version} runs on driver ${gdriver}, but no nixpkgs pin in the catalog carries it`,
        );
      else
        p.suggestions.push(
          `(no CUDA version in the catalog runs on driver ${gdriver}, so no ${MATRIX} change can help: upgrade the driver)`,
        );
      return p;
    }
    const r = isaProblem(driverOk, `${opts.package} variants for sm${sm} that this driver runs`);
    p.problems.push(...r.problems);
    p.suggestions.push(...r.suggestions);
    return p;
  }

  /**
   * "add "12.9" to cuda in matrix.ts", plus the release to add when no release of the matrix has a nixpkgs pin that
   * carries that CUDA version with a working torch (a pin's `brokenCuda` counts as not carrying it).
   */
  function cudaAddition(version: string): string {
    const matrixPins = new Set(variants.map((v) => v.nixpkgs));
    const pins = catalog.nixpkgs
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

  /** For a binary-compatible pick: where native code would come from. */
  function nativeHint(p: Pick, cap: string, gdriver: string, forSm: Variant[]): void {
    const nativeInMatrix = forSm.filter((v) => isNative(v, cap));
    if (nativeInMatrix.length) {
      const why = nativeInMatrix.map((v) => {
        const t = cudaByVersion.get(v.cuda!);
        if (t && compareVersions(t.minDriverLinux, gdriver) > 0) return `${v.name} needs driver ≥ ${t.minDriverLinux}`;
        if (!runnableKeys.has(v.isa)) return `${v.name} needs ${isas.missing.get(v.isa)?.join(" ") ?? v.isa}`;
        return `${v.name} does not fit`;
      });
      p.reasons.push(`native variants exist but do not fit: ${uniq(why).slice(0, 3).join("; ")}`);
      return;
    }
    const native = catalog.cuda
      .filter((t) => t.capabilities.includes(cap))
      .sort((a, b) => compareVersions(a.version, b.version))[0];
    if (native)
      p.suggestions.push(
        `for native ${cap} code: ` +
          cudaAddition(native.version) +
          (compareVersions(native.minDriverLinux, gdriver) > 0
            ? ` (CUDA ${native.version} needs driver ≥ ${native.minDriverLinux}; this one is ${gdriver})`
            : ""),
      );
  }
}

/**
 * How to install `name` on a host: from a Flox catalog (`flox install ORG/NAME`, when the variants were published
 * with `publish --org ORG`), and with Nix from this repository's file, substituting from `substituter` when given
 * (`publish --to`). Pure; detect and verify print it.
 */
export function installLines(name: string, o: { org?: string; substituter?: string }): string[] {
  const nix = `nix-env -if .flox/pkgs/${name}.nix${o.substituter ? ` --option extra-substituters ${o.substituter}` : ""}`;
  return [...(o.org ? [`flox install ${o.org}/${name}`] : []), nix];
}
