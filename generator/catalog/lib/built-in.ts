/**
 * The catalog's value as the rows give it, unparsed: `builtInCatalog`, every table of generator/catalog/ in the shape
 * of `Catalog` (the machine facts' value, `builtInMachines`, is catalog/lib/machines.ts's). catalog/index.ts parses it
 * with zod into `catalog`, which everything that may load zod reads; this is for the few readers that must not (the
 * preflight checks, the build-time model on detect's path from the project cache), and tests/catalog-tables.test.ts
 * holds it equal to the parsed value. Loading this module loads every row (no zod).
 */
import type { Catalog } from "../schema.ts";
import { gpus, NIXPKGS_CAPABILITIES } from "../gpus.ts";
import { cuda, CUDA_MINOR_VERSION_COMPAT, GLIBC_242_CUDA_HEADERS } from "../cuda.ts";
import { KNOWN_VULNERABLE } from "../advisories.ts";
import { ARM_CORES, ARM_HOST_HINTS, isas } from "../cpu-isas.ts";
import { python } from "../python.ts";
import { torch, nixpkgs } from "../torch.ts";
import { packagesOnTorch } from "../packages.ts";
import { torchArchLists } from "../torch-arch-list.ts";
import { EXTRAS } from "../extras.ts";
import { bundledDeviceCode, COMPILER_HELPER_NAMES, EXTRA_SASS } from "../device-code.ts";
import { BUILD_SECONDS, CUDA_CACHE, PUBLIC_CUDA_CACHES, REBUILD_SECONDS } from "../binary-cache.ts";
import { DEVICE_CODE_BYTES } from "../device-code-size.ts";

/** The built-in catalog's tables, unparsed (catalog/index.ts `catalog` is this, parsed and its pairings checked). */
export const builtInCatalog: Catalog = {
  gpus,
  cuda,
  isas,
  python,
  torch,
  nixpkgs,
  packagesOnTorch,
  extras: EXTRAS,
  torchArchLists,
  bundledDeviceCode,
  cudaCache: CUDA_CACHE,
  deviceCodeBytes: DEVICE_CODE_BYTES,
  nixpkgsCapabilities: NIXPKGS_CAPABILITIES,
  glibcCudaHeaders: GLIBC_242_CUDA_HEADERS,
  cudaMajors: CUDA_MINOR_VERSION_COMPAT,
  knownVulnerable: KNOWN_VULNERABLE,
  publicCudaCaches: PUBLIC_CUDA_CACHES,
  rebuildSeconds: REBUILD_SECONDS,
  buildSeconds: BUILD_SECONDS,
  extraSass: EXTRA_SASS,
  compilerHelperNames: COMPILER_HELPER_NAMES,
  armCores: ARM_CORES,
  armHostHints: ARM_HOST_HINTS,
};
