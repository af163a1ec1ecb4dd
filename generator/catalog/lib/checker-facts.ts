/**
 * The facts the promise comparison judges with (compare.ts, origins.ts): the catalog's tables, reduced to the fields
 * the comparison reads. Code only: the Nix checks' bundle (pkgs/verify-compare.mjs) imports this module, so it must
 * hold no table. Where the facts come from:
 * - `verify` and the tests: generator/catalog/lib/checker.ts `catalogCheckerFacts()`, from generator/catalog/;
 * - the Nix checks (pkgs/checks.nix): pkgs/verify-facts.json, the same object as JSON, which `generate` writes
 *   (generator/generate/render/checker.ts) and `generate --check` compares.
 * A catalog edit thus changes that data file, never the bundle; a `source` string the comparison never prints is left
 * out, so fixing its wording changes neither.
 */
import type { ArchListFacts, ReleaseBuildFacts } from "./cuda-build.ts";
import type { BundledDeviceCode } from "../device-code.ts";

/** The version of the facts' shape; the checker refuses any other (a bundle and a facts file of different trees). */
export const CHECKER_FACTS_FORMAT = 2;

/** A package built on torch, as the comparison reads it (catalog/packages.ts `PackageOnTorch`). */
export interface CheckerPackage {
  /** The package part of variant names ("torchvision"). */
  name: string;
  /** Name used in prose ("torchvision"). */
  label: string;
  /** The probe's per-package GPU checks: key of its `gpu` results and the line's words. */
  gpuChecks: { key: string; label: string }[];
  /** Its releases' CUDA range and device targets (generator/catalog/lib/cuda-build.ts). */
  releases: ReleaseBuildFacts[];
}

/**
 * A third-party library nixpkgs links into torch statically: catalog/device-code.ts `BundledDeviceCode` without its
 * sourcing (the checker prints neither). A type-only import: it is erased from the bundle, which holds no catalog code.
 */
export type CheckerBundled = Omit<BundledDeviceCode, "source" | "inferred">;

/** Everything the comparison reads from the catalog. JSON-safe: pkgs/verify-facts.json is this object. */
export interface CheckerFacts {
  format: typeof CHECKER_FACTS_FORMAT;
  /** The packages built on torch, in table order. */
  packagesOnTorch: CheckerPackage[];
  /** What each torch minor's cpp_extension accepts in TORCH_CUDA_ARCH_LIST (catalog/torch-arch-list.ts). */
  torchArchLists: ArchListFacts[];
  /** The libraries nixpkgs links into torch statically (catalog/device-code.ts `bundledDeviceCode`). */
  bundledDeviceCode: CheckerBundled[];
  /** PyTorch's arch-specific SASS beyond TORCH_CUDA_ARCH_LIST (the catalog's `extraSass`, catalog/device-code.ts). */
  extraSass: { when: string; adds: string; minCuda: string | null }[];
  /** Heads of code the compiler adds to any cubin (the catalog's `compilerHelperNames`, catalog/device-code.ts), as RegExp sources. */
  compilerHelperNames: string[];
  /** Own device code by directory or file name (catalog/lib/device-code.ts `ownDeviceCode`). */
  ownDeviceCode: { origin: string; directory: string; file?: string; names: string[] }[];
  /** nixpkgs' default capabilities per CUDA version ("12.8" → ["7.5", …]; catalog/cuda.ts, from the catalog's table). */
  nixpkgsDefaultCapabilities: Record<string, string[]>;
  /**
   * A pin's own default capabilities, read at that revision (NixpkgsPin.nixpkgsDefaultCapabilities; `pin add`): rev →
   * CUDA version → capabilities. Where a pin has them for the variant's CUDA they replace `nixpkgsDefaultCapabilities`.
   */
  pinDefaultCapabilities: Record<string, Record<string, string[]>>;
  /** Revisions of the pins whose bundled-library links the catalog read (NixpkgsPin.bundledLinksKnown): a `linkedAt` list decides only for these. */
  knownPins: string[];
  /** Extras whose device code the catalog judges (catalog/extras.ts `extraPromise(attr).judged`). */
  judgedExtras: string[];
}

const ARRAYS = ["packagesOnTorch", "torchArchLists", "bundledDeviceCode", "extraSass", "compilerHelperNames", "ownDeviceCode", "knownPins", "judgedExtras"] as const;

/**
 * Read checker facts from JSON text (pkgs/verify-facts.json).
 * @throws Error when the text is not JSON, its `format` is not CHECKER_FACTS_FORMAT, or a table is missing.
 */
export function parseCheckerFacts(text: string): CheckerFacts {
  const f = JSON.parse(text) as Partial<CheckerFacts> | null;
  if (f === null || typeof f !== "object") throw new Error("checker facts: not a JSON object");
  if (f.format !== CHECKER_FACTS_FORMAT)
    throw new Error(`checker facts: format ${JSON.stringify(f.format)}, this checker reads format ${CHECKER_FACTS_FORMAT} (regenerate with \`npm run generate\`)`);
  for (const k of ARRAYS) if (!Array.isArray(f[k])) throw new Error(`checker facts: "${k}" is not a list`);
  for (const k of ["nixpkgsDefaultCapabilities", "pinDefaultCapabilities"] as const)
    if (typeof f[k] !== "object" || f[k] === null || Array.isArray(f[k])) throw new Error(`checker facts: "${k}" is not an object`);
  return f as CheckerFacts;
}
