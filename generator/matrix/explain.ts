/**
 * `explain NAME`: the resolved parameters of a variant, or why a name is not one, and the nearest names that exist.
 * Pure: works on a loaded Project.
 */
import { PACKAGES } from "../catalog/lib/packages.ts";
import { allowedAndClosest, nearestNames, sameExceptTag, shown, type Suggestion } from "./suggest.ts";
import { catalogAxes } from "../catalog/lib/axes.ts";
import { preferredPin } from "../catalog/lib/torch.ts";
import { expand } from "./expand.ts";
import { environmentOf, formatName, parseName, type NameParts } from "./naming.ts";
import { ENV_PACKAGE } from "../catalog/lib/packages.ts";
import type { Project } from "./project.ts";
import type { Excluded, Matrix, Variant } from "./schema.ts";

/** What `explain` found for a name. */
export type Explanation =
  | { kind: "variant"; variant: Variant }
  | {
      kind: "excluded" | "not-in-matrix" | "unknown";
      name: string;
      /** Why there is no such variant, in words. */
      reasons: string[];
      /** matrix.ts changes that would add it, when the catalog could build it. */
      matrixChanges: string[];
      nearest: Suggestion[];
    };

/**
 * The matrix widened to every catalog value (each release on the first pin that carries it), same policy; with
 * `hardware`, to that GPU (none: every GPU) and ISA only where the catalog knows them. Every combination is judged
 * on its own values, so the widened variants of that hardware are the same either way; expanding only them takes a
 * fraction of the time (the catalog's GPUs × ISAs are most of the widened matrix).
 */
function widenMatrix(p: Project, hardware?: { sm: string | null; isa: string }): Matrix {
  // Each release on its pin in matrix.ts, else the catalog's preferred pin; only pins with a tarball hash, since
  // nothing is generated from a pin without one.
  const releases = p.catalog.torch.flatMap((t) => {
    const own = p.matrix.releases.find((r) => r.torch === t.version && r.nixpkgs && r.sha256);
    if (own) return [{ torch: t.version, nixpkgs: own.nixpkgs!, sha256: own.sha256! }];
    const pin = preferredPin(p.catalog, t.version);
    return pin?.sha256 ? [{ torch: t.version, nixpkgs: pin.rev, sha256: pin.sha256 }] : [];
  });
  const axes = catalogAxes(p.catalog);
  const only = (values: string[], value: string | null | undefined) => (value != null && values.includes(value) ? [value] : values);
  return {
    ...p.matrix,
    releases,
    ...axes,
    gpus: only(axes.gpus, hardware?.sm),
    isas: only(axes.isas, hardware?.isa),
    cpuOnly: true,
    packages: [...PACKAGES],
    only: undefined,
  };
}

/** The non-variant kinds of `Explanation`. */
type NotAVariant = Exclude<Explanation, { kind: "variant" }>;

/**
 * Explain `name` against project `p`: the variant itself; else why it is none — a dropped combination, a name that
 * breaks the naming rule, a named environment matrix.ts does not define, or a name not in this matrix (and whether
 * the catalog could build it) — with the nearest names that exist. Pure; expands the widened matrix when needed.
 */
export function explainName(name: string, p: Project): Explanation {
  const variant = p.variants.find((v) => v.name === name);
  if (variant) return { kind: "variant", variant };
  const nearest = nearestNames(name, p.variants);
  const excluded = p.excluded.find((e) => e.name === name);
  if (excluded) return explainExcluded(excluded, p, nearest);
  const parts = parseName(name);
  if (!parts) return explainUnparsed(name, nearest);
  return explainUndefinedEnvironment(name, parts, p, nearest) ?? explainNotInMatrix(name, parts, p, nearest);
}

/**
 * A dropped combination: its reasons, and whether this matrix builds the same hardware or another CUDA version,
 * Python or release of the catalog would (with the matrix.ts changes for it).
 */
function explainExcluded(excluded: Excluded, p: Project, nearest: Suggestion[]): NotAVariant {
  const { variants } = expand(widenMatrix(p, excluded), p.catalog);
  const same = variants.filter(
    (v) => v.package === excluded.package && v.sm === excluded.sm && v.isa === excluded.isa && !p.variants.some((k) => sameExceptTag(parseName(k.name)!, parseName(v.name)!) && k.torchVersion === v.torchVersion),
  );
  const best = same.find((v) => v.python === excluded.python && !v.binaryCompat) ?? same.find((v) => !v.binaryCompat) ?? same[0];
  const reasons = [...excluded.reasons];
  const inMatrix = p.variants.find((v) => v.package === excluded.package && v.sm === excluded.sm && v.isa === excluded.isa);
  const matrixChanges = best && !inMatrix ? changesFor(best, p.matrix, releaseTag(p)) : [];
  if (inMatrix) reasons.push(`This matrix builds the same hardware as ${inMatrix.name}.`);
  else if (best)
    reasons.push(`The catalog can build this hardware with PyTorch ${best.torchVersion}, CUDA ${best.cuda ?? "none"}, Python ${best.python}${best.binaryCompat ? " (through binary compatibility)" : ""}.`);
  else if (excluded.sm && onSameSystem(p, excluded.sm, excluded.isa))
    reasons.push(`No release, CUDA version and nixpkgs pin in the catalog builds SM${excluded.sm} for ${excluded.isa} today.`);
  return { kind: "excluded", name: excluded.name, reasons, matrixChanges, nearest };
}

/** A name that does not follow the naming rule: an unknown package, or the rule itself. */
function explainUnparsed(name: string, nearest: Suggestion[]): NotAVariant {
  const loose = /^([a-z][a-z0-9-]*?)(\d*)-python\d+-(?:cuda\d+_\d+-sm\d+|cpu)-[a-z0-9_]+$/.exec(name);
  const pkg = loose?.[1];
  return {
    kind: "unknown",
    name,
    reasons: [
      pkg && !(PACKAGES as readonly string[]).includes(pkg)
        ? `"${pkg}" is not a package of the catalog; ${allowedAndClosest(pkg, PACKAGES, "packages")}.`
        : `${shown(name)} does not follow the naming rule {package}-python{PY}-cuda{X_Y}-sm{SM}-{ISA} or {package}-python{PY}-cpu-{ISA}.`,
    ],
    matrixChanges: [],
    nearest,
  };
}

/** A named environment matrix.ts does not define: say so (the catalog cannot know its extras); else null. */
function explainUndefinedEnvironment(name: string, parts: NameParts, p: Project, nearest: Suggestion[]): NotAVariant | null {
  const envName = environmentOf(parts.package);
  if (envName === null || parts.package === ENV_PACKAGE || envName in p.matrix.environments) return null;
  const defined = Object.keys(p.matrix.environments);
  return {
    kind: "not-in-matrix",
    name,
    reasons: [
      `matrix.ts defines no environment "${envName}" (${defined.length ? `its environments: ${defined.join(", ")}` : "it has no environments"}).`,
    ],
    matrixChanges: [`add ${envName}: [ nixpkgs Python attributes, e.g. "transformers" ] to environments`],
    nearest,
  };
}

/** Not in this matrix: judged against every catalog value, to say whether matrix.ts could add it and how. */
function explainNotInMatrix(name: string, parts: NameParts, p: Project, nearest: Suggestion[]): NotAVariant {
  const { variants, excluded: wideExcluded } = expand(widenMatrix(p, parts), p.catalog);
  const tagOf = (torch: string) => p.catalog.torch.find((t) => t.version === torch)!.nameTag;
  const matches = (n: string, torch: string) => {
    const q = parseName(n)!;
    return sameExceptTag(q, parts) && (parts.tag === "" || parts.tag === tagOf(torch));
  };
  const releasesInMatrix = new Set(p.matrix.releases.map((r) => r.torch));
  const candidates = variants
    .filter((v) => matches(v.name, v.torchVersion))
    .sort((a, b) => Number(releasesInMatrix.has(b.torchVersion)) - Number(releasesInMatrix.has(a.torchVersion)));
  const reasons: string[] = [];
  const matrixChanges: string[] = [];
  if (parts.tag !== "" && p.matrix.releases.length === 1)
    reasons.push(
      `This matrix holds one PyTorch release (${p.matrix.releases[0].torch}), so its names carry no release tag.`,
    );
  const v = candidates[0];
  if (v) {
    matrixChanges.push(...changesFor(v, p.matrix, releaseTag(p)));
    reasons.push(
      matrixChanges.length
        ? `Not in matrix.ts, but the catalog can build it (as ${nameInThisMatrix(v, p, matrixChanges)}${v.binaryCompat ? ", through binary compatibility" : ""}).`
        : `Not in this matrix.`,
    );
  } else {
    // The matrix's own releases (and their pins) first: a reason about a pin the matrix does not use misleads.
    const ex =
      wideExcluded.find((e) => matches(e.name, e.torchVersion) && releasesInMatrix.has(e.torchVersion)) ??
      wideExcluded.find((e) => matches(e.name, e.torchVersion));
    const unknownParts = unknownValues(parts, p);
    if (unknownParts.length) reasons.push(...unknownParts);
    else if (ex) reasons.push(...ex.reasons);
    else reasons.push(`No catalog value matches every part of ${shown(name)}.`);
  }
  return { kind: "not-in-matrix", name, reasons, matrixChanges, nearest };
}

/** The matrix.ts edits that would add variant `v` (computed against the widened matrix) to matrix `m`. */
function changesFor(v: Variant, m: Matrix, tagOf?: (torch: string) => string | undefined): string[] {
  const out: string[] = [];
  if (!m.releases.some((r) => r.torch === v.torchVersion && (r.nixpkgs ?? v.nixpkgs) === v.nixpkgs))
    out.push(
      `add { torch: "${v.torchVersion}", nixpkgs: "${v.nixpkgs}" } to releases` +
        (m.releases.length === 1 && tagOf
          ? ` (this renames every existing variant: with two releases each name carries its release, ` +
            `pytorch-… becomes pytorch${tagOf(m.releases[0]!.torch)}-…, and generate removes the old files)`
          : ""),
    );
  if (!m.python.includes(v.python)) out.push(`add "${v.python}" to python`);
  if (v.cuda && !m.cuda.includes(v.cuda)) out.push(`add "${v.cuda}" to cuda`);
  if (v.sm && !m.gpus.includes(v.sm)) out.push(`add "${v.sm}" to gpus`);
  if (!m.isas.includes(v.isa)) out.push(`add "${v.isa}" to isas`);
  if (!v.cuda && !m.cpuOnly) out.push(`set cpuOnly: true`);
  if (!m.packages.includes(v.package)) out.push(`add "${v.package}" to packages`);
  return out;
}

/**
 * The name `v` (from the widened matrix, whose names carry release tags) would have in this matrix after the changes:
 * without a tag while the matrix keeps one release.
 */
function nameInThisMatrix(v: Variant, p: Project, changes: readonly string[]): string {
  const adds = changes.some((c) => c.includes("to releases"));
  if (adds || p.matrix.releases.length !== 1) return v.name;
  const parts = parseName(v.name);
  return parts ? formatName({ ...parts, tag: "" }) : v.name;
}

/** The name tag of a PyTorch release of the catalog ("212" for 2.12.0). */
const releaseTag = (p: Project) => (torch: string) => p.catalog.torch.find((t) => t.version === torch)?.nameTag;

/**
 * The parts of a parsed name that are no value of the catalog at all, each as a sentence naming the value, the
 * allowed values (numbers in numeric order) and the closest ones (edit distance): "SM95 is not a GPU of the
 * catalog; SMs here: 70, …; closest: 90, 75."
 */
function unknownValues(parts: NameParts, p: Project): string[] {
  const out: string[] = [];
  const check = (value: string | null, allowed: string[], what: string, label: string) => {
    if (value !== null && !allowed.includes(value)) out.push(`${label} is not ${what} of the catalog; ${allowedAndClosest(value, allowed, what === "a GPU" ? "SMs" : "values")}.`);
  };
  const axes = catalogAxes(p.catalog);
  check(parts.python, axes.python, "a Python version", `Python ${parts.python}`);
  check(parts.cuda, axes.cuda, "a CUDA version", `CUDA ${parts.cuda}`);
  check(parts.sm, axes.gpus, "a GPU", `SM${parts.sm}`);
  check(parts.isa, axes.isas, "an ISA", `ISA ${parts.isa}`);
  const tags = p.catalog.torch.map((t) => t.nameTag);
  if (parts.tag !== "" && !tags.includes(parts.tag)) out.push(`release tag ${parts.tag} is not a PyTorch release of the catalog; ${allowedAndClosest(parts.tag, tags, "tags")}.`);
  return out;
}

/** True when GPU `sm` can sit in a host of ISA `isa`'s system (ARCHITECTURE.md rule 5). */
function onSameSystem(p: Project, sm: string, isa: string): boolean {
  const system = p.catalog.isas.find((i) => i.key === isa)?.system;
  return !!system && !!p.catalog.gpus.find((g) => g.sm === sm)?.systems.includes(system);
}
