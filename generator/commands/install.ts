/**
 * `variant-matrix install [NAME]`: from a host to a verified GPU environment in one command, chaining what the other
 * commands do (the verb is `install` because what the user gets is an installed environment at DIR, as `pip install`
 * or `flox install` leave one; the build is a means):
 *
 *   1. NAME, or the variant `detect` picks for this host (detect/choose.ts chooseVariant: torch-env unless --package);
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
 * A second run builds nothing (the output is in the store: DIR is linked at once) and verifies again. `--dry-run`
 * prints the steps, the checks and the build's plan with its estimate, and changes nothing; with a recording
 * (`--cpuinfo`/`--nvidia-smi`/`--machine`) it plans for the recorded host, and only a dry run takes one (a real install
 * builds, links and verifies on this machine).
 *
 * This file maps the options onto one library call, plan then run (install/install.ts planInstall → InstallPlan →
 * runInstall → InstallResult), and prints the plan, the progress and the result; the build driver's lines come from its
 * command's printing (build-main.ts), and verify is its library's call (verify/verify.ts planVerify → runVerify, a
 * VerifyReport value), both handed to runInstall as its steps.
 *
 * Exit status: 0 every promise holds; 1 a build failed or a promise does not hold; 2 bad input, or a check that must
 * be fixed first (the fix is printed); 130 or 143 a SIGINT or SIGTERM stopped it (its Nix or its probe ended, its
 * temporary result links removed, one line says where it stopped; before the build driver's run, the signal then ends
 * the process, which a shell reports as 130 or 143).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import path from "node:path";
import { errorLine, exitCodeOf, withExitCode } from "../errors.ts";
import { ASK_NIX_TIMEOUT_S } from "../constants.ts";
import { wrap, wrapCommand } from "../text.ts";
import type { CheckResult } from "../preflight/checks.ts";
import type { InstallEvent, InstallOptions, InstallPlan, InstallResult, InstallSteps } from "../install/install.ts";
import { copyableCommand, runOf, terminalWidth, type Io } from "./shared.ts";
import { DEFAULT_PACKAGE, hostOptions, hostRootOption, matrixOption, nixOptions, outputOptions, packagePickOption, pick, type ArgsOf, type OptionTypes } from "./options.ts";
import { namePositional } from "./doctor.ts";
import type { VerifyReport } from "../verify/verify.ts";

/** The options of `install` (yargs), the shared groups defined once in options.ts. */
const installOptions = {
  dir: { type: "string", describe: "where the environment is linked (a GC root): DIR/bin/python3 (default ./PACKAGE: ./torch-env, ./llm-env)" },
  "dry-run": { type: "boolean", describe: "print the steps, the checks and the build's plan with its estimate; change nothing" },
  verbose: { type: "boolean", describe: "with --dry-run: the plan's every command, estimate basis and cache reason in full" },
  "ask-nix-timeout": {
    type: "number",
    describe:
      `seconds Nix may take to say what it would build and fetch, the team's caches included (default ${ASK_NIX_TIMEOUT_S}; 0: the cache model); ` +
      "given, it also limits the evaluation before the build (default 600 s), which ends there with what was waited for",
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

/**
 * Run install; returns the exit status (see the file header) instead of exiting.
 * @param io where install writes (main's run.io; tests hand in recorders); the build's own lines go there too
 */
export async function installMain(args: InstallArgs, io: Io): Promise<number> {
  return withExitCode(io.err, () => install(args, io));
}

/** install's options as the library takes them (install/install.ts planInstall). */
function installOptionsOf(args: InstallArgs, width: number): InstallOptions {
  return {
    name: args.name,
    package: args.package ?? DEFAULT_PACKAGE,
    dir: args.dir,
    dryRun: !!args.dryRun,
    backend: args.backend,
    cpuinfo: args.cpuinfo,
    nvidiaSmi: args["nvidia-smi"],
    machine: args.machine,
    mem: args.mem,
    hostRoot: args.hostRoot,
    matrix: args.matrix,
    pkgsDir: args.pkgsDir,
    logsDir: args.logsDir,
    plain: args.plain,
    verbose: args.verbose,
    askNixTimeout: args.askNixTimeout,
    width,
  };
}

/**
 * install as one library call: plan (install/install.ts planInstall), print the plan (a dry run: the steps; else the
 * checks to fix, or what it chose and the checks), run it (runInstall: the build driver and verify print their own
 * lines) and print what it did. @returns the exit status
 */
async function install(args: InstallArgs, io: Io): Promise<number> {
  const width = terminalWidth(io);
  const say = (text: string, indent = "", hang?: string) => io.out(wrap(text, width, { indent, hang }) + "\n");
  const [lib, pre] = await Promise.all([import("../install/install.ts"), import("../preflight/checks.ts")]);
  const plan = await lib.planInstall(installOptionsOf(args, width));
  const formatChecks = (r: CheckResult[]) => pre.formatChecks(r, width);
  if (plan.dryRun) printDryRun(plan, { say, out: (s) => io.out(s), formatChecks });
  else if (plan.stops.length) {
    io.err(stopsText(args, plan, width, formatChecks));
    return 2;
  } else printChosen(plan, { say, out: (s) => io.out(s), formatChecks, err: io.err });
  // A signal after the build (install-target.ts watchInterrupt): the steps' io is shut, and install's own line says
  // where it stopped; exit 130 or 143.
  const gate = { open: true };
  const shut: Io = { ...io, out: (s) => gate.open && io.out(s), err: (s) => gate.open && io.err(s) };
  let result: InstallResult;
  try {
    const steps = installSteps(plan.variant.name, shut, (t, indent, hang) => gate.open && say(t, indent, hang));
    const progress: InstallSteps["progress"] = (e) => (e.kind === "stopped" ? io.err(errorLine(e.line)) : steps.progress(e));
    result = await lib.runInstall(plan, { ...steps, progress, stopped: () => (gate.open = false) });
  } catch (e) {
    const { InstallInterrupted } = await import("../install/install-target.ts");
    if (!(e instanceof InstallInterrupted)) throw e;
    io.err(errorLine(e.message));
    return e.exitCode;
  }
  printResult(plan, result, say, io);
  return result.exitCode;
}

/** The checks that stop a real install (exit 2 before anything is built), with the doctor line that runs them all. */
function stopsText(args: InstallArgs, plan: InstallPlan, width: number, formatChecks: (r: CheckResult[]) => string): string {
  const from = { cpuinfo: args.cpuinfo, "nvidia-smi": args["nvidia-smi"], machine: args.machine, matrix: args.matrix };
  return (
    wrap(`install: ${plan.stops.length} check(s) to fix before anything is built; this runs them all:`, width) +
    "\n" +
    wrapCommand(copyableCommand(["doctor", plan.variant.name], from), width, "  ") +
    "\n" +
    formatChecks(plan.stops) +
    "\n" +
    wrap("Apply each fix (paste the blocks as they are), then run install again.", width) +
    "\n"
  );
}

/** How install prints: a wrapped line (`say`), raw text (`out`), the checks' lines, and stderr. */
interface InstallPrint {
  say: (text: string, indent?: string, hang?: string) => void;
  out: (s: string) => void;
  formatChecks: (results: CheckResult[]) => string;
  err?: (s: string) => void;
}

/**
 * A real install's first lines: what it chose, the checks that passed or do not apply (one line each), the route to
 * the GPU driver; a ✗ that does not stop install is a warning with its fix, except the GPU driver's when install takes
 * the nixglhost route it names.
 */
function printChosen(plan: InstallPlan, p: InstallPrint): void {
  const { variant, chosen, dir, backend, checks, throughNixglhost, python } = plan;
  p.say(`install ${variant.name} (${chosen.chosenBy}) at ${dir}, backend ${backend}, on ${chosen.system}`);
  for (const w of plan.warnings) p.say(`warning: ${w}`, "  ! ", "    ");
  const warned = checks.filter((r) => r.status === "fail" && !(r.id === "gpu-driver" && throughNixglhost));
  // The GPU driver's line on the nixglhost route is the → line below (its ✓ or ✗ names the route install takes).
  p.out(p.formatChecks(checks.filter((r) => r.status !== "fail" && !(r.id === "gpu-driver" && throughNixglhost))) + "\n");
  if (throughNixglhost) p.say(`→ GPU driver: the host's is outside /run/opengl-driver/lib: ${python} runs through nix-gl-host`, "  ", "    ");
  if (warned.length) p.err?.(`warning:\n${p.formatChecks(warned)}\n`);
}

/** runInstall's work, printed: the build driver's lines and verify's report through `io`, each step's progress through `say`. */
function installSteps(name: string, io: Io, say: (text: string, indent?: string, hang?: string) => void): InstallSteps {
  return {
    build: async (a) => (await import("./build-main.ts")).buildMain(a, io),
    verify: async (r) => {
      // verify's library (verify/verify.ts): its report is a value; its errors printed as verify prints them.
      const [lib, { proofLine }] = await Promise.all([import("../verify/verify.ts"), import("./verify-main.ts")]);
      try {
        const report = await lib.runVerify(lib.planVerify(r));
        // The proof install fetched is printed above (proofText): its use is said without its path and tool again.
        if (report.proof) say(report.proof.used ? "device code judged from that proof: cuobjdump did not run here" : proofLine(report.proof));
        return { code: report.holds ? 0 : 1, report };
      } catch (e) {
        const code = e instanceof lib.VerifyRunError ? e.exitCode : exitCodeOf(e);
        if (code === null) throw e;
        io.err(errorLine((e as Error).message));
        return { code, report: null };
      }
    },
    progress: (e) => (e.kind === "proof" ? proofText(e.proof, name).forEach((l, i) => say(l, i ? "  " : "", i ? "    " : "  ")) : say(progressLine(e, name))),
  };
}

/**
 * What install found of the variant's proof, in lines: proven, the proof's path, its builder and cuobjdump, then the
 * promise's lines of its report; published unproven; or no proof, verify checking everything. Pure.
 */
export function proofText(p: import("../driver/proof.ts").FetchedProof, name: string): string[] {
  if (p.state === "unproven")
    return [`${name} was published unproven (publish --allow-unproven: its cache holds the mark ${p.marker}, no proof): verify checks everything here, cuobjdump included`];
  if (p.state === "none") return [`no proof of ${name}: ${p.why}; verify checks everything here, cuobjdump included`];
  const s = p.summary;
  const how = [s.builder ? `on ${s.builder}` : "builder not recorded", s.cuobjdump ? `device code read by ${s.cuobjdump}` : "no cuobjdump recorded"].join("; ");
  return [
    `proof of ${name}: ${s.path} (${p.fetched ? "fetched from a substituter" : "in the store"}; its static check ran ${how}); verify runs only what needs this host:`,
    ...s.lines,
  ];
}

/** One step of runInstall in words. */
function progressLine(e: Exclude<InstallEvent, { kind: "proof" }>, name: string): string {
  if (e.kind === "at-once") return `${name} is ${e.state === "present" ? "in the store" : "fetchable from a substituter"} (${e.outPath}): nothing to build`;
  if (e.kind === "linked")
    return e.wrapped ? `linked ${e.dir} -> ${e.target} (a GC root): ${e.outPath} with bin/python3 and bin/python run through nix-gl-host` : `linked ${e.dir} -> ${e.target} (a GC root)`;
  if (e.kind === "nixglhost") return `the host's GPU driver through ${e.link}/bin/nixglhost (the environment's nix-gl-host)`;
  return e.line;
}

/** What a real install ends with: each promise that does not hold, then the one closing line (never wrapped). */
function printResult(plan: InstallPlan, r: InstallResult, say: (text: string, indent?: string, hang?: string) => void, io: Io): void {
  const report = r.verify?.report;
  if (!report) return;
  for (const c of report.checks.filter((x) => x.ok === false)) say(`✗ ${c.promise}: expected ${c.expected}, found ${c.found}`, "  ", "    ");
  io.out(closingLine(plan.python, report, plan.variant) + "\n");
}

/** `install --dry-run`: the steps, each as it would run, and the checks (the build's plan follows from the driver). */
function printDryRun(p: InstallPlan, { say, out, formatChecks }: InstallPrint): void {
  const { variant, chosen, dir, backend, file, envFile, checks: results, gpu, throughNixglhost, wrapped, stops } = p;
  const verbose = !!p.options.verbose;
  // Without --verbose: what stops install or has a fix to paste; the passing and merely informative ones are counted.
  // The GPU driver's line on the nixglhost route install takes itself (steps 4-5) is left out, as the real run does.
  const shown = verbose
    ? results
    : results.filter((r) => (r.status === "fail" || (r.status === "skip" && r.fix)) && !(r.id === "gpu-driver" && throughNixglhost));
  // DIR as the user would type it here: ./torch-env under the working directory, else absolute.
  const here = (f: string) => (f.startsWith(process.cwd() + path.sep) ? `./${path.relative(process.cwd(), f)}` : f);
  const at = here(dir);
  say(`install ${variant.name} (${chosen.chosenBy}) at ${at}, backend ${backend}, on ${chosen.system}: the steps (nothing is changed)`);
  say(`1. variant: ${variant.name}`, "  ", "     ");
  for (const w of p.warnings) say(`warning: ${w}`, "     ! ", "       ");
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
        : `5. the GPU driver: ${variant.cuda === null ? "none needed (CPU-only)" : gpu?.status === "ok" ? "loaded directly (the GPU driver check passes)" : `no NVIDIA driver ${p.recorded ? "on the recorded host" : "here"}: the GPU checks are skipped`}`,
    "  ",
    "     ",
  );
  say(`6. verify ${variant.name} through ${at}/bin/python3${throughNixglhost && !wrapped ? ` run by ${at}-nixglhost/bin/nixglhost` : ""}`, "  ", "     ");
  out("\n");
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
    run.exitCode = await installMain(argv, run.io);
  },
};
