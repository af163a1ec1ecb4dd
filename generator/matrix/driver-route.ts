/**
 * How a variant reaches the host's GPU driver: the variants as the preflight checks see them, and the routes (NixOS,
 * nixglhost from the environment variant, flox) that doctor's fix, verify's driver cause and `explain` print. Pure over
 * a variant and the catalog's machine facts, so it sits below the stages: preflight/checks.ts re-exports it, and
 * `explain` (model/variant-facts.ts) reads these lines without the checks' questions to the host, host readers and process module.
 */
import { basename } from "node:path";
// The machine facts unparsed (catalog/lib/machines.ts): `explain` reads these lines without loading zod.
import { builtInMachines } from "../catalog/lib/machines.ts";
import { formatName, parseName } from "./naming.ts";
import { ENV_PACKAGE } from "../catalog/lib/packages.ts";
import type { Variant } from "./schema.ts";

/** A variant as the checks need it. */
export type CheckedVariant = Pick<Variant, "name" | "cuda" | "package" | "file"> & {
  system: string;
  /** The derivation's requiredSystemFeatures (big-parallel, gccarch-…). */
  requiredSystemFeatures: readonly string[];
  /** The file of the environment variant of its combination (torch-env-…), which carries nixglhost; when the matrix has it. */
  envFile?: string;
};

/** The nix-build line that gives a CUDA environment variant's nixglhost (pkgs/torch-env.nix passthru). */
function nixglhostBuildLine(v: Pick<CheckedVariant, "file" | "envFile">): string {
  return `nix-build ${v.envFile ?? v.file} -A nixglhost -o result-nixglhost`;
}

/** The nix-build line that links a CUDA environment variant with its Pythons run through nixglhost (pkgs/host-driver.nix). */
export function withHostDriverLine(v: Pick<CheckedVariant, "file" | "envFile">): string {
  return `nix-build ${v.envFile ?? v.file} -A withHostDriver -o torch-env`;
}

/**
 * Whether `v` reaches a GPU driver outside NixOS through nixglhost, the route `install` takes itself: a CUDA variant
 * whose combination has an environment variant in the matrix (pkgs/torch-env.nix carries `nixglhost` and
 * `withHostDriver`).
 */
export function carriesNixglhost(v: Pick<CheckedVariant, "cuda" | "envFile">): boolean {
  return v.cuda !== null && v.envFile !== undefined;
}

/**
 * The note of a passing GPU driver check on the nixglhost route: the route and its command, the one `install` runs.
 * Pure; doctor's live check and a recorded host's verdict (recorded-host.ts) say it alike.
 */
export function nixglhostRouteNote(v: Pick<CheckedVariant, "file" | "envFile">): string {
  return `reached through nixglhost, which the environment variant carries: \`variant-matrix install\` takes this route itself (\`${withHostDriverLine(v)}\` links torch-env, whose bin/python3 runs through it)`;
}

/**
 * The ways to run on a non-NixOS host, each with its command, for `program` (default: the python3 of the environment
 * variant of the combination, which is what holds an interpreter).
 */
export function driverRouteLines(
  v: Pick<CheckedVariant, "file" | "envFile" | "name">,
  program = `result-${v.envFile ? basename(v.envFile, ".nix") : v.name}/bin/python3`,
): string[] {
  const nixglhost = builtInMachines.driverRoutes.find((r) => r.id === "nixglhost")!;
  const flox = builtInMachines.driverRoutes.find((r) => r.id === "flox")!;
  return [
    `nixglhost (numtide's nix-gl-host, carried by the environment): \`${withHostDriverLine(v)}\` links torch-env, whose bin/python3 runs through it (what \`variant-matrix install\` does); ` +
      `for another program, \`${nixglhostBuildLine(v)}\`, then \`result-nixglhost/bin/${nixglhost.command.replace("PROGRAM", program)}\``,
    `flox: ${flox.command.replace("PROGRAM", "python3")} (cuda-detection, on by default, serves the host's libcuda through ld-floxlib; not in \`flox activate -m run\`)`,
    "NixOS with hardware.nvidia: /run/opengl-driver/lib is there",
  ];
}

/**
 * Checked variants of `variants` (schema Variant or build driver targets), each with the file of the environment variant of
 * its combination when the matrix has one (it carries nixglhost).
 */
export function checkedVariants(
  variants: readonly { name: string; system: string; cuda: string | null; package: string; requiredSystemFeatures?: readonly string[]; file: string }[],
  all: readonly { name: string; file: string }[] = variants,
): CheckedVariant[] {
  const files = new Map(all.map((v) => [v.name, v.file]));
  return variants.map((v) => {
    const parts = parseName(v.name);
    const env = parts ? formatName({ ...parts, package: ENV_PACKAGE as never }) : null;
    return {
      name: v.name,
      system: v.system,
      cuda: v.cuda,
      package: v.package,
      requiredSystemFeatures: [...(v.requiredSystemFeatures ?? [])],
      file: v.file,
      envFile: env !== null ? files.get(env) : undefined,
    };
  });
}

/**
 * How a variant finds the host's GPU driver, for `explain`: null for a CPU variant; else NixOS natively, and elsewhere
 * nixglhost from the environment variant of its combination (pkgs/torch-env.nix passthru `nixglhost`) or flox.
 */
export function hostDriverRoute(v: CheckedVariant): { summary: string; routes: string[] } | null {
  if (v.cuda === null) return null;
  return {
    summary:
      `libcuda.so.1 from ${builtInMachines.nixosDriverLib.dir} (NixOS); elsewhere through nixglhost ` +
      `(${nixglhostBuildLine(v)}) or \`flox activate\` (cuda-detection): docs/gpu-driver.md`,
    routes: driverRouteLines(v),
  };
}
