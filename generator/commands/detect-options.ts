/**
 * `variant-matrix detect`'s options and their checks (--package, --prefer, a named environment), shared by the
 * command module (commands/detect.ts), its work (commands/detect-main.ts) and doctor, which picks as detect does.
 */
import { UsageError } from "../errors.ts";
import { PREFER_VALUES, type Prefer } from "../constants.ts";
import { PACKAGES, type PackageName } from "../catalog/packages.ts";
import { environmentOf } from "../matrix/naming.ts";
import type { Variant } from "../matrix/schema.ts";
import { DEFAULT_PACKAGE, hostOptions, hostRootOption, installLineOptions, matrixOption, outputOptions, packagePickOption, preferOption, type ArgsOf } from "./options.ts";

/** The options of `detect` (yargs), each group defined once in options.ts. */
export const detectOptions = {
  json: { ...outputOptions.json, describe: "print the recommendation as JSON" },
  ...packagePickOption,
  ...preferOption,
  ...hostOptions,
  ...matrixOption,
  ...installLineOptions,
  ...hostRootOption,
} as const;

/**
 * Arguments of `detect` as yargs infers them from its options (each may be left out: `--package` defaults to
 * torch-env, `--org` and `--substituter` shape the install line).
 */
export type DetectArgs = Partial<ArgsOf<typeof detectOptions>>;

/**
 * Check `--package` against PACKAGES.
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
 * Check `--prefer` against PREFER_VALUES (yargs checks its choices; a caller of runDetect may not).
 * @throws UsageError naming the allowed values.
 */
export function parsePrefer(value: string | undefined): Prefer {
  const v = value ?? PREFER_VALUES[0];
  if (!(PREFER_VALUES as readonly string[]).includes(v)) throw new UsageError(`--prefer: unknown value "${v}"; allowed values: ${PREFER_VALUES.join(", ")}`);
  return v as Prefer;
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

