/**
 * The model of what a selection builds besides its own packages, from the CUDA cache's job list
 * (generator/catalog/binary-cache.ts) and each pin's defaults (generator/catalog/torch.ts `defaultPython`,
 * `defaultCuda`). Pure. `build --dry-run` without `--probe-store`, `fleet`'s cost and `explain` use it; the real
 * answer comes from Nix (`build --dry-run --probe-store`, driver/store.ts dryRealise).
 *
 * Per CUDA variant (CPU-only variants need nothing from the CUDA cache):
 * - on a system the cache does not build for (aarch64-linux), or in the package-set scope (config.cudaCapabilities:
 *   a CUDA set no cache holds), the CUDA closure (magma, nccl, NVSHMEM, …: the libraries compiled for capabilities,
 *   one per nixpkgs instance) is built; on such a system triton too;
 * - on a cached system: magma when the CUDA set is not the pin's default `cudaPackages` (the cache builds magma with
 *   the default set only; in the package-set scope it is in the closure already), and triton when the Python or the
 *   CUDA set is not the pin's default (the cache builds `python3Packages.triton` with both defaults only; triton
 *   compiles no code for capabilities, so the scope does not change it);
 * - a pin whose default is not known counts as off the default (said in the reason).
 * A derivation shared by several variants (same pin, system, CUDA set, and Python for triton) is counted once.
 */
import { CUDA_CACHE, REBUILD_SECONDS } from "../catalog/binary-cache.ts";
import type { NixpkgsPin, System } from "../schema.ts";
import { DEFAULT_CUDA_CLOSURE_SECONDS } from "./plan.ts";

/** What the model needs of a variant. */
export interface CacheModelInput {
  name: string;
  system: System;
  python: string;
  cuda: string | null;
  /** nixpkgs revision of the variant's pin. */
  nixpkgs: string;
  cudaCapabilitiesForPackageSet: boolean;
  /** generator/expand.ts nixpkgsInstanceKey (one CUDA closure per key in the package-set scope). */
  nixpkgsKey: string;
}

/** One derivation (or closure) the model says is built, counted once for the variants that need it. */
export interface ModelledBuild {
  /** Identity: what is built and for which (pin, system, CUDA set[, Python]). */
  key: string;
  what: "magma" | "triton" | "cuda-closure";
  /** Default duration in seconds and its source. */
  seconds: number;
  source: string;
  /** Why the cache cannot serve it. */
  why: string;
  /** Variants that need it. */
  variants: string[];
}

/**
 * The modelled extra builds of a selection, and per variant the reasons it is off the cache.
 * @param pins the catalog's pins (built-in and local), looked up by revision
 * @returns builds (each counted once) and reasons per variant name (empty for a variant the cache serves fully)
 */
export function modelCacheMisses(
  vs: readonly CacheModelInput[],
  pins: readonly NixpkgsPin[],
): { builds: ModelledBuild[]; reasons: Map<string, string[]> } {
  const builds = new Map<string, ModelledBuild>();
  const reasons = new Map<string, string[]>();
  const need = (v: CacheModelInput, key: string, what: ModelledBuild["what"], why: string) => {
    const src = what === "cuda-closure" ? DEFAULT_CUDA_CLOSURE_SECONDS : REBUILD_SECONDS[what];
    const b = builds.get(key) ?? { key, what, seconds: src.seconds, source: src.source, why, variants: [] };
    b.variants.push(v.name);
    builds.set(key, b);
    reasons.get(v.name)!.push(why);
  };
  for (const v of vs) {
    reasons.set(v.name, []);
    if (v.cuda === null) continue;
    const pin = pins.find((p) => p.rev === v.nixpkgs);
    const at = v.nixpkgs.slice(0, 7);
    const set = `cudaPackages_${v.cuda.replace(".", "_")}`;
    const tritonKey = `triton|${v.nixpkgs}|${v.system}|${v.python}|${v.cuda}`;
    const cachedSystem = CUDA_CACHE.systems.includes(v.system);
    if (!cachedSystem || v.cudaCapabilitiesForPackageSet)
      need(v, `cuda-closure|${v.nixpkgsKey}`, "cuda-closure", !cachedSystem
        ? `${CUDA_CACHE.name} builds CUDA packages for ${CUDA_CACHE.systems.join(", ")} only, not ${v.system}: the CUDA set (magma, nccl, NVSHMEM, …) is built`
        : `package-set scope: config.cudaCapabilities makes a CUDA set (magma, nccl, NVSHMEM, …) no cache holds`);
    if (!cachedSystem) {
      need(v, tritonKey, "triton", `triton: not cached for ${v.system} either`);
      continue;
    }
    const defCuda = pin?.defaultCuda ?? null;
    const defPy = pin?.defaultPython ?? null;
    const offCuda = defCuda !== v.cuda;
    const offPy = defPy !== v.python;
    const cudaWhy = defCuda === null ? `the default cudaPackages at ${at} is not known` : `${set} is not the default cudaPackages at ${at} (CUDA ${defCuda})`;
    // (In the package-set scope magma is part of the closure above.)
    if (offCuda && !v.cudaCapabilitiesForPackageSet)
      need(v, `magma|${v.nixpkgs}|${v.system}|${v.cuda}`, "magma", `magma: ${cudaWhy}; ${CUDA_CACHE.name} builds magma with the default set only`);
    if (offCuda || offPy) {
      const pyWhy = defPy === null ? `the default python3 at ${at} is not known` : `python${v.python.replace(".", "")}Packages is not the default Python at ${at} (${defPy})`;
      need(v, tritonKey, "triton", `triton: ${offPy ? pyWhy : cudaWhy}; ${CUDA_CACHE.name} builds python3Packages.triton for the default Python and CUDA set only`);
    }
  }
  return { builds: [...builds.values()], reasons };
}
