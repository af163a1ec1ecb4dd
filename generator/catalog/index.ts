/**
 * The catalog: every fact the generator knows, each with a `source`, every table under one schema (`CatalogSchema`,
 * generator/catalog/schema.ts), validated at load; a user's local-catalog.json extends it (catalog/local.ts). Code
 * reads the tables through a `Catalog` value (this `catalog`, or the one with the local additions), never through the
 * table files' exports; the facts of the machines and CI runners are the one second value, `machines`
 * (MachineFactsSchema). The exceptions (start-up-critical readers that must not load zod) are listed, with why, in
 * tests/catalog-tables.test.ts, which also holds that every exported table is in one of the two values.
 * @throws Error (zod) at import time when a catalog file breaks its schema.
 */
import { CatalogSchema, MachineFactsSchema, type Catalog, type MachineFacts, type OnTorchRelease } from "./schema.ts";
import { gpus, NIXPKGS_CAPABILITIES } from "./gpus.ts";
import { cuda, CUDA_MINOR_VERSION_COMPAT, GLIBC_242_CUDA_HEADERS } from "./cuda.ts";
import { KNOWN_VULNERABLE } from "./advisories.ts";
import { ARM_CORES, ARM_HOST_HINTS, isas } from "./cpu-isas.ts";
import { python } from "./python.ts";
import { torch, nixpkgs } from "./torch.ts";
import { packageOnTorch, releaseOf, releaseServes } from "./lib/packages.ts";
import { packagesOnTorch } from "./packages.ts";
import { torchArchLists } from "./torch-arch-list.ts";
import { EXTRAS } from "./extras.ts";
import { bundledDeviceCode, COMPILER_HELPER_NAMES, EXTRA_SASS } from "./device-code.ts";
import { CUDA_CACHE, PUBLIC_CUDA_CACHES, REBUILD_SECONDS } from "./binary-cache.ts";
import { DEVICE_CODE_BYTES } from "./device-code-size.ts";
import { DRIVER_ROUTES, FLOX_CUDA, FLOX_MIN, FLOX_MIN_VERSION, GIB_PER_COMPILE_JOB, NIX_MIN, NIXGLHOST, NIXOS_DRIVER_LIB, STORE_FREE_FLOOR } from "./machines.ts";
import { DEFAULT_SELF_HOSTED_LABELS, GITHUB_HOSTED_RUNNERS, GITHUB_LIMITS, GITHUB_MATRIX_LIMIT, SELF_HOSTED_NEEDS } from "./ci-runners.ts";

/**
 * Checks the pairings of a parsed catalog, through the generic table of packages built on torch: every PyTorch
 * release names a torchaudio release of the table that serves it (`releaseServes`), and so does every pin.
 * @throws Error naming the release or pin and the torchaudio's served range.
 */
export function checkPairings(cat: Catalog): Catalog {
  const audio = packageOnTorch(cat, "torchaudio");
  const served = (ta: string, t: string, where: string) => {
    const rel: OnTorchRelease | undefined = releaseOf(audio, ta);
    if (!rel) throw new Error(`catalog: ${where} names torchaudio ${ta}, which is not a release of the torchaudio row of the package table (catalog/packages.ts)`);
    if (!releaseServes(rel, t))
      throw new Error(
        `catalog: ${where} pairs torchaudio ${ta} with torch ${t}, but torchaudio ${ta} serves torch >= ${rel.servesTorch.min}` +
          (rel.servesTorch.below ? ` and < ${rel.servesTorch.below}` : ""),
      );
  };
  for (const t of cat.torch) served(t.torchaudio, t.version, `PyTorch ${t.version}`);
  for (const p of cat.nixpkgs) served(p.torchaudio, p.torch, `nixpkgs ${p.rev.slice(0, 7)}`);
  return cat;
}

/** The built-in catalog: every table of generator/catalog/, parsed by CatalogSchema and its pairings checked. */
export const catalog: Catalog = checkPairings(
  CatalogSchema.parse({
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
    extraSass: EXTRA_SASS,
    compilerHelperNames: COMPILER_HELPER_NAMES,
    armCores: ARM_CORES,
    armHostHints: ARM_HOST_HINTS,
  }),
);

/**
 * The catalog's second value: the machines and tools the project runs on and the CI runners its workflows are written
 * for (catalog/machines.ts, catalog/ci-runners.ts), parsed by MachineFactsSchema. No local-catalog.json extends it.
 */
export const machines: MachineFacts = MachineFactsSchema.parse({
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
});
