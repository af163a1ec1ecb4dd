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
import { withExitCode } from "../errors.ts";
import { copyableCommand, runOf, terminalWidth, type Io } from "./shared.ts";
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

/**
 * Run doctor: its options to one call (detect/doctor.ts doctorReport), the report printed. Returns the exit status
 * (0 every check that applies passes, 1 one fails, 2 bad input).
 * @param io where to write (main's run.io; tests hand in recorders)
 */
export async function runDoctor(args: DoctorArgs, io: Io): Promise<number> {
  return withExitCode(io.err, () => doctor(args, io), "doctor: ");
}

async function doctor(args: DoctorArgs, io: Pick<Io, "out" | "columns">): Promise<number> {
  const [{ doctorReport }, { formatChecks }, { wrap }] = await Promise.all([import("../detect/doctor.ts"), import("../preflight/checks.ts"), import("../text.ts")]);
  const r = await doctorReport({ ...args, nvidiaSmi: args["nvidia-smi"] });
  if (args.json) {
    io.out(JSON.stringify({ name: r.name, chosenBy: r.chosenBy, system: r.system, backend: r.backend, checks: r.checks, ok: r.ok }, null, 2) + "\n");
    return r.ok ? 0 : 1;
  }
  const failed = r.checks.filter((c) => c.status === "fail");
  const gpu = r.checks.find((c) => c.id === "gpu-driver");
  const width = terminalWidth(io);
  const lines = [
    wrap(`doctor: ${r.name} (${r.chosenBy}), backend ${r.backend}, on ${r.system}`, width),
    formatChecks(r.checks, width),
    "",
    wrap(
      failed.length
        ? `${failed.length} check(s) failed: apply the fix shown under each ✗, then run doctor again.`
        : `Ready: install it with \`${copyableCommand(["install", r.name], { matrix: args.matrix })}\` (or build it with \`${copyableCommand(["build", r.name], { matrix: args.matrix })}\`)` +
            (r.cuda === null || gpu?.status !== "ok"
              ? "; on a GPU host run it as the GPU driver line says."
              : gpu.route === "nixglhost"
                ? "; install runs it through nixglhost (the GPU driver line)."
                : "."),
      width,
    ),
  ];
  io.out(lines.join("\n") + "\n");
  return r.ok ? 0 : 1;
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
