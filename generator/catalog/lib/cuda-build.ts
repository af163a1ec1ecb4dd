/**
 * What a CUDA build of a package on torch is handed and holds for a variant's capabilities, as pure functions of the
 * facts they read (the release's device targets and CUDA range, torch's accepted TORCH_CUDA_ARCH_LIST entries).
 *
 * Code only, no table: the catalog (generator/catalog/lib/packages.ts `cudaBuildOf`, catalog/lib/torch.ts) calls it
 * with its own entries, and the Nix checks' bundle (pkgs/verify-compare.mjs, through generator/verify/origins.ts)
 * with the same facts read from pkgs/verify-facts.json, so a catalog edit changes that data and never the bundle.
 * The types below name only the fields these functions read; a full catalog entry fits them.
 */
import { capabilityRunsOn } from "./capability.ts";
import { compareVersions, majorMinor } from "../../versions.ts";

/** What one torch minor's cpp_extension accepts in TORCH_CUDA_ARCH_LIST (catalog/torch-arch-list.ts has the sources). */
export interface ArchListFacts {
  /** torch MAJOR.MINOR ("2.11"). */
  torch: string;
  /** Every accepted numeric entry ("9.0", "12.1a"), or null when the list was not read. */
  accepted: readonly string[] | null;
  /** Entries seen refused (ValueError at build time). */
  refused: readonly string[];
  /** Where the list was read; quoted in the reason or note a refused entry gives. */
  source: string;
}

/**
 * How a release turns capabilities into device code (catalog/packages.ts `DeviceTargets`, which explains each kind),
 * limited to what `cudaBuildIn` reads.
 */
export type TargetsFacts =
  | { kind: "torchArchList"; extraSass?: readonly { when: string; adds: string; minCuda: string; source: string }[] }
  | { kind: "ownList"; variable: string; tokens: readonly { token: string; capability: string; minCuda: string }[]; limit: string }
  | { kind: "cmakeList"; flag: string; ptxForHighest: boolean; ptxIn?: { where: "image" | "relocatable" } }
  | {
      kind: "supportedArchs";
      eras: readonly { minCuda: string; belowCuda: string | null; archs: readonly string[]; family: boolean; source: string }[];
      archFlag: string;
      dotlessFlag: string;
      limit: string;
    };

/** The parts of one release (catalog/packages.ts `OnTorchRelease`) a CUDA build depends on. */
export interface ReleaseBuildFacts {
  /** A full version ("2.11.0") or a series ("0.27"). */
  version: string;
  /** CUDA versions it builds with (MAJOR.MINOR, `min` inclusive, `below` exclusive or null), with the source. */
  cuda?: { min: string; below: string | null; source: string };
  /** CUDA versions it is reported to fail to build with, with the source. */
  failsWithCuda?: { cuda: readonly string[]; source: string };
  /** Capabilities whose code it builds fails at run time on those GPUs, with the source. */
  failsOnCapabilities?: { capabilities: readonly string[]; source: string };
  /** Absent: `{ kind: "torchArchList" }`. */
  targets?: TargetsFacts;
}

/** The parts of one package on torch (catalog/packages.ts `PackageOnTorch`) a CUDA build depends on. */
interface PackageBuildFacts {
  /** Name used in prose ("torchvision"). */
  label: string;
  releases: readonly ReleaseBuildFacts[];
}

/** What a package's build is handed and what it then holds, for one variant (see `cudaBuildIn`). */
export interface PackageCudaBuild {
  /** Environment variables the build reads besides TORCH_CUDA_ARCH_LIST ({ FLASH_ATTN_CUDA_ARCHS: "90" }). */
  env: Record<string, string>;
  /** CMake flags to add, each replacing any flag of the same variable ("-DCOMPUTE_CAPABILITY=90"). */
  cmakeFlags: string[];
  /** SASS targets the build holds ("sm_90"), sorted by capability. */
  sass: string[];
  /**
   * SASS targets the build may hold besides `sass` (vLLM's arch-specific "sm_90a" and family "sm_120f" kernels of the
   * same entries), as `cuobjdump -symbols` names them (`arch = sm_120f`; `--list-elf` lists a family cubin as `sm_120`,
   * like the plain one: catalog/device-code.ts); absent: none.
   */
  sassAlso?: string[];
  /** PTX targets the build holds ("compute_90"). */
  ptx: string[];
  /** Where that PTX is (DeviceTargets `ptxIn`); absent: the device-linked image. */
  ptxIn?: "image" | "relocatable";
  /** How, in words, with the source. */
  why: string;
}

/** The release a version ("0.27.1") belongs to: exact, else its series ("0.27"); undefined if none. */
export function releaseIn<R extends { version: string }>(releases: readonly R[], version: string): R | undefined {
  return releases.find((r) => r.version === version) ?? releases.find((r) => version.startsWith(`${r.version}.`));
}

/** The facts for a torch version ("2.11.0" → the "2.11" entry of `lists`), or undefined. */
export function archListIn<L extends ArchListFacts>(lists: readonly L[], torchVersion: string): L | undefined {
  const minor = majorMinor(torchVersion);
  return lists.find((f) => f.torch === minor);
}

/**
 * Whether torch `torchVersion`'s cpp_extension accepts TORCH_CUDA_ARCH_LIST entry `entry` ("12.1", "9.0a"; a "+PTX"
 * suffix is ignored) according to `lists`: true, false (refused: a ValueError at build time), or null when they cannot
 * say.
 */
export function archEntryAcceptedIn(lists: readonly ArchListFacts[], torchVersion: string, entry: string): boolean | null {
  const f = archListIn(lists, torchVersion);
  if (!f) return null;
  const e = entry.replace(/\+PTX$/, "");
  if (f.refused.includes(e)) return false;
  if (f.accepted) return f.accepted.includes(e);
  return null;
}

const dots = (c: string) => c.replace(".", "");
/** A cubin for X.y runs on X.z, z ≥ y: the one rule (generator/catalog/lib/capability.ts). */
const runsOn = capabilityRunsOn;

/**
 * The TORCH_CUDA_ARCH_LIST entries torch `torchVersion`'s cpp_extension is handed for `caps`: each capability itself
 * where torch accepts it or `lists` cannot say, else the highest accepted entry of the same major below it (its code
 * runs there by binary compatibility), with a note; or the reason none serves.
 * @param label the package and version in prose ("torchvision 0.26.0"), for the note or reason
 * @returns { entries, notes } or { reason }
 */
function torchArchEntriesIn(
  caps: readonly string[],
  torchVersion: string | undefined,
  label: string,
  lists: readonly ArchListFacts[],
): { entries: string[]; notes: string[] } | { reason: string } {
  const entries: string[] = [];
  const notes: string[] = [];
  for (const c of caps) {
    if (torchVersion === undefined || archEntryAcceptedIn(lists, torchVersion, c) !== false) {
      entries.push(c);
      continue;
    }
    const f = archListIn(lists, torchVersion)!;
    const near = (f.accepted ?? []).filter((e) => /^\d+\.\d+$/.test(e) && runsOn(e, c)).sort((a, b) => compareVersions(b, a))[0];
    if (!near)
      return { reason: `${label} is built through torch ${torchVersion}'s cpp_extension, which refuses TORCH_CUDA_ARCH_LIST entry ${c} (ValueError) and accepts no entry of the same major below it (${f.source}).` };
    entries.push(near);
    notes.push(`torch ${torchVersion}'s cpp_extension refuses TORCH_CUDA_ARCH_LIST entry ${c}; ${label} is built for ${near}, whose code runs on ${c} (binary compatibility; ${f.source})`);
  }
  return { entries, notes };
}

/**
 * The CUDA build asked about, in the Variant's field names (a CUDA Variant of the package fits): the package's
 * `version`, the capabilities nvcc compiles (`cudaCapabilities`, ["8.6"]), the CUDA version (`cuda`, "12.8") and the
 * variant's torch (`torchVersion`, "2.11.0"; absent: its cpp_extension's accepted entries are not checked).
 */
export interface CudaBuildAsk {
  version: string;
  cudaCapabilities: readonly string[];
  cuda: string;
  torchVersion?: string;
}

/**
 * What a CUDA build of package `p` (`ask`: at its version, for its capabilities with its CUDA) is handed and holds,
 * from the release's `targets`, or the reason no build of this release can serve them (a capability no token serves,
 * a CUDA the release refuses, code that fails on the capability, a TORCH_CUDA_ARCH_LIST entry the variant's torch
 * refuses with none to serve it).
 * @param lists what each torch minor's cpp_extension accepts (catalog/torch-arch-list.ts `torchArchLists`).
 * @returns a PackageCudaBuild, or { reason } (a sentence naming the release, the capability or CUDA, and the source).
 */
export function cudaBuildIn(p: PackageBuildFacts, ask: CudaBuildAsk, lists: readonly ArchListFacts[]): PackageCudaBuild | { reason: string } {
  const { version, cudaCapabilities: caps, cuda, torchVersion } = ask;
  const rel = releaseIn(p.releases, version);
  const label = `${p.label} ${version}`;
  if (rel?.cuda) {
    const { min, below } = rel.cuda;
    if (compareVersions(cuda, min) < 0 || (below !== null && compareVersions(cuda, below) >= 0))
      return { reason: `${label} builds with CUDA ${min}${below ? ` up to ${below} (exclusive)` : " and later"}, not CUDA ${cuda} (${rel.cuda.source}).` };
  }
  if (rel?.failsWithCuda?.cuda.some((c) => compareVersions(c, cuda) === 0))
    return { reason: `${label} is reported to fail to build with CUDA ${cuda}: ${rel.failsWithCuda.source}.` };
  const bad = rel?.failsOnCapabilities?.capabilities.find((c) => caps.includes(c));
  if (bad) return { reason: `${label} built for compute capability ${bad} holds code that fails on that GPU at run time: ${rel!.failsOnCapabilities!.source}.` };
  const t: TargetsFacts = rel?.targets ?? { kind: "torchArchList" };
  const sm = (c: string) => `sm_${dots(c)}`;
  if (t.kind === "torchArchList") {
    const served = torchArchEntriesIn(caps, torchVersion, label, lists);
    if ("reason" in served) return served;
    const extra = (t.extraSass ?? []).filter((e) => caps.includes(e.when) && compareVersions(cuda, e.minCuda) >= 0);
    const substituted = served.notes.length > 0;
    return {
      env: substituted ? { TORCH_CUDA_ARCH_LIST: served.entries.join(";") } : {},
      cmakeFlags: [],
      sass: [...served.entries.map(sm), ...extra.map((e) => e.adds)],
      ptx: [],
      why:
        `TORCH_CUDA_ARCH_LIST through torch.utils.cpp_extension: ${substituted ? served.entries.join(";") : "the capabilities exactly"}, no PTX` +
        (extra.length ? `; ${extra.map((e) => e.source).join("; ")}` : "") +
        (substituted ? `; ${served.notes.join("; ")}` : ""),
    };
  }
  if (t.kind === "ownList") {
    const chosen: { token: string; capability: string }[] = [];
    for (const c of caps) {
      const tok = [...t.tokens].reverse().find((k) => runsOn(k.capability, c) && compareVersions(cuda, k.minCuda) >= 0);
      if (!tok) {
        const any = t.tokens.find((k) => runsOn(k.capability, c));
        return {
          reason: any
            ? `${label} compiles SM${any.token} code (which would serve ${c}) only with CUDA ${any.minCuda} and later, not ${cuda} (its setup.py).`
            : `${label} compiles device code only for ${t.tokens.map((k) => `SM${k.token}`).join(", ")} (the ${t.variable} tokens its setup.py accepts; ` +
              `a cubin also runs on later minors of its major), none of which runs on compute capability ${c}. ${t.limit}.`,
        };
      }
      if (!chosen.some((x) => x.token === tok.token)) chosen.push(tok);
    }
    return {
      env: { [t.variable]: chosen.map((x) => x.token).join(";") },
      cmakeFlags: [],
      sass: chosen.map((x) => sm(x.capability)),
      ptx: [],
      why: `${t.variable}=${chosen.map((x) => x.token).join(";")}: the package's own -gencode list (code=sm_N, no PTX)${chosen.some((x) => !caps.includes(x.capability)) ? ", served to a later minor of the same major by binary compatibility" : ""}`,
    };
  }
  if (t.kind === "supportedArchs") return supportedArchsBuild(t, label, caps, cuda);
  // The CMakeLists de-duplicates and sorts the list (natural order of the dot-less numbers) before it pops the highest.
  const sorted = [...new Set(caps)].sort((a, b) => Number(dots(a)) - Number(dots(b)));
  const list = sorted.map(dots);
  const highest = sorted[sorted.length - 1];
  const ptxIn = t.ptxIn?.where ?? "image";
  return {
    env: {},
    cmakeFlags: [`-D${t.flag}=${list.join(";")}`],
    sass: sorted.map(sm),
    ptx: t.ptxForHighest && highest ? [`compute_${dots(highest)}`] : [],
    ptxIn,
    why:
      `-D${t.flag}=${list.join(";")}: SASS for each` +
      (t.ptxForHighest ? `, and PTX for the highest (${highest}), as the package's CMakeLists makes it` : "") +
      (t.ptxForHighest && ptxIn === "relocatable" ? "; the PTX stays in the relocatable fatbin (separable compilation), which cuobjdump lists with -all" : ""),
  };
}

/**
 * What a package whose CMakeLists intersects the requested architectures with its own list (vLLM's
 * `CUDA_SUPPORTED_ARCHS`, through `cuda_archs_loose_intersection`) compiles for `caps` with CUDA `cuda`: the era of
 * its list for that CUDA; each capability served by itself when listed, else by the highest listed entry of the same
 * major below it (its code runs there: binary compatibility, and under CUDA 13 the `12.0f` family target); both CMake
 * variables set to those entries (the dotted one, TORCH_CUDA_ARCH_LIST, also in the environment). Required SASS: the
 * entries (its generic kernels); also allowed: their arch-specific `a` and, where the era has family targets, `f`
 * forms (its CUTLASS/FP8/FP4 kernel lists).
 * @returns a PackageCudaBuild, or { reason } naming the CUDA range or the capability and the list.
 */
function supportedArchsBuild(
  t: Extract<TargetsFacts, { kind: "supportedArchs" }>,
  label: string,
  caps: readonly string[],
  cuda: string,
): PackageCudaBuild | { reason: string } {
  const era = t.eras.find((e) => compareVersions(cuda, e.minCuda) >= 0 && (e.belowCuda === null || compareVersions(cuda, e.belowCuda) < 0));
  if (!era) return { reason: `${label} has no architecture list for CUDA ${cuda} (${t.eras.map((e) => `${e.minCuda}${e.belowCuda ? `–${e.belowCuda}` : "+"}`).join(", ")}; ${t.limit}).` };
  const entries: string[] = [];
  const served: string[] = [];
  for (const c of caps) {
    const e = era.archs.includes(c) ? c : [...era.archs].filter((a) => runsOn(a, c)).sort(compareVersions).pop();
    if (!e)
      return { reason: `${label} with CUDA ${cuda} compiles only for ${era.archs.join(", ")} (its CUDA_SUPPORTED_ARCHS; ${era.source}), none of which runs on compute capability ${c}. ${t.limit}.` };
    if (e !== c) served.push(`${c} by ${e}${era.family ? ` (its ${e}f family kernels run on ${c})` : ""}`);
    if (!entries.includes(e)) entries.push(e);
  }
  entries.sort(compareVersions);
  const list = entries.join(";");
  const also = entries.flatMap((e) => [`sm_${dots(e)}a`, ...(era.family ? [`sm_${dots(e)}f`] : [])]);
  return {
    env: { [t.archFlag]: list },
    cmakeFlags: [`-D${t.archFlag}=${list}`, `-D${t.dotlessFlag}=${entries.map(dots).join(";")}`],
    sass: entries.map((e) => `sm_${dots(e)}`),
    sassAlso: also,
    ptx: [],
    why:
      `-D${t.archFlag}=${list} and -D${t.dotlessFlag}=${entries.map(dots).join(";")}: its CUDA_SUPPORTED_ARCHS for CUDA ${cuda} (${era.archs.join(", ")}), ` +
      `SASS for each entry, its kernel lists' arch-specific (a)${era.family ? " and family (f)" : ""} forms of them, no PTX` +
      (served.length ? `; serves ${served.join(", ")}` : ""),
  };
}
