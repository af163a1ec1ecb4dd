/**
 * The `build` command's work: select, plan, probe, then print the plan (`--dry-run`) or build. Loaded only when
 * `build` runs (generator/driver/command.ts holds the light yargs definition).
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import { hostSystem, resolveBackend, type BackendOptions } from "../driver/backend.ts";
import { coresForPackage, jobsRule } from "../driver/jobs.ts";
import { onTorch } from "../catalog/packages.ts";
import { DEFAULT_CHECK_SECONDS, DEFAULT_CUDA_CLOSURE_SECONDS, makePlan } from "../driver/plan.ts";
import { dryRunRows } from "../driver/dry-run.ts";
import { durationsFromReports, formatDuration, makeRunId, summaryTable } from "../driver/report.ts";
import { runBuilds, shortPath } from "../driver/run.ts";
import { liveStatus, plainStatus } from "../driver/status.ts";
import { dryRealise, localSystemFeatures, probeCached, type CacheProbe, type DryRealise, type NixOptions } from "../driver/store.ts";
import { featureNeeds, parseMachines, systemFeaturesLine, type FeatureNeed } from "../driver/features.ts";
import { modelCacheMisses } from "../driver/cache-model.ts";
import type { BuildTarget } from "../driver/targets.ts";
import { checkFiles, checkTargets, loadTargets, selectTargets, SelectionError } from "../driver/targets.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";
import { exitCodeOf } from "../errors.ts";
import { UsageError, type BuildArgs } from "../driver/options.ts";
import { parseNixOptions } from "./shared.ts";


function positiveInt(name: string, v: number | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/**
 * Run `build` with parsed options: select, plan, probe, then print the plan (`--dry-run`) or build.
 * Writes to stdout/stderr and sets `process.exitCode`.
 * @returns the exit code
 */
export async function buildMain(a: BuildArgs): Promise<number> {
  try {
    return await buildMainInner(a);
  } catch (e) {
    const code = exitCodeOf(e);
    if (code !== null) {
      process.stderr.write(`variant-matrix build: ${(e as Error).message}\n`);
      process.exitCode = code;
      return code;
    }
    throw e;
  }
}

async function buildMainInner(a: BuildArgs): Promise<number> {
  const root = resolve(a.root ?? PROJECT_ROOT);
  const outDir = a.outDir !== undefined ? resolve(a.outDir) : root;
  const logsRoot = a.logsDir !== undefined ? resolve(a.logsDir) : resolve(root, "logs");
  const jobsArg = positiveInt("jobs", a.jobs, 1);
  const cores = positiveInt("cores", a.cores, 1);
  const retries = positiveInt("retries", a.retries ?? 0, 0) ?? 0;
  const nixOptions: NixOptions = [
    ...parseNixOptions(a.nixOption),
    ...(a.substituters !== undefined ? [["substituters", a.substituters] as const] : []),
  ];
  const maxJobs = a.maxJobs === undefined ? undefined : positiveInt("max-jobs", a.maxJobs, 0);
  const backend = await resolveBackend(a.backend ?? "auto");
  if (backend === "flox") {
    if (a.builders !== undefined || cores !== undefined || maxJobs !== undefined || a.substituters !== undefined)
      throw new UsageError(
        "--builders, --max-jobs, --substituters and --cores pass through to Nix with --backend nix only; flox build " +
          "takes none of them (set `builders` / `max-jobs` / `substituters` / `cores` in nix.conf for flox, or use --backend nix)",
      );
    if (outDir !== root)
      throw new UsageError("--out-dir works with --backend nix only: flox writes result-NAME in the project root");
  }

  const { targets: all, source } = await loadTargets({
    root,
    pkgsDir: a.pkgsDir !== undefined ? resolve(a.pkgsDir) : undefined,
    variants: a.variants,
    matrixFile: a.matrix !== undefined ? resolve(a.matrix) : undefined,
  });
  const sel = selectTargets(all, { names: a.names, filters: a.filter, package: a.package });
  checkFiles(sel.targets);
  const history = durationsFromReports(logsRoot);
  if (a.verify || a.verifyGpu) {
    // Checks of each selected variant's promise, after it (pkgs/checks.nix through the variant's own file).
    const dir = resolve(logsRoot, "checks");
    const checks = checkTargets(sel.targets, dir, !!a.verifyGpu);
    mkdirSync(dir, { recursive: true });
    for (const [f, text] of checks.files) writeFileSync(f, text);
    for (const t of checks.targets) {
      sel.targets.push(t);
      sel.why.set(t.name, "requested");
      if (!history.has(t.name)) history.set(t.name, DEFAULT_CHECK_SECONDS.seconds);
    }
  }
  const plan = makePlan(sel.targets, history);

  const rule = jobsRule({ cpus: availableParallelism(), memBytes: totalmem() }, cores, jobsArg);
  const backendOpts: BackendOptions = {
    backend,
    root,
    outDir: backend === "flox" ? root : outDir,
    builders: a.builders,
    maxJobs,
    copyTo: a.copyTo,
    cores: backend === "nix" ? rule.coresPerBuild : undefined,
    nixOptions,
  };
  // Packages whose compile processes need more memory than torch's get fewer cores (catalog/packages.ts gibPerCompileJob).
  const machine = { cpus: availableParallelism(), memBytes: totalmem() };
  const capped = new Map<string, { cores: number; why: string }>();
  if (backend === "nix" && cores === undefined)
    for (const t of sel.targets) {
      const c = coresForPackage(rule, machine, onTorch(t.package)?.gibPerCompileJob?.gib);
      if (c.why) capped.set(t.name, { cores: c.cores, why: `${t.package}: ${c.why}` });
    }
  backendOpts.coresByName = new Map([...capped].map(([n, c]) => [n, c.cores]));
  const cached: Map<string, CacheProbe> = a.force
    ? new Map()
    : await probeCached(sel.targets, backendOpts.outDir, nixOptions, { instantiate: !a.dryRun || !!a.probeStore });
  const host = hostSystem();

  // Which builder can take which variants (their requiredSystemFeatures: big-parallel, the ISA's gccarch-…).
  const needs = await builderNeeds(sel.targets.filter((t) => !cached.get(t.name)?.cached), host, a, nixOptions, backend);

  // What Nix would build and fetch for each instantiated variant, with the user's substituters: the dry run's real
  // answer (--probe-store) and what --skip-cached decides by.
  const askNix = (a.dryRun && !!a.probeStore) || (!a.dryRun && !!a.skipCached);
  const store = askNix ? await storeAnswers(sel.targets, cached, nixOptions) : undefined;
  if (!a.dryRun && a.skipCached && store)
    for (const t of sel.targets) {
      const c = cached.get(t.name);
      const s = store.get(t.name);
      if (c && !c.cached && c.drvPath && s && !("error" in s) && !s.toBuild.includes(c.drvPath) && s.unknown.length === 0)
        cached.set(t.name, { ...c, cached: true, by: "substituter" });
    }

  if (a.dryRun) {
    const pins = await pinsOf(a.matrix !== undefined ? resolve(a.matrix) : resolve(root, "matrix.ts"));
    const model = modelCacheMisses(
      sel.targets
        .filter((t): t is BuildTarget & { nixpkgs: string } => t.nixpkgs !== undefined && t.check === undefined)
        .map((t) => ({ name: t.name, system: t.system, python: t.python, cuda: t.cuda, nixpkgs: t.nixpkgs, cudaCapabilitiesForPackageSet: t.cudaCapabilitiesForPackageSet, nixpkgsKey: t.nixpkgsKey })),
      pins,
    );
    const d = dryRunRows(plan, cached, sel.why, backendOpts, { host, force: !!a.force, jobs: rule.jobs, store, model });
    const { rows: variants, cudaClosures: closures } = d;
    const sim = { makespan: d.estimatedMakespanS };
    const out = {
      dryRun: true,
      backend,
      root,
      source,
      jobs: rule.jobs,
      coresPerBuild: backend === "nix" ? rule.coresPerBuild : null,
      jobsRule: rule.explanation,
      // Builds given fewer cores than coresPerBuild: a package whose compile jobs need more memory (jobs.ts coresForPackage).
      coresCapped: Object.fromEntries(capped),
      force: !!a.force,
      toBuild: d.toBuild,
      cached: d.cached,
      estimatedMakespanS: d.estimatedMakespanS,
      cudaClosures: closures,
      store: d.store,
      cacheModel: d.cacheModel,
      systemFeatures: needs.groups,
      waves: plan.waves,
      variants,
    };
    if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    else {
      const lines = [
        `plan: ${variants.length} variant(s), ${out.cached} already built, ${out.toBuild} to build; backend ${backend}; ` +
          `jobs ${rule.jobs}${out.coresPerBuild ? `, cores per build ${out.coresPerBuild}` : ""}`,
        `  (${rule.explanation})`,
        ...[...new Set([...capped.values()].map((c) => `  cores per build ${c.cores} for ${c.why}`))],
        `  estimated makespan ${formatDuration(sim.makespan)} (estimates from ${history.size > 0 ? "earlier reports where known" : "defaults"})`,
        `  CUDA closures: ${closures.shared.length} nixpkgs instance(s) with the default capabilities (what the cache model below says the cache serves) for ` +
          `${closures.shared.reduce((a, c) => a + c.variants.length, 0)} variant(s); ${closures.own.length} built from source ` +
          `(package-set scope, about ${formatDuration(DEFAULT_CUDA_CLOSURE_SECONDS.seconds)} each, not in the makespan)` +
          (closures.own.length ? `: ${closures.own.map((c) => `${c.variants.join(", ")}`).join("; ")}` : ""),
        ...storeLines(d, !!a.probeStore),
        ...featureLines(needs),
        "",
      ];
      for (const v of variants) {
        const state = v.cached ? `already built (${v.cachedBy}): ${v.outPath}` : "to build";
        lines.push(
          `${String(v.order).padStart(3)}. [wave ${v.wave}] ${v.name}  est ${formatDuration(v.estimateS)} (${v.estimateSource})` +
            `${v.dependsOn.length ? `  after ${v.dependsOn.join(", ")}` : ""}`,
          `       ${state}`,
          `       $ ${v.command.argv.map((x) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(" ")}` +
            `   (in ${shortPath(v.command.cwd)})`,
          ...v.notes.map((x) => `       note: ${x}`),
          ...rowStoreLines(v),
        );
      }
      process.stdout.write(lines.join("\n") + "\n");
    }
    process.exitCode = 0;
    return 0;
  }

  // This machine builds (no remote builders, --max-jobs not 0) and does not declare what a variant requires: Nix would
  // refuse that variant only once its dependencies are built, hours in. Stop now with the nix.conf line.
  const refused = needs.groups.filter((g) => g.system === host && g.takenBy.length === 0);
  if (backend === "nix" && needs.localBuilds && !a.builders && refused.length)
    throw new UsageError(
      `this machine's Nix declares no ${[...new Set(refused.flatMap((g) => g.features.filter((f) => !(needs.local ?? []).includes(f))))].join(", ")}, ` +
        `which ${refused.reduce((n, g) => n + g.variants.length, 0)} variant(s) require (e.g. ${refused[0]!.variants[0]}): Nix would refuse them after building ` +
        `their dependencies. Their code runs while they build, so only a CPU that runs their ISA may take them. ` +
        (needs.hostLine ? `This CPU runs: add \`${needs.hostLine}\` to nix.conf (NixOS: nixpkgs.hostPlatform.gcc.arch declares its own), ` : "") +
        `or give --builders with machines that declare them (build --dry-run lists them)`,
    );

  const runId = makeRunId();
  const t0 = Date.now();
  // A terminal that reports no size (rows 0, e.g. `script` without a size) gets plain lines: log-update would draw nothing.
  const live = !a.plain && !a.json && process.stderr.isTTY === true && (process.stderr.rows ?? 0) > 0;
  const status = live ? liveStatus(process.stderr, plan.order.length, t0) : plainStatus(process.stderr, t0);
  status.event({
    type: "note",
    text: `run ${runId}: ${plan.order.length} variant(s), backend ${backend}, jobs ${rule.jobs} (${rule.explanation}); logs ${shortPath(resolve(logsRoot, runId))}`,
    at: t0,
  });
  let report;
  try {
    report = await runBuilds({
      plan,
      why: sel.why,
      backend: backendOpts,
      jobs: rule.jobs,
      retries,
      failFast: !!a.failFast,
      cached,
      logsRoot,
      runId,
      reportFile: a.report !== undefined ? resolve(a.report) : undefined,
      status,
      killGraceMs: a.killGrace !== undefined ? a.killGrace * 1000 : undefined,
    });
  } finally {
    status.close();
  }
  if (a.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else
    process.stdout.write(
      summaryTable(report) + `\nreport: ${shortPath(resolve(report.logsDir, "report.json"))}\n`,
    );
  process.exitCode = report.exitCode;
  return report.exitCode;
}


/** Nix's dry-run answer for every target that was instantiated and is not already built. */
async function storeAnswers(
  targets: readonly BuildTarget[],
  cached: ReadonlyMap<string, CacheProbe>,
  nixOptions: NixOptions,
): Promise<Map<string, DryRealise | { error: string }>> {
  const asked = targets.filter((t) => {
    const c = cached.get(t.name);
    return c !== undefined && !c.cached && c.drvPath !== null;
  });
  const answers = await dryRealise(asked.map((t) => cached.get(t.name)!.drvPath!), nixOptions);
  return new Map(asked.map((t, i) => [t.name, answers[i]!]));
}

/** The pins of the catalog with the local catalog beside the matrix (for the cache model's pin defaults). */
async function pinsOf(matrixFile: string) {
  const [{ catalog }, { withLocalCatalog }] = await Promise.all([import("../catalog/index.ts"), import("../pin/local.ts")]);
  try {
    return withLocalCatalog(catalog, dirname(matrixFile)).nixpkgs;
  } catch {
    return catalog.nixpkgs; // a bad local catalog is generate's to report; the model uses the built-in pins
  }
}

/** The dry run's summary of what is built besides the variants: Nix's answer, or the cache model. */
function storeLines(d: ReturnType<typeof dryRunRows>, probed: boolean): string[] {
  const out: string[] = [];
  if (d.store) {
    out.push(
      `  Nix (nix-store --realise --dry-run, your substituters) for ${d.store.answered} variant(s): ` +
        `${d.store.toBuild.length} derivation(s) to build, ${d.store.toFetch.length} path(s) to fetch (each counted once)`,
    );
    if (d.store.toBuild.length) out.push(`    to build: ${d.store.toBuild.join(", ")}`);
    if (d.store.unreachable.length)
      out.push(`    unreachable substituter(s): ${d.store.unreachable.join(", ")}: their paths count as to build (offline?)`);
  } else if (probed) out.push("  Nix could not answer for any variant (not instantiated here, e.g. offline): the cache model follows");
  if (!d.store && d.cacheModel) {
    const hours = d.cacheModel.reduce((a, b) => a + b.seconds, 0) / 3600;
    const count = (w: string) => d.cacheModel!.filter((b) => b.what === w).length;
    out.push(
      `  model (catalog/binary-cache.ts; --probe-store asks Nix): besides the variants, ${count("cuda-closure")} CUDA closure(s), ` +
        `${count("nccl")} NCCL, ${count("nvshmem")} NVSHMEM, ${count("magma")} magma and ${count("triton")} triton build(s) the CUDA cache cannot serve, about ${hours.toFixed(1)} h, each counted once`,
    );
  }
  return out;
}

/** One variant's lines: Nix's answer, else the model's reasons. */
function rowStoreLines(v: ReturnType<typeof dryRunRows>["rows"][number]): string[] {
  if (v.store && "error" in v.store) return [`       Nix: ${v.store.error} (model: ${v.offCache.join("; ") || "served by the cache"})`];
  if (v.store)
    return [
      `       Nix: builds ${v.store.toBuild.length}${v.store.toBuild.length ? ` (${v.store.toBuild.join(", ")})` : ""}, fetches ${v.store.toFetch.length}`,
    ];
  return v.offCache.map((r) => `       model: ${r}`);
}

/**
 * What builders the selection needs: this machine (unless --max-jobs 0) with the `system-features` its Nix declares,
 * and the `--builders` machines, against each group of variants' requiredSystemFeatures (driver/features.ts). With
 * the flox backend the local Nix is asked the same (flox builds with it). Also the nix.conf line of the gccarch
 * features this CPU really runs (/proc/cpuinfo through the catalog's ISAs), for messages.
 */
async function builderNeeds(
  targets: readonly BuildTarget[],
  host: string,
  a: BuildArgs,
  nixOptions: NixOptions,
  backend: string,
): Promise<{ groups: FeatureNeed[]; local: string[] | null; localBuilds: boolean; hostLine: string | null }> {
  const local = await localSystemFeatures(backend === "nix" ? nixOptions : []);
  const localBuilds = a.maxJobs !== 0;
  let remote: ReturnType<typeof parseMachines> = [];
  if (a.builders) {
    const { readFileSync } = await import("node:fs");
    const spec = a.builders.startsWith("@") ? (() => { try { return readFileSync(a.builders!.slice(1), "utf8"); } catch { return ""; } })() : a.builders;
    remote = parseMachines(spec);
  }
  const groups = featureNeeds(targets, localBuilds && local !== null ? { name: "this machine", systems: [host], features: local } : null, remote);
  let hostLine: string | null = null;
  try {
    const [{ readFile }, { parseCpuinfo }, { isaFit }, { catalog }, { gccarchFeature }, { systemFeaturesLine: line }] = await Promise.all([
      import("node:fs/promises"),
      import("../detect/host.ts"),
      import("../compat.ts"),
      import("../catalog/index.ts"),
      import("../expand.ts"),
      import("../driver/features.ts"),
    ]);
    const cpu = parseCpuinfo(await readFile("/proc/cpuinfo", "utf8"));
    const runnable = isaFit({ system: host, cpu }, catalog).runnable;
    if (runnable.length) hostLine = line(runnable.map(gccarchFeature));
  } catch {
    hostLine = null;
  }
  return { groups, local, localBuilds, hostLine };
}

/** The dry run's lines on builders: per group of variants, its features and who takes it (or that nobody does). */
function featureLines(n: Awaited<ReturnType<typeof builderNeeds>>): string[] {
  const out = ["  system features a builder must declare (requiredSystemFeatures; Nix builds a derivation only where all are declared):"];
  for (const g of n.groups)
    out.push(
      `    ${g.system} ${g.features.join(" ") || "(none)"}: ${g.variants.length} variant(s); ` +
        (g.takenBy.length ? `taken by ${g.takenBy.join(", ")}` : `warning: no configured builder declares them (Nix will refuse these)`),
    );
  if (n.groups.some((g) => !g.takenBy.length) && n.hostLine) out.push(`    this CPU could declare: ${n.hostLine}   (nix.conf; NixOS: nixpkgs.hostPlatform.gcc.arch)`);
  return out;
}
