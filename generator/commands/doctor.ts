/**
 * `variant-matrix doctor [NAME]`: is this host ready to build and run NAME (default: the variant `detect` picks for
 * it)? One line per check of generator/preflight/checks.ts, ✓ / ✗ / –, each ✗ with its exact fix (the convention of
 * `brew doctor` and `flutter doctor`).
 *
 *   doctor [NAME] [--package P] [--backend auto|flox|nix] [--org ORG] [--json]
 *          [--cpuinfo FILE] [--nvidia-smi FILE] [--machine ARCH] [--matrix FILE]
 *
 * Exit status: 0 every check that applies passes; 1 one fails; 2 bad input (an unknown NAME, a host file that cannot
 * be read, an invalid matrix, no variant for this host).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { InputError, withExitCode } from "../errors.ts";
import { copyableCommand, runOf, terminalWidth, type Io } from "./shared.ts";
import { shown } from "../matrix/suggest.ts";
import { DEFAULT_PACKAGE, hostOptions, hostRootOption, matrixOption, nixOptions, outputOptions, packagePickOption, type ArgsOf, type OptionTypes } from "./options.ts";
import type { Excluded, Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { HostInfo, ReadHostOptions } from "../detect/read-host.ts";
import type { CheckResult } from "../preflight/checks.ts";

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

/** The variant a command checks: the one named, or detect's pick for the host (and how it was chosen). */
export interface ChosenVariant {
  name: string;
  /** "given", "picked by detect for this host" or "… for the recorded host (FILE)". */
  chosenBy: string;
  /** The host's Nix system ("x86_64-linux"): --machine's, the modelled host's, or this machine's. */
  system: string;
}

/**
 * NAME, or the variant `detect` picks for this host (`--package`, default torch-env as detect's): for doctor and
 * install. A modelled host (`hostRoot` other than "/") is read under its root (cpuinfo) and through the nvidia-smi on
 * PATH; otherwise `--cpuinfo`/`--nvidia-smi`/`--machine` or this machine, as detect reads them.
 * @throws InputError (DoctorInputError, UsageError, host file errors) when detect picks nothing, naming detect's
 *   problems and what to add to matrix.ts
 */
export async function chooseVariant(
  args: Pick<DoctorArgs, "name" | "package" | "cpuinfo" | "nvidia-smi" | "machine" | "hostRoot">,
  project: { variants: Variant[]; catalog: Catalog; excluded?: Excluded[] },
): Promise<ChosenVariant> {
  const [{ machineToSystem }, { recommend }, { parsePackage, checkEnvironment }, { hostSystem }, { readHostUnder }] = await Promise.all([
    import("../detect/read-host.ts"),
    import("../detect/recommend.ts"),
    import("./detect-options.ts"),
    import("../driver/backend.ts"),
    import("./detect-main.ts"),
  ]);
  if (args.name !== undefined) return { name: args.name, chosenBy: "given", system: args.machine ? machineToSystem(args.machine).system : hostSystem() };
  // A modelled host (--host-root): its cpuinfo under the root, its nvidia-smi on PATH; else detect's own reading.
  const host = await readHostUnder(args);
  const pkg = parsePackage(args.package);
  checkEnvironment(pkg, project.variants);
  const r = recommend(host, project.variants, project.catalog, { package: pkg, excluded: project.excluded });
  const name = r.variants[0] ?? r.cpuFallback ?? undefined;
  if (name === undefined) {
    const why = r.picks.flatMap((p) => [...p.problems, ...p.suggestions.map((x) => `to serve it: ${x}`)]);
    throw new DoctorInputError(`detect picks no ${pkg} variant for this host${why.length ? `: ${why.join("; ")}` : ""} (variant-matrix detect says why); or name one`);
  }
  // A recording (--cpuinfo/--nvidia-smi) is another host than this one: say which.
  const recorded = args.hostRoot === undefined && (args.cpuinfo !== undefined || args["nvidia-smi"] !== undefined);
  return { name, chosenBy: recorded ? `picked by detect for the recorded host (${args.cpuinfo ?? args["nvidia-smi"]})` : "picked by detect for this host", system: host.system };
}

/**
 * With a recorded host (--cpuinfo, --nvidia-smi, no --host-root), each check says whose fact it is: the GPU driver's
 * comes from the recording (its nvidia-smi output and driver), with the route that host takes (its driver outside
 * /run/opengl-driver/lib, as on every host but NixOS: nixglhost), and the checks only this machine can answer (Nix,
 * the store, system features) say "this machine". Changes `results` in place (doctor's and install's checks).
 * @returns the recorded host, as detect reads it
 * @throws HostFileError for a recording that cannot be read
 */
export async function judgeRecordedHost(args: ReadHostOptions, results: CheckResult[], cuda: boolean): Promise<HostInfo> {
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
  return host;
}

async function doctor(args: DoctorArgs, io: Pick<Io, "out" | "columns">): Promise<number> {
  const [{ loadVariants }, { resolveBackend }, pre, { wrap }] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("../driver/backend.ts"),
    import("../preflight/checks.ts"),
    import("../text.ts"),
  ]);
  const root = args.hostRoot ?? "/";
  const project = await loadVariants(args.matrix);
  const { name, chosenBy, system } = await chooseVariant(args, project);
  const variant = project.variants.find((v) => v.name === name);
  if (!variant) throw new DoctorInputError(`unknown variant ${shown(name)} (variant-matrix list names them)`);
  const backend = await resolveBackend(args.backend ?? "auto");
  const results = pre.runChecks(
    { root, env: process.env, cpuinfoFile: args.cpuinfo },
    {
      command: "doctor",
      variants: pre.checkedVariants([variant], project.variants),
      backend,
      pinnedNixpkgs: true,
      hostSystem: system,
      org: args.org,
      teamCaches: project.caches,
    },
  );
  // A recording (--cpuinfo/--nvidia-smi, no --host-root): its GPU driver from the recording, the rest "this machine".
  if (args.hostRoot === undefined && (args.cpuinfo !== undefined || args["nvidia-smi"] !== undefined))
    await judgeRecordedHost({ cpuinfo: args.cpuinfo, nvidiaSmi: args["nvidia-smi"], machine: args.machine }, results, variant.cuda !== null);
  const failed = results.filter((r) => r.status === "fail");
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
            (variant.cuda !== null && results.find((r) => r.id === "gpu-driver")?.status === "ok" ? "." : "; on a GPU host run it as the GPU driver line says."),
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
