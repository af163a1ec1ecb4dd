/**
 * GPU architectures, keyed by SM number (compute capability without the dot).
 *
 * One row per compute capability: the products that report it, its architecture family, and the Nix systems a
 * host of that GPU can be (ARCHITECTURE.md rule 5: a GPU that exists only inside an Arm SoC — Xavier, Orin, Thor,
 * GB10 — is `aarch64-linux` only; discrete/datacenter GPUs are listed for both systems, since e.g. H100 and B200
 * ship in x86 servers while GH200/GB200 put the same SM next to a Grace CPU).
 *
 * Which CUDA versions can compile for each SM is NOT here: that is a property of the toolkit (`cuda.ts`).
 *
 * Sources: NVIDIA "CUDA GPU Compute Capability" (developer.nvidia.com/cuda-gpus) and "Legacy CUDA GPU Compute
 * Capability" (developer.nvidia.com/cuda-legacy-gpus); nixpkgs
 * pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix (`cudaCapabilityToInfo`: archName, isJetson).
 */
import type { GpuArch, NixpkgsCapabilityInfo, NixpkgsCapabilityTable } from "./schema.ts";

const CUDA_GPUS = "NVIDIA 'CUDA GPU Compute Capability' table (developer.nvidia.com/cuda-gpus)";
const LEGACY_GPUS = "NVIDIA 'Legacy CUDA GPU Compute Capability' table (developer.nvidia.com/cuda-legacy-gpus)";
const NIX_DB = "nixpkgs pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix (cudaCapabilityToInfo)";

export const gpus: GpuArch[] = [
  {
    sm: "70",
    capability: "7.0",
    family: "Volta",
    products: ["V100", "Quadro GV100", "TITAN V"],
    label: "V100",
    systems: ["x86_64-linux", "aarch64-linux"],
    note: "CUDA 13.0 removed offline compilation for Volta (sm_70/sm_72): build it with CUDA 12.x only.",
    source: `${LEGACY_GPUS}; ${NIX_DB} ("7.0" Volta, maxCudaMajorMinorVersion 12.9)`,
  },
  {
    sm: "72",
    capability: "7.2",
    family: "Volta",
    products: ["Jetson AGX Xavier", "Jetson Xavier NX"],
    label: "Jetson AGX Xavier",
    systems: ["aarch64-linux"],
    note: "Tegra SoC GPU (aarch64 only).",
    // Carmel is Armv8.2-A but reports no asimddp, so not even armv8_2 (+dotprod) runs on it.
    socCpu: {
      cpu: "NVIDIA Carmel (Armv8.2-A, no dot product)",
      isas: [],
      source: "LLVM test data, Carmel /proc/cpuinfo Features line (ends 'asimdrdm dcpop', no asimddp)",
    },
    source: `${LEGACY_GPUS}; ${NIX_DB} ("7.2" Volta, isJetson = true)`,
  },
  {
    sm: "75",
    capability: "7.5",
    family: "Turing",
    products: ["T4", "T4G (AWS g5g, Graviton2 host)", "Quadro RTX 6000", "GeForce RTX 2080 Ti"],
    label: "T4 / T4G",
    systems: ["x86_64-linux", "aarch64-linux"],
    note: "T4G is the T4 offered on AWS g5g instances, whose host CPU is Graviton2 (aarch64).",
    source: `${NIX_DB} ("7.5" Turing: Tesla T4, RTX 20xx); the guide 'Building PyTorch 2.9.1 for ARM64 with T4G (sm_75) Support' (T4G on AWS g5g is sm_75)`,
  },
  {
    sm: "80",
    capability: "8.0",
    family: "Ampere",
    products: ["A100", "A30"],
    label: "A100",
    systems: ["x86_64-linux", "aarch64-linux"],
    source: `${CUDA_GPUS}; ${NIX_DB} ("8.0" Ampere: A100)`,
  },
  {
    sm: "86",
    capability: "8.6",
    family: "Ampere",
    products: ["A40", "A10", "A16", "A2", "RTX A6000", "GeForce RTX 3090"],
    label: "A40 / A10 / RTX 3090",
    systems: ["x86_64-linux", "aarch64-linux"],
    source: `${CUDA_GPUS} (8.6: NVIDIA A40, A10, A16, A2, RTX A6000, GeForce RTX 3090); ${NIX_DB}`,
  },
  {
    sm: "87",
    capability: "8.7",
    family: "Ampere",
    products: ["Jetson AGX Orin", "Jetson Orin NX", "Jetson Orin Nano"],
    label: "Jetson AGX Orin",
    systems: ["aarch64-linux"],
    note: "Tegra T234 SoC GPU: aarch64 only.",
    socCpu: {
      cpu: "Arm Cortex-A78AE (Armv8.2-A with FP16 and dot product, no SVE)",
      isas: ["armv8_2"],
      source: "Arm Cortex-A78AE Technical Reference Manual (Armv8.2-A; FP16, DotProd; no SVE); NVIDIA Jetson AGX Orin data sheet",
    },
    source: `${CUDA_GPUS} (8.7: Jetson AGX Orin, Orin NX, Orin Nano); ${NIX_DB} ("8.7" isJetson = true)`,
  },
  {
    sm: "89",
    capability: "8.9",
    family: "Ada Lovelace",
    products: ["L4", "L40", "L40S", "RTX 6000 Ada", "GeForce RTX 4090"],
    label: "L4 / L40S / RTX 4090",
    systems: ["x86_64-linux", "aarch64-linux"],
    // L40S is Ada (8.9), not Hopper: the the README 'TorchAudio Architecture-Specific Builds' README that lists it under SM90 is wrong.
    note: "L40S is Ada Lovelace (8.9), not Hopper.",
    source: `${CUDA_GPUS} (8.9: NVIDIA L4, L40, L40S, GeForce RTX 4090); ${NIX_DB} ("8.9" Ada)`,
  },
  {
    sm: "90",
    capability: "9.0",
    family: "Hopper",
    products: ["H100", "H200", "GH200"],
    label: "H100 / H200 / GH200",
    systems: ["x86_64-linux", "aarch64-linux"],
    note: "GH200 pairs the GPU with a Grace (Neoverse V2) CPU; H100/H200 also ship in x86 servers.",
    source: `${CUDA_GPUS} (9.0: NVIDIA GH200, H200, H100); ${NIX_DB} ("9.0" Hopper)`,
  },
  {
    sm: "100",
    capability: "10.0",
    family: "Blackwell",
    products: ["B200", "GB200"],
    label: "B200 / GB200",
    systems: ["x86_64-linux", "aarch64-linux"],
    source: `${CUDA_GPUS} (10.0: NVIDIA GB200, B200); ${NIX_DB} ("10.0" Blackwell)`,
  },
  {
    sm: "103",
    capability: "10.3",
    family: "Blackwell",
    products: ["B300", "GB300"],
    label: "B300 / GB300",
    systems: ["x86_64-linux", "aarch64-linux"],
    source: `${CUDA_GPUS} (10.3: NVIDIA GB300, B300); ${NIX_DB} ("10.3" minCudaMajorMinorVersion 12.9)`,
  },
  {
    sm: "110",
    capability: "11.0",
    family: "Blackwell",
    products: ["Jetson AGX Thor (Jetson T5000, T4000)", "DRIVE AGX Thor"],
    label: "Jetson/DRIVE Thor",
    systems: ["aarch64-linux"],
    // Surprise: the same silicon was sm_101 in CUDA 12.8/12.9; CUDA 13.0 renamed it sm_110 and dropped 10.1.
    note:
      "Thor was compute capability 10.1 (sm_101) in CUDA 12.8–12.9; CUDA 13.0 renamed it 11.0 (sm_110) and " +
      "removed 10.1. There is no 11.x code before CUDA 13.0, and 10.x code does not run on 11.0 (binary " +
      "compatibility never crosses a major), so Thor needs CUDA 13.0+. SoC GPU: aarch64 only.",
    socCpu: {
      cpu: "Arm Neoverse V3AE (Armv9.2-A, SVE2, I8MM)",
      isas: ["armv8_2", "armv9"],
      source: "NVIDIA Jetson Thor product page / Jetson AGX Thor data sheet (Arm Neoverse-V3AE CPU); Armv9.2-A includes FEAT_I8MM",
    },
    source:
      `${CUDA_GPUS} (11.0: Jetson T5000, Jetson T4000); ${NIX_DB} ("10.1" Thor for CUDA 12.7–12.9, ` +
      `"11.0" Thor from 13.0: "NVIDIA changed the compute capability ... to 11.0 in CUDA 13.0"); ` +
      "nvcc --list-gpu-code of CUDA 13.0 (lists sm_110, no sm_101)",
  },
  {
    sm: "120",
    capability: "12.0",
    family: "Blackwell",
    products: ["GeForce RTX 5090", "RTX PRO 6000 Blackwell (Server / Workstation / Max-Q)", "GeForce RTX 5080"],
    label: "RTX 5090 / RTX PRO 6000 Blackwell",
    systems: ["x86_64-linux", "aarch64-linux"],
    source: `${CUDA_GPUS} (12.0: RTX PRO 6000 Blackwell editions, GeForce RTX 5090); ${NIX_DB} ("12.0" min 12.8)`,
  },
  {
    sm: "121",
    capability: "12.1",
    family: "Blackwell",
    products: ["DGX Spark (GB10)"],
    label: "DGX Spark (GB10)",
    systems: ["aarch64-linux"],
    note: "GB10 is an SoC (Arm CPU + Blackwell GPU): aarch64 only.",
    socCpu: {
      cpu: "10× Arm Cortex-X925 + 10× Cortex-A725 (Armv9.2-A, SVE2, I8MM)",
      isas: ["armv8_2", "armv9"],
      source: "NVIDIA DGX Spark porting guide (GB10 CPU: Cortex-X925 and Cortex-A725, Armv9.2-A)",
    },
    source: `${CUDA_GPUS} (12.1: NVIDIA GB10 (DGX Spark)); ${NIX_DB} ("12.1" NVIDIA DGX Spark, min 12.9)`,
  },
];

const NIXPKGS_CAPS_SOURCE =
  "nixpkgs pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix at 55d5788ba119d2eebd029c1997baef6db81d9372 " +
  "(cudaCapabilityToInfo; isArchitectureSpecific/isFamilySpecific default to the a/f suffix); \"8.8\" is commented out there";

/**
 * Jetson capabilities never share a CUDA set with non-Jetson ones. Sources disagree on mixing, by era: nixpkgs' 2025
 * code (_cuda/lib/flags.nix bd8fef5, packages/backendStdenv.nix) refuses any Jetson capability beside a non-Jetson one
 * ("Jetson devices cannot be targeted by the same binaries which target non-Jetson devices"); the 2026
 * backendStdenv/default.nix (0cdfaf4) refuses it only before Thor (< 10.1) and lets Thor's 10.1/11.0 join others on
 * linux-sbsa (_cuda/lib/redist.nix getRedistSystem). The catalog's pins span both eras (fe5e41d is of 2025), so the
 * stricter rule is kept for every Jetson capability: it holds under both.
 */
const JETSON_RULE =
  "nixpkgs _cuda/db/bootstrap/cuda.nix (isJetson); backendStdenv/default.nix (0cdfaf4: the pre-/post-Thor rules); _cuda/lib/flags.nix (bd8fef5)";

/** Builds one row; `a`/`f` come from the suffix, as in nixpkgs' defaults. */
function cap(capability: string, archName: string, minCuda: string, o: { maxCuda?: string; isJetson?: boolean; dontDefaultAfter?: string } = {}): NixpkgsCapabilityInfo {
  return {
    capability,
    archName,
    isJetson: o.isJetson ?? false,
    isArchitectureSpecific: capability.endsWith("a"),
    isFamilySpecific: capability.endsWith("f"),
    minCuda,
    maxCuda: o.maxCuda ?? null,
    dontDefaultAfter: o.dontDefaultAfter ?? null,
    source: NIXPKGS_CAPS_SOURCE,
  };
}

/**
 * nixpkgs' capability table (cudaCapabilityToInfo) at 55d5788, every entry in its order: Catalog.nixpkgsCapabilities.
 * Read at one revision, not at each pin: a pin whose own defaults were read carries them (NixpkgsPin
 * .nixpkgsDefaultCapabilities, written by `pin add`).
 */
export const NIXPKGS_CAPABILITIES: NixpkgsCapabilityTable = {
  rev: "55d5788ba119d2eebd029c1997baef6db81d9372",
  source: NIXPKGS_CAPS_SOURCE,
  jetsonRule: JETSON_RULE,
  entries: [
  cap("3.5", "Kepler", "10.0", { maxCuda: "11.8", dontDefaultAfter: "11.0" }),
  cap("3.7", "Kepler", "10.0", { maxCuda: "11.8", dontDefaultAfter: "11.0" }),
  cap("5.0", "Maxwell", "10.0", { maxCuda: "12.9", dontDefaultAfter: "11.0" }),
  cap("5.2", "Maxwell", "10.0", { maxCuda: "12.9", dontDefaultAfter: "11.0" }),
  cap("6.0", "Pascal", "10.0", { maxCuda: "12.9", dontDefaultAfter: "12.3" }),
  cap("6.1", "Pascal", "10.0", { maxCuda: "12.9", dontDefaultAfter: "12.3" }),
  cap("7.0", "Volta", "10.0", { maxCuda: "12.9", dontDefaultAfter: "12.5" }),
  // "without `cuda_compat`, maxCudaMajorMinorVersion is 11.8" (nixpkgs' comment): 12.2 is with it.
  cap("7.2", "Volta", "10.0", { maxCuda: "12.2", isJetson: true }),
  cap("7.5", "Turing", "10.0"),
  cap("8.0", "Ampere", "11.2"),
  cap("8.6", "Ampere", "11.2"),
  cap("8.7", "Ampere", "11.4", { isJetson: true }),
  cap("8.9", "Ada", "11.8"),
  cap("9.0", "Hopper", "11.8"),
  cap("9.0a", "Hopper", "12.0"),
  cap("10.0", "Blackwell", "12.7"),
  cap("10.0a", "Blackwell", "12.7"),
  cap("10.0f", "Blackwell", "12.9"),
  cap("10.1", "Blackwell", "12.7", { maxCuda: "12.9", isJetson: true }),
  cap("10.1a", "Blackwell", "12.7", { maxCuda: "12.9", isJetson: true }),
  cap("10.1f", "Blackwell", "12.9", { maxCuda: "12.9", isJetson: true }),
  cap("10.3", "Blackwell", "12.9"),
  cap("10.3a", "Blackwell", "12.9"),
  cap("10.3f", "Blackwell", "12.9"),
  cap("11.0", "Blackwell", "13.0", { isJetson: true }),
  cap("11.0a", "Blackwell", "13.0", { isJetson: true }),
  cap("11.0f", "Blackwell", "13.0", { isJetson: true }),
  cap("12.0", "Blackwell", "12.8"),
  cap("12.0a", "Blackwell", "12.8"),
  cap("12.0f", "Blackwell", "12.9"),
  cap("12.1", "Blackwell", "12.9"),
  cap("12.1a", "Blackwell", "12.9"),
  cap("12.1f", "Blackwell", "12.9"),
  ],
};
