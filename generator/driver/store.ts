/**
 * Is a variant already built? Questions to the Nix store (I/O, child processes with argument arrays).
 *
 * A target is cached when
 * 1. its derivation (`nix-instantiate FILE`) has every output (`nix-store -q --outputs DRV`) valid in the store
 *    (`nix-store --check-validity`), or
 * 2. its derivation cannot be instantiated here (e.g. offline, or a file only flox evaluates) and its
 *    `result-NAME` link points at a valid store path.
 * When instantiation succeeds and the outputs are not valid, a `result-NAME` link to an older output is stale
 * (the file changed since) and does not count: the variant is rebuilt.
 *
 * Every command runs through generator/process.ts: runTool (a program not found is exit 127, as zx's shell gave it)
 * for the questions, runCommandSync for the GC roots.
 */
import { lstatSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import { ProcessStartError, runCommandSync, runTool, type CommandResult } from "../process.ts";
import type { TeamCache } from "../matrix/team-cache.ts";
import { signaturePolicy, untrustedFetches, type UntrustedFetch } from "./cache-signatures.ts";
import { resultLinkName } from "../model/plan.ts";
import type { BuildTarget } from "./targets.ts";

/** Result of probing one target. */
export interface CachedAnswer {
  cached: boolean;
  /**
   * How it was decided: derivation outputs valid, `result-NAME` link valid, a substituter holds its outputs
   * (`build --skip-cached`: nix-store --realise --dry-run would build nothing of its own), or neither.
   */
  by: "store" | "link" | "substituter" | null;
  /** The output path (first output of the derivation, or the link's target) when cached. */
  outPath: string | null;
  /** Derivation path when instantiation succeeded. */
  drvPath: string | null;
  /** Why instantiation failed: Nix's message as one line starting "error: " (nixErrorMessage), when it did. */
  note?: string;
  /**
   * Set when Nix was not heard by the deadline for this target: what was waited for ("nix-instantiate (500 files) ran
   * past its limit …", or "not asked: the deadline had passed"). The target is then neither known built nor known
   * not to evaluate.
   */
  late?: string;
}

/** `[name, value]` pairs passed to every Nix command as `--option name value`. */
export type NixOptions = readonly (readonly [string, string])[];

function nixOptionArgs(opts: NixOptions): string[] {
  return opts.flatMap(([k, v]) => ["--option", k, v]);
}

/** The longest timer Node keeps (setTimeout's limit, 2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * runTool's options for a question that must be answered by `deadline` (epoch ms): the time left as its timeout (a
 * child still running then is stopped, and its result says so in `stopped`), never above Node's timer limit
 * (MAX_TIMER_MS); no limit without a deadline.
 */
export function until(deadline: number | undefined): { timeoutMs?: number } {
  return deadline === undefined ? {} : { timeoutMs: Math.min(MAX_TIMER_MS, Math.max(1, deadline - Date.now())) };
}

/** Whether `deadline` (epoch ms) has passed: no new question is started then. */
export function pastDeadline(deadline: number | undefined): boolean {
  return deadline !== undefined && Date.now() >= deadline;
}

/** What a question not started because the deadline had passed gives instead of Nix's answer. */
export const NOT_ASKED = "not asked: the deadline had passed";

/**
 * `items` in consecutive chunks of at most `most` items and `bytes` characters in all (an item longer than `bytes`
 * alone is a chunk of its own): what keeps every argument list of a Nix call far below the system's limit, whatever
 * the number of variants.
 */
export function chunks<T>(items: readonly T[], size: (x: T) => number, most: number, bytes: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let n = 0;
  for (const x of items) {
    const b = size(x) + 1;
    if (cur.length > 0 && (cur.length >= most || n + b > bytes)) {
      out.push(cur);
      cur = [];
      n = 0;
    }
    cur.push(x);
    n += b;
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * Most files or store paths one Nix command is given, and most characters of them in all: far below the system's
 * ARG_MAX (2 MiB here), and large enough that a plan of 60,000 variants takes a few calls. Each call costs more than
 * its own run: starting a child copies the page tables of this process, whose memory grows with the plan (a CPU
 * profile of a 10,112-variant dry run, about 300 MiB, on the 2-core machine: 1.15 s of its 6.6 CPU seconds in
 * ChildProcess.spawn, for about 20 children), so fewer, larger calls keep the planning linear.
 */
export const PER_CALL = { items: 4000, bytes: 512 * 1024 };

/** How many chunks of files `nix-instantiate` is given at once (each one process). */
const CHUNKS_AT_ONCE = 2;

/**
 * Store paths among `paths` that are valid (`nix-store --check-validity --print-invalid`), asked in chunks (PER_CALL);
 * a chunk Nix refuses (a malformed path fails the whole call) is asked again path by path. Past `deadline` nothing more
 * is asked, and what was not asked counts as not valid.
 */
async function validPaths(paths: readonly string[], nixOptions: NixOptions = [], deadline?: number): Promise<Set<string>> {
  const out = new Set<string>();
  const limit = pLimit(8);
  const ask = async (batch: readonly string[]): Promise<void> => {
    if (pastDeadline(deadline)) return;
    const r = await runTool(["nix-store", ...nixOptionArgs(nixOptions), "--check-validity", "--print-invalid", ...batch], until(deadline));
    if (r.code === 0) {
      const invalid = new Set(r.stdout.split("\n").filter(Boolean));
      for (const p of batch) if (!invalid.has(p)) out.add(p);
    } else if (batch.length > 1 && !r.stopped) await Promise.all(batch.map((p) => limit(() => ask([p]))));
  };
  for (const batch of chunks(paths, (p) => p.length, PER_CALL.items, PER_CALL.bytes)) await ask(batch);
  return out;
}

/** Most store paths one `nix-store` command is given (the argument list stays far below the system's limit). */
const PATHS_PER_CALL = 1000;

/**
 * The stdout of `nix-store ARGS… PATHS…` for `paths` in batches of PATHS_PER_CALL. A batch Nix refuses (a path that
 * is not valid fails the whole call) is asked again path by path, and a path Nix refuses alone gives no output.
 */
async function nixStoreBatched(args: readonly string[], paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const limit = pLimit(4);
  for (let i = 0; i < paths.length; i += PATHS_PER_CALL) {
    const batch = paths.slice(i, i + PATHS_PER_CALL);
    const r = await runTool(["nix-store", ...args, ...batch]);
    if (r.code === 0) out.push(r.stdout);
    else if (batch.length > 1) {
      const each = await Promise.all(batch.map((p) => limit(() => runTool(["nix-store", ...args, p]))));
      out.push(...each.filter((x) => x.code === 0).map((x) => x.stdout));
    }
  }
  return out;
}

/**
 * The records of `nix-store --dump-db PATHS…`: per path, in the format `nix-store --register-validity --hash-given`
 * reads (Nix manual, nix-store --register-validity: the path, its NAR hash, its NAR size, its deriver or an empty
 * line, the number of references, then one reference per line), as path → references.
 * @throws Error when the text is not a sequence of such records
 */
export function parseValidityRecords(text: string): Map<string, string[]> {
  const lines = text.split("\n");
  const refs = new Map<string, string[]>();
  let i = 0;
  while (i < lines.length && lines[i] !== "") {
    const path = lines[i]!;
    const n = Number(lines[i + 4]);
    if (!path.startsWith("/") || !Number.isInteger(n) || n < 0 || i + 5 + n > lines.length)
      throw new Error(`nix-store --dump-db: line ${i + 1} does not start a record (path, hash, size, deriver, count, references): ${JSON.stringify(path.slice(0, 200))}`);
    refs.set(path, lines.slice(i + 5, i + 5 + n));
    i += 5 + n;
  }
  return refs;
}

/**
 * The direct references of each of `paths` (store paths; for a .drv: the derivations and sources it names), from
 * Nix's database as `nix-store --query --references` reads them, but one `nix-store --dump-db` for up to a thousand
 * paths instead of one process each (a process start costs about 60 ms of CPU). A path Nix does not know is absent.
 */
export async function storeReferences(paths: readonly string[]): Promise<Map<string, string[]>> {
  const refs = new Map<string, string[]>();
  for (const text of await nixStoreBatched(["--dump-db"], [...new Set(paths)])) for (const [p, r] of parseValidityRecords(text)) refs.set(p, r);
  return refs;
}

/**
 * The closure of each of `roots` (store paths), as `nix-store --query --requisites ROOT` gives it (ROOT included),
 * from two questions for all of them: the requisites of all roots at once, then the references of every path in
 * them (storeReferences); each root's closure is walked here. A root Nix does not know, or whose closure holds a path
 * whose references Nix did not give, is absent.
 */
export async function storeClosures(roots: readonly string[]): Promise<Map<string, string[]>> {
  const closures = new Map<string, string[]>();
  if (roots.length === 0) return closures;
  const all = new Set((await nixStoreBatched(["--query", "--requisites"], [...new Set(roots)])).flatMap((o) => o.split("\n")).filter(Boolean));
  const refs = await storeReferences([...all]);
  for (const root of roots) {
    const seen = new Set([root]);
    const stack = [root];
    let known = true;
    while (stack.length && known) {
      const next = refs.get(stack.pop()!);
      if (!next) known = false;
      else for (const r of next) if (!seen.has(r)) (seen.add(r), stack.push(r));
    }
    if (known) closures.set(root, [...seen]);
  }
  return closures;
}

/**
 * Nix's own error message in its stderr, without the trace chatter: from the last line that starts with "error:" and
 * says something (Nix 2.8 prints `error: MESSAGE` first; later versions print a bare `error:`, the trace, then
 * `error: MESSAGE` last), up to the next blank line, joined into one line, without Nix's "(use '--show-trace' …)"
 * advice. `fallback` when there is none.
 */
export function nixErrorMessage(stderr: string, fallback: string): string {
  const lines = stderr.split("\n");
  let start = -1;
  for (let i = 0; i < lines.length; i++) if (/^\s*error:\s*\S/.test(lines[i]!)) start = i;
  if (start < 0) return fallback;
  const out: string[] = [];
  for (let i = start; i < lines.length && lines[i]!.trim() !== ""; i++)
    if (!/^\(use '--show-trace'/.test(lines[i]!.trim())) out.push(lines[i]!.trim());
  return out.join(" ").replace(/^error:\s*/, "error: ");
}

/** What instantiating one file gave: its derivation, Nix's error, or why Nix was not heard by the deadline. */
type Instantiated = { drv: string } | { error: string; late?: boolean };

/**
 * Derivation paths of `files`: one `nix-instantiate` per chunk of files (chunks(): no argument list grows with the
 * files), one per file of a chunk that fails unless its failure is shared (below). Every call runs under `deadline`
 * (epoch ms): a call still running then is stopped, none is started after it, and those files are `late`.
 */
async function instantiate(files: readonly string[], nixOptions: NixOptions, deadline?: number): Promise<Instantiated[]> {
  const late = (why: string): Instantiated => ({ error: why, late: true });
  const one = async (f: string): Promise<Instantiated> => {
    if (pastDeadline(deadline)) return late(NOT_ASKED);
    const r = await runTool(["nix-instantiate", ...nixOptionArgs(nixOptions), f], until(deadline));
    if (r.stopped) return late(r.stopped);
    const lines = r.stdout.split("\n").filter((l) => l.endsWith(".drv"));
    if (r.code === 0 && lines.length === 1) return { drv: lines[0]! };
    return { error: nixErrorMessage(r.stderr, `nix-instantiate exited with ${r.code}`) };
  };
  const limit = pLimit(8);
  // The error every file of an earlier chunk shared (the pinned nixpkgs cannot be fetched offline): a chunk failing
  // with the same words shares it too, without asking its first and last file again.
  let sharedErr: string | null = null;
  const chunk = async (batch: readonly string[]): Promise<Instantiated[]> => {
    if (batch.length === 1) return [await one(batch[0]!)];
    if (pastDeadline(deadline)) return batch.map(() => late(NOT_ASKED));
    const r = await runTool(["nix-instantiate", ...nixOptionArgs(nixOptions), ...batch], until(deadline));
    if (r.stopped) return batch.map(() => late(`${r.stopped} (${batch.length} files at once)`));
    const lines = r.stdout.split("\n").filter((l) => l.endsWith(".drv"));
    if (r.code === 0 && lines.length === batch.length) return lines.map((drv) => ({ drv }));
    // When the first and the last file both fail with the batch's error (typically: the pinned nixpkgs cannot be
    // fetched offline), every file shares the cause: do not pay for it once per file. One file is not enough: an
    // error of that file alone (an extra its environment's pin lacks) is the batch's error too when it comes first.
    const batchErr = nixErrorMessage(r.stderr, "");
    if (batchErr !== "" && batchErr === sharedErr) return batch.map(() => ({ error: batchErr }));
    const [first, last] = await Promise.all([one(batch[0]!), one(batch[batch.length - 1]!)]);
    const shared = (x: Instantiated, f: string) => "error" in x && x.error === batchErr && !batchErr.includes(f);
    if (batchErr !== "" && shared(first, batch[0]!) && shared(last, batch[batch.length - 1]!)) {
      sharedErr = batchErr;
      return batch.map(() => first);
    }
    const middle = await Promise.all(batch.slice(1, -1).map((f) => limit(() => one(f))));
    return [first, ...middle, last];
  };
  // A few chunks at once: an offline call spends most of its time waiting on the network, not on a core.
  const atOnce = pLimit(CHUNKS_AT_ONCE);
  const replies = await Promise.all(chunks(files, (f) => f.length, PER_CALL.items, PER_CALL.bytes).map((b) => atOnce(() => chunk(b))));
  return replies.flat();
}

/**
 * The output paths a derivation file names, read from the file itself (Nix's ATerm: `Derive([("out","/nix/store/…",
 * …),…],…`), in its order; null when the file cannot be read or names no path (a content-addressed output: asked of
 * `nix-store -q --outputs` instead).
 */
export function drvOutputs(drvPath: string): string[] | null {
  let text: string;
  try {
    text = readFileSync(drvPath, "latin1");
  } catch {
    return null;
  }
  const m = /^Derive\(\[((?:\("[^"]*","[^"]*","[^"]*","[^"]*"\),?)*)\]/.exec(text.slice(0, 64 * 1024));
  if (!m) return null;
  const paths = [...m[1]!.matchAll(/\("[^"]*","([^"]*)",/g)].map((x) => x[1]!);
  return paths.length && paths.every((p) => p.startsWith("/")) ? paths : null;
}

/**
 * Ask the store whether each target is already built (see the module comment for the rule).
 * @param targets name and `.nix` file of each target
 * @param outDir directory holding the `result-NAME` links
 * @param opts.instantiate false: only the result links are looked at (a dry run's default)
 * @param opts.deadline epoch ms: every Nix call is stopped then and none is started after; targets Nix was not heard
 *   for are `late` (CachedAnswer.late), not cached
 * @returns name → its answer
 */
export async function askCached(
  targets: readonly { name: string; file: string; check?: BuildTarget["check"] }[],
  outDir: string,
  nixOptions: NixOptions = [],
  opts: { instantiate?: boolean; deadline?: number } = {},
): Promise<Map<string, CachedAnswer>> {
  // Without instantiation (a dry run's default) only the result-NAME links are looked at: evaluating a generated
  // file fetches its pinned nixpkgs, which needs the network the first time.
  const drvs: Instantiated[] =
    opts.instantiate === false
      ? targets.map(() => ({ error: "" }))
      : await instantiate(
          targets.map((t) => t.file),
          nixOptions,
          opts.deadline,
        );
  const limit = pLimit(8);
  // The outputs, read from each derivation file (no process); `nix-store -q --outputs` only where it names none.
  const outputs = await Promise.all(
    drvs.map((d) =>
      "drv" in d
        ? (drvOutputs(d.drv) ??
          limit(async () => {
            if (pastDeadline(opts.deadline)) return null;
            const r = await runTool(["nix-store", ...nixOptionArgs(nixOptions), "-q", "--outputs", d.drv], until(opts.deadline));
            return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : null;
          }))
        : null,
    ),
  );
  // The links there are, read once: a readlink per target that has none costs an error each (3 s of 60,000 variants).
  const present = await readdir(outDir).then(
    (names) => new Set(names),
    () => new Set<string>(),
  );
  const links = await Promise.all(
    targets.map((t) => (present.has(resultLinkName(t)) ? readlink(join(outDir, resultLinkName(t))).catch(() => null as string | null) : null)),
  );
  const candidates = [...outputs.flatMap((o) => o ?? []), ...links.filter((l): l is string => l !== null)];
  const valid = await validPaths([...new Set(candidates)], nixOptions, opts.deadline);
  const result = new Map<string, CachedAnswer>();
  targets.forEach((t, i) => {
    const d = drvs[i]!;
    const outs = outputs[i];
    const link = links[i];
    const note = "error" in d && d.error ? d.error : undefined;
    const late = "error" in d && d.late ? { late: d.error } : {};
    if ("drv" in d && outs && outs.length > 0) {
      const ok = outs.every((o) => valid.has(o));
      result.set(t.name, { cached: ok, by: ok ? "store" : null, outPath: ok ? outs[0]! : null, drvPath: d.drv });
    } else if (link && valid.has(link)) {
      result.set(t.name, { cached: true, by: "link", outPath: link, drvPath: null, note, ...late });
    } else {
      result.set(t.name, { cached: false, by: null, outPath: null, drvPath: "drv" in d ? d.drv : null, note, ...late });
    }
  });
  return result;
}

/** What Nix says realising a derivation would do (`nix-store --realise --dry-run`), as store paths. */
export interface DryRealise {
  /** Derivations (.drv) that will be built. */
  toBuild: string[];
  /** Output paths that will be fetched from a substituter. */
  toFetch: string[];
  /** Paths Nix does not know how to build (neither a derivation's output nor substitutable). */
  unknown: string[];
  /** Substituters Nix could not reach ("unable to download 'URL/nix-cache-info'"): their paths count as to build. */
  unreachable: string[];
  /**
   * Paths Nix listed as to fetch that no team cache holding them may give under this host's `require-sigs`
   * (cache-signatures.ts untrustedFetches): moved from `toFetch` to `toBuild` (as their deriver when the cache names
   * it), with where and why. Only when dryRealise was given the team's caches.
   */
  untrusted?: UntrustedFetch[];
}

/**
 * Parse the dry-run report Nix prints on stderr (src/libmain/shared.cc `printMissing`): a header such as
 * "these 3 derivations will be built:" / "this derivation will be built:", "these 2 paths will be fetched (0.01 MiB
 * download, 0.05 MiB unpacked):" / "this path will be fetched (…):", "don't know how to build these paths:", each
 * followed by indented store paths. Other lines (warnings, traces) are ignored.
 * @returns the three lists, in Nix's order (empty when everything is already valid)
 */
export function parseDryRun(stderr: string): DryRealise {
  const out: DryRealise = { toBuild: [], toFetch: [], unknown: [], unreachable: [] };
  let into: string[] | null = null;
  for (const line of stderr.split("\n")) {
    const down = line.match(/^warning: unable to download '(.+)\/nix-cache-info'/);
    if (down && !out.unreachable.includes(down[1]!)) out.unreachable.push(down[1]!);
    if (/^(these \d+ derivations|this derivation) will be built:/.test(line)) into = out.toBuild;
    else if (/^(these \d+ paths|this path) will be fetched/.test(line)) into = out.toFetch;
    else if (/^don't know how to build these paths/.test(line)) into = out.unknown;
    else if (into && /^\s+\/\S+$/.test(line)) into.push(line.trim());
    else into = null;
  }
  return out;
}

/**
 * The name Nix gives a store path, without its hash and `.drv`: "/nix/store/abc…-python3.13-torch-2.12.0.drv" →
 * "python3.13-torch-2.12.0".
 */
export function storeName(path: string): string {
  return path.replace(/^.*\/[0-9a-z]{32}-/, "").replace(/\.drv$/, "");
}

/**
 * Ask Nix what realising each derivation would build and fetch, with the user's substituters (and `nixOptions`):
 * `nix-store --realise --dry-run DRV`, one call per derivation (8 at a time).
 *
 * Nix's dry run lists what a substituter holds, not what it will accept: with `caches` (the team's caches, matrix.ts
 * `caches`, passed to Nix in `nixOptions`), a path it lists as to fetch that every team cache holding it holds
 * without a signature this host trusts (`require-sigs`; cache-signatures.ts untrustedFetches) is moved to `toBuild`,
 * as Nix's real run would build it, and named in `untrusted`.
 * @param deadline epoch ms by which Nix must answer: a call still running then is stopped, none is started after it;
 *   either is `{ error, late: true }` with what was waited for
 * @returns per derivation its DryRealise, or `{ error }` with Nix's first error line
 */
export async function dryRealise(
  drvs: readonly string[],
  nixOptions: NixOptions = [],
  deadline?: number,
  caches: readonly TeamCache[] = [],
): Promise<(DryRealise | { error: string; late?: boolean })[]> {
  const limit = pLimit(8);
  const ask = async (drv: string, again: boolean): Promise<DryRealise | { error: string; late?: boolean }> => {
    if (pastDeadline(deadline)) return { error: NOT_ASKED, late: true };
    const r = await runTool(["nix-store", ...nixOptionArgs(nixOptions), "--realise", "--dry-run", drv], until(deadline));
    if (r.stopped) return { error: r.stopped, late: true };
    // Nix 2.8's narinfo disk cache (~/.cache/nix/binary-cache-v6.sqlite) races when several processes meet a
    // substituter for the first time ("executing SQLite statement 'insert or replace into NARs…': constraint
    // failed", seen here with 4 at once on a fresh cache): once the first has recorded the cache, asking again answers.
    if (r.code !== 0 && again && /SQLite/.test(r.stderr)) return ask(drv, false);
    if (r.code !== 0) return { error: nixErrorMessage(r.stderr, `nix-store exited with ${r.code}`) };
    return parseDryRun(r.stderr);
  };
  const replies = await Promise.all(drvs.map((drv) => limit(() => ask(drv, true))));
  const ok = replies.filter((r): r is DryRealise => !("error" in r));
  const toFetch = [...new Set(ok.flatMap((r) => r.toFetch))];
  if (caches.length === 0 || toFetch.length === 0) return replies;
  const policy = () => signaturePolicy(nixOptions, caches.map((c) => c.publicKey), until(deadline).timeoutMs);
  const untrusted = new Map((await untrustedFetches(toFetch, caches, nixOptions, policy, deadline)).map((u) => [u.path, u]));
  for (const r of ok) {
    const moved = r.toFetch.filter((p) => untrusted.has(p)).map((p) => untrusted.get(p)!);
    r.toFetch = r.toFetch.filter((p) => !untrusted.has(p));
    r.toBuild = [...new Set([...r.toBuild, ...moved.map((u) => u.deriver ?? u.path)])];
    r.untrusted = moved;
  }
  return replies;
}

/**
 * The `system-features` this machine's Nix declares (nix.conf, NIX_CONFIG and `nixOptions`), read with
 * `nix show-config` (nix-command). Nix builds a derivation locally only when they include all its
 * requiredSystemFeatures. null when Nix cannot be asked.
 */
export async function localSystemFeatures(nixOptions: NixOptions = []): Promise<string[] | null> {
  const r = await runTool(["nix", "--extra-experimental-features", "nix-command", "show-config", ...nixOptionArgs(nixOptions)]).catch(() => null);
  if (!r || r.code !== 0) return null;
  const line = r.stdout.split("\n").find((l) => l.startsWith("system-features ="));
  return line ? line.slice("system-features =".length).trim().split(/\s+/).filter(Boolean) : [];
}

/**
 * The NAR size of `outPath` and of its runtime closure, in bytes: `nix-store --query --requisites OUT`, then
 * `nix-store --query --size` of each (what `nix path-info -S` sums). null when Nix cannot answer.
 */
export async function pathSizes(outPath: string, nixOptions: NixOptions = []): Promise<{ narSize: number; closureSize: number } | null> {
  const req = await runTool(["nix-store", ...nixOptionArgs(nixOptions), "--query", "--requisites", outPath]).catch(() => null);
  if (!req || req.code !== 0) return null;
  const paths = req.stdout.split("\n").filter(Boolean);
  const sizes = await runTool(["nix-store", ...nixOptionArgs(nixOptions), "--query", "--size", ...paths]).catch(() => null);
  if (!sizes || sizes.code !== 0) return null;
  const n = sizes.stdout.split("\n").filter(Boolean).map(Number);
  if (n.length !== paths.length || n.some((x) => !Number.isFinite(x))) return null;
  return { narSize: n[paths.indexOf(outPath)] ?? 0, closureSize: n.reduce((a, b) => a + b, 0) };
}

/**
 * Run one Nix command that makes `dir` a GC root and wait for it (a synchronous child process with an argument array,
 * the process's environment): what install links its environment with.
 * @returns null when it exited 0, else one line: the command, its exit status (or why it did not start) and the last
 *   three lines of its stderr
 */
function gcRootCommand(argv: readonly string[]): string | null {
  let r: CommandResult;
  try {
    r = runCommandSync(argv);
  } catch (e) {
    if (!(e instanceof ProcessStartError)) throw e;
    return `${argv.join(" ")} failed (exit ${e.reason}): `;
  }
  if (r.code === 0) return null;
  return `${argv.join(" ")} failed (exit ${r.code ?? r.signal}): ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`;
}

/**
 * Make `dir` an indirect GC root of the store path `out` (`nix-store --realise OUT --add-root DIR --indirect`): a link
 * at `dir` to `out`.
 * @returns null when done, else why not (gcRootCommand)
 */
export function addGcRoot(out: string, dir: string, nixOptions: NixOptions = []): string | null {
  return gcRootCommand(addGcRootArgv(out, dir, nixOptions));
}

/** The command addGcRoot runs: `nix-store --realise OUT --add-root DIR --indirect [--option NAME VALUE]…`. */
export function addGcRootArgv(out: string, dir: string, nixOptions: NixOptions = []): string[] {
  return ["nix-store", "--realise", out, "--add-root", dir, "--indirect", ...optionArgs(nixOptions)];
}

/** `--option NAME VALUE` for each pair (the team's caches, say: team-cache.ts cacheNixOptions). */
function optionArgs(nixOptions: NixOptions): string[] {
  return nixOptions.flatMap(([k, v]) => ["--option", k, v]);
}

/**
 * Give an output already in the store its result link: `link` made an indirect GC root of `out` (addGcRoot), unless
 * it already points there. What `build` does for a cached variant, so a fresh `--out-dir` has every variant's link.
 * Something at `link` that is not a symbolic link (a user's file) is left alone.
 * @returns null when `link` points at `out`, else why it does not
 */
export function linkStorePath(out: string, link: string): string | null {
  let st: Stats | undefined;
  try {
    st = lstatSync(link);
  } catch {
    st = undefined;
  }
  if (st && !st.isSymbolicLink()) return `${link} is there and is not a link: left alone (move it away to get the result link)`;
  if (st && readlinkSync(link) === out) return null;
  return addGcRoot(out, link);
}

/**
 * Build attribute `attr` of the Nix file `file` and link its output at `link`, a GC root (`nix-build FILE -A ATTR -o
 * LINK`), e.g. an environment's `withHostDriver` or `nixglhost`.
 * @returns null when done, else why not (gcRootCommand)
 */
export function buildAttrLink(file: string, attr: string, link: string, nixOptions: NixOptions = []): string | null {
  return gcRootCommand(buildAttrLinkArgv(file, attr, link, nixOptions));
}

/** The command buildAttrLink runs: `nix-build FILE -A ATTR -o LINK [--option NAME VALUE]…`. */
export function buildAttrLinkArgv(file: string, attr: string, link: string, nixOptions: NixOptions = []): string[] {
  return ["nix-build", file, "-A", attr, "-o", link, ...optionArgs(nixOptions)];
}
