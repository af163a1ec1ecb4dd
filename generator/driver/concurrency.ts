/**
 * The `--jobs` default: how many variant builds run at once, from the machine's CPU count and memory.
 *
 * Rule (also in docs/building.md and `build --help`):
 *
 *   slots         = max(1, min(cpus, floor(memGiB / 4)))      compile processes the machine can hold
 *   coresPerBuild = --cores if given, else min(8, slots)        NIX_BUILD_CORES (→ MAX_JOBS) of one build
 *   jobs          = max(1, floor(slots / coresPerBuild))
 *
 * A CUDA compile job of torch needs about 4 GB (the guide 'Building PyTorch 2.9.1 for ARM64 with T4G (sm_75) Support': "~4GB per job for CUDA compilation"), and one build
 * runs `NIX_BUILD_CORES` compile jobs, so `jobs × coresPerBuild` compile processes must fit both the CPUs and the
 * memory. When `--cores` is not given, the nix backend passes `--cores floor(slots / jobs)` so that the product
 * stays within the slots (Nix's own default, cores = 0, would give every build all CPUs).
 */
import { GIB_PER_COMPILE_JOB } from "../catalog/machines.ts";

/** Cores one build gets by default, when the machine has that many slots. */
export const DEFAULT_CORES_PER_BUILD = 8;

/** The machine facts the rule reads. */
interface MachineFacts {
  /** Logical CPUs (`os.availableParallelism()`). */
  cpus: number;
  /** Total memory in bytes (`os.totalmem()`). */
  memBytes: number;
}

/** The rule's result. */
export interface JobsRule {
  /** Concurrent builds. */
  jobs: number;
  /** Cores per build (the `--cores` the nix backend passes, or the user's). */
  coresPerBuild: number;
  /** Compile slots: min(cpus, memGiB / 4). */
  slots: number;
  /** One line explaining the numbers, for `--dry-run` and logs. */
  explanation: string;
}

/**
 * Apply the rule.
 * @param m CPU count and memory in bytes
 * @param cores the user's `--cores`, if any (≥ 1)
 * @param jobs the user's `--jobs`, if any (≥ 1): then only `coresPerBuild` is derived (floor(slots / jobs))
 */
export function jobsRule(m: MachineFacts, cores?: number, jobs?: number): JobsRule {
  const memGiB = m.memBytes / 2 ** 30;
  const slots = Math.max(1, Math.min(m.cpus, Math.floor(memGiB / GIB_PER_COMPILE_JOB)));
  let coresPerBuild: number;
  let j: number;
  if (jobs !== undefined) {
    j = Math.max(1, Math.floor(jobs));
    coresPerBuild = cores ?? Math.max(1, Math.floor(slots / j));
  } else {
    coresPerBuild = cores ?? Math.min(DEFAULT_CORES_PER_BUILD, slots);
    j = Math.max(1, Math.floor(slots / coresPerBuild));
    if (cores === undefined) coresPerBuild = Math.max(1, Math.floor(slots / j));
  }
  const explanation =
    `slots = min(${m.cpus} CPUs, floor(${memGiB.toFixed(1)} GiB / ${GIB_PER_COMPILE_JOB} GiB)) = ${slots}; ` +
    `jobs = ${j}${jobs !== undefined ? " (--jobs)" : ` = floor(${slots} / ${cores ?? Math.min(DEFAULT_CORES_PER_BUILD, slots)})`}; ` +
    `cores per build = ${coresPerBuild}${cores !== undefined ? " (--cores)" : ""}`;
  return { jobs: j, coresPerBuild, slots, explanation };
}

/**
 * The cores one build of a package gets when a compile process of it needs more memory than torch's
 * (catalog/packages.ts `gibPerCompileJob`, e.g. flash-attn's ~9 GiB): the memory of one build slot, total memory / jobs,
 * holds at most floor(share / gib) compile processes, so the build gets min(coresPerBuild, that) cores (≥ 1).
 * Without `gibPerJob`, `rule.coresPerBuild`.
 * @param m the machine (memory in bytes); @param gibPerJob GiB per compile process of the package
 * @returns cores and, when capped, the reason in words
 */
export function coresForPackage(rule: JobsRule, m: MachineFacts, gibPerJob: number | undefined): { cores: number; why: string | null } {
  if (gibPerJob === undefined) return { cores: rule.coresPerBuild, why: null };
  const share = m.memBytes / 2 ** 30 / rule.jobs;
  const cap = Math.max(1, Math.floor(share / gibPerJob));
  if (cap >= rule.coresPerBuild) return { cores: rule.coresPerBuild, why: null };
  return { cores: cap, why: `floor(${share.toFixed(1)} GiB per build / ${gibPerJob} GiB per compile job) = ${cap}` };
}
