/**
 * The catalog's two values as the rows give them, unparsed: `builtInCatalog` (every table of generator/catalog/, the
 * shape of `Catalog`) and `builtInMachines` (catalog/machines.ts and catalog/ci-runners.ts, the shape of
 * `MachineFacts`). catalog/index.ts parses them with zod into `catalog` and `machines`, which everything that may load
 * zod reads; these are for the few readers that must not (start-up, explain's and detect's path from the project
 * cache, the build-time model), and tests/catalog-tables.test.ts holds them equal to the parsed values. Loading this
 * module loads every row (no zod).
 */
import type { Catalog, MachineFacts } from "../schema.ts";
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
import { DRIVER_ROUTES, FLOX_CUDA, FLOX_MIN, FLOX_MIN_VERSION, GIB_PER_COMPILE_JOB, NIX_MIN, NIXGLHOST, NIXOS_DRIVER_LIB, STORE_FREE_FLOOR } from "../machines.ts";
import { DEFAULT_SELF_HOSTED_LABELS, GITHUB_HOSTED_RUNNERS, GITHUB_LIMITS, GITHUB_MATRIX_LIMIT, SELF_HOSTED_NEEDS } from "../ci-runners.ts";

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

/** The machine facts, unparsed (catalog/index.ts `machines` is this, parsed). */
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
