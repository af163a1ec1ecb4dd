/**
 * The rules over the catalog's facts of machines: the Nix system feature an ISA's builds require (catalog/cpu-isas.ts).
 */
import type { CpuIsa } from "../schema.ts";

/**
 * The Nix system feature a builder must declare to run an ISA's code, `gccarch-<arch>` (its `gccarch`):
 * on every derivation of the ISA's variants, beside matrix.ts's `requiredSystemFeatures`.
 */
export function gccarchFeature(isa: Pick<CpuIsa, "gccarch">): string {
  return `gccarch-${isa.gccarch.arch}`;
}
