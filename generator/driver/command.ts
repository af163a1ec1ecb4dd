/**
 * `variant-matrix build [NAME...]`: the yargs command module (`buildCommand`) and the function behind it
 * (`buildMain`). Register with `yargs(...).command(buildCommand)`.
 *
 * Exit codes (set on `process.exitCode`): 0 every selected variant built or cached (or a dry run), 1 a variant
 * failed or was skipped, 2 a usage error (unknown name, bad filter, bad option), 130 interrupted.
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import type { Argv, ArgumentsCamelCase, CommandModule } from "yargs";
import { PACKAGES, type PackageName, type Variant } from "../schema.ts";
import { BACKEND_CHOICES, buildCmd, resolveBackend, type BackendChoice, type BackendOptions } from "./backend.ts";
import { GIB_PER_COMPILE_JOB, DEFAULT_CORES_PER_BUILD, jobsRule } from "./jobs.ts";
import { makePlan, PlanError, simulate } from "./plan.ts";
import { durationsFromReports, formatDuration, makeRunId, summaryTable } from "./report.ts";
import { runBuilds, shortPath } from "./run.ts";
import { liveStatus, plainStatus } from "./status.ts";
import { probeCached, type CacheProbe, type NixOptions } from "./store.ts";
import { checkFiles, loadTargets, selectTargets, SelectionError } from "./targets.ts";

/** The project root this package lives in (where `.flox/pkgs` and `logs` are by default); see paths.ts. */
export { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";
import { REPO_ROOT as PROJECT_ROOT } from "../paths.ts";

/** Parsed options of `build`. */
export interface BuildArgs {
  names?: string[];
  filter?: string[];
  package?: PackageName;
  dryRun?: boolean;
  json?: boolean;
  backend?: BackendChoice;
  root?: string;
  pkgsDir?: string;
  outDir?: string;
  builders?: string;
  maxJobs?: number;
  copyTo?: string;
  substituters?: string;
  cores?: number;
  jobs?: number;
  retries?: number;
  failFast?: boolean;
  force?: boolean;
  report?: string;
  logsDir?: string;
  nixOption?: string[];
  plain?: boolean;
  killGrace?: number;
  /** matrix file (default: ROOT/matrix.ts). */
  matrix?: string;
  /** Injected variant list (tests, or a caller that already expanded the matrix). */
  variants?: readonly Variant[];
}

/** A usage error: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** Host Nix system of this process, e.g. "x86_64-linux". */
function hostSystem(): string {
  const arch = process.arch === "x64" ? "x86_64" : process.arch === "arm64" ? "aarch64" : process.arch;
  return `${arch}-${process.platform}`;
}

function parseNixOptions(specs: readonly string[] | undefined): NixOptions {
  return (specs ?? []).map((s) => {
    const eq = s.indexOf("=");
    if (eq < 1) throw new UsageError(`--nix-option "${s}": expected NAME=VALUE (e.g. substituters=)`);
    return [s.slice(0, eq), s.slice(eq + 1)] as const;
  });
}

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
    if (e instanceof UsageError || e instanceof SelectionError || e instanceof PlanError) {
      process.stderr.write(`variant-matrix build: ${e.message}\n`);
      process.exitCode = 2;
      return 2;
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
  const cached: Map<string, CacheProbe> = a.force
    ? new Map()
    : await probeCached(sel.targets, backendOpts.outDir, nixOptions);
  const host = hostSystem();

  if (a.dryRun) {
    const done = new Set([...cached].filter(([, c]) => c.cached).map(([n]) => n));
    const sim = simulate(plan, rule.jobs, new Map(), done);
    const variants = plan.order.map((name, i) => {
      const n = plan.nodes.get(name)!;
      const c = cached.get(name);
      const cmd = buildCmd(n.target, backendOpts);
      const notes: string[] = [];
      if (n.target.system !== host && a.builders === undefined)
        notes.push(`system ${n.target.system} differs from this host (${host}): needs a remote builder (--builders)`);
      if (c?.note && !c.cached) notes.push(`not instantiated here: ${c.note}`);
      return {
        order: i + 1,
        name,
        package: n.target.package,
        wave: n.wave,
        selectedAs: sel.why.get(name),
        dependsOn: n.deps,
        system: n.target.system,
        file: n.target.file,
        estimateS: n.estimateS,
        estimateSource: n.estimateSource,
        priorityS: n.priority,
        cached: a.force ? false : (c?.cached ?? false),
        cachedBy: c?.by ?? null,
        outPath: c?.outPath ?? null,
        command: { argv: cmd.argv, cwd: cmd.cwd },
        notes,
      };
    });
    const out = {
      dryRun: true,
      backend,
      root,
      source,
      jobs: rule.jobs,
      coresPerBuild: backend === "nix" ? rule.coresPerBuild : null,
      jobsRule: rule.explanation,
      force: !!a.force,
      toBuild: variants.filter((v) => !v.cached).length,
      cached: variants.filter((v) => v.cached).length,
      estimatedMakespanS: sim.makespan,
      waves: plan.waves,
      variants,
    };
    if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    else {
      const lines = [
        `plan: ${variants.length} variant(s), ${out.cached} already built, ${out.toBuild} to build; backend ${backend}; ` +
          `jobs ${rule.jobs}${out.coresPerBuild ? `, cores per build ${out.coresPerBuild}` : ""}`,
        `  (${rule.explanation})`,
        `  estimated makespan ${formatDuration(sim.makespan)} (estimates from ${history.size > 0 ? "earlier reports where known" : "defaults"})`,
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
        );
      }
      process.stdout.write(lines.join("\n") + "\n");
    }
    process.exitCode = 0;
    return 0;
  }

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

const JOBS_HELP =
  `concurrent builds. Default from this machine: slots = min(CPUs, floor(memory GiB / ${GIB_PER_COMPILE_JOB})) ` +
  `(a CUDA compile job of torch needs ~${GIB_PER_COMPILE_JOB} GB), cores per build = --cores or min(${DEFAULT_CORES_PER_BUILD}, slots), ` +
  `jobs = max(1, floor(slots / cores per build)); the nix backend then passes --cores floor(slots / jobs)`;

/** The yargs command module: `build [names..]`. */
export const buildCommand: CommandModule<object, BuildArgs> = {
  command: "build [names..]",
  describe: "build selected variants in parallel, in dependency order, with logs, resume and a report",
  builder: (y: Argv<object>) =>
    y
      .positional("names", { type: "string", array: true, describe: "variant names (default: all, after filters)" })
      .option("filter", {
        type: "string",
        array: true,
        describe: "KEY=VALUE, keys package|python|cuda|sm|isa|system (as for `list`); repeat: OR per key, AND across",
      })
      .option("package", { type: "string", choices: PACKAGES, describe: "only this package (dependencies still built)" })
      .option("dry-run", { type: "boolean", describe: "print the plan (order, commands, what is built) and build nothing" })
      .option("json", { type: "boolean", describe: "print the plan (dry run) or the report as JSON on stdout" })
      .option("backend", {
        type: "string",
        choices: BACKEND_CHOICES,
        default: "auto",
        describe: "flox: `flox build NAME` in the root; nix: `nix-build FILE -o result-NAME`; auto: flox if on PATH",
      })
      .option("root", { type: "string", describe: "project root (flox runs here; default result links and logs go here)" })
      .option("pkgs-dir", { type: "string", describe: "take each selected variant's file from DIR/NAME.nix instead of ROOT/.flox/pkgs" })
      .option("matrix", { type: "string", describe: "matrix file whose variants are selected from (default: ROOT/matrix.ts)" })
      .option("out-dir", { type: "string", describe: "where result-NAME links go (nix backend; default the root)" })
      .option("builders", {
        type: "string",
        describe: "Nix remote builders, passed as --builders (nix backend): a spec, or @FILE for a machines file",
      })
      .option("max-jobs", { type: "number", describe: "passed as --max-jobs (nix backend); 0 = build only on remote builders" })
      .option("copy-to", { type: "string", describe: "push each finished closure to this store URI (nix copy --to; file://, s3://, ssh://)" })
      .option("substituters", { type: "string", describe: "binary caches for this run, passed as --option substituters (nix backend)" })
      .option("cores", { type: "number", describe: "NIX_BUILD_CORES per build, passed as --cores (nix backend)" })
      .option("jobs", { type: "number", alias: "j", describe: JOBS_HELP })
      .option("retries", { type: "number", default: 0, describe: "rerun a failed build up to N more times" })
      .option("fail-fast", { type: "boolean", describe: "after a failure, start nothing more and end running builds" })
      .option("force", { type: "boolean", describe: "run the build command even for variants already built" })
      .option("report", { type: "string", describe: "also write the JSON report to this file" })
      .option("logs-dir", {
        type: "string",
        describe: "logs root (default: logs in the project root): <dir>/<run-id>/<NAME>.log, report.json, <dir>/latest",
      })
      .option("nix-option", {
        type: "string",
        array: true,
        describe: "NAME=VALUE passed as --option NAME VALUE to nix-build and the store probes (e.g. substituters=)",
      })
      .option("plain", { type: "boolean", describe: "one line per event even on a terminal (no live status)" })
      .option("kill-grace", { type: "number", default: 10, describe: "seconds between SIGTERM and SIGKILL when ending builds" })
      .example("$0 build --filter isa=armv9 --dry-run", "show what would be built for Arm v9")
      .example("$0 build torchaudio-python313-cuda12_8-sm121-armv9", "build it (and its pytorch) with logs and a report") as unknown as Argv<BuildArgs>,
  handler: async (argv: ArgumentsCamelCase<BuildArgs>) => {
    await buildMain(argv);
  },
};
