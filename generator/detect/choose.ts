/**
 * Which variant a command works on when it checks or installs one for a host (doctor, install): the one named, or the
 * variant detect picks for the host (recommend.ts), read as detect reads it (`--cpuinfo`/`--nvidia-smi`/`--machine`
 * or this machine), or under a modelled root (`--host-root`, tests). With the checks of `--package` that detect, doctor
 * and install share; and detect's own answer (recommendForHost). A library module: it reads the host and prints nothing. Its imports are static: detect-main.ts
 * imports it statically, and the host errors it passes on (read-host.ts) must be of the caller's errors.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import { InputError, UsageError } from "../errors.ts";
import { DEFAULT_PACKAGE } from "../constants.ts";
import { PACKAGES, type PackageName } from "../catalog/lib/packages.ts";
import { environmentOf } from "../matrix/naming.ts";
import type { Excluded, Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import { hostFromTexts, machineToSystem, readHost, readMemory, type HostInfo } from "../host/read-host.ts";
import { recommend, type Recommendation } from "./recommend.ts";
import { assertGeneratedFor } from "../generate/generated-state.ts";
import type { VariantSource } from "../matrix/variant-source.ts";
import type { Prefer } from "../constants.ts";
import { runOn } from "../preflight/host-root.ts";
import { hostSystem } from "../driver/backend.ts";

/**
 * Check `--package` against PACKAGES (undefined: DEFAULT_PACKAGE).
 * @throws UsageError naming the allowed values.
 */
export function parsePackage(value: string | undefined): PackageName {
  const v = value ?? DEFAULT_PACKAGE;
  // A named environment of matrix.ts (`llm-env`) is checked against the matrix once it is loaded (checkEnvironment).
  if (!(PACKAGES as readonly string[]).includes(v) && environmentOf(v) === null)
    throw new UsageError(`--package: unknown package "${v}"; allowed values: ${PACKAGES.join(", ")}, or NAME-env for an environment of matrix.ts`);
  return v as PackageName;
}

/**
 * A `--package NAME-env` that is no environment of the matrix (matrix.ts `environments`).
 * @throws UsageError naming the environments the matrix has.
 */
export function checkEnvironment(pkg: PackageName, variants: readonly Pick<Variant, "package" | "role">[]): void {
  if ((PACKAGES as readonly string[]).includes(pkg)) return;
  const envs = [...new Set(variants.filter((x) => x.role === "env").map((x) => x.package))];
  if (!envs.includes(pkg))
    throw new UsageError(
      `--package: the matrix has no environment "${pkg}"; its environments: ${envs.join(", ") || "(none)"} (matrix.ts environments)`,
    );
}

/** The variant a command checks: the one named, or detect's pick for the host (and how it was chosen). */
export interface ChosenVariant {
  name: string;
  /** "given", "picked by detect for this host" or "… for the recorded host (FILE)". */
  chosenBy: string;
  /** The host's Nix system ("x86_64-linux"): --machine's, the modelled host's, or this machine's. */
  system: string;
}

/** What chooseVariant reads: NAME, the package detect picks for, and the host (a recording, a modelled root, or this machine). */
export interface ChooseOptions {
  name?: string;
  /** `--package` (default DEFAULT_PACKAGE). */
  package?: string;
  cpuinfo?: string;
  nvidiaSmi?: string;
  machine?: string;
  /** `--mem`: the host's memory in GiB (read-host.ts readMemory). */
  mem?: number;
  /** A modelled host's root (`--host-root`, tests); default "/". */
  hostRoot?: string;
}

/** Whether the options describe a recorded host (a recording without a modelled root): another host than this one. */
export function isRecordedHost(o: Pick<ChooseOptions, "cpuinfo" | "nvidiaSmi" | "hostRoot">): boolean {
  return o.hostRoot === undefined && (o.cpuinfo !== undefined || o.nvidiaSmi !== undefined);
}

/**
 * The host detect, doctor and install read: a modelled host when `hostRoot` (the hidden --host-root, tests) is a root
 * other than "/" holding proc/cpuinfo and no recording is given (its cpuinfo under the root, its `nvidia-smi` on PATH
 * under the root), else detect's own reading (read-host.ts readHost: the recordings, else this machine).
 * @throws HostInputError, HostFileError or MachineError as readHost does
 */
export async function readHostUnder(o: Pick<ChooseOptions, "hostRoot" | "cpuinfo" | "nvidiaSmi" | "machine" | "mem">): Promise<HostInfo> {
  const root = o.hostRoot ?? "/";
  const rootCpuinfo = join(root, "proc/cpuinfo");
  if (!(root !== "/" && o.cpuinfo === undefined && o.nvidiaSmi === undefined && existsSync(rootCpuinfo)))
    return readHost({ cpuinfo: o.cpuinfo, nvidiaSmi: o.nvidiaSmi, machine: o.machine, mem: o.mem });
  const smi = runOn({ root, env: process.env }, ["nvidia-smi", "--query-gpu=compute_cap,name,driver_version", "--format=csv,noheader"]);
  return hostFromTexts({
    cpuinfo: readFileSync(rootCpuinfo, "utf8"),
    cpuinfoFile: rootCpuinfo,
    nvidiaSmi: smi.code === 0 ? smi.stdout : null,
    nvidiaSmiFile: "nvidia-smi",
    gpuAbsentReason: smi.code === 0 ? null : "no NVIDIA GPU: nvidia-smi did not answer",
    machine: o.machine ?? null,
    machineSource: o.machine ? "--machine" : rootCpuinfo,
    memory: await readMemory({ mem: o.mem, cpuinfo: rootCpuinfo }),
  });
}

/**
 * NAME, or the variant `detect` picks for the host (`package`, default torch-env as detect's): for doctor and
 * install (readHostUnder says which host is read).
 * @throws InputError (UsageError, host file errors) when detect picks nothing, naming detect's problems and what to
 *   add to matrix.ts
 */
export async function chooseVariant(
  o: ChooseOptions,
  project: { variants: Variant[]; catalog: Catalog; excluded?: Excluded[]; project?: { matrixFile: string } | null },
): Promise<ChosenVariant> {
  if (o.name !== undefined) return { name: o.name, chosenBy: "given", system: o.machine ? machineToSystem(o.machine).system : hostSystem() };
  const host = await readHostUnder(o);
  const pkg = parsePackage(o.package);
  checkEnvironment(pkg, project.variants);
  // The same waits detect ranks by: the host's capacity (recommend's default) and the project's earlier builds.
  const history = await projectHistory(project.project ? dirname(project.project.matrixFile) : REPO_ROOT);
  const r = recommend(host, project.variants, project.catalog, { package: pkg, excluded: project.excluded, history });
  const name = r.variants[0] ?? r.cpuFallback ?? undefined;
  if (name === undefined) {
    const why = r.picks.flatMap((p) => [...p.problems, ...p.suggestions.map((x) => `to serve it: ${x}`)]);
    throw new InputError(`detect picks no ${pkg} variant for this host${why.length ? `: ${why.join("; ")}` : ""} (variant-matrix detect says why); or name one`);
  }
  // A recording (--cpuinfo/--nvidia-smi) is another host than this one: say which.
  return {
    name,
    chosenBy: isRecordedHost(o) ? `picked by detect for the recorded host (${o.cpuinfo ?? o.nvidiaSmi})` : "picked by detect for this host",
    system: host.system,
  };
}

/**
 * The earlier builds of the project at `root` (its `logs/`, as `build` reads them: driver/report.ts
 * durationsFromReports), so that detect's, doctor's and install's waits are `build --dry-run`'s. A report left out is
 * one warning through `warn` (default: none printed; `build` says it).
 */
export async function projectHistory(root: string, warn?: (text: string) => void): Promise<Map<string, number>> {
  const { durationsFromReports, readEarlierReports } = await import("../driver/report.ts");
  return readEarlierReports((onSkip) => durationsFromReports(join(root, "logs"), onSkip), warn ?? (() => {}));
}

/**
 * detect's answer for its parsed options: the host read (a recording, a modelled root, or this machine), the variants
 * of `source` (default in the command: matrix.ts), the pick per GPU and the CPU fallback ranked by one wait (the
 * project's earlier builds; a report left out is one warning through `warn`), and the files generated beside the
 * matrix checked to say what it gives now, so that what detect names is what install would build.
 * @throws UsageError for a bad --package; InputError for a host file that cannot be read, an invalid matrix, or
 *   generated files out of date with it
 */
export async function recommendForHost(
  o: Omit<ChooseOptions, "name"> & { matrix?: string; prefer: Prefer },
  source: VariantSource,
  warn: (text: string) => void,
): Promise<Recommendation> {
  const pkg = parsePackage(o.package);
  const host = await readHostUnder(o);
  const project = await source(o.matrix);
  checkEnvironment(pkg, project.variants);
  // The earlier builds `build` and install estimate with (the logs beside the matrix): one wait for one pick.
  const history = await projectHistory(project.project ? dirname(project.project.matrixFile) : REPO_ROOT, warn);
  const r = recommend(host, project.variants, project.catalog, { package: pkg, excluded: project.excluded, prefer: o.prefer, history });
  const named = [...r.variants, ...(r.cpuFallback ? [r.cpuFallback] : [])];
  if (project.project) assertGeneratedFor(project.project, dirname(project.project.matrixFile), "detect", named);
  return r;
}
