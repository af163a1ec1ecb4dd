/**
 * The device-code promise per origin (ARCHITECTURE.md rule 10): which code in a variant's libraries comes from torch,
 * torchaudio or torchvision themselves, which from a library nixpkgs links in statically (NCCL, MAGMA, NVSHMEM),
 * and what each origin's build puts there in the variant's CUDA scope. Pure, and code only: the facts
 * (generator/catalog/device-code.ts, nixpkgs' default capabilities of catalog/cuda.ts, the packages on torch) come in
 * as a `CheckerFacts` parameter (facts.ts), so the Nix checks' bundle holds none of the catalog.
 *
 * Used by compare.ts (so by `verify` and the Nix static check alike) and by the tests' model of a correct build.
 */
import { cudaBuildIn } from "../catalog/lib/cuda-build.ts";
import { compareVersions } from "../versions.ts";
import type { CheckerBundled, CheckerFacts } from "../catalog/lib/checker-facts.ts";
// A type only: the bundle keeps no code of the catalog.
import type { DeviceCodeOrigin } from "../catalog/lib/device-code.ts";

/** The parts of a variant the device-code promise reads. */
export interface DeviceCodeVariant {
  package: string;
  torchVersion: string;
  /** nixpkgs revision of the variant's pin (absent: unknown, so pin-dependent promises cannot be stated). */
  nixpkgs?: string;
  cuda: string | null;
  cudaCapabilities: string[];
  /** Package-set scope (config.cudaCapabilities, cudaForwardCompat = false); false or absent: torch scope. */
  cudaCapabilitiesForPackageSet?: boolean;
  /** The variant's own version (a package variant's is its package's). */
  version?: string;
  /** Versions of the packages built on torch at the variant's pin ({ "flash-attn": "2.8.3.post1" }). */
  onTorchVersions?: Record<string, string>;
}

/** The version of package `name` a variant holds: its own for a variant of that package, else its pin's; or undefined. */
function packageVersionOf(v: Pick<DeviceCodeVariant, "package" | "version" | "onTorchVersions">, name: string): string | undefined {
  return v.package === name ? v.version : v.onTorchVersions?.[name];
}

/** What one origin's code in one library must be: exact SASS and PTX sets, or (own torch) a range. */
export interface OriginPromise {
  origin: DeviceCodeOrigin;
  /** "torch's kernels", "bundled NCCL". */
  label: string;
  /** Library file name ("libtorch_cuda.so"), or null for "every library of this package". */
  library: string | null;
  /** SASS targets that must be there ("sm_90"). */
  sassRequired: string[];
  /** SASS targets that may be there (a superset of sassRequired). */
  sassAllowed: string[];
  /** PTX targets that must be there, exactly ("compute_121"). */
  ptx: string[];
  /**
   * Where that PTX must be: the device-linked image (listed by `cuobjdump --list-ptx`) or the relocatable fatbin of
   * `-rdc=true` objects (listed with `-all` only; the runtime JIT-compiles it too). Absent: the image.
   */
  ptxIn?: "image" | "relocatable";
  /** Why, in words (the scope and the source of the fact). */
  why: string;
  /** The catalog cannot say whether this pin's torch links it (an unknown revision): the check prints "–". */
  unknown?: boolean;
}

/** The SASS target of a capability: "9.0" → "sm_90". */
export const smOf = (cap: string) => `sm_${cap.replace(".", "")}`;
const computeOf = (cap: string) => `compute_${cap.replace(".", "")}`;
const archKey = (a: string) => {
  const m = /^(?:sm|compute)_(\d+)([a-z]?)$/.exec(a);
  return m ? Number(m[1]) * 10 + (m[2] ? m[2].charCodeAt(0) - 96 : 0) : 1e9;
};
/** Architectures sorted by capability ("sm_75 sm_80 … sm_121"), or "(none)". */
export function formatArchs(xs: Iterable<string>): string {
  const s = [...new Set(xs)].sort((a, b) => archKey(a) - archKey(b) || a.localeCompare(b));
  return s.length ? s.join(" ") : "(none)";
}

/**
 * The SASS targets a correct build for `caps` with CUDA `cuda` may carry: `sm_XY` of each capability plus the
 * facts' `extraSass` rule (generator/catalog/device-code.ts EXTRA_SASS). Returns e.g. Set{"sm_90", "sm_90a"} for ["9.0"].
 */
export function allowedSass(caps: readonly string[], cuda: string, facts: Pick<CheckerFacts, "extraSass">): Set<string> {
  const s = new Set(caps.map(smOf));
  for (const r of facts.extraSass) if (caps.includes(r.when) && (r.minCuda === null || compareVersions(cuda, r.minCuda) >= 0)) s.add(r.adds);
  return s;
}

/**
 * nixpkgs' default capabilities of a CUDA version at revision `rev`: the pin's own where its entry records them
 * (`pinDefaultCapabilities`), else the catalog's (`nixpkgsDefaultCapabilities`); null when the facts lack the version.
 */
function nixpkgsDefaults(cudaVersion: string, rev: string | undefined, facts: Pick<CheckerFacts, "nixpkgsDefaultCapabilities" | "pinDefaultCapabilities">): string[] | null {
  const own = rev !== undefined && Object.hasOwn(facts.pinDefaultCapabilities, rev) ? facts.pinDefaultCapabilities[rev]! : null;
  if (own && Object.hasOwn(own, cudaVersion)) return own[cudaVersion]!;
  return Object.hasOwn(facts.nixpkgsDefaultCapabilities, cudaVersion) ? facts.nixpkgsDefaultCapabilities[cudaVersion]! : null;
}

/**
 * Whether nixpkgs' torch at revision `rev` links `b` (its `linkedAt`); null when the facts cannot say (a revision
 * that is not one of the catalog's pins, `knownPins`).
 */
function linksBundled(b: CheckerBundled, rev: string | undefined, facts: Pick<CheckerFacts, "knownPins">): boolean | null {
  if (b.linkedAt === "every pin") return true;
  if (rev === undefined) return null;
  return b.linkedAt.includes(rev) ? true : facts.knownPins.includes(rev) ? false : null;
}

/**
 * The promise of one bundled library in a variant's scope: exact SASS and PTX.
 * Torch scope: the CUDA set keeps nixpkgs' default capabilities and `cudaForwardCompat = true` (nixpkgs
 * backendStdenv: `config.cudaForwardCompat or true`); package-set scope: the variant's capabilities and
 * `cudaForwardCompat = false` (pkgs/nixpkgs.nix). Plus what the library's own build adds (`extraSass`).
 * @throws Error when the facts have no default capabilities for the variant's CUDA version.
 */
function bundledPromise(b: CheckerBundled, v: DeviceCodeVariant, facts: Pick<CheckerFacts, "nixpkgsDefaultCapabilities" | "pinDefaultCapabilities">): OriginPromise {
  const cuda = v.cuda!;
  const packageSet = v.cudaCapabilitiesForPackageSet === true;
  const defaults = nixpkgsDefaults(cuda, v.nixpkgs, facts);
  if (!packageSet && !defaults) throw new Error(`no nixpkgs default capabilities for CUDA ${cuda} in the catalog`);
  const scopeCaps = packageSet ? v.cudaCapabilities : defaults!;
  const extras = b.extraSass.filter((e) => compareVersions(cuda, e.minCuda) >= 0 && (e.belowCuda === null || compareVersions(cuda, e.belowCuda) < 0));
  let sass: string[];
  let ptx: string[];
  let why: string;
  const scopeWords = packageSet
    ? `package-set scope: the variant's capabilities, cudaForwardCompat = false`
    : `torch scope: nixpkgs' default capabilities of CUDA ${cuda}, the cached build`;
  if (b.deviceLinkedByTorch) {
    sass = v.cudaCapabilities.map(smOf);
    ptx = [];
    why = `relocatable device code that torch's device link resolves at its own capabilities; its PTX stays in the relocatable fatbin (${scopeWords})`;
  } else if (b.flags === "gencode") {
    sass = [...scopeCaps.map(smOf), ...extras.map((e) => e.sass)];
    ptx = b.ptxVisible && !packageSet ? [computeOf(scopeCaps[scopeCaps.length - 1]!)] : [];
    why = `${scopeWords}; NVCC_GENCODE = flags.gencodeString${ptx.length ? " with its forward-compatible PTX" : ""}${extras.length ? `; ${extras.map((e) => e.why).join("; ")}` : ""}`;
  } else {
    sass = scopeCaps.map(smOf);
    ptx = b.ptxVisible ? scopeCaps.map(computeOf) : [];
    why = `${scopeWords}; CMAKE_CUDA_ARCHITECTURES without -real: SASS and PTX for each`;
  }
  return { origin: b.origin, label: `bundled ${b.label}`, library: b.library, sassRequired: sass, sassAllowed: sass, ptx, why };
}

/**
 * Every origin's promise for a CUDA variant: the own kernels of torch (the capabilities plus PyTorch's arch-specific
 * extras, no PTX), of torchaudio and torchvision (exactly the capabilities, no PTX), and each bundled library that
 * the variant's nixpkgs torch links. [] for a CPU-only variant.
 * @throws Error when the facts have no default capabilities for the variant's CUDA version (torch scope).
 */
export function deviceCodePromises(v: DeviceCodeVariant, facts: CheckerFacts): OriginPromise[] {
  if (v.cuda === null) return [];
  const caps = v.cudaCapabilities;
  const cuda = v.cuda;
  const out: OriginPromise[] = [
    {
      origin: "torch",
      label: "torch's kernels",
      library: null,
      sassRequired: caps.map(smOf),
      sassAllowed: [...allowedSass(caps, cuda, facts)],
      ptx: [],
      why: "TORCH_CUDA_ARCH_LIST exactly (plus PyTorch's arch-specific extras), no PTX",
    },
    ...facts.bundledDeviceCode.flatMap((b) => {
      const linked = linksBundled(b, v.nixpkgs, facts);
      return linked === false ? [] : [{ ...bundledPromise(b, v, facts), ...(linked === null ? { unknown: true } : {}) }];
    }),
  ];
  // The packages built on torch compile for the variant's capabilities as their own build turns them into targets
  // (generator/catalog/lib/cuda-build.ts `cudaBuildIn`: TORCH_CUDA_ARCH_LIST exactly, flash-attn's own list, bitsandbytes' CMake
  // list with PTX for the highest, kept in the relocatable fatbin), whichever variant's environment holds them.
  for (const o of facts.packagesOnTorch) {
    const version = packageVersionOf(v, o.name) ?? "?";
    const b = cudaBuildIn(o, { version, cudaCapabilities: caps, cuda, torchVersion: v.torchVersion }, facts.torchArchLists);
    out.push(
      "reason" in b
        ? { origin: o.name, label: `${o.label}'s kernels`, library: null, sassRequired: [], sassAllowed: [], ptx: [], why: `no build: ${b.reason}` }
        : { origin: o.name, label: `${o.label}'s kernels`, library: null, sassRequired: b.sass, sassAllowed: [...b.sass, ...(b.sassAlso ?? [])], ptx: b.ptx, ...(b.ptxIn ? { ptxIn: b.ptxIn } : {}), why: b.why },
    );
  }
  return out;
}

const compiled = (xs: readonly string[]) => xs.map((x) => new RegExp(x));
/** The facts' name patterns, compiled once per facts object. */
interface Patterns {
  helpers: RegExp[];
  bundled: { b: CheckerBundled; re: RegExp[] }[];
  own: { o: CheckerFacts["ownDeviceCode"][number]; re: RegExp[] }[];
  /** Own device code by directory, longest directory first. */
  byDirectory: CheckerFacts["ownDeviceCode"];
}
const patternsMemo = new WeakMap<CheckerFacts, Patterns>();
function patterns(facts: CheckerFacts): Patterns {
  let p = patternsMemo.get(facts);
  if (!p) {
    p = {
      helpers: compiled(facts.compilerHelperNames),
      bundled: facts.bundledDeviceCode.map((b) => ({ b, re: compiled(b.names) })),
      own: facts.ownDeviceCode.map((o) => ({ o, re: compiled(o.names) })),
      byDirectory: [...facts.ownDeviceCode].sort((a, b) => b.directory.length - a.directory.length),
    };
    patternsMemo.set(facts, p);
  }
  return p;
}

/**
 * The own origin of a library: by its file name for an extension module installed beside the packages (flash-attn's
 * `flash_attn_2_cuda.cpython-….so`), else by its directory under site-packages (torch/lib, torchaudio/lib,
 * torchvision, xformers, bitsandbytes); "torch" when unknown.
 */
export function ownerOf(libPath: string, facts: CheckerFacts): string {
  const p = libPath.replace(/\\/g, "/");
  // An extension module installed beside the packages (flash-attn's flash_attn_2_cuda.cpython-….so): by its file name.
  const base = p.split("/").pop()!;
  const byFile = facts.ownDeviceCode.find((o) => o.file !== undefined && new RegExp(o.file).test(base));
  if (byFile) return byFile.origin;
  // By directory, relative to site-packages where the path has one (an environment directory named "bitsandbytes"
  // above it says nothing about the library); older probes' short "lib/…" paths match anywhere.
  const at = p.lastIndexOf("/site-packages/");
  const inside = at >= 0 ? `/${p.slice(at + "/site-packages/".length)}` : p;
  const sorted = patterns(facts).byDirectory;
  return (at >= 0 ? sorted.find((o) => inside.startsWith(`/${o.directory}/`)) : sorted.find((o) => p.includes(`/${o.directory}/`)))?.origin ?? "torch";
}

/** How a head was attributed: a compiler helper, a bundled library's name, the owner's namespaces, or by default. */
type Attribution = { origin: DeviceCodeOrigin | null; by: "helper" | "name" | "own" | "default" };

/**
 * Where a function whose first identifier is `head` in library `libPath` comes from (origin null: code the compiler
 * adds to every cubin). The order: compiler helpers; a bundled library's name patterns; the owner's own namespaces;
 * by default the library's bundled default (MAGMA in libtorch_cuda_linalg.so), else the owner of the directory.
 * Returns the classification of one library: what depends on the library alone (its owner, own patterns, default)
 * is worked out once, and each head is classified once however many blocks name it (a kernel's head recurs in the
 * cubin of every arch: libtorch_cuda.so of PyPI torch 2.11.0 has 2,789 cubins; bench/attribute.ts).
 */
function classifier(libPath: string, facts: CheckerFacts): (head: string) => Attribution {
  const pt = patterns(facts);
  const owner = ownerOf(libPath, facts);
  const own = pt.own.find((x) => x.o.origin === owner);
  const base = libPath.split("/").pop()!;
  const def = facts.bundledDeviceCode.find((b) => b.libraryDefault && b.library === base);
  const byDefault: Attribution = { origin: def && owner === "torch" ? def.origin : owner, by: "default" };
  const classify = (head: string): Attribution => {
    if (pt.helpers.some((r) => r.test(head))) return { origin: null, by: "helper" };
    for (const { b, re } of pt.bundled) if (re.some((r) => r.test(head))) return { origin: b.origin, by: "name" };
    if (own && own.re.some((r) => r.test(head))) return { origin: owner, by: "own" };
    return byDefault;
  };
  const memo = new Map<string, Attribution>();
  return (head) => {
    let a = memo.get(head);
    if (a === undefined) memo.set(head, (a = classify(head)));
    return a;
  };
}

/** The origin of `head` in `libPath` (classifier's), or null for compiler helpers. */
export function originOf(libPath: string, head: string, facts: CheckerFacts): DeviceCodeOrigin | null {
  return classifier(libPath, facts)(head).origin;
}

/**
 * The probe's view of one library (probe.py `--cuobjdump`). `heads`/`blocks` are null when -symbols failed. `all`
 * (newer probes only): `cuobjdump -all --list-elf/--list-ptx`, which also reads the relocatable fatbins that
 * `-rdc=true` objects leave (`__nv_relfatbin`): archs and the kernel file names, each once.
 */
export interface LibDeviceCode {
  elf: string[];
  ptx: string[];
  heads?: string[] | null;
  blocks?: { kind: "elf" | "ptx"; arch: string; heads: number[] | null }[] | null;
  all?: { elf: string[]; ptx: string[]; files: string[] } | null;
}

/** What one library holds per origin: SASS and PTX targets; PTX whose origin no name tells, apart. */
export interface LibraryOrigins {
  byOrigin: Map<DeviceCodeOrigin, { sass: Set<string>; ptx: Set<string> }>;
  /** PTX targets of blocks without entry names (cuobjdump -ptx gave none). */
  unattributedPtx: Set<string>;
  /**
   * PTX only `cuobjdump -all` lists (the relocatable fatbin) in a library of a package built on torch: its owner's
   * (torch's own libraries are left out: NVSHMEM's relocatable PTX in libtorch_nvshmem.so is its bundled promise's).
   */
  relocatablePtx: Set<string>;
}

/** Attribute every block of a library (see originOf). A block holding code of two origins counts for both. */
export function attribute(libPath: string, d: LibDeviceCode, facts: CheckerFacts): LibraryOrigins {
  const byOrigin = new Map<DeviceCodeOrigin, { sass: Set<string>; ptx: Set<string> }>();
  const unattributedPtx = new Set<string>();
  const heads = d.heads ?? [];
  const owner = ownerOf(libPath, facts);
  const classify = classifier(libPath, facts);
  for (const b of d.blocks ?? []) {
    if (b.kind === "ptx" && b.heads === null) {
      unattributedPtx.add(b.arch);
      continue;
    }
    // One cubin is one object's or one device link's code. A cubin holding a bundled library's kernels is that
    // library's: its other functions (NCCL's device helpers, `nccl_helper` in the H100 toy) are too, unless they
    // are in the owner's own namespaces (torch's c10d kernels device-linked with NVSHMEM in libtorch_nvshmem.so).
    const attributions = (b.heads ?? []).map((i) => classify(heads[i] ?? ""));
    const named = attributions.find((a) => a.by === "name")?.origin ?? null;
    const origins = new Set<DeviceCodeOrigin>();
    for (const a of attributions) if (a.origin) origins.add(a.by === "default" && named ? named : a.origin);
    // A cubin of compiler helpers only belongs to the library's owner.
    if (origins.size === 0) origins.add(classify("").origin ?? owner);
    for (const o of origins) {
      const e = byOrigin.get(o) ?? { sass: new Set<string>(), ptx: new Set<string>() };
      (b.kind === "elf" ? e.sass : e.ptx).add(b.arch);
      byOrigin.set(o, e);
    }
  }
  // PTX that only -all lists: the relocatable fatbin, which the CUDA runtime JIT-compiles too (H100: bitsandbytes).
  const relocatablePtx = new Set<string>();
  if (owner !== "torch" && d.all) {
    const listed = new Set([...d.ptx, ...(d.blocks ?? []).filter((b) => b.kind === "ptx").map((b) => b.arch)]);
    for (const x of d.all.ptx) if (!listed.has(x)) relocatablePtx.add(x);
  }
  return { byOrigin, unattributedPtx, relocatablePtx };
}
