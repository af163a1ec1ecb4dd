/**
 * The model of what a selection builds besides its own packages, from what the NixOS-CUDA Hydra's jobs hold
 * (generator/catalog/binary-cache.ts) and each pin's facts (generator/catalog/torch.ts `defaultCuda`, `recursedPython`;
 * device-code.ts `linkedAt`: which libraries torch links at the pin). Pure. `build --dry-run` without `--ask-store`,
 * `fleet`'s cost and `explain` use it; the real answer comes from Nix (`build --dry-run --ask-store`, driver/store.ts
 * dryRealise), which stays the authority.
 *
 * Per CUDA variant (CPU-only variants need nothing from the CUDA cache):
 * - on a system the Hydra does not build for (aarch64-linux), or in the package-set scope (config.cudaCapabilities:
 *   a CUDA set no job builds with), the CUDA closure (magma, nccl, NVSHMEM, …: the libraries compiled for
 *   capabilities, one per nixpkgs instance) is built; on such a system triton too;
 * - on x86_64-linux in the torch scope, with a CUDA set other than the pin's default `cudaPackages`: each library of
 *   that set torch links at the pin (NCCL, NVSHMEM where linked, magma-cuda-static) is built, since no job is
 *   cudaSupport-sensitive in a versioned set and torch's jobs build with the default set only;
 * - triton when the Python set is not one CI evaluation recurses into at the pin, or the CUDA set is not the default
 *   (triton reads cudaSupport: a job in each recursed set, with the default set; it compiles no code for
 *   capabilities, so the scope does not change it);
 * - a pin whose default CUDA set or recursed Python sets are not known counts as off (said in the reason);
 * - on any system, the dependencies a package variant has rebuilt (catalog/lib/packages.ts rebuiltDependencies: the other
 *   packages its catalog fixes name, which explain prints: vLLM's bitsandbytes, cupy and flashinfer), one per torch
 *   (the variant's Python set), with the catalog's build time of each, or unknown where the catalog has none.
 * A derivation shared by several variants (same pin, system, CUDA set, and Python for triton) is counted once.
 */
import { cudaCachesFor } from "../catalog/lib/binary-cache.ts";
import { onTorch, rebuiltDependencies } from "../catalog/lib/packages.ts";
import type { Catalog, NixpkgsPin } from "../catalog/schema.ts";
import { parseName, torchSiblingName } from "../matrix/naming.ts";
import type { Variant } from "../matrix/schema.ts";

/**
 * What the model needs of a variant (`nixpkgsKey`: one CUDA closure per key in the package-set scope; `package`, when
 * given, for the dependencies its package has rebuilt).
 */
type CacheModelInput = Pick<Variant, "name" | "system" | "python" | "cuda" | "nixpkgs" | "cudaCapabilitiesForPackageSet" | "nixpkgsKey"> & Partial<Pick<Variant, "package">>;

/** One derivation (or closure) the model says is built, counted once for the variants that need it. */
export interface ModelledBuild {
  /** Identity: what is built and for which (pin, system, CUDA set[, Python]; a dependency: its torch). */
  key: string;
  what: "magma" | "nccl" | "nvshmem" | "triton" | "cuda-closure" | "dependency";
  /** A dependency's attribute in the Python set ("cupy"); undefined for the others. */
  attr?: string;
  /** Default duration in seconds and its source; null when no sourced figure exists (a dependency the catalog has none for). */
  seconds: number | null;
  source: string;
  /** Why the cache cannot serve it. */
  why: string;
  /** Variants that need it. */
  variants: string[];
}

/** What the cache model reads of the catalog: the pins, the CUDA cache's facts, the statically linked libraries, the build times. */
export type CacheModelCatalog = Pick<Catalog, "nixpkgs" | "cudaCache" | "bundledDeviceCode" | "rebuildSeconds" | "buildSeconds" | "publicCudaCaches" | "packagesOnTorch">;

/**
 * The modelled extra builds of a selection, and per variant the reasons it is off the cache.
 * @param cat the catalog (built-in and local): its pins, looked up by revision, the CUDA cache's facts (`cudaCache`)
 *   and the libraries torch links statically (`bundledDeviceCode`)
 * @returns builds (each counted once) and reasons per variant name (empty for a variant the cache serves fully)
 */
export function modelCacheMisses(
  vs: readonly CacheModelInput[],
  cat: CacheModelCatalog,
): { builds: ModelledBuild[]; reasons: Map<string, string[]> } {
  const builds = new Map<string, ModelledBuild>();
  const reasons = new Map<string, string[]>();
  const need = (v: CacheModelInput, key: string, what: Exclude<ModelledBuild["what"], "dependency">, why: string) => {
    const src = what === "cuda-closure" ? cat.buildSeconds.cudaClosure : cat.rebuildSeconds[what];
    add(v, { key, what, seconds: src.seconds, source: src.source, why });
  };
  const add = (v: CacheModelInput, first: Omit<ModelledBuild, "variants">) => {
    const b = builds.get(first.key) ?? { ...first, variants: [] };
    b.variants.push(v.name);
    builds.set(first.key, b);
    reasons.get(v.name)!.push(first.why);
  };
  /** The public caches that may hold what the model counts as built (catalog/binary-cache.ts): named, never counted. */
  const mayHold = (system: string) => {
    const m = cudaCachesFor(cat, system).filter((c) => c.holds === "may hold");
    return m.length
      ? ` unless ${m.map((c) => `${c.name} (${c.url}, key ${c.publicKey})`).join(" or ")} holds them: it may, for nixpkgs revisions not known here (\`build --dry-run --ask-store --substituters ${m.map((c) => c.url).join(" ")}\` asks Nix)`
      : "";
  };
  for (const v of vs) {
    reasons.set(v.name, []);
    if (v.cuda === null) continue;
    for (const d of dependencyBuilds({ ...v, cuda: v.cuda }, cat)) add(v, d);
    const pin = cat.nixpkgs.find((p) => p.rev === v.nixpkgs);
    const at = v.nixpkgs.slice(0, 7);
    const set = `cudaPackages_${v.cuda.replace(".", "_")}`;
    const tritonKey = `triton|${v.nixpkgs}|${v.system}|${v.python}|${v.cuda}`;
    const cachedSystem = cat.cudaCache.systems.includes(v.system);
    if (!cachedSystem || v.cudaCapabilitiesForPackageSet)
      need(v, `cuda-closure|${v.nixpkgsKey}`, "cuda-closure", !cachedSystem
        ? `${cat.cudaCache.name} builds CUDA packages for ${cat.cudaCache.systems.join(", ")} only, not ${v.system}: so the CUDA libraries this variant links (magma, NCCL, NVSHMEM and the rest of its cudaPackages set) are built from source` +
          mayHold(v.system)
        : `package-set scope: config.cudaCapabilities gives magma, NCCL, NVSHMEM and the rest of the cudaPackages set capabilities no binary cache builds, so they are built from source`);
    if (!cachedSystem) {
      need(v, tritonKey, "triton", `triton: not cached for ${v.system} either`);
      continue;
    }
    const defCuda = pin?.defaultCuda ?? null;
    const offCuda = defCuda !== v.cuda;
    const cudaWhy = defCuda === null ? `the default cudaPackages at ${at} is not known` : `${set} is not the default cudaPackages at ${at} (CUDA ${defCuda})`;
    // (In the package-set scope these are part of the closure above.)
    if (offCuda && !v.cudaCapabilitiesForPackageSet)
      for (const lib of cat.bundledDeviceCode) {
        if (lib.linkedAt !== "every pin" && !lib.linkedAt.includes(v.nixpkgs)) continue;
        const attr = cat.cudaCache.perCudaSet[lib.origin] ?? lib.origin;
        need(
          v,
          `${lib.origin}|${v.nixpkgs}|${v.system}|${v.cuda}`,
          lib.origin,
          `${attr}: ${cudaWhy}; ${cat.cudaCache.name} holds what the NixOS-CUDA Hydra's jobs build (the cudaSupport-sensitive ` +
            `attributes), and torch's jobs build with the default set only`,
        );
      }
    const recursed = pin?.recursedPython ?? null;
    const pySet = `python${v.python.replace(".", "")}Packages`;
    const pyServed = recursed !== null && recursed.includes(v.python);
    if (offCuda || !pyServed) {
      const pyWhy =
        recursed === null
          ? `which Python sets nixpkgs' CI evaluation recurses into at ${at} is not known`
          : `${pySet} is not a set nixpkgs' CI evaluation recurses into at ${at} (${recursed.map((p) => `python${p.replace(".", "")}Packages`).join(", ")})`;
      need(v, tritonKey, "triton", `triton: ${!pyServed ? pyWhy : cudaWhy}; the Hydra builds triton only in the Python sets CI evaluation recurses into, with the default CUDA set`);
    }
  }
  return { builds: [...builds.values()], reasons };
}

/**
 * The dependencies variant `v`'s package has rebuilt (catalog/lib/packages.ts rebuiltDependencies), as builds of the
 * model: keyed by the dependency and the variant's torch (its Python set), so a package variant and an environment
 * holding it count each once; the catalog's build time, or null (unknown) where it has none.
 */
function dependencyBuilds(v: CacheModelInput & { cuda: string }, cat: CacheModelCatalog): Omit<ModelledBuild, "variants">[] {
  const p = v.package !== undefined ? onTorch(cat, v.package) : undefined;
  if (!p) return [];
  const parts = parseName(v.name);
  const torch = parts ? torchSiblingName(parts) : v.name;
  return rebuiltDependencies(cat, p, { rev: v.nixpkgs, cuda: v.cuda, system: v.system }).map((d) => ({
    key: `${d.attr}|${v.nixpkgs}|${v.system}|${torch}`,
    what: "dependency",
    attr: d.attr,
    seconds: d.seconds,
    source: d.source,
    why:
      `${d.attr}: a dependency of ${p.label} that the catalog fixes here (${d.fix}), so a derivation no binary cache holds, ` +
      `built before it on the variant's torch; ${d.seconds === null ? `its build time is unknown (${d.source})` : "its build time is the catalog's figure for it"}`,
  }));
}

/** The pnames of torch's inputs the model speaks of, by what the model calls them (ModelledBuild["what"]). */
export const MODELLED_INPUTS: Record<"nccl" | "nvshmem" | "magma" | "triton", string> = {
  nccl: "nccl",
  nvshmem: "libnvshmem",
  magma: "magma",
  triton: "triton",
};

/**
 * What the model says cache.nixos-cuda.org holds of torch's CUDA-built inputs for (pin, Python, CUDA set) on
 * x86_64-linux in the torch scope: per input (nccl, nvshmem, magma, triton), true when cached. The same rule as
 * modelCacheMisses (it is asked about one such variant); `pin cache` compares it with the real cache.
 */
export function modelledInputsCached(pin: NixpkgsPin, python: string, cuda: string, cat: CacheModelCatalog): Record<keyof typeof MODELLED_INPUTS, boolean> {
  const { builds } = modelCacheMisses(
    [{ name: "sample", system: "x86_64-linux", python, cuda, nixpkgs: pin.rev, cudaCapabilitiesForPackageSet: false, nixpkgsKey: "sample" }],
    cat,
  );
  const missed = new Set(builds.map((b) => b.what));
  return { nccl: !missed.has("nccl"), nvshmem: !missed.has("nvshmem"), magma: !missed.has("magma"), triton: !missed.has("triton") };
}
