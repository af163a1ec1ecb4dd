/**
 * CPU ISA levels: compiler flags as data, the CPUs each level is for, and the /proc/cpuinfo features a host needs.
 *
 * Rule (ARCHITECTURE.md rule 4): `cflags` turn on only instructions that EVERY CPU in `cpus` has. `notFor` names CPUs
 * people expect to be covered and says why they are not. `requiredCpuFeatures` uses Linux /proc/cpuinfo names
 * (x86 `flags`, arm64 `Features`). `rank` orders levels within one system: higher = wider.
 *
 * Sources: GCC manual "x86 Options" (-march=x86-64-v3/-v4 select the x86-64 psABI micro-architecture levels;
 * v3 = AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE; v4 = v3 + AVX512F/BW/CD/DQ/VL, as listed for
 * GNU_PROPERTY_X86_ISA_1_V3/V4); aws/aws-graviton-getting-started c-c++.md (Graviton2 = Neoverse N1,
 * Graviton3 = Neoverse V1, Graviton4 = Neoverse V2); NVIDIA DGX Spark porting guide "System Overview"
 * (GB10 CPU = Cortex-X925 + Cortex-A725, "ARM v9.2"); /proc/cpuinfo dumps of Graviton2/Graviton3 in
 * andikaseptiadi/local-code-model GRAVITON_VERIFICATION.md. Every `cflags` set is compiled by the real
 * compiler in tests/catalog.test.ts (gcc for x86_64, aarch64-linux-gnu-gcc for aarch64).
 */
import type { Catalog, CpuIsa } from "./schema.ts";

const GCC_X86 =
  "GCC manual 'x86 Options' (-march=x86-64-v3/-v4 = x86-64 psABI levels; -mavx512vnni, -mavx512bf16)";
const GRAVITON = "aws/aws-graviton-getting-started c-c++.md (Graviton2 N1, Graviton3 V1, Graviton4 V2)";

/**
 * The `gccarch-<arch>` system features: a variant runs its own code while it builds, so it needs a builder whose CPU
 * can run it. nixpkgs lib/systems/architectures.nix (0136356) `inferiors`: "a
 * superior CPU has all the features of an inferior and is able to build and test code for it"; NixOS declares
 * `gccarch-<gcc.arch>` and `gccarch-<each inferior>` on a machine whose nixpkgs.hostPlatform.gcc.arch is set
 * (nixos/modules/config/nix.nix); elsewhere nix.conf `system-features` must list them, for local builds too. x86:
 * x86-64-v3 is an inferior of haswell, broadwell, skylake…, znver1–5; x86-64-v4 of skylake-avx512, cannonlake,
 * icelake-*, cascadelake, cooperlake, tigerlake, sapphirerapids, emeraldrapids, znver4, znver5; cascadelake only of
 * cooperlake; nothing lists cooperlake. Arm: the file has only `armv8-a`, with no inferiors, so the feature is the
 * exact -march value (a NixOS builder with that gcc.arch declares it; any other adds it by hand).
 */
const ARCHITECTURES = "nixpkgs lib/systems/architectures.nix (0136356): features and inferiors; nixos/modules/config/nix.nix (gccarch-* system features)";

export const isas: CpuIsa[] = [
  {
    key: "avx2",
    label: "AVX2 (x86-64-v3)",
    system: "x86_64-linux",
    cflags: ["-march=x86-64-v3"],
    cpus: [
      "Intel Haswell and newer (Broadwell, Skylake, Ice Lake, Sapphire Rapids, ...)",
      "AMD Zen 1 and newer (EPYC 7001 Naples onwards)",
    ],
    notFor: [
      "Intel Atom/Pentium/Celeron parts without AVX2 (e.g. Goldmont, Tremont): no AVX",
      "Intel Ivy Bridge / Sandy Bridge and older: no AVX2, FMA, BMI2",
    ],
    requiredCpuFeatures: ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"],
    rank: 0,
    gccarch: {
      arch: "x86-64-v3",
      declaredBy: ["x86-64-v3", "haswell", "broadwell", "skylake", "skylake-avx512", "cannonlake", "icelake-client", "icelake-server", "cascadelake", "cooperlake", "tigerlake", "sapphirerapids", "emeraldrapids", "znver1", "znver2", "znver3", "znver4", "znver5", "x86-64-v4"],
      why: `${ARCHITECTURES}: the flags are exactly -march=x86-64-v3, a nixpkgs architecture and an inferior of every Intel from haswell and every AMD from znver1`,
    },
    source: `${GCC_X86}; x86-64 psABI level v3 (AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE)`,
  },
  {
    key: "avx512",
    label: "AVX-512 (x86-64-v4)",
    system: "x86_64-linux",
    cflags: ["-march=x86-64-v4"],
    cpus: [
      "Intel Skylake-SP/Skylake-X (Xeon Scalable 1st gen) and newer server parts",
      "Intel Cascade Lake, Cooper Lake, Ice Lake-SP, Sapphire Rapids, Emerald Rapids, Granite Rapids",
      "AMD Zen 4 (EPYC 9004 Genoa) and Zen 5",
    ],
    notFor: [
      "AMD Zen 1–3 (EPYC 7001–7003): no AVX-512",
      "Intel client Alder Lake / Raptor Lake: AVX-512 fused off",
      "Intel Haswell/Broadwell: no AVX-512",
    ],
    requiredCpuFeatures: ["avx2", "fma", "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"],
    rank: 1,
    gccarch: {
      arch: "x86-64-v4",
      declaredBy: ["x86-64-v4", "skylake-avx512", "cannonlake", "icelake-client", "icelake-server", "cascadelake", "cooperlake", "tigerlake", "sapphirerapids", "emeraldrapids", "znver4", "znver5"],
      why: `${ARCHITECTURES}: the flags are exactly -march=x86-64-v4, an inferior of every AVX-512 architecture nixpkgs lists`,
    },
    source: `${GCC_X86}; x86-64 psABI level v4 (v3 + AVX512F, AVX512BW, AVX512CD, AVX512DQ, AVX512VL)`,
  },
  {
    key: "avx512vnni",
    label: "AVX-512 VNNI",
    system: "x86_64-linux",
    cflags: ["-march=x86-64-v4", "-mavx512vnni"],
    cpus: [
      "Intel Cascade Lake (Xeon Scalable 2nd gen) and Cooper Lake",
      "Intel Ice Lake-SP (Xeon Scalable 3rd gen)",
      "Intel Sapphire Rapids, Emerald Rapids, Granite Rapids",
      "AMD Zen 4 (EPYC 9004 Genoa) and Zen 5",
    ],
    notFor: ["Intel Skylake-SP/Skylake-X: AVX-512 without VNNI (VNNI arrived with Cascade Lake)"],
    requiredCpuFeatures: ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512_vnni"],
    rank: 2,
    gccarch: {
      arch: "cascadelake",
      declaredBy: ["cascadelake", "cooperlake"],
      why: `${ARCHITECTURES}; GCC -march=cascadelake = skylake-avx512 + AVX512VNNI: the smallest architecture whose instructions include x86-64-v4 + AVX512-VNNI (nixpkgs has no exact one). nixpkgs lists cascadelake among the inferiors of cooperlake only, so Ice Lake-SP, Sapphire/Emerald/Granite Rapids and Zen 4/5 builders, which run this code, must add gccarch-cascadelake to system-features by hand`,
    },
    source: `${GCC_X86}; GCC -march=cascadelake adds AVX512VNNI to the skylake-avx512 set`,
  },
  {
    key: "avx512bf16",
    label: "AVX-512 BF16",
    system: "x86_64-linux",
    cflags: ["-march=x86-64-v4", "-mavx512vnni", "-mavx512bf16"],
    cpus: [
      "Intel Cooper Lake (Xeon Scalable 3rd gen, 4-8 socket)",
      "Intel Sapphire Rapids (Xeon Scalable 4th gen), Emerald Rapids, Granite Rapids",
      "AMD Zen 4 (EPYC 9004 Genoa) and Zen 5",
    ],
    notFor: [
      "Intel Ice Lake-SP: VNNI but no AVX512_BF16",
      "Intel Cascade Lake: VNNI but no AVX512_BF16",
      "Intel Skylake-SP: neither VNNI nor BF16",
    ],
    requiredCpuFeatures: [
      "avx512f",
      "avx512bw",
      "avx512cd",
      "avx512dq",
      "avx512vl",
      "avx512_vnni",
      "avx512_bf16",
    ],
    rank: 3,
    gccarch: {
      arch: "cooperlake",
      declaredBy: ["cooperlake"],
      why: `${ARCHITECTURES}; GCC -march=cooperlake = cascadelake + AVX512BF16: the smallest architecture whose instructions include the flags (no exact one). No nixpkgs architecture lists cooperlake among its inferiors, so Sapphire/Emerald/Granite Rapids and Zen 4/5 builders must add gccarch-cooperlake by hand`,
    },
    // Wider than avx512vnni: every CPU listed here also has VNNI, so the flag set is a superset.
    source: `${GCC_X86}; GCC -march=cooperlake = cascadelake + AVX512BF16; -march=sapphirerapids includes both`,
  },
  {
    key: "armv8_2",
    label: "Armv8.2-A + FP16 + DotProd",
    system: "aarch64-linux",
    cflags: ["-march=armv8.2-a+fp16+dotprod"],
    cpus: [
      "AWS Graviton2 (Neoverse N1)",
      "Ampere Altra / Altra Max (Neoverse N1)",
      "NVIDIA Jetson AGX Orin (Cortex-A78AE)",
      "AWS Graviton3 (Neoverse V1) and Graviton4 (Neoverse V2): newer cores, run it too",
      "NVIDIA Grace (Neoverse V2) and DGX Spark GB10 (Cortex-X925/A725): run it too",
    ],
    notFor: [
      "AWS Graviton (1st gen, Cortex-A72): Armv8.0, no FP16 arithmetic or dot product",
      "Raspberry Pi 4 (Cortex-A72): Armv8.0",
    ],
    requiredCpuFeatures: ["asimd", "fphp", "asimdhp", "asimddp", "atomics"],
    rank: 0,
    gccarch: {
      arch: "armv8.2-a+fp16+dotprod",
      declaredBy: ["armv8.2-a+fp16+dotprod"],
      why: `${ARCHITECTURES}: nixpkgs models no Arm level above armv8-a (no features, no inferiors), so the feature is the exact -march value; a Graviton2/3/4, Grace, Ampere or GB10 builder adds it by hand (NixOS adds it only when gcc.arch is exactly this)`,
    },
    source:
      `${GRAVITON}; Graviton2 /proc/cpuinfo Features 'fp asimd ... atomics fphp asimdhp ... asimddp' ` +
      "(andikaseptiadi/local-code-model GRAVITON_VERIFICATION.md); the DGX Spark aarch64 CUDA wheel build guide (used " +
      "-march=armv8.2-a+fp16)",
  },
  {
    key: "armv9",
    label: "Armv9-A (SVE2) + I8MM",
    system: "aarch64-linux",
    // Deliberately no +bf16, see `note`.
    cflags: ["-march=armv9-a+i8mm"],
    cpus: [
      "NVIDIA Grace (Neoverse V2; GH200, GB200, GB300 hosts)",
      "AWS Graviton4 (Neoverse V2)",
      "NVIDIA DGX Spark GB10 (Cortex-X925 + Cortex-A725, Armv9.2-A)",
    ],
    notFor: [
      "AWS Graviton3/3E (Neoverse V1): Armv8.4-A with SVE but no SVE2; -march=armv9-a enables SVE2, so " +
        "this code may trap with SIGILL there. Use armv8_2.",
      "AWS Graviton2 / Ampere Altra (Neoverse N1): no SVE at all",
    ],
    requiredCpuFeatures: ["asimd", "asimdhp", "asimddp", "sve", "sve2", "i8mm", "svei8mm"],
    rank: 1,
    gccarch: {
      arch: "armv9-a+i8mm",
      declaredBy: ["armv9-a+i8mm"],
      why: `${ARCHITECTURES}: nixpkgs models no Arm level above armv8-a, so the feature is the exact -march value; a Grace, Graviton4 or GB10 builder adds it by hand (never a Graviton3: no SVE2)`,
    },
    note:
      "GCC's code generation for SVE combined with BF16 has repeatedly hit internal compiler errors in " +
      "PyTorch's aarch64 kernels (pytorch/pytorch #157842: gcc-14 'unrecognizable insn' on SVE+BF16, GCC bug " +
      "114334, worked around by using -march=armv8-a+sve instead of +sve+bf16; PR #157867 'Make PyTorch " +
      "compilable with gcc-14 on ARM'; PR #174647 for gcc-14.2; #136432 GCC ICE in the SVE256 kernels; " +
      "PR #176646 gcc-13 vget_low_bf16 mismatch when mixing NEON and SVE). The DGX Spark aarch64 CUDA wheel build guide hit the same ICE and " +
      "pinned CPU_CAPABILITY=NEON with USE_SVE=OFF. Decision: the armv9 flags enable SVE2 and I8MM but NOT " +
      "+bf16, so our global flags do not add SVE+BF16 to every translation unit (the gcc-14 ICE of #157842 came " +
      "from such global flags). This does NOT cover PyTorch's own SVE256 kernels, which keep their per-file " +
      "flags (the ICE of #136432 and the DGX Spark aarch64 CUDA wheel build guide was there); whether the pinned GCC hits it is not verified here. " +
      "If it does, the fix is the DGX Spark wheel build guide's USE_SVE=OFF in the builder (pkgs/), not a different ISA fact. " +
      "Decided for the 2026 pins (nixpkgs 0182a36, 549bd84): keep PyTorch's SVE kernels. Those pins build torch " +
      "with nixpkgs' own aarch64 workaround for GCC 14 (torch source/default.nix adds " +
      "-Wno-error=incompatible-pointer-types on aarch64-linux, 'fix build aarch64-linux build failure with GCC14'), " +
      "i.e. nixpkgs builds these kernels with GCC 14 itself; the DGX Spark wheel build guide's NEON-only build would silently give up " +
      "SVE on the very CPUs armv9 is for. The decision is shown on every armv9 variant (variantNote).",
    variantNote:
      "aarch64 GCC internal-compiler-error workaround (a DGX Spark aarch64 CUDA wheel build guide; pytorch/pytorch #157842, #136432): the armv9 " +
      "flags enable SVE2 and I8MM but not +bf16, so no SVE+BF16 code is forced into every translation unit; " +
      "PyTorch's own SVE kernels are compiled as nixpkgs compiles them (GCC 14 with nixpkgs' aarch64 flags), " +
      "not disabled.",
    source:
      `${GRAVITON}; NVIDIA DGX Spark porting guide 'System Overview' (Cortex-X925/A725, ARM v9.2); Graviton3 ` +
      "/proc/cpuinfo Features (sve, no sve2) in andikaseptiadi/local-code-model GRAVITON_VERIFICATION.md; " +
      "pytorch/pytorch issue #157842 and PRs #157867, #174647, #176646 (GCC SVE/BF16 ICEs); nixpkgs " +
      "torch/source/default.nix at 6b516b4 and d361bc7 (env.NIX_CFLAGS_COMPILE: -Wno-error=incompatible-pointer-" +
      "types on aarch64-linux for GCC 14)",
  },
];

/**
 * Arm core names by (implementer, part), the MIDR_EL1 fields `/proc/cpuinfo` prints as `CPU implementer` and
 * `CPU part`. Source: Linux arch/arm64/include/asm/cputype.h (ARM_CPU_IMP_ARM 0x41, ARM_CPU_PART_NEOVERSE_N1 0xD0C,
 * _NEOVERSE_V1 0xD40, _NEOVERSE_N2 0xD49, _NEOVERSE_V2 0xD4F, _NEOVERSE_V3AE 0xD83, _NEOVERSE_V3 0xD84, _CORTEX_X925 0xD85,
 * _CORTEX_A725 0xD87, ...; NVIDIA_CPU_PART_CARMEL 0x004 under ARM_CPU_IMP_NVIDIA 0x4E). Informational only: the
 * ISA choice reads the feature list, never the core name.
 */
export const ARM_CORES: Catalog["armCores"] = {
  source:
    "Linux arch/arm64/include/asm/cputype.h (ARM_CPU_IMP_ARM 0x41 and its ARM_CPU_PART_* values; NVIDIA_CPU_PART_CARMEL 0x004 " +
    "under ARM_CPU_IMP_NVIDIA 0x4E; AMPERE_CPU_PART_AMPERE1 0xAC3 under ARM_CPU_IMP_AMPERE 0xC0)",
  names: {
  "0x41/0xd08": "Cortex-A72",
  "0x41/0xd0b": "Cortex-A76",
  "0x41/0xd0c": "Neoverse N1",
  "0x41/0xd40": "Neoverse V1",
  "0x41/0xd41": "Cortex-A78",
  "0x41/0xd42": "Cortex-A78AE",
  "0x41/0xd49": "Neoverse N2",
  "0x41/0xd4f": "Neoverse V2",
  "0x41/0xd83": "Neoverse V3AE",
  "0x41/0xd84": "Neoverse V3",
  "0x41/0xd85": "Cortex-X925",
  "0x41/0xd87": "Cortex-A725",
  "0x41/0xd8e": "Neoverse N3",
  "0x4e/0x004": "NVIDIA Carmel",
  "0xc0/0xac3": "AmpereOne",
  },
};

/** Hosts people recognise by their cores (informational for detect; the ISA choice reads features). */
export const ARM_HOST_HINTS: Catalog["armHostHints"] = {
  source:
    `${GRAVITON}; Ampere Altra and Grace as this file's armv8_2/armv9 rows say (Neoverse N1, Neoverse V2); NVIDIA Jetson ` +
    "AGX Thor data sheet (Neoverse-V3AE; catalog/gpus.ts); NVIDIA DGX Spark porting guide (GB10: Cortex-X925 and Cortex-A725)",
  names: {
  "Neoverse N1": "e.g. AWS Graviton2, Ampere Altra",
  "Neoverse V1": "e.g. AWS Graviton3",
  "Neoverse V2": "e.g. NVIDIA Grace (GH200), AWS Graviton4",
  "Neoverse V3AE": "e.g. NVIDIA Jetson AGX / DRIVE Thor",
  "Cortex-X925": "e.g. NVIDIA GB10 (DGX Spark)",
  },
};
