/**
 * The build matrix: which values of each axis you want. Edit this file, then run `npm run generate`.
 *
 * Allowed values come from the catalog (generator/catalog/); `npm run generate` names the field and lists them
 * when a value is unknown. Combinations the toolchain cannot build or the hardware cannot run are dropped with a
 * reason (see BUILD_MATRIX.md and `npx variant-matrix list --excluded`).
 */
import { defineMatrix } from "./generator/matrix/schema.ts";

export default defineMatrix({
  // PyTorch releases, each with the nixpkgs revision that carries it (torchaudio is paired by the catalog).
  // 2c423e0… = nixos-unstable of 2026-08-22: PyTorch 2.12.0 with torchaudio 2.11.0 (torchaudio's last release,
  // built on PyTorch's stable ABI: it serves torch >= 2.11), cudaPackages_12_8, _12_9 and _13_0,
  // python312-314Packages. For the stable channel, use { torch: "2.11.0", nixpkgs: "a3116115851d68b8952a2a4221cc25a84e56b532" }
  // (nixos-26.05 of 2026-09-01). Both tarball hashes are in the catalog (generator/catalog/torch.ts).
  // A pin the catalog has no hash for needs `sha256` here (what `nix-prefetch-url --unpack URL` prints).
  releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
  python: ["3.13"],
  // 12.8 for the widest driver support (>= 570), 12.9 and 13.0 for native SM103/SM121 code and SM110 (Thor).
  cuda: ["12.8", "12.9", "13.0"],
  // GPU architectures by SM (compute capability without the dot).
  gpus: ["75", "80", "86", "89", "90", "100", "103", "110", "120", "121"],
  // CPU ISA levels; x86_64: avx2 avx512 avx512bf16 avx512vnni; aarch64: armv8_2 armv9.
  isas: ["avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"],
  // One CPU-only variant per (release, Python, ISA).
  cpuOnly: true,
  // What each combination gets: pytorch, the packages built on it (torchaudio, torchvision: the catalog's table,
  // generator/catalog/packages.ts) and torch-env, one Python environment of them all. Leave out for these four. The
  // CUDA extensions "flash-attn", "xformers" and "bitsandbytes" are built only when listed here (docs/packages.md).
  packages: ["pytorch", "torchaudio", "torchvision", "torch-env"],
  // Named environments: per combination one more variant, NAME-env-… (llm-env-python313-cuda13_0-sm121-armv9), holding
  // the torch stack plus these attributes of the variant's Python set, all built on its torch (docs/environments.md).
  // environments: { llm: ["transformers", "accelerate", "peft"], audio: ["librosa", "soundfile"] },
  policy: {
    // "serve": a GPU this CUDA's nvcc does not know is served by same-major binary-compatible code
    // (sm121 on CUDA 12.8 compiles 12.0, sm103 compiles 10.0), with a note. "drop": drop such combinations.
    binaryCompat: "serve",
    // "torch": the capabilities reach torch (gpuTargets) and the packages built on it; the rest of the CUDA set
    // keeps nixpkgs' defaults, so binary caches serve it. "packageSet": every CUDA library compiled for exactly
    // this GPU, all built from source. Variants nixpkgs' defaults cannot serve (SM110 Thor is Jetson) use
    // "packageSet" either way (see each variant's notes).
    cudaCapabilitiesScope: "torch",
  },
});
