/**
 * The rules over the catalog's packages (the table of packages built on torch, catalog/packages.ts; the extras of named
 * environments, catalog/extras.ts; the versions nixpkgs marks insecure, catalog/advisories.ts; the default build
 * times, `defaultBuildTable`), and the package names
 * every layer checks and writes (PACKAGES: the naming rule, option choices, the matrix schema). Each rule reads the
 * `Catalog` value it is handed (`cat`, the built-in one or one with a local-catalog.json), never a table; the names
 * derive from the package table's rows, which local-catalog.json does not extend (it adds releases only).
 */
import { compareVersions, majorMinor } from "../../versions.ts";
import { packagesOnTorch } from "../packages.ts";
import { cudaBuildIn, releaseIn, type CudaBuildAsk, type PackageCudaBuild } from "./cuda-build.ts";
import type { ArchListEra, Catalog, DeviceTargets, ExtraFact, OnTorchRelease, PackageOnTorch } from "../schema.ts";

/** The name of the environment variant's package part: `torch-env-python313-cuda12_8-sm121-armv9`. */
export const ENV_PACKAGE = "torch-env";
/** The root package: torch itself. */
export const TORCH_PACKAGE = "pytorch";

/**
 * The package variants the generator writes per kept combination, in build order: `pytorch`, each package built on
 * torch of this table, and the environment of them (`torch-env`).
 */
export const PACKAGES: readonly string[] = [TORCH_PACKAGE, ...packagesOnTorch.map((p) => p.name), ENV_PACKAGE];

/** matrix.ts `packages` when left out: PACKAGES but the opt-in ones (`optIn`: flash-attn, xformers, bitsandbytes, vllm). */
export const DEFAULT_PACKAGES: readonly string[] = PACKAGES.filter((n) => !packagesOnTorch.find((p) => p.name === n)?.optIn);

/** A package variant kind: one of PACKAGES ("pytorch", "torchaudio", "torchvision", "torch-env"). */
export type PackageName = string;

/**
 * The catalog's row of a package on torch (`cat.packagesOnTorch`, the built-in table plus local-catalog.json's
 * releases), or undefined for `pytorch`, the environment or an unknown name.
 */
export function onTorch(cat: Pick<Catalog, "packagesOnTorch">, name: string): PackageOnTorch | undefined {
  return cat.packagesOnTorch.find((p) => p.name === name);
}

/**
 * The row of package `name` in the catalog's table of packages built on torch.
 * @throws Error when the table has no such package (a name the generator itself uses: a bug, not user input)
 */
export function packageOnTorch(cat: Pick<Catalog, "packagesOnTorch">, name: string): PackageOnTorch {
  const p = onTorch(cat, name);
  if (!p) throw new Error(`catalog: no package built on torch named ${name}`);
  return p;
}

/** Whether a release serves PyTorch `torchVersion` ("2.12.0"): its minor is within `servesTorch`. */
export function releaseServes(r: Pick<OnTorchRelease, "servesTorch">, torchVersion: string): boolean {
  const v = majorMinor(torchVersion);
  return compareVersions(v, r.servesTorch.min) >= 0 && (r.servesTorch.below === null || compareVersions(v, r.servesTorch.below) < 0);
}

/** The release of `pkg` that a version ("0.27.1") belongs to: exact, else its series ("0.27"); undefined if none. */
export function releaseOf(pkg: PackageOnTorch, version: string): OnTorchRelease | undefined {
  return releaseIn(pkg.releases, version);
}

/** The `archList` era of a package version (the last era whose `from` ≤ its minor), or undefined. */
export function archListEra(pkg: PackageOnTorch, version: string): ArchListEra | undefined {
  const m = majorMinor(version);
  return [...pkg.archList].reverse().find((e) => compareVersions(m, e.from) >= 0);
}

/**
 * What flash-attn-style `ownList` targets compile for a value of their variable, as setup.py and torch do it: the
 * recognised tokens' SASS; with none recognised and a `fallback`, TORCH_CUDA_ARCH_LIST's entries (torch's
 * cpp_extension); else nothing. E.g. FLASH_ATTN_CUDA_ARCHS "86" with TORCH_CUDA_ARCH_LIST "8.6" → ["sm_86"],
 * "86;90" → ["sm_90"] (the H100 recording tests/fixtures/probes/h100-real-builds/fa-*).
 */
export function ownListSass(t: Extract<DeviceTargets, { kind: "ownList" }>, value: string, torchArchList: string, cuda: string): string[] {
  const given = value.split(";").map((x) => x.trim());
  const hit = t.tokens.filter((k) => given.includes(k.token) && compareVersions(cuda, k.minCuda) >= 0);
  if (hit.length) return hit.map((k) => `sm_${k.token}`);
  if (!t.fallback) return [];
  return torchArchList.split(/[;\s]+/).filter(Boolean).map((e) => `sm_${e.replace(/\+PTX$/, "").replace(".", "")}`);
}

/**
 * What a CUDA build of package `p` is handed and holds for `ask` (its version, capabilities ["8.6"], CUDA "12.8" and
 * the variant's torch "2.11.0", in the Variant's field names: a CUDA Variant of `p` fits), from the release's
 * `targets` (see DeviceTargets), or the reason no build of this release can serve them (a capability no token serves,
 * a CUDA the release refuses, code that fails on the capability, a TORCH_CUDA_ARCH_LIST entry the variant's torch
 * refuses with none to serve it; without `torchVersion` its cpp_extension's accepted entries are not checked). The
 * rule is generator/catalog/lib/cuda-build.ts `cudaBuildIn` (shared with the Nix checks' bundle), with the catalog's
 * torch-arch lists (`cat.torchArchLists`).
 * @returns a PackageCudaBuild, or { reason } (a sentence naming the release, the capability or CUDA, and the source).
 */
export function cudaBuildOf(cat: Pick<Catalog, "torchArchLists">, p: PackageOnTorch, ask: CudaBuildAsk): PackageCudaBuild | { reason: string } {
  return cudaBuildIn(p, ask, cat.torchArchLists);
}

/**
 * What package `p` builds for a combination (`ask` as cudaBuildOf's, with `cuda` null for CPU-only), or why it
 * cannot: a CPU-only combination of a package with `cudaOnly` is refused; a CUDA one is `cudaBuildOf`'s answer (with
 * the variant's torch `torchVersion`, for the TORCH_CUDA_ARCH_LIST entries its cpp_extension accepts).
 * @returns { build } (null for a CPU-only build) or { reason }
 */
export function packageBuildFor(
  cat: Pick<Catalog, "torchArchLists">,
  p: PackageOnTorch,
  ask: Omit<CudaBuildAsk, "cuda"> & { cuda: string | null },
): { build: PackageCudaBuild | null } | { reason: string } {
  const { cuda } = ask;
  if (cuda === null) return p.cudaOnly ? { reason: `${p.label} has no CPU-only build: ${p.cudaOnly}.` } : { build: null };
  const b = cudaBuildOf(cat, p, { ...ask, cuda });
  return "reason" in b ? b : { build: b };
}

/** A catalog fix in words, as explain's rows and a variant's notes print it: "ATTR: CHANGE (WHY; SOURCE)". */
export function fixText(f: NonNullable<PackageOnTorch["fixes"]>[number]): string {
  return `${f.attr}: ${f.change} (${f.why}; ${f.source})`;
}

/** The caveats of package `p` that hold for a variant with CUDA `cuda` (null: CPU-only) on `system`, in the catalog's order. */
export function caveatsFor(p: Pick<PackageOnTorch, "caveats">, cuda: string | null, system: string): string[] {
  return (p.caveats ?? [])
    .filter((cv) => (cv.system === undefined || cv.system === system) && (cv.minCuda === undefined || (cuda !== null && compareVersions(cuda, cv.minCuda) >= 0)))
    .map((cv) => cv.note);
}

/**
 * nixpkgs' own verdict against a variant's CUDA build: for each of `packages` (the variant's package and those it is
 * built on or holds, matrix/naming.ts closurePackages) whose catalog fix at nixpkgs `at.rev` with CUDA `at.cuda` on
 * `at.system` unbreaks it (`apply: "unbreak"`: that nixpkgs marks it broken), one warning from the catalog's words (the
 * fix's why, change and source, then the package's caveats). The one wording `explain`, `detect` and `install` print;
 * [] for a CPU-only variant or packages nixpkgs does not mark broken there.
 */
export function nixpkgsBrokenWarnings(
  cat: Pick<Catalog, "packagesOnTorch">,
  packages: readonly string[],
  at: { rev: string; cuda: string | null; system: string },
): string[] {
  return cat.packagesOnTorch
    .filter((p) => packages.includes(p.name))
    .flatMap((p) =>
      fixesFor(p, at.rev, at.cuda, at.system)
        .filter((f) => f.apply === "unbreak")
        .map((f) =>
          [`nixpkgs calls ${p.label}'s CUDA build broken at this revision; this project builds it anyway with ${fixText(f)}`, ...caveatsFor(p, at.cuda, at.system)].join(". ") + ".",
        ),
    );
}

/** A dependency a package variant rebuilds (rebuiltDependencies). */
export interface RebuiltDependency {
  /** Its attribute in the variant's Python set ("bitsandbytes", "cupy"). */
  attr: string;
  /** The catalog fix that names it, as explain prints it (fixText). */
  fix: string;
  /** Its build time: the catalog's figure for the package of that name; null when the catalog has none (unknown). */
  seconds: number | null;
  /** Where `seconds` comes from, or why it is unknown. */
  source: string;
}

/**
 * The packages of its Python set a variant of `p` at nixpkgs `rev` with CUDA `cuda` on `system` has built besides
 * itself: the attribute of each catalog fix of `p` that concerns it (fixesFor, the rows explain prints) other than
 * `p`'s own. A fixed dependency is a derivation no binary cache holds: overridden (bitsandbytes with cuda_crt, cupy on
 * the variant's cudaPackages) or built with CUDA on the variant's torch (flashinfer), so it is built here, before `p`.
 * Each with the catalog's build time of the package of that name (`buildSeconds`, with its source), or seconds null
 * where the catalog has no sourced figure: unknown, never a number made up.
 */
export function rebuiltDependencies(
  cat: Pick<Catalog, "packagesOnTorch">,
  p: Pick<PackageOnTorch, "attr" | "fixes">,
  at: { rev: string; cuda: string | null; system: string },
): RebuiltDependency[] {
  const fixes = fixesFor(p, at.rev, at.cuda, at.system).filter((f) => f.attr !== p.attr);
  // One build per attribute, however many of its fixes concern the variant.
  return fixes
    .filter((f, i) => fixes.findIndex((g) => g.attr === f.attr) === i)
    .map((f) => {
      const known = cat.packagesOnTorch.find((q) => q.attr === f.attr);
      return known
        ? { attr: f.attr, fix: fixText(f), seconds: known.buildSeconds.seconds, source: known.buildSeconds.source }
        : { attr: f.attr, fix: fixText(f), seconds: null, source: `no sourced build time for ${f.attr} in the catalog (catalog/packages.ts buildSeconds covers the packages built on torch)` };
    });
}

/**
 * The catalog's fixes of package `p` (catalog/packages.ts `fixes`) that concern a variant at nixpkgs `rev` with CUDA
 * `cuda` (null: CPU-only, where none does) on `system`: each fix whose `when` holds.
 */
export function fixesFor(p: Pick<PackageOnTorch, "fixes">, rev: string, cuda: string | null, system: string): NonNullable<PackageOnTorch["fixes"]> {
  if (cuda === null) return [];
  return (p.fixes ?? []).filter(({ when: w }) =>
    (w.pins === undefined || w.pins.includes(rev)) &&
    (w.minCuda === undefined || compareVersions(cuda, w.minCuda) >= 0) &&
    (w.belowCuda === undefined || compareVersions(cuda, w.belowCuda) < 0) &&
    (w.system === undefined || w.system === system),
  );
}

/** The catalog's facts about extra `attr` (`cat.extras`: this table plus local-catalog.json's), or undefined when it has none. */
export function extraFact(cat: Pick<Catalog, "extras">, attr: string): ExtraFact | undefined {
  return cat.extras.find((e) => e.attr === attr);
}

/**
 * One line per extra for `explain` and the environment's notes: what its name promises and whether its device code is
 * judged. Unknown extras say so.
 */
export function extraPromise(cat: Pick<Catalog, "extras">, attr: string): { judged: boolean; line: string } {
  const f = extraFact(cat, attr);
  if (!f)
    return {
      judged: false,
      line: `${attr}: its version, and that it imports on the variant's torch; not in the catalog (generator/catalog/extras.ts), so its device code, if it has any, is not judged`,
    };
  if (f.deviceCode === "none") return { judged: true, line: `${attr}: ${f.promise}` };
  return { judged: false, line: `${attr}: ${f.promise}` };
}

/**
 * What a variant of `pkg` at version `version` from nixpkgs `rev` must know about nixpkgs' insecure mark (Python `py`,
 * "3.13", names the package "python3.13-vllm-0.16.0"): null when no row concerns it or the version is not affected.
 */
export function insecureNote(cat: Pick<Catalog, "knownVulnerable">, pkg: { name: string; label: string }, version: string, rev: string, py: string): string | null {
  const row = cat.knownVulnerable.find((r) => r.package === pkg.name);
  if (!row || !/^\d+(\.\d+)*$/.test(version) || compareVersions(version, row.below) >= 0) return null;
  const name = `python${py}-${pkg.name}-${version}`;
  const pin = row.pins[rev];
  const head = `${pkg.label} ${version} is below ${row.below}, which fixes ${row.advisories.map((a) => a.split(" (")[0]).join(", ")}`;
  const permit = `nixpkgs.config.permittedInsecurePackages = [ "${name}" ] lets it evaluate (this project does not add it)`;
  if (pin?.marks === "yes") return `${head}; nixpkgs ${rev.slice(0, 7)}'s file marks it insecure, so evaluation refuses it unless ${permit}.`;
  if (pin?.marks === "no") return `${head}; nixpkgs ${rev.slice(0, 7)} predates ${row.markedBy.pr}, which marked it insecure (${pin.why}).`;
  return (
    `${head}; nixpkgs marked it insecure on ${row.markedBy.branch} with ${row.markedBy.pr} (after ${row.markedBy.after}), and whether ` +
    `nixpkgs ${rev.slice(0, 7)}'s file does is not known (${pin?.why ?? "not read"}): if evaluation refuses it as insecure, ${permit}.`
  );
}

/**
 * What the build-time rule reads of a catalog: `Catalog.buildSeconds` (catalog/binary-cache.ts BUILD_SECONDS) and each
 * package's `buildSeconds`. local-catalog.json extends neither (it adds releases, not packages), so the build plan's
 * model reads the built-in catalog's (catalog/lib/built-in.ts), where zod is not loaded too.
 */
export type BuildTimes = Pick<Catalog, "buildSeconds" | "packagesOnTorch">;

/** A duration in seconds with where it comes from. */
export interface SourcedSeconds {
  seconds: number;
  source: string;
}

/**
 * The default build time of each package the catalog names, by package: torch's CUDA figure for `pytorch` (one
 * capability, at its cores), each package built on torch its row's `buildSeconds`, the environment's for `torch-env`.
 */
export function defaultBuildTable(cat: BuildTimes): Record<string, SourcedSeconds> {
  const { torchCuda, environment } = cat.buildSeconds;
  return {
    [TORCH_PACKAGE]: { seconds: torchCuda.seconds, source: torchCuda.source },
    ...Object.fromEntries(cat.packagesOnTorch.map((p) => [p.name, p.buildSeconds])),
    [ENV_PACKAGE]: environment,
  };
}
