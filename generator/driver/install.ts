/**
 * `install` as two calls, plan then run (the shape of driver/build.ts): `planInstall` decides everything before
 * anything changes (steps 1 and 2 below) and returns it as data (an `InstallPlan`); `runInstall` does steps 3 to 6.
 * Neither prints: commands/install.ts prints the plan (`--dry-run`), the checks and the refusal, and hands runInstall
 * the build (commands/build-main.ts buildMain), verify (commands/verify.ts runVerify) and a line writer (`say`), which
 * a library may not import. The steps:
 *
 *   1. NAME, or the variant `detect` picks for this host (commands/doctor.ts chooseVariant: torch-env unless --package);
 *   2. every `doctor` check of it (preflight/checks.ts, command "install"): a ✗ whose fix is a nix.conf setting, or
 *      a ✗ that stops `build`, is one of the plan's `stops` (exit 2 before any work);
 *   3. the build through the build driver (the estimate, progress, logs, resume), none when the output is in the
 *      store or fetchable (install-target.ts prepareInstall);
 *   4. DIR (default ./PACKAGE: ./torch-env) as a GC root of the variant's output (`nix-store --realise OUT --add-root DIR`);
 *   5. on a host whose GPU driver the variant cannot load by itself (not NixOS, no flox activation serving it), DIR is
 *      instead the environment's `withHostDriver` output (pkgs/host-driver.nix), built with `nix-build FILE -A
 *      withHostDriver -o DIR`; a variant that is not an environment gets the environment's `nixglhost` linked as
 *      DIR-nixglhost, which verify runs it through;
 *   6. `verify` on the GPU through DIR/bin/python3.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { InputError } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import { ASK_NIX_TIMEOUT_S } from "../constants.ts";
import { formatName, parseName } from "../matrix/naming.ts";
import { ENV_PACKAGE } from "../catalog/packages.ts";
import type { Backend } from "./backend.ts";
import type { CheckResult } from "../preflight/checks.ts";
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { Excluded } from "../matrix/schema.ts";
import type { BuildArgs } from "./build-options.ts";
import type { InstallReady, LinkPlace } from "./install-target.ts";

/** Bad input for install, or a check to fix first (exit 2). */
export class InstallInputError extends InputError {}

/** install's options as the command parsed them (commands/install.ts InstallArgs): what the library reads. */
export interface InstallOptions {
  name?: string;
  /** Where the environment is linked (default ./PACKAGE of the variant). */
  dir?: string;
  dryRun?: boolean;
  verbose?: boolean;
  askNixTimeout?: number;
  backend?: "auto" | "flox" | "nix";
  package?: string;
  cpuinfo?: string;
  "nvidia-smi"?: string;
  nvidiaSmi?: string;
  machine?: string;
  matrix?: string;
  /** Take each variant's file from DIR/NAME.nix (as build --pkgs-dir). */
  pkgsDir?: string;
  logsDir?: string;
  plain?: boolean;
  hostRoot?: string;
}

/** The variant install is about and how it was chosen (commands/doctor.ts ChosenVariant). */
export interface Chosen {
  name: string;
  chosenBy: string;
  system: string;
}

/** NAME or detect's pick for the host (commands/doctor.ts chooseVariant). */
export type ChooseVariant = (
  args: InstallOptions & { package: string },
  project: { variants: Variant[]; catalog: Catalog; excluded?: Excluded[] },
) => Promise<Chosen>;

/** What install decided before it changes anything: the variant, where it goes, the checks and the driver route. */
export interface InstallPlan {
  variant: Variant;
  chosen: Chosen;
  /** DIR, absolute. */
  dir: string;
  backend: Backend;
  /** The variant's Nix file, and its environment's (null when the matrix has no environment of it). */
  file: string;
  envFile: string | null;
  results: CheckResult[];
  gpu: CheckResult | undefined;
  /** The host's GPU driver is reached through nix-gl-host (its driver is outside /run/opengl-driver/lib). */
  throughNixglhost: boolean;
  /** …and the variant is an environment: DIR is its withHostDriver output (its Pythons wrapped). */
  wrapped: boolean;
  /** The failed checks that stop install (exit 2 before anything is built). */
  stops: CheckResult[];
  /** Where the environment's nixglhost is linked for a variant that is not an environment: DIR-nixglhost. */
  link: string;
  /** DIR/bin/python3. */
  python: string;
  /** The places install links (DIR first), for driver/install-target.ts. */
  places: LinkPlace[];
  /** The team's caches (matrix.ts `caches`) as Nix options: where install asks whether the output is fetchable. */
  cacheOptions: (readonly [string, string])[];
}

/**
 * With a recorded host (--cpuinfo, --nvidia-smi, no --host-root), each check says whose fact it is: the GPU driver's
 * comes from the recording (its nvidia-smi output and driver), with the route that host takes (its driver outside
 * /run/opengl-driver/lib, as on every host but NixOS: nixglhost), and the checks only this machine can answer (Nix,
 * the store, system features) say "this machine". Changes `results` in place.
 */
async function judgeRecordedHost(args: InstallOptions, results: CheckResult[], cuda: boolean): Promise<void> {
  const { readHost } = await import("../detect/read-host.ts");
  const host = await readHost({ cpuinfo: args.cpuinfo, nvidiaSmi: args.nvidiaSmi, machine: args.machine });
  const i = results.findIndex((r) => r.id === "gpu-driver");
  const from = host.sources.nvidiaSmi;
  if (i >= 0 || cuda) {
    const base = i >= 0 ? results[i]! : { id: "gpu-driver", title: "GPU driver", blocking: false };
    const gpus = host.gpus;
    results.splice(i >= 0 ? i : results.length, i >= 0 ? 1 : 0, gpus.length
      ? {
          ...base,
          status: "fail",
          detail:
            `the recorded host (${from}): nvidia-smi sees ${gpus.length} GPU(s), driver ${gpus[0]!.driver}; a driver outside ` +
            `/run/opengl-driver/lib (every host but NixOS, whose driver the variant's CUDA libraries find directly) is reached through nixglhost`,
          fix: undefined,
        }
      : { ...base, status: "skip", detail: `the recorded host has no NVIDIA GPU (${host.gpuAbsentReason ?? from})`, fix: undefined });
  }
  for (const r of results) if (r.id !== "gpu-driver" && !r.detail.startsWith("this machine")) r.detail = `this machine: ${r.detail}`;
}
/**
 * Steps 1 and 2: the variant (NAME or detect's pick), DIR, the backend, the variant's files and the checks of this
 * host, with the route to its GPU driver they imply.
 * @param chooseVariant NAME or detect's pick (commands/doctor.ts chooseVariant, handed in: a library imports no command)
 * @throws InstallInputError for an unknown variant or a DIR this command did not make
 */
export async function planInstall(args: InstallOptions, chooseVariant: ChooseVariant): Promise<InstallPlan> {
  const [{ loadVariants }, { resolveBackend }, pre] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("./backend.ts"),
    import("../preflight/checks.ts"),
  ]);
  const project = await loadVariants(args.matrix);
  // The default package is the environment (commands/options.ts DEFAULT_PACKAGE, as detect picks).
  const chosen = await chooseVariant({ ...args, package: args.package ?? ENV_PACKAGE }, project);
  const variant = project.variants.find((v) => v.name === chosen.name);
  if (!variant) throw new InstallInputError(`unknown variant "${chosen.name}" (variant-matrix list names them)`);
  // A name the user recognises: the package's (./torch-env, ./llm-env, ./pytorch).
  const dir = path.resolve(args.dir ?? variant.package);
  const backend = await resolveBackend(args.backend ?? "auto");
  const fileOf = (name: string, file: string) => (args.pkgsDir !== undefined ? path.resolve(args.pkgsDir, `${name}.nix`) : path.join(REPO_ROOT, file));
  const file = fileOf(variant.name, variant.file);
  // nixglhost is a passthru of the environment variant of the combination (pkgs/torch-env.nix).
  const parts = parseName(variant.name);
  const envName = parts ? formatName({ ...parts, package: ENV_PACKAGE }) : null;
  const env = project.variants.find((v) => v.name === envName);
  const envFile = env ? fileOf(env.name, env.file) : null;

  // 2. The checks.
  const host = { root: args.hostRoot ?? "/", env: process.env, cpuinfoFile: args.cpuinfo };
  const results = pre.runChecks(host, {
    command: "install",
    variants: pre.checkedVariants([variant], project.variants),
    backend,
    pinnedNixpkgs: pre.evaluatesPinnedNixpkgs([file]),
    hostSystem: chosen.system,
    teamCaches: project.caches,
  });
  if (args.hostRoot === undefined && (args.cpuinfo !== undefined || args.nvidiaSmi !== undefined)) await judgeRecordedHost(args, results, variant.cuda !== null);
  const gpu = results.find((r) => r.id === "gpu-driver");
  // The route to the driver: NixOS or a flox activation serving libcuda pass the check; a driver elsewhere (its ✗)
  // is reached through nixglhost; no driver at all (–) leaves the GPU checks to verify's "not checkable here".
  const throughNixglhost = variant.cuda !== null && gpu?.status === "fail";
  // Every place install will link takes a link and holds nothing of another's (driver/install-target.ts), checked
  // before any build; DIR again with the output's store names once Nix says what the output is (prepareInstall).
  const places: LinkPlace[] = [
    { link: dir, own: null, what: "--dir" },
    ...(throughNixglhost && variant.role !== "env" ? [{ link: `${dir}-nixglhost`, own: [/^nix-gl-host/], what: "the nixglhost link" }] : []),
    ...(backend === "flox" ? [{ link: path.join(REPO_ROOT, `result-${variant.name}`), own: null, what: "flox's result link" }] : []),
  ];
  (await import("./install-target.ts")).assertLinkPlaces(places);
  return {
    variant,
    chosen,
    dir,
    backend,
    file,
    envFile,
    results,
    gpu,
    throughNixglhost,
    places,
    // An environment carries its own wrapped Pythons (withHostDriver); another variant is run through the nixglhost.
    wrapped: throughNixglhost && variant.role === "env",
    stops: results.filter((r) => r.status === "fail" && (r.blocking || r.conf !== undefined)),
    link: `${dir}-nixglhost`,
    python: `${dir}/bin/python3`,
    cacheOptions: (await import("../matrix/team-cache.ts")).cacheNixOptions(project.caches ?? []),
  };
}

/**
 * Steps 4 and 5: DIR as a GC root of the built output (an environment that needs the host's driver: its
 * withHostDriver output), and for another variant that needs it the environment's nixglhost at DIR-nixglhost.
 * @param ready what install knew before the build (the output's store path, when Nix could say)
 * @param resultDir where the build driver left `result-NAME` (nix backend), null when there was no build or flox built
 * @returns the nixglhost verify runs the variant through, or undefined
 * @throws InstallInputError when the build left no result link, or a Nix command failed (nix-gl-host not built)
 */
async function linkInstalled(p: InstallPlan, say: (text: string) => void, ready: InstallReady, resultDir: string | null): Promise<string | undefined> {
  const { variant, dir, file, envFile, throughNixglhost, wrapped, link } = p;
  const [{ addGcRoot, buildAttrLink }, it] = await Promise.all([import("./store.ts"), import("./install-target.ts")]);
  // The output: known before the build, else the build's result link (the nix backend's in resultDir, flox's in the root).
  const result = path.join(resultDir ?? REPO_ROOT, `result-${variant.name}`);
  const out = ready.outPath ?? it.resultOutPath(path.dirname(result), variant.name);
  if (out === null) throw new InstallInputError(`the build left no ${result}: nothing to link at ${dir}`);
  // Known only now (Nix could not evaluate the file before the build): DIR must hold nothing but this variant's install.
  if (ready.outPath === null) it.assertLinkPlaces([{ ...p.places[0]!, own: it.ownNames(out) }]);
  // nix-gl-host is built from numtide's source when the pin has none (pkgs/nix-gl-host.nix); a build that fails
  // here (no network for its source, say) leaves the environment built, so say what is left.
  const nixglhostFrom = (failure: string | null) => {
    if (failure !== null)
      throw new InstallInputError(
        `${failure}\n${variant.name} is built, but no nixglhost was built for it: run it through flox ` +
          "(`flox activate`, dev mode) or on NixOS (docs/gpu-driver.md)",
      );
  };
  // 4. DIR as a GC root of the output.
  if (wrapped) {
    // 4 and 5 as one: DIR is the environment with its Pythons wrapped, a Nix output (nix-build -o makes DIR a GC root).
    nixglhostFrom(buildAttrLink(file, "withHostDriver", dir, p.cacheOptions));
    say(`linked ${dir} -> ${realpathSync(dir)} (a GC root): ${out} with bin/python3 and bin/python run through nix-gl-host`);
    return undefined;
  }
  const failed = addGcRoot(out, dir, p.cacheOptions);
  if (failed !== null) throw new InstallInputError(failed);
  say(`linked ${dir} -> ${out} (a GC root)`);
  // 5. The route to the host's driver for a variant with no python of its own.
  if (!throughNixglhost) return undefined;
  if (!envFile) throw new InstallInputError(`${variant.name} runs on this host only through nixglhost, which its environment variant carries, and the matrix has none (add "torch-env" to packages)`);
  nixglhostFrom(buildAttrLink(envFile, "nixglhost", link, p.cacheOptions));
  say(`the host's GPU driver through ${link}/bin/nixglhost (the environment's nix-gl-host)`);
  return `${link}/bin/nixglhost`;
}

/** The build driver's arguments for install's one variant; the nix backend's result links go in `outDir` (install-target.ts makeResultDir). */
export function installBuildArgs(args: InstallOptions, name: string, backend: Backend, dryRun: boolean, outDir?: string): BuildArgs {
  return {
    names: [name],
    backend,
    dryRun,
    pkgsDir: args.pkgsDir,
    matrix: args.matrix,
    logsDir: args.logsDir,
    plain: args.plain,
    outDir: backend === "nix" ? outDir : undefined,
    retries: 0,
    verbose: args.verbose,
    checksShown: dryRun,
    // Ask Nix before estimating (driver/ask-nix.ts), for the dry run's plan and before the real build.
    askNixTimeout: args.askNixTimeout ?? ASK_NIX_TIMEOUT_S,
  };
}

/** What runInstall is handed: the steps a library may not import (commands/), and where its lines go. */
export interface InstallHooks<R> {
  /** Build through the build driver (commands/build-main.ts buildMain over the command's io): the exit code. */
  build: (args: BuildArgs) => Promise<number>;
  /** Verify the linked variant (through `hostDriver` when given): its exit code and what it found (null: no report). */
  verify: (hostDriver: string | undefined) => Promise<{ code: number; report: R | null }>;
  /** One line of progress (unwrapped; `indent` and `hang` as text.ts wrap takes them). */
  say: (text: string, indent?: string, hang?: string) => void;
}

/**
 * Run a plan (not a dry run, no stop): steps 3 to 6 of the module comment. The build's result links go in a directory
 * of their own (install-target.ts makeResultDir), removed at the end, so DIR is the one GC root left.
 * @returns the exit code (the build's when it failed, else verify's) and verify's report
 * @throws InstallInputError when the build left no result link, or a Nix command failed (nix-gl-host not built)
 */
export async function runInstall<R>(plan: InstallPlan, args: InstallOptions, hooks: InstallHooks<R>): Promise<{ exitCode: number; report: R | null }> {
  const { variant, backend, dir, throughNixglhost } = plan;
  const it = await import("./install-target.ts");
  const ready = await it.prepareInstall(plan.file, plan.places, plan.cacheOptions);
  const resultDir = ready.atOnce || backend === "flox" ? null : it.makeResultDir();
  try {
    if (ready.atOnce) hooks.say(`${variant.name} is ${ready.output.state === "present" ? "in the store" : "fetchable from a substituter"} (${ready.outPath}): nothing to build`);
    else {
      const built = await hooks.build(installBuildArgs(args, variant.name, backend, false, resultDir ?? undefined));
      if (built !== 0) return { exitCode: built, report: null };
    }
    const hostDriver = await linkInstalled(plan, hooks.say, ready, resultDir);
    await (await import("../preflight/nixglhost-cache.ts")).firstStartThroughNixglhost({ dir, throughNixglhost, nixglhost: hostDriver }, hooks.say);
    const v = await hooks.verify(hostDriver);
    return { exitCode: v.code, report: v.report };
  } finally {
    if (resultDir !== null) it.dropResultDir(resultDir);
  }
}
