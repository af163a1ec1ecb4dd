/**
 * How the preflight checks see a host (I/O at the edge): a root directory (`/`, or a fake root in tests) under which
 * files such as /etc/NIXOS, /dev/nvidia0 and /run/opengl-driver/lib/libcuda.so.1 are looked up, and the PATH and
 * environment its executables (nix, flox, nvidia-smi, ldconfig, df) run with, so tests model hosts with stand-in
 * executables.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ProcessStartError, runCommandSync } from "../process.ts";

/** A host as the checks see it. */
export interface Host {
  /** Root directory host paths are looked up under ("/" on the real host). */
  root: string;
  /** Environment executables run with and are found through (its PATH). */
  env: NodeJS.ProcessEnv;
  /** A /proc/cpuinfo to read instead of ROOT/proc/cpuinfo (--cpuinfo with --host-root; a recording alone is not this machine). */
  cpuinfoFile?: string;
}

/** The host this process runs on. */
export function thisHost(): Host {
  return { root: "/", env: process.env };
}

/** What a command printed and how it ended; `code` null when it could not be started (not on PATH). */
interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `argv` on `host` (found through the host's PATH), with a 60 s limit and 16 MiB of output (process.ts
 * runCommandSync). Never throws.
 * @returns code null when the executable is not found or cannot start (stderr: Node's reason, `spawnSync nix
 *   ENOENT`), or when it ran past the limit or printed more (stderr: which)
 */
export function runOn(host: Host, argv: readonly string[]): CommandResult {
  try {
    const r = runCommandSync(argv, { env: host.env, timeoutMs: 60_000, maxBuffer: 16 << 20 });
    if (r.stopped !== null) return { code: null, stdout: "", stderr: r.stopped };
    return { code: r.code, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    if (!(e instanceof ProcessStartError)) throw e;
    return { code: null, stdout: "", stderr: e.reason };
  }
}

/** Whether the host path `p` (absolute, e.g. "/dev/nvidia0") exists under the host's root. */
export function existsOn(host: Host, p: string): boolean {
  return existsSync(join(host.root, p));
}
