/**
 * What `build --dry-run` reports, decided without printing (pure): one row per planned node in plan order, with
 * its wave, estimate, priority, whether it is already built, the exact command and notes; the totals; the CUDA
 * closures the selection needs. commands/build-main.ts prints it as text or JSON.
 */
import { buildCmd, type BackendOptions } from "./backend.ts";
import { cudaClosures, simulate, type Plan } from "../model/plan.ts";
import { storeName, type CachedAnswer, type DryRealise } from "./store.ts";
import { MODELLED_INPUTS, type ModelledBuild } from "../model/cache-model.ts";
import { waitOf, type Wait } from "../model/wait.ts";
import type { Capacity } from "../model/concurrency.ts";
import type { NixAnswer } from "./ask-nix.ts";
import type { BuildTarget } from "./targets.ts";

/** One row of the dry-run plan. */
interface DryRunRow {
  order: number;
  name: string;
  package: string;
  /** A check of a variant (its static check, the variant's proof; or its GPU check): which variant and which check; null for a variant. */
  check: { of: string; kind: "static" | "gpuCheck" } | null;
  wave: number;
  selectedAs: "requested" | "dependency" | undefined;
  dependsOn: string[];
  system: string;
  file: string;
  /** Estimated build time in seconds; null when unknown (`estimateUnknown` says why). */
  estimateS: number | null;
  /** "history", "package-median", "default", "model" or "unknown" (plan.ts PlanNode.estimateSource). */
  estimateSource: string;
  /** The estimate's basis in words (plan.ts PlanNode.estimateBasis): "model: CUDA torch, 1 capability, 16 cores". */
  estimateBasis: string;
  /** Why the estimate is unknown; null when it is known. */
  estimateUnknown: string | null;
  priorityS: number;
  /** The cores the schedule starts it with (concurrency.ts startBuilds, as the driver will); null when it is not built. */
  cores: number | null;
  cached: boolean;
  /**
   * Nix was asked and will fetch its outputs from a substituter instead of building it (its derivation is not among
   * those Nix lists to build): not built, no time in the wait.
   */
  fetch: boolean;
  cachedBy: CachedAnswer["by"] | null;
  outPath: string | null;
  command: { argv: string[]; cwd: string };
  notes: string[];
  /**
   * What Nix says realising it builds and fetches (`--ask-store`: nix-store --realise --dry-run with the user's
   * substituters), by store name ("python3.13-torch-2.12.0"); `error` when Nix could not say; null when Nix was not asked.
   */
  store: { toBuild: string[]; toFetch: string[]; unreachable: string[] } | { error: string } | null;
  /** The cache model's reasons this variant is off the binary cache (model/cache-model.ts); [] when it is not. */
  offCache: string[];
  /**
   * A named environment's extras (matrix.ts `environments`): attributes of the variant's Python set, built on its torch
   * within this variant's build; their own time has no estimate here, so the plan names them.
   */
  extras: string[];
}

/** What dryRunRows is told besides the plan (see its parameters). */
interface DryRunOptions {
  host: string;
  force: boolean;
  /** The host's build capacity: the driver's schedule (concurrency.ts). */
  capacity: Capacity;
  /** Per name, Nix's dry-run answer (build --ask-store). */
  store?: ReadonlyMap<string, DryRealise | { error: string }>;
  /** The cache model of the selection (model/cache-model.ts modelCacheMisses). */
  model?: { builds: ModelledBuild[]; reasons: ReadonlyMap<string, string[]> };
  /** What Nix said it would build and fetch, or why the model stands (ask-nix.ts). */
  nixAnswer?: NixAnswer | null;
  /** Earlier durations by name: the estimates the wait is made of (the plan's own). */
  history?: ReadonlyMap<string, number>;
}

/**
 * The dry-run rows and totals of `plan`.
 * @param o.host this machine's Nix system; a node for another system without `builders` gets a note
 * @param o.force every node counts as to build
 * @param o.capacity the host's compile slots: the driver's schedule (concurrency.ts startBuilds) gives the wait
 * @returns the rows; counts to build, to fetch (Nix's answer) and already built; the estimated makespan in seconds, or null with the reason
 *   when a variant to build has no estimate; the CUDA closures; Nix's answer; the cache model's extra builds
 */
export function dryRunRows(
  plan: Plan<BuildTarget>,
  cached: ReadonlyMap<string, CachedAnswer>,
  why: ReadonlyMap<string, "requested" | "dependency">,
  backend: BackendOptions,
  o: DryRunOptions,
) {
  const closures = cudaClosures(plan.order.map((n) => plan.nodes.get(n)!.target));
  const fetched = o.force ? new Set<string>() : nixFetches(plan.order, cached, o.store);
  const done = new Set([...[...cached].filter(([, c]) => c.cached).map(([n]) => n), ...fetched]);
  const sim = simulate(plan, o.capacity, new Map(), o.force ? new Set() : done);
  const cores = new Map(sim.slots.map((x) => [x.name, x.cores]));
  const rows: DryRunRow[] = plan.order.map((name, i) => dryRunRow(plan, name, i, { cached, why, backend, fetched, cores, ...o }));
  // Across the selection, each derivation and path once (variants share torch, magma, nccl, …).
  const answers = [...(o.store?.values() ?? [])].filter((s): s is DryRealise => !("error" in s));
  const store = answers.length
    ? {
        toBuild: [...new Set(answers.flatMap((s) => s.toBuild))].map(storeName),
        toFetch: [...new Set(answers.flatMap((s) => s.toFetch))].map(storeName),
        unreachable: [...new Set(answers.flatMap((s) => s.unreachable))],
        answered: answers.length,
      }
    : null;
  const builds = nixBuilds(o.model?.builds ?? [], store);
  const wait = waitOf(
    plan.order.map((n) => plan.nodes.get(n)!.target),
    builds,
    o.history ?? new Map(),
    { capacity: o.capacity, done: o.force ? new Set() : done },
  );
  return {
    rows,
    /** Variants built here: neither built already nor fetched (Nix's answer, when asked). */
    toBuild: rows.filter((v) => !v.cached && !v.fetch).length,
    /** Variants Nix fetches from a substituter (0 when Nix was not asked). */
    toFetch: rows.filter((v) => v.fetch).length,
    cached: rows.filter((v) => v.cached).length,
    /**
     * The headline: seconds until the last selected variant is ready, by list scheduling on the estimates, the
     * dependency builds the cache cannot serve included (the same figure as `wait.seconds`); null when a build to do
     * has no estimate.
     */
    estimatedMakespanS: wait.seconds,
    /** Why it is unknown (the builds without an estimate); null when it is known. */
    estimatedMakespanUnknown: wait.unknown.length ? `no estimate for ${wait.unknown.join(", ")}` : null,
    /** The wait and its parts (the critical chain, summing to it), and the dependency builds it counts. */
    wait: waitJson(wait),
    /** The variants' own builds alone (without the dependency builds): what the headline was before it counted them. */
    variantsMakespanS: sim.unknown.length ? null : sim.makespan,
    cudaClosures: closures,
    /** Nix's answer across the selection (null without --ask-store or when Nix answered for no variant). */
    store,
    /** The cache model's extra builds, each counted once (null when not modelled). */
    cacheModel: o.model?.builds ?? null,
    /** Which answer the plan used: Nix's (asked: true, with its counts) or the model's (asked: false, with why); null when not asked for. */
    nixAnswer: o.nixAnswer ?? null,
  };
}

/** One row of the dry run: the plan's node `name` (at position `i`), its state, command, notes and cache answers. */
function dryRunRow(
  plan: Plan<BuildTarget>,
  name: string,
  i: number,
  o: DryRunOptions & {
    cached: ReadonlyMap<string, CachedAnswer>;
    why: ReadonlyMap<string, "requested" | "dependency">;
    backend: BackendOptions;
    fetched: ReadonlySet<string>;
    cores: ReadonlyMap<string, number | null>;
  },
): DryRunRow {
  const { cached, why, backend } = o;
  const n = plan.nodes.get(name)!;
  const c = cached.get(name);
  const cores = o.cores.get(name) ?? null;
  // The command as the driver will start it: with the cores the schedule gives it (unless --cores fixes them).
  const cmd = buildCmd(n.target, backend.cores !== undefined && cores !== null && !o.capacity.cores ? { ...backend, cores, coresByName: undefined } : backend);
  const notes: string[] = [];
  // --builders is the nix backend's (driver/build-options.ts refuses it with flox): advice names what this command takes.
  if (n.target.system !== o.host && backend.builders === undefined)
    notes.push(
      backend.backend === "flox"
        ? `system ${n.target.system} differs from this host (${o.host}): flox builds on this machine only; build it on a ${n.target.system} machine, or with \`--backend nix --builders\``
        : `system ${n.target.system} differs from this host (${o.host}): needs a remote builder (--builders)`,
    );
  if (c?.note && !c.cached) notes.push(`not instantiated here: ${c.note}`);
  return {
    order: i + 1,
    name,
    package: n.target.package,
    check: n.target.check ?? null,
    wave: n.wave,
    selectedAs: why.get(name),
    dependsOn: n.deps,
    system: n.target.system,
    file: n.target.file,
    estimateS: n.estimateS,
    estimateSource: n.estimateSource,
    estimateBasis: n.estimateBasis,
    estimateUnknown: n.unknownReason,
    priorityS: n.priority,
    cores,
    cached: o.force ? false : (c?.cached ?? false),
    fetch: o.fetched.has(name),
    cachedBy: c?.by ?? null,
    outPath: c?.outPath ?? null,
    command: { argv: cmd.argv, cwd: cmd.cwd },
    notes,
    store: storeRow(o.store?.get(name)),
    offCache: o.model?.reasons.get(name) ?? [],
    extras: [...(n.target.extras ?? [])],
  };
}

/**
 * The variants Nix fetches instead of building: those not built already whose own derivation Nix's dry run does not
 * list to build (store.ts dryRealise: it lists the paths it would substitute instead). Without Nix's answer, none.
 */
function nixFetches(order: readonly string[], cached: ReadonlyMap<string, CachedAnswer>, store: DryRunOptions["store"]): Set<string> {
  const out = new Set<string>();
  for (const name of order) {
    const c = cached.get(name);
    const a = store?.get(name);
    if (c?.cached || !c?.drvPath || a === undefined || "error" in a) continue;
    if (!a.toBuild.includes(c.drvPath)) out.add(name);
  }
  return out;
}

function storeRow(s: DryRealise | { error: string } | undefined): DryRunRow["store"] {
  if (s === undefined) return null;
  if ("error" in s) return { error: s.error };
  return { toBuild: s.toBuild.map(storeName), toFetch: s.toFetch.map(storeName), unreachable: s.unreachable };
}

/**
 * The cache model's builds that Nix's answer keeps: with an answer (`--ask-store`), those whose package Nix lists to
 * build (by pname: cache-model.ts MODELLED_INPUTS; a CUDA closure when any of its libraries is listed), with the model's
 * durations; without one, all of them.
 */
function nixBuilds(builds: readonly ModelledBuild[], store: { toBuild: string[] } | null): ModelledBuild[] {
  if (!store) return [...builds];
  const listed = (pname: string) => store.toBuild.some((n) => n === pname || n.startsWith(`${pname}-`) || n.includes(`-${pname}-`));
  return builds.filter((b) =>
    b.what === "cuda-closure"
      ? [MODELLED_INPUTS.nccl, MODELLED_INPUTS.magma, MODELLED_INPUTS.nvshmem].some(listed)
      : listed(b.what === "dependency" ? b.attr! : MODELLED_INPUTS[b.what]),
  );
}

/** The wait as the dry run's JSON carries it: seconds, the parts (critical chain), the dependency builds it counts. */
function waitJson(w: Wait) {
  return {
    seconds: w.seconds,
    parts: w.parts,
    offCacheS: w.offCacheSeconds,
    offCache: w.offCache.map((b) => ({ key: b.key, what: b.what, seconds: b.seconds, source: b.source })),
    unknown: w.unknown,
  };
}
