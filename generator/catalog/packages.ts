/**
 * The packages built on torch (ARCHITECTURE.md rule 8): one entry per package, read by every part of the generator that
 * handles packages (expand, naming, the Nix builders through pkgs/variants.nix, the plan's durations, CI exports,
 * detect, fleet, verify). Nothing outside this table names a package but the `pytorch` root and the environment
 * (`torch-env`, catalog/lib/packages.ts ENV_PACKAGE), which holds every package of this table that the matrix keeps.
 *
 * An entry says:
 * - `name`: the package part of variant names (`torchvision-python313-…`) and the nixpkgs attribute in
 *   `pythonXYZPackages` (`attr`);
 * - `pinField`: which field of a nixpkgs pin (generator/catalog/torch.ts) records the version that revision carries;
 * - `releases`: the releases and the torch minors each serves (`servesTorch`: min inclusive, below exclusive or null);
 *   a pin's version is matched by exact version or by series ("0.27" matches 0.27.1);
 * - `archList`: how its CUDA code gets the capabilities, per era of its nixpkgs file (where `TORCH_CUDA_ARCH_LIST`
 *   is set and from what), which pkgs/variant-attrs.nix follows (it writes the variable where the package keeps it);
 * - `deviceCode`: the directory of its libraries with device code (generator/verify/origins.ts attributes code there
 *   to this package, whose promise is exactly the variant's capabilities, no PTX: torch.utils.cpp_extension
 *   `_get_cuda_arch_flags` turns `TORCH_CUDA_ARCH_LIST` "9.0" into `-gencode arch=compute_90,code=sm_90` and adds PTX
 *   only for a `+PTX` entry);
 * - `gpuChecks`: the GPU smoke tests generator/verify/probe.py runs for it (keys of the probe's output);
 * - `buildSeconds`: the duration estimate the plan, fleet and `build --dry-run` use without recorded builds;
 * - `gibPerCompileJob`, `requiredSystemFeatures`: the memory one nvcc job needs and the builder features a build needs
 *   (vLLM: 6 GiB, big-parallel), each with its source;
 * - `fixes`: what a pin's nixpkgs needs changed for it (attribute, change, why, where, source); those with `apply` are
 *   applied by pkgs/variant-attrs.nix and pkgs/python-set.nix, the rest are recorded (vLLM's unbreak, cuda_crt, cupy);
 * - `inEnv`: whether the environment variant (`torch-env-…`) holds it.
 *
 * Adding a package built on torch: one entry here, its pin field on the pins (torch.ts), its nixpkgs file in the
 * stand-in (tests/fixtures/stand-in-nixpkgs), and its probe keys in probe.py when it has GPU checks.
 */
// Rows only (the rules over them, the package names among them, are generator/catalog/lib/packages.ts): it imports
// the schema's types and nothing else.
import type { DeviceTargets, OnTorchRelease, PackageOnTorch } from "./schema.ts";

const VISION = "pytorch/vision";
const VISION_PAIRING =
  `${VISION} README 'Installation' compatibility table (torch ↔ torchvision: each torchvision minor is built for one ` +
  "torch minor, main/nightly ↔ main/nightly)";

const AUDIO = "pytorch/audio";

/** bitsandbytes' CUDA targets (0.45.5 … 0.49.2 CMakeLists.txt, the same lines in each). */
const BNB_TARGETS: DeviceTargets = {
  kind: "cmakeList",
  flag: "COMPUTE_CAPABILITY",
  ptxForHighest: true,
  ptxIn: {
    where: "relocatable",
    source:
      "bitsandbytes CMakeLists.txt 0.46.1 … 0.49.2 `CUDA_SEPARABLE_COMPILATION ON` (-rdc=true, then a -dlink step); " +
      "H100 recording tests/fixtures/probes/h100-real-builds (0.49.2, COMPUTE_CAPABILITY=90: `cuobjdump --list-ptx` " +
      "finds no PTX, `-all` finds compute_90 in the relocatable fatbin; an 80-only build ran on the 9.0 card through " +
      "that PTX and failed with CUDA_DISABLE_PTX_JIT=1)",
  },
  source:
    "bitsandbytes CMakeLists.txt (0.45.5 … 0.49.2): 'COMPUTE_CAPABILITY: Which GPU Arch/Compute codes to provide to " +
    "NVCC. Separate by semicolons, i.e. `-DCOMPUTE_CAPABILITY=89;90;100;120`'; it then sets CMAKE_CUDA_ARCHITECTURES " +
    "itself (0.49.2 lines 189-193: `list(REMOVE_DUPLICATES …)`, `list(SORT … COMPARE NATURAL)`, `list(POP_BACK " +
    "COMPUTE_CAPABILITY _LATEST_CAPABILITY)`: every other entry with `-real`, the highest without: SASS and PTX), so " +
    "a -DCMAKE_CUDA_ARCHITECTURES would be overwritten; H100: COMPUTE_CAPABILITY=\"90;80\" built PTX compute_90",
};

/** Where vLLM's architecture handling was read (the `supportedArchs` targets of its releases). */
const VLLM_TARGETS_SOURCE =
  "vllm-project/vllm CMakeLists.txt: `cuda_archs_loose_intersection(CUDA_ARCHS \"${CUDA_SUPPORTED_ARCHS}\" \"${CUDA_ARCHS}\")` " +
  "keeps each requested architecture its list has and maps another to the nearest lower one of the same major; the " +
  "generic kernels (_C, _moe_C) are compiled for those, its CUTLASS/FP8/FP4 kernel lists for their `a` or (CUDA 13) `f` " +
  "forms; nixpkgs hands it TORCH_CUDA_ARCH_LIST and CUTLASS_NVCC_ARCHS_ENABLED as CMake flags (vllm/default.nix)";

/** A bitsandbytes release: torch >= 2.3, < 3 (0.48.2's pyproject), its CUDA range, BNB_TARGETS. */
function bnbRelease(version: string, cuda: NonNullable<OnTorchRelease["cuda"]>, source: string): OnTorchRelease {
  return { version, servesTorch: { min: "2.3", below: "3.0" }, stableAbi: false, cuda, targets: BNB_TARGETS, source };
}

export const packagesOnTorch: PackageOnTorch[] = [
  {
    name: "torchaudio",
    attr: "torchaudio",
    label: "torchaudio",
    pinField: "torchaudio",
    // Up to 2.10 a torchaudio release is built against the C++ ABI of its own torch minor only; 2.11 moved to
    // PyTorch's stable ABI and declares `torch>=2.11`, and is the last release (torch 2.12 and later pair with it).
    // nixpkgs' file: `dependencies = [ torch ]` for 2.9.1 and 2.10.0 (005ab72; 2.8.0 taken to be the same, its file
    // was not found stored), `[ torch torchcodec ]` for 2.11.0 (NixOS/nixpkgs#502810); the stand-in mirrors them.
    releases: [
      {
        version: "2.8.0",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.8", below: "2.9" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.8 with torch 2.8; built against torch's C++ ABI)`,
      },
      {
        version: "2.9.1",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.9", below: "2.10" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.9 with torch 2.9)`,
      },
      {
        version: "2.10.0",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.10", below: "2.11" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.10 with torch 2.10); NixOS/nixpkgs#502810 bumps both together`,
      },
      {
        version: "2.11.0",
        nixpkgsDependencies: ["torchcodec"],
        servesTorch: { min: "2.11", below: null },
        stableAbi: true,
        source:
          `${AUDIO}#4212 ('clarify torchaudio 2.11 supports torch>=2.11'), ${AUDIO}#4225 ('set torch dep to ` +
          `torch>=2.11'), ${AUDIO}#4142 ('[STABLE ABI] Verify that torchaudio is torch ABI stable'); ` +
          "PyTorchKR/pytorch.kr#102 (2.11.0 is the last torchaudio release); the nixos-unstable pin 2c423e0 pairs " +
          "torch 2.12.0 with torchaudio 2.11.0 (generator/catalog/torch.ts)",
      },
    ],
    archList: [
      {
        from: "2.8",
        placement: "env",
        expr: 'env.TORCH_CUDA_ARCH_LIST = lib.concatStringsSep ";" torch.cudaCapabilities',
        source:
          "nixpkgs pkgs/development/python-modules/torchaudio/default.nix at 005ab72 (2.10.0) and NixOS/nixpkgs#502810 " +
          "(2.11.0); the stand-in's torchaudio-2.9/2.10/2.11.nix",
      },
    ],
    deviceCode: { directory: "torchaudio/lib", source: "torchaudio's libtorchaudio.so (PyPI wheel, cuobjdump on the H100: tests/fixtures/probes)" },
    checkedOnRealBuild: "a proxy: its forced_align CUDA kernel file built through torch's cpp_extension for 9.0, 8.0;9.0, 9.0+PTX and 8.0 on an H100 (tests/fixtures/probes/h100-real-builds/ta-*)",
    gpuChecks: [
      { key: "rnntLoss", label: "torchaudio.functional.rnnt_loss on CUDA" },
      { key: "forcedAlign", label: "torchaudio.functional.forced_align on CUDA" },
    ],
    buildSeconds: {
      seconds: 30 * 60,
      source:
        "the README 'TorchAudio Architecture-Specific Builds' (Flox/Nix torchaudio variants; an unpublished build guide given to this project): " +
        "\"Build times vary (20-40 minutes typical for TorchAudio)\"; midpoint",
    },
    inEnv: true,
    source: "pytorch/audio README version table; pytorch/audio#4212, #4225 (2.11 serves torch>=2.11)",
  },
  {
    name: "torchvision",
    attr: "torchvision",
    label: "torchvision",
    pinField: "torchvision",
    releases: [
      { version: "0.23", servesTorch: { min: "2.8", below: "2.9" }, stableAbi: false, source: `${VISION_PAIRING}: 0.23 ↔ 2.8` },
      { version: "0.24", servesTorch: { min: "2.9", below: "2.10" }, stableAbi: false, source: `${VISION_PAIRING}: 0.24 ↔ 2.9` },
      { version: "0.25", servesTorch: { min: "2.10", below: "2.11" }, stableAbi: false, source: `${VISION_PAIRING}: 0.25 ↔ 2.10` },
      {
        version: "0.26",
        servesTorch: { min: "2.11", below: "2.12" },
        stableAbi: false,
        source: `${VISION_PAIRING}: 0.26 ↔ 2.11; NixOS/nixpkgs#502810 bumps torch 2.11 and torchvision 0.26 together`,
      },
      { version: "0.27", servesTorch: { min: "2.12", below: "2.13" }, stableAbi: false, source: `${VISION_PAIRING}: 0.27 ↔ 2.12` },
      {
        version: "0.28",
        servesTorch: { min: "2.13", below: "2.14" },
        stableAbi: false,
        source: `${VISION_PAIRING}: 0.28 ↔ 2.13 ("torchvision 0.28.0+cpu requires torch==2.13.0", a stored pip resolution)`,
      },
      {
        version: "0.29",
        servesTorch: { min: "2.14", below: "2.15" },
        stableAbi: false,
        source:
          "pytorch.org's compatibility table for 2.14.0 (PyTorchKR/pytorch.kr#119: torchvision 0.29.0, tagged the same day " +
          "as torch 2.14.0); googlecolab/colabtools#6093 ('torch v2.14.0 and torchvision v0.29.0'); coreweave/ml-containers#233",
      },
    ],
    archList: [
      {
        from: "0.20",
        placement: "env",
        expr: 'env = lib.optionalAttrs cudaSupport { TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" cudaCapabilities}"; }',
        source:
          "nixpkgs pkgs/development/python-modules/torchvision/default.nix (0.26.0 and 0.27.1 stored copies): " +
          "`inherit (torch) cudaCapabilities cudaPackages cudaSupport;`, TORCH_CUDA_ARCH_LIST in env when cudaSupport",
      },
    ],
    deviceCode: {
      directory: "torchvision",
      source: "pytorch/vision setup.py: the `torchvision._C` extension holds the CUDA ops (nms, roi_align, deform_conv2d, …)",
    },
    checkedOnRealBuild: "a proxy: its nms CUDA kernel file built through torch's cpp_extension for 9.0, 8.0;9.0, 9.0+PTX and 8.0 on an H100 (tests/fixtures/probes/h100-real-builds/tv-*)",
    gpuChecks: [
      { key: "nms", label: "torchvision.ops.nms on CUDA" },
      { key: "roiAlign", label: "torchvision.ops.roi_align on CUDA" },
    ],
    buildSeconds: {
      seconds: 30 * 60,
      source:
        "estimate, not a measurement: no recorded torchvision build time was found (nixpkgs PRs, Hydra: CUDA packages " +
        "are not built there); its _C extension is, like torchaudio's, one cpp_extension of C++/CUDA ops built against " +
        "a finished torch, so torchaudio's 20-40 minutes (midpoint) is taken",
    },
    inEnv: true,
    source: VISION_PAIRING,
  },
  {
    name: "flash-attn",
    attr: "flash-attn",
    label: "flash-attn",
    pinField: "flashAttn",
    // FlashAttention 2 (the `flash_attn_2_cuda` extension). nixpkgs' flash-attn/default.nix takes `torch` and
    // `inherit (torch) cudaCapabilities cudaPackages cudaSupport` (2.8.2 at 30f6c69 and 079ad55; 2.8.3.post1), so in
    // the variant's Python set it is built on the variant's torch (pkgs/python-set.nix). Read in
    // docs/research/cuda-extensions-on-torch.md §1.
    releases: [
      {
        version: "2.8",
        servesTorch: { min: "2.2", below: null },
        stableAbi: false,
        cuda: {
          min: "12.0",
          below: null,
          source:
            "Dao-AILab/flash-attention README v2.8.3.post1 'Requirements: CUDA 12.0 and above' (setup.py itself refuses " +
            "only below 11.7: 'FlashAttention is only supported on CUDA 11.7 and above')",
        },
        targets: {
          kind: "ownList",
          variable: "FLASH_ATTN_CUDA_ARCHS",
          tokens: [
            { token: "80", capability: "8.0", minCuda: "11.7" },
            { token: "90", capability: "9.0", minCuda: "11.8" },
            { token: "100", capability: "10.0", minCuda: "12.8" },
            { token: "120", capability: "12.0", minCuda: "12.8" },
          ],
          limit: "FlashAttention 2 runs on Ampere (SM80) or newer: 'FlashAttention only supports Ampere GPUs or newer.' (csrc/flash_attn/flash_api.cpp)",
          fallback: {
            to: "torchArchList",
            source:
              "setup.py v2.8.3 lines 179-191 emit no -gencode when no FLASH_ATTN_CUDA_ARCHS token is recognised; then no " +
              "nvcc flag contains \"arch\" and torch's cpp_extension `_get_cuda_arch_flags` compiles TORCH_CUDA_ARCH_LIST " +
              "(pytorch/pytorch#23408); H100 recording tests/fixtures/probes/h100-real-builds/fa-fallback-86: " +
              "FLASH_ATTN_CUDA_ARCHS=86 with TORCH_CUDA_ARCH_LIST=8.6 built sm_86",
          },
          source:
            "Dao-AILab/flash-attention setup.py v2.8.2 (7321879) and v2.8.3.post1 (a8aa52b), lines 69-70 and 179-191: " +
            "`cuda_archs()` reads FLASH_ATTN_CUDA_ARCHS (default \"80;90;100;120\") and adds `-gencode " +
            "arch=compute_N,code=sm_N` for \"80\", for \"90\" with nvcc >= 11.8, for \"100\" and \"120\" with nvcc >= 12.8; " +
            "any other token is ignored, and torch's `_get_cuda_arch_flags` adds nothing once the nvcc flags name an " +
            "arch; with no token recognised it falls back to TORCH_CUDA_ARCH_LIST (`fallback`): nixpkgs' 2.8.3.post1 " +
            "(FLASH_ATTN_CUDA_ARCHS = dropDots of the capabilities) builds sm_86 for 8.6 alone, and for \"8.6;9.0\" " +
            "sm_90 only (86 ignored, 90 recognised). csrc/flash_attn/flash_api.cpp: 'FlashAttention only supports Ampere " +
            "GPUs or newer.' Our builder writes the tokens itself (FLASH_ATTN_CUDA_ARCHS).",
        },
        source:
          "Dao-AILab/flash-attention README v2.8.3.post1 ('PyTorch 2.2 and above'); built from source against the " +
          "variant's torch (C++ extension through torch.utils.cpp_extension, no stable ABI); nixpkgs carries 2.8.2 and " +
          "2.8.3.post1 (docs/research/cuda-extensions-on-torch.md §1.1)",
      },
    ],
    archList: [
      {
        from: "2.8",
        placement: "env",
        expr: 'env.TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" cudaCapabilities}" (2.8.2); 2.8.3.post1 adds FLASH_ATTN_CUDA_ARCHS = lib.strings.concatMapStringsSep ";" dropDots cudaCapabilities',
        source:
          "nixpkgs pkgs/development/python-modules/flash-attn/default.nix at 30f6c69 and 079ad55 (2.8.2) and the " +
          "2.8.3.post1 copy (docs/research/cuda-extensions-on-torch.md §1.3); our builder writes FLASH_ATTN_CUDA_ARCHS " +
          "from `targets` (the tokens setup.py accepts) in env",
      },
    ],
    deviceCode: {
      directory: "flash_attn",
      file: "^flash_attn_2_cuda\\.",
      source: "Dao-AILab/flash-attention setup.py: `CUDAExtension(name=\"flash_attn_2_cuda\", …)`, installed beside the flash_attn package",
    },
    cudaOnly:
      "nixpkgs' flash-attn is `meta.broken = !cudaSupport` ('Upstream requires either CUDA or ROCm'; flash-attn/default.nix " +
      "at 079ad55), and FlashAttention has no CPU kernels",
    checkedOnRealBuild: "a subset: one of 2.8.3's 72 kernel files with setup.py's flags, FLASH_ATTN_CUDA_ARCHS 90, 80;90 and 86 (fallback), on an H100 (tests/fixtures/probes/h100-real-builds/fa-*)",
    gpuChecks: [{ key: "flashAttnFunc", label: "flash_attn_func on CUDA against scaled_dot_product_attention (math backend)" }],
    buildSeconds: {
      seconds: 3600,
      source:
        "one target (a variant compiles one token). Measured on the H100 host (tests/fixtures/probes/h100-real-builds/" +
        "fa-90): one of the 72 kernel files of 2.8.3 (flash_fwd_hdim64_fp16_sm80.cu) took 216 s for sm_90, one nvcc " +
        "process; 72 such files at one job per 9 GiB on a 64 GB builder (7 jobs) come to about 37 minutes before the " +
        "heavier backward files, so the hour below stands. Dao-AILab/flash-attention#1038, FLASH_ATTN_CUDA_ARCHS=\"80\" with " +
        "MAX_JOBS=5 on 64 GB RAM and a 5700X: 'within the hour'; the aarch64 SBSA package guide (unpublished, given to this project): 2+ hours " +
        "with MAX_JOBS=4 for upstream's four targets; its README: 3-5 minutes with ninja on a 64-core machine (with the " +
        "memory for 64 jobs: #1038, '~500GB ram'). Our builds run one job per 9 GiB, so a builder of 64 GB is near #1038's",
    },
    caveats: [
      {
        system: "aarch64-linux",
        minCuda: "13.0",
        note:
          "The aarch64 SBSA package guide (unpublished, given to this project) calls flash-attention on CUDA 13.0 + aarch64 'NOT RECOMMENDED' " +
          "(a GCC 13 bug with SVE and -march=native; 'CUDA 12.8 is more stable'; Dao-AILab/flash-attention#1815), about " +
          "FlashAttention 3; this FlashAttention 2 build (-march of the variant's ISA, not native) has not been built here",
      },
    ],
    pname: {
      value: "flash-attn",
      source:
        "NixOS/nixpkgs#561201 (2026-09-08, 'python3Packages.flash-attn: set pname to flash-attn to fix build'): the file's " +
        "`pname = \"flash-attention\"` (079ad55) fails pythonMetadataCheckPhase ('No package metadata was found for " +
        "flash-attention'; the wheel installs flash_attn) at every revision with the hook (#532778) before that fix",
    },
    gibPerCompileJob: {
      gib: 9,
      source:
        "Dao-AILab/flash-attention setup.py v2.8.3.post1: without MAX_JOBS it picks min(cores / 2, free GB / 9), " +
        "'each JOB peak memory cost is ~8-9GB when threads = 4' (NVCC_THREADS; nixpkgs sets 2)",
    },
    inEnv: true,
    optIn: true,
    source: "Dao-AILab/flash-attention v2.8.x; nixpkgs python-modules/flash-attn (docs/research/cuda-extensions-on-torch.md)",
  },
  {
    name: "xformers",
    attr: "xformers",
    label: "xformers",
    pinField: "xformers",
    // nixpkgs' xformers/default.nix takes `torch` and inherits cudaCapabilities, cudaPackages and cudaSupport from it
    // (0.0.30 at 1c60f9f, 0.0.35 at 6348e94). It runs without CUDA too (nixpkgs builds it either way).
    releases: [
      {
        version: "0.0.30",
        servesTorch: { min: "2.7", below: null },
        stableAbi: false,
        targets: { kind: "torchArchList" },
        failsOnCapabilities: {
          capabilities: ["9.0"],
          source:
            "xformers 0.0.30 setup.py `get_flash_attention3_nvcc_archs_flags` (lines 276-301) compiles its bundled " +
            "FlashAttention-3 for each 9.0 entry of TORCH_CUDA_ARCH_LIST as `arch=compute_90,code=sm_90` (sm_90a only " +
            "for an explicit \"9.0a\"), while CUTLASS emits wgmma only under __CUDA_ARCH_FEAT_SM90_ALL (sm_90a; " +
            "cute/arch/mma_sm90_gmma.hpp, else CUTE_INVALID_CONTROL_PATH: assert, printf, __brkpt), and xformers " +
            "dispatches FA3 first on a 9.0 device; on the H100 (tests/fixtures/probes/h100-real-builds/toy-fa3) that " +
            "guard built for sm_90 stopped its kernel with 'device-side assert triggered' and ran when built for sm_90a",
        },
        source:
          "facebookresearch/xformers v0.0.30 requirements.txt 'torch >= 2.7'; nixpkgs xformers/default.nix at 1c60f9f " +
          "pins 0.0.30 ('version 0.0.32.post2 was confirmed to break CUDA')",
      },
      {
        version: "0.0.35",
        servesTorch: { min: "2.10", below: null },
        stableAbi: true,
        targets: { kind: "torchArchList" },
        source:
          "facebookresearch/xformers v0.0.35 requirements.txt 'torch >= 2.10' and setup.py stable_args " +
          "'-DTORCH_STABLE_ONLY', '-DTORCH_TARGET_VERSION=0x020a000000000000' (torch 2.10's stable ABI); it no longer " +
          "bundles flash-attention (third_party/ holds composable_kernel_tiled and cutlass only)",
      },
    ],
    archList: [
      {
        from: "0.0",
        placement: "env",
        expr: 'env.TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" torch.cudaCapabilities}"',
        source:
          "nixpkgs pkgs/development/python-modules/xformers/default.nix at 1c60f9f (0.0.30) and 6348e94 (0.0.35); " +
          "docs/research/cuda-extensions-on-torch.md §2.3",
      },
    ],
    deviceCode: { directory: "xformers", source: "facebookresearch/xformers setup.py: the `xformers._C` extension (its CUDA ops)" },
    checkedOnRealBuild: "0.0.35 built whole for 9.0 and (one file) for 8.0;9.0 on an H100 (tests/fixtures/probes/h100-real-builds/xf-*); 0.0.30 not built (its FlashAttention-3 guard as a stand-in: toy-fa3)",
    gpuChecks: [{ key: "memoryEfficientAttention", label: "xformers.ops.memory_efficient_attention on CUDA against scaled_dot_product_attention (math backend)" }],
    buildSeconds: {
      seconds: 60 * 60,
      source:
        "facebookresearch/xformers README ('this can take dozens of minutes'); facebookresearch/xformers#822: 5-10 minutes " +
        "on a 7950X, more than an hour with MAX_JOBS=4 on 24 CPUs / 96 GB; the upper figure is taken (arch lists there not " +
        "stated) for 0.0.30, which bundles FlashAttention 2 and 3. Measured on the H100 host (tests/fixtures/probes/" +
        "h100-real-builds/xf-90): 0.0.35's whole xformers._C for 9.0 (11 .cu files, no bundled attention) in 58 s with " +
        "MAX_JOBS=12 (175 s of compile in all; sparse24_gemm_sm90.cu alone 58 s)",
    },
    inEnv: true,
    optIn: true,
    source: "facebookresearch/xformers; nixpkgs python-modules/xformers (docs/research/cuda-extensions-on-torch.md §2)",
  },
  {
    name: "bitsandbytes",
    attr: "bitsandbytes",
    label: "bitsandbytes",
    pinField: "bitsandbytes",
    // nixpkgs' bitsandbytes/default.nix takes `torch` (and from 0.48 `cudaSupport ? torch.cudaSupport`, `cudaPackages ?
    // torch.cudaPackages`), builds with CMake and COMPUTE_BACKEND=cuda or cpu. It passes no architecture (0.46.1 at
    // 056e018; only 0.45.5 passed COMPUTE_CAPABILITY = flags.cmakeCudaArchitecturesString), so upstream's default,
    // every architecture of CMAKE_CUDA_ARCHITECTURES_ALL, would be built: our builder sets COMPUTE_CAPABILITY.
    releases: [
      bnbRelease("0.46", { min: "11.4", below: "13.0", source: "bitsandbytes CMakeLists.txt 0.46.1: 'CUDA Version < 11.4 is not supported', 'CUDA Version > 12 is not supported' (VERSION_GREATER_EQUAL 13.0)" }, "bitsandbytes-foundation/bitsandbytes 0.46.x (its torch bound was not read: 0.48.2's pyproject 'torch>=2.3,<3' is taken)"),
      bnbRelease("0.47", { min: "11.4", below: "13.0", source: "bitsandbytes CMakeLists.txt 0.47.0 lines 107-110: 'CUDA Version < 11.4 is not supported' (VERSION_LESS 11.4), 'CUDA Version > 12 is not supported' (VERSION_GREATER_EQUAL 13.0)" }, "bitsandbytes-foundation/bitsandbytes 0.47.0 (its torch bound was not read: 0.48.2's is taken)"),
      bnbRelease("0.48", { min: "11.8", below: "14.0", source: "bitsandbytes CMakeLists.txt 0.48.2: VERSION_LESS 11.8 fatal, 'CUDA Version > 13 is not supported' (>= 14.0)" }, "bitsandbytes-foundation/bitsandbytes 0.48.2 pyproject.toml 'torch>=2.3,<3'"),
      // No drop with CUDA 12.8. Its one reported failure, NixOS/nixpkgs#483507 (2026-01-25: CMake's CUDA compiler
      // check with cuda12.8-cuda_nvcc-12.8.93 stops on cospi's exception specification), came from glibc 2.42 reaching
      // master against CUDA <= 12.9's math headers: a failure of those nixpkgs revisions, which any CUDA package built
      // from source there can hit, not of bitsandbytes (NixOS/nixpkgs#484031, #498678 patch the headers). expand notes
      // it on every CUDA variant of a revision in that window (catalog/cuda.ts GLIBC_242_CUDA_HEADERS). The 0.49.1 →
      // 0.49.2 diff of csrc/ and CMakeLists.txt touches no CUDA header use.
      bnbRelease("0.49.1", { min: "11.8", below: "14.0", source: "bitsandbytes CMakeLists.txt 0.49.1 lines 125-128: VERSION_LESS 11.8 fatal, 'CUDA Version > 13 is not supported' (>= 14.0)" }, "bitsandbytes-foundation/bitsandbytes 0.49.1 (2026-01-08)"),
      bnbRelease("0.49", { min: "11.8", below: "14.0", source: "bitsandbytes CMakeLists.txt 0.49.2: as 0.48.2" }, "bitsandbytes-foundation/bitsandbytes 0.49.2"),
    ],
    archList: [
      {
        from: "0.46",
        placement: "none",
        expr: '(lib.cmakeFeature "COMPUTE_BACKEND" (if cudaSupport then "cuda" else "cpu")): no architecture (0.45.5 alone passed (lib.cmakeFeature "COMPUTE_CAPABILITY" flags.cmakeCudaArchitecturesString))',
        source:
          "nixpkgs pkgs/development/python-modules/bitsandbytes/default.nix at 056e018 (0.46.1) and the 0.47.0/0.48.2 " +
          "copies (docs/research/cuda-extensions-on-torch.md §3.3); our builder appends -DCOMPUTE_CAPABILITY",
      },
    ],
    deviceCode: { directory: "bitsandbytes", source: "bitsandbytes' libbitsandbytes_cuda<MAJOR><MINOR>.so in the package directory (nixpkgs' postPatch names it)" },
    checkedOnRealBuild: "0.49.2 built whole for 9.0, 90;80 and 80 on an H100 (tests/fixtures/probes/h100-real-builds/bnb-*)",
    gpuChecks: [{ key: "blockwise8bit", label: "bitsandbytes 8-bit blockwise quantize/dequantize round trip on CUDA" }],
    buildSeconds: {
      seconds: 5 * 60,
      source:
        "measured on the H100 host (tests/fixtures/probes/h100-real-builds/bnb-*): 0.49.2 for one capability, CMake " +
        "configure 5 s and compile 54 s with -j13 of 16 cores (its critical path is csrc/kernels.cu alone, 53 s, so " +
        "fewer cores barely slow it; 71 s of compile in all), 81 s for two capabilities. A Nix build adds unpacking, the " +
        "wheel build and install, pythonImportsCheck and the variant's checks, not measured here: taken as about 4 " +
        "minutes more, for 5 minutes per variant",
    },
    inEnv: true,
    optIn: true,
    source: "bitsandbytes-foundation/bitsandbytes; nixpkgs python-modules/bitsandbytes (docs/research/cuda-extensions-on-torch.md §3)",
  },
  {
    name: "vllm",
    attr: "vllm",
    label: "vLLM",
    pinField: "vllm",
    // nixpkgs' vllm/default.nix takes `torch` from its Python set (build-system and dependencies; postPatch relaxes
    // pyproject's `torch ==` to `torch >=`, pythonRelaxDeps = true), builds with `buildPythonPackage.override { stdenv =
    // torch.stdenv; }`, and takes torchaudio, torchvision, xformers, bitsandbytes, cupy, flashinfer, nvidia-ml-py from
    // the same set (0.19.0 and 0.20.1 files read, of NixOS/nixpkgs#498040's branch; `cudaSupport ? torch.cudaSupport`, `cudaPackages ? { }`, `gpuTargets ?
    // [ ]`). So the variant's torch must be the set's torch (pkgs/python-set.nix), never an argument.
    releases: [
      {
        version: "0.15",
        servesTorch: { min: "2.9", below: null },
        stableAbi: false,
        cuda: {
          min: "12.8",
          below: "13.0",
          source:
            "barstoolbluz/build-vllm main at 1b17389 (9250468 'vllm: add CUDA 12.8 variants, expand to 88 total'): 88 variants of " +
            "vLLM 0.15.1 at nixpkgs 0182a36 with cudaPackages_12_8 (41) and _12_9 (47) only " +
            "(.flox/pkgs/vllm-python313-cuda12_9-sm90-avx2.nix …), every one keeping bitsandbytes; no CUDA 13 build of 0.15 reported",
        },
        targets: {
          kind: "supportedArchs",
          eras: [
            {
              minCuda: "12.8",
              belowCuda: "13.0",
              archs: ["7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "12.0"],
              family: false,
              source:
                "vllm-project/vllm CMakeLists.txt `CUDA_SUPPORTED_ARCHS` for CUDA >= 12.8 before 10.3 and 12.1 were added " +
                "(the list build recipes for GB10 patch with sed: 'vLLM's cmake/utils.cmake maps 12.1a → 12.0 (nearest " +
                "supported)'); its 12.0a FP4/CUTLASS kernels run on 12.0 only",
            },
          ],
          archFlag: "TORCH_CUDA_ARCH_LIST",
          dotlessFlag: "CUTLASS_NVCC_ARCHS_ENABLED",
          limit: "vLLM's CMakeLists intersects TORCH_CUDA_ARCH_LIST with its CUDA_SUPPORTED_ARCHS (cuda_archs_loose_intersection)",
          source: VLLM_TARGETS_SOURCE,
        },
        source:
          "vLLM 0.15.1: NixOS/nixpkgs#483505 (python3Packages.vllm 0.14.0 -> 0.15.1, 2026-01-24); barstoolbluz/build-vllm " +
          "builds it at 0182a36 on nixpkgs' torch 2.9.1; nixpkgs relaxes its `torch ==` pin to `>=` (postPatch)",
      },
      {
        version: "0.24",
        servesTorch: { min: "2.9", below: null },
        stableAbi: false,
        cuda: {
          min: "13.0",
          below: null,
          source:
            "graham33/nixos-dgx-spark overlays/fixes.nix: 'The 0.24.0 build succeeds here with CUDA 13.4' (aarch64, DGX " +
            "Spark), and vLLM 0.19.0 there with cudaPackages_13_2; NixOS/nixpkgs#498040 (vllm 0.16.0 -> 0.24.0, merged " +
            "2026-08-05): 'The CUDA build is still broken' (CUDA version not stated): no CUDA 12 build of 0.24 is reported",
        },
        targets: {
          kind: "supportedArchs",
          eras: [
            {
              minCuda: "13.0",
              belowCuda: null,
              archs: ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0"],
              family: true,
              source:
                "vllm-project/vllm CMakeLists.txt for CUDA >= 13.0, `set(CUDA_SUPPORTED_ARCHS \"7.5;8.0;8.6;8.7;8.9;9.0;10.0;11.0;12.0\")` " +
                "as quoted from main in vllm-project/vllm#38484 (2026-05-28: a requested 12.1 'gets stripped … the downstream " +
                "per-kernel arch lists then see only 12.0 (or … 12.0f)'); vllm-project/vllm#52708 (2026-08-18): its 12.0f " +
                "family kernels run on GB10 (SASS compared on real GB10); vllm-project/vllm#36835 (only sm_120 is built for " +
                "DGX Spark); graham33/nixos-dgx-spark builds SM121 so",
            },
          ],
          archFlag: "TORCH_CUDA_ARCH_LIST",
          dotlessFlag: "CUTLASS_NVCC_ARCHS_ENABLED",
          limit: "vLLM's CMakeLists intersects TORCH_CUDA_ARCH_LIST with its CUDA_SUPPORTED_ARCHS (cuda_archs_loose_intersection)",
          source: VLLM_TARGETS_SOURCE,
        },
        source:
          "vLLM 0.24.0: NixOS/nixpkgs#498040 (merged 2026-08-05); still 0.24.0 on master at the end of September 2026 " +
          "(graham33/nixos-dgx-spark fixes.nix: 'pending the bump in NixOS/nixpkgs#549327'); nixpkgs relaxes its `torch ==` pin",
      },
    ],
    archList: [
      {
        from: "0.11",
        placement: "none",
        expr:
          '(lib.cmakeFeature "TORCH_CUDA_ARCH_LIST" "${gpuTargetString}") and (lib.cmakeFeature "CUTLASS_NVCC_ARCHS_ENABLED" ' +
          '"${cudaPackages.flags.cmakeCudaArchitecturesString}"), gpuTargetString = gpuTargets when given, else ' +
          "flags.cudaCapabilities ∩ supportedTorchCudaCapabilities (throwing 'No supported GPU targets specified' when empty)",
        source:
          "nixpkgs pkgs/development/python-modules/vllm/default.nix, the 0.19.0 (00fa62a) and 0.20.1 copies read (NixOS/nixpkgs#498040's branch, not master; 0.24.0 came from it): cmakeFlags " +
          "under cudaSupport; in the torch scope flags.cudaCapabilities are nixpkgs' defaults, so our builder replaces both " +
          "flags (and TORCH_CUDA_ARCH_LIST in the environment) with the variant's entries",
      },
    ],
    deviceCode: {
      directory: "vllm",
      source: "vllm-project/vllm setup.py: the `vllm._C`, `vllm._moe_C` (and cumem) extensions in the package directory",
    },
    cudaOnly:
      "the catalog models vLLM's CUDA build only (VLLM_TARGET_DEVICE=cuda); nixpkgs' CPU build (VLLM_TARGET_DEVICE=cpu, " +
      "oneDNN) is another program whose promise this project does not check, and its 0.24.0 file marks aarch64-linux bad " +
      "for it ('could not find git for clone of arm_compute-populate', graham33/nixos-dgx-spark fixes.nix)",
    gibPerCompileJob: {
      gib: 6,
      source:
        "graham33/nixos-dgx-spark overlays/fixes.nix caps vLLM's MAX_JOBS at 8 on a DGX Spark (20 cores, 128 GB; 586d458: " +
        "'nvcc/cicc uses ~6 GiB per job'); a third party's NixOS configuration that imports that overlay (host inference01; " +
        "its repository not identified) sets MAX_JOBS=2 for vLLM on its own 15 GB builder: 'nvcc jobs take ~6 GB for vllm " +
        "and ~2 GB for torch … The dgx-spark overlay sets MAX_JOBS=8 for vllm assuming a 128 GB Spark'; " +
        "NixOS/nixpkgs#406675: a build OOM'd until run with --cores 2",
    },
    requiredSystemFeatures: {
      features: ["big-parallel"],
      source:
        "barstoolbluz/build-vllm: every variant sets `requiredSystemFeatures = [ \"big-parallel\" ]` and limits parallel " +
        "CUDA compilation ('CUTLASS/FlashAttn templates use 3-8GB each')",
    },
    fixes: [
      {
        attr: "vllm",
        change: "meta.broken = false; aarch64-linux out of meta.badPlatforms",
        why:
          "nixpkgs marks vllm broken under CUDA with no reason given (NixOS/nixpkgs#553566) pending the bump in " +
          "NixOS/nixpkgs#549327, and bad on aarch64-linux for a CPU-backend failure ('could not find git for clone of " +
          "arm_compute-populate') a CUDA build never reaches; whether #553566 predates these revisions was not found, " +
          "and the change is a no-op where it does not",
        apply: "unbreak",
        when: { pins: ["2c423e03bbafcff28bfadc6781a4a8257f205cb5", "c043004d1c6985732bcc1cbc5a9c9aecbbb4e0f0"] },
        source: "graham33/nixos-dgx-spark overlays/fixes.nix ('The 0.24.0 build succeeds here with CUDA 13.4, so unbreak it')",
      },
      {
        attr: "bitsandbytes",
        change: "-DCOMPUTE_CAPABILITY=<the variant's capabilities without dots> (one capability, not nixpkgs' all)",
        why:
          "CUDA 12.9's CCCL 2.8.2 lacks the _CCCL_PP_SPLICE_WITH_IMPL20 macro, and bitsandbytes built for all 19 " +
          "architectures of the toolkit (nixpkgs' file names none) stops there; restricted to the variant's SM it builds",
        apply: "bnbCapabilities",
        when: { minCuda: "12.9", belowCuda: "13.0" },
        source:
          "barstoolbluz/build-vllm main 1b17389: all 47 .flox/pkgs/vllm-python313-cuda12_9-*.nix at nixpkgs 0182a36 keep " +
          "bitsandbytes and override it with `-DCOMPUTE_CAPABILITY=<the variant's SM>` " +
          "(b276d2c 'bitsandbytes: add single-SM override (CCCL 2.8.2 IMPL20 bug)', 2026-02-24, replacing the filter " +
          "that had removed bitsandbytes; README 'BnB quantization (NF4/INT8) is fully available')",
      },
      {
        attr: "bitsandbytes",
        change: "buildInputs ++ [ cudaPackages.cuda_crt ]",
        why: "CUDA 13 moved the crt/ headers out of cuda_nvcc into cuda_crt, and nixpkgs' bitsandbytes (a vLLM dependency) does not include it",
        apply: "cudaCrt",
        when: { minCuda: "13.0" },
        source: "graham33/nixos-dgx-spark overlays/fixes.nix ('CUDA 13 moved the crt/ headers out of cuda_nvcc into a separate cuda_crt package')",
      },
      {
        attr: "cupy",
        change: "cupy.override { cudaPackages = <the variant's cudaPackages> }",
        why: "nixpkgs' cupy takes a fixed cuDNN 8.9.7 that CUDA 13 sets lack; vLLM depends on cupy under cudaSupport",
        apply: "cupyCudaPackages",
        when: { minCuda: "13.0" },
        source: "graham33/nixos-dgx-spark overlays/fixes.nix (0c8f6eb: 'Override cupy to use cudaPackages from final scope instead of hardcoded cuDNN 8.9.7')",
      },
      {
        attr: "cuda-bindings",
        change: "version 13.4.3 from NVIDIA/cuda-python with its library loaders rewritten",
        why:
          "nixpkgs picks cuda-bindings from a table keyed on the CUDA version that stops at 13.3: 'Unsupported " +
          "cuda-bindings version: 13.4' at evaluation takes vllm with it (tokenspeed-mla -> nvidia-cutlass-dsl); no " +
          "catalog pin carries CUDA 13.4, so it is recorded, not applied",
        when: { minCuda: "13.4" },
        source: "graham33/nixos-dgx-spark overlays/fixes.nix (cuda-bindings, 'that table stops at 13.3 -- on nixpkgs master too, as of 2026-09-26')",
      },
      {
        attr: "flashinfer",
        change: "none here: every CUDA variant's nixpkgs is imported with config.cudaSupport = true (pkgs/nixpkgs.nix)",
        why:
          "flashinfer (a vLLM dependency under cudaSupport) is broken unless the global config.cudaSupport is set, and " +
          "vLLM's CUDA build needs its dependencies built with CUDA too ('You can't just enable cudaSupport for one package')",
        when: {},
        source: "NixOS/nixpkgs#413831 (CertainLach: enable cudaSupport globally); barstoolbluz/build-vllm imports its pin with cudaSupport = true",
      },
    ],
    checkedOnRealBuild: null,
    gpuChecks: [{ key: "vllmCustomOp", label: "vllm._C's silu_and_mul custom op on CUDA against torch (no model download)" }],
    buildSeconds: {
      seconds: 2 * 60 * 60,
      source:
        "NixOS/nixpkgs#413831 (CertainLach: 'the build of vllm takes very long time, around 2 hours for me on threadripper " +
        "CPU'); the issue that asked for vLLM quotes '>60 GB RAM and 35 min for one architecture on a 16-core aarch64' " +
        "(not re-read here); graham33/nixos-dgx-spark builds it in CI within nixbuild.net's 6-hour limit. Not measured here",
    },
    caveats: [
      {
        note:
          "vLLM's nixpkgs file was not built here: NixOS/nixpkgs#498040 merged 0.24.0 with 'The CUDA build is still broken'; " +
          "the recipes this catalog follows (barstoolbluz/build-vllm at 0182a36, graham33/nixos-dgx-spark with CUDA 13.2/13.4) " +
          "are the evidence that it builds",
      },
    ],
    inEnv: false,
    optIn: true,
    source:
      "vllm-project/vllm; nixpkgs python-modules/vllm (0.11.0, 0.19.0, 0.20.1 copies read); barstoolbluz/build-vllm; " +
      "graham33/nixos-dgx-spark",
  },
];
