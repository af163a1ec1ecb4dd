/**
 * GitHub Actions' runners and limits as data with their sources: what the workflows of generator/generate/ci.ts are written
 * for (the jobs one matrix may generate, how long a job may run, the standard hosted runners and the CPU features
 * every machine behind their labels has, the labels of self-hosted runners).
 */

/** GitHub's limit on the jobs one matrix may generate. */
export const GITHUB_MATRIX_LIMIT = 256;

/** GitHub Actions limits the workflows are written for, in minutes, with their sources. */
export const GITHUB_LIMITS = {
  /** A job on a GitHub-hosted runner (standard or larger) is terminated at 6 hours of execution time. */
  hostedJobMinutes: 360,
  /** A job on a self-hosted runner is terminated at 5 days. */
  selfHostedJobMinutes: 7200,
  source:
    "docs.github.com 'Usage limits, billing, and administration' (GitHub-hosted: 'Each job in a workflow can run for up " +
    "to 6 hours of execution time'); 'Usage limits for self-hosted runners' ('Each job in a workflow can run for up to " +
    "5 days of execution time'; 'A job matrix can generate a maximum of 256 jobs per workflow run')",
} as const;

/**
 * A standard GitHub-hosted Linux runner, as data (HostedRunnerSchema): its labels, size, and the /proc/cpuinfo
 * features every machine behind those labels is known to have (the variant's code must run there while it builds:
 * torch's import check, the checks of the packages on torch, torchcodec's tests).
 */
import type { HostedRunner } from "./schema.ts";

const HOSTED_SIZE_SOURCE =
  "docs.github.com 'GitHub-hosted runners reference', 'Standard GitHub-hosted runners for public repositories': " +
  "Linux x64 and arm64, 4 CPU, 16 GB RAM, 14 GB SSD (2 CPU, 7 GB for private repositories)";

/** The standard GitHub-hosted Linux runners (public repositories). */
export const GITHUB_HOSTED_RUNNERS: HostedRunner[] = [
  {
    system: "x86_64-linux",
    labels: ["ubuntu-24.04"],
    cpus: 4,
    memoryGB: 16,
    diskGB: 14,
    // The x86-64-v3 (AVX2) set and nothing wider: AVX-512 is not guaranteed.
    cpuFeatures: ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"],
    source:
      `${HOSTED_SIZE_SOURCE}. CPU model not documented: actions/runner-images#3389 (GitHub: 'our agents are not ` +
      "guaranteed to have AVX-512'); IPNP-BIPN/bwa-mem4#44 (2026: 23 runs on ubuntu-22.04/24.04/latest drew AMD EPYC " +
      "7763 and EPYC 9V74, none exposing avx512bw); julia-actions/cache#114 (Intel Xeon Platinum 8272CL and AMD parts " +
      "alternate). Every model seen has the x86-64-v3 features.",
  },
  {
    system: "aarch64-linux",
    labels: ["ubuntu-24.04-arm"],
    cpus: 4,
    memoryGB: 16,
    diskGB: 14,
    // Neoverse N2: Armv9.0-A with SVE2, I8MM and BF16.
    cpuFeatures: ["fp", "asimd", "atomics", "fphp", "asimdhp", "asimddp", "sve", "sve2", "i8mm", "svei8mm", "bf16", "svebf16"],
    source:
      `${HOSTED_SIZE_SOURCE}. ARM-software/astc-encoder#540: the arm64 runners are Azure Cobalt 100, Neoverse N2, ` +
      "with NEON and SVE2; Neoverse N2's Features line in archspec/archspec-json#97 (… atomics fphp asimdhp … asimddp … " +
      "sve … sve2 … svei8mm svebf16 i8mm bf16 …)",
  },
];

/**
 * Default labels of self-hosted runners by Nix system: GitHub gives every self-hosted runner the labels `self-hosted`,
 * its OS and its architecture (docs.github.com 'Using labels with self-hosted runners'). Override per system with
 * --runs-on SYSTEM=LABEL[,LABEL].
 */
export const DEFAULT_SELF_HOSTED_LABELS: Record<string, string[]> = {
  "x86_64-linux": ["self-hosted", "linux", "X64"],
  "aarch64-linux": ["self-hosted", "linux", "ARM64"],
};

/** What a self-hosted runner needs to take a job that builds torch (the comment above each such job). */
export const SELF_HOSTED_NEEDS =
  "a self-hosted runner: ~20 GB of free disk per torch build and many cores (torch is a big-parallel build that runs " +
  "for hours; barstoolbluz/build-pytorch BUILD_MATRIX.md: '~18-20 GB disk per build', '1-3 hours per variant'), Nix or " +
  "the rights to install it, and a CPU that runs the variant's ISA (its code runs while it builds: the runner carries " +
  "the job's gccarch-… label only if it does); no GPU is needed to build";

