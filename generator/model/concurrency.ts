/**
 * How builds share the machine: its compile slots (min(CPUs, floor(memGiB / 4))) and the one policy that shares them
 * out as builds start (`startBuilds`: the critical path gets the cores), which the build driver runs and every wait the
 * tool prints is modelled on (`Capacity`, `capacityOf`, `hostCapacity`; docs/building.md).
 *
 * `jobsRule` is the fixed rule of earlier releases, kept for the plan's explanation and for the flox backend (which
 * passes no --cores); with `--cores` the schedule uses it too:
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
import { builtInCatalog } from "../catalog/lib/built-in.ts";
import { compileSlots, coresWithinMemory, slotsFormula } from "../catalog/lib/machines.ts";

/**
 * The torch model's reference cores: the cores of the catalog's CUDA torch figure (`Catalog.buildSeconds.torchCuda`;
 * plan.ts TORCH_BUILD_MODEL.referenceCores; plan.ts imports this module).
 */
export const REFERENCE_CORES = builtInCatalog.buildSeconds.torchCuda.cores;

/** Cores one build gets by default, when the machine has that many slots. */
export const DEFAULT_CORES_PER_BUILD = 8;

/** The machine facts the rule reads. */
interface MachineFacts {
  /** Logical CPUs (`os.availableParallelism()`). */
  cpus: number;
  /** Total memory in bytes (`os.totalmem()`); null when not known (a recording without one): not limiting. */
  memBytes: number | null;
}

/**
 * Compile slots of a machine (catalog/lib/machines.ts compileSlots: min(CPUs, floor(memGiB / the GiB of a compile job)));
 * unknown memory does not limit.
 * @returns the slots and the memory in GiB (Infinity when unknown)
 */
function slotsOf(m: MachineFacts): { slots: number; memGiB: number } {
  const memGiB = m.memBytes === null ? Infinity : m.memBytes / 2 ** 30;
  return { slots: compileSlots(m.cpus, memGiB), memGiB };
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
  const { slots, memGiB } = slotsOf(m);
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
    `slots = ${slotsFormula(`${m.cpus} CPUs`, `${memGiB.toFixed(1)} GiB`)} = ${slots}; ` +
    `jobs = ${j}${jobs !== undefined ? " (--jobs)" : ` = floor(${slots} / ${cores ?? Math.min(DEFAULT_CORES_PER_BUILD, slots)})`}; ` +
    `cores per build = ${coresPerBuild}${cores !== undefined ? " (--cores)" : ""}`;
  return { jobs: j, coresPerBuild, slots, explanation };
}

/**
 * The cores one build of a package gets when a compile process of it needs more memory than torch's
 * (catalog/packages.ts `gibPerCompileJob`, e.g. flash-attn's ~9 GiB): the memory of one build slot, total memory / jobs,
 * holds at most floor(share / gib) compile processes, so the build gets min(coresPerBuild, that) cores (≥ 1).
 * Without `gibPerJob`, `rule.coresPerBuild`.
 * @param m the machine (memory in bytes; unknown memory caps nothing); @param gibPerJob GiB per compile process of the package
 * @returns cores and, when capped, the reason in words
 */
export function coresForPackage(rule: JobsRule, m: MachineFacts, gibPerJob: number | undefined): { cores: number; why: string | null } {
  if (gibPerJob === undefined || m.memBytes === null) return { cores: rule.coresPerBuild, why: null };
  const share = m.memBytes / 2 ** 30 / rule.jobs;
  const cap = Math.max(1, Math.floor(share / gibPerJob));
  if (cap >= rule.coresPerBuild) return { cores: rule.coresPerBuild, why: null };
  return { cores: cap, why: `floor(${share.toFixed(1)} GiB per build / ${gibPerJob} GiB per compile job) = ${cap}` };
}

/**
 * What one run's schedule shares out, in compile slots (the jobs rule's `slots`): the critical path gets the cores.
 * The build driver (run.ts) and every wait the tool prints (plan.ts simulate, wait.ts) read this one record, so the
 * `--cores` a build is started with is the one the plan modelled.
 */
export interface Capacity {
  /** Compile slots: min(CPUs, floor(memGiB / GIB_PER_COMPILE_JOB)), at least 1. */
  slots: number;
  /** Memory in GiB: a package whose compile process needs more than GIB_PER_COMPILE_JOB gets fewer cores per slot. */
  memGiB: number;
  /** `--cores`: every build gets exactly this many; null: the slots are shared out when builds start (`startBuilds`). */
  cores: number | null;
  /** Most builds at once: `--jobs`, or floor(slots / --cores); null without either (at most one build per slot). */
  jobs: number | null;
  /** GiB per compile process by package, for packages that need more than GIB_PER_COMPILE_JOB (catalog `gibPerCompileJob`). */
  gibPerJob: ReadonlyMap<string, number>;
  /** The machine the slots are of: "16 CPUs, 125.0 GiB" ("…, memory not recorded"). */
  machine: string;
  /** Where its figures come from: "this machine", "CPUs: FILE; memory: --mem". */
  from: string;
}

/**
 * The capacity of a machine under the user's `--cores`/`--jobs` (the rule above for the slots).
 * @param m CPUs and memory in bytes
 * @param gibPerJob GiB per compile process of the packages that need more than GIB_PER_COMPILE_JOB, by package
 * @param from where the figures come from, for `machine` ("this machine", "the recorded host …"); default this machine
 */
export function capacityOf(
  m: MachineFacts,
  o: { cores?: number; jobs?: number; gibPerJob?: ReadonlyMap<string, number>; from?: string } = {},
): Capacity {
  const { slots, memGiB } = slotsOf(m);
  const jobs = o.jobs !== undefined ? Math.max(1, Math.floor(o.jobs)) : o.cores !== undefined ? Math.max(1, Math.floor(slots / o.cores)) : null;
  return {
    slots,
    memGiB,
    cores: o.cores ?? null,
    jobs,
    gibPerJob: o.gibPerJob ?? new Map(),
    machine: `${m.cpus} CPUs, ${m.memBytes === null ? "memory not recorded, taken as not limiting" : `${memGiB.toFixed(1)} GiB`}`,
    from: o.from ?? "this machine",
  };
}

/**
 * The capacity of a host as detect reads it (host/read-host.ts HostInfo): its logical CPUs and its memory (a
 * recording's meminfo, `--mem`, or this machine's), with where they come from. A host whose CPU count is not known
 * (a detect --json file without it) is taken at the torch model's reference cores (plan.ts TORCH_BUILD_MODEL), said.
 * @param o the user's --cores/--jobs, and the packages that need more memory per compile process
 */
export function hostCapacity(
  host: { cpu: { logicalCpus: number }; memory: { bytes: number | null; source: string }; sources: { cpuinfo: string } },
  o: { cores?: number; jobs?: number; gibPerJob?: ReadonlyMap<string, number> } = {},
): Capacity {
  const known = host.cpu.logicalCpus > 0;
  const cpus = known ? host.cpu.logicalCpus : REFERENCE_CORES;
  const from = `CPUs: ${known ? host.sources.cpuinfo : `not recorded, the model's ${REFERENCE_CORES} reference cores`}; memory: ${host.memory.source}`;
  return capacityOf({ cpus, memBytes: host.memory.bytes }, { ...o, from });
}

/** A build that is ready to start, as `startBuilds` weighs it. */
export interface ReadyBuild {
  name: string;
  package: string;
  /** Its priority in seconds (plan.ts PlanNode.priority: its estimate plus the longest chain after it). */
  weight: number;
}

/** One build to start now: the cores it is given (`--cores`, NIX_BUILD_CORES) and the slots it holds while it runs. */
export interface BuildStart {
  name: string;
  cores: number;
  slots: number;
}

/**
 * Which ready builds start now, and with how many cores: the one policy of the driver and of the modelled schedule.
 *
 * - With `--cores`, every build gets those cores and at most `jobs` run at once (the fixed rule).
 * - Otherwise the free slots are shared out among the ready builds, best first (`ready` comes in the plan's order:
 *   priority first), in proportion to their priority, each at least one slot, the last taking what is left: a build
 *   that is ready alone (torch, which everything else waits for) gets every free slot; two equal builds get half each.
 *   At most one build per free slot, and at most `jobs` builds (`--jobs`) at once.
 * - A package whose compile process needs more memory than a slot holds (flash-attn's ~9 GiB against 4) gets
 *   floor(its slots × 4 / its GiB) cores (at least 1): the memory of its slots bounds its compile processes.
 *
 * A build keeps its cores until it ends (Nix fixes NIX_BUILD_CORES when it starts a build), so slots freed later go to
 * the builds that become ready then.
 * @param ready the ready builds, best first
 * @param running how many builds run now, and the slots they hold
 * @returns the builds to start now, in `ready`'s order; [] when no slot is free
 */
export function startBuilds(ready: readonly ReadyBuild[], running: { count: number; slotsUsed: number }, cap: Capacity): BuildStart[] {
  const memCap = (pkg: string, slots: number) => {
    return coresWithinMemory(slots, cap.gibPerJob.get(pkg));
  };
  if (cap.cores !== null) {
    const n = Math.min(ready.length, Math.max(0, (cap.jobs ?? 1) - running.count));
    return ready.slice(0, n).map((r) => ({ name: r.name, cores: Math.min(cap.cores!, memCap(r.package, cap.cores!)), slots: cap.cores! }));
  }
  let free = cap.slots - running.slotsUsed;
  const n = Math.min(ready.length, free, cap.jobs === null ? Infinity : cap.jobs - running.count);
  if (n <= 0) return [];
  const chosen = ready.slice(0, n);
  // Weights of 0 (unknown estimates) share equally.
  const w = chosen.map((r) => (Number.isFinite(r.weight) && r.weight > 0 ? r.weight : 0));
  let left = w.reduce((a, b) => a + b, 0);
  const out: BuildStart[] = [];
  chosen.forEach((r, i) => {
    const after = n - i - 1;
    const fair = left > 0 ? Math.floor((free * w[i]!) / left) : Math.floor(free / (n - i));
    const slots = after === 0 ? free : Math.min(Math.max(1, fair), free - after);
    out.push({ name: r.name, cores: memCap(r.package, slots), slots });
    free -= slots;
    left -= w[i]!;
  });
  return out;
}
