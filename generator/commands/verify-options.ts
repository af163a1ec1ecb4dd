/**
 * `variant-matrix verify`'s positional and options, shared by the command module (commands/verify.ts) and its work
 * (commands/verify-main.ts), which takes the arguments yargs infers from them.
 */
import { hostOptions, hostRootOption, installLineOptions, matrixOption, outputOptions, type ArgsOf } from "./options.ts";

/** The positional of `verify`: the variant whose promise is checked. */
export const verifyPositional = {
  name: {
    type: "string",
    describe: "variant name (default: the one detect picks for this host: torch-env when the environment holds all of its packages, else the package it holds)",
  },
} as const;

/** The options of `verify` (yargs), the shared groups defined once in options.ts. */
export const verifyOptions = {
  python: { type: "string", describe: "interpreter, environment directory (bin/python3) or result-* link (default: python3 on PATH)" },
  json: { ...outputOptions.json, describe: "print the report as JSON" },
  probe: { type: "string", describe: "replay a recorded probe JSON instead of running one" },
  proof: {
    type: "string",
    describe: "the variant's proof (its static check's output: probe.json, report.txt): judge the device code from it and run only the GPU part here",
  },
  gpu: { type: "boolean", default: true, describe: "run the GPU checks (matmul, torchaudio CUDA kernels); --no-gpu skips them" },
  ...hostOptions,
  ...matrixOption,
  ...installLineOptions,
  // "" (bare): nixglhost from PATH; else the path to it (docs/gpu-driver.md).
  "host-driver": {
    type: "string",
    describe: "run the probe through the host's GPU driver: nixglhost (numtide's nix-gl-host) from PATH, or give its path",
  },
  ...hostRootOption,
} as const;

/**
 * Arguments of `verify` as yargs infers them from its positional and options (each may be left out). `hostDriver`: "" runs the probe through `nixglhost` from PATH, else through this
 * path to it.
 */
export type VerifyArgs = Partial<ArgsOf<typeof verifyPositional & typeof verifyOptions>>;
