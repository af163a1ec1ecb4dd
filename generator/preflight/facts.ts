/**
 * The facts the preflight checks compare a host against, as data with their sources (generator/preflight/checks.ts
 * reads them; docs/gpu-driver.md explains them).
 */
import { FLOX_MIN_VERSION } from "../render/index.ts";

/**
 * The oldest Nix that evaluates the catalog's pins: nixpkgs' root default.nix aborts on a Nix older than its
 * `lib/minver.nix` ("This version of Nixpkgs requires Nix >= …, please upgrade"); every nixpkgs of 2025 and later,
 * which every catalog pin is, asks for 2.18. (generator/pin/nix.ts reads the file itself when it has a checkout.)
 */
export const NIX_MIN = {
  version: "2.18",
  source: "nixpkgs lib/minver.nix (\"2.18\" in nixpkgs of 2025 and later, the era of every catalog pin); pin/nix.ts requiredNixVersion reads it from a checkout",
} as const;

/** The oldest flox whose `flox build` builds `.flox/pkgs/*.nix` (render/index.ts FLOX_MIN_VERSION: flox#3281, 1.5 release). */
export const FLOX_MIN = {
  version: FLOX_MIN_VERSION,
  source: "flox 1.4.3 had Nix expression builds behind a feature flag; flox/flox#3281 removed it 'in preparation for 1.5 release' (generator/render/index.ts)",
} as const;

/**
 * Free space the Nix store needs for a variant built here: at least what a CUDA toolkit plus one CUDA torch take,
 * which exhausts a GitHub-hosted runner's ~14 GB free disk (matteospanio/torchfx#76: "the CUDA toolkit + the
 * multi-GB CUDA torch wheel + the build exhaust the runner's ~14 GB free"; generator/ci.ts GITHUB_LIMITS: a hosted job
 * has a 14 GB disk and torch builds go to self-hosted runners). A source build of torch needs more than this floor
 * (its build tree and nvcc's temporaries); no measurement of that here, so the check fails only below the floor.
 */
export const STORE_FREE_FLOOR = {
  bytes: 14 * 1000 ** 3,
  source: "matteospanio/torchfx#76 (CUDA toolkit + CUDA torch exhaust ~14 GB free); generator/ci.ts GITHUB_LIMITS (14 GB hosted-runner disk)",
} as const;

/** The NixOS-CUDA binary cache the cache model counts on (catalog/binary-cache.ts), and its signing key. */
export const CUDA_CACHE_SUBSTITUTER = {
  url: "https://cache.nixos-cuda.org",
  publicKey: "cache.nixos-cuda.org:74DUi4Ye579gUqzH4ziL9IyiJBlDpMRn9MBN8oNan9M=",
  source:
    "nixos-cuda/infra README (c2b55a1; generator/ci.ts NIXOS_CUDA_CACHE takes it from here); the same key name and value in " +
    "NixOS configurations citing wiki.nixos.org/wiki/CUDA (some other repositories write invented `cache.nixos-cuda.org-1:` keys: " +
    "the key's name has no `-1`)",
} as const;

/** Where nixpkgs' CUDA packages look for the driver's libcuda.so.1: the runpath addDriverRunpath gives them. */
export const NIXOS_DRIVER_LIB = {
  dir: "/run/opengl-driver/lib",
  source:
    "nixpkgs pkgs/development/cuda-modules (autoAddDriverRunpath / addDriverRunpath: driverLink = \"/run/opengl-driver\"); " +
    "NixOS creates it from hardware.graphics / hardware.nvidia; Nix's glibc does not read the host's /etc/ld.so.cache",
} as const;

/** One way a Nix-built CUDA program finds the host's driver outside (or inside) NixOS, and what it needs. */
export interface DriverRoute {
  id: "nixos" | "nixglhost" | "flox";
  /** What the user runs (PROGRAM stands for e.g. result-torch-env-…/bin/python3). */
  command: string;
  /** What must hold on the host for it to work. */
  needs: string[];
  source: string;
}

/**
 * The three routes, as their own sources say they work. No copy of their logic lives here: the environment variants
 * carry nixpkgs' nix-gl-host itself (pkgs/torch-env.nix passthru `nixglhost`), and flox does its own detection.
 */
export const DRIVER_ROUTES: readonly DriverRoute[] = [
  {
    id: "nixos",
    command: "PROGRAM (nothing to add)",
    needs: ["NixOS with hardware.nvidia (or hardware.graphics) enabled: it links the driver into /run/opengl-driver/lib"],
    source: NIXOS_DRIVER_LIB.source,
  },
  {
    id: "nixglhost",
    command: "nixglhost PROGRAM",
    needs: [
      "the host's libcuda.so* in a directory of LD_LIBRARY_PATH, /etc/ld.so.conf (and its includes), /lib, /usr/lib, /lib64 or /usr/lib64",
      "nixglhost itself: nixpkgs' nix-gl-host (every CUDA environment variant carries it: nix-build FILE -A nixglhost)",
    ],
    source:
      "numtide/nix-gl-host nixglhost get_ld_paths (LD_LIBRARY_PATH, /etc/ld.so.conf with includes, /lib /usr/lib /lib64 " +
      "/usr/lib64), CUDA_DSO_PATTERNS (libcuda.so.*, libcudadebugger.so.*): copies the host's DSOs to a cache directory and " +
      "runs PROGRAM with it on LD_LIBRARY_PATH; meta.mainProgram \"nixglhost\"; graham33/nixos-dgx-spark puts it in its dev shells on non-NixOS hosts",
  },
  {
    id: "flox",
    command: "flox activate -- PROGRAM (in an environment that installs the variant)",
    needs: [
      "an NVIDIA device node: /dev/nvidia* (or /dev/dxg under WSL)",
      "the host's ldconfig cache lists lib(cuda|nvidia|dxcore)*.so* (ldconfig --print-cache)",
      "options.cuda-detection not set to false in the environment's manifest (it is on by default)",
    ],
    source:
      "flox/flox activation script activate.d cuda.bash (activate_cuda: skips without _FLOX_ENV_CUDA_DETECTION=1, without " +
      "ldconfig, or when `find /dev -maxdepth 1 -iname 'nvidia*' -o -iname dxg` finds nothing; then takes the libraries " +
      "matching ^lib(cuda|nvidia|dxcore).*\\.so.* from `ldconfig --print-cache -C /etc/ld.so.cache` into the environment); " +
      "flox manifest options.cuda-detection (default true)",
  },
];
