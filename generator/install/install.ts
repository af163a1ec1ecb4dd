/**
 * `install` as two calls, plan then run (the shape of driver/build.ts): `planInstall` decides everything before any
 * work and returns it as data (InstallPlan); `runInstall` builds, links and verifies that plan. Neither prints:
 * commands/install.ts maps the options onto planInstall, prints the plan and runInstall's progress and result, and
 * sets the exit status.
 *
 * planInstall's steps:
 *  1. the variant: NAME, or the one detect picks for the host (detect/choose.ts); the generated files it reads must say
 *     what the matrix gives now (unless --pkgs-dir gives the user's own);
 *  2. a recorded host (`--cpuinfo`/`--nvidia-smi`/`--machine` without `--host-root`) is planned only (`--dry-run`): a
 *     real install builds, links and verifies on this machine, whose CPU, GPU driver and system are not the
 *     recording's (InstallForOtherHostError);
 *  3. every `doctor` check of it (preflight/checks.ts, command "install"), with a recording judged by it
 *     (preflight/recorded-host.ts: its GPU driver and the route that host takes; the rest "this machine");
 *  4. the route to the host's GPU driver (directly, or through nix-gl-host) and the places it links (DIR; DIR-nixglhost;
 *     flox's result link), each checked before any build (install-target.ts: the directory takes a link, nothing
 *     foreign is there);
 *  5. (a real run whose checks pass) where the output is: in the store or fetchable (DIR linked at once, no build), or
 *     to be built, and DIR checked again with the output's store names; a file that does not evaluate stops install
 *     here with the build driver's verdict (stopsOnEvaluation), before a second evaluation;
 *  6. the commands it will run and the build driver's arguments.
 *
 * runInstall's steps: a dry run hands the build driver its dry run (the plan and its estimate) and stops; else the
 * build (none when the output is in the store or fetchable; through the build driver, its result links in a directory
 * of their own), DIR as the one GC root, the nixglhost route and its first start, the variant's proof (driver/proof.ts
 * fetchProof: its static check's output, in the store or substituted, never built; else whether a cache says it was
 * published unproven), then verify through DIR's python, handed the proof when there is one.
 * The build driver and verify are the caller's (InstallSteps): they print their own lines.
 */
import path from "node:path";
import { InputError } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import { ASK_NIX_TIMEOUT_S } from "../constants.ts";
import { closurePackages, formatName, parseName } from "../matrix/naming.ts";
import { ENV_PACKAGE, nixpkgsBrokenWarnings } from "../catalog/lib/packages.ts";
import { copyableCommand } from "../text.ts";
import type { Backend, BackendChoice } from "../driver/backend.ts";
import type { BuildArgs } from "../driver/build-options.ts";
import type { CheckResult, PreflightContext } from "../preflight/checks.ts";
import type { FirstStart } from "../preflight/nixglhost-cache.ts";
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { ChosenVariant } from "../detect/choose.ts";
import type { EvaluationFailure } from "../driver/eval-first.ts";
import type { HostInfo } from "../host/read-host.ts";
import type { InstallReady, LinkPlace } from "./install-target.ts";
import { addGcRootArgv, buildAttrLinkArgv, type NixOptions } from "../driver/store.ts";
import { PROOF_LINK_SUFFIX } from "../model/plan.ts";

/** Bad input for install, or a check to fix first (exit 2). */
export class InstallInputError extends InputError {}

/** A real install asked for a recorded host: it would build, link and verify on this machine (exit 2, nothing done). */
export class InstallForOtherHostError extends InstallInputError {
  override name = "InstallForOtherHostError";
}

/** What planInstall is given: install's options (commands/install.ts maps them), paths as the user typed them. */
export interface InstallOptions {
  /** The variant; undefined: detect's pick for the host. */
  name?: string;
  /** The package detect picks for (default torch-env). */
  package?: string;
  /** Where the variant is linked (default ./PACKAGE), resolved against the working directory. */
  dir?: string;
  /** Plan only: nothing is built, linked or verified; the build driver's dry run follows. */
  dryRun?: boolean;
  backend?: BackendChoice;
  /** The host: a recording (another host than this one), or a modelled root (`hostRoot`, tests) with its facts. */
  cpuinfo?: string;
  nvidiaSmi?: string;
  /** `--mem`: the host's memory in GiB (read-host.ts readMemory). */
  mem?: number;
  machine?: string;
  hostRoot?: string;
  matrix?: string;
  /** Take the variant's file (and its environment's) from DIR/NAME.nix, as `build --pkgs-dir`. */
  pkgsDir?: string;
  /** Passed to the build driver (BuildArgs). */
  logsDir?: string;
  plain?: boolean;
  verbose?: boolean;
  /** Seconds Nix may take to say what it would build and fetch (default ASK_NIX_TIMEOUT_S). */
  askNixTimeout?: number;
  /** Terminal columns the messages install throws are wrapped to (default 80). */
  width?: number;
}

/** The facts of a recorded host the plan uses, each with the file it came from. */
export interface RecordedHost {
  /** "the recorded host (FILE)": how the plan names it. */
  label: string;
  /** Its Nix system and logical CPUs (its cpuinfo, or --machine). */
  system: string;
  cpus: number;
  /** Its memory (its directory's meminfo, or --mem), or bytes null when not recorded (read-host.ts readMemory). */
  memory: HostInfo["memory"];
  sources: HostInfo["sources"];
  /** Its GPUs as nvidia-smi recorded them (name, capability, driver); [] when it has none. */
  gpus: { name: string; capability: string; driver: string }[];
}

/** A command install runs after the build (step 4 or 5), as its argument vector. */
export interface InstallCommand {
  step: "link" | "nixglhost" | "first-start";
  /** The argument vector; a store path not known before the build is written OUT. */
  argv: string[];
}

/** What planInstall decided before it changes anything. Data only. */
export interface InstallPlan {
  options: InstallOptions;
  dryRun: boolean;
  variant: Variant;
  chosen: ChosenVariant;
  /**
   * What nixpkgs says against the variant's CUDA build (catalog/lib/packages.ts nixpkgsBrokenWarnings: explain's and
   * detect's words); [] when nothing of its closure is marked broken at its nixpkgs.
   */
  warnings: string[];
  /** The recorded host the plan is for (--cpuinfo/--nvidia-smi without --host-root), else null. */
  recorded: RecordedHost | null;
  /** The project: the matrix's directory, where its generated files are (the flox backend builds there). */
  root: string;
  /** DIR, absolute. */
  dir: string;
  backend: Backend;
  /** The variant's Nix file, and its environment's (null when the matrix has no environment of it). */
  file: string;
  envFile: string | null;
  /** Every check, in order (a recording's judged by it); the GPU driver's; the failed ones that stop install (exit 2). */
  checks: CheckResult[];
  gpu: CheckResult | undefined;
  stops: CheckResult[];
  /** The host's GPU driver is reached through nix-gl-host (its driver is outside /run/opengl-driver/lib). */
  throughNixglhost: boolean;
  /** …and the variant is an environment: DIR is its withHostDriver output (its Pythons wrapped). */
  wrapped: boolean;
  /** Where the environment's nixglhost is linked for a variant that is not an environment: DIR-nixglhost. */
  link: string;
  /** DIR/bin/python3. */
  python: string;
  /** The places install links (DIR first), each checked before any build (install-target.ts). */
  places: LinkPlace[];
  /** The team's caches (matrix.ts `caches`) as Nix options: where install asks whether the output is fetchable. */
  cacheOptions: NixOptions;
  /**
   * Where the output is before any build (install-target.ts prepareInstall); null when not asked: a dry run (the
   * build driver's dry run asks Nix) or a check that stops install.
   */
  ready: InstallReady | null;
  /**
   * The variant's file did not evaluate when the store was asked, and the build driver would stop on it before building
   * (eval-first.ts evaluationGate): runInstall stops at once with the driver's verdict (EvaluationError), instead of
   * evaluating it a second time. Empty when it evaluated, or when the backend builds it anyway (flox).
   */
  evaluationStops: EvaluationFailure[];
  /** The commands run after the build, in order. */
  commands: InstallCommand[];
  /** The build driver's arguments (a dry run: its plan and estimate, for the recorded host when there is one). */
  build: BuildArgs;
}

/**
 * Plan an install (the module comment's steps). Reads the matrix, the host and the store; changes nothing.
 * @throws InputError (exit 2): a matrix that does not load, detect picking nothing, generated files that are stale,
 *   an unknown variant (InstallInputError), a real install for a recorded host (InstallForOtherHostError), a place
 *   install may not link (install-target.ts InstallPlaceError)
 */
export async function planInstall(o: InstallOptions): Promise<InstallPlan> {
  const [{ loadVariants }, { chooseVariant, isRecordedHost }, { resolveBackend }, it] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("../detect/choose.ts"),
    import("../driver/backend.ts"),
    import("./install-target.ts"),
  ]);
  const project = await loadVariants(o.matrix);
  const chosen = await chooseVariant(o, project);
  const variant = project.variants.find((v) => v.name === chosen.name);
  if (!variant) throw new InstallInputError(`unknown variant "${chosen.name}" (variant-matrix list names them)`);
  // The project is the matrix's directory (the repository's matrix.ts: its root): its generated files are what is
  // built, and (unless --pkgs-dir gives the user's own) they must say what the matrix gives now, as build requires.
  const root = project.project ? path.dirname(project.project.matrixFile) : REPO_ROOT;
  if (o.pkgsDir === undefined && project.project) (await import("../generate/generated-state.ts")).assertGeneratedFor(project.project, root, "install", [variant.name]);
  if (!o.dryRun && o.hostRoot === undefined && (isRecordedHost(o) || o.machine !== undefined)) throw new InstallForOtherHostError(otherHostRefusal(o, variant.name));
  const backend = await resolveBackend(o.backend ?? "auto");
  const fileOf = (name: string, file: string) => (o.pkgsDir !== undefined ? path.resolve(o.pkgsDir, `${name}.nix`) : path.join(root, file));
  // nixglhost is a passthru of the environment variant of the combination (pkgs/torch-env.nix).
  const parts = parseName(variant.name);
  const env = parts ? project.variants.find((v) => v.name === formatName({ ...parts, package: ENV_PACKAGE })) : undefined;
  const file = fileOf(variant.name, variant.file);
  const judged = await hostChecks(o, { variant, all: project.variants, file, backend, system: chosen.system, caches: project.caches });
  // A name the user recognises: the package's (./torch-env, ./llm-env, ./pytorch).
  const dir = path.resolve(o.dir ?? variant.package);
  const route = driverRoute(variant, judged.gpu, dir);
  const places = linkPlaces({ dir, root, backend, variant, throughNixglhost: route.throughNixglhost });
  it.assertLinkPlaces(places);
  const cacheOptions = (await import("../matrix/team-cache.ts")).cacheNixOptions(project.caches ?? []);
  const stops = judged.checks.filter((r) => r.status === "fail" && (r.blocking || r.conf !== undefined));
  // Where the output is (one nix-instantiate and store queries): asked only when install would go on to build.
  // Every question to Nix before the build runs under one deadline (ask-nix.ts evalLimit): a Nix that hangs ends there.
  const limit = (await import("../driver/ask-nix.ts")).evalLimit(o.askNixTimeout);
  const ready = o.dryRun || stops.length ? null : await it.prepareInstall(file, places, cacheOptions, project.caches ?? [], { ...limit, deadline: Date.now() + limit.seconds * 1000 });
  const evaluationStops = ready ? await stopsOnEvaluation(ready, { catalog: project.catalog, variant, file, backend, ownFiles: o.pkgsDir !== undefined }) : [];
  const envFile = env ? fileOf(env.name, env.file) : null;
  const recorded = judged.recorded;
  const base = { variant, backend, root, dryRun: !!o.dryRun, forHost: recorded ? { system: recorded.system, cpus: recorded.cpus, label: recorded.label, memBytes: recorded.memory.bytes, memSource: recorded.memory.source } : undefined };
  return {
    options: o,
    dryRun: !!o.dryRun,
    variant,
    chosen,
    warnings: nixpkgsBrokenWarnings(project.catalog, closurePackages(variant), { rev: variant.nixpkgs, cuda: variant.cuda, system: variant.system }),
    root,
    dir,
    backend,
    file,
    envFile,
    ...judged,
    stops,
    ...route,
    places,
    cacheOptions,
    ready,
    evaluationStops,
    commands: installCommands({ file, envFile, dir, cacheOptions, ready, ...route }),
    build: buildArgs(o, base),
  };
}

/** Why a real install for a recorded host is refused, with the two commands that do what the user wants. */
function otherHostRefusal(o: InstallOptions, name: string): string {
  const given = (["cpuinfo", "nvidiaSmi", "machine"] as const).filter((k) => o[k] !== undefined).map((k) => (k === "nvidiaSmi" ? "--nvidia-smi" : `--${k}`));
  const host = { cpuinfo: o.cpuinfo, "nvidia-smi": o.nvidiaSmi, machine: o.machine, matrix: o.matrix };
  return (
    `install ${name}: ${given.join(", ")} describe another host, but install builds, links and verifies on this machine, ` +
    "whose CPU, GPU driver and system are not the recording's; nothing was done. " +
    `Plan it for that host here with \`${copyableCommand(["install", "--dry-run", name], host)}\`, ` +
    `and install it on that host with \`${copyableCommand(["install", name], { matrix: o.matrix })}\``
  );
}

/**
 * Step 5's verdict on a file that did not evaluate (install-target.ts outputState, step "instantiate"): the failure the
 * build driver's evaluation would stop on, read by the driver's own eval-first.ts (evaluationFailures: the attribute,
 * an extra's likely typo, the cause: network, the user's own file or the matrix; evaluationGate: the backend's
 * verdict), so that install says it at once. With the nix backend nix-build evaluates the same file with the same Nix,
 * so the driver would stop on it after evaluating it again (offline, each evaluation waits out Nix's download
 * attempts: about 5 s); flox evaluates with its own Nix, and the gate may let it build.
 */
async function stopsOnEvaluation(ready: InstallReady, t: { catalog: Catalog; variant: Variant; file: string; backend: Backend; ownFiles: boolean }): Promise<EvaluationFailure[]> {
  const out = ready.output;
  if (out.state !== "unknown" || out.step !== "instantiate") return [];
  const [ef, pre, { thisHost }] = await Promise.all([import("../driver/eval-first.ts"), import("../preflight/checks.ts"), import("../preflight/host-root.ts")]);
  const answer = { cached: false, by: null, outPath: null, drvPath: null, note: out.error };
  const failures = ef.evaluationFailures(t.catalog, [t.variant], new Map([[t.variant.name, answer]]), new Map(), t.ownFiles);
  const nixVersion = () => new pre.HostAnswers(thisHost()).nixVersion();
  return ef.evaluationGate(t.backend, pre.evaluatesPinnedNixpkgs([t.file]), nixVersion, failures).stop;
}

/** What hostChecks checks: the variant, the matrix's variants, the variant's file, the backend, the system, the caches. */
interface CheckedInstall {
  variant: Variant;
  all: readonly Variant[];
  file: string;
  backend: Backend;
  system: string;
  caches: PreflightContext["teamCaches"];
}

/**
 * Step 3: every check of the variant on this host (or the modelled root); with a recording, judged by it
 * (preflight/recorded-host.ts), and the recording's facts.
 */
async function hostChecks(o: InstallOptions, c: CheckedInstall): Promise<{ checks: CheckResult[]; gpu: CheckResult | undefined; recorded: RecordedHost | null }> {
  const [pre, { isRecordedHost }] = await Promise.all([import("../preflight/checks.ts"), import("../detect/choose.ts")]);
  const checks = pre.runChecks(
    // This machine's checks (its Nix, its nix.conf) judge its own CPU, not a recording's (as the build's preflight does):
    // a gccarch feature is offered for this nix.conf only where this CPU runs it.
    { root: o.hostRoot ?? "/", env: process.env, cpuinfoFile: isRecordedHost(o) ? undefined : o.cpuinfo },
    {
      command: "install",
      variants: pre.checkedVariants([c.variant], c.all),
      backend: c.backend,
      pinnedNixpkgs: pre.evaluatesPinnedNixpkgs([c.file]),
      hostSystem: c.system,
      teamCaches: c.caches,
    },
  );
  let recorded: RecordedHost | null = null;
  if (isRecordedHost(o)) {
    const { judgeRecordedHost } = await import("../preflight/recorded-host.ts");
    const host = await judgeRecordedHost(o, checks, pre.checkedVariants([c.variant], c.all)[0]!);
    recorded = {
      label: `the recorded host (${host.sources.cpuinfo})`,
      system: host.system,
      cpus: host.cpu.logicalCpus,
      memory: host.memory,
      sources: host.sources,
      gpus: host.gpus.map((g) => ({ name: g.name, capability: g.capability, driver: g.driver })),
    };
  }
  return { checks, gpu: checks.find((r) => r.id === "gpu-driver"), recorded };
}

/**
 * Step 4, the route to the driver: NixOS or a flox activation serving libcuda pass the GPU driver check; a driver
 * elsewhere (the check's route "nixglhost", ✓ or ✗) is reached through nixglhost; no driver at all (–) leaves the GPU
 * checks to verify's "not checkable here". An environment carries its own wrapped Pythons (withHostDriver); another variant is run through
 * the environment's nixglhost at DIR-nixglhost.
 */
function driverRoute(variant: Variant, gpu: CheckResult | undefined, dir: string): Pick<InstallPlan, "throughNixglhost" | "wrapped" | "link" | "python"> {
  const throughNixglhost = variant.cuda !== null && gpu?.route === "nixglhost";
  return { throughNixglhost, wrapped: throughNixglhost && variant.role === "env", link: `${dir}-nixglhost`, python: `${dir}/bin/python3` };
}

/**
 * Every place install will link: DIR (any link into the store passes until the output is known), DIR-nixglhost on
 * the nixglhost route for a variant that is not an environment, flox's `ROOT/result-NAME` with the flox backend.
 */
function linkPlaces(p: { dir: string; root: string; backend: Backend; variant: Variant; throughNixglhost: boolean }): LinkPlace[] {
  return [
    { link: p.dir, own: null, what: "--dir" },
    ...(p.throughNixglhost && p.variant.role !== "env" ? [{ link: `${p.dir}-nixglhost`, own: [/^nix-gl-host/], what: "the nixglhost link" }] : []),
    ...(p.backend === "flox" ? [{ link: path.join(p.root, `result-${p.variant.name}`), own: null, what: "flox's result link" }] : []),
  ];
}

/** Step 6: the commands run after the build (store.ts's own argument vectors), OUT where the output is not known yet. */
function installCommands(
  p: Pick<InstallPlan, "file" | "envFile" | "dir" | "cacheOptions" | "ready" | "throughNixglhost" | "wrapped" | "link" | "python">,
): InstallCommand[] {
  if (p.wrapped)
    return [
      { step: "link", argv: buildAttrLinkArgv(p.file, "withHostDriver", p.dir, p.cacheOptions) },
      { step: "first-start", argv: [p.python, "-c", "pass"] },
    ];
  const link: InstallCommand = { step: "link", argv: addGcRootArgv(p.ready?.outPath ?? "OUT", p.dir, p.cacheOptions) };
  if (!p.throughNixglhost) return [link];
  return [
    link,
    { step: "nixglhost", argv: buildAttrLinkArgv(p.envFile ?? p.file, "nixglhost", p.link, p.cacheOptions) },
    { step: "first-start", argv: [`${p.link}/bin/nixglhost`, "true"] },
  ];
}

/**
 * The build driver's arguments for install's one variant, in its project (`p.root`): a dry run plans for the recorded
 * host when there is one (`forHost`); the nix backend's result links go in a directory runInstall makes.
 */
function buildArgs(o: InstallOptions, p: Pick<InstallPlan, "variant" | "backend" | "root" | "dryRun"> & { forHost?: BuildArgs["forHost"] }): BuildArgs {
  return {
    forHost: p.dryRun ? p.forHost : undefined,
    names: [p.variant.name],
    root: p.root,
    backend: p.backend,
    dryRun: p.dryRun,
    pkgsDir: o.pkgsDir,
    matrix: o.matrix,
    logsDir: o.logsDir,
    plain: o.plain,
    retries: 0,
    verbose: o.verbose,
    checksShown: p.dryRun,
    // Ask Nix before estimating (driver/ask-nix.ts), for the dry run's plan and before the real build.
    askNixTimeout: o.askNixTimeout ?? ASK_NIX_TIMEOUT_S,
    // The build's evaluation and questions: under --ask-nix-timeout when given, else ask-nix.ts EVAL_TIMEOUT_S.
    evalTimeout: o.askNixTimeout ?? 0,
  };
}

/** What verify is asked: the variant, through DIR's python (and the nixglhost it runs through), on the plan's host. */
export interface VerifyRequest {
  name: string;
  /** DIR: verify runs DIR/bin/python3. */
  python: string;
  /** DIR-nixglhost/bin/nixglhost for a variant run through it, else undefined. */
  hostDriver: string | undefined;
  hostRoot?: string;
  cpuinfo?: string;
  nvidiaSmi?: string;
  machine?: string;
  matrix?: string;
  /**
   * The variant's proof (driver/proof.ts): the store path of its static check's output (probe.json, report.txt), which
   * install fetched or found; verify then checks only what needs this host (the import, CUDA, the GPU checks) and
   * runs no cuobjdump. Absent: no proof, verify checks everything.
   */
  proof?: string;
}

/** verify's report as install reads it (verify/verify.ts VerifyReport). */
export interface InstalledReport {
  name: string;
  checks: { promise: string; ok: boolean | null; expected: string; found: string }[];
}

/** What runInstall hands its progress: each step done, as data. */
export type InstallEvent =
  /** The output is in the store or fetchable: nothing is built. */
  | { kind: "at-once"; state: "present" | "fetchable"; outPath: string }
  /** DIR linked (a GC root): to `outPath`, or (`wrapped`) to the environment's withHostDriver output `target`. */
  | { kind: "linked"; dir: string; target: string; outPath: string; wrapped: boolean }
  /** The environment's nixglhost linked at `link` for a variant that is not an environment. */
  | { kind: "nixglhost"; link: string }
  /** The first start through nixglhost (preflight/nixglhost-cache.ts), in its own words. */
  | { kind: "first-start"; line: string }
  /** A signal stopped install before the build driver's run took it (install-target.ts stopOnSignalUntilBuilding): where, and what is left. */
  | { kind: "stopped"; line: string }
  /** What install found of the variant's proof (driver/proof.ts fetchProof), before verify. */
  | { kind: "proof"; proof: import("../driver/proof.ts").FetchedProof };

/** The work runInstall hands out: the build driver and verify (the caller's, which print their own lines), and progress. */
export interface InstallSteps {
  /** Run the build driver with `args` (a dry run: print its plan); @returns its exit status */
  build(args: BuildArgs): Promise<number>;
  /** Verify through DIR; @returns verify's exit status and its report (null when it printed none) */
  verify(request: VerifyRequest): Promise<{ code: number; report: InstalledReport | null }>;
  progress(event: InstallEvent): void;
  /**
   * Called once when a SIGINT or SIGTERM stops install after its build, before the processes of the step in flight
   * are ended: the steps print nothing more (install's own message says where it stopped).
   */
  stopped?(): void;
}

/** What runInstall did. */
export interface InstallResult {
  /** 0 every promise holds; 1 a build failed or a promise does not hold; 2 a check or input stopped it. */
  exitCode: number;
  /** How far it went: the dry run's plan, the build (failed), or verify (DIR linked). */
  stage: "dry-run" | "build" | "verify";
  /** Whether the build driver built (false: a dry run, the output was in the store or fetchable, or the build failed first). */
  built: boolean;
  /** The output linked at DIR (the environment's, for withHostDriver), null when nothing was linked. */
  outPath: string | null;
  /** The nixglhost verify ran the variant through, when it is not an environment. */
  hostDriver?: string;
  /**
   * The variant's proof from this install's build: the store path of its static check's output (probe.json,
   * report.txt), which the build driver linked as `result-NAME-proof` (driver/report.ts VariantReport.proof); null when
   * install built nothing (the output was in the store or fetchable), or the build left no proof. `proof` is what install
   * then found of it (driver/proof.ts fetchProof: this one, in the store).
   */
  builtProof: string | null;
  firstStart: FirstStart | null;
  /** What install found of the variant's proof (null: not asked, install stopped before). */
  proof?: import("../driver/proof.ts").FetchedProof | null;
  verify: { code: number; report: InstalledReport | null } | null;
}

/**
 * Run a plan (the module comment's steps). A plan with checks that stop install is refused (the caller prints them
 * first).
 * @throws InstallInputError when a check stops install, the build left no result link, or a Nix command failed
 *   (nix-gl-host not built); install-target.ts InstallPlaceError for DIR holding another output once it is known;
 *   install-target.ts InstallInterrupted when a SIGINT or SIGTERM stopped it after its build (its children ended, its
 *   temporary result links removed)
 */
export async function runInstall(plan: InstallPlan, steps: InstallSteps): Promise<InstallResult> {
  const none = { built: false, outPath: null, builtProof: null, firstStart: null, verify: null };
  if (plan.dryRun) return { ...none, stage: "dry-run", exitCode: await steps.build(plan.build) };
  if (plan.stops.length || !plan.ready) throw new InstallInputError(`${plan.stops.length} check(s) to fix before anything is built (variant-matrix doctor ${plan.variant.name})`);
  if (plan.evaluationStops.length) throw new (await import("../driver/eval-first.ts")).EvaluationError(plan.evaluationStops, 1, plan.options.width ?? 80);
  const it = await import("./install-target.ts");
  const ready = plan.ready;
  // The build: none when the output is in the store or fetchable (DIR is linked at once); else through the build
  // driver, its result links in a directory of their own, removed once DIR is linked, so that DIR is the one GC root.
  let resultDir = ready.atOnce || plan.backend === "flox" ? null : it.makeResultDir();
  const dropResults = () => {
    if (resultDir !== null) it.dropResultDir(resultDir);
    resultDir = null;
  };
  // After the build a signal is install's (the build driver handles its own while it runs): what it started is ended,
  // what it made for itself removed, and it says where it stopped (InstallInterrupted).
  let watch: InstallInterruptWatch | null = null;
  const at = { doing: `linking ${plan.dir}`, linked: null as string | null, removed: null as string | null };
  try {
    if (ready.atOnce && ready.outPath) steps.progress({ kind: "at-once", state: ready.output.state === "present" ? "present" : "fetchable", outPath: ready.outPath });
    else {
      const made = resultDir;
      const off = it.stopOnSignalUntilBuilding((signal, ended) => {
        dropResults();
        steps.stopped?.();
        steps.progress({ kind: "stopped", line: interruptedMessage(plan, { signal, ended }, { doing: `the build driver prepared the build of ${plan.variant.name}`, linked: null, removed: made }) });
      });
      let built: number;
      try {
        built = await steps.build({ ...plan.build, outDir: plan.backend === "nix" ? (resultDir ?? undefined) : undefined });
      } finally {
        off();
      }
      if (built !== 0) return { ...none, stage: "build", exitCode: built };
    }
    watch = it.watchInterrupt(() => steps.stopped?.());
    const progress = (e: InstallEvent) => {
      if (e.kind === "linked") at.linked = e.outPath;
      steps.progress(e);
    };
    // The build's proof, read before its result links go: the static check's output beside the variant's result.
    const builtProof = ready.atOnce ? null : it.resultOutPath(resultDir ?? plan.root, proofLinkOf(plan.variant.name));
    const linked = await watch.guard(linkInstalled(plan, resultDir, progress));
    at.removed = resultDir;
    dropResults();
    const { firstStartThroughNixglhost } = await import("../preflight/nixglhost-cache.ts");
    at.doing = `starting ${plan.python} through nixglhost for the first time`;
    const firstStart = await watch.guard(
      firstStartThroughNixglhost({ dir: plan.dir, throughNixglhost: plan.throughNixglhost, nixglhost: linked.hostDriver }, (line) => steps.progress({ kind: "first-start", line })),
    );
    const o = plan.options;
    at.doing = `fetching the proof of ${plan.variant.name}`;
    const proof = await watch.guard(proofOf(plan, linked.outPath));
    steps.progress({ kind: "proof", proof });
    at.doing = `verifying ${plan.variant.name} through ${plan.python}`;
    const request: VerifyRequest = { name: plan.variant.name, python: plan.dir, hostDriver: linked.hostDriver, hostRoot: o.hostRoot, cpuinfo: o.cpuinfo, nvidiaSmi: o.nvidiaSmi, machine: o.machine, matrix: o.matrix };
    const verify = await watch.guard(steps.verify(proof.state === "proven" ? { ...request, proof: proof.summary.path } : request));
    return { stage: "verify", exitCode: verify.code, built: !ready.atOnce, outPath: linked.outPath, hostDriver: linked.hostDriver, builtProof, firstStart, proof, verify };
  } catch (e) {
    if (!(e instanceof it.StoppedBySignal)) throw e;
    if (resultDir !== null) at.removed = resultDir;
    dropResults();
    throw new it.InstallInterrupted(e.signal, interruptedMessage(plan, e, at));
  } finally {
    watch?.dispose();
    dropResults();
  }
}

/** The name resultOutPath reads the proof of variant `name` under: `NAME-proof` (plan.ts resultLinkName, the static check's link). */
function proofLinkOf(name: string): string {
  return `${name}-${PROOF_LINK_SUFFIX}`;
}

type InstallInterruptWatch = import("./install-target.ts").InterruptWatch;

/**
 * The variant's proof for verify (driver/proof.ts fetchProof): asked of this store and the team's caches (the plan's
 * cacheOptions) under the limit of install's other questions to Nix (ask-nix.ts evalLimit); never built.
 */
async function proofOf(plan: InstallPlan, outPath: string): Promise<import("../driver/proof.ts").FetchedProof> {
  const [{ fetchProof }, { evalLimit }] = await Promise.all([import("../driver/proof.ts"), import("../driver/ask-nix.ts")]);
  const deadline = Date.now() + evalLimit(plan.options.askNixTimeout).seconds * 1000;
  return fetchProof({ name: plan.variant.name, file: plan.file, outPath }, plan.cacheOptions, deadline);
}

/**
 * What install says when a signal stopped it after its build: what it was doing, the processes it ended, the temporary
 * result links it removed, and what is left at DIR (linked but not verified, or nothing) with the command that goes on.
 */
function interruptedMessage(
  plan: InstallPlan,
  stop: { signal: NodeJS.Signals; ended: number },
  at: { doing: string; linked: string | null; removed: string | null },
): string {
  const done = [
    ...(stop.ended ? [`ended the ${stop.ended} process(es) it had started`] : []),
    ...(at.removed ? [`removed its temporary result links (${at.removed})`] : []),
  ];
  const o = plan.options;
  const left = at.linked
    ? `${plan.dir} stays linked (a GC root of ${at.linked}) but is not verified: run \`${copyableCommand(["verify", plan.variant.name, "--python", plan.dir], { matrix: o.matrix })}\`, or remove ${plan.dir} to uninstall`
    : `Nothing is linked at ${plan.dir}: run install again to link it (what was built stays in the store until a garbage collection)`;
  return `install interrupted (${stop.signal}) while ${at.doing}; it stopped there${done.length ? `: ${done.join(", ")}` : ""}. ${left}`;
}

/**
 * DIR as a GC root of the output (an environment that needs the host's driver: its withHostDriver output), and for
 * another variant that needs it the environment's nixglhost at DIR-nixglhost.
 * @param resultDir where the build driver left `result-NAME` (nix backend), null when there was no build or flox built
 * @returns the output linked and the nixglhost verify runs the variant through (undefined: none)
 * @throws InstallInputError when the build left no result link, or a Nix command failed (nix-gl-host not built)
 */
async function linkInstalled(p: InstallPlan, resultDir: string | null, progress: InstallSteps["progress"]): Promise<{ outPath: string; hostDriver?: string }> {
  const { variant, dir, file, envFile, throughNixglhost, wrapped, link } = p;
  const [{ addGcRoot, buildAttrLink }, it, { realpathSync }] = await Promise.all([import("../driver/store.ts"), import("./install-target.ts"), import("node:fs")]);
  // The output: known before the build, else the build's result link (the nix backend's in resultDir, flox's in the root).
  const result = path.join(resultDir ?? p.root, `result-${variant.name}`);
  const out = p.ready?.outPath ?? it.resultOutPath(path.dirname(result), variant.name);
  if (out === null) throw new InstallInputError(`the build left no ${result}: nothing to link at ${dir}`);
  // Known only now (Nix could not evaluate the file before the build): DIR must hold nothing but this variant's install.
  if (!p.ready?.outPath) it.assertLinkPlaces([{ ...p.places[0]!, own: it.ownNames(out) }]);
  // nix-gl-host is built from numtide's source when the pin has none (pkgs/nix-gl-host.nix); a build that fails
  // here (no network for its source, say) leaves the environment built, so say what is left.
  const nixglhostFrom = (failure: string | null) => {
    if (failure !== null)
      throw new InstallInputError(
        `${failure}\n${variant.name} is built, but no nixglhost was built for it: run it through flox ` +
          "(`flox activate`, dev mode) or on NixOS (docs/gpu-driver.md)",
      );
  };
  if (wrapped) {
    // DIR and the route as one: the environment with its Pythons wrapped, a Nix output (nix-build -o makes DIR a GC root).
    nixglhostFrom(buildAttrLink(file, "withHostDriver", dir, p.cacheOptions));
    progress({ kind: "linked", dir, target: realpathSync(dir), outPath: out, wrapped: true });
    return { outPath: out };
  }
  const failed = addGcRoot(out, dir, p.cacheOptions);
  if (failed !== null) throw new InstallInputError(failed);
  progress({ kind: "linked", dir, target: out, outPath: out, wrapped: false });
  // The route to the host's driver for a variant with no python of its own.
  if (!throughNixglhost) return { outPath: out };
  if (!envFile) throw new InstallInputError(`${variant.name} runs on this host only through nixglhost, which its environment variant carries, and the matrix has none (add "torch-env" to packages)`);
  nixglhostFrom(buildAttrLink(envFile, "nixglhost", link, p.cacheOptions));
  progress({ kind: "nixglhost", link });
  return { outPath: out, hostDriver: `${link}/bin/nixglhost` };
}
