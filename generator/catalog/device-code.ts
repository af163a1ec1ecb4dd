/**
 * Where the device code in a variant's libraries comes from, and what each origin's build puts there: the facts
 * behind the per-origin promise that `verify` and the Nix static check hold a build to (generator/verify/origins.ts).
 *
 * nixpkgs' torch links three third-party libraries with device code statically, and their code is compiled by
 * their own derivations, from the CUDA package set's `flags`, not from torch's `gpuTargets`:
 * - NCCL → libtorch_cuda.so (`USE_STATIC_NCCL`, nccl's `static` output);
 * - MAGMA → libtorch_cuda_linalg.so (`magma-cuda-static`, PyTorch's BUILD_LAZY_CUDA_LINALG);
 * - NVSHMEM's device library → libtorch_nvshmem.so (torch with `withNvshmem`).
 * The rest of torch's CUDA inputs are shared libraries (cuBLAS, cuDNN, cuSPARSELt, cuDSS, …: their device code
 * stays in their own files, which the variant does not promise) or header-only (CUTLASS, CUB: compiled inside
 * torch's own sources with torch's flags, so torch's origin).
 *
 * What a host link of such archives shows (a toy on an H100 host with CUDA 13.0, tests/fixtures/probes/
 * h100-static-link-toy): device-linked (`-dc` + `-dlink`) code appears as SASS for each `sm_` of the link and its PTX
 * stays in the relocatable fatbin, which `cuobjdump --list-ptx` does not list (only `-all` does); the CUDA runtime
 * does JIT-compile it (H100, tests/fixtures/probes/h100-real-builds: a bitsandbytes build with SASS sm_80 only ran on
 * the 9.0 card and failed with CUDA_DISABLE_PTX_JIT=1), so probe.py reads `-all` too; whole-program objects (`-dw`, plain `-c`) keep their PTX, listed; a family-specific `sm_100f`
 * cubin is named `…sm_100.cubin` by `--list-elf` and `--list-text`, and `arch = sm_100f` by `-symbols`.
 */
import type { BundledDeviceCode, Catalog } from "./schema.ts";

/**
 * A third-party library with device code that nixpkgs' torch links statically.
 * - `library`: the file of torch's `lib/` that holds its device code.
 * - `names`: patterns (JavaScript regular expressions, matched against the first identifier of a kernel's name as
 *   the probe reports it, e.g. "ncclDevKernel_AllReduce_Sum_f32_RING_LL") that mark its kernels.
 * - `libraryDefault`: every kernel of `library` that no pattern of another origin claims is this library's (MAGMA's
 *   kernels share no prefix; PyTorch's own linalg code in libtorch_cuda_linalg.so calls cuSOLVER and MAGMA and holds
 *   no kernels: PyPI torch 2.11.0's file on the H100 host holds MAGMA kernels only).
 * - `flags`: how its derivation hands nvcc the CUDA set's capabilities: "gencode" = `NVCC_GENCODE =
 *   flags.gencodeString` (SASS per capability, plus a PTX of the last capability when `cudaForwardCompat`), "cmake" =
 *   `CMAKE_CUDA_ARCHITECTURES = flags.cmakeCudaArchitecturesString` without `-real` (SASS and PTX per capability).
 * - `deviceLinkedByTorch`: relocatable device code (CUDA_SEPARABLE_COMPILATION) that torch's own device link
 *   (libtorch_nvshmem.so, `-rdc=true`) resolves: it shows at torch's capabilities exactly, in the same cubins as
 *   torch's own kernels, and its PTX stays in the relocatable fatbin (not listed).
 * - `ptxVisible`: whether its PTX reaches the listed fatbin of `library` ("gencode": only from whole-program `-dw`
 *   objects, NCCL's symmetric kernels; "cmake" without separable compilation: every object).
 * - `extraSass`: SASS its own build adds whatever the flags say, per CUDA range (`minCuda` inclusive, `belowCuda`
 *   exclusive).
 * - `linkedAt`: the catalog pins (nixpkgs revisions) whose torch links it: "every pin", or the list. For a revision
 *   the catalog does not know, the promise cannot say (the check prints "–").
 */
export type { BundledDeviceCode } from "./schema.ts";

const TORCH_NIX =
  "nixpkgs pkgs/development/python-modules/torch/source/default.nix (torch 2.13.0 file, a8b649e; same text at the " +
  "2.12 era in Swarsel/nixpkgs 4aa6836)";

export const bundledDeviceCode: BundledDeviceCode[] = [
  {
    origin: "nccl",
    label: "NCCL",
    library: "libtorch_cuda.so",
    // ncclDevKernel_* (device-linked collectives), ncclSymkDevKernel_* (symmetric kernels), ncclDevFunc_* helpers.
    names: ["^nccl[A-Z]"],
    libraryDefault: false,
    flags: "gencode",
    deviceLinkedByTorch: false,
    ptxVisible: true,
    extraSass: [
      {
        sass: "sm_100a",
        minCuda: "12.7",
        belowCuda: "12.9",
        why: "NCCL's FP8 symmetric kernels (NVCC_GENCODE_LDMC_FP8 = compute_100a,sm_100a on CUDA 12.7-12.8)",
      },
      {
        sass: "sm_100f",
        minCuda: "12.9",
        belowCuda: null,
        why: "NCCL's FP8 symmetric kernels (NVCC_GENCODE_LDMC_FP8 = compute_100f,sm_100f on CUDA >= 12.9)",
      },
    ],
    linkedAt: "every pin",
    source:
      `${TORCH_NIX}: cudaInputs nccl and (lib.getOutput "static" nccl), USE_NCCL = USE_SYSTEM_NCCL = USE_STATIC_NCCL ` +
      "= useSystemNccl (default cudaSupport); nixpkgs pkgs/development/cuda-modules/packages/nccl.nix (0145c6d, NCCL " +
      "2.30.7-1): makeFlags NVCC_GENCODE=${flags.gencodeString}, outputs out/dev/static; NVIDIA/nccl src/device/" +
      "Makefile (v2.27.3-1 … v2.30.7-1): collectives -dc and device-linked into device_glue.o, symmetric kernels " +
      "-dw with NVCC_GENCODE, FP8 ones with NVCC_GENCODE_LDMC_FP8 only; PyTorch cmake/Modules/FindNCCL.cmake " +
      "(USE_STATIC_NCCL → nccl_static)",
    inferred:
      "static at every pin: USE_STATIC_NCCL = USE_NCCL read in nixpkgs' torch files 2.7.1 (00d0ced), 2.9.1 (6b516b4) and " +
      "2.13.0 (the 2.8.0 file itself was not read; before nccl had a `static` output, libnccl_static.a was in `dev`, " +
      "nccl.nix b6fea07); the FP8 kernels exist from NCCL 2.27.3 and nixpkgs' NCCL is 2.27.6 from NixOS/nixpkgs#427804 " +
      "(2025-07-23, 'nccl 2.27 is required for the upcoming torch 2.8'), 2.28.7 from #456520, 2.30.7 at 0145c6d: every pin " +
      "is taken to have NCCL >= 2.27; the exact NCCL of the 2026 pins was not read",
  },
  {
    origin: "magma",
    label: "MAGMA",
    library: "libtorch_cuda_linalg.so",
    names: ["^magma"],
    libraryDefault: true,
    flags: "cmake",
    deviceLinkedByTorch: false,
    ptxVisible: true,
    extraSass: [],
    linkedAt: "every pin",
    source:
      `${TORCH_NIX}: effectiveMagma = magma-cuda-static.override { inherit cudaPackages; } (static since ` +
      "NixOS/nixpkgs#238465); nixpkgs pkgs/by-name/ma/magma/package.nix (85b7ecd, MAGMA 2.9.0): GPU_TARGET \"\" and " +
      "CMAKE_CUDA_ARCHITECTURES = flags.cmakeCudaArchitecturesString (no -real); icl-utk-edu/magma v2.9.0 CMakeLists.txt " +
      "(uses CMAKE_CUDA_ARCHITECTURES as given, no separable compilation); CMake CUDA_ARCHITECTURES ('no suffix: both " +
      "real and virtual'); --generate-code=arch=compute_90,code=[compute_90,sm_90] seen on an H100 host",
    inferred:
      "magma-cuda-static read in nixpkgs' torch files 2.7.1, 2.9.1 and 2.13.0 (static since #238465, June 2023); MAGMA " +
      "2.9.0 in every magma package.nix read; the files at the pins themselves were not read",
  },
  {
    origin: "nvshmem",
    label: "NVSHMEM",
    library: "libtorch_nvshmem.so",
    names: ["^nvshmemi?x?_"],
    libraryDefault: false,
    flags: "cmake",
    deviceLinkedByTorch: true,
    ptxVisible: false,
    extraSass: [],
    // NixOS/nixpkgs#508278 ("python3Packages.torch: build with nvshmem support", 2026-04-09) added withNvshmem; the
    // catalog pins after it: 549bd84 (2026-05-05), a311611 (26.05, branched after it), 2c423e0 (2026-08-22), c043004.
    linkedAt: [
      "549bd84d6279f9852cae6225e372cc67fb91a4c1",
      "a3116115851d68b8952a2a4221cc25a84e56b532",
      "2c423e03bbafcff28bfadc6781a4a8257f205cb5",
      // torch 2.13.0 (every stored 2.13.0 file: withNvshmem, USE_NVSHMEM in env, cudaPackages.libnvshmem in buildInputs)
      "c043004d1c6985732bcc1cbc5a9c9aecbbb4e0f0",
    ],
    source:
      "NixOS/nixpkgs#508278 (2026-04-09: withNvshmem, cudaPackages.libnvshmem in buildInputs, USE_NVSHMEM); " +
      `${TORCH_NIX}: withNvshmem ? (cudaSupport && cudaPackages.libnvshmem.meta.available), USE_NVSHMEM; nixpkgs ` +
      "pkgs/development/cuda-modules/packages/libnvshmem.nix (ee7ded0, 3.4.5-0): CMAKE_CUDA_ARCHITECTURES = " +
      "flags.cmakeCudaArchitecturesString; NVIDIA/nvshmem v3.4.5-0: nvshmem_device STATIC with CUDA_SEPARABLE_COMPILATION; " +
      "PyTorch caffe2/CMakeLists.txt: torch_nvshmem SHARED, CUDA_SEPARABLE_COMPILATION ON, links the device library; " +
      "PyPI torch 2.11.0's libtorch_nvshmem.so on the H100 host: nvshmemi_* functions in the same cubins as " +
      "c10d::nvshmem_extension kernels, one cubin per TORCH_CUDA_ARCH_LIST entry, no PTX",
    inferred:
      "the pins after #508278 link it: its merge date was not seen (its description is of 2026-04-09, before 549bd84 of " +
      "2026-05-05); the 2.9.1 and 2.10.0 torch files read have no withNvshmem; that torch's static link takes " +
      "libnvshmem_device.a is PyTorch's CMake (read), not a listing of a nixpkgs build",
  },
];

/**
 * Arch-specific SASS a correct PyTorch build carries beyond TORCH_CUDA_ARCH_LIST: PyTorch's
 * `cmake/Codegen.cmake` `_BUILD_FOR_ADDITIONAL_ARCHS` compiles a few ATen sources (RowwiseScaledMM.cu,
 * ScaledGroupMM.cu, GroupMM.cu) also for these targets when the listed capability is in the build
 * (`_existing_arch_flags MATCHES compute_XY`), gated on the CUDA version where nvcc needs it.
 * Source: pytorch/pytorch cmake/Codegen.cmake (2.10/2.11 era, quoted verbatim in a doc dump of a checkout; the 2.8
 * file at 629e381 has 89/90a/100a only), PRs #148274 and #149978; confirmed on a PyPI torch 2.11.0+cu130 built for
 * 7.5;8.0;8.6;9.0;10.0;12.0, whose libtorch_cuda.so carries exactly sm_89, sm_90a, sm_100a, sm_103a, sm_120a and
 * sm_121a besides (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130, cuobjdump --list-elf on an H100 host).
 */
export const EXTRA_SASS: Catalog["extraSass"] = {
  entries: [
    { when: "8.6", adds: "sm_89", minCuda: null },
    { when: "9.0", adds: "sm_90a", minCuda: null },
    { when: "10.0", adds: "sm_100a", minCuda: null },
    { when: "10.0", adds: "sm_103a", minCuda: "12.9" },
    { when: "11.0", adds: "sm_110a", minCuda: "13.0" },
    { when: "12.0", adds: "sm_120a", minCuda: null },
    { when: "12.0", adds: "sm_121a", minCuda: "12.9" },
  ],
  source:
    "pytorch/pytorch cmake/Codegen.cmake _BUILD_FOR_ADDITIONAL_ARCHS (2.10/2.11 era; 2.8 at 629e381 has 89/90a/100a only), " +
    "PRs #148274 and #149978; PyPI torch 2.11.0+cu130's libtorch_cuda.so (cuobjdump --list-elf on an H100 host, " +
    "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130)",
};


/**
 * Heads (first identifiers) the probe reports that belong to no origin: code the compiler and the device runtime add
 * to cubins of any origin (`__cuda_sm20_div_u64`, `$__internal_3_$__cuda_sm20_rem_s64` → "__internal_3_", `__nv_…`,
 * `__assertfail`, `vprintf`), seen in every library of the H100 recording.
 */
export const COMPILER_HELPER_NAMES: Catalog["compilerHelperNames"] = {
  patterns: ["^__cuda_", "^__internal_", "^__nv_", "^__unnamed", "^__assertfail$", "^vprintf$"],
  source: "cuobjdump -symbols of every library of the H100 recording (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130-symbols): heads that belong to no origin",
};
