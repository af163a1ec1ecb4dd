/**
 * The one "runs on" rule: does code compiled for a capability run on a device, which CUDA versions a GPU driver runs,
 * which catalog ISAs a CPU runs, and whether a variant runs on a host (its GPU, or its CPU alone). Pure functions;
 * expand (binary compatibility), detect (recommend), fleet (cover) and verify all decide with these.
 *
 * Sources: CUDA C++ Programming Guide, "Binary Compatibility" (a cubin for X.y runs on X.z, z ≥ y, never across a
 * major; torch's own kernels ship no PTX, so nothing else runs); NVIDIA CUDA Toolkit release notes, Table 3 (minimum
 * Linux driver per toolkit: generator/catalog/cuda.ts); NVIDIA "CUDA Compatibility", minor-version compatibility (a
 * newer minor of a major runs on a driver ≥ the major's minimum, without JIT of its PTX and without the APIs that need
 * its driver: catalog/cuda.ts CUDA_MINOR_VERSION_COMPAT); generator/catalog/cpu-isas.ts (`requiredCpuFeatures`).
 */
import { capabilityRunsOn } from "../catalog/lib/capability.ts";
import { compareVersions } from "../versions.ts";
import type { Variant } from "./schema.ts";
import type { Catalog, CpuIsa, CudaMajor, CudaToolkit } from "../catalog/schema.ts";
import { nixpkgsCudaFacts } from "../catalog/lib/cuda.ts";

export { capabilityRunsOn };

/** True when code compiled for one of `caps` runs on a GPU of capability `cap`. */
export function capabilitiesRunOn(caps: readonly string[], cap: string): boolean {
  return caps.some((c) => capabilityRunsOn(c, cap));
}

/**
 * The CUDA toolkits a Linux GPU driver runs with full support: those whose `minDriverLinux` is ≤ the driver, compared
 * numerically per component. Sorted newest CUDA first. What runs on an older driver of the same major through CUDA
 * minor-version compatibility is `driverSupport`'s "minorCompat".
 */
export function cudaForDriver(driver: string, cuda: readonly CudaToolkit[]): CudaToolkit[] {
  return cuda.filter((c) => compareVersions(c.minDriverLinux, driver) <= 0).sort((a, b) => compareVersions(b.version, a.version));
}

/** The major family of CUDA `version` ("13.2" → the row of "13"), or undefined when the catalog has none. */
export function cudaMajorOf(version: string, majors: readonly CudaMajor[]): CudaMajor | undefined {
  return majors.find((m) => m.major === version.split(".")[0]);
}

/**
 * How a Linux GPU driver runs CUDA `toolkit`: "full" when it is ≥ the toolkit's own minimum (Table 3), "minorCompat"
 * when it is below that but ≥ the minimum of the toolkit's major family (CUDA minor-version compatibility: no JIT of the
 * toolkit's PTX, no APIs that need its driver), null when it is older than both.
 */
export function driverSupport(driver: string, toolkit: CudaToolkit, majors: readonly CudaMajor[]): "full" | "minorCompat" | null {
  if (compareVersions(toolkit.minDriverLinux, driver) <= 0) return "full";
  const m = cudaMajorOf(toolkit.version, majors);
  return m && compareVersions(m.minDriverLinux, driver) <= 0 ? "minorCompat" : null;
}

/** What `needsPtxJit` reads of the catalog: the CUDA rows and, for a pin's own defaults, the pins. */
type JitCatalog = Pick<Catalog, "cuda"> & Partial<Pick<Catalog, "nixpkgs" | "nixpkgsCapabilities">>;

/**
 * Would variant `v` on a GPU of capability `cap` need the driver to JIT-compile PTX? Its device code comes from torch
 * and the packages on it (exactly `cudaCapabilities`, SASS only: no `+PTX`, catalog/device-code.ts) and from the
 * statically linked NCCL, MAGMA and NVSHMEM, compiled for the whole package set's capabilities (`cudaCapabilities`
 * in the package-set scope, else nixpkgs' defaults for the CUDA set). Both carry SASS per capability; NCCL's
 * forward-compat PTX and MAGMA's PTX sit beside SASS of the same capability, and PTX of capability X only loads on X or
 * newer, so the driver JIT-compiles nothing when some SASS of each origin runs on `cap` (same major, minor ≤). True
 * (not claimed) when the CUDA version or its defaults are unknown. Code compiled at run time (a user's extension, NVRTC,
 * Triton) is not the variant's and is not judged here.
 */
export function needsPtxJit(v: Pick<Variant, "cuda" | "cudaCapabilities" | "cudaCapabilitiesForPackageSet" | "nixpkgs">, cap: string, catalog: JitCatalog): boolean {
  if (!capabilitiesRunOn(v.cudaCapabilities, cap)) return true;
  if (v.cudaCapabilitiesForPackageSet) return false;
  const toolkit = catalog.cuda.find((c) => c.version === v.cuda);
  if (!toolkit) return true;
  const pin = catalog.nixpkgs?.find((n) => n.rev === v.nixpkgs) ?? null;
  const defaults = catalog.nixpkgsCapabilities ? nixpkgsCudaFacts({ nixpkgsCapabilities: catalog.nixpkgsCapabilities }, pin, toolkit).defaults : toolkit.nixpkgsDefaultCapabilities;
  return !capabilitiesRunOn(defaults, cap);
}

/**
 * How variant `v`'s CUDA runs on a GPU (`gpu`: capability and driver): "full" (the driver is ≥ its CUDA's own
 * minimum), "minorCompat" (older, but ≥ its major's minimum, and the variant needs no PTX JIT on that GPU), or null.
 * Without the catalog's major table (`cudaMajors`) only "full" is known.
 */
export function variantDriverSupport(
  v: Pick<Variant, "cuda" | "cudaCapabilities" | "cudaCapabilitiesForPackageSet" | "nixpkgs">,
  gpu: { capability: string; driver: string },
  catalog: JitCatalog & Partial<Pick<Catalog, "cudaMajors">>,
): "full" | "minorCompat" | null {
  const toolkit = v.cuda === null ? undefined : catalog.cuda.find((c) => c.version === v.cuda);
  if (!toolkit) return null;
  const s = driverSupport(gpu.driver, toolkit, catalog.cudaMajors ?? []);
  if (s === "minorCompat" && needsPtxJit(v, gpu.capability, catalog)) return null;
  return s;
}

/** What the rule needs of a host (detect's HostInfo has it). */
interface HostFacts {
  system: string;
  cpu: { features: readonly string[] };
}

/** Runnable catalog ISAs for the host's CPU, widest first, and for the others which features are missing. */
export function isaFit(host: HostFacts, catalog: Pick<Catalog, "isas">) {
  const have = new Set(host.cpu.features);
  const all = catalog.isas.filter((i) => i.system === host.system).sort((a, b) => b.rank - a.rank);
  const runnable = all.filter((i) => i.requiredCpuFeatures.every((f) => have.has(f)));
  const missing = new Map<string, string[]>(all.map((i) => [i.key, i.requiredCpuFeatures.filter((f) => !have.has(f))] as [string, string[]]));
  return { all, runnable, missing, byKey: new Map(all.map((i) => [i.key, i] as [string, CpuIsa])) };
}

/**
 * Does variant `v` run on `host`, for one of its GPUs (`gpu`: compute capability and GPU driver) or, with `gpu` null,
 * on its CPU alone (a CPU-only variant)? The variant must be for the host's system and an ISA its CPU runs; for a
 * GPU it must be built for that GPU's SM (one SM per name), carry code that runs on its capability, and need a CUDA
 * version the GPU driver runs: with full support, or through minor-version compatibility (`variantDriverSupport`).
 */
export function variantRunsOn(
  v: Pick<Variant, "system" | "isa" | "cuda" | "sm" | "cudaCapabilities" | "cudaCapabilitiesForPackageSet" | "nixpkgs">,
  host: HostFacts,
  gpu: { capability: string; driver: string } | null,
  catalog: Pick<Catalog, "isas" | "cuda"> & Partial<Pick<Catalog, "cudaMajors" | "nixpkgs" | "nixpkgsCapabilities">>,
): boolean {
  if (v.system !== host.system) return false;
  if (!isaFit(host, catalog).runnable.some((i) => i.key === v.isa)) return false;
  if (gpu === null) return v.cuda === null;
  if (v.cuda === null || v.sm !== gpu.capability.replace(".", "")) return false;
  if (!capabilitiesRunOn(v.cudaCapabilities, gpu.capability)) return false;
  return variantDriverSupport(v, gpu, catalog) !== null;
}
