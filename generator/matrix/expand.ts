/**
 * matrix × catalog → kept package variants and dropped combinations with reasons (pure functions, no I/O).
 *
 * Every rule of truth of ARCHITECTURE.md is decided here, once:
 * 1. Python: a variant names `pythonXYPackages` of its pin, which must carry that set and the release must support it.
 * 2. CUDA: a variant names `cudaPackages_X_Y` of its pin, which must carry it and not mark torch broken for it.
 * 3. GPU: the capabilities handed to nvcc are ones that CUDA version's nvcc compiles (`CudaToolkit.capabilities`)
 *    and that run on the GPU: its own, or (policy `serve`) the highest same-major capability with a lower minor
 *    (CUDA C++ Programming Guide, "Binary Compatibility": cubins run on X.z for z ≥ y, never across a major).
 * 4. CPU ISA: flags come from the catalog entry, which lists only CPUs that have every enabled instruction.
 * 5. Platform: a GPU whose `systems` lacks the ISA's system has no variant there.
 * 6. Releases: Python range and CUDA majors of each release; each package built on torch (catalog/packages.ts) only
 *    where the pin carries a release of it that serves the pin's torch.
 * 7. Every dropped combination carries its reasons in words.
 */
import { PACKAGES } from "../catalog/lib/packages.ts";
import { preferredPin } from "../catalog/lib/torch.ts";
import { ENV_PACKAGE, TORCH_PACKAGE, caveatsFor, fixesFor, fixText, onTorch, packageBuildFor, releaseOf, releaseServes } from "../catalog/lib/packages.ts";
import { type PackageCudaBuild } from "../catalog/lib/cuda-build.ts";
import { type PackageOnTorch } from "../catalog/schema.ts";
import { glibcCudaHeaderNote, nixpkgsCudaFacts, type NixpkgsCudaFacts } from "../catalog/lib/cuda.ts";
import { insecureNote } from "../catalog/lib/packages.ts";
import { environmentPackage, formatCombination, formatName, torchSiblingName } from "./naming.ts";
import { extraPromise } from "../catalog/lib/packages.ts";
import { compareVersions } from "../versions.ts";
import { capabilityRunsOn } from "./compat.ts";
import { nixpkgsAllows, nixpkgsCapability } from "../catalog/lib/cuda.ts";
import { gccarchFeature } from "../catalog/lib/machines.ts";
import type { CudaCapabilitiesScope, Excluded, Matrix, Variant } from "./schema.ts";
import type { Catalog, CpuIsa, CudaToolkit, GpuArch, NixpkgsPin, PythonVersion, TorchRelease } from "../catalog/schema.ts";
import type { PackageName } from "../catalog/lib/packages.ts";

/** Result of `expand`: kept variants (stable order) and dropped combinations (stable order). */
export interface Expansion {
  variants: Variant[];
  excluded: Excluded[];
}

/** How a GPU is served by a CUDA version: the capabilities nvcc compiles, or why it cannot be. */
export type GpuService =
  | { ok: true; capabilities: string[]; binaryCompat: boolean; note?: string }
  | { ok: false; reason: string };

const smOf = (cap: string) => cap.replace(".", "");

/**
 * Decide which compute capabilities CUDA `cuda`'s nvcc compiles for GPU `gpu` (ARCHITECTURE.md rule 3).
 * A capability is buildable with a CUDA version when its nvcc knows it and nixpkgs' capability table allows it with
 * that CUDA (the catalog's nixpkgsCapabilities, catalog/gpus.ts: min/max CUDA; nixpkgs' backendStdenv refuses anything outside, so
 * where nvcc and nixpkgs disagree, nixpkgs wins: 7.2 ends at CUDA 12.2 there though nvcc 12.x still lists sm_72).
 * Native when the GPU's capability is buildable; otherwise, under policy `serve`, the highest buildable capability
 * with the same major and a minor ≤ the GPU's (binary compatibility: 12.1 on CUDA 12.8 is served by 12.0, since 12.1
 * needs CUDA 12.9); otherwise a reason naming the CUDA versions of the catalog that build it natively.
 */
export function serveGpu(gpu: GpuArch, cuda: CudaToolkit, policy: "serve" | "drop", catalog: Catalog): GpuService {
  const table = catalog.nixpkgsCapabilities;
  const builds = (c: CudaToolkit, cap: string) => c.capabilities.includes(cap) && nixpkgsAllows(table, cap, c.version);
  if (builds(cuda, gpu.capability)) return { ok: true, capabilities: [gpu.capability], binaryCompat: false };
  const knownBy = catalog.cuda.filter((c) => builds(c, gpu.capability)).map((c) => c.version);
  const where = knownBy.length
    ? `CUDA ${knownBy.join(", ")} ${knownBy.length === 1 ? "compiles" : "compile"} sm_${gpu.sm} natively`
    : `no CUDA version in the catalog compiles sm_${gpu.sm} where nixpkgs allows it`;
  const earlier = catalog.cuda.filter((c) => compareVersions(c.version, cuda.version) < 0 && c.capabilities.includes(gpu.capability));
  const info = nixpkgsCapability(table, gpu.capability);
  const dropped = cuda.capabilities.includes(gpu.capability)
    ? `nixpkgs allows compute capability ${gpu.capability} with CUDA ${info ? `${info.minCuda}${info.maxCuda ? ` to ${info.maxCuda}` : " and later"}` : "never (not in its capability table)"}, not ${cuda.version}, though CUDA ${cuda.version}'s nvcc lists sm_${gpu.sm} (pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix)`
    : earlier.length > 0
      ? `CUDA ${cuda.version} dropped offline compilation for sm_${gpu.sm} (last supported in CUDA ${earlier[earlier.length - 1].version})`
      : `CUDA ${cuda.version}'s nvcc has no sm_${gpu.sm} target`;
  // Candidates are capabilities of GPU architectures the catalog knows: CUDA 12.8/12.9's 10.1 was Thor's
  // pre-release number (renamed 11.0 in CUDA 13.0), not an architecture B300 (10.3) belongs with.
  const archs = new Set(catalog.gpus.map((g) => g.capability));
  const runs = cuda.capabilities.filter((c) => archs.has(c) && capabilityRunsOn(c, gpu.capability) && nixpkgsAllows(table, c, cuda.version));
  // A Jetson GPU is served by Jetson code only: nixpkgs builds a Jetson capability against NVIDIA's Jetson
  // redistributables and the others against linux-sbsa (_cuda/lib/redist.nix getRedistSystem), so the CUDA libraries
  // of a non-Jetson capability are not the ones a Jetson runs, whatever the cubin's binary compatibility.
  const jetson = (c: string) => nixpkgsCapability(table, c)?.isJetson ?? false;
  const compat = runs
    .filter((c) => jetson(c) === jetson(gpu.capability))
    .sort(compareVersions)
    .pop();
  const gpuNote = gpu.note ? ` ${gpu.note}` : "";
  if (compat === undefined)
    return {
      ok: false,
      reason: runs.length
        ? `${dropped}, and what it compiles that would run on ${gpu.capability} (${runs.join(", ")}) is not Jetson code, which nixpkgs never serves a Jetson GPU with (other redistributables: _cuda/lib/redist.nix); ${where}.${gpuNote}`
        : `${dropped}, and no capability it compiles has the same major version as ${gpu.capability} (cubins do not run across a major version); ${where}.${gpuNote}`,
    };
  if (policy === "drop")
    return {
      ok: false,
      reason: `${dropped}; ${compat} code would run on it by binary compatibility, but matrix.ts policy.binaryCompat is "drop"; ${where}.`,
    };
  return {
    ok: true,
    capabilities: [compat],
    binaryCompat: true,
    note: `Served by binary compatibility: ${cuda.capabilities.includes(gpu.capability) ? `nixpkgs does not allow sm_${gpu.sm} with CUDA ${cuda.version} (_cuda/db/bootstrap/cuda.nix)` : `CUDA ${cuda.version}'s nvcc has no sm_${gpu.sm}`}, so this variant compiles sm_${smOf(compat)} (compute capability ${compat}), which runs on ${gpu.capability} (same major, lower minor; CUDA C++ Programming Guide, "Binary Compatibility"). ${knownBy.length ? `Native sm_${gpu.sm} code needs CUDA ${knownBy.join(" or ")}.` : ""}`.trim(),
  };
}

function find<T>(list: T[], pred: (t: T) => boolean, what: string): T {
  const x = list.find(pred);
  if (x === undefined) throw new Error(`catalog has no ${what}`);
  return x;
}

const isaLabel = (isa: CpuIsa) => isa.label;

/** Everything about one (release, python, cuda|null, gpu|null, isa) combination before the package split. */
interface Combo {
  release: TorchRelease;
  /** The nixpkgs pin carrying the release, or null when no sourced pin does (every combination is dropped). */
  pin: NixpkgsPin | null;
  tag: string;
  py: PythonVersion;
  cuda: CudaToolkit | null;
  gpu: GpuArch | null;
  isa: CpuIsa;
  /** The catalog the combination is judged by (the built-in one plus local-catalog.json). */
  catalog: Catalog;
  /** The pin's tarball hash (catalog pin or matrix.ts), or null when there is no pin. */
  sha256: string | null;
}

/** Reasons a combination cannot be built truthfully; [] when it can. Also returns the GPU service when it can. */
function judge(c: Combo, matrix: Matrix, catalog: Catalog): { reasons: string[]; service?: GpuService } {
  const reasons: string[] = [];
  const { release, pin, py, cuda, gpu, isa } = c;
  if (!release.python.includes(py.version))
    reasons.push(
      `PyTorch ${release.version} supports Python ${release.python.join(", ")}, not ${py.version}.`,
    );
  if (pin === null)
    reasons.push(
      `No nixpkgs revision in the catalog carries PyTorch ${release.version} (known pins carry ${catalog.nixpkgs.map((p) => `${p.torch} at ${p.rev.slice(0, 7)}`).join(", ")}); add a sourced pin to generator/catalog/torch.ts.`,
    );
  else if (!pin.python.includes(py.version))
    reasons.push(`nixpkgs ${pin.rev.slice(0, 7)} has no ${py.packageSet}.`);
  if (cuda) {
    const relMajors = [...new Set(release.cuda.map((v) => v.split(".")[0]))];
    if (!relMajors.includes(cuda.version.split(".")[0]))
      reasons.push(
        `PyTorch ${release.version} is released for CUDA ${release.cuda.join(", ")}; it does not support CUDA ${cuda.version.split(".")[0]}.x.`,
      );
    if (pin && !pin.cuda.includes(cuda.version))
      reasons.push(`nixpkgs ${pin.rev.slice(0, 7)} has no ${cuda.packageSet}.`);
    const broken = pin?.brokenCuda[cuda.version];
    if (pin && broken) reasons.push(`nixpkgs ${pin.rev.slice(0, 7)} marks torch broken with CUDA ${cuda.version}: ${broken}`);
  }
  if (gpu && !gpu.systems.includes(isa.system))
    reasons.push(
      `SM${gpu.sm} (${gpu.label}) exists only on ${gpu.systems.join(", ")} hosts, so it has no ${isa.system} variant.`,
    );
  else if (gpu && nixpkgsCapability(catalog.nixpkgsCapabilities, gpu.capability)?.isJetson && isa.system !== "aarch64-linux")
    // nixpkgs' own rule, read from its table: a catalog GPU row that listed another system would still be refused here.
    reasons.push(
      `nixpkgs builds the Jetson capability ${gpu.capability} only for aarch64-linux (isJetson in _cuda/db/bootstrap/cuda.nix; ` +
        `backendStdenv: "Requested Jetson CUDA capabilities … require hostPlatform … to be aarch64-linux"), not ${isa.system}.`,
    );
  else if (gpu?.socCpu && !gpu.socCpu.isas.includes(isa.key))
    reasons.push(
      `SM${gpu.sm} (${gpu.label}) sits in an SoC whose CPU, ${gpu.socCpu.cpu}, ${gpu.socCpu.isas.length ? `runs only ${gpu.socCpu.isas.join(", ")} of the catalog's ISAs` : "lacks instructions every catalog ISA enables"}, not ${isa.key}.`,
    );
  let service: GpuService | undefined;
  if (gpu && cuda) {
    service = serveGpu(gpu, cuda, matrix.policy.binaryCompat, catalog);
    if (!service.ok) reasons.push(service.reason);
  }
  return { reasons, service };
}

/**
 * The extra build inputs of a package variant (its catalog/lib/packages.ts `cudaBuildOf` answer, null for CPU-only: an
 * own arch variable, a CMake flag; `gibPerCompileJob`; the `pname` correction), as the Variant's `packageBuild`, or
 * nothing when the package needs none (TORCH_CUDA_ARCH_LIST, which pkgs/variant-attrs.nix writes for every CUDA
 * variant, is all it reads).
 */
function packageBuildOf(p: PackageOnTorch, b: PackageCudaBuild | null, fixes: string[]): Pick<Variant, "packageBuild"> {
  const env = b?.env ?? {};
  const cmakeFlags = b?.cmakeFlags ?? [];
  const gib = p.gibPerCompileJob?.gib ?? null;
  const pname = p.pname?.value ?? null;
  if (!Object.keys(env).length && !cmakeFlags.length && gib === null && pname === null && !fixes.length) return {};
  return { packageBuild: { env, cmakeFlags, gibPerCompileJob: gib, ...(pname !== null ? { pname } : {}), ...(fixes.length ? { fixes } : {}) } };
}


/**
 * The version of a package built on torch at a pin, or the reason there is none: the pin must carry it (its
 * `pinField`), with a version some source gives, of a release in the package's table that serves the pin's torch.
 */
export function onTorchVersion(p: PackageOnTorch, pin: NixpkgsPin, py: PythonVersion): { version: string } | { reason: string } {
  const at = `nixpkgs ${pin.rev.slice(0, 7)}`;
  const version = pin[p.pinField];
  if (version === null) return { reason: `${at} has no ${py.packageSet}.${p.attr}.` };
  if (version === "unknown")
    return { reason: `No source gives the ${p.label} version at ${at}; \`variant-matrix pin add\` reads it from your nixpkgs.` };
  const rel = releaseOf(p, version);
  if (!rel) return { reason: `${at} carries ${p.label} ${version}, a release the catalog's ${p.label} table (generator/catalog/packages.ts) lacks.` };
  if (!releaseServes(rel, pin.torch))
    return {
      reason:
        `${at} carries ${p.label} ${version}, which serves torch ${rel.servesTorch.min}${rel.servesTorch.below ? `–${rel.servesTorch.below} (exclusive)` : " and later"}, ` +
        `not its torch ${pin.torch}.`,
    };
  return { version };
}

function describe(pkg: PackageName, c: Combo, version: string): string {
  const p = onTorch(c.catalog, pkg);
  const what =
    pkg === TORCH_PACKAGE ? `PyTorch ${version}` : p ? `${p.label} ${version} (PyTorch ${c.release.version})` : `Python environment of PyTorch ${version} and the packages built on it`;
  const gpu = c.gpu && c.cuda ? `${c.gpu.label}, SM${c.gpu.sm}, CUDA ${c.cuda.version}` : "CPU only";
  return `${what} for ${gpu}; ${isaLabel(c.isa)} (${c.isa.system}); Python ${c.py.version}`;
}

/**
 * Whether a variant's capabilities must also go to nixpkgs' `config.cudaCapabilities` (the package-set scope), and
 * why. With policy "torch", the package set keeps nixpkgs' defaults unless they cannot serve the variant:
 * - a Jetson capability (`nixpkgs.jetson`: 11.0 Thor, 8.7 Orin, …) is never in nixpkgs' default list;
 * - a capability missing from nixpkgs' default capabilities of that CUDA set at the variant's pin (`nixpkgs.defaults`:
 *   the pin's own where `pin add` read them, else the catalog's; e.g. 7.0 on CUDA 12.x) leaves magma, nccl, … with
 *   no code for that GPU.
 * Sources: generator/catalog/lib/cuda.ts nixpkgsCudaFacts (nixpkgs' capability table and default rule).
 * @returns { packageSet, reason } — reason is null when the matrix's policy decided, a sentence when the catalog forced it.
 * @throws Error when `caps` mixes Jetson and non-Jetson capabilities (expand never builds such a set)
 */
export function cudaScopeFor(caps: readonly string[], nixpkgs: NixpkgsCudaFacts, policy: CudaCapabilitiesScope): { packageSet: boolean; reason: string | null } {
  const jetson = caps.filter((c) => nixpkgs.jetson.includes(c));
  // A Jetson capability never shares a CUDA set with a non-Jetson one (catalog/gpus.ts JETSON_RULE: nixpkgs refuses
  // it before Thor in every era, and for every Jetson capability in 2025's code).
  if (jetson.length && jetson.length !== caps.length)
    throw new Error(`cudaScopeFor: Jetson capabilities ${jetson.join(", ")} with non-Jetson ${caps.filter((c) => !jetson.includes(c)).join(", ")} in one CUDA set; nixpkgs refuses that mix`);
  if (policy === "packageSet") return { packageSet: true, reason: null };
  if (jetson.length)
    return {
      packageSet: true,
      reason:
        `CUDA package-set scope: nixpkgs builds the Jetson capability ${jetson.join(", ")} only on request (isJetson in ` +
        `_cuda/db/bootstrap/cuda.nix), so this variant sets config.cudaCapabilities and its whole CUDA closure (magma, ` +
        `NCCL and every other library of the cudaPackages set) is built from source for it; no binary cache holds that closure.`,
    };
  const missing = caps.filter((c) => !nixpkgs.defaults.includes(c));
  if (missing.length)
    return {
      packageSet: true,
      reason:
        `CUDA package-set scope: ${missing.join(", ")} is not in nixpkgs' default cudaCapabilities for CUDA ${nixpkgs.cuda} ` +
        `(${nixpkgs.defaults.join(", ")}), so magma, NCCL and the other libraries of the default set would have no code for ` +
        `this GPU; this variant sets config.cudaCapabilities and builds its CUDA closure from source.`,
    };
  return { packageSet: false, reason: null };
}

/**
 * The nixpkgs instance a variant needs: revision, system, CUDA package set (or "cpu") and, when the capabilities
 * go to the whole package set, those capabilities. Variants with one key share one instance in an evaluation.
 * Computed once, here, as each Variant's `nixpkgsKey` (everything else reads that field); written into
 * pkgs/variants.nix, which pkgs/matrix.nix's `keyOf` reads (tests/release.test.ts checks instantiations = distinct keys).
 */
export function nixpkgsInstanceKey(v: Pick<Variant, "nixpkgs" | "system" | "cuda" | "cudaPackageSet" | "cudaCapabilities" | "cudaCapabilitiesForPackageSet">): string {
  return [v.nixpkgs, v.system, v.cuda === null ? "cpu" : v.cudaPackageSet, ...(v.cuda !== null && v.cudaCapabilitiesForPackageSet ? v.cudaCapabilities : [])].join("|");
}

/** The matrix's axes resolved against the catalog, in expansion order (see `expand`). */
interface Axes {
  pythons: PythonVersion[];
  cudas: CudaToolkit[];
  gpus: GpuArch[];
  isas: CpuIsa[];
  packages: PackageName[];
}

/** Where `expand` collects its output across combinations. */
interface ExpandSink extends Expansion {
  /** The torch variant of each combination by name, for the environments built on it. */
  torchByName: Map<string, Variant>;
}

/** The name parts of one combination (formatName without `package`). */
type ComboParts = { tag: string; python: string; cuda: string | null; sm: string | null; isa: string };

/** Per package of one combination: its reasons (the combination's plus its own), versions of packages on torch, builds. */
interface PackageVerdicts {
  pkgReasons: Map<string, string[]>;
  versions: Record<string, string>;
  builds: Map<string, PackageCudaBuild | null>;
}

/** Resolve the matrix's Python, CUDA, GPU and ISA values to catalog entries, sorted; throws on a value the catalog lacks. */
function resolveAxes(matrix: Matrix, catalog: Catalog): Axes {
  const pythons = [...matrix.python].sort(compareVersions).map((v) => find(catalog.python, (p) => p.version === v, `Python ${v}`));
  const cudas = [...matrix.cuda].sort(compareVersions).map((v) => find(catalog.cuda, (c) => c.version === v, `CUDA ${v}`));
  const gpus = [...matrix.gpus]
    .sort((a, b) => Number(a) - Number(b))
    .map((sm) => find(catalog.gpus, (g) => g.sm === sm, `GPU SM${sm}`));
  const isas = matrix.isas.map((k) => find(catalog.isas, (i) => i.key === k, `ISA ${k}`));
  // A package of the table that a named environment lists among its extras (`environments: { serve: ["vllm"] }`) is
  // built as that package's variant, with its verdicts, and is a member of the environment (environmentVariant).
  const named = new Set(Object.values(matrix.environments).flat().filter((e) => onTorch(catalog, e)));
  const packages = PACKAGES.filter((p) => matrix.packages.includes(p) || named.has(p));
  return { pythons, cudas, gpus, isas, packages };
}

/** One matrix release resolved: its catalog release, pin (null when no sourced pin carries it), name tag and hash. */
function resolveRelease(r: Matrix["releases"][number], catalog: Catalog, multi: boolean): { release: TorchRelease; pin: NixpkgsPin | null; tag: string; sha256: string | null } {
  const release = find(catalog.torch, (t) => t.version === r.torch, `PyTorch ${r.torch}`);
  const pin =
    r.nixpkgs !== undefined
      ? find(catalog.nixpkgs, (p) => p.rev === r.nixpkgs, `nixpkgs ${r.nixpkgs}`)
      : (preferredPin(catalog, release.version) ?? null);
  const tag = multi ? release.nameTag : "";
  // validateMatrix resolved the hash (catalog pin or matrix.ts); a pin without one never reaches a variant.
  const sha256 = r.sha256 ?? pin?.sha256 ?? null;
  if (pin && sha256 === null)
    throw new Error(`nixpkgs ${pin.rev} has no sha256: validate the matrix (validateMatrix) before expanding it`);
  return { release, pin, tag, sha256 };
}

/**
 * For an opt-in package on torch dropped for its own reasons at a combination: the nearest combinations that work, in
 * one sentence. Another CUDA version of the same pin (same GPU, judged as expand judges it) whose build of the package
 * succeeds; else the catalog's pins that carry a known release of it serving their torch. null when none is known.
 */
function nearestFor(p: PackageOnTorch, combo: Combo, policy: "serve" | "drop"): string | null {
  const { pin, py, gpu, cuda } = combo;
  const cat = combo.catalog;
  if (pin && gpu) {
    const ok = pin.cuda.filter((v) => {
      const tk = cat.cuda.find((c) => c.version === v);
      const r = onTorchVersion(p, pin, py);
      if (!tk || "reason" in r || v === cuda?.version || pin.brokenCuda[v]) return false;
      const svc = serveGpu(gpu, tk, policy, cat);
      return svc.ok && !("reason" in packageBuildFor(cat, p, { version: r.version, cuda: v, cudaCapabilities: svc.capabilities, torchVersion: pin.torch }));
    });
    if (ok.length) return `Nearest that works: ${p.label} for SM${gpu.sm} with CUDA ${ok.join(" or ")} at nixpkgs ${pin.rev.slice(0, 7)}.`;
  }
  const pins = cat.nixpkgs.filter((q) => q !== pin && q.python.includes(py.version) && !("reason" in onTorchVersion(p, q, py)));
  if (!pins.length) return null;
  return `Nearest that works: ${pins.map((q) => `nixpkgs ${q.rev.slice(0, 7)} (${p.label} ${q[p.pinField]}, PyTorch ${q.torch}, CUDA ${q.cuda.join("/")})`).join(", ")}; the package's CUDA range and GPU list still apply there.`;
}

/** Per package: the combination's reasons, plus (for a package built on torch) its own at this pin. */
function packageVerdicts(combo: Combo, packages: PackageName[], reasons: string[], service: GpuService | undefined, policy: "serve" | "drop"): PackageVerdicts {
  const { release, pin, py, cuda } = combo;
  const pkgReasons = new Map<string, string[]>();
  const versions: Record<string, string> = {};
  const builds = new Map<string, PackageCudaBuild | null>();
  for (const pkg of packages) {
    const p = onTorch(combo.catalog, pkg);
    const own: string[] = [];
    if (p && pin) {
      const r = onTorchVersion(p, pin, py);
      if ("reason" in r) own.push(r.reason);
      else if (!reasons.length) {
        // What this release builds for the combination, or why not (catalog/packages.ts: cudaOnly, CUDA range, targets).
        const b = packageBuildFor(combo.catalog, p, { version: r.version, cuda: cuda?.version ?? null, cudaCapabilities: service?.ok ? service.capabilities : [], torchVersion: release.version });
        if ("reason" in b) own.push(b.reason);
        else {
          versions[pkg] = r.version;
          builds.set(pkg, b.build);
        }
      }
    }
    const near = p?.optIn && own.length && !reasons.length && combo.cuda ? nearestFor(p, combo, policy) : null;
    pkgReasons.set(pkg, [...reasons, ...own, ...(near ? [near] : [])]);
  }
  return { pkgReasons, versions, builds };
}

/**
 * The notes of one kept package variant (`pkg`, at `version`) of a kept combination, in the order the Variant
 * carries them: GPU service, CUDA provenance, GPU, glibc headers, scope, ISA, torchaudio, stable ABI, caveats, then
 * what it is built against or holds.
 */
function packageNotes(c: KeptCombo, k: KeptPackage): string[] {
  const { release, pin, py, cuda, gpu, isa, service } = c;
  const { pkg, version, scope, torchName, envMemberNames } = k;
  const p = onTorch(c.catalog, pkg);
  const notes: string[] = [];
  if (service?.ok && service.note) notes.push(service.note);
  if (cuda && !release.cuda.includes(cuda.version))
    notes.push(
      `PyTorch ${release.version}'s own binaries are built for CUDA ${release.cuda.join(", ")}; this CUDA ${cuda.version} build comes from nixpkgs ${pin.rev.slice(0, 7)}.`,
    );
  if (gpu?.note) notes.push(gpu.note);
  const headers = cuda ? glibcCudaHeaderNote(c.catalog, pin.rev, pin.date, cuda.version) : null;
  if (headers) notes.push(headers);
  if (scope.reason) notes.push(scope.reason);
  if (isa.variantNote) notes.push(isa.variantNote);
  if (p?.pinField === "torchaudio" && release.torchaudioNote) notes.push(release.torchaudioNote);
  const rel = p ? releaseOf(p, version) : undefined;
  if (p && rel?.stableAbi && !release.version.startsWith(`${rel.servesTorch.min}.`))
    notes.push(
      `${p.label} ${version} is built on PyTorch's stable ABI and serves torch >= ${rel.servesTorch.min} ` +
        `(${rel.source.split(";")[0]}); here it is built from source against PyTorch ${release.version}.`,
    );
  if (p) for (const note of caveatsFor(p, cuda?.version ?? null, isa.system)) notes.push(`${note}.`);
  const insecure = p ? insecureNote(c.catalog, p, version, pin.rev, py.version) : null;
  if (insecure) notes.push(insecure);
  if (p) notes.push(`Built against ${torchName} (the same torch derivation).`);
  if (pkg === ENV_PACKAGE)
    notes.push(
      `python${py.version}.withPackages of ${[torchName, ...envMemberNames].join(", ")}` +
        `${pin.torchcodec !== null ? ` and ${py.packageSet}.torchcodec built on the same torch` : ""}: one torch in the environment.`,
    );
  return notes;
}

/**
 * A combination whose pin carries it, with what was decided of it: the record every kept package variant and named
 * environment of the combination is made from (packageVariant, environmentVariant).
 */
interface KeptCombo extends Combo {
  pin: NixpkgsPin;
  sha256: string;
  /** The name parts of the combination (formatName without `package`). */
  parts: ComboParts;
  /** How the GPU is served (undefined for a CPU-only combination). */
  service: GpuService | undefined;
  verdicts: PackageVerdicts;
  matrix: Matrix;
}

/** One kept package of a kept combination, for its notes: its version, CUDA scope and the names it is built against. */
interface KeptPackage {
  pkg: PackageName;
  version: string;
  scope: { reason: string | null };
  /** The combination's torch variant. */
  torchName: string;
  /** The environment's members besides torch ([] for any other package). */
  envMemberNames: string[];
}

/** The Variant of one kept package (torch, a package on torch, or the environment) of a combination. */
function packageVariant(pkg: PackageName, c: KeptCombo, envMembers: PackageName[]): Variant {
  const { release, pin, sha256, parts, service, verdicts, matrix, py, cuda, gpu, isa } = c;
  const name = formatName({ ...parts, package: pkg });
  const torchName = formatName({ ...parts, package: TORCH_PACKAGE });
  const p = onTorch(c.catalog, pkg);
  const isEnv = pkg === ENV_PACKAGE;
  const version = p ? verdicts.versions[pkg]! : release.version;
  const scope =
    cuda && service?.ok ? cudaScopeFor(service.capabilities, nixpkgsCudaFacts(c.catalog, pin, cuda), matrix.policy.cudaCapabilitiesScope) : { packageSet: false, reason: null };
  const envMemberNames = envMembers.map((q) => formatName({ ...parts, package: q }));
  const fixes = p ? fixesFor(p, pin.rev, cuda?.version ?? null, isa.system) : [];
  const notes = [
    ...packageNotes(c, { pkg, version, scope, torchName, envMemberNames }),
    ...fixes.map((f) => `${f.apply ? "Fix applied" : "Fix recorded, not applied"}: ${fixText(f)}.`),
  ];
  const dependsOn = p ? [torchName] : isEnv ? [torchName, ...envMemberNames] : [];
  const cudaCapabilities = service?.ok ? service.capabilities : [];
  return {
    name,
    package: pkg,
    role: p ? "onTorch" : isEnv ? "env" : "torch",
    extras: [],
    attr: p?.attr ?? null,
    version,
    torchVersion: release.version,
    onTorchVersions: { ...verdicts.versions },
    python: py.version,
    pythonPackageSet: py.packageSet,
    cuda: cuda?.version ?? null,
    cudaPackageSet: cuda?.packageSet ?? null,
    sm: gpu?.sm ?? null,
    isa: isa.key,
    system: isa.system,
    cudaCapabilities,
    binaryCompat: service?.ok ? service.binaryCompat : false,
    cudaCapabilitiesForPackageSet: scope.packageSet,
    // The ISA's gccarch feature: every derivation of the variant runs its code while it builds (catalog/cpu-isas.ts).
    requiredSystemFeatures: [...new Set([...matrix.policy.requiredSystemFeatures, ...(p?.requiredSystemFeatures?.features ?? []), gccarchFeature(isa)])],
    ...(p ? packageBuildOf(p, verdicts.builds.get(pkg) ?? null, fixes.flatMap((f) => (f.apply ? [f.apply] : []))) : {}),
    cflags: [...isa.cflags],
    nixpkgs: pin.rev,
    nixpkgsSha256: sha256,
    nixpkgsKey: nixpkgsInstanceKey({
      nixpkgs: pin.rev,
      system: isa.system,
      cuda: cuda?.version ?? null,
      cudaPackageSet: cuda?.packageSet ?? null,
      cudaCapabilities,
      cudaCapabilitiesForPackageSet: scope.packageSet,
    }),
    dependsOn,
    file: `.flox/pkgs/${name}.nix`,
    description: describe(pkg, c, version),
    notes,
  };
}

/** A named environment of a kept combination (matrix.ts `environments`): its name, extras, torch variant and members. */
interface NamedEnvironment {
  envName: string;
  /** The extras that are not packages of the table (those are members). */
  extras: readonly string[];
  /** The combination's torch variant, which the environment's fields start from. */
  base: Variant;
  /** Names of the member variants besides torch. */
  memberNames: string[];
}

/** The Variant of a named environment (matrix.ts `environments`): `base` (the combination's torch) plus `extras`. */
function environmentVariant(c: KeptCombo, env: NamedEnvironment): Variant {
  const { release, pin, py, parts } = c;
  const { envName, extras, base, memberNames } = env;
  const pkg = environmentPackage(envName);
  const name = formatName({ ...parts, package: pkg });
  const torchName = formatName({ ...parts, package: TORCH_PACKAGE });
  const notes = base.notes.filter((n) => !n.startsWith("Built against"));
  notes.push(
    `python${py.version}.withPackages of ${[torchName, ...memberNames].join(", ")}` +
      `${pin.torchcodec !== null ? `, ${py.packageSet}.torchcodec` : ""}${extras.length ? ` and the extras ${extras.map((e) => `${py.packageSet}.${e}`).join(", ")}` : ""}, ` +
      `each taken from the Python set whose torch is ${torchName}: one torch in the environment. nixpkgs ${pin.rev.slice(0, 7)} must carry every extra (evaluation names a missing one).`,
  );
  const unjudged = extras.filter((e) => !extraPromise(c.catalog, e).judged);
  if (unjudged.length)
    notes.push(`The device code of ${unjudged.join(", ")} is not judged (\`explain\` says why per extra; generator/catalog/extras.ts).`);
  return {
    ...base,
    name,
    package: pkg,
    role: "env",
    extras: [...extras],
    attr: null,
    version: release.version,
    dependsOn: [torchName, ...memberNames],
    file: `.flox/pkgs/${name}.nix`,
    description: `Python environment "${envName}" of PyTorch ${release.version}, the packages built on it${extras.length ? ` and ${extras.join(", ")}` : ""}${describe(TORCH_PACKAGE, c, release.version).replace(/^PyTorch \S+/, "")}`,
    notes,
  };
}

/** Expand one (release, python, cuda|null, gpu|null, isa) combination into `out`: its package variants, then its named environments. */
function expandCombination(combo: Combo, packages: PackageName[], matrix: Matrix, out: ExpandSink): void {
  const { release, pin, sha256, tag, py, cuda, gpu, isa } = combo;
  const { reasons, service } = judge(combo, matrix, combo.catalog);
  const parts: ComboParts = { tag, python: py.version, cuda: cuda?.version ?? null, sm: gpu?.sm ?? null, isa: isa.key };
  const verdicts = packageVerdicts(combo, packages, reasons, service, matrix.policy.binaryCompat);
  const { pkgReasons } = verdicts;
  const kept: KeptCombo | null = pin !== null ? { ...combo, pin, sha256: sha256!, parts, service, verdicts, matrix } : null;
  const keeps = (pkg: string) => kept !== null && (pkgReasons.get(pkg)?.length ?? 1) === 0;
  const torchName = formatName({ ...parts, package: TORCH_PACKAGE });
  for (const pkg of packages) {
    const name = formatName({ ...parts, package: pkg });
    // The environment holds torch and the packages on torch the matrix keeps here; it needs torch.
    const envMembers = pkg === ENV_PACKAGE ? packages.filter((q) => onTorch(combo.catalog, q)?.inEnv && keeps(q)) : [];
    if (!keeps(pkg) || kept === null) {
      out.excluded.push({ name, package: pkg, torchVersion: release.version, ...parts, reasons: pkgReasons.get(pkg) ?? reasons });
      continue;
    }
    out.variants.push(packageVariant(pkg, kept, envMembers));
    if (name === torchName) out.torchByName.set(name, out.variants.at(-1)!);
  }
  // Named environments (matrix.ts `environments`): the torch stack of this combination plus each one's extras.
  for (const [envName, extras] of Object.entries(matrix.environments)) {
    const pkg = environmentPackage(envName);
    const name = formatName({ ...parts, package: pkg });
    const torchReasons = pkgReasons.get(TORCH_PACKAGE) ?? reasons;
    if (kept === null || reasons.length > 0) {
      out.excluded.push({ name, package: pkg, torchVersion: release.version, ...parts, reasons: reasons.length ? reasons : torchReasons });
      continue;
    }
    // A package of the table named as an extra: the environment has that package's verdicts, and holds its variant.
    const ownPackages = extras.filter((e) => onTorch(combo.catalog, e));
    const refused = ownPackages.filter((q) => !keeps(q));
    if (refused.length) {
      out.excluded.push({ name, package: pkg, torchVersion: release.version, ...parts, reasons: refused.flatMap((q) => (pkgReasons.get(q) ?? []).map((r) => `${q}: ${r}`)) });
      continue;
    }
    const base = out.torchByName.get(torchName);
    if (!base) throw new Error(`expand: ${name} needs ${torchName}, which this combination did not emit`);
    const members = packages
      .filter((q) => ((onTorch(combo.catalog, q)?.inEnv && keeps(q)) || ownPackages.includes(q)))
      .map((q) => formatName({ ...parts, package: q }));
    out.variants.push(environmentVariant(kept, { envName, extras: extras.filter((e) => !ownPackages.includes(e)), base, memberNames: members }));
  }
}

/**
 * Expand a validated matrix against the catalog.
 *
 * Order: releases and ISAs as listed in matrix.ts, Python and CUDA ascending, GPUs by SM ascending, CPU-only
 * after CUDA; within a combination the order of PACKAGES (pytorch, the packages on torch, the environment). Names carry the release tag only when the matrix
 * lists more than one release.
 *
 * @param matrix validated matrix (output of `makeMatrixSchema(catalog)`).
 * @throws Error when the matrix names a value the catalog lacks (validation should have caught it).
 */
export function expand(matrix: Matrix, catalog: Catalog): Expansion {
  // The torch variant of each combination by name, for the environments built on it (a lookup per environment
  // variant: expand stays linear in the number of variants however many environments the matrix names).
  const out: ExpandSink = { variants: [], excluded: [], torchByName: new Map() };
  const multi = matrix.releases.length > 1;
  const { pythons, cudas, gpus, isas, packages } = resolveAxes(matrix, catalog);
  const only = matrix.only ? new Set(matrix.only) : null;

  for (const r of matrix.releases) {
    const { release, pin, tag, sha256 } = resolveRelease(r, catalog, multi);
    for (const py of pythons) {
      const gpuCombos: [CudaToolkit | null, GpuArch | null][] = [];
      for (const cuda of cudas) for (const gpu of gpus) gpuCombos.push([cuda, gpu]);
      if (matrix.cpuOnly) gpuCombos.push([null, null]);
      for (const [cuda, gpu] of gpuCombos) {
        for (const isa of isas) {
          if (only && !only.has(formatCombination({ python: py.version, cuda: cuda?.version ?? null, sm: gpu?.sm ?? null, isa: isa.key })))
            continue;
          expandCombination({ release, pin, sha256, tag, py, cuda, gpu, isa, catalog }, packages, matrix, out);
        }
      }
    }
  }
  return { variants: out.variants, excluded: out.excluded };
}

