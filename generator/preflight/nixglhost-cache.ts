/**
 * The nixglhost route's one-time cost, paid by `install` instead of the user's first program: nix-gl-host copies and
 * patchelfs the host driver's libraries into `$XDG_CACHE_HOME/nix-gl-host` (default `~/.cache/nix-gl-host`) on its
 * first start for a driver, and reuses that copy afterwards. Measured on a real Ubuntu 24.04 + H100 host (driver 580,
 * 2026-11; docs/gpu-driver.md): the first Python start took 32.5 s and copied 5.7 GB; later starts cost about 190 ms
 * more than a direct one. Source of the behaviour: numtide/nix-gl-host `src/nixglhost.py` at 5269b23
 * (`main`: the cache directory; `cache_library_path`: one copy per host driver directory, kept while it is up to date).
 * A later start lists the driver directories and compares each library's name, path, size and modification time with the
 * cache's JSON record (`ResolvedLib`, `is_dso_cache_up_to_date`); it hashes no file's content (the one sha256 is of a
 * directory's path, naming its copy, when the copy is made).
 */
import { readdirSync, lstatSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { ProcessStartError, runCommand } from "../process.ts";

/** What the first start through nixglhost did. */
export interface FirstStart {
  /** Wall seconds of `python3 -c pass` through the route. */
  seconds: number;
  /** The cache directory nixglhost writes. */
  cacheDir: string;
  /** Bytes under cacheDir after the start (regular files, not following links). */
  cachedBytes: number;
  /** The start's exit status (null when a signal ended it or it could not start), and why it failed, else null. */
  code: number | null;
  failure: string | null;
}

/** nixglhost's cache directory: `$XDG_CACHE_HOME/nix-gl-host`, else `~/.cache/nix-gl-host` (its `main`). */
export function nixglhostCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME ?? path.join(env.HOME || homedir(), ".cache");
  return path.join(base, "nix-gl-host");
}

/** Bytes of the regular files under `dir` (0 when it does not exist); links are not followed. */
export function treeBytes(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e);
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) total += treeBytes(p);
    else if (st.isFile()) total += st.size;
  }
  return total;
}

/** `bytes` in words: "5.7 GB", "840 MB", "12 kB" (decimal units, as `du --si`). */
export function formatBytes(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Where install put the route: the installed directory, whether it runs through nixglhost, and the nixglhost it linked. */
export interface InstalledRoute {
  /** The installed directory (an environment with wrapped Pythons has DIR/bin/python3). */
  dir: string;
  /** Whether the installed variant reaches the host's driver through nixglhost. */
  throughNixglhost: boolean;
  /** DIR-nixglhost/bin/nixglhost for a variant without wrapped Pythons; undefined when DIR's Pythons are wrapped. */
  nixglhost?: string;
}

/**
 * install's one call: when the installed variant takes the nixglhost route, run its first start now (payNixglhostFirstStart):
 * `DIR/bin/python3 -c pass` for an environment whose Pythons are wrapped, else `NIXGLHOST true`. Returns null when
 * the route is not nixglhost.
 */
export async function firstStartThroughNixglhost(r: InstalledRoute, say: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<FirstStart | null> {
  if (!r.throughNixglhost) return null;
  return payNixglhostFirstStart(r.nixglhost ? [r.nixglhost, "true"] : [path.join(r.dir, "bin/python3"), "-c", "pass"], say, env);
}

/**
 * Run the first start through the nixglhost route now and say what it cost: `argv` is a program started through the
 * route. Prints one line through `say` (how long, how much it cached where, what later starts cost) and returns the
 * numbers. Never throws for a start that fails: that is in the result and the line, and verify then reports the GPU
 * checks.
 */
export async function payNixglhostFirstStart(argv: readonly string[], say: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<FirstStart> {
  const cacheDir = nixglhostCacheDir(env);
  const before = treeBytes(cacheDir);
  const t0 = process.hrtime.bigint();
  let code: number | null = null;
  let failure: string | null = null;
  try {
    const r = await runCommand(argv, { env, input: "", timeoutMs: 10 * 60_000 });
    code = r.code;
    if (r.code !== 0) failure = r.stopped ?? `exit ${r.code ?? r.signal}: ${r.stderr.trim().split("\n").pop() ?? ""}`;
  } catch (e) {
    if (!(e instanceof ProcessStartError)) throw e;
    failure = e.message;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cachedBytes = treeBytes(cacheDir);
  const grew = cachedBytes - before;
  say(
    failure
      ? `the first start through nix-gl-host (${argv.join(" ")}) failed after ${seconds.toFixed(1)} s: ${failure}`
      : `the first start through nix-gl-host took ${seconds.toFixed(1)} s and cached ${formatBytes(grew > 0 ? grew : cachedBytes)} of the ` +
          `host driver's libraries in ${cacheDir} (${formatBytes(cachedBytes)} there now); later starts reuse it (about 0.2 s more ` +
          "than a direct start; after a driver upgrade the next start copies again; docs/gpu-driver.md)",
  );
  return { seconds, cacheDir, cachedBytes, code, failure };
}
