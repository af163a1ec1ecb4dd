/**
 * What the CUDA binary cache holds, as data: which derivations of a variant's closure a user can substitute and
 * which their machine builds. `build --dry-run` (without `--ask-store`), `fleet`'s cost and `explain` use it
 * (generator/model/cache-model.ts); `build --dry-run --ask-store` asks Nix itself instead, and stays the authority.
 *
 * nixpkgs' unfree CUDA packages are not built by cache.nixos.org; cache.nixos-cuda.org serves the store of the
 * NixOS-CUDA Hydra (nixos-cuda/infra c2b55a1 hosts/hydra/cache.nix: harmonia over the Hydra host's /nix/store, GC
 * off), so it holds every path that Hydra built: each job and its whole build closure. The jobs are those of
 * nixos-cuda/hydra-jobsets `cuda-packages.nix` (1f6df3c; README 097ac6b: "All `cudaSupport`-sensitive nixpkgs packages
 * (~2k packages) … we leverage nixpkgs' CI evaluation logic"): nixpkgs is evaluated twice through its CI entry point
 * (`import "${nixpkgs}/ci"`, `ci.eval`), with `cudaSupport = false` and `true` (both `allowUnfree`, `allowAliases =
 * false`, no `cudaCapabilities`: nixpkgs' defaults), and every attribute path whose outputs differ is a job
 * (`release-lib.mapTestOn`), on `supportedSystems ? [ "x86_64-linux" # "aarch64-linux" ]`. CI evaluation enumerates
 * the attribute paths pkgs/top-level/release.nix reaches: top-level derivations and sets marked
 * `recurseForDerivations` (all-packages.nix `recurseIntoAttrs`), so:
 * - Python: the `pythonXYZPackages` sets the pin recurses into (`NixpkgsPin.recursedPython`: in 2026 python313Packages
 *   and python314Packages; `python3Packages` is `dontRecurseIntoAttrs`). Their torch and triton take
 *   `cudaSupport ? config.cudaSupport`, so they are jobs, and with them everything torch's build needs.
 * - CUDA: `cudaPackages = recurseIntoAttrs cudaPackages_12` (the default set) is enumerated, but its members do not
 *   read `config.cudaSupport` (cuda-modules nccl.nix has no such input), so they are not jobs; the default set's
 *   NCCL, NVSHMEM and magma-cuda-static are cached because torch's jobs build with them. The versioned sets
 *   (`cudaPackages_12_8`, `_13_0`, … from pkgs/top-level/cuda-packages.nix, a plain `inherit`) are never enumerated:
 *   their source-built members are cached only where some job happens to build with them, which the model does not
 *   assume. (The channel jobset builds `cudatoolkit` of each versioned set and `python3Packages.{torch,triton}`;
 *   the per-PR jobset builds PR-changed `cudaPackages*` attributes: neither covers torch's NCCL of another set.)
 *
 * Earlier state (what this model replaced): nixos-cuda/infra's README still says "`cuda-packages-[un]stable`: builds
 * `nixpkgs`'s `release-cuda.nix` jobset", whose fixed list built every `cudaPackages*` set whole; the jobset file
 * above is what Hydra runs now.
 *
 * Sources disagree on the systems: release-cuda.nix says `supportedSystems ? [ "x86_64-linux" "aarch64-linux" ]`,
 * but the jobset leaves aarch64 out and the Hydra's builders (nixos-cuda/infra hosts/hydra/hydra/builders.nix: atlas,
 * oxide-1, ada, pascal) are all x86_64-linux. We follow the Hydra: on aarch64-linux (Grace, DGX Spark, Thor,
 * Graviton) the CUDA set is built locally.
 */
import type { Catalog, CudaCache, PublicCudaCache } from "./schema.ts";

/** The cache's jobs and what their closures hold, per the sources above. */
export const CUDA_CACHE: CudaCache = {
  name: "cache.nixos-cuda.org",
  /** Systems the Hydra builds for. */
  systems: ["x86_64-linux"],
  /** What is evaluated: every cudaSupport-sensitive attribute path of the sets CI evaluation recurses into. */
  jobs: "every attribute path whose outputs change when cudaSupport flips, in the sets nixpkgs' CI evaluation recurses into",
  /**
   * torch's CUDA dependencies built from source per CUDA set (catalog/device-code.ts `bundledDeviceCode` says which
   * torch links at each pin), by origin: the attribute torch takes. In a job's closure only with the default set.
   */
  perCudaSet: { nccl: "nccl", nvshmem: "libnvshmem", magma: "magma-cuda-static" },
  /** Python packages of torch's closure that read cudaSupport (jobs in the recursed sets, with the default CUDA set). */
  perPythonSet: ["triton"],
  source:
    "nixos-cuda/hydra-jobsets cuda-packages.nix (1f6df3c: ci.eval with cudaSupport = false and true, " +
    "changed-paths.json rebuildsByPlatform, release-lib.mapTestOn, supportedSystems x86_64-linux) and README (097ac6b: " +
    "'All cudaSupport-sensitive nixpkgs packages (~2k packages)', channels nixos-unstable-small and nixos-26.05-small); " +
    "nixos-cuda/infra (c2b55a1): harmonia serves the Hydra's own store, GC disabled, x86_64-linux builders only; " +
    "nixpkgs pkgs/top-level/release.nix (recurseForDerivations) and a 2026 all-packages.nix (cudaPackages = " +
    "recurseIntoAttrs cudaPackages_12; python313Packages, python314Packages recurseIntoAttrs; python3Packages " +
    "dontRecurseIntoAttrs); cuda-modules nccl.nix (no config.cudaSupport input); NixOS/nixpkgs#555389 (2026-08-22: " +
    "torch with cudaCapabilities [\"12.0\"] 'not built/cached by … cache.nixos-cuda.org')",
};

/**
 * Default durations of the derivations the model counts when the cache cannot serve them, in seconds. No measured
 * wall time of magma or triton alone was found (searched: nixpkgs issues and PRs on magma, triton-llvm, nccl and
 * libnvshmem build times; Hydra pages are not reachable here), so these are estimates, said as such, from the one
 * sourced figure for the closure. A user's own build reports replace them in `fleet` (fleet/cost.ts).
 */
export const REBUILD_SECONDS: Catalog["rebuildSeconds"] = {
  magma: {
    seconds: 2 * 3600,
    source:
      "estimate: NixOS/nixpkgs#555389 gives 'several hours even with high parallelism' for torch's CUDA closure (magma, " +
      "gdrcopy, nccl, …; 3 h taken, BUILD_SECONDS.cudaClosure below), of which magma, compiled for every " +
      "default capability and needing '50GB+ RAM' (NixOS/nixpkgs#393035), is the largest: 2 h of the 3 h",
  },
  nccl: {
    seconds: 0.5 * 3600,
    source:
      "estimate: of NixOS/nixpkgs#555389's 'several hours' for torch's CUDA closure (3 h taken), magma takes 2 h (above); " +
      "NCCL, compiled for every default capability, is taken as half of the remaining hour; no measured time found",
  },
  nvshmem: {
    seconds: 0.5 * 3600,
    source:
      "estimate: the other half of the hour left in the CUDA closure's 3 h after magma (NixOS/nixpkgs#555389); NVSHMEM's " +
      "device library is compiled for every default capability (libnvshmem.nix: CMAKE_CUDA_ARCHITECTURES from flags)",
  },
  triton: {
    seconds: 1 * 3600,
    source:
      "estimate: triton builds its own LLVM (triton-llvm); no measured time found. nix-community/infra#2038 ('a system " +
      "rebuild takes 4 hours because of CUDA') bounds a whole CUDA rebuild; 1 h taken for triton with its LLVM",
  },
};

/**
 * Default build times of what the plan builds when no earlier report knows it, in seconds, each with its source: the
 * build plan's model (generator/model/plan.ts TORCH_BUILD_MODEL, estimateBuild; the fleet cost model reads the same)
 * takes torch's two figures at the cores each was measured at (the CUDA one at the guide's own MAX_JOBS=24 on an
 * m8g.8xlarge of 32 vCPUs; the CPU one on a runner of 48 vCPUs), the environment's for every environment variant, the
 * CUDA closure's for each package-set-scope closure the cache model counts (model/cache-model.ts), and the check's for
 * each static check of `build` (by default) (model/plan.ts DEFAULT_CHECK_SECONDS). The packages built on torch have theirs in
 * their rows (catalog/packages.ts `buildSeconds`).
 */
export const BUILD_SECONDS: Catalog["buildSeconds"] = {
  torchCuda: {
    seconds: 1.75 * 3600,
    cores: 24,
    source: "the guide 'Building PyTorch 2.9.1 for ARM64 with T4G (sm_75) Support': \"Build (takes 1.5-2 hours for single architecture)\"; midpoint; " +
      "with MAX_JOBS=24 on an m8g.8xlarge (32 vCPU), the guide's own setting",
  },
  torchCpu: {
    seconds: 49 * 60,
    cores: 48,
    source:
      "pytorch/pytorch#183931 'Before vs after': 294 runner-minutes for 6 x86 CPU wheel builds ('6 × ~49m') on " +
      "linux.12xlarge.memory.ephemeral (r5.12xlarge, 48 vCPUs)",
  },
  environment: {
    seconds: 60,
    source: "python.withPackages is a buildEnv: symlinks to the members' store paths and wrapped scripts, nothing compiled",
  },
  cudaClosure: {
    seconds: 3 * 3600,
    source:
      "NixOS/nixpkgs#555389 (2026-08-22, 26.05): with config.cudaCapabilities = [ \"12.0\" ] torch's CUDA closure " +
      "(magma, gdrcopy, nccl, … 7 derivations) is not in cache.nixos-cuda.org, 'forcing a full local build' of " +
      "'several hours'; 3 h is taken for 'several'",
  },
  check: {
    seconds: 120,
    source:
      "the probe with cuobjdump over torch's and torchaudio's libraries and the GPU checks took 29 s on the H100 host " +
      "(tests/fixtures/probes/h100-pypi-torch2.11.0-cu130); 2 min leaves room for the Python environment",
  },
};

/**
 * The public caches of nixpkgs' CUDA packages, per system. cache.nixos-cuda.org is the one the cache model counts on
 * (x86_64-linux, nixpkgs' default capabilities: CUDA_CACHE above). cache.flox.dev is Flox's public cache: NVIDIA lets
 * Flox redistribute CUDA libraries, and it publishes pre-built CUDA packages, PyTorch and MAGMA among them, for Nix
 * users too; it is the one public cache known here that serves aarch64-linux CUDA packages. Which nixpkgs revisions
 * and capabilities it built is not published where this catalog could read it, so for a variant it "may hold".
 *
 * Sources disagree on aarch64: graham33/nixos-dgx-spark's README at 00818b8 says the community caches "currently
 * don't provide aarch64-linux packages" and points to its own Cachix; its later revision (cc4390e, as quoted in this
 * project's notes, not read here) uses cache.flox.dev for aarch64-linux. Flox's own page says nothing per system; its
 * flox-cuda guide lists CUDA packages for aarch64-linux and x86_64-linux.
 */
export const PUBLIC_CUDA_CACHES: PublicCudaCache[] = [
  {
    name: CUDA_CACHE.name,
    url: "https://cache.nixos-cuda.org",
    publicKey: "cache.nixos-cuda.org:74DUi4Ye579gUqzH4ziL9IyiJBlDpMRn9MBN8oNan9M=",
    systems: [...CUDA_CACHE.systems],
    holds: "builds",
    what: "every cudaSupport-sensitive attribute of nixpkgs' CI evaluation, with nixpkgs' default capabilities (CUDA_CACHE)",
    source:
      "nixos-cuda/infra README (c2b55a1: URL and key); the same key name and value in NixOS configurations citing " +
      "wiki.nixos.org/wiki/CUDA (the key's name has no `-1`); nixos-cuda/hydra-jobsets (x86_64-linux only; CUDA_CACHE)",
  },
  {
    name: "cache.flox.dev",
    url: "https://cache.flox.dev",
    publicKey: "flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs=",
    systems: ["x86_64-linux", "aarch64-linux"],
    holds: "may hold",
    what:
      "Flox's pre-built CUDA packages (CUDA libraries, PyTorch, MAGMA, ONNX Runtime, …) for the nixpkgs revisions Flox " +
      "builds; which revisions and capabilities is not known here",
    source:
      "flox.dev/docs/concepts/cuda-catalog-and-cache ('Flox is one of the providers that NVIDIA works with to redistribute " +
      "CUDA libraries … Flox also distributes PyTorch, MAGMA, ONNX Runtime'; 'Nix users first need to add " +
      "https://cache.flox.dev to … extra-substituters and the Flox cache public key to extra-trusted-public-keys'); the " +
      "key as written in many stored nix.conf and flake nixConfig blocks beside https://cache.flox.dev; flox/flox-agentic " +
      "flox-cuda guide ('CUDA packages only work on [\"aarch64-linux\", \"x86_64-linux\"]')",
  },
];
