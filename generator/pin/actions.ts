/**
 * `pin inspect | check | add` without the printing: where a nixpkgs comes from (a checkout, or a revision fetched
 * with its hash), reading its facts (pkgs/inspect-pin.nix), comparing every reachable catalog pin, and making a
 * local pin entry. The command layer (generator/commands/pin.ts) prints the results.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { nixpkgsTarballUrl } from "../catalog/lib/torch.ts";
import type { Catalog, NixpkgsPin } from "../catalog/schema.ts";
import type { LocalPinEntry } from "../catalog/local.ts";
import { comparePin, newestTorchOf, pinEntryFromFacts, torchNewerThanCatalog, type PinComparison, type PinFacts } from "./facts.ts";
import { inspectNixpkgs, PinError, prefetchTarball, revisionOf } from "./nix.ts";

const REV_RE = /^[0-9a-f]{40}$/;

/** A nixpkgs to read: where it is on disk, which revision it is, and its tarball hash when it was fetched. */
interface PinSource {
  /** Directory holding nixpkgs (a checkout or the unpacked tarball in the store). */
  path: string;
  /** 40-hex revision, or null when a checkout does not say (no .git-revision, not a git work tree). */
  rev: string | null;
  /** SRI sha256 of the tarball (NAR hash of the unpacked tree) when fetched, else null. */
  sha256: string | null;
  /** The URL fetched, when fetched. */
  url: string | null;
  /** "the checkout PATH" or "URL": said in messages and in a pin's source. */
  where: string;
}

/**
 * Where `source` is: an existing directory (a nixpkgs checkout), or a 40-hex revision fetched from `url` (default:
 * GitHub's tarball of the revision) with nix-prefetch-url, which also gives its sha256.
 * @throws PinError for a source that is neither, or a fetch that fails
 */
export async function resolveSource(source: string, opts: { rev?: string; url?: string } = {}): Promise<PinSource> {
  const asPath = resolve(process.cwd(), source);
  if (existsSync(asPath) && statSync(asPath).isDirectory()) {
    const rev = opts.rev ?? (await revisionOf(asPath));
    if (opts.rev !== undefined && !REV_RE.test(opts.rev)) throw new PinError(`--rev ${opts.rev}: expected a 40-hex nixpkgs revision`);
    return { path: asPath, rev, sha256: null, url: null, where: `the checkout ${asPath}` };
  }
  if (!REV_RE.test(source))
    throw new PinError(`${source}: neither a nixpkgs directory nor a 40-hex nixpkgs revision (e.g. 2c423e03bbafcff28bfadc6781a4a8257f205cb5)`);
  const url = opts.url ?? nixpkgsTarballUrl(source);
  const got = await prefetchTarball(url);
  return { path: got.path, rev: source, sha256: got.sha256, url, where: url };
}

/** The facts of one nixpkgs, and what was read them with. */
interface Inspection {
  source: PinSource;
  nixVersion: string;
  system: string | null;
  facts: PinFacts;
}

/** Read the facts of a resolved source. @throws PinError (Nix too old, evaluation failed) */
export async function inspect(source: PinSource, system?: string, extras: readonly string[] = []): Promise<Inspection> {
  const { facts, nixVersion } = await inspectNixpkgs(source.path, system, extras);
  return { source, nixVersion, system: system ?? null, facts };
}

/** Options shared by `pin check` and `pin cache`: which pins are given as checkouts, and whether others are fetched. */
interface ReachOptions {
  given: Record<string, string>;
  fetch: boolean;
  url?: (rev: string) => string;
}

/** A catalog pin's nixpkgs: the checkout given for it, else its revision fetched (unless fetching is off). */
async function reach(pin: NixpkgsPin, opts: ReachOptions): Promise<PinSource | { why: string }> {
  try {
    if (opts.given[pin.rev]) return await resolveSource(opts.given[pin.rev]!, { rev: pin.rev });
    if (opts.fetch) return await resolveSource(pin.rev, { url: opts.url?.(pin.rev) });
    return { why: "not given with --nixpkgs REV=PATH, and fetching is off (--no-fetch)" };
  } catch (e) {
    return { why: (e as Error).message.split("\n")[0]! };
  }
}

/** One catalog pin's outcome in `pin check`. */
type PinCheck =
  | { pin: NixpkgsPin; status: "checked"; comparison: PinComparison; where: string }
  | { pin: NixpkgsPin; status: "unreachable"; why: string };

/**
 * Check every pin of `cat` the user can reach: those given as `given[rev] = path`, and, unless `fetch` is false, the
 * others fetched by revision (whose fetched sha256 must equal the catalog's).
 * @returns one entry per catalog pin, in catalog order
 */
export async function checkPins(
  cat: Catalog,
  opts: ReachOptions & { system?: string },
): Promise<PinCheck[]> {
  const out: PinCheck[] = [];
  for (const pin of cat.nixpkgs) {
    const source = await reach(pin, opts);
    if ("why" in source) {
      out.push({ pin, status: "unreachable", why: source.why });
      continue;
    }
    const { facts } = await inspect(source, opts.system);
    const comparison = comparePin(pin, facts, cat);
    if (source.sha256 === null) {
      comparison.notes.push(`sha256 at ${pin.rev.slice(0, 7)}: not checked (a checkout is not the tarball; without --nixpkgs the revision is fetched and its hash compared)`);
    } else if (pin.sha256 !== null && !pin.sha256.startsWith("sha256-")) {
      comparison.notes.push(`sha256 at ${pin.rev.slice(0, 7)}: the catalog's is base32, not compared with ${source.sha256}`);
    } else {
      comparison.compared++;
      if (pin.sha256 !== source.sha256)
        comparison.differences.push({
          fact: "sha256",
          catalog: pin.sha256 ?? "none",
          nixpkgs: source.sha256,
          expr: `nix-prefetch-url --unpack ${source.url}`,
          message: `sha256: catalog says ${pin.sha256 ?? "none"} for ${pin.rev.slice(0, 7)}; the fetched tarball's is ${source.sha256}`,
        });
    }
    out.push({ pin, status: "checked", comparison, where: source.where });
  }
  return out;
}

/** A nixpkgs read beside the catalog's pins (`pin check --also`): what it is and the torch it carries. */
export interface BesideCheck {
  /** What the user gave: a revision or a checkout directory. */
  source: string;
  /** Its revision, when known (a fetched one, or a checkout's .git-revision / .git). */
  rev: string | null;
  /** The newest torch of its Python sets, or null when none has torch. */
  torch: string | null;
  /** Set when that torch is newer than every release the catalog knows (pin/facts.ts torchNewerThanCatalog). */
  newerTorch: { torch: string; newest: string } | null;
}

/**
 * Read a nixpkgs that is not a catalog pin (the user's: a revision, or a checkout) and say which torch it carries and
 * whether the catalog knows a release as new; `pin add SOURCE` is the way in for a newer one.
 * @throws PinError when the source cannot be read (neither a directory nor a revision, fetching off for a revision,
 *   a failed fetch or evaluation)
 */
export async function checkBeside(source: string, cat: Catalog, opts: { fetch: boolean; system?: string }): Promise<BesideCheck> {
  const asPath = resolve(process.cwd(), source);
  if (!opts.fetch && !(existsSync(asPath) && statSync(asPath).isDirectory()))
    throw new PinError(`--also ${source}: not a directory, and fetching a revision is off (--no-fetch)`);
  const { source: src, facts } = await inspect(await resolveSource(source), opts.system);
  return { source, rev: src.rev, torch: newestTorchOf(facts), newerTorch: torchNewerThanCatalog(facts, cat) };
}

/**
 * Read a revision and make its local catalog entry (`pin add`): the source must be a fetched revision, or a checkout
 * with `rev` and `sha256` known (a checkout's own tree is not the tarball, so its hash cannot be computed from it).
 * @throws PinError when the revision or hash is unknown, or the facts cannot make a pin
 */
export async function makePinEntry(
  source: PinSource,
  cat: Catalog,
  opts: { sha256?: string; date?: string; channel?: string; system?: string },
): Promise<{ entry: LocalPinEntry; inspection: Inspection }> {
  if (!source.rev) throw new PinError(`${source.where}: which revision is it? Pass --rev REV (it has no .git-revision and is not a git checkout)`);
  const sha256 = opts.sha256 ?? source.sha256;
  if (!sha256)
    throw new PinError(
      `${source.where}: the pin needs the tarball's sha256; pass --sha256 (what \`nix-prefetch-url --unpack ${nixpkgsTarballUrl(source.rev)}\` prints) or give the revision instead of a checkout`,
    );
  const inspection = await inspect(source, opts.system);
  const today = new Date().toISOString().slice(0, 10);
  const sha256Source = opts.sha256
    ? `given to variant-matrix pin add --sha256 on ${today}`
    : `nix-prefetch-url --unpack ${source.url} (variant-matrix pin add, ${today})`;
  try {
    const entry = pinEntryFromFacts(
      inspection.facts,
      { rev: source.rev, sha256, sha256Source, date: opts.date ?? null, channel: opts.channel ?? null, nixVersion: inspection.nixVersion, where: source.where },
      cat,
    );
    return { entry, inspection };
  } catch (e) {
    throw new PinError((e as Error).message);
  }
}

/** One answer of `pin cache`: does the binary cache hold torch's input `input` for (Python, CUDA), and does the model agree? */
interface CacheAnswer {
  python: string;
  cuda: string;
  /** The model's name of the input: nccl, nvshmem, magma, triton. */
  input: string;
  drv: string;
  /** The cache holds its outputs (Nix would fetch them, not build the derivation). */
  cached: boolean;
  /** What the model (model/cache-model.ts) says. */
  modelCached: boolean;
}

/** One catalog pin's outcome in `pin cache`. */
type PinCacheCheck =
  | { pin: NixpkgsPin; status: "checked"; where: string; answers: CacheAnswer[]; notes: string[] }
  | { pin: NixpkgsPin; status: "unreachable"; why: string };

/**
 * The (Python, CUDA) samples `pin cache` asks about at a pin: every Python set of the pin (those CI evaluation recurses
 * into and the others) with the default CUDA set, and the Python sets with the first other CUDA set torch accepts, so
 * each rule of the model is asked where it says "cached" and where it says "built". Pure.
 */
function cacheSamples(pin: NixpkgsPin): { python: string; cuda: string }[] {
  const accepted = pin.cuda.filter((c) => !(c in pin.brokenCuda));
  const def = pin.defaultCuda !== null && accepted.includes(pin.defaultCuda) ? pin.defaultCuda : null;
  const other = accepted.find((c) => c !== def) ?? null;
  return [def, other].filter((c): c is string => c !== null).flatMap((cuda) => pin.python.map((python) => ({ python, cuda })));
}

/**
 * Ask a binary cache (`substituter`, e.g. https://cache.nixos-cuda.org) whether it holds what the cache model says it
 * holds, at every catalog pin the user can reach: for each sample (cacheSamples), torch's NCCL, NVSHMEM, MAGMA and
 * triton derivations in the nixpkgs imported as the NixOS-CUDA Hydra imports it (pkgs/cache-samples.nix), each asked
 * with `nix-store --realise --dry-run --option substituters URL` (cached: Nix would not build it). Meaningful on
 * x86_64-linux, the only system that Hydra builds for.
 * @param nixOptions further `--option NAME VALUE` pairs (e.g. trusted-public-keys)
 */
export async function cachePins(
  cat: Catalog,
  opts: ReachOptions & { system?: string; substituter: string; nixOptions?: readonly (readonly [string, string])[] },
): Promise<PinCacheCheck[]> {
  const [{ cacheSampleDrvs }, { dryRealise }, { MODELLED_INPUTS, modelledInputsCached }] = await Promise.all([
    import("./nix.ts"),
    import("../driver/store.ts"),
    import("../model/cache-model.ts"),
  ]);
  const out: PinCacheCheck[] = [];
  for (const pin of cat.nixpkgs) {
    const source = await reach(pin, opts);
    if ("why" in source) {
      out.push({ pin, status: "unreachable", why: source.why });
      continue;
    }
    const samples = await cacheSampleDrvs(source.path, cacheSamples(pin), opts.system);
    const notes: string[] = [];
    const asks: Omit<CacheAnswer, "cached">[] = [];
    for (const s of samples) {
      if (s.torch === null) {
        notes.push(`python${s.python.replace(".", "")}Packages.torch with CUDA ${s.cuda} does not evaluate at ${pin.rev.slice(0, 7)}: not asked`);
        continue;
      }
      const model = modelledInputsCached(pin, s.python, s.cuda, cat);
      for (const [input, pname] of Object.entries(MODELLED_INPUTS) as [keyof typeof MODELLED_INPUTS, string][]) {
        const drv = s.deps[pname];
        if (drv) asks.push({ python: s.python, cuda: s.cuda, input, drv, modelCached: model[input] });
      }
    }
    const options = [["substituters", opts.substituter] as const, ...(opts.nixOptions ?? [])];
    const replies = await dryRealise(asks.map((a) => a.drv), options);
    const answers: CacheAnswer[] = [];
    asks.forEach((a, i) => {
      const r = replies[i]!;
      if ("error" in r) notes.push(`${a.drv}: ${r.error}`);
      else if (r.unreachable.length) notes.push(`${a.drv}: not asked, the substituter ${r.unreachable.join(", ")} cannot be reached`);
      else answers.push({ ...a, cached: !r.toBuild.includes(a.drv) });
    });
    out.push({ pin, status: "checked", where: source.where, answers, notes });
  }
  return out;
}
