/**
 * What `install` (commands/install.ts) checks and decides before it builds anything, and the one GC root it leaves:
 *
 * - the places it will link (DIR, and DIR-nixglhost on the nixglhost route; flox's `ROOT/result-NAME` with the flox
 *   backend): the directory each goes in takes a new link (tried by making and removing one: a read-only or full
 *   filesystem and a directory the user may not write fail now, not after hours of build), and nothing is there but
 *   an earlier install's own link (a link into the store whose store name is this variant's output's, or its
 *   withHostDriver's; a user's link, a file or an unrelated GC root is never replaced);
 * - where the variant's output is: already in the store or fetchable from a substituter (linked at once, no build,
 *   no build driver), or to be built (`nix-instantiate FILE`, `nix-store -q --outputs`, `--check-validity`,
 *   `nix-store --realise --dry-run`);
 * - one GC root, at DIR: a build goes through the build driver with its result links in a directory of its own under
 *   the system's temporary directory, removed once DIR is linked, so nothing but DIR keeps the output alive and
 *   deleting DIR uninstalls (Nix's indirect roots: `nix-store --add-root DIR --indirect` registers DIR in
 *   /nix/var/nix/gcroots/auto; a root whose link is gone is dropped by the next garbage collection).
 *
 * - a SIGINT or SIGTERM after the build (watchInterrupt): the children install started are ended, its temporary result
 *   links removed, and it says what it was doing and what is left (InstallInterrupted, exit 130 or 143); one while the
 *   build driver prepares its build (stopOnSignalUntilBuilding) does the same, then ends the process by that signal
 *   (during the driver's run, the driver's own handler stops its builds).
 *
 * Child processes go through generator/process.ts (runTool).
 */
import { lstatSync, mkdtempSync, readlinkSync, rmSync, statSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { InputError } from "../errors.ts";
import { runTool, stopRunningCommands } from "../process.ts";
import { dryRealise, nixErrorMessage, storeName, until } from "../driver/store.ts";
import { NixDeadlineError } from "../driver/ask-nix.ts";
import type { TeamCache } from "../matrix/team-cache.ts";

/** A place install will link that it may not (exit 2, before any build); the message lists every such place. */
export class InstallPlaceError extends InputError {
  override name = "InstallPlaceError";
}

/** The Nix store directory links are recognised in (NIX_STORE_DIR, else /nix/store). */
function storeDir(): string {
  return (process.env.NIX_STORE_DIR ?? "/nix/store").replace(/\/+$/, "");
}

/** The nearest directory at or above `dir` that exists (what a link's missing parents would be created in). */
function nearestExisting(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    try {
      statSync(d);
      return d;
    } catch {
      if (dirname(d) === d) return d;
    }
  }
}

/** Words for the errno of a failed link in a directory. */
function whyNoLink(code: string | undefined, dir: string): string {
  if (code === "EROFS") return `${dir} is on a read-only filesystem`;
  if (code === "EACCES" || code === "EPERM") return `${dir} is not writable by this user`;
  if (code === "ENOSPC" || code === "EDQUOT") return `${dir}'s filesystem is full (no room for a link)`;
  if (code === "ENOTDIR") return `${dir} is not a directory`;
  return `a link cannot be made in ${dir} (${code ?? "unknown error"})`;
}

/**
 * Why `link` cannot be made now, or null: its directory (or the nearest existing one above it) must take a new link
 * (a link of `targetLength` characters is made there and removed again: the real test of a read-only or full
 * filesystem and of permissions), and whatever is at `link` must be a link into the Nix store that `own` accepts by
 * its store name (an earlier install of the same variant). Changes nothing that was there.
 * @param own store names (storeName; a RegExp matches a family, e.g. /^nix-gl-host/) install may replace: null when
 *   they are not known yet (any link into the store passes here; install checks again once the output is known)
 * @param what how the place is named in the message ("--dir", "the nixglhost link", "flox's result link")
 */
export function linkPlaceProblem(link: string, own: readonly (string | RegExp)[] | null, what: string, targetLength = 100): string | null {
  const dir = nearestExisting(dirname(link));
  const trial = join(dir, `.${basename(link)}.variant-matrix-trial-${process.pid}`);
  try {
    symlinkSync(`${storeDir()}/`.padEnd(targetLength, "x"), trial);
    unlinkSync(trial);
  } catch (e) {
    return `${what} ${link}: ${whyNoLink((e as NodeJS.ErrnoException).code, dir)}`;
  }
  let isLink: boolean;
  try {
    isLink = lstatSync(link).isSymbolicLink();
  } catch {
    return null;
  }
  if (!isLink) return `${what} ${link} exists and is not a link install made: give another place, or move it away`;
  const target = readlinkSync(link);
  const inStore = target.startsWith(`${storeDir()}/`);
  const name = storeName(target);
  if (inStore && (own === null || own.some((o) => (typeof o === "string" ? o === name : o.test(name))))) return null;
  return (
    `${what} ${link} is a link to ${target}, ${inStore ? "a GC root of something else" : "not into the Nix store"}, ` +
    `not an earlier install of this variant${own?.length ? ` (${own.map(String).join(" or ")})` : ""}: install replaces only its own links; ` +
    "remove it, or give another place"
  );
}

/** A place install will link: the link's path, the store names it may replace there (linkPlaceProblem), its name in messages. */
export interface LinkPlace {
  link: string;
  own: readonly (string | RegExp)[] | null;
  what: string;
}

/**
 * Check every place install will link before anything is built (linkPlaceProblem).
 * @throws InstallPlaceError listing every problem of linkPlaceProblem over `places`
 */
export function assertLinkPlaces(places: readonly LinkPlace[], targetLength?: number): void {
  const problems = places.map((p) => linkPlaceProblem(p.link, p.own, p.what, targetLength)).filter((x): x is string => x !== null);
  if (problems.length) throw new InstallPlaceError(`nothing was built: ${problems.join("; ")}`);
}

/** Where a variant's output is, before install builds anything. */
export type OutputState =
  | {
      /** `present`: valid in the store; `fetchable`: a substituter holds it and nothing would be built; `build`: it must be built. */
      state: "present" | "fetchable" | "build";
      drvPath: string;
      /** The derivation's first output (`out`). */
      outPath: string;
    }
  /**
   * Nix could not say: `step` "instantiate" when the file did not evaluate here (offline, a flox-only file: install
   * stops with the build driver's verdict on it, install/install.ts), "query" when a store query failed after it did.
   */
  | { state: "unknown"; step: "instantiate" | "query"; error: string };

/**
 * Ask Nix where `file`'s output is: `nix-instantiate FILE`, `nix-store -q --outputs DRV`, `nix-store
 * --check-validity`, then for an output not in the store `nix-store --realise --dry-run DRV` (store.ts dryRealise:
 * nothing to build and nothing unknown is `fetchable`; a path the team's `caches` hold without a signature this host
 * trusts is to build, as Nix's real run would build it).
 * @param deadline epoch ms: every call is stopped then (store.ts until) and none started after it
 * @throws NixDeadlineError (exit 2) when Nix was not heard by `deadline`, with what was waited for (`limit` names it)
 */
export async function outputState(
  file: string,
  nixOptions: readonly (readonly [string, string])[] = [],
  caches: readonly TeamCache[] = [],
  limit?: { deadline: number; seconds: number; words: string },
): Promise<OutputState> {
  const opts = nixOptions.flatMap(([k, v]) => ["--option", k, v]);
  const deadline = limit?.deadline;
  const ask = async (argv: string[]) => {
    const r = await runTool(argv, until(deadline));
    if (r.stopped && limit) throw new NixDeadlineError(`${r.stopped} (${argv.slice(0, 1).concat(argv.slice(-2)).join(" ")})`, limit, "nothing was built or linked");
    return r;
  };
  const inst = await ask(["nix-instantiate", ...opts, file]);
  const drvPath = inst.stdout.split("\n").find((l) => l.endsWith(".drv"));
  if (inst.code !== 0 || !drvPath) return { state: "unknown", step: "instantiate", error: nixErrorMessage(inst.stderr, `nix-instantiate exited with ${inst.code}`) };
  const q = await ask(["nix-store", ...opts, "-q", "--outputs", drvPath]);
  const outPath = q.stdout.split("\n").find(Boolean);
  if (q.code !== 0 || !outPath) return { state: "unknown", step: "query", error: nixErrorMessage(q.stderr, `nix-store -q --outputs exited with ${q.code}`) };
  const valid = await ask(["nix-store", ...opts, "--check-validity", outPath]);
  if (valid.code === 0) return { state: "present", drvPath, outPath };
  const [dry] = await dryRealise([drvPath], nixOptions, deadline, caches);
  if (dry && "error" in dry && dry.late && limit) throw new NixDeadlineError(`${dry.error} (nix-store --realise --dry-run ${drvPath})`, limit, "nothing was built or linked");
  const fetchable = dry !== undefined && !("error" in dry) && dry.toBuild.length === 0 && dry.unknown.length === 0 && dry.unreachable.length === 0;
  return { state: fetchable ? "fetchable" : "build", drvPath, outPath };
}

/**
 * The store names install may replace at DIR: those of an earlier install of the variant (its output, or the
 * environment's withHostDriver output, named `<env's name>-host-driver` by pkgs/host-driver.nix).
 * @param outPath the variant's output (OutputState), null when not known yet
 */
export function ownNames(outPath: string | null): string[] | null {
  if (outPath === null) return null;
  const name = storeName(outPath);
  return [name, `${name}-host-driver`];
}

/**
 * A fresh directory for the build driver's result links of one install (under the system's temporary directory), so
 * that no `result-NAME` root is left beside DIR: removed by dropResultDir once DIR is linked.
 */
export function makeResultDir(): string {
  return mkdtempSync(join(tmpdir(), "variant-matrix-install-"));
}

/** The store path `resultDir/result-NAME` points at, or null when the build left none there. */
export function resultOutPath(resultDir: string, name: string): string | null {
  try {
    return readlinkSync(join(resultDir, `result-${name}`));
  } catch {
    return null;
  }
}

/** Remove a directory made by makeResultDir (its links only; the store paths stay, rooted by DIR). */
export function dropResultDir(resultDir: string): void {
  rmSync(resultDir, { recursive: true, force: true });
}

/** What install decided before any build: where the output is, and where the build driver puts its result links. */
export interface InstallReady {
  output: OutputState;
  /** The output's store path when known before the build (present, fetchable or to build), else null. */
  outPath: string | null;
  /** True when DIR is linked at once: the output is in the store or fetchable, so nothing is built. */
  atOnce: boolean;
}

/**
 * Before any build: where `file`'s output is (outputState), then DIR checked again with the output's own store names
 * (an earlier install of this variant may be replaced; any other link may not), and the other places as they are.
 * @param places DIR first, then the other links install makes (each already checked with `own` null by the caller)
 * @param limit the deadline (epoch ms) of Nix's answers, with its seconds and words (ask-nix.ts evalLimit)
 * @throws InstallPlaceError for a place install may not link (nothing built)
 * @throws NixDeadlineError when Nix was not heard by the deadline (nothing built)
 */
export async function prepareInstall(
  file: string,
  places: readonly LinkPlace[],
  nixOptions: readonly (readonly [string, string])[] = [],
  caches: readonly TeamCache[] = [],
  limit?: { deadline: number; seconds: number; words: string },
): Promise<InstallReady> {
  const output = await outputState(file, nixOptions, caches, limit);
  const outPath = output.state === "unknown" ? null : output.outPath;
  const [dir, ...rest] = places;
  assertLinkPlaces([...(dir ? [{ ...dir, own: ownNames(outPath) }] : []), ...rest], outPath?.length);
  return { output, outPath, atOnce: output.state === "present" || output.state === "fetchable" };
}

/**
 * A SIGINT or SIGTERM stopped install after its build (exit 128 + the signal's number: 130, 143). The message says
 * what it was doing, what it ended and removed, and what is left.
 */
export class InstallInterrupted extends Error {
  override name = "InstallInterrupted";
  /** 130 for SIGINT, 143 for SIGTERM. */
  readonly exitCode: number;

  /**
   * @param signal the signal that stopped it
   * @param message the whole message (install's words: interruptedMessage in install/install.ts)
   */
  constructor(
    readonly signal: NodeJS.Signals,
    message: string,
  ) {
    super(message);
    this.exitCode = signal === "SIGINT" ? 130 : 143;
  }
}

/** Thrown by an InterruptWatch's guard and check once a signal came; the caller turns it into InstallInterrupted. */
export class StoppedBySignal extends Error {
  override name = "StoppedBySignal";
  /**
   * @param signal the signal that came
   * @param ended how many child processes were still running and were ended
   */
  constructor(
    readonly signal: NodeJS.Signals,
    readonly ended: number,
  ) {
    super(`stopped by ${signal}`);
  }
}

/** What watchInterrupt hands install: its work guarded against SIGINT and SIGTERM until dispose. */
export interface InterruptWatch {
  /**
   * `work`'s result, unless a signal comes first: then the children runCommand started are ended (SIGTERM, SIGKILL
   * after `graceMs`), `work` is awaited to its end, and StoppedBySignal is thrown.
   */
  guard<T>(work: Promise<T>): Promise<T>;
  /** @throws StoppedBySignal when a signal has come (between two steps that are not guarded) */
  check(): void;
  /** Remove the handlers (the process's default for the signals again). */
  dispose(): void;
}

/**
 * Handle SIGINT and SIGTERM for install's steps after its build (linking, the first start, verify): the first one calls
 * `onStop` (the caller stops printing what its steps print), ends the running children and makes the guarded work throw
 * StoppedBySignal; a second one kills the children at once (SIGKILL).
 */
export function watchInterrupt(onStop: () => void, graceMs = 5_000): InterruptWatch {
  let signal: NodeJS.Signals | null = null;
  let ended = 0;
  let fire: () => void = () => {};
  const came = new Promise<void>((resolve) => (fire = resolve));
  const onSignal = (s: NodeJS.Signals) => {
    if (signal !== null) return void stopRunningCommands("SIGKILL");
    signal = s;
    onStop();
    fire();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const check = () => {
    if (signal !== null) throw new StoppedBySignal(signal, ended);
  };
  return {
    check,
    async guard<T>(work: Promise<T>): Promise<T> {
      check();
      const settled = work.then(
        () => true,
        () => true,
      );
      if (await Promise.race([settled, came.then(() => false)])) return work;
      ended += await stopRunningCommands("SIGTERM");
      const kill = setTimeout(() => void stopRunningCommands("SIGKILL"), graceMs);
      await settled;
      clearTimeout(kill);
      throw new StoppedBySignal(signal!, ended);
    },
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/**
 * While install hands its build to the build driver: a SIGINT or SIGTERM that the driver does not take (before its run
 * installs its own handlers: its evaluation, asking Nix) runs `stop` (remove what install made, say so), ends the
 * children runCommand started, and then ends this process by the same signal, as it would have ended without this
 * handler. While the driver's run has its handlers, they stop its builds and this one does nothing.
 * @param stop told the signal and how many children were still running; must not throw
 * @returns what removes the handlers
 */
export function stopOnSignalUntilBuilding(stop: (signal: NodeJS.Signals, ended: number) => void): () => void {
  const off = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (process.listenerCount(signal) > 1) return; // the build driver's run: its own handler stops its builds
    off();
    void stopRunningCommands("SIGTERM").then((ended) => {
      stop(signal, ended);
      process.kill(process.pid, signal);
    });
  }
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return off;
}
