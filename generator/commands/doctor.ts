/**
 * `variant-matrix doctor [NAME]`: is this host ready to build and run NAME (default: the variant `detect` picks for
 * it)? One line per check of generator/preflight/checks.ts, ✓ / ✗ / –, each ✗ with its exact fix (the convention of
 * `brew doctor` and `flutter doctor`).
 *
 *   doctor [NAME] [--package P] [--backend auto|flox|nix] [--org ORG] [--json]
 *          [--cpuinfo FILE] [--nvidia-smi FILE] [--machine ARCH] [--matrix FILE]
 *
 * Exit status: 0 every check that applies passes; 1 one fails; 2 bad input (an unknown NAME, a host file that cannot
 * be read, an invalid matrix, no variant for this host, generated files that do not say what the matrix gives now).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { dirname } from "node:path";
import { InputError, withExitCode } from "../errors.ts";
import { copyableCommand, runOf, terminalWidth, type Io } from "./shared.ts";
import { shown } from "../matrix/suggest.ts";
import { DEFAULT_PACKAGE, hostOptions, hostRootOption, matrixOption, nixOptions, outputOptions, packagePickOption, type ArgsOf, type OptionTypes } from "./options.ts";

/** The positional of `doctor` (and of `install`): the variant to check. */
export const namePositional = { name: { type: "string", describe: "variant name (default: detect's pick for this host)" } } as const;

/** The options of `doctor` (yargs), each group defined once in options.ts. */
const doctorOptions = {
  // The same default as detect's, so that doctor checks what detect just recommended.
  package: {
    ...packagePickOption.package,
    describe: `package detect picks for when NAME is not given (default ${DEFAULT_PACKAGE}, as detect; NAME-env for an environment of matrix.ts)`,
  },
  backend: { ...nixOptions.backend, describe: "the backend you will build with (auto: flox if on PATH)" },
  org: { type: "string", describe: "Flox organisation you will `publish --org` to: also checks `flox auth status`" },
  json: { ...outputOptions.json, describe: "print the checks as JSON" },
  ...hostOptions,
  ...matrixOption,
  ...hostRootOption,
} as const;

/** Arguments of `doctor` as yargs infers them from its positional and options (each may be left out). */
export type DoctorArgs = Partial<ArgsOf<typeof namePositional & typeof doctorOptions>>;

/** Bad input for doctor (exit 2). */
export class DoctorInputError extends InputError {}

/**
 * Run doctor: choose the variant, run the checks against this host, print. Returns the exit status.
 * @param io where to write (main's run.io; tests hand in recorders)
 */
export async function runDoctor(args: DoctorArgs, io: Io): Promise<number> {
  return withExitCode(io.err, () => doctor(args, io), "doctor: ");
}

async function doctor(args: DoctorArgs, io: Pick<Io, "out" | "columns">): Promise<number> {
  const [{ loadVariants }, { resolveBackend }, pre, { wrap }, { chooseVariant, isRecordedHost }] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("../driver/backend.ts"),
    import("../preflight/checks.ts"),
    import("../text.ts"),
    import("../detect/choose.ts"),
  ]);
  const root = args.hostRoot ?? "/";
  const project = await loadVariants(args.matrix);
  const host = { name: args.name, package: args.package, cpuinfo: args.cpuinfo, nvidiaSmi: args["nvidia-smi"], machine: args.machine, mem: args.mem, hostRoot: args.hostRoot };
  const { name, chosenBy, system } = await chooseVariant(host, project);
  const variant = project.variants.find((v) => v.name === name);
  if (!variant) throw new DoctorInputError(`unknown variant ${shown(name)} (variant-matrix list names them)`);
  // What doctor checks must be what install would build, as detect and install require: the files generated beside
  // the matrix say what it gives now (generate/generated-state.ts, the one comparison).
  if (project.project) (await import("../generate/generated-state.ts")).assertGeneratedFor(project.project, dirname(project.project.matrixFile), "doctor", [variant.name]);
  const backend = await resolveBackend(args.backend ?? "auto");
  const checked = pre.checkedVariants([variant], project.variants);
  const results = pre.runChecks(
    // The checks judge this machine (its Nix, its nix.conf): a recording's CPU (--cpuinfo without --host-root) is not
    // the one whose nix.conf a system-features line would go to, so its own /proc/cpuinfo decides what it can run.
    { root, env: process.env, cpuinfoFile: isRecordedHost(host) ? undefined : args.cpuinfo },
    {
      command: "doctor",
      variants: checked,
      backend,
      pinnedNixpkgs: true,
      hostSystem: system,
      org: args.org,
      teamCaches: project.caches,
    },
  );
  // A recording (--cpuinfo/--nvidia-smi, no --host-root): its GPU driver from the recording, the rest "this machine".
  if (isRecordedHost(host)) await (await import("../preflight/recorded-host.ts")).judgeRecordedHost(host, results, checked[0]!);
  const failed = results.filter((r) => r.status === "fail");
  const gpu = results.find((r) => r.id === "gpu-driver");
  if (args.json) {
    io.out(JSON.stringify({ name, chosenBy, system, backend, checks: results, ok: failed.length === 0 }, null, 2) + "\n");
    return failed.length ? 1 : 0;
  }
  const width = terminalWidth(io);
  const lines = [
    wrap(`doctor: ${name} (${chosenBy}), backend ${backend}, on ${system}`, width),
    pre.formatChecks(results, width),
    "",
    wrap(
      failed.length
        ? `${failed.length} check(s) failed: apply the fix shown under each ✗, then run doctor again.`
        : `Ready: install it with \`${copyableCommand(["install", name], { matrix: args.matrix })}\` (or build it with \`${copyableCommand(["build", name], { matrix: args.matrix })}\`)` +
            (variant.cuda === null || gpu?.status !== "ok"
              ? "; on a GPU host run it as the GPU driver line says."
              : gpu.route === "nixglhost"
                ? "; install runs it through nixglhost (the GPU driver line)."
                : "."),
      width,
    ),
  ];
  io.out(lines.join("\n") + "\n");
  return failed.length ? 1 : 0;
}

/** The yargs command module; generator/cli.ts registers it. Sets its run's exit status (0, 1 or 2, see above). */
export const doctorCommand: CommandModule<object, OptionTypes<typeof namePositional & typeof doctorOptions>> = {
  command: "doctor [name]",
  describe: "Check this host for a variant (default: the one detect picks): Nix, system features, store space, caches, flox, the GPU driver; each ✗ with its fix",
  builder: (y: Argv<object>) => y.positional("name", namePositional.name).options(doctorOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof namePositional & typeof doctorOptions>>) => {
    const run = runOf(argv);
    run.exitCode = await runDoctor(argv, run.io);
  },
};
