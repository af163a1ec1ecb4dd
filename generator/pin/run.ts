/**
 * One call per action of `pin` (inspect, check, add, cache), each taking the parsed options and returning data: the
 * catalogs beside matrix.ts, the checkouts given with --nixpkgs REV=PATH, the checks of --extra, --date, --channel and
 * --sha256, and whether check or cache found a difference or reached no pin. The command (generator/commands/pin.ts)
 * parses the options and prints what these return; the reading itself is actions.ts.
 */
import { dirname, resolve } from "node:path";
import { clip, UsageError } from "../errors.ts";
import { NIX_ATTR_RE } from "../constants.ts";
import { REPO_ROOT } from "../paths.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { LocalPinEntry } from "../catalog/local.ts";
import { cudaCacheSubstituter } from "../catalog/lib/binary-cache.ts";
import { PinError } from "./nix.ts";
import type { BesideCheck } from "./actions.ts";
import type { PinFacts } from "./facts.ts";

/** The catalog as built in, the catalog with the local catalog beside matrix.ts merged in, and that directory. */
export interface PinCatalogs {
  builtIn: Catalog;
  cat: Catalog;
  /** The directory of matrix.ts, where local-catalog.json is read and written. */
  dir: string;
}

/**
 * The catalogs for `matrixFile` (an absolute path; default: the repository's matrix.ts): the built-in one, and the one
 * with local-catalog.json beside it merged in.
 * @throws InputError for a local catalog that does not parse (catalog/local.ts)
 */
export async function pinCatalogs(matrixFile: string = resolve(REPO_ROOT, "matrix.ts")): Promise<PinCatalogs> {
  const [{ catalog }, { withLocalCatalog }] = await Promise.all([import("../catalog/index.ts"), import("../catalog/local.ts")]);
  return { builtIn: catalog, cat: withLocalCatalog(catalog, dirname(matrixFile)), dir: dirname(matrixFile) };
}

/**
 * `--nixpkgs REV=PATH` occurrences: the checkout of each catalog pin given, by revision.
 * @throws UsageError for an occurrence that is not REV=PATH or whose REV is no pin of the catalog
 */
export function givenCheckouts(specs: readonly string[] | undefined, cat: Pick<Catalog, "nixpkgs">): Record<string, string> {
  const given: Record<string, string> = {};
  for (const spec of specs ?? []) {
    const m = spec.match(/^([0-9a-f]{40})=(.+)$/);
    if (!m) throw new UsageError(`--nixpkgs ${spec}: expected REV=PATH (a 40-hex revision, '=', a nixpkgs checkout)`);
    if (!cat.nixpkgs.some((p) => p.rev === m[1])) throw new UsageError(`--nixpkgs ${spec}: ${m[1]} is not a pin of the catalog (known: ${cat.nixpkgs.map((p) => p.rev.slice(0, 7)).join(", ")})`);
    given[m[1]!] = m[2]!;
  }
  return given;
}

/** check and cache reached no pin at all (exit 2): the error the command throws after printing each pin's why. */
function noPinReached(): PinError {
  return new PinError("no pin of the catalog could be read: give checkouts with --nixpkgs REV=PATH, or allow fetching");
}

/** What `pin inspect` found: where the nixpkgs is, what read it, its facts, and a torch newer than the catalog knows. */
export interface PinInspection {
  source: { path: string; rev: string | null; sha256: string | null; url: string | null };
  nixVersion: string;
  system: string | null;
  facts: PinFacts;
  /** The torch of the nixpkgs when newer than every release the catalog beside the repository's matrix.ts knows. */
  newerTorch: { torch: string; newest: string } | null;
}

/**
 * `pin inspect SOURCE`: the facts of a nixpkgs (a 40-hex revision, fetched, or a checkout directory) as the user's Nix
 * reads them, with `extras` (nixpkgs Python attribute names) read in every Python set.
 * @throws UsageError for an extra that is not a nixpkgs attribute name; PinError for a source that cannot be read
 */
export async function inspectPin(o: { source: string; rev?: string; url?: string; system?: string; extras?: readonly string[] }): Promise<PinInspection> {
  const [run, { torchNewerThanCatalog }] = await Promise.all([import("./actions.ts"), import("./facts.ts")]);
  const extras = o.extras ?? [];
  const badExtra = extras.find((e) => !NIX_ATTR_RE.test(e));
  if (badExtra !== undefined) throw new UsageError(`--extra: "${badExtra}" is not a nixpkgs attribute name`);
  const src = await run.resolveSource(o.source, { rev: o.rev, url: o.url });
  const ins = await run.inspect(src, o.system, extras);
  // A torch newer than the catalog knows: the user's nixpkgs moved past it, and pin add is the way in.
  // (inspect takes no --matrix: the catalog beside the repository's matrix.ts.)
  const newerTorch = torchNewerThanCatalog(ins.facts, (await pinCatalogs()).cat);
  return { source: { path: src.path, rev: src.rev, sha256: src.sha256, url: src.url }, nixVersion: ins.nixVersion, system: ins.system, facts: ins.facts, newerTorch };
}

/** Which catalog pins `pin check` and `pin cache` read, and how. */
export interface PinReachOptions {
  /** Absolute path of matrix.ts (default: the repository's), beside which local-catalog.json is read. */
  matrixFile?: string;
  /** `--nixpkgs REV=PATH` occurrences. */
  nixpkgs?: readonly string[];
  /** Fetch the pins not given as checkouts. */
  fetch: boolean;
  system?: string;
}

/** Outcome of `pin check`: one result per catalog pin, the nixpkgs read beside them, and the exit status's facts. */
export interface PinCheckReport {
  results: Awaited<ReturnType<typeof import("./actions.ts").checkPins>>;
  beside: BesideCheck[];
  /** A reached pin's facts differ from the catalog's (exit 1). */
  differs: boolean;
  /** Set when no pin was reached and nothing was read beside them (exit 2), to be thrown once the results are shown. */
  error: PinError | null;
}

/**
 * `pin check`: compare every catalog pin's facts with what the user's Nix reads, and read each of `also` (a revision
 * or checkout that is no pin) beside them.
 * @throws UsageError for a bad --nixpkgs; PinError for an `also` that cannot be read
 */
export async function checkCatalogPins(o: PinReachOptions & { also?: readonly string[] }): Promise<PinCheckReport> {
  const [run, { cat }] = await Promise.all([import("./actions.ts"), pinCatalogs(o.matrixFile)]);
  const given = givenCheckouts(o.nixpkgs, cat);
  const results = await run.checkPins(cat, { given, fetch: o.fetch, system: o.system });
  const checked = results.filter((r) => r.status === "checked");
  const beside = await Promise.all((o.also ?? []).map((src) => run.checkBeside(src, cat, { fetch: o.fetch, system: o.system })));
  return {
    results,
    beside,
    differs: checked.some((r) => r.status === "checked" && r.comparison.differences.length > 0),
    error: !checked.length && !beside.length ? noPinReached() : null,
  };
}

/** Outcome of `pin cache`: one result per catalog pin, and the exit status's facts. */
export interface PinCacheReport {
  results: Awaited<ReturnType<typeof import("./actions.ts").cachePins>>;
  /** A reached pin's answers differ from the cache model, or it got no answer (exit 1). */
  differs: boolean;
  /** Set when no pin was reached (exit 2), to be thrown once the results are shown. */
  error: PinError | null;
}

/**
 * `pin cache`: ask `substituter` (left out: the catalog's NixOS-CUDA cache, catalog/lib/binary-cache.ts
 * cudaCacheSubstituter) at every catalog pin whether it holds what the cache model says it holds (actions.ts cachePins).
 * @param nixOptions `--option NAME VALUE` pairs for nix-store, parsed from --nix-option
 * @throws UsageError for a bad --nixpkgs
 */
export async function askCacheAtPins(o: PinReachOptions & { substituter?: string; nixOptions?: readonly (readonly [string, string])[] }): Promise<PinCacheReport> {
  const [run, { cat }] = await Promise.all([import("./actions.ts"), pinCatalogs(o.matrixFile)]);
  const given = givenCheckouts(o.nixpkgs, cat);
  const results = await run.cachePins(cat, { given, fetch: o.fetch, system: o.system, substituter: o.substituter ?? cudaCacheSubstituter(cat).url, nixOptions: o.nixOptions });
  const checked = results.filter((r) => r.status === "checked");
  return {
    results,
    differs: checked.some((r) => r.status === "checked" && (r.answers.some((a) => a.cached !== a.modelCached) || !r.answers.length)),
    error: checked.length ? null : noPinReached(),
  };
}

/** The fields `pin add` writes that the user may give. */
interface AddFields {
  date?: string;
  channel?: string;
  sha256?: string;
}

/**
 * The fields `pin add` writes into local-catalog.json (and so into BUILD_MATRIX.md), checked before anything is
 * fetched or written: --date a real calendar date YYYY-MM-DD, --channel a channel name (catalog/schema.ts CHANNEL_RE:
 * no space, newline or escape), --sha256 a hash Nix's fetchTarball takes. Each error names the option and its form.
 * @throws UsageError for the first field that is not of its form
 */
function checkAddFields(
  o: AddFields,
  schema: Pick<typeof import("../catalog/schema.ts"), "SHA256_RE" | "CHANNEL_RE" | "CHANNEL_FORM" | "isCalendarDate" | "DATE_FORM">,
): void {
  const nothing = "(nothing written)";
  if (o.date !== undefined && !schema.isCalendarDate(o.date)) throw new UsageError(`--date "${clip(o.date)}": expected ${schema.DATE_FORM} ${nothing}`);
  if (o.channel !== undefined && !schema.CHANNEL_RE.test(o.channel)) throw new UsageError(`--channel "${clip(o.channel)}": expected ${schema.CHANNEL_FORM} ${nothing}`);
  if (o.sha256 !== undefined && !schema.SHA256_RE.test(o.sha256))
    throw new UsageError(`--sha256 "${clip(o.sha256)}": expected an SRI sha256 (sha256-…=) or 52 Nix base32 characters, as nix-prefetch-url --unpack prints ${nothing}`);
}

/**
 * `pin add SOURCE`: read the pin's facts and add it (and a PyTorch or torchaudio release the catalog does not know) to
 * local-catalog.json beside `matrixFile` (default: the repository's matrix.ts).
 * @returns the entry written and the file it went to
 * @throws UsageError for a bad --date, --channel or --sha256 (nothing fetched or written); InputError for a revision
 *   the catalog already pins; PinError for a source that cannot be read or made a pin
 */
export async function addPin(o: AddFields & { source: string; rev?: string; url?: string; system?: string; matrixFile?: string }): Promise<{ entry: LocalPinEntry; file: string }> {
  const [run, { addLocalEntry, assertNotPinned }, schema, { builtIn, cat, dir }] = await Promise.all([
    import("./actions.ts"),
    import("../catalog/local.ts"),
    import("../catalog/schema.ts"),
    pinCatalogs(o.matrixFile),
  ]);
  // The fields are checked first: nothing is fetched or written for a pin add that would be refused.
  checkAddFields(o, schema);
  // A revision the catalog already pins is said before anything is downloaded.
  const rev = o.rev ?? (/^[0-9a-f]{40}$/.test(o.source) ? o.source : undefined);
  if (rev !== undefined) assertNotPinned(builtIn, dir, rev);
  const src = await run.resolveSource(o.source, { rev: o.rev, url: o.url });
  const { entry } = await run.makePinEntry(src, cat, { sha256: o.sha256, date: o.date, channel: o.channel, system: o.system });
  return { entry, file: addLocalEntry(builtIn, dir, entry) };
}
