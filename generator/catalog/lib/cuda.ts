/**
 * The rules over the catalog's CUDA facts: nixpkgs' capability table (catalog/gpus.ts NIXPKGS_CAPABILITIES, as
 * `Catalog.nixpkgsCapabilities`: which capabilities nixpkgs allows with a CUDA version, the Jetson ones, its default
 * list) and the CUDA toolkits (catalog/cuda.ts: glibc 2.42 against CUDA's headers, nixpkgs' defaults at a pin).
 */
import { compareVersions } from "../../versions.ts";
import type { Catalog, CudaHeaderFix, CudaToolkit, NixpkgsCapabilityInfo, NixpkgsCapabilityTable, NixpkgsPin } from "../schema.ts";

/** The capability table a rule reads: the catalog's (Catalog.nixpkgsCapabilities) or one given. */
type Table = Pick<NixpkgsCapabilityTable, "entries">;

/** nixpkgs' entry for capability `c` ("12.1") in `table`, or undefined when the table lacks it ("8.8", "5.3"). */
export function nixpkgsCapability(table: Table, c: string): NixpkgsCapabilityInfo | undefined {
  return table.entries.find((x) => x.capability === c);
}

/**
 * Whether nixpkgs allows capability `c` with CUDA `cuda` (MAJOR.MINOR) by `table`: its entry exists and
 * min ≤ cuda ≤ max (backendStdenv's "too old" / "too new" assertions).
 */
export function nixpkgsAllows(table: Table, c: string, cuda: string): boolean {
  const info = nixpkgsCapability(table, c);
  if (!info) return false;
  return compareVersions(info.minCuda, cuda) <= 0 && (info.maxCuda === null || compareVersions(cuda, info.maxCuda) <= 0);
}

/**
 * The compute capabilities `table` marks `isJetson` (Jetson Xavier 7.2, Orin 8.7, Thor 10.1 / 11.0), without the
 * `a`/`f` forms: never in the default list, built only for aarch64-linux, and never in one CUDA set with a non-Jetson
 * capability (the rule `jetsonRule` of the table names; catalog/cuda.ts says why the stricter era's rule is kept).
 */
export function jetsonCapabilities(table: Table): string[] {
  return table.entries.filter((c) => c.isJetson && !c.isArchitectureSpecific && !c.isFamilySpecific).map((c) => c.capability);
}

/**
 * nixpkgs' default `cudaCapabilities` for CUDA `cuda`, by its rule `_cudaCapabilityIsDefault` (_cuda/lib/cuda.nix at
 * 1da571d) on `table`: allowed with that CUDA, not Jetson, not `a`/`f`, and not past its
 * `dontDefaultAfterCudaMajorMinorVersion` (dontDefaultAfter ≥ cuda). Ascending, as nixpkgs sorts them.
 */
export function nixpkgsDefaultCapabilitiesFor(table: Table, cuda: string): string[] {
  return table.entries.filter(
    (c) =>
      nixpkgsAllows(table, c.capability, cuda) &&
      !c.isJetson &&
      !c.isArchitectureSpecific &&
      !c.isFamilySpecific &&
      (c.dontDefaultAfter === null || compareVersions(c.dontDefaultAfter, cuda) >= 0),
  )
    .map((c) => c.capability)
    .sort(compareVersions);
}

/**
 * The note for CUDA `cuda` ("12.8") at a nixpkgs revision of date `date`: why nvcc may fail there against glibc 2.42
 * (the catalog's glibcCudaHeaders: GLIBC_242_CUDA_HEADERS), naming the fixes the revision lacks; null when the revision predates glibc 2.42, has every
 * fix for that CUDA, or its date is unknown.
 */
export function glibcCudaHeaderNote(cat: Pick<Catalog, "glibcCudaHeaders">, rev: string, date: string | null, cuda: string): string | null {
  const headers = cat.glibcCudaHeaders;
  if (date === null || date < headers.since) return null;
  const inRange = (f: CudaHeaderFix) => compareVersions(cuda, f.cuda.min) >= 0 && (f.cuda.below === null || compareVersions(cuda, f.cuda.below) < 0);
  const fixes = headers.fixes.filter(inRange);
  const missing = fixes.filter((f) => date < f.merged);
  if (!missing.length) return null;
  const had = fixes.filter((f) => date >= f.merged);
  return (
    `nixpkgs ${rev.slice(0, 7)} (${date}) has glibc 2.42, whose rsqrt/sinpi/cospi declarations clash with CUDA ${cuda}'s math headers ` +
    `("exception specification is incompatible"; NixOS/nixpkgs#483507)` +
    (had.length ? `; it has ${had.map((f) => `${f.pr} (${f.what})`).join(", ")}` : "") +
    ` but not ${missing.map((f) => `${f.pr} (${f.what}, ${f.merged})`).join(", ")}: nvcc may fail on sources that include those headers. ` +
    "This belongs to the revision, not to the package; a later pin has the fix."
  );
}

/** What nixpkgs does with capabilities at one pin and CUDA version: the facts `cudaScopeFor` (matrix/expand.ts) decides by. */
export interface NixpkgsCudaFacts {
  /** CUDA MAJOR.MINOR. */
  cuda: string;
  /** nixpkgs' default cudaCapabilities of that CUDA set, ascending. */
  defaults: readonly string[];
  /** The Jetson capabilities of nixpkgs' capability table (never default; never mixed with others). */
  jetson: readonly string[];
  /** Where `defaults` were read: "nixpkgs REV (pin add's evaluation)" or the catalog's table and its revision. */
  readAt: string;
}

/**
 * nixpkgs' default capabilities and Jetson capabilities for CUDA `cuda` at `pin`: the pin's own defaults where they
 * were read at that revision (NixpkgsPin.nixpkgsDefaultCapabilities, written by `pin add`), else the catalog's, computed
 * from its capability table (Catalog.nixpkgsCapabilities, read at one revision: CudaToolkit.nixpkgsDefaultCapabilities).
 * `pin` null: the catalog's. Pure.
 */
export function nixpkgsCudaFacts(
  cat: Pick<Catalog, "nixpkgsCapabilities">,
  pin: Pick<NixpkgsPin, "rev" | "nixpkgsDefaultCapabilities"> | null,
  cuda: Pick<CudaToolkit, "version" | "nixpkgsDefaultCapabilities">,
): NixpkgsCudaFacts {
  const jetson = jetsonCapabilities(cat.nixpkgsCapabilities);
  const own = pin?.nixpkgsDefaultCapabilities?.[cuda.version];
  if (pin && own) return { cuda: cuda.version, defaults: [...own].sort(compareVersions), jetson, readAt: `nixpkgs ${pin.rev.slice(0, 7)} (read at the pin)` };
  return {
    cuda: cuda.version,
    defaults: cuda.nixpkgsDefaultCapabilities,
    jetson,
    readAt: `the catalog's table (nixpkgs ${cat.nixpkgsCapabilities.rev.slice(0, 7)}, catalog/gpus.ts)`,
  };
}
