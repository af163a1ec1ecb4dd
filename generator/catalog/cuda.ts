/**
 * CUDA toolkit lines as nixpkgs package sets see them.
 *
 * For each toolkit: the nixpkgs package-set attribute (`cudaPackages_X_Y`), the real compute capabilities its nvcc
 * compiles offline (what `nvcc --list-gpu-code` prints as `sm_XY`, written "X.Y", ascending; the `a`/`f`
 * architecture- and family-specific variants are left out), and the minimum Linux x86_64 GPU driver of the GA
 * release (NVIDIA CUDA Toolkit release notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions").
 *
 * Facts (ARCHITECTURE.md rule 3): sm_100, sm_101 and sm_120 are new in 12.8; sm_103 and sm_121 in 12.9; CUDA 13.0 adds
 * sm_88 and sm_110, renames Thor's sm_101 to sm_110 (13.0 has no 10.1) and removes offline compilation for
 * Maxwell, Pascal and Volta (sm_50–sm_72).
 *
 * Sources: `nvcc --list-gpu-code` of CUDA 13.0 (V13.0.88) run on this machine (tests/catalog.test.ts re-checks
 * it); `nvcc --list-gpu-code` of CUDA 12.8 as posted in Dao-AILab/causal-conv1d PR #56; the CUDA 12.9 and 13.0
 * nvcc reference lists as transcribed in galaxyproject/KegAlign PR #38; nixpkgs
 * pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix; NVIDIA CUDA 13.2 Update 2 release notes (Table 3,
 * and "Deprecated Architectures").
 *
 * Not here: CUDA 13.3 and 13.4, because no catalog pin is known to carry them. NixOS/nixpkgs#525130 added
 * cudaPackages_13_3 (13.3.0; merge date not read), and the nixos-cuda fork has cudaPackages_13_4 at 13.4.2 (its
 * pkgs/top-level/cuda-packages.nix at 2268c4f). docs/matrix.md, "What no catalog pin carries yet".
 */
import type { Catalog, CudaMajor, CudaToolkit } from "./schema.ts";

/*
 * nixpkgs' default `cudaCapabilities` per CUDA package set (`nixpkgsDefaultCapabilities` below): every capability
 * of the table that the CUDA version supports, minus those marked `isJetson`, architecture- or family-specific, or
 * past their `dontDefaultAfterCudaMajorMinorVersion`. Written as computed (catalog/lib/cuda.ts nixpkgsDefaultCapabilitiesFor,
 * which tests/facts.test.ts holds each list equal to) by the rule
 * `_cudaCapabilityIsDefault` (pkgs/development/cuda-modules/_cuda/lib/cuda.nix at 1da571d) on the table
 * _cuda/db/bootstrap/cuda.nix as mirrored in gpus.ts NIXPKGS_CAPABILITIES (55d5788; the older 8c546da gives the same
 * lists, and tests/facts.test.ts holds the lists an earlier hand evaluation gave); corroborated by graham33/nixos-dgx-spark#176 (2026-08-24: packages such
 * as ucc "compiling for all nine architectures" with CUDA 12.9). Not read off an evaluation of a pinned revision.
 */
const DRIVER_TABLE =
  "NVIDIA CUDA Toolkit release notes (13.2 Update 2 edition, docs.nvidia.com/cuda/archive/13.2.2), " +
  "Table 3 'CUDA Toolkit and Corresponding Driver Versions'";
const NIX_DB = "nixpkgs pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix";

/** Maxwell, Pascal and Volta targets that every 12.x nvcc still compiles (5.3 and 6.2 are Jetson TX1/TX2). */
const PRE_TURING = ["5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2"];

export const cuda: CudaToolkit[] = [
  {
    version: "12.6",
    packageSet: "cudaPackages_12_6",
    capabilities: [...PRE_TURING, "7.5", "8.0", "8.6", "8.7", "8.9", "9.0"],
    minDriverLinux: "560.28.03",
    nixpkgsDefaultCapabilities: ["7.5", "8.0", "8.6", "8.9", "9.0"],
    note: "Newest target is sm_90: no Blackwell (10.x/12.x) code before CUDA 12.8.",
    source:
      `${DRIVER_TABLE} (CUDA 12.6 GA >=560.28.03); ${NIX_DB} (every capability with min <= 12.6 <= max; ` +
      '"10.0" min is 12.7, a version never released, so 12.6 has none); the 12.8 nvcc list below minus ' +
      "sm_100/101/120 (nixpkgs: min 12.7/12.8; NVIDIA/nccl-tests PR #271: Blackwell 'officially supported in " +
      "CUDA 12.8 and later'). No 12.6 `nvcc --list-gpu-code` output was found to quote directly",
  },
  {
    version: "12.8",
    packageSet: "cudaPackages_12_8",
    capabilities: [...PRE_TURING, "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "12.0"],
    minDriverLinux: "570.26",
    nixpkgsDefaultCapabilities: ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"],
    note: "First toolkit with Blackwell: sm_100 (B200), sm_101 (Thor, later renamed sm_110), sm_120 (RTX 5090).",
    source:
      `${DRIVER_TABLE} (CUDA 12.8 GA >=570.26); \`/usr/local/cuda-12.8/bin/nvcc --list-gpu-code\` output ` +
      `posted in Dao-AILab/causal-conv1d PR #56 (sm_50 ... sm_90, sm_100, sm_101, sm_120); ${NIX_DB}`,
  },
  {
    version: "12.9",
    packageSet: "cudaPackages_12_9",
    capabilities: [...PRE_TURING, "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "10.3", "12.0", "12.1"],
    minDriverLinux: "575.51.03",
    nixpkgsDefaultCapabilities: ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"],
    note: "Adds sm_103 (B300) and sm_121 (GB10), plus the `f` family-specific targets (not listed here).",
    source:
      `${DRIVER_TABLE} (CUDA 12.9 GA >=575.51.03); CUDA 12.9 nvcc reference target list as quoted in ` +
      `galaxyproject/KegAlign PR #38 ("12.9 docs 50 52 53 60 61 62 70 72 75 80 86 87 89 90 100 101 103 120 121"); ` +
      `eyalroz/cuda-api-wrappers issue #732 (12.9 adds sm_103, sm_121); ${NIX_DB} ("10.3", "12.1" min 12.9)`,
  },
  {
    version: "13.0",
    packageSet: "cudaPackages_13_0",
    // Exactly the sm_XY lines of `nvcc --list-gpu-code` (CUDA 13.0, V13.0.88) here, sorted; nvcc prints sm_110
    // before sm_103.
    capabilities: ["7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"],
    minDriverLinux: "580.65.06",
    nixpkgsDefaultCapabilities: ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"],
    note:
      "Drops offline compilation for Maxwell, Pascal and Volta (sm_50–sm_72); renames Thor sm_101 to sm_110 " +
      "(no 10.1 any more); adds sm_88 and sm_110.",
    source:
      `${DRIVER_TABLE} (CUDA 13.0 GA >=580.65.06); \`nvcc --list-gpu-code\` of CUDA 13.0 (V13.0.88) on this ` +
      "machine; NVIDIA CUDA release notes 'Deprecated Architectures' (Maxwell, Pascal, Volta offline compilation " +
      `removed in 13.0); ${NIX_DB} ("10.1" max 12.9, "11.0" min 13.0)`,
  },
  {
    version: "13.2",
    packageSet: "cudaPackages_13_2",
    // Inferred, not read off a 13.2 nvcc: no `nvcc --list-gpu-code` of CUDA 13.2 was at hand (this machine has 13.0,
    // the GPU host has no network to fetch one). Taken as 13.0's list: nixpkgs' table (55d5788) gives no capability a
    // min of 13.1/13.2 or a max of 13.0/13.1, and CUDA 13 wheels built with 13.2.1 compile "sm_75 and newer"
    // (abetlen/llama-cpp-python#2239). NVIDIA's 13.2 notes add CUDA Tile for Ampere and Ada (NVlabs/cutile-rs#54:
    // "sm_8x in 13.2"), a compiler feature, not a new offline target.
    capabilities: ["7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"],
    minDriverLinux: "595.45.04",
    nixpkgsDefaultCapabilities: ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"],
    note:
      "PyTorch's own CUDA 13 line from 2.12 (12.6, 13.0, 13.2); nixpkgs' cudaPackages_13 is 13.2 (13.2.1 since " +
      "NixOS/nixpkgs#525132), and its own math headers need no glibc 2.42 patch (NixOS/nixpkgs#513972). Its capability " +
      "list is inferred from 13.0's (see the comment in catalog/cuda.ts).",
    source:
      "CUDA 13.2 GA >=595.45.04 (NVIDIA CUDA Toolkit release notes 13.2, Table 3, as quoted in several stored projects; " +
      "13.2 Update 1 >=595.58.03); capabilities INFERRED from CUDA 13.0's nvcc list and " +
      `${NIX_DB} (55d5788: every capability allowed with 13.0 is allowed with 13.2); abetlen/llama-cpp-python#2239 ` +
      "(CUDA 13.2.1 wheels, 'CUDA 13 NVCC recognizes sm_75 and newer'); NixOS/nixpkgs#513972 (2026-04-27: " +
      "cudaPackages_13_2 exists, cuda_crt unpatched from 13.2)",
  },
];


/**
 * CUDA minor-version compatibility, per major family: from CUDA 11 on, an application built with any toolkit of a major
 * family runs "with limited feature-set" on a driver of at least the family's minimum, older than that toolkit's own
 * Table 3 minimum (`minDriverLinux` above). NVIDIA "CUDA Compatibility", minor-version-compatibility page (read): CUDA
 * 13.x ≥ 580, CUDA 12.x ≥ 525 (< 580), CUDA 11.x ≥ 450; NVIDIA's data-center driver table (read): R535 and R570
 * "support CUDA 12.x (through CUDA minor version compatibility)", R580 "CUDA 13.x". The limits, as the page's
 * "Application Considerations" section states them (read in quotations of that section by stored projects, and in the
 * page's FAQ: "To use other CUDA APIs introduced in a minor release (that require a new driver)", not in the section
 * itself): code that reaches the GPU as PTX of the newer toolkit does not JIT on the older driver ("Applications that
 * compile device code to PTX will not work on older drivers"), and features that need the newer driver fail with
 * `cudaErrorCallRequiresNewerDriver`. matrix/compat.ts `driverSupport` applies it only to a variant whose code on the
 * GPU is SASS from every origin (no PTX JIT needed).
 */
export const CUDA_MINOR_VERSION_COMPAT: CudaMajor[] = [
  {
    major: "12",
    minDriverLinux: "525.60.13",
    loses: [
      "JIT of PTX newer than the driver (code that reaches the GPU only as PTX of the newer toolkit fails to load)",
      "CUDA APIs of the newer minor that need its driver (cudaErrorCallRequiresNewerDriver)",
    ],
    inferred:
      "the page gives '>= 525'; 525.60.13 is the release notes' Table 2 figure for CUDA 12.x (Linux; Windows 528.33) as " +
      "quoted by a stored project's fixture of those notes, not read at NVIDIA's page here; taken as the stricter one",
    source:
      "NVIDIA CUDA Compatibility, Minor Version Compatibility (docs.nvidia.com/deploy/cuda-compatibility/minor-version-" +
      "compatibility.html, Table 1: CUDA 12.x >= 525, < 580); NVIDIA data-center drivers, 'Supported Drivers and CUDA " +
      "Toolkit Versions' (R535, R570: CUDA 12.x through minor version compatibility)",
  },
  {
    major: "13",
    minDriverLinux: "580.65.06",
    loses: [
      "JIT of PTX newer than the driver (code that reaches the GPU only as PTX of the newer toolkit fails to load)",
      "CUDA APIs of the newer minor that need its driver (cudaErrorCallRequiresNewerDriver)",
    ],
    inferred:
      "the page gives '>= 580'; 580.65.06, CUDA 13.0 GA's own Table 3 minimum (the first 13.x), is taken as the stricter " +
      "figure: the release notes' Table 2 row for CUDA 13.x was not read",
    source:
      "NVIDIA CUDA Compatibility, Minor Version Compatibility (Table 1: CUDA 13.x >= 580, no upper range); NVIDIA " +
      `data-center drivers, 'Supported Drivers and CUDA Toolkit Versions' (R580: CUDA 13.x through minor version compatibility); ${DRIVER_TABLE} (CUDA 13.0 GA >=580.65.06)`,
  },
];

/**
 * glibc 2.42 against CUDA's math headers, a property of a nixpkgs revision rather than of any package: glibc 2.42
 * declares rsqrt, sinpi and cospi with `noexcept(true)`, CUDA's `crt/math_functions.h(pp)` without, so nvcc fails
 * with "exception specification is incompatible with that of previous function" in whatever includes them (CMake's
 * own CUDA compiler check first). It reached master with the staging-next merge NixOS/nixpkgs#479279 (NixOS/nixpkgs#483507,
 * 2026-01-25: bitsandbytes' CUDA build with cuda12.8-cuda_nvcc-12.8.93 fails at CMake's compiler identification on
 * `cospi`). nixpkgs patched the headers in steps (`fixes`): a revision between glibc's arrival and the last fix for
 * its CUDA version can fail any CUDA package built from source there, bitsandbytes or not.
 *
 * Dates: #484031 was opened 2026-01-26 and was on master by 2026-02-09 (#488738 of that day follows it up), so
 * 2026-02-09 is taken; #498678 was approved on 2026-03-22 (the review links hydra.nixos-cuda.org eval 6130) and is
 * merged; #512796 was opened 2026-04-23 and is merged, its merge date not read (the opening date is taken). #513972
 * (2026-04-27) stops patching from CUDA 13.2, whose own headers match glibc.
 */
export const GLIBC_242_CUDA_HEADERS: Catalog["glibcCudaHeaders"] = {
  /** When glibc 2.42 was on master (the first report of the failure). */
  since: "2026-01-25",
  fixes: [
    { pr: "NixOS/nixpkgs#484031", merged: "2026-02-09", cuda: { min: "12.0", below: "13.0" }, what: "cuda_nvcc include/crt/math_functions.h (cospi, sinpi, rsqrt)" },
    { pr: "NixOS/nixpkgs#498678", merged: "2026-03-22", cuda: { min: "12.0", below: "13.0" }, what: "cuda_nvcc math_functions.hpp (rsqrt, sinpi, cospi in __func__() macros)" },
    { pr: "NixOS/nixpkgs#512796", merged: "2026-04-23", cuda: { min: "13.0", below: "13.2" }, what: "cuda_crt math_functions.h (rsqrt, rsqrtf)" },
  ],
  source:
    "NixOS/nixpkgs#483507 (2026-01-25: glibc 2.40 -> 2.42 with #479279; bitsandbytes' CMake CUDA compiler check fails on cospi " +
    "with cuda12.8-cuda_nvcc-12.8.93), #484031 (patch math_functions.h, 'This at least breaks bitsandbytes'), #488738 " +
    "(2026-02-09: not on CUDA 13), #498678 (math_functions.hpp, approved 2026-03-22), #512796 (2026-04-23: cuda_crt rsqrt " +
    "for CUDA >= 13.0), #513972 (2026-04-27: no patch from 13.2)",
};
