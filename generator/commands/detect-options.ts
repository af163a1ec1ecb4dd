/**
 * `variant-matrix detect`'s options and the check of --prefer, shared by the command module (commands/detect.ts)
 * and its work (commands/detect-main.ts); `--package`'s checks, which doctor and install share, are detect/choose.ts's.
 */
import { UsageError } from "../errors.ts";
import { PREFER_VALUES, type Prefer } from "../constants.ts";
import { hostOptions, hostRootOption, installLineOptions, matrixOption, outputOptions, packagePickOption, preferOption, type ArgsOf } from "./options.ts";

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
 * Check `--prefer` against PREFER_VALUES (yargs checks its choices; a caller of runDetect may not).
 * @throws UsageError naming the allowed values.
 */
export function parsePrefer(value: string | undefined): Prefer {
  const v = value ?? PREFER_VALUES[0];
  if (!(PREFER_VALUES as readonly string[]).includes(v)) throw new UsageError(`--prefer: unknown value "${v}"; allowed values: ${PREFER_VALUES.join(", ")}`);
  return v as Prefer;
}
