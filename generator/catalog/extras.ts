/**
 * What the extras of a named environment (matrix.ts `environments`) promise: facts per nixpkgs Python attribute, with
 * sources. An extra is any attribute of the variant's Python set; it is taken from the set whose `torch` is the
 * variant's torch (pkgs/python-set.nix), so an extra that takes `torch` is built on it. What the name of the
 * environment promises about an extra:
 * - every extra: the version the pinned nixpkgs carries, and that it imports on the variant's torch (the environment's
 *   static check, generator/verify/probe.py `--extras`);
 * - its device code (GPU kernels it compiles or ships itself): judged only where this table says how the variant's
 *   capabilities reach it; everywhere else `explain` and `verify` say it is not judged.
 * An attribute missing from this table is "unknown": its version and import are checked, its device code (if it has
 * any) is not judged.
 */
import type { ExtraFact } from "./schema.ts";

/**
 * deepspeed in nixpkgs (pkgs/development/python-modules/deepspeed/default.nix, read at 0699369 (0.19.5); the
 * attribute was added by NixOS/nixpkgs#541806 "python3Packages.deepspeed: init at 0.19.2", opened 2026-07-14, so the
 * nixos-unstable pins of 2026-08-22 and later carry it and nixos-26.05 does not (inferred from the dates)):
 * - `inherit (torch) cudaCapabilities cudaSupport;` and `env.TORCH_CUDA_ARCH_LIST = concatStringsSep ";"
 *   cudaCapabilities` when cudaSupport: the build sees the variant's capabilities;
 * - but no `DS_BUILD_OPS`/`DS_BUILD_*` is set, so setup.py compiles no op: the package holds Python and the ops'
 *   sources; `postPatch` hard-codes `cuda_home` to a symlinkJoin of torch's cudaPackages cuda_cudart and cuda_nvcc
 *   "for JIT op compilation at runtime";
 * - at run time DeepSpeed's op builder (op_builder/builder.py at deepspeedai/DeepSpeed 06450fc) compiles each op in
 *   `OpBuilder.jit_load`, which stashes TORCH_CUDA_ARCH_LIST, sets it to "" for the build ("Torch will try and apply
 *   whatever CCs are in the arch list … we have already set the intended targets ourselves") and restores it after;
 *   with `jit_mode` set, `CUDAOpBuilder.compute_capability_args` takes "compute capabilities of all visible cards …
 *   plus PTX" (the highest gets +PTX). TORCH_CUDA_ARCH_LIST is read only in its other mode, pre-built ops
 *   (`DS_BUILD_OPS` / `DS_BUILD_*` at setup.py time), which nixpkgs does not set. So no TORCH_CUDA_ARCH_LIST, the
 *   build's or the user's, decides what the JIT compiles.
 * So the variant's capabilities never become deepspeed device code: nothing built here to judge; the ops are the
 * user's host compiling for its own GPUs with the variant's nvcc, on the variant's torch.
 */
const deepspeed: ExtraFact = {
  attr: "deepspeed",
  deviceCode: "runtimeJit",
  takesTorch: true,
  promise:
    "its version, and that it imports on the variant's torch. Its CUDA ops are not built: nixpkgs sets TORCH_CUDA_ARCH_LIST " +
    "from torch.cudaCapabilities but no DS_BUILD_* flag, and DeepSpeed compiles each op at run time (torch.utils.cpp_extension, " +
    "nvcc of torch's cudaPackages) for the GPUs the process sees plus PTX of the highest; its jit_load blanks " +
    "TORCH_CUDA_ARCH_LIST for that build, so the variable matters only for pre-built ops (DS_BUILD_OPS): its device code is " +
    "not judged",
  since: "NixOS/nixpkgs#541806 (init at 0.19.2, 2026-07)",
  source:
    "nixpkgs pkgs/development/python-modules/deepspeed/default.nix at 0699369 (0.19.5: cuda-native-redist, env.TORCH_CUDA_ARCH_LIST, " +
    "no DS_BUILD_OPS); NixOS/nixpkgs#541806; deepspeedai/DeepSpeed op_builder/builder.py at 06450fc: OpBuilder.jit_load " +
    "(os.environ[\"TORCH_CUDA_ARCH_LIST\"] = \"\" for the build, restored after) and CUDAOpBuilder.compute_capability_args " +
    "(\"Under jit_mode compute capabilities of all visible cards will be used plus PTX\"; TORCH_CUDA_ARCH_LIST only in " +
    "cross-compile mode)",
};

/** Pure-Python packages on torch that users list beside it (seeds 002 and 004): no device code of their own. */
const purePython = (attr: string, what: string, takesTorch: boolean): ExtraFact => ({
  attr,
  deviceCode: "none",
  takesTorch,
  promise: `its version, and that it imports on the variant's torch; ${what}`,
  source: `PyPI: ${attr} publishes one py3-none-any wheel per release (pure Python); nixpkgs pkgs/development/python-modules/${attr}/default.nix`,
});

/** The extras this catalog knows, by nixpkgs attribute. */
export const EXTRAS: ExtraFact[] = [
  deepspeed,
  purePython("transformers", "pure Python, it runs torch's kernels", true),
  purePython("accelerate", "pure Python, it runs torch's kernels", true),
  purePython("peft", "pure Python, it runs torch's kernels", true),
  purePython("diffusers", "pure Python, it runs torch's kernels", true),
  purePython("einops", "pure Python; it does not take torch (it works on whatever array library it is given)", false),
  {
    attr: "librosa",
    deviceCode: "none",
    takesTorch: false,
    promise: "its version, and that it imports; CPU only (numpy, scipy, soundfile), no torch and no device code",
    source: "PyPI: librosa publishes one py3-none-any wheel per release; nixpkgs pkgs/development/python-modules/librosa/default.nix",
  },
  {
    attr: "soundfile",
    deviceCode: "none",
    takesTorch: false,
    promise: "its version, and that it imports; a CFFI binding of libsndfile (CPU), no torch and no device code",
    source: "python-soundfile docs (\"based on libsndfile, CFFI and NumPy\"); nixpkgs pkgs/development/python-modules/soundfile/default.nix",
  },
];
