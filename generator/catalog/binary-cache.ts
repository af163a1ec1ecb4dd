/**
 * What the CUDA binary cache holds, as data: which derivations of a variant's closure a user can substitute and
 * which their machine builds. `build --dry-run` (without `--probe-store`), `fleet`'s cost and `explain` use it
 * (generator/driver/cache-model.ts); `build --dry-run --probe-store` asks Nix itself instead.
 *
 * nixpkgs' unfree CUDA packages are not built by cache.nixos.org; the NixOS-CUDA Hydra builds them with nixpkgs'
 * default config plus `cudaSupport = true` (no `cudaCapabilities`, so nixpkgs' default capability list) and serves
 * them from cache.nixos-cuda.org. Its job list was nixpkgs' pkgs/top-level/release-cuda.nix: every top-level
 * `cudaPackages*` set whole, a list of top-level packages including `magma` (built with the default `cudaPackages`),
 * and `python3Packages.{torch,torchaudio,torchvision,triton,…}` of the default Python only.
 *
 * Sources disagree on the systems: release-cuda.nix says `supportedSystems ? [ "x86_64-linux" "aarch64-linux" ]`,
 * but the Hydra that fills the cache (nixos-cuda/infra README at c2b55a1: builders atlas, oxide-1, ada and pascal,
 * all x86_64-linux) runs the jobset of nixos-cuda/hydra-jobsets cuda-packages.nix (1f6df3c), whose
 * `supportedSystems ? [ "x86_64-linux" # "aarch64-linux" ]` leaves aarch64 out. We follow the Hydra: on
 * aarch64-linux (Grace, DGX Spark, Thor, Graviton) the CUDA set is built locally.
 */
import type { System } from "../schema.ts";

/** The cache's job list, per the sources above. */
export const CUDA_CACHE = {
  name: "cache.nixos-cuda.org",
  /** Systems whose CUDA packages the cache holds. */
  systems: ["x86_64-linux"] as System[],
  /** Every `cudaPackages*` set is built whole, with nixpkgs' default capabilities. */
  wholeCudaSets: true,
  /** Top-level packages built with the default `cudaPackages` only (a variant on another CUDA set rebuilds them). */
  defaultCudaOnly: ["magma"],
  /** `python3Packages` entries built for the default Python (and default CUDA set) only. */
  defaultPythonOnly: ["torch", "torchaudio", "torchvision", "triton"],
  source:
    "nixpkgs pkgs/top-level/release-cuda.nix (NixOS/nixpkgs 04edda0; Swarsel/nixpkgs 4aa6836, 2026): " +
    "`builtins.filter (lib.strings.hasPrefix \"cudaPackages\") (builtins.attrNames pkgs)`, `magma = linux;`, " +
    "`python3Packages = { … torch = linux; torchaudio = linux; torchvision = linux; triton = linux; … }`, config " +
    "`cudaSupport = true` without cudaCapabilities (NixOS/nixpkgs#515928, adding it, still open); nixos-cuda/infra " +
    "README (c2b55a1): 'cuda-packages-[un]stable: builds nixpkgs's release-cuda.nix jobset', cache " +
    "https://cache.nixos-cuda.org, x86_64-linux builders only; nixos-cuda/hydra-jobsets cuda-packages.nix (1f6df3c): " +
    "supportedSystems x86_64-linux, aarch64-linux commented out; NixOS/nixpkgs#555389 (2026-08-22: torch with " +
    "cudaCapabilities [\"12.0\"] 'not built/cached by … cache.nixos-cuda.org')",
} as const;

/**
 * Default durations of the derivations the model counts when the cache cannot serve them, in seconds. No measured
 * wall time of magma or triton alone was found (searched: nixpkgs issues and PRs on magma, triton-llvm, nccl and
 * libnvshmem build times; Hydra pages are not reachable here), so these are estimates, said as such, from the one
 * sourced figure for the closure. A user's own build reports replace them in `fleet` (fleet/cost.ts).
 */
export const REBUILD_SECONDS = {
  magma: {
    seconds: 2 * 3600,
    source:
      "estimate: NixOS/nixpkgs#555389 gives 'several hours even with high parallelism' for torch's CUDA closure (magma, " +
      "gdrcopy, nccl, …; 3 h taken, driver/plan.ts DEFAULT_CUDA_CLOSURE_SECONDS), of which magma, compiled for every " +
      "default capability and needing '50GB+ RAM' (NixOS/nixpkgs#393035), is the largest: 2 h of the 3 h",
  },
  triton: {
    seconds: 1 * 3600,
    source:
      "estimate: triton builds its own LLVM (triton-llvm); no measured time found. nix-community/infra#2038 ('a system " +
      "rebuild takes 4 hours because of CUDA') bounds a whole CUDA rebuild; 1 h taken for triton with its LLVM",
  },
} as const;
