/**
 * Backends: the exact command that builds one variant.
 *
 * - flox: `flox build NAME`, run in the project root; flox writes `ROOT/result-NAME`. flox build has no options
 *   for remote builders, cores, jobs or Nix settings, so `--builders`, `--cores` and `--nix-option` are not
 *   passed to it (configure them in nix.conf; see docs/building.md).
 * - nix: `nix-build FILE -o OUTDIR/result-NAME [--builders SPEC] [--max-jobs N] [--cores N] [--option K V]...`.
 *   `--builders @FILE` reads a Nix machines file; `--max-jobs 0` builds nothing locally, so every build goes to
 *   a remote builder (Nix manual, "Remote Builds"; nix.conf `builders`, `max-jobs`).
 *
 * Commands are argument arrays handed to the process without a shell.
 */
import { join } from "node:path";
import { findExecutable } from "../process.ts";
import type { NixOptions } from "./store.ts";
import { resultLinkName } from "../model/plan.ts";
import type { BuildTarget } from "./targets.ts";

import type { Backend, BackendChoice } from "../constants.ts";
export { BACKEND_CHOICES, type Backend, type BackendChoice } from "../constants.ts";

/** Options shared by every command of a run. */
export interface BackendOptions {
  backend: Backend;
  /** Project root: the working directory of `flox build`. */
  root: string;
  /** Where `result-NAME` links go (nix backend; flox always writes into `root`). */
  outDir: string;
  /** Nix `builders` spec (nix backend only), e.g. "ssh://big x86_64-linux - 32". */
  builders?: string;
  /** NIX_BUILD_CORES of each build (nix backend only). */
  cores?: number;
  /** NIX_BUILD_CORES of particular builds, by variant name, instead of `cores` (a package whose compile jobs need more memory: model/concurrency.ts coresForPackage). */
  coresByName?: Map<string, number>;
  /** Seconds ssh waits for a remote builder to connect and answer (withSshTimeouts); default 30. */
  connectTimeoutS?: number;
  /** Nix `max-jobs` of each nix-build (nix backend only); 0 = build nothing locally, only on remote builders. */
  maxJobs?: number;
  /** Store URI every finished variant's closure is pushed to with `nix copy --to` (file://, s3://, ssh://). */
  copyTo?: string;
  /** Extra `--option NAME VALUE` pairs (nix backend only). */
  nixOptions?: NixOptions;
}

/** One build command. */
export interface BuildCmd {
  /** Program and arguments, e.g. ["nix-build", "/abs/NAME.nix", "-o", "/abs/result-NAME"]. */
  argv: string[];
  /** Working directory. */
  cwd: string;
  /** The `result-NAME` link the command leaves. */
  outLink: string;
  /**
   * The command is nix-build: job.ts runs it with `--log-format internal-json` added (Nix's structured log, read by
   * nix-log.ts for the failure and the origin; the log file gets Nix's human text). `argv` stays the command a user
   * would type. flox build takes no Nix flags (flox/flox cli/flox/doc/flox-build.md: `flox build [-d=<path>]
   * [<package>]...`; it runs `nix build` inside its own make): its human log is read instead (report.ts originReader).
   */
  nixLog?: boolean;
}

/** Host Nix system of this process, e.g. "x86_64-linux" (what `build` and `publish` compare variants' systems with). */
export function hostSystem(): string {
  const arch = process.arch === "x64" ? "x86_64" : process.arch === "arm64" ? "aarch64" : process.arch;
  return `${arch}-${process.platform}`;
}

/**
 * `auto` → flox when a `flox` executable is on PATH, else nix.
 * @param path the PATH to search (defaults to the process's)
 */
export async function resolveBackend(choice: BackendChoice, path = process.env.PATH ?? ""): Promise<Backend> {
  if (choice !== "auto") return choice;
  return (await findExecutable("flox", path)) ? "flox" : "nix";
}

/**
 * The command that builds `target` with the given backend.
 * @param target variant name and absolute path of its `.nix` file
 */
export function buildCmd(target: { name: string; file: string; check?: BuildTarget["check"] }, o: BackendOptions): BuildCmd {
  // A check is an attribute of the variant's file, not a flox package: always nix-build, its link the variant's proof
  // beside the variant's result (plan.ts resultLinkName).
  if (o.backend === "flox" && !target.check) {
    return { argv: ["flox", "build", target.name], cwd: o.root, outLink: join(o.root, `result-${target.name}`) };
  }
  const outLink = join(o.outDir, resultLinkName(target));
  const argv = ["nix-build", target.file, "-o", outLink];
  if (o.builders !== undefined) argv.push("--builders", o.builders);
  if (o.maxJobs !== undefined) argv.push("--max-jobs", String(o.maxJobs));
  const cores = o.coresByName?.get(target.name) ?? o.cores;
  if (cores !== undefined) argv.push("--cores", String(cores));
  for (const [k, v] of o.nixOptions ?? []) argv.push("--option", k, v);
  return { argv, cwd: o.root, outLink, nixLog: true };
}

/**
 * The environment of a build with ssh timeouts for remote builders added to `NIX_SSHOPTS` (Nix passes it to every
 * `ssh` it runs for an `ssh://` builder or store): `ConnectTimeout` (OpenSSH applies it to the TCP connect and to the
 * banner exchange, so a port that accepts and never speaks fails after `seconds` instead of hanging the run) and
 * `ServerAliveInterval`/`ServerAliveCountMax` (a builder that stops answering mid-build is dropped after about
 * 2 minutes; sshd answers these itself, so a long quiet compile is not affected). A `ConnectTimeout` the user set in
 * `NIX_SSHOPTS` is kept. (ssh_config(5) ConnectTimeout, ServerAliveInterval; Nix manual, "Remote Builds", NIX_SSHOPTS.)
 * @param env the environment the build would get
 * @param seconds ConnectTimeout in seconds (default 30)
 * @returns a copy of `env` with NIX_SSHOPTS extended
 */
export function withSshTimeouts(env: NodeJS.ProcessEnv, seconds = 30): NodeJS.ProcessEnv {
  const user = env.NIX_SSHOPTS ?? "";
  if (/ConnectTimeout/i.test(user)) return env;
  const ours = `-o ConnectTimeout=${seconds} -o ServerAliveInterval=30 -o ServerAliveCountMax=4`;
  return { ...env, NIX_SSHOPTS: user ? `${user} ${ours}` : ours };
}
