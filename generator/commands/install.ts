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
 *      and bin/python run through the pin's nix-gl-host), built with `nix-build FILE -A withHostDriver -o DIR`, a Nix
 *      output and a GC root like the environment; a variant that is not an environment (it has no python of its own)
 *      gets the environment's `nixglhost` linked as DIR-nixglhost, which verify runs it through;
 *   6. `verify` on the GPU through DIR/bin/python3, ending with one line.
 *
 *   install [NAME] [--dir DIR] [--dry-run] [--backend auto|flox|nix] [--package P]
 *           [--cpuinfo FILE] [--nvidia-smi FILE] [--machine ARCH] [--matrix FILE] [--pkgs-dir DIR]
 *
 * A second run builds nothing (the build driver finds the output built) and verifies again. `--dry-run` prints the steps,
 * the checks and the build's plan with its estimate, and changes nothing.
 *
 * Exit status: 0 every promise holds; 1 a build failed or a promise does not hold; 2 bad input, or a check that must
 * be fixed first (the fix is printed).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { BACKEND_CHOICES } from "../driver/backend.ts";
import { errorLine, exitCodeOf, InputError } from "../errors.ts";
import { DEFAULT_PACKAGE } from "./detect.ts";
import { terminalWidth } from "./shared.ts";

/** Arguments of `install`, as yargs hands them to the handler. */
export interface InstallArgs {
  name?: string;
  /** Where the environment is linked (a GC root); default ./PACKAGE of the variant (./torch-env). */
  dir?: string;
  dryRun?: boolean;
  backend?: string;
  package?: string;
  cpuinfo?: string;
  "nvidia-smi"?: string;
  machine?: string;
  matrix?: string;
  /** Take the variant's file (and its environment's) from DIR/NAME.nix, as `build --pkgs-dir`. */
  pkgsDir?: string;
  /** Logs root of the build (default: the project's logs). */
  logsDir?: string;
  /** One line per build event (no live status). */
  plain?: boolean;
  /** Root directory host files are read under (tests: a fake host root); default "/". */
  hostRoot?: string;
}

/** Bad input for install, or a check to fix first (exit 2). */
export class InstallInputError extends InputError {}

type Io = { out: (s: string) => void; err: (s: string) => void };

/**
 * Run install; returns the exit status (see the file header) instead of exiting.
 * @param io where install's own lines go (the build driver writes to the process streams itself)
 */
export async function runInstall(
  args: InstallArgs,
  io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) },
): Promise<number> {
  try {
    return await install(args, io);
  } catch (e) {
    const code = exitCodeOf(e);
    if (code === null) throw e;
    io.err(errorLine((e as Error).message));
    return code;
  }
}

async function install(args: InstallArgs, io: Io): Promise<number> {
  const [path, fs, { loadVariants }, { chooseVariant }, { resolveBackend }, pre, { wrap }, { REPO_ROOT }, { formatName, parseName }, { ENV_PACKAGE }] =
    await Promise.all([
      import("node:path"),
      import("node:fs"),
      import("../variant-source.ts"),
      import("./doctor.ts"),
      import("../driver/backend.ts"),
      import("../preflight/checks.ts"),
      import("../text.ts"),
      import("../paths.ts"),
      import("../naming.ts"),
      import("../catalog/packages.ts"),
    ]);
  const width = terminalWidth();
  const say = (text: string, indent = "", hang?: string) => io.out(wrap(text, width, { indent, hang }) + "\n");
  const root = args.hostRoot ?? "/";
  const project = await loadVariants(args.matrix);
  const chosen = await chooseVariant({ ...args, package: args.package ?? DEFAULT_PACKAGE }, project);
  const variant = project.variants.find((v) => v.name === chosen.name);
  if (!variant) throw new InstallInputError(`unknown variant "${chosen.name}" (variant-matrix list names them)`);
  // A name the user recognises: the package's (./torch-env, ./llm-env, ./pytorch).
  const dir = path.resolve(args.dir ?? variant.package);
  const backend = await resolveBackend((args.backend ?? "auto") as never);
  const fileOf = (name: string, file: string) => (args.pkgsDir !== undefined ? path.resolve(args.pkgsDir, `${name}.nix`) : path.join(REPO_ROOT, file));
  const file = fileOf(variant.name, variant.file);
  // nixglhost is a passthru of the environment variant of the combination (pkgs/torch-env.nix).
  const parts = parseName(variant.name);
  const envName = parts ? formatName({ ...parts, package: ENV_PACKAGE as never }) : null;
  const env = project.variants.find((v) => v.name === envName);
  const envFile = env ? fileOf(env.name, env.file) : null;
  if (fs.existsSync(dir) && !fs.lstatSync(dir).isSymbolicLink())
    throw new InstallInputError(`--dir ${dir} exists and is not a link this command made: give another --dir, or move it away`);

  // 2. The checks.
  const host = { root, env: process.env, cpuinfoFile: args.cpuinfo };
  const results = pre.runChecks(host, {
    command: "install",
    variants: pre.checkedVariants([variant], project.variants),
    backend,
    pinnedNixpkgs: pre.evaluatesPinnedNixpkgs([file]),
    hostSystem: chosen.system,
  });
  const gpu = results.find((r) => r.id === "gpu-driver");
  // The route to the GPU driver: NixOS or a flox activation serving libcuda pass the check; a GPU driver elsewhere (its ✗)
  // is reached through nixglhost; no GPU driver at all (–) leaves the GPU checks to verify's "not checkable here".
  const throughNixglhost = variant.cuda !== null && gpu?.status === "fail";
  // An environment carries its own wrapped Pythons (withHostDriver); another variant is run through the nixglhost.
  const wrapped = throughNixglhost && variant.role === "env";
  const stops = results.filter((r) => r.status === "fail" && (r.blocking || r.conf !== undefined));
  const link = `${dir}-nixglhost`;
  const python = `${dir}/bin/python3`;

  if (args.dryRun) {
    say(`install ${variant.name} (${chosen.chosenBy}) at ${dir}, backend ${backend}, on ${chosen.system}: the steps (nothing is changed)`);
    say(`1. variant: ${variant.name}`, "  ", "     ");
    say(`2. checks (${stops.length ? `${stops.length} to fix first: install stops on them with exit 2` : "none stops install"}):`, "  ", "     ");
    io.out(pre.formatChecks(results, width) + "\n");
    say("3. build through the build driver: the plan and its estimate follow", "  ", "     ");
    say(
      wrapped
        ? `4. link ${dir} to the environment with its Pythons run through the pin's nix-gl-host (a GC root): nix-build ${file} -A withHostDriver -o ${dir}`
        : `4. link ${dir} to the output (a GC root: nix-store --realise OUT --add-root ${dir})`,
      "  ",
      "     ",
    );
    say(
      wrapped
        ? `5. the host's GPU driver: ${python} and ${dir}/bin/python run through nixglhost (step 4's output)`
        : throughNixglhost
          ? `5. the host's GPU driver through the environment's nixglhost: nix-build ${envFile ?? file} -A nixglhost -o ${link}`
          : `5. the GPU driver: ${variant.cuda === null ? "none needed (CPU-only)" : gpu?.status === "ok" ? "loaded directly (the GPU driver check passes)" : "no NVIDIA driver here: the GPU checks are skipped"}`,
      "  ",
      "     ",
    );
    say(`6. verify ${variant.name} through ${python}${throughNixglhost && !wrapped ? ` run by ${link}/bin/nixglhost` : ""}`, "  ", "     ");
    io.out("\n");
    const { buildMain } = await import("./build-main.ts");
    return buildMain(buildArgs(args, variant.name, backend, true, dir, path.dirname));
  }
  if (stops.length) {
    io.err(
      `install: ${stops.length} check(s) to fix before anything is built (variant-matrix doctor ${variant.name} runs them all):\n` +
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
  if (throughNixglhost) say(`→ GPU driver: the host's is outside /run/opengl-driver/lib: ${python} runs through the pin's nix-gl-host`, "  ", "    ");
  if (warned.length) io.err(`warning:\n${pre.formatChecks(warned, width)}\n`);

  // 3. The build (cached variants are not built again).
  const { buildMain } = await import("./build-main.ts");
  const built = await buildMain(buildArgs(args, variant.name, backend, false, dir, path.dirname));
  if (built !== 0) return built;
  const outDir = backend === "nix" ? path.dirname(dir) : REPO_ROOT;
  const result = path.join(outDir, `result-${variant.name}`);
  let out: string;
  try {
    out = fs.realpathSync(result);
  } catch {
    throw new InstallInputError(`the build left no ${result}: nothing to link at ${dir}`);
  }

  // 4. DIR as a GC root of the output.
  const { spawnSync } = await import("node:child_process");
  const nix = (argv: string[]) => {
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", env: process.env });
    if (r.status !== 0) throw new InstallInputError(`${argv.join(" ")} failed (exit ${r.status ?? r.error?.message}): ${(r.stderr ?? "").trim().split("\n").slice(-3).join(" | ")}`);
  };
  const gaveNoNixglhost = (e: unknown) =>
    // Whether each catalog pin carries nix-gl-host was never read: a pin without it fails here, so say what is left.
    new InstallInputError(
      `${(e as Error).message}\n${variant.name} is built, but its nixpkgs gave no nixglhost: run it through flox ` +
        "(`flox activate`, dev mode) or on NixOS (docs/gpu-driver.md)",
    );
  if (wrapped) {
    // 4 and 5 as one: DIR is the environment with its Pythons wrapped, a Nix output (nix-build -o makes DIR a GC root).
    try {
      nix(["nix-build", file, "-A", "withHostDriver", "-o", dir]);
    } catch (e) {
      throw gaveNoNixglhost(e);
    }
    say(`linked ${dir} -> ${fs.realpathSync(dir)} (a GC root): ${out} with bin/python3 and bin/python run through the pin's nix-gl-host`);
  } else {
    nix(["nix-store", "--realise", out, "--add-root", dir, "--indirect"]);
    say(`linked ${dir} -> ${out} (a GC root)`);
  }

  // 5. The route to the host's GPU driver for a variant with no python of its own.
  let hostDriver: string | undefined;
  if (throughNixglhost && !wrapped) {
    if (!envFile) throw new InstallInputError(`${variant.name} runs on this host only through nixglhost, which its environment variant carries, and the matrix has none (add "torch-env" to packages)`);
    try {
      nix(["nix-build", envFile, "-A", "nixglhost", "-o", link]);
    } catch (e) {
      throw gaveNoNixglhost(e);
    }
    hostDriver = `${link}/bin/nixglhost`;
    say(`the host's GPU driver through ${hostDriver} (the environment's nix-gl-host)`);
  }

  // 6. verify through DIR's python; its report as data for the one closing line.
  const { runVerify } = await import("./verify.ts");
  let json = "";
  const code = await runVerify(
    {
      name: variant.name,
      python: dir,
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
  const report = JSON.parse(json) as import("./verify.ts").VerifyReport;
  for (const c of report.checks.filter((x) => x.ok === false)) say(`✗ ${c.promise}: expected ${c.expected}, found ${c.found}`, "  ", "    ");
  // One line, never wrapped: the last line of the run says what was installed and what held.
  io.out(closingLine(python, report, variant) + "\n");
  return code;
}

/** The build driver's arguments for install's one variant; the nix backend's result link goes beside DIR. */
function buildArgs(args: InstallArgs, name: string, backend: string, dryRun: boolean, dir: string, dirname: (p: string) => string) {
  return {
    names: [name],
    backend: backend as never,
    dryRun,
    pkgsDir: args.pkgsDir,
    matrix: args.matrix,
    logsDir: args.logsDir,
    plain: args.plain,
    outDir: backend === "nix" ? dirname(dir) : undefined,
    retries: 0,
  };
}

/**
 * The line install ends with: the python's path, what it is (torch, capabilities, ISA) and how many promises held on
 * which GPU. Pure.
 */
export function closingLine(
  python: string,
  report: Pick<import("./verify.ts").VerifyReport, "name" | "checks">,
  variant: { torchVersion: string; cudaCapabilities: readonly string[]; isa: string },
): string {
  const held = report.checks.filter((c) => c.ok === true).length;
  const gpus = report.checks.filter((c) => /^GPU .* runs this variant's code$/.test(c.promise) && c.ok === true).map((c) => c.promise.replace(/^GPU (.*) runs this variant's code$/, "$1"));
  const what = `torch ${variant.torchVersion}, ${variant.cudaCapabilities.length ? `capabilities ${variant.cudaCapabilities.join(" ")}` : "CPU-only"}, ISA ${variant.isa}`;
  return `${python}: ${report.name} (${what}): ${held} of ${report.checks.length} promises hold${gpus.length ? ` on ${gpus.join(", ")}` : ", no GPU checked"}`;
}

/** The yargs command module; generator/cli.ts registers it. Sets `process.exitCode` (0, 1 or 2, see above). */
export const installCommand: CommandModule<object, InstallArgs> = {
  command: "install [name]",
  describe: "detect's pick (or NAME) for this host: check, build, link at --dir, run through the host's GPU driver and verify on the GPU",
  builder: (y: Argv<object>) =>
    y
      .positional("name", { type: "string", describe: "variant name (default: detect's pick for this host)" })
      .option("dir", { type: "string", describe: "where the environment is linked (a GC root): DIR/bin/python3 (default ./PACKAGE: ./torch-env, ./llm-env)" })
      .option("dry-run", { type: "boolean", describe: "print the steps, the checks and the build's plan with its estimate; change nothing" })
      .option("backend", { type: "string", choices: BACKEND_CHOICES, default: "auto", describe: "flox: flox build; nix: nix-build; auto: flox if on PATH" })
      .option("package", { type: "string", default: DEFAULT_PACKAGE, describe: `package detect picks for when NAME is not given (default ${DEFAULT_PACKAGE}; NAME-env for an environment of matrix.ts)` })
      .option("cpuinfo", { type: "string", describe: "read this recorded /proc/cpuinfo (or recorded host directory) for detect's pick and verify" })
      .option("nvidia-smi", { type: "string", describe: "read this recorded nvidia-smi output for detect's pick and verify" })
      .option("machine", { type: "string", describe: "machine as `uname -m` prints it: x86_64 | aarch64" })
      .option("matrix", { type: "string", describe: "matrix file (default: matrix.ts at the repository root)" })
      .option("pkgs-dir", { type: "string", describe: "take each variant's file from DIR/NAME.nix instead of .flox/pkgs (as build --pkgs-dir)" })
      .option("logs-dir", { type: "string", describe: "logs root of the build (default: logs in the project root)" })
      .option("plain", { type: "boolean", describe: "one line per build event (no live status)" })
      .option("host-root", { type: "string", hidden: true, describe: "read host files under this root (tests)" }) as Argv<InstallArgs>,
  handler: async (argv: ArgumentsCamelCase<InstallArgs>) => {
    process.exitCode = await runInstall(argv);
  },
};
