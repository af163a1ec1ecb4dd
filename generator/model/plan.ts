/**
 * The build plan: pure functions, no I/O.
 *
 * - `makePlan` turns selected targets into a DAG (edges from `dependsOn`), checks it (no cycles, no missing
 *   dependency), gives every node a duration estimate (seconds) and a priority, and lists a topological order and
 *   the waves (wave k = nodes whose longest dependency chain has k edges).
 * - Priority is the node's "bottom level": its estimate plus the longest chain of estimates among its dependents.
 *   Ready work runs highest priority first, i.e. longest (remaining critical path) first. Estimates come from
 *   earlier reports (`history`: an earlier build of the same variant wins); without history `estimateBuild` (pytorch
 *   by TORCH_BUILD_MODEL: CUDA or CPU, capabilities, cores; the packages on torch their catalog estimate, an
 *   environment, named ones too, a minute), so pytorch goes first. A
 *   package with no figure at all has an unknown estimate (null, with the reason): never a number made up, never NaN.
 * - `pickNext` is the scheduler's choice among ready nodes; `simulate` replays list scheduling on estimates
 *   (dry-run's estimated makespan); `lowerBound` is max(critical path, total work / jobs).
 */
import { InputError } from "../errors.ts";
import type { PackageName } from "../catalog/lib/packages.ts";
import { ENV_PACKAGE, TORCH_PACKAGE } from "../catalog/lib/packages.ts";
import { defaultBuildTable } from "../catalog/lib/packages.ts";
import { builtInCatalog } from "../catalog/lib/built-in.ts";
import { environmentOf } from "../matrix/naming.ts";
import { REFERENCE_CORES, startBuilds, type Capacity, type ReadyBuild } from "./concurrency.ts";
import type { Variant } from "../matrix/schema.ts";

/**
 * Default build time of a package when no earlier report knows it: seconds and the source of the figure, from the
 * catalog (catalog/lib/packages.ts defaultBuildTable over the built-in catalog, catalog/lib/built-in.ts: its `buildSeconds`
 * and package rows).
 * The one table the build driver's plan and the fleet cost model (fleet/cost.ts) both use.
 */
export const DEFAULT_BUILD_SECONDS: Record<PackageName, { seconds: number; source: string }> = defaultBuildTable(builtInCatalog);

/**
 * Default time to build one CUDA closure from source (magma, nccl, gdrcopy, ucc, libnvshmem, … for one nixpkgs
 * instance whose config.cudaCapabilities differs from the default, so no binary cache serves it), in seconds: the
 * catalog's figure (`Catalog.buildSeconds.cudaClosure`, catalog/binary-cache.ts BUILD_SECONDS).
 */
export const DEFAULT_CUDA_CLOSURE_SECONDS = builtInCatalog.buildSeconds.cudaClosure;

/**
 * Default time of one static check of `build` (the probe and the comparison), when no report knows it: the catalog's
 * figure (`Catalog.buildSeconds.check`, catalog/binary-cache.ts BUILD_SECONDS).
 */
export const DEFAULT_CHECK_SECONDS = builtInCatalog.buildSeconds.check;

/** The name of a variant's static check node, in a build's plan, its report and the wait: `check-static-NAME`. */
export function staticCheckName(variant: string): string {
  return `check-static-${variant}`;
}

/**
 * The name of the result link a target's build leaves in the out directory: `result-NAME` for a variant; for its
 * check, the variant's link with `-proof` (static: the variant's proof, a store path holding probe.json and
 * report.txt) or `-gpu-proof` (the GPU check), beside the result. Output links are `result-NAME-OUTPUT` with a one-word
 * output (driver/job.ts resultOutputs), so `-proof` is left out of the outputs there, as flox's `-log` is.
 */
export function resultLinkName(t: { name: string; check?: { of: string; kind: "static" | "gpuCheck" } }): string {
  if (!t.check) return `result-${t.name}`;
  return `result-${t.check.of}-${t.check.kind === "static" ? PROOF_LINK_SUFFIX : `gpu-${PROOF_LINK_SUFFIX}`}`;
}

/** What the proof's result link adds to the variant's (`result-NAME-proof`). */
export const PROOF_LINK_SUFFIX = "proof";

/**
 * What a variant's static check waits for: the variant, and for an environment (torch-env, a named NAME-env) the static
 * checks of its members that are checked too (`checked`: the names whose checks are planned). Its proof lists theirs
 * (pkgs/checks.nix members.json), so its check is built after theirs; the build driver (targets.ts checkTargets) and
 * the wait (wait.ts variantWait) plan it the same way.
 */
export function staticCheckDeps(v: { name: string; package: PackageName; dependsOn: readonly string[] }, checked: ReadonlySet<string>): string[] {
  const env = v.package === ENV_PACKAGE || environmentOf(v.package) !== null;
  return [v.name, ...(env ? v.dependsOn.filter((d) => checked.has(d)).map(staticCheckName) : [])];
}

/**
 * The static check nodes of `variants` for a plan: one per variant, after it and after the checks of what it is built
 * on (staticCheckDeps), with the variant's package (its schedule's memory per compile job, as the driver's check target
 * has) and `check` naming what it checks.
 */
export function staticCheckInputs<T extends PlanInput>(variants: readonly T[]): (T & { check: { of: string; kind: "static" } })[] {
  const names = new Set(variants.map((v) => v.name));
  return variants.map((v) => ({ ...v, name: staticCheckName(v.name), dependsOn: staticCheckDeps(v, names), check: { of: v.name, kind: "static" as const } }));
}

/**
 * What `cudaClosures` needs of a variant: its CUDA version, whether it sets config.cudaCapabilities (package-set
 * scope), and its nixpkgs instance (variants with one `nixpkgsKey` share one).
 */
export type ClosureInput = Pick<Variant, "name" | "cuda" | "cudaCapabilitiesForPackageSet" | "nixpkgsKey">;

/**
 * Which CUDA closures a set of variants needs built. Torch-scope CUDA variants use nixpkgs' default CUDA set of
 * their (rev, system, CUDA version): the derivations binary caches serve, shared by every such variant ("shared",
 * assumed substituted). Package-set-scope variants force their own CUDA closure, one per distinct instance key
 * ("own", each built from source, DEFAULT_CUDA_CLOSURE_SECONDS). CPU-only variants need none.
 */
export function cudaClosures(vs: readonly ClosureInput[]): {
  own: { key: string; variants: string[] }[];
  shared: { key: string; variants: string[] }[];
} {
  const group = (pred: (v: ClosureInput) => boolean) => {
    const m = new Map<string, string[]>();
    for (const v of vs) {
      if (v.cuda === null || !pred(v)) continue;
      // push, not a copy of the group per variant: linear in the variant count.
      const names = m.get(v.nixpkgsKey);
      if (names) names.push(v.name);
      else m.set(v.nixpkgsKey, [v.name]);
    }
    return [...m].map(([key, variants]) => ({ key, variants }));
  };
  return { own: group((v) => v.cudaCapabilitiesForPackageSet), shared: group((v) => !v.cudaCapabilitiesForPackageSet) };
}

/**
 * The default build time of a package: its entry of DEFAULT_BUILD_SECONDS, or for a named environment (matrix.ts
 * `environments`, package `NAME-env`) torch-env's, since both are the same python.withPackages buildEnv.
 * @returns seconds and the source of the figure; null for a package no table knows (then its estimate is unknown)
 */
export function defaultBuildSeconds(pkg: PackageName): { seconds: number; source: string } | null {
  if (Object.hasOwn(DEFAULT_BUILD_SECONDS, pkg)) return DEFAULT_BUILD_SECONDS[pkg]!;
  if (environmentOf(pkg) !== null) {
    const env = builtInCatalog.buildSeconds.environment;
    return { seconds: env.seconds, source: `a named environment is built like ${ENV_PACKAGE}: ${env.source}` };
  }
  return null;
}

/**
 * What drives torch's build time, as a model (not a measurement) over the catalog's two sourced figures
 * (`Catalog.buildSeconds`, catalog/binary-cache.ts BUILD_SECONDS); `estimateBuild` uses it.
 * - `cudaOneCapabilitySeconds`: `torchCuda`, 1.75 h for a CUDA torch compiled for one capability at its 24 cores (the
 *   guide's own MAX_JOBS), which are `referenceCores` (concurrency.ts REFERENCE_CORES).
 * - `cpuFigure`: `torchCpu`, a CPU-only torch: PyTorch CI's x86 CPU wheel builds, about 49 min each on 48 vCPUs (what
 *   Nix's cores count too); `cpuSeconds` is the same core-seconds at `referenceCores` (49 min × 48 / 24 = 98 min), so
 *   both figures share one reference.
 * - per capability: the CUDA part of the one-capability figure (1.75 h − the CPU figure at 24 cores), once per
 *   capability compiled. The two figures come from different machines (a Graviton4 and a Cascade Lake with SMT), so
 *   this difference (7 min) is weak. That the device code grows per capability is the catalog's measurement
 *   (catalog/device-code-size.ts: 590–1,025 MB of torch kernels per capability in PyPI torch 2.11); that the time
 *   grows in proportion is the model.
 * - cores: the time scales with referenceCores / cores (compile jobs in parallel; a model that ignores the serial
 *   link steps, so it flatters many cores and is harsh on few).
 */
const { torchCuda, torchCpu } = builtInCatalog.buildSeconds;
export const TORCH_BUILD_MODEL = {
  referenceCores: REFERENCE_CORES,
  /** The CPU-only figure as read, at its own cores. */
  cpuFigure: { seconds: torchCpu.seconds, cores: torchCpu.cores },
  /** The CPU-only figure at referenceCores: the same core-seconds (estimateBuild's coreSeconds). */
  cpuSeconds: (torchCpu.seconds * torchCpu.cores) / REFERENCE_CORES,
  /** The CUDA figure for one capability, at its own cores, which are referenceCores. */
  cudaOneCapabilitySeconds: torchCuda.seconds,
  cpuSource: torchCpu.source,
} as const;

/** The basis of an estimate taken from the catalog's table (DEFAULT_BUILD_SECONDS) as it is. */
export const CATALOG_FIGURE = "catalog figure";

/** The basis of a check's estimate without an earlier check: DEFAULT_CHECK_SECONDS. */
export const CHECK_FIGURE = "check figure";

/** What `estimateBuild` reads of a target besides its package; each field may be unknown (absent). */
export interface EstimateInput {
  package: PackageName;
  /** CUDA version, or null for CPU-only; absent when not known. */
  cuda?: string | null;
  /** The capabilities nvcc compiles (Variant.cudaCapabilities); absent when not known (1 is taken). */
  cudaCapabilities?: readonly string[];
  /** Set on a check of a variant (targets.ts BuildTarget.check): estimated as a check, never as its package's build. */
  check?: { kind: "static" | "gpuCheck" };
}

/**
 * A build's estimate without earlier builds: for pytorch the model above (CUDA or CPU, the capabilities compiled, the
 * builder's `cores`); for another package its catalog figure (DEFAULT_BUILD_SECONDS, defaultBuildSeconds).
 * A check of a variant (`t.check`) is DEFAULT_CHECK_SECONDS, basis CHECK_FIGURE.
 * @param cores the cores one build gets (`--cores`, the jobs rule's cores per build); null when not known
 * @returns seconds, the basis in words ("model: CUDA, 1 capability, 16 cores") and, for torch's model, the
 *   core-seconds (seconds × cores: the schedule divides them by the cores a build gets); null for a package no table knows
 */
export function estimateBuild(t: EstimateInput, cores: number | null): { seconds: number; basis: string; coreSeconds?: number } | null {
  // A check of a variant runs the probe over what was built: its own figure, whatever the package and cores.
  if (t.check) return { seconds: DEFAULT_CHECK_SECONDS.seconds, basis: CHECK_FIGURE };
  const d = defaultBuildSeconds(t.package);
  if (t.package !== TORCH_PACKAGE || t.cuda === undefined) return d && { seconds: d.seconds, basis: CATALOG_FIGURE };
  const m = TORCH_BUILD_MODEL;
  const caps = t.cuda === null ? 0 : Math.max(1, t.cudaCapabilities?.length ?? 1);
  const atRef = m.cpuSeconds + caps * (m.cudaOneCapabilitySeconds - m.cpuSeconds);
  const seconds = cores !== null && cores > 0 ? (atRef * m.referenceCores) / cores : atRef;
  const what = t.cuda === null ? "CPU" : `CUDA, ${caps} capabilit${caps === 1 ? "y" : "ies"}`;
  return { seconds, coreSeconds: atRef * m.referenceCores, basis: `model: ${what}, ${cores !== null && cores > 0 ? `${cores} cores` : `${m.referenceCores} cores (cores not known)`}` };
}

/** Default duration estimates in seconds (DEFAULT_BUILD_SECONDS without the sources). */
export const DEFAULT_ESTIMATE_S: Record<PackageName, number> = Object.fromEntries(
  Object.entries(DEFAULT_BUILD_SECONDS).map(([k, v]) => [k, v.seconds]),
);

/** The part of a target the plan needs. */
export interface PlanInput extends EstimateInput {
  name: string;
  package: PackageName;
  dependsOn: readonly string[];
}

/** One node of the plan. */
export interface PlanNode<T extends PlanInput = PlanInput> {
  target: T;
  name: string;
  /** Names this node waits for. */
  deps: string[];
  /** Names that wait for this node. */
  dependents: string[];
  /** Estimated duration in seconds; null when unknown (`unknownReason` says why). */
  estimateS: number | null;
  /**
   * Where the estimate comes from: an earlier report, the median of the same package's history, the default, or
   * nowhere ("unknown").
   */
  estimateSource: "history" | "package-median" | "default" | "model" | "unknown";
  /**
   * The estimate's basis in words: "an earlier build of this variant", "median of 3 earlier pytorch builds", "model:
   * CUDA torch, 1 capability, 16 cores" (TORCH_BUILD_MODEL), "catalog figure"; "" when unknown.
   */
  estimateBasis: string;
  /** Why the estimate is unknown, in words; null when it is known. */
  unknownReason: string | null;
  /**
   * Core-seconds of a build whose time the model scales with its cores (torch's TORCH_BUILD_MODEL, without history):
   * at c cores it takes coreSeconds / c. null: its estimate is a fixed figure whatever its cores (a catalog figure,
   * an earlier build's duration).
   */
  coreSeconds: number | null;
  /**
   * Bottom level in seconds: estimate + the longest estimate chain among dependents. Higher runs first. An unknown
   * estimate counts 0 here: the order needs a number, and no figure is better than a made-up one.
   */
  priority: number;
  /** Longest dependency chain (edges) leading to this node: its wave. */
  wave: number;
}

/** A checked DAG with priorities. */
export interface Plan<T extends PlanInput = PlanInput> {
  /** Nodes by name. */
  nodes: Map<string, PlanNode<T>>;
  /** A topological order (dependencies first), ties by priority (desc) then name. */
  order: string[];
  /** Waves: names grouped by longest dependency chain; within a wave, by priority. */
  waves: string[][];
}

/** Thrown for a plan that is not a DAG over known nodes. */
export class PlanError extends InputError {}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The kind of a build whose earlier durations stand for another's: the package, CPU or CUDA, and the number of
 * capabilities compiled ("pytorch|cuda|1"); a CPU torch's time says nothing of a CUDA torch's.
 */
export function buildKind(t: EstimateInput): string {
  const kind = t.cuda === undefined ? "?" : t.cuda === null ? "cpu" : "cuda";
  // A check of a variant is no build of its package: its time is the probe's, never a median of torch builds.
  return `${t.check ? `check:${t.check.kind}:` : ""}${t.package}|${kind}|${t.cuda ? Math.max(1, t.cudaCapabilities?.length ?? 1) : 0}`;
}

/** "CUDA pytorch (1 capability)", "CPU pytorch", "torchaudio": a build kind in words. */
function kindWords(t: EstimateInput): string {
  if (t.check) return `${t.check.kind === "static" ? "static" : "GPU"} check(s) of ${kindWords({ ...t, check: undefined })}`;
  if (t.cuda === undefined) return t.package;
  if (t.cuda === null) return `CPU ${t.package}`;
  const caps = Math.max(1, t.cudaCapabilities?.length ?? 1);
  return `CUDA ${t.package} (${caps} capabilit${caps === 1 ? "y" : "ies"})`;
}

/** What share of the model's shortest build (`historyFloor`) an earlier build must reach to count as history. */
export const HISTORY_FLOOR_SHARE = 0.1;

/**
 * The shortest duration in seconds an earlier build of `pkg` must have to count as history: HISTORY_FLOOR_SHARE of the
 * model's shortest build of it (torch: the CPU build, TORCH_BUILD_MODEL.cpuSeconds; another package: its catalog
 * figure). A build far shorter than that is no build of the real package (a test's stand-in, a build that reused
 * its outputs), and would price hours of compiling at seconds. 0 for a package no table knows. With `check`, the
 * floor of a check of a variant of `pkg` (its probe, not a build).
 */
export function historyFloor(pkg: PackageName, check = false): number {
  // A check's shortest is its own figure's share (DEFAULT_CHECK_SECONDS), whatever package it checks.
  const base = check ? DEFAULT_CHECK_SECONDS.seconds : pkg === TORCH_PACKAGE ? TORCH_BUILD_MODEL.cpuSeconds : (defaultBuildSeconds(pkg)?.seconds ?? 0);
  return base * HISTORY_FLOOR_SHARE;
}

/** Order of two nodes for "which runs first": priority desc, own estimate desc, name asc. */
export function compareNodes(a: PlanNode, b: PlanNode): number {
  return b.priority - a.priority || (b.estimateS ?? 0) - (a.estimateS ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The nodes of the plan, each with its estimate (history of that name, else the median of the history of its kind:
 * the same package, CPU or CUDA, and the same number of capabilities (`buildKind`), else the package's default, else
 * unknown) and its dependents linked.
 * @throws PlanError for a duplicate name or a dependency that is not in `targets`
 */
function planNodes<T extends PlanInput>(
  targets: readonly T[],
  history: ReadonlyMap<string, number>,
  o: { cores: number | null; fixed: ReadonlyMap<string, { seconds: number; basis: string }> },
): Map<string, PlanNode<T>> {
  const nodes = new Map<string, PlanNode<T>>();
  const byPackage = new Map<string, number[]>();
  const byName = new Map(targets.map((t) => [t.name, t]));
  for (const [name, s] of history) {
    const t = byName.get(name);
    if (!t) continue;
    const k = buildKind(t);
    const list = byPackage.get(k);
    if (list) list.push(s);
    else byPackage.set(k, [s]);
  }
  for (const t of targets) {
    if (nodes.has(t.name)) throw new PlanError(`duplicate target ${t.name}`);
    const h = history.get(t.name);
    const pkgHist = byPackage.get(buildKind(t));
    const fallback = o.fixed.get(t.name) ?? estimateBuild(t, o.cores);
    const scales = h === undefined && !(pkgHist && pkgHist.length > 0) && fallback !== null ? ((fallback as { coreSeconds?: number }).coreSeconds ?? null) : null;
    const [estimateS, estimateSource, estimateBasis] =
      h !== undefined
        ? ([h, "history", "an earlier build of this variant"] as const)
        : pkgHist && pkgHist.length > 0
          ? ([median(pkgHist), "package-median", `median of ${pkgHist.length} earlier ${kindWords(t)} build(s)`] as const)
          : fallback !== null
            ? ([fallback.seconds, fallback.basis.startsWith("model") ? "model" : "default", fallback.basis] as const)
            : ([null, "unknown", ""] as const);
    nodes.set(t.name, {
      target: t,
      name: t.name,
      deps: [...new Set(t.dependsOn)],
      dependents: [],
      estimateS,
      estimateSource,
      estimateBasis,
      coreSeconds: scales,
      unknownReason:
        estimateS === null ? `no earlier build of ${t.name} or of another ${t.package}, and no default build time for package "${t.package}"` : null,
      priority: 0,
      wave: 0,
    });
  }
  for (const n of nodes.values())
    for (const d of n.deps) {
      const dep = nodes.get(d);
      if (!dep) throw new PlanError(`${n.name} depends on ${d}, which is not in the plan`);
      dep.dependents.push(n.name);
    }
  return nodes;
}

/**
 * Kahn's algorithm: a topological order of `nodes`, setting each node's `wave`; leftovers form a cycle.
 * @throws PlanError naming the nodes of a dependency cycle
 */
function topologicalOrder(nodes: Map<string, PlanNode>): string[] {
  const indeg = new Map([...nodes.values()].map((n) => [n.name, n.deps.length]));
  let frontier = [...nodes.values()].filter((n) => n.deps.length === 0).map((n) => n.name);
  const topo: string[] = [];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const name of frontier) {
      topo.push(name);
      const n = nodes.get(name)!;
      for (const m of n.dependents) {
        const dm = nodes.get(m)!;
        dm.wave = Math.max(dm.wave, n.wave + 1);
        indeg.set(m, indeg.get(m)! - 1);
        if (indeg.get(m) === 0) next.push(m);
      }
    }
    frontier = next;
  }
  if (topo.length !== nodes.size) {
    const sorted = new Set(topo);
    const left = [...nodes.keys()].filter((n) => !sorted.has(n));
    throw new PlanError(`dependency cycle among: ${left.join(", ")}`);
  }
  return topo;
}

/**
 * A binary heap of plan nodes, best first by `compareNodes`: push and pop in O(log n), so taking the best ready node
 * again and again costs O(n log n) over a plan, not O(n²) (a sort of the ready set per pick).
 */
class NodeHeap<N extends PlanNode> {
  private readonly items: N[] = [];
  get size(): number {
    return this.items.length;
  }
  push(n: N): void {
    const a = this.items;
    a.push(n);
    for (let i = a.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (compareNodes(a[i]!, a[up]!) >= 0) break;
      [a[i], a[up]] = [a[up]!, a[i]!];
      i = up;
    }
  }
  pop(): N | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < a.length && compareNodes(a[l]!, a[best]!) < 0) best = l;
      if (r < a.length && compareNodes(a[r]!, a[best]!) < 0) best = r;
      if (best === i) break;
      [a[i], a[best]] = [a[best]!, a[i]!];
      i = best;
    }
    return top;
  }
}

/** A dependency that no longer holds its dependents back. */
const isDone = (s: NodeState | undefined) => s === "built" || s === "cached";

/**
 * The ready nodes of a plan, kept as the run goes (what readyNodes computes from scratch): each node counts its
 * dependencies not yet built or cached; `finished` counts down its dependents, and a node reaching zero joins a heap
 * ordered by `compareNodes`. Every pick and every finish is O(log n) (plus the node's edges), so a whole plan is
 * O((nodes + edges) log nodes) — linear in the variant count up to the logarithm.
 *
 * `state` is read when a node is taken: a node that is no longer pending (running, failed, skipped meanwhile) is
 * passed over.
 */
export class ReadyQueue {
  private readonly waiting = new Map<string, number>();
  private readonly heap = new NodeHeap<PlanNode>();
  /**
   * @param plan the plan
   * @param state node states as they are now (a missing name is pending); read again on each `take`
   */
  constructor(
    private readonly plan: Plan,
    private readonly state: ReadonlyMap<string, NodeState>,
  ) {
    for (const n of plan.nodes.values()) {
      let left = 0;
      for (const d of n.deps) if (!isDone(state.get(d))) left++;
      this.waiting.set(n.name, left);
      if (left === 0) this.heap.push(n);
    }
  }

  /** The best pending node whose dependencies are all built or cached, removed from the queue; undefined when none. */
  take(): string | undefined {
    while (this.heap.size > 0) {
      const n = this.heap.pop()!;
      if ((this.state.get(n.name) ?? "pending") === "pending") return n.name;
    }
    return undefined;
  }

  /** `name` is built or cached now: each dependent whose every dependency is done becomes ready. */
  finished(name: string): void {
    for (const m of this.plan.nodes.get(name)!.dependents) {
      const left = this.waiting.get(m)! - 1;
      this.waiting.set(m, left);
      if (left === 0) this.heap.push(this.plan.nodes.get(m)!);
    }
  }
}

/** The run order: repeatedly take the best ready node (`compareNodes`; a topological order that follows the priorities). */
function priorityOrder(nodes: Map<string, PlanNode>): string[] {
  const plan = { nodes, order: [], waves: [] };
  const queue = new ReadyQueue(plan, new Map());
  const order: string[] = [];
  for (let name = queue.take(); name !== undefined; name = queue.take()) {
    order.push(name);
    queue.finished(name);
  }
  return order;
}

/**
 * Build the plan.
 * @param targets selected targets; every `dependsOn` entry must be among them
 * @param history name → duration in seconds of an earlier successful build (from `durationsFromReports`): it wins
 * @param opts.cores the cores one build gets, for the estimates without history (`estimateBuild`); null: not known
 * @param opts.fixed estimates given by the caller for nodes that are no package (model/wait.ts: the cache model's
 *   builds), with their basis (one starting "model" counts as source "model")
 * @throws PlanError for a duplicate name, a dependency that is not in `targets`, or a cycle (named)
 */
export function makePlan<T extends PlanInput>(
  targets: readonly T[],
  history: ReadonlyMap<string, number> = new Map(),
  opts: { cores?: number | null; fixed?: ReadonlyMap<string, { seconds: number; basis: string }> } = {},
): Plan<T> {
  const nodes = planNodes(targets, history, { cores: opts.cores ?? null, fixed: opts.fixed ?? new Map() });
  const topo = topologicalOrder(nodes);
  // Priority: own estimate plus the longest chain of dependents after it (critical path).
  for (const name of [...topo].reverse()) {
    const n = nodes.get(name)!;
    n.priority = (n.estimateS ?? 0) + n.dependents.reduce((most, m) => Math.max(most, nodes.get(m)!.priority), 0);
  }
  const order = priorityOrder(nodes);
  let waveCount = 0;
  for (const n of nodes.values()) waveCount = Math.max(waveCount, n.wave + 1);
  const waves: string[][] = Array.from({ length: waveCount }, () => []);
  for (const name of order) waves[nodes.get(name)!.wave].push(name);
  return { nodes, order, waves };
}

/** Per-node state the scheduler tracks. */
export type NodeState = "pending" | "running" | "built" | "cached" | "failed" | "skipped";

/** True when every dependency of `name` is built or cached. */
export function isReady(plan: Plan, state: ReadonlyMap<string, NodeState>, name: string): boolean {
  return plan.nodes.get(name)!.deps.every((d) => state.get(d) === "built" || state.get(d) === "cached");
}

/** Pending nodes whose dependencies are all built or cached, best first (`compareNodes`). */
export function readyNodes(plan: Plan, state: ReadonlyMap<string, NodeState>): string[] {
  return [...plan.nodes.values()]
    .filter((n) => (state.get(n.name) ?? "pending") === "pending" && isReady(plan, state, n.name))
    .sort(compareNodes)
    .map((n) => n.name);
}

/** The next node to start, or undefined when nothing is ready. */
export function pickNext(plan: Plan, state: ReadonlyMap<string, NodeState>): string | undefined {
  return readyNodes(plan, state)[0];
}

/** Every node that transitively depends on `name`, in topological order. */
export function transitiveDependents(plan: Plan, name: string): string[] {
  const seen = new Set<string>();
  const stack = [...plan.nodes.get(name)!.dependents];
  while (stack.length > 0) {
    const m = stack.pop()!;
    if (seen.has(m)) continue;
    seen.add(m);
    for (const x of plan.nodes.get(m)!.dependents) stack.push(x);
  }
  return plan.order.filter((n) => seen.has(n));
}

/** One simulated run of a node. */
export interface SimSlot {
  name: string;
  /** Seconds from the start of the run. */
  start: number;
  end: number;
  /** The cores it was started with (concurrency.ts startBuilds); null in the fixed-jobs replay (`jobs` a number). */
  cores: number | null;
}

/**
 * Replay the driver's schedule on the estimates: whenever slots are free, start the best ready nodes.
 * - `cap` a Capacity: the driver's own policy (concurrency.ts startBuilds: the free slots shared out among the ready
 *   builds by priority, or `--cores` each); a build whose estimate scales with its cores (PlanNode.coreSeconds) takes
 *   coreSeconds / cores, any other its estimate.
 * - `cap` a number: that many builds at once, each its estimate (the fixed-jobs replay).
 * Nodes in `done` (cached) take no time and no slot.
 * @param durations name → seconds; wins over the estimates
 * @returns the slots in start order, the makespan in seconds, and the nodes run without a duration (neither in
 *   `durations` nor estimated: they count 0 s, so with any of them the makespan is only a lower bound)
 */
export function simulate(
  plan: Plan,
  cap: number | Capacity,
  durations: ReadonlyMap<string, number> = new Map(),
  done: ReadonlySet<string> = new Set(),
): { slots: SimSlot[]; makespan: number; unknown: string[] } {
  const state = new Map<string, NodeState>();
  for (const n of done) state.set(n, "cached");
  const queue = new ReadyQueue(plan, state);
  const running: { slot: SimSlot; slots: number }[] = [];
  const slots: SimSlot[] = [];
  const unknown: string[] = [];
  let used = 0;
  let now = 0;
  const start = (name: string, cores: number | null, held: number) => {
    state.set(name, "running");
    const n = plan.nodes.get(name)!;
    const d = durations.get(name) ?? (cores !== null && n.coreSeconds !== null ? n.coreSeconds / cores : n.estimateS);
    if (d === null) unknown.push(name);
    const slot = { name, start: now, end: now + (d ?? 0), cores };
    running.push({ slot, slots: held });
    slots.push(slot);
    used += held;
  };
  for (;;) {
    if (typeof cap === "number") {
      while (running.length < Math.max(1, cap)) {
        const next = queue.take();
        if (next === undefined) break;
        start(next, null, 1);
      }
    } else {
      // As many ready nodes as could start (startBuilds starts every one it is given up to this count), best first.
      const room = cap.cores !== null ? (cap.jobs ?? 1) - running.length : Math.min(cap.slots - used, cap.jobs === null ? Infinity : cap.jobs - running.length);
      const ready: ReadyBuild[] = [];
      while (ready.length < room) {
        const next = queue.take();
        if (next === undefined) break;
        const n = plan.nodes.get(next)!;
        ready.push({ name: next, package: n.target.package, weight: n.priority });
      }
      for (const b of startBuilds(ready, { count: running.length, slotsUsed: used }, cap)) start(b.name, b.cores, b.slots);
    }
    if (running.length === 0) break;
    // At most one build per slot runs at once: finding the earliest is O(slots), not a sort of the plan.
    now = running.reduce((t, r) => Math.min(t, r.slot.end), Infinity);
    for (let i = running.length - 1; i >= 0; i--)
      if (running[i]!.slot.end <= now) {
        const [r] = running.splice(i, 1);
        used -= r!.slots;
        state.set(r!.slot.name, "built");
        queue.finished(r!.slot.name);
      }
  }
  return { slots, makespan: now, unknown };
}

/**
 * Lower bound of any schedule's makespan: max(critical path, total work / jobs), in seconds.
 * @param durations name → seconds; defaults to each node's estimate (an unknown one counts 0: still a lower bound)
 */
export function lowerBound(
  plan: Plan,
  jobs: number,
  durations: ReadonlyMap<string, number> = new Map(),
): { criticalPath: number; totalWork: number; bound: number } {
  const d = (n: string) => durations.get(n) ?? plan.nodes.get(n)!.estimateS ?? 0;
  const finish = new Map<string, number>();
  for (const name of plan.order) {
    const n = plan.nodes.get(name)!;
    finish.set(name, d(name) + n.deps.reduce((most, x) => Math.max(most, finish.get(x)!), 0));
  }
  // reduce, not Math.max(...): a spread of every node overflows the stack past about 100,000 arguments.
  let criticalPath = 0;
  for (const f of finish.values()) criticalPath = Math.max(criticalPath, f);
  const totalWork = plan.order.reduce((s, n) => s + d(n), 0);
  return { criticalPath, totalWork, bound: Math.max(criticalPath, totalWork / Math.max(1, jobs)) };
}
