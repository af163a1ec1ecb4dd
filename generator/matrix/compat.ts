/**
 * The one "runs on" rule: does code compiled for a capability run on a device, which CUDA versions a GPU driver runs,
 * which catalog ISAs a CPU runs, and whether a variant runs on a host (its GPU, or its CPU alone). Pure functions;
 * expand (binary compatibility), detect (recommend), fleet (cover) and verify all decide with these.
 *
 * Sources: CUDA C++ Programming Guide, "Binary Compatibility" (a cubin for X.y runs on X.z, z ≥ y, never across a
 * major; no PTX is shipped, so nothing else runs); NVIDIA CUDA Toolkit release notes, Table 3 (minimum Linux driver
 * per toolkit: generator/catalog/cuda.ts); generator/catalog/cpu-isas.ts (`requiredCpuFeatures` of each ISA).
 */
import { capabilityRunsOn } from "./capability.ts";
import { compareVersions } from "../versions.ts";
import type { Variant } from "./schema.ts";
import type { Catalog, CpuIsa, CudaToolkit } from "../catalog/schema.ts";

export { capabilityRunsOn };

/** True when code compiled for one of `caps` runs on a GPU of capability `cap`. */
export function capabilitiesRunOn(caps: readonly string[], cap: string): boolean {
  return caps.some((c) => capabilityRunsOn(c, cap));
}

/**
 * The CUDA toolkits a Linux GPU driver can run: those whose `minDriverLinux` is ≤ the driver, compared numerically per
 * component. Sorted newest CUDA first. CUDA minor-version compatibility (a newer 12.x on an older 12.x driver, with
 * restrictions) is deliberately not relied upon.
 */
export function cudaForDriver(driver: string, cuda: readonly CudaToolkit[]): CudaToolkit[] {
  return cuda.filter((c) => compareVersions(c.minDriverLinux, driver) <= 0).sort((a, b) => compareVersions(b.version, a.version));
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
 * version the GPU driver runs.
 */
export function variantRunsOn(
  v: Pick<Variant, "system" | "isa" | "cuda" | "sm" | "cudaCapabilities">,
  host: HostFacts,
  gpu: { capability: string; driver: string } | null,
  catalog: Pick<Catalog, "isas" | "cuda">,
): boolean {
  if (v.system !== host.system) return false;
  if (!isaFit(host, catalog).runnable.some((i) => i.key === v.isa)) return false;
  if (gpu === null) return v.cuda === null;
  if (v.cuda === null || v.sm !== gpu.capability.replace(".", "")) return false;
  if (!capabilitiesRunOn(v.cudaCapabilities, gpu.capability)) return false;
  return cudaForDriver(gpu.driver, catalog.cuda).some((c) => c.version === v.cuda);
}
