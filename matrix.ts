/**
 * The build matrix: which values of each axis you want. Edit this file, then run `npm run generate`.
 *
 * Allowed values come from the catalog (generator/catalog/); `npm run generate` names the field and lists them
 * when a value is unknown. Combinations the toolchain cannot build or the hardware cannot run are dropped with a
 * reason (see BUILD_MATRIX.md and `npx variant-matrix list --excluded`).
 */
import { defineMatrix } from "./generator/schema.ts";

export default defineMatrix({
  // PyTorch releases, each with the nixpkgs revision that carries it (torchaudio is paired by the catalog).
  // fe5e41d7… = PyTorch 2.8.0 / torchaudio 2.8.0, CUDA 12.8, Python 3.13 (barstoolbluz/build-pytorch README).
  releases: [{ torch: "2.8.0", nixpkgs: "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3" }],
  python: ["3.13"],
  cuda: ["12.8"],
  // GPU architectures by SM (compute capability without the dot).
  gpus: ["80", "86", "89", "90", "100", "103", "110", "120", "121"],
  // CPU ISA levels; x86_64: avx2 avx512 avx512bf16 avx512vnni; aarch64: armv8_2 armv9.
  isas: ["avx2", "avx512", "avx512bf16", "avx512vnni", "armv8_2", "armv9"],
  // One CPU-only variant per (release, Python, ISA).
  cpuOnly: true,
  packages: ["pytorch", "torchaudio"],
  policy: {
    // "serve": a GPU this CUDA's nvcc does not know is served by same-major binary-compatible code
    // (sm121 on CUDA 12.8 compiles 12.0, sm103 compiles 10.0), with a note. "drop": drop such combinations.
    binaryCompat: "serve",
    // true: nixpkgs config.cudaCapabilities too, so magma, nccl, … are compiled for exactly these capabilities
    // (coherent on the device, but no binary-cache hits for them). false: torch's gpuTargets only.
    cudaCapabilitiesForPackageSet: true,
  },
});
