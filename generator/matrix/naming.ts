/**
 * Format and parse package variant names (README "Names"); `parseName(formatName(p))` returns `p`.
 *
 *   {package}{tag}-python{PY}-cuda{CUDA}-sm{SM}-{ISA}   torchaudio-python313-cuda12_8-sm121-armv9
 *   {package}{tag}-python{PY}-cpu-{ISA}                 pytorch-python313-cpu-avx2
 *
 * `package` is one of PACKAGES: `pytorch`, a package built on torch (generator/catalog/packages.ts) or the
 * environment `torch-env` (torch-env-python313-cuda12_8-sm121-armv9), or a named environment of matrix.ts
 * `environments`, `{NAME}-env` (llm-env-python313-cuda13_0-sm121-armv9: the torch stack plus NAME's extras; NAME is
 * lower-case letters and digits, so `torch-env` is the environment named `torch`, the stack alone). `PY` is major+minor without the dot, `CUDA` writes the dot as `_`, `ISA` is a catalog key (a dot in a flox
 * package name would become a quoted attribute, so `armv8.2` is spelled `armv8_2`). `tag` is empty when the
 * matrix holds one PyTorch release, and the release's `nameTag` ("29" for 2.9.x) when it holds several.
 */
import { PACKAGES, type PackageName } from "../catalog/lib/packages.ts";

/** The parts of a variant name. `cuda`/`sm` are both null for a CPU-only variant. */
export interface NameParts {
  package: PackageName;
  /** Release tag ("29") or "" when the name carries no release. */
  tag: string;
  /** "3.13" */
  python: string;
  /** "12.8" or null */
  cuda: string | null;
  /** "121" or null */
  sm: string | null;
  /** "armv9" */
  isa: string;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
/** The package word of a named environment: `{NAME}-env` (schema.ts ENVIRONMENT_NAME_RE for NAME). */
const ENV_PACKAGE_RE_SOURCE = "[a-z][a-z0-9]*-env";
const NAME_RE = new RegExp(
  `^(${[...PACKAGES].sort((a, b) => b.length - a.length).map(escape).join("|")}|${ENV_PACKAGE_RE_SOURCE})(\\d*)-python(\\d)(\\d+)-(?:cuda(\\d+)_(\\d+)-sm(\\d{2,3})|cpu)-([a-z0-9]+(?:_[a-z0-9]+)*)$`,
);

/**
 * Format a variant name.
 * @throws Error when only one of `cuda`/`sm` is set, or a part contains characters a flox name cannot hold.
 */
export function formatName(p: NameParts): string {
  if ((p.cuda === null) !== (p.sm === null)) throw new Error(`formatName: cuda and sm must both be set or both null`);
  const [maj, min] = p.python.split(".");
  const gpu = p.cuda === null ? "cpu" : `cuda${p.cuda.replace(".", "_")}-sm${p.sm}`;
  const name = `${p.package}${p.tag}-python${maj}${min}-${gpu}-${p.isa}`;
  if (!NAME_RE.test(name)) throw new Error(`formatName: cannot format a valid name from ${JSON.stringify(p)}`);
  return name;
}

/** Parse a variant name; returns null when `name` does not follow the naming rule. */
export function parseName(name: string): NameParts | null {
  const m = NAME_RE.exec(name);
  if (!m) return null;
  const [, pkg, tag, pyMaj, pyMin, cudaMaj, cudaMin, sm, isa] = m;
  return {
    package: pkg as PackageName,
    tag,
    python: `${pyMaj}.${pyMin}`,
    cuda: cudaMaj === undefined ? null : `${cudaMaj}.${cudaMin}`,
    sm: sm ?? null,
    isa,
  };
}

/**
 * A combination's name without package and release tag, as matrix.ts `only` lists it:
 * "python313-cuda12_8-sm90-avx512bf16", "python313-cpu-avx2" (the variant name after "pytorch-").
 */
export function formatCombination(p: Omit<NameParts, "package" | "tag">): string {
  return formatName({ ...p, package: "pytorch", tag: "" }).slice("pytorch-".length);
}

/** Parse a combination name (see formatCombination); null when it does not follow the naming rule. */
export function parseCombination(name: string): Omit<NameParts, "package" | "tag"> | null {
  const p = parseName(`pytorch-${name}`);
  if (!p || p.tag !== "") return null;
  const { python, cuda, sm, isa } = p;
  return { python, cuda, sm, isa };
}

/** The package word of named environment `name`: "llm" → "llm-env". */
export function environmentPackage(name: string): string {
  return `${name}-env`;
}

/** The environment name of an environment package word ("llm-env" → "llm", "torch-env" → "torch"), or null. */
export function environmentOf(pkg: string): string | null {
  const m = /^([a-z][a-z0-9]*)-env$/.exec(pkg);
  return m ? m[1]! : null;
}

/**
 * The packages of a variant's closure that the catalog describes: its own package and the package of every variant it
 * is built on or holds (`dependsOn`: pytorch; an environment's members), each once. Names that do not parse are skipped.
 */
export function closurePackages(v: { package: string; dependsOn: readonly string[] }): string[] {
  return [...new Set([v.package, ...v.dependsOn.flatMap((n) => parseName(n)?.package ?? [])])];
}

/** The pytorch variant a package built on torch (or the environment) of these parts is built against. */
export function torchSiblingName(p: NameParts): string {
  return formatName({ ...p, package: "pytorch" });
}
