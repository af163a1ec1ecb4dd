/**
 * The options of `build` as the command hands them to driver/build.ts planBuild, and its usage error. A module of its
 * own so that the command (yargs) and the work (driver/build.ts) both import it and not each other.
 */
import type { PackageName } from "../catalog/lib/packages.ts";
import { UsageError } from "../errors.ts";
import type { Variant } from "../matrix/schema.ts";
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
  /**
   * After each variant builds, build its static check (tests.static of pkgs/checks.nix), whose output is the variant's
   * proof: default true (undefined counts as true); false (`--no-verify`) leaves the variants unproven, as the report
   * and the summary say.
   */
  verify?: boolean;
  /** Also its GPU check (tests.gpuCheck, requiredSystemFeatures = [ "cuda" ]: a local or remote builder with that feature). */
  verifyGpu?: boolean;
  /** Dry run: also instantiate every file to ask the store what is built (may fetch nixpkgs: network). */
  askStore?: boolean;
  /**
   * Seconds Nix may take to say what it would build and fetch (driver/ask-nix.ts): a dry run asks by default (20 s),
   * a build when given (install); 0 never asks (the cache model).
   */
  askNixTimeout?: number;
  /**
   * Seconds a real build's evaluation and questions to Nix before its first build may take, all under one deadline
   * (build.ts planBuild): stopped then with a line saying what was waited for. Default: `askNixTimeout` when given and
   * above 0, else EVAL_TIMEOUT_S (ask-nix.ts).
   */
  evalTimeout?: number;
  /** Skip variants whose outputs a substituter already holds (nix-fast-build's --skip-cached). */
  skipCached?: boolean;
  report?: string;
  logsDir?: string;
  nixOption?: string[];
  plain?: boolean;
  killGrace?: number;
  /** Seconds ssh waits for a remote builder to connect and answer (backend.ts withSshTimeouts). */
  connectTimeout?: number;
  /**
   * Root directory this machine's files are read under (the hidden --host-root: tests model a host): the preflight
   * checks' files and the /proc/cpuinfo whose gccarch features a dry run offers as a nix.conf line. Default "/".
   */
  hostRoot?: string;
  /** matrix file (default: ROOT/matrix.ts). */
  matrix?: string;
  /** Injected variant list (tests, or a caller that already expanded the matrix). */
  variants?: readonly Variant[];
  /** Dry run: every variant's command and reasons in full (otherwise what variants share is said once). */
  verbose?: boolean;
  /**
   * Dry run for another host than this machine (install --dry-run with a recording, --cpuinfo/--nvidia-smi): its Nix
   * system, logical CPUs and memory replace this machine's in the plan (the schedule's slots, the estimates' cores,
   * which variants need a remote builder), and the plan says so; the store stays this machine's (a recording holds
   * none), said in the same line. `memBytes` null: the recording holds no memory (no meminfo, no --mem), taken as not
   * limiting, said. `label` names the host ("the recorded host (FILE)").
   */
  forHost?: { system: string; cpus: number; label: string; memBytes: number | null; memSource: string };
  /** Dry run: the caller printed the host checks already (install's step 2): the plan says so instead of repeating them. */
  checksShown?: boolean;
}



/** `build`'s options resolved against the project root and this machine (paths absolute, numbers checked). */
export interface ResolvedBuildOptions {
  root: string;
  outDir: string;
  logsRoot: string;
  jobs: number | undefined;
  cores: number | undefined;
  retries: number;
  maxJobs: number | undefined;
  nixOptions: (readonly [string, string])[];
  backend: "flox" | "nix";
  matrixFile: string;
  /** Seconds ssh waits for a remote builder (backend.ts withSshTimeouts). */
  connectTimeoutS: number;
}

function positiveInt(name: string, v: number | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/** The largest `--ask-nix-timeout` in seconds: Node's timers hold at most 2^31 - 1 ms (a longer one fires at once). */
export const MAX_ASK_NIX_TIMEOUT_S = Math.floor((2 ** 31 - 1) / 1000);

/**
 * Resolve `a` (paths against `projectRoot` and the cwd, numbers checked, the backend chosen: auto → flox when on PATH).
 * @throws UsageError for a bad number or an option the flox backend does not take
 */
export async function resolveBuildOptions(a: BuildArgs, projectRoot: string, parseNixOptions: (s: string[] | undefined) => (readonly [string, string])[]): Promise<ResolvedBuildOptions> {
  const { resolve } = await import("node:path");
  const { resolveBackend } = await import("./backend.ts");
  const root = resolve(a.root ?? projectRoot);
  const outDir = a.outDir !== undefined ? resolve(a.outDir) : root;
  const cores = positiveInt("cores", a.cores, 1);
  if (a.askNixTimeout !== undefined && !(Number.isFinite(a.askNixTimeout) && a.askNixTimeout >= 0 && a.askNixTimeout <= MAX_ASK_NIX_TIMEOUT_S))
    throw new UsageError(
      `--ask-nix-timeout must be a number of seconds from 0 (0: do not ask Nix) to ${MAX_ASK_NIX_TIMEOUT_S} (about 24.8 days, the longest timer Node keeps), got ${a.askNixTimeout}`,
    );
  const maxJobs = a.maxJobs === undefined ? undefined : positiveInt("max-jobs", a.maxJobs, 0);
  const backend = await resolveBackend(a.backend ?? "auto");
  if (backend === "flox") {
    if (a.builders !== undefined || cores !== undefined || maxJobs !== undefined || a.substituters !== undefined)
      throw new UsageError(
        "--builders, --max-jobs, --substituter and --cores pass through to Nix with --backend nix only; flox build " +
          "takes none of them (set `builders` / `max-jobs` / `substituters` / `cores` in nix.conf for flox, or use --backend nix)",
      );
    if (outDir !== root) throw new UsageError("--out-dir works with --backend nix only: flox writes result-NAME in the project root");
  }
  return {
    root,
    outDir: backend === "flox" ? root : outDir,
    logsRoot: a.logsDir !== undefined ? resolve(a.logsDir) : resolve(root, "logs"),
    jobs: positiveInt("jobs", a.jobs, 1),
    cores,
    retries: positiveInt("retries", a.retries ?? 0, 0) ?? 0,
    maxJobs,
    nixOptions: [...parseNixOptions(a.nixOption), ...(a.substituters !== undefined ? [["substituters", a.substituters] as const] : [])],
    backend,
    matrixFile: a.matrix !== undefined ? resolve(a.matrix) : resolve(root, "matrix.ts"),
    connectTimeoutS: positiveInt("connect-timeout", a.connectTimeout ?? 30, 1) ?? 30,
  };
}
