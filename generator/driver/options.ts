/**
 * The options of `build` as the command hands them to build-main.ts, and its usage error. A module of its own so
 * that the command (yargs) and the work (build-main) both import it and not each other.
 */
import type { PackageName } from "../constants.ts";
import { InputError } from "../errors.ts";
import type { Variant } from "../schema.ts";
import type { BackendChoice } from "./backend.ts";

/** Parsed options of `build`. */
export interface BuildArgs {
  names?: string[];
  filter?: string[];
  package?: PackageName;
  dryRun?: boolean;
  json?: boolean;
  backend?: BackendChoice;
  root?: string;
  pkgsDir?: string;
  outDir?: string;
  builders?: string;
  maxJobs?: number;
  copyTo?: string;
  substituters?: string;
  cores?: number;
  jobs?: number;
  retries?: number;
  failFast?: boolean;
  force?: boolean;
  /** After each variant builds, build its static check (tests.static of pkgs/checks.nix). */
  verify?: boolean;
  /** Also its GPU check (tests.gpuCheck, requiredSystemFeatures = [ "cuda" ]: a local or remote builder with that feature). */
  verifyGpu?: boolean;
  /** Dry run: also instantiate every file to ask the store what is built (may fetch nixpkgs: network). */
  probeStore?: boolean;
  /** Skip variants whose outputs a substituter already holds (nix-fast-build's --skip-cached). */
  skipCached?: boolean;
  report?: string;
  logsDir?: string;
  nixOption?: string[];
  plain?: boolean;
  killGrace?: number;
  /** matrix file (default: ROOT/matrix.ts). */
  matrix?: string;
  /** Injected variant list (tests, or a caller that already expanded the matrix). */
  variants?: readonly Variant[];
}

/** A usage error: printed without a stack, exit code 2. */
export class UsageError extends InputError {}

