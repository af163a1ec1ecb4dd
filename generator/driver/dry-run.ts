/**
 * What `build --dry-run` reports, decided without printing (pure): one row per planned node in plan order, with
 * its wave, estimate, priority, whether it is already built, the exact command and notes; the totals; the CUDA
 * closures the selection needs. commands/build-main.ts prints it as text or JSON.
 */
import { buildCmd, type BackendOptions } from "./backend.ts";
import { cudaClosures, simulate, type Plan } from "./plan.ts";
import type { CacheProbe } from "./store.ts";
import type { BuildTarget } from "./targets.ts";

/** One row of the dry-run plan. */
export interface DryRunRow {
  order: number;
  name: string;
  package: string;
  wave: number;
  selectedAs: "requested" | "dependency" | undefined;
  dependsOn: string[];
  system: string;
  file: string;
  estimateS: number;
  estimateSource: string;
  priorityS: number;
  cached: boolean;
  cachedBy: CacheProbe["by"] | null;
  outPath: string | null;
  command: { argv: string[]; cwd: string };
  notes: string[];
}

/**
 * The dry-run rows and totals of `plan`.
 * @param o.host this machine's Nix system; a node for another system without `builders` gets a note
 * @param o.force every node counts as to build
 * @param o.jobs concurrent builds, for the estimated makespan (list scheduling on the estimates)
 */
export function dryRunRows(
  plan: Plan<BuildTarget>,
  cached: ReadonlyMap<string, CacheProbe>,
  why: ReadonlyMap<string, "requested" | "dependency">,
  backend: BackendOptions,
  o: { host: string; force: boolean; jobs: number },
) {
  const closures = cudaClosures(plan.order.map((n) => plan.nodes.get(n)!.target));
  const done = new Set([...cached].filter(([, c]) => c.cached).map(([n]) => n));
  const sim = simulate(plan, o.jobs, new Map(), o.force ? new Set() : done);
  const rows: DryRunRow[] = plan.order.map((name, i) => {
    const n = plan.nodes.get(name)!;
    const c = cached.get(name);
    const cmd = buildCmd(n.target, backend);
    const notes: string[] = [];
    if (n.target.system !== o.host && backend.builders === undefined)
      notes.push(`system ${n.target.system} differs from this host (${o.host}): needs a remote builder (--builders)`);
    if (c?.note && !c.cached) notes.push(`not instantiated here: ${c.note}`);
    return {
      order: i + 1,
      name,
      package: n.target.package,
      wave: n.wave,
      selectedAs: why.get(name),
      dependsOn: n.deps,
      system: n.target.system,
      file: n.target.file,
      estimateS: n.estimateS,
      estimateSource: n.estimateSource,
      priorityS: n.priority,
      cached: o.force ? false : (c?.cached ?? false),
      cachedBy: c?.by ?? null,
      outPath: c?.outPath ?? null,
      command: { argv: cmd.argv, cwd: cmd.cwd },
      notes,
    };
  });
  return {
    rows,
    toBuild: rows.filter((v) => !v.cached).length,
    cached: rows.filter((v) => v.cached).length,
    estimatedMakespanS: sim.makespan,
    cudaClosures: closures,
  };
}
