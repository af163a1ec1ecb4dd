/**
 * `variant-matrix install [NAME]`: from a host to a verified GPU environment in one command, chaining what the other
 * commands do (the verb is `install` because what the user gets is an installed environment at DIR, as `pip install`
 * or `flox install` leave one; the build is a means):
 *
 *   1. NAME, or the variant `detect` picks for this host (doctor.ts chooseVariant: torch-env unless --package);
 *   2. every `doctor` check of it (preflight/checks.ts, command "install"): a ✗ whose fix is a nix.conf setting, or
 *      a ✗ that stops `build`, prints its fix (the nix.conf block to paste) and exits 2 before any work;
 *   3. the build through the build driver (build-main.ts buildMain: the estimate, progress, logs, resume);
 *   4. DIR (default ./PACKAGE: ./torch-env) as a GC root of the variant's output (`nix-store --realise OUT --add-root DIR`);
 *   5. on a host whose GPU driver the variant cannot load by itself (not NixOS, no flox activation serving it), DIR is
 *      instead the environment's `withHostDriver` output (pkgs/host-driver.nix: the same environment whose bin/python3
 *      and bin/python run through nix-gl-host, pkgs/nix-gl-host.nix), built with `nix-build FILE -A withHostDriver -o DIR`, a Nix
 *      output and a GC root like the environment; a variant that is not an environment (it has no python of its own)
 *      gets the environment's `nixglhost` linked as DIR-nixglhost, which verify runs it through;
 *   6. `verify` on the GPU through DIR/bin/python3, ending with one line.
 *
 *   install [NAME] [--dir DIR] [--dry-run] [--backend auto|flox|nix] [--package P]
 *           [--cpuinfo FILE] [--nvidia-smi FILE] [--machine ARCH] [--matrix FILE] [--pkgs-dir DIR]
 *
 * A second run builds nothing (the driver finds the output built) and verifies again. `--dry-run` prints the steps,
 * the checks and the build's plan with its estimate, and changes nothing.
 *
 * Exit status: 0 every promise holds; 1 a build failed or a promise does not hold; 2 bad input, or a check that must
 * be fixed first (the fix is printed).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { realpathSync } from "node:fs";
import path from "node:path";
import { InputError, withExitCode } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import { ASK_NIX_TIMEOUT_S } from "../constants.ts";
import { formatName, parseName } from "../matrix/naming.ts";
import { ENV_PACKAGE } from "../catalog/packages.ts";
import { wrap, wrapCommand } from "../text.ts";
import type { Backend } from "../driver/backend.ts";
import type { CheckResult } from "../preflight/checks.ts";
import type { Variant } from "../matrix/schema.ts";
import type { BuildArgs } from "../driver/build-options.ts";
import { assertGeneratedFor, copyableCommand, runOf, terminalWidth, type Io } from "./shared.ts";
import { DEFAULT_PACKAGE, hostOptions, hostRootOption, matrixOption, nixOptions, outputOptions, packagePickOption, pick, type ArgsOf, type OptionTypes } from "./options.ts";
import { judgeRecordedHost, namePositional, type ChosenVariant } from "./doctor.ts";
import type { VerifyReport } from "./verify-main.ts";
import type { InstallReady, LinkPlace } from "../driver/install-target.ts";

/** The options of `install` (yargs), the shared groups defined once in options.ts. */
const installOptions = {
  dir: { type: "string", describe: "where the environment is linked (a GC root): DIR/bin/python3 (default ./PACKAGE: ./torch-env, ./llm-env)" },
  "dry-run": { type: "boolean", describe: "print the steps, the checks and the build's plan with its estimate; change nothing" },
  verbose: { type: "boolean", describe: "with --dry-run: the plan's every command, estimate basis and cache reason in full" },
  "ask-nix-timeout": {
    type: "number",
    describe: `seconds Nix may take to say what it would build and fetch, the team's caches included (default ${ASK_NIX_TIMEOUT_S}; 0: the cache model)`,
  },
  ...pick(nixOptions, "backend"),
  package: {
    ...packagePickOption.package,
    describe: `package detect picks for when NAME is not given (default ${DEFAULT_PACKAGE}; NAME-env for an environment of matrix.ts)`,
  },
  ...hostOptions,
  ...matrixOption,
  "pkgs-dir": { ...nixOptions["pkgs-dir"], describe: "take each variant's file from DIR/NAME.nix instead of .flox/pkgs (as build --pkgs-dir)" },
  ...pick(outputOptions, "logs-dir", "plain"),
  ...hostRootOption,
} as const;

/**
 * Arguments of `install` as yargs infers them from its positional and options (each may be left out). `dir`: where
 * the environment is linked (default ./PACKAGE of the variant); `pkgsDir`: take the variant's file (and its
 * environment's) from DIR/NAME.nix, as `build --pkgs-dir`.
 */
export type InstallArgs = Partial<ArgsOf<typeof namePositional & typeof installOptions>>;

/** Bad input for install, or a check to fix first (exit 2). */
export class InstallInputError extends InputError {}

/**
 * Run install; returns the exit status (see the file header) instead of exiting.
 * @param io where install writes (main's run.io; tests hand in recorders); the build's own lines go there too
 */
export async function runInstall(args: InstallArgs, io: Io): Promise<number> {
  return withExitCode(io.err, () => install(args, io));
}

/** What install decided before it changes anything: the variant, where it goes, the checks and the driver route. */
interface InstallPlan {
  variant: Variant;
  /** The recorded host the plan is for (--cpuinfo/--nvidia-smi without --host-root): build-options.ts BuildArgs.forHost. */
  forHost?: { system: string; cpus: number; label: string };
  /** The project: the matrix's directory, where its generated files are (the flox backend builds there). */
  root: string;
  chosen: ChosenVariant;
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

/** install's steps (see the file header): decide, then print the dry run, or check, build, link and verify. */
async function install(args: InstallArgs, io: Io): Promise<number> {
  const width = terminalWidth(io);
  const say = (text: string, indent = "", hang?: string) => io.out(wrap(text, width, { indent, hang }) + "\n");
  const plan = await planInstall(args);
  const pre = await import("../preflight/checks.ts");
  const { variant, chosen, dir, backend, results, throughNixglhost, stops, python } = plan;
  if (args.dryRun) {
    printDryRun(plan, say, (s) => io.out(s), (r) => pre.formatChecks(r, width), !!args.verbose);
    const { buildMain } = await import("./build-main.ts");
    return buildMain(buildArgs(args, plan, true), io);
  }
  if (stops.length) {
    io.err(
      wrap(`install: ${stops.length} check(s) to fix before anything is built; this runs them all:`, width) +
        "\n" +
        wrapCommand(copyableCommand(["doctor", variant.name], { cpuinfo: args.cpuinfo, "nvidia-smi": args["nvidia-smi"], machine: args.machine, matrix: args.matrix }), width, "  ") +
        "\n" +
        pre.formatChecks(stops, width) +
        "\n" +
        wrap("Apply each fix (paste the blocks as they are), then run install again.", width) +
        "\n",
    );
    return 2;
  }
  say(`install ${variant.name} (${chosen.chosenBy}) at ${dir}, backend ${backend}, on ${chosen.system}`);
  // The checks that passed or do not apply, one line each; a ✗ that does not stop install is a warning with its fix,
  // except the GPU driver's when step 5 takes the nixglhost route it names.
  const warned = results.filter((r) => r.status === "fail" && !(r.id === "gpu-driver" && throughNixglhost));
  io.out(pre.formatChecks(results.filter((r) => r.status !== "fail"), width) + "\n");
  if (throughNixglhost) say(`→ GPU driver: the host's is outside /run/opengl-driver/lib: ${python} runs through nix-gl-host`, "  ", "    ");
  if (warned.length) io.err(`warning:\n${pre.formatChecks(warned, width)}\n`);

  // 3. The build: none when the output is in the store or fetchable (DIR is linked at once); else through the build
  // driver, its result links in a directory of their own, so that DIR is the one GC root left.
  const it = await import("../driver/install-target.ts");
  const ready = await it.prepareInstall(plan.file, plan.places, plan.cacheOptions);
  const resultDir = ready.atOnce || backend === "flox" ? null : it.makeResultDir();
  try {
    if (ready.atOnce) say(`${variant.name} is ${ready.output.state === "present" ? "in the store" : "fetchable from a substituter"} (${ready.outPath}): nothing to build`);
    else {
      const { buildMain } = await import("./build-main.ts");
      const built = await buildMain(buildArgs(args, plan, false, resultDir ?? undefined), io);
      if (built !== 0) return built;
    }
    const hostDriver = await linkInstalled(plan, say, ready, resultDir);
    await (await import("../preflight/nixglhost-cache.ts")).firstStartThroughNixglhost({ dir, throughNixglhost, nixglhost: hostDriver }, say);
    return verifyInstalled(args, plan, hostDriver, say, io);
  } finally {
    if (resultDir !== null) it.dropResultDir(resultDir);
  }
}

/**
 * Steps 1 and 2: the variant (NAME or detect's pick), DIR, the backend, the variant's files and the checks of this
 * host, with the route to its GPU driver they imply.
 * @throws InstallInputError for an unknown variant or a DIR this command did not make
 */
async function planInstall(args: InstallArgs): Promise<InstallPlan> {
  const [{ loadVariants }, { chooseVariant }, { resolveBackend }, pre] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("./doctor.ts"),
    import("../driver/backend.ts"),
    import("../preflight/checks.ts"),
  ]);
  const project = await loadVariants(args.matrix);
  const chosen = await chooseVariant({ ...args, package: args.package ?? DEFAULT_PACKAGE }, project);
  const variant = project.variants.find((v) => v.name === chosen.name);
  if (!variant) throw new InstallInputError(`unknown variant "${chosen.name}" (variant-matrix list names them)`);
  // The files install hands Nix (the project's, unless --pkgs-dir gives the user's own) say what the matrix gives now.
  // The project is the matrix's directory (the repository's matrix.ts: its root): its generated files are what is built.
  const root = project.project ? path.dirname(project.project.matrixFile) : REPO_ROOT;
  // Those files (unless --pkgs-dir gives the user's own) must say what the matrix gives now, as build requires.
  if (args.pkgsDir === undefined && project.project) await assertGeneratedFor(project.project, root, "install", [variant.name]);
  // A name the user recognises: the package's (./torch-env, ./llm-env, ./pytorch).
  const dir = path.resolve(args.dir ?? variant.package);
  const backend = await resolveBackend(args.backend ?? "auto");
  const fileOf = (name: string, file: string) => (args.pkgsDir !== undefined ? path.resolve(args.pkgsDir, `${name}.nix`) : path.join(root, file));
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
  const recorded =
    args.hostRoot === undefined && (args.cpuinfo !== undefined || args.nvidiaSmi !== undefined) ? await judgeRecordedHost({ cpuinfo: args.cpuinfo, nvidiaSmi: args.nvidiaSmi, machine: args.machine }, results, variant.cuda !== null) : undefined;
  const gpu = results.find((r) => r.id === "gpu-driver");
  // The route to the driver: NixOS or a flox activation serving libcuda pass the check; a driver elsewhere (its ✗)
  // is reached through nixglhost; no driver at all (–) leaves the GPU checks to verify's "not checkable here".
  const throughNixglhost = variant.cuda !== null && gpu?.status === "fail";
  // Every place install will link takes a link and holds nothing of another's (driver/install-target.ts), checked
  // before any build; DIR again with the output's store names once Nix says what the output is (prepareInstall).
  const places: LinkPlace[] = [
    { link: dir, own: null, what: "--dir" },
    ...(throughNixglhost && variant.role !== "env" ? [{ link: `${dir}-nixglhost`, own: [/^nix-gl-host/], what: "the nixglhost link" }] : []),
    ...(backend === "flox" ? [{ link: path.join(root, `result-${variant.name}`), own: null, what: "flox's result link" }] : []),
  ];
  (await import("../driver/install-target.ts")).assertLinkPlaces(places);
  return {
    variant,
    root,
    forHost: recorded && { system: recorded.system, cpus: recorded.cpu.logicalCpus, label: `the recorded host (${recorded.sources.cpuinfo})` },
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

/** `install --dry-run`: the steps, each as it would run, and the checks (the build's plan follows from the driver). */
function printDryRun(
  p: InstallPlan,
  say: (text: string, indent?: string, hang?: string) => void,
  out: (s: string) => void,
  formatChecks: (results: CheckResult[]) => string,
  verbose = false,
): void {
  const { variant, chosen, dir, backend, file, envFile, results, gpu, throughNixglhost, wrapped, stops, link, python } = p;
  // Without --verbose: what stops install or has a fix to paste; the passing and merely informative ones are counted.
  // The GPU driver's ✗ whose fix is the nixglhost route install takes itself (steps 4-5) is left out, as the real run does.
  const shown = verbose
    ? results
    : results.filter((r) => (r.status === "fail" || (r.status === "skip" && r.fix)) && !(r.id === "gpu-driver" && throughNixglhost));
  // DIR as the user would type it here: ./torch-env under the working directory, else absolute.
  const here = (f: string) => (f.startsWith(process.cwd() + path.sep) ? `./${path.relative(process.cwd(), f)}` : f);
  const at = here(dir);
  say(`install ${variant.name} (${chosen.chosenBy}) at ${at}, backend ${backend}, on ${chosen.system}: the steps (nothing is changed)`);
  say(`1. variant: ${variant.name}`, "  ", "     ");
  const more = results.length - shown.length;
  say(
    `2. checks: ${stops.length ? `${stops.length} to fix first (install stops on them, exit 2)` : "none stops install"}` +
      `${more ? `; ${more} more in --verbose` : ""}:`,
    "  ",
    "     ",
  );
  if (shown.length) out(formatChecks(shown) + "\n");
  say("3. build through the build driver: the plan and its estimate follow", "  ", "     ");
  say(
    wrapped
      ? `4. link ${at} to the environment with its Pythons run through nix-gl-host (a GC root): nix-build ${here(file)} -A withHostDriver -o ${at}`
      : `4. link ${at} to the output (a GC root: nix-store --realise OUT --add-root ${at})`,
    "  ",
    "     ",
  );
  say(
    wrapped
      ? `5. the host's GPU driver: ${at}/bin/python3 and ${at}/bin/python run through nixglhost (step 4's output)`
      : throughNixglhost
        ? `5. the host's GPU driver through the environment's nixglhost: nix-build ${here(envFile ?? file)} -A nixglhost -o ${at}-nixglhost`
        : `5. the GPU driver: ${variant.cuda === null ? "none needed (CPU-only)" : gpu?.status === "ok" ? "loaded directly (the GPU driver check passes)" : `no NVIDIA driver ${p.forHost ? "on the recorded host" : "here"}: the GPU checks are skipped`}`,
    "  ",
    "     ",
  );
  say(`6. verify ${variant.name} through ${at}/bin/python3${throughNixglhost && !wrapped ? ` run by ${at}-nixglhost/bin/nixglhost` : ""}`, "  ", "     ");
  out("\n");
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
  const [{ addGcRoot, buildAttrLink }, it] = await Promise.all([import("../driver/store.ts"), import("../driver/install-target.ts")]);
  // The output: known before the build, else the build's result link (the nix backend's in resultDir, flox's in the root).
  const result = path.join(resultDir ?? p.root, `result-${variant.name}`);
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

/** Step 6: verify through DIR's python; its report as data for the one closing line. @returns verify's exit status */
async function verifyInstalled(args: InstallArgs, p: InstallPlan, hostDriver: string | undefined, say: (text: string, indent?: string, hang?: string) => void, io: Io): Promise<number> {
  const [{ runVerify }, { loadVariants }] = await Promise.all([import("./verify-main.ts"), import("../matrix/variant-source.ts")]);
  let json = "";
  const code = await runVerify(
    {
      name: p.variant.name,
      python: p.dir,
      json: true,
      hostDriver,
      hostRoot: args.hostRoot,
      cpuinfo: args.cpuinfo,
      "nvidia-smi": args["nvidia-smi"],
      machine: args.machine,
      matrix: args.matrix,
    },
    loadVariants,
    { out: (s) => (json += s), err: io.err },
  );
  if (!json) return code;
  const report = JSON.parse(json) as VerifyReport;
  for (const c of report.checks.filter((x) => x.ok === false)) say(`✗ ${c.promise}: expected ${c.expected}, found ${c.found}`, "  ", "    ");
  // One line, never wrapped: the last line of the run says what was installed and what held.
  io.out(closingLine(p.python, report, p.variant) + "\n");
  return code;
}

/**
 * The build driver's arguments for install's one variant, in its project (`p.root`); the nix backend's result links
 * go in `outDir` (install-target.ts makeResultDir).
 */
function buildArgs(args: InstallArgs, p: Pick<InstallPlan, "variant" | "backend" | "root" | "forHost">, dryRun: boolean, outDir?: string): BuildArgs {
  const backend = p.backend;
  return {
    forHost: dryRun ? p.forHost : undefined,
    names: [p.variant.name],
    root: p.root,
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

/**
 * The line install ends with: the python's path, what it is (torch, capabilities, ISA) and how many promises held on
 * which GPU. Pure.
 */
export function closingLine(
  python: string,
  report: Pick<VerifyReport, "name" | "checks">,
  variant: { torchVersion: string; cudaCapabilities: readonly string[]; isa: string },
): string {
  const held = report.checks.filter((c) => c.ok === true).length;
  const gpus = report.checks.filter((c) => /^GPU .* runs this variant's code$/.test(c.promise) && c.ok === true).map((c) => c.promise.replace(/^GPU (.*) runs this variant's code$/, "$1"));
  const what = `torch ${variant.torchVersion}, ${variant.cudaCapabilities.length ? `capabilities ${variant.cudaCapabilities.join(" ")}` : "CPU-only"}, ISA ${variant.isa}`;
  return `${python}: ${report.name} (${what}): ${held} of ${report.checks.length} promises hold${gpus.length ? ` on ${gpus.join(", ")}` : ", no GPU checked"}`;
}

/** The yargs command module; generator/cli.ts registers it. Sets its run's exit status (0, 1 or 2, see above). */
export const installCommand: CommandModule<object, OptionTypes<typeof namePositional & typeof installOptions>> = {
  command: "install [name]",
  describe: "detect's pick (or NAME) for this host: check, build, link at --dir, run through the host's GPU driver and verify on the GPU",
  builder: (y: Argv<object>) => y.positional("name", namePositional.name).options(installOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof namePositional & typeof installOptions>>) => {
    const run = runOf(argv);
    run.exitCode = await runInstall(argv, run.io);
  },
};
