/**
 * The rules over the catalog's facts of machines: the Nix system feature an ISA's builds require (catalog/cpu-isas.ts),
 * and the compile slots of a machine by the memory one compile job needs (catalog/machines.ts GIB_PER_COMPILE_JOB,
 * `machines.gibPerCompileJob`), which the build's jobs rule (model/concurrency.ts) and `build --help` state; and the
 * machine facts' value as the rows give it, unparsed (`builtInMachines`).
 */
import { DRIVER_ROUTES, FLOX_CUDA, FLOX_MIN, FLOX_MIN_VERSION, GIB_PER_COMPILE_JOB, NIX_MIN, NIXGLHOST, NIXOS_DRIVER_LIB, STORE_FREE_FLOOR } from "../machines.ts";
import { DEFAULT_SELF_HOSTED_LABELS, GITHUB_HOSTED_RUNNERS, GITHUB_LIMITS, GITHUB_MATRIX_LIMIT, SELF_HOSTED_NEEDS } from "../ci-runners.ts";
import type { CpuIsa, MachineFacts } from "../schema.ts";

/**
 * The machine facts (catalog/machines.ts, catalog/ci-runners.ts) in the shape of `MachineFacts`, unparsed:
 * catalog/index.ts `machines` is this, parsed. For readers that must not load zod (the preflight checks, explain's
 * driver route, the evaluation gate); tests/catalog-tables.test.ts holds it equal to `machines`.
 */
export const builtInMachines: MachineFacts = {
  floxMinVersion: FLOX_MIN_VERSION,
  gibPerCompileJob: GIB_PER_COMPILE_JOB,
  nixMin: NIX_MIN,
  floxMin: FLOX_MIN,
  storeFreeFloor: STORE_FREE_FLOOR,
  nixosDriverLib: NIXOS_DRIVER_LIB,
  nixglhost: NIXGLHOST,
  floxCuda: FLOX_CUDA,
  driverRoutes: DRIVER_ROUTES,
  github: {
    matrixLimit: GITHUB_MATRIX_LIMIT,
    limits: GITHUB_LIMITS,
    hostedRunners: GITHUB_HOSTED_RUNNERS,
    selfHostedLabels: DEFAULT_SELF_HOSTED_LABELS,
    selfHostedNeeds: SELF_HOSTED_NEEDS,
  },
};

/**
 * Compile slots of a machine: max(1, min(`cpus`, floor(`memGiB` / the catalog's GiB per compile job))); unknown memory
 * (Infinity) does not limit.
 */
export function compileSlots(cpus: number, memGiB: number): number {
  return Math.max(1, Math.min(cpus, Math.floor(memGiB / GIB_PER_COMPILE_JOB)));
}

/**
 * The cores a build of `slots` slots may use when each of its compile processes needs `gibPerJob` GiB: fewer, in
 * proportion, when that is more than the catalog's GiB per compile job (flash-attn's ~9 GiB); else `slots`. At least 1.
 */
export function coresWithinMemory(slots: number, gibPerJob: number | undefined): number {
  return gibPerJob !== undefined && gibPerJob > GIB_PER_COMPILE_JOB ? Math.max(1, Math.floor((slots * GIB_PER_COMPILE_JOB) / gibPerJob)) : slots;
}

/** The slot rule in words with the catalog's figure: slotsFormula("2 CPUs", "23.0 GiB") = "min(2 CPUs, floor(23.0 GiB / 4 GiB))". */
export function slotsFormula(cpus: string, mem: string): string {
  return `min(${cpus}, floor(${mem} / ${GIB_PER_COMPILE_JOB} GiB))`;
}

/**
 * The Nix system feature a builder must declare to run an ISA's code, `gccarch-<arch>` (its `gccarch`):
 * on every derivation of the ISA's variants, beside the matrix's `policy.requiredSystemFeatures`.
 */
export function gccarchFeature(isa: Pick<CpuIsa, "gccarch">): string {
  return `gccarch-${isa.gccarch.arch}`;
}
