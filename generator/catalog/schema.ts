/**
 * zod schemas for the catalog of facts (generator/catalog/): the shape of every fact, and the types inferred from
 * them. Each fact carries `source`, a document, release note or file that states it. The built-in tables are
 * validated against `CatalogSchema` when generator/catalog/index.ts loads, and a user's `local-catalog.json`
 * (generator/catalog/local.ts) against the same schemas.
 */
import "../zod-jitless.ts";
import * as z from "zod";

import { SYSTEMS } from "../constants.ts";

const version2 = z.string().regex(/^\d+\.\d+$/, "expected MAJOR.MINOR, e.g. 12.8");
const capability = z.string().regex(/^\d+\.\d+$/, "expected a compute capability written MAJOR.MINOR, e.g. 12.0");
const source = z.string().min(3);

/** A sha256 as Nix accepts it in `fetchTarball { sha256 }`: SRI ("sha256-" + 44 base64 chars) or 52 base32 chars. */
export const SHA256_RE = /^(sha256-[A-Za-z0-9+/]{43}=|[0-9abcdfghijklmnpqrsvwxyz]{52})$/;

/** A nixpkgs channel's name (nixos-unstable, nixos-25.11, nixpkgs-unstable): letters, digits, ".", "-" and "_". */
export const CHANNEL_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** The allowed form of a channel, as errors say it. */
export const CHANNEL_FORM = "a channel name of letters, digits, '.', '-' and '_', such as nixos-unstable, nixos-25.11 or nixpkgs-unstable";

/** Whether `date` is a real calendar date written YYYY-MM-DD (2026-02-29 is not: 2026 is no leap year). */
export function isCalendarDate(date: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}
/** The allowed form of a date, as errors say it. */
export const DATE_FORM = "a calendar date YYYY-MM-DD, such as 2026-11-01";

/**
 * One GPU architecture, keyed by its SM number (compute capability without the dot: `121` for 12.1).
 * `systems` lists the Nix systems a host of this GPU can be: SoC-only GPUs (Thor, GB10, Orin) are
 * `["aarch64-linux"]` only (ARCHITECTURE.md rule 5).
 */
export const GpuArchSchema = z.object({
  /** SM number as a string: "121". */
  sm: z.string().regex(/^\d{2,3}$/),
  /** Compute capability as nvcc and TORCH_CUDA_ARCH_LIST write it: "12.1". */
  capability,
  /** Architecture family: "Blackwell", "Hopper", ... */
  family: z.string(),
  /** Products with this compute capability: "DGX Spark (GB10)", "H100", ... */
  products: z.array(z.string()).min(1),
  /** Short hardware label for names in descriptions and docs: "DGX Spark (GB10)". */
  label: z.string(),
  /** Nix systems a host with this GPU can run. */
  systems: z.array(z.enum(SYSTEMS)).min(1),
  /**
   * SoC GPUs only: the CPU of that SoC and the catalog ISA keys it runs. A GPU inside an SoC only ever sits next to
   * that CPU, so other ISAs are dropped (ARCHITECTURE.md rules 4 and 5).
   */
  socCpu: z.object({ cpu: z.string(), isas: z.array(z.string()), source }).optional(),
  /** Optional note shown where the value surprises (e.g. Thor's rename from sm_101 to sm_110). */
  note: z.string().optional(),
  source,
});
export type GpuArch = z.infer<typeof GpuArchSchema>;

/**
 * One CUDA toolkit line as a nixpkgs package set sees it.
 * `capabilities` are the real (sm_XY, non-`a`/`f`) targets its nvcc compiles offline, written "X.Y".
 */
export const CudaToolkitSchema = z.object({
  /** "12.8" */
  version: version2,
  /** nixpkgs attribute of the package set: "cudaPackages_12_8". */
  packageSet: z.string().regex(/^cudaPackages_\d+_\d+$/),
  /** Compute capabilities nvcc of this version compiles for (offline, real architectures), ascending. */
  capabilities: z.array(capability).min(1),
  /** Minimum Linux driver version for this toolkit (toolkit release notes, Table 3), e.g. "570.26". */
  minDriverLinux: z.string().regex(/^\d+(\.\d+)*$/),
  /**
   * The `cudaCapabilities` nixpkgs builds this CUDA package set for when config.cudaCapabilities is not set (what
   * binary caches built with the default config hold), ascending. A variant whose capabilities are all in this list
   * can leave the rest of the CUDA set at these defaults (policy.cudaCapabilitiesScope "torch").
   */
  nixpkgsDefaultCapabilities: z.array(capability).min(1),
  /** Optional note (e.g. architectures dropped or renamed in this release). */
  note: z.string().optional(),
  source,
});
export type CudaToolkit = z.infer<typeof CudaToolkitSchema>;

/**
 * One CUDA major release family under NVIDIA's minor-version compatibility: an application built with any toolkit of
 * the family runs, with a limited feature set, on a driver of at least `minDriverLinux` (generator/catalog/cuda.ts
 * CUDA_MINOR_VERSION_COMPAT; matrix/compat.ts `driverSupport` applies it).
 */
export const CudaMajorSchema = z.object({
  /** "13" */
  major: z.string().regex(/^\d+$/),
  /** The family's minimum Linux driver for minor-version compatibility, e.g. "580.65.06". */
  minDriverLinux: z.string().regex(/^\d+(\.\d+)*$/),
  /** What an application of a newer minor gives up on such a driver, each in a few words. */
  loses: z.array(z.string()).min(1),
  /** Which parts were read at the source and which are taken (inferred), in words. */
  inferred: z.string().optional(),
  source,
});
export type CudaMajor = z.infer<typeof CudaMajorSchema>;

/**
 * One CPU ISA level. `cflags` turn on only instructions that every CPU in `for` has (ARCHITECTURE.md rule 4).
 */
export const CpuIsaSchema = z.object({
  /** Name key used in variant names: "avx512bf16", "armv8_2". */
  key: z.string().regex(/^[a-z0-9_]+$/),
  /** Human label: "AVX-512 BF16". */
  label: z.string(),
  system: z.enum(SYSTEMS),
  /** Compiler flags as data, e.g. ["-march=x86-64-v4", "-mavx512bf16"]. */
  cflags: z.array(z.string().regex(/^-m[a-z0-9=.+_-]+$/)).min(1),
  /** CPUs this ISA is for (each has every instruction the flags enable). */
  cpus: z.array(z.string()).min(1),
  /** CPUs people expect here that it is NOT for, with why. */
  notFor: z.array(z.string()),
  /** CPU feature names (from /proc/cpuinfo `flags`/`Features`) a host must have to run this ISA's code. */
  requiredCpuFeatures: z.array(z.string()).min(1),
  /** Rank within its system: a higher rank is a wider ISA (detect picks the highest a host has). */
  rank: z.number().int().nonnegative(),
  /**
   * The Nix system feature a builder must declare to take this ISA's derivations (they run its code while they
   * build): `gccarch-<arch>`, the feature NixOS declares for its `gcc.arch` and every architecture nixpkgs lists among
   * that arch's `inferiors` (nixos/modules/config/nix.nix; lib/systems/architectures.nix). `arch` is the smallest
   * architecture whose instructions include the flags; `declaredBy` the gcc.arch values whose NixOS builders declare it
   * themselves; `why` says how it was chosen and who must add it to nix.conf `system-features` by hand.
   */
  gccarch: z.object({ arch: z.string().regex(/^[a-z0-9.+_-]+$/), declaredBy: z.array(z.string()), why: z.string() }),
  note: z.string().optional(),
  /** Shown on every variant of this ISA (list --json `notes`, explain, docs): a build decision users must know. */
  variantNote: z.string().optional(),
  source,
});
export type CpuIsa = z.infer<typeof CpuIsaSchema>;

/** One CPython minor version and its nixpkgs package-set attribute. */
export const PythonVersionSchema = z.object({
  /** "3.13" */
  version: version2,
  /** "python313Packages" */
  packageSet: z.string().regex(/^python\d+Packages$/),
  source,
});
export type PythonVersion = z.infer<typeof PythonVersionSchema>;

/** One PyTorch release line and its torchaudio pairing. */
export const TorchReleaseSchema = z.object({
  /** Full release version: "2.8.0". */
  version: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** Name prefix used when the matrix holds more than one release: "28" gives `pytorch28-…`. */
  nameTag: z.string().regex(/^\d+$/),
  /** The torchaudio release built against it: "2.8.0". */
  torchaudio: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** Python minor versions this release supports (its wheels / setup.py classifiers). */
  python: z.array(version2).min(1),
  /** CUDA versions PyTorch's own release matrix builds this release for. */
  cuda: z.array(version2).min(1),
  /** Shown on every torchaudio variant of this release (e.g. where its audio I/O comes from). */
  torchaudioNote: z.string().optional(),
  /**
   * PyTorch's own pairings for the releases of this minor (pytorch.org's compatibility table): release date, the
   * torchvision and torchcodec published with it (torchcodec null: none). What nixpkgs carries at a pin is the pin's
   * business (NixpkgsPin.torchvision, .torchcodec); this is what upstream pairs. Its source is in `source`.
   */
  upstream: z
    .array(
      z.object({
        version: z.string().regex(/^\d+\.\d+\.\d+$/),
        released: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
        torchvision: z.string().regex(/^\d+\.\d+\.\d+$/),
        torchcodec: z.string().regex(/^\d+\.\d+\.\d+$/).nullable(),
      }),
    )
    .optional(),
  source,
});
export type TorchRelease = z.infer<typeof TorchReleaseSchema>;


/**
 * A nixpkgs revision and what it carries. A variant is only emitted when a known pin carries its torch release,
 * Python set and CUDA package set, and its torch is not marked broken for that CUDA.
 */
export const NixpkgsPinSchema = z.object({
  /** 40-hex git revision of NixOS/nixpkgs. */
  rev: z.string().regex(/^[0-9a-f]{40}$/),
  /** Commit date of the revision (YYYY-MM-DD), when a source gives it; the newer of two pins is preferred. */
  date: z.string().refine(isCalendarDate, `expected ${DATE_FORM}`).nullable(),
  /**
   * The hash `builtins.fetchTarball` checks: the NAR hash (sha256) of the unpacked GitHub tarball, in SRI form
   * ("sha256-…", equal to a flake.lock `narHash` of the same rev) or Nix base32; null when no source gives it, and
   * then matrix.ts must give `releases[].sha256` before anything is generated.
   */
  sha256: z.string().regex(SHA256_RE, "expected an SRI sha256 (sha256-…=) or a 52-character Nix base32 hash").nullable(),
  /** Where the hash was read (a flake.lock, a fetchTarball call); null when `sha256` is null. */
  sha256Source: z.string().min(3).nullable(),
  /** python3Packages.torch version at this revision. */
  torch: z.string(),
  /** python3Packages.torchaudio version at this revision. */
  torchaudio: z.string(),
  /** Python minor versions with a package set at this revision. */
  python: z.array(version2).min(1),
  /** CUDA versions with a `cudaPackages_X_Y` set at this revision. */
  cuda: z.array(version2).min(1),
  /** CUDA versions (MAJOR.MINOR) whose torch is marked broken at this revision, with the reason. */
  brokenCuda: z.record(z.string(), z.string()),
  /**
   * python3Packages.torchcodec version at this revision (nixpkgs' torchaudio depends on it from 2.11.0), or null when
   * the set has none; "unknown" when it is present but no source gives its version.
   */
  torchcodec: z.string().nullable(),
  /**
   * python3Packages.torchvision version at this revision, or null when the set has none; "unknown" when no source
   * gives it. A torchvision variant is only emitted when it is known and its release serves the pin's torch
   * (generator/catalog/packages.ts).
   */
  torchvision: z.string().nullable().default("unknown"),
  /**
   * The versions of the CUDA extensions built on torch (generator/catalog/packages.ts) at this revision:
   * pythonXYZPackages.flash-attn, .xformers and .bitsandbytes; null when the set has none, "unknown" when no source
   * gives it (then no variant of it is emitted; `pin add` reads it from a nixpkgs checkout).
   */
  flashAttn: z.string().nullable().default("unknown"),
  xformers: z.string().nullable().default("unknown"),
  bitsandbytes: z.string().nullable().default("unknown"),
  /** pythonXYZPackages.vllm's version at this revision (the serving stack on torch); as the fields above. */
  vllm: z.string().nullable().default("unknown"),
  /** The default `python3` at this revision ("3.13"), when a source gives it. */
  defaultPython: version2.nullable(),
  /** The CUDA version of the default `cudaPackages` at this revision ("12.9"), when a source gives it. */
  defaultCuda: version2.nullable(),
  /**
   * The Python versions whose `pythonXYZPackages` nixpkgs' CI evaluation recurses into at this revision
   * (`recurseIntoAttrs` in all-packages.nix: `pythonXYZPackages.recurseForDerivations`), e.g. ["3.13", "3.14"];
   * `python3Packages` itself is `dontRecurseIntoAttrs`. The NixOS-CUDA Hydra builds the cudaSupport-sensitive
   * attributes of exactly these sets (generator/catalog/binary-cache.ts). null when no source gives them.
   */
  recursedPython: z.array(version2).nullable().default(null),
  /**
   * nixpkgs' default `cudaCapabilities` per CUDA set at this revision (`cudaPackages_X_Y.flags.cudaCapabilities` with no
   * config.cudaCapabilities: what the binary caches built with the default config hold), CUDA MAJOR.MINOR → capabilities
   * ascending, as `pin add` reads it by evaluation (pkgs/inspect-pin.nix; the pin's `source` says so). null: not read at
   * this revision; the catalog's table stands in (CudaToolkit.nixpkgsDefaultCapabilities, computed from
   * Catalog.nixpkgsCapabilities, read at one revision). A CUDA version missing from the record falls back the same way.
   */
  nixpkgsDefaultCapabilities: z.record(version2, z.array(capability)).nullable().default(null),
  /**
   * Whether the catalog read which bundled libraries (catalog/device-code.ts `linkedAt`) torch links statically at this
   * revision: the checker judges the bundled-library lines of a variant of this pin only when it did (catalog/lib/checker-facts.ts
   * `knownPins`). Absent: false (a pin `pin add` wrote: the lines stay "not checked").
   */
  bundledLinksKnown: z.boolean().default(false),
  /** NixOS channel the revision was taken from: "nixos-unstable", "nixos-26.05"; null when unknown. */
  channel: z.string().regex(CHANNEL_RE, `expected ${CHANNEL_FORM}`).nullable(),
  /**
   * Facts of this entry that were inferred (from dates, neighbouring revisions, PR order) rather than read at this
   * revision: field name ("torch", "cuda", "brokenCuda", ...) → how it was inferred. Shown in BUILD_MATRIX.md.
   */
  inferred: z.record(z.string(), z.string()),
  source,
});
export type NixpkgsPin = z.infer<typeof NixpkgsPinSchema>;

/** A TORCH_CUDA_ARCH_LIST-style range of versions, MAJOR.MINOR: `min` inclusive, `below` exclusive (null: no bound). */
const servesRange = z.object({ min: version2, below: version2.nullable() });

/** Where a build keeps its PTX (see DeviceTargets `ptxIn`), with the source of the fact. */
const PtxLocationSchema = z.object({ where: z.enum(["image", "relocatable"]), source });

/**
 * How one release of a package built on torch turns the variant's capabilities into device code, read in its build
 * scripts:
 * - `torchArchList`: torch.utils.cpp_extension `_get_cuda_arch_flags` from `TORCH_CUDA_ARCH_LIST` ("9.0" →
 *   `-gencode arch=compute_90,code=sm_90`; PTX only for a `+PTX` entry, which we never write): SASS exactly the
 *   capabilities, no PTX. `extraSass` adds what the package's own build adds for a capability (read in its setup.py).
 * - `ownList`: the package builds its own `-gencode` list from `variable`, which accepts only the listed `tokens`; each
 *   capability is served by the token of the same major whose minor is ≤ its own (CUDA Programming Guide, "Binary
 *   Compatibility": a cubin for X.y runs on X.z, z ≥ y; generator/catalog/lib/capability.ts), from `minCuda` on. A capability no
 *   token serves cannot be built (the variant is dropped with the reason). No PTX. `limit`: the limit in one clause,
 *   for drop reasons. `fallback`: what the build compiles when no token of `variable` is recognised (absent: nothing;
 *   "torchArchList": no nvcc flag names an arch and cpp_extension compiles TORCH_CUDA_ARCH_LIST).
 * - `cmakeList`: a CMake cache variable (`-D<flag>=80;90`, capabilities without dots) the package's CMakeLists turns
 *   into CMAKE_CUDA_ARCHITECTURES itself; `ptxForHighest`: after sorting and de-duplicating the list, the highest
 *   entry gets PTX besides SASS (CMake's "90" without `-real`), every other entry SASS only (`-real`). `ptxIn`: where
 *   a build that holds PTX keeps it: "image" (the device-linked fatbin, `.nv_fatbin`, listed by `cuobjdump
 *   --list-ptx`) or "relocatable" (`-rdc=true` objects' `__nv_relfatbin`, listed by `cuobjdump -all --list-ptx`
 *   only; the CUDA runtime JIT-compiles it all the same). Absent: "image".
 */
export const DeviceTargetsSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("torchArchList"),
    extraSass: z.array(z.object({ when: capability, adds: z.string(), minCuda: version2, source })).optional(),
  }),
  z.object({
    kind: z.literal("ownList"),
    variable: z.string(),
    tokens: z.array(z.object({ token: z.string(), capability, minCuda: version2 })).min(1),
    limit: z.string(),
    fallback: z.object({ to: z.literal("torchArchList"), source }).optional(),
    source,
  }),
  z.object({ kind: z.literal("cmakeList"), flag: z.string(), ptxForHighest: z.boolean(), ptxIn: PtxLocationSchema.optional(), source }),
  z.object({
    kind: z.literal("supportedArchs"),
    /** The package's own list of the architectures it compiles, per CUDA range (its CMakeLists' CUDA_SUPPORTED_ARCHS). */
    eras: z
      .array(
        z.object({
          minCuda: version2,
          belowCuda: version2.nullable(),
          archs: z.array(capability).min(1),
          /**
           * CUDA >= 12.9 family targets ("12.0f") its kernel lists compile for an entry: a cubin for compute_120f that runs on
           * 12.x, which `cuobjdump --list-elf` (CUDA 13.0) names `sm_120` like the plain one and `-symbols` `arch = sm_120f`
           * (catalog/device-code.ts; tests/fixtures/probes/h100-static-link-toy, for sm_100f).
           */
          family: z.boolean(),
          source,
        }),
      )
      .min(1),
    /** The CMake cache variables that carry the entries: dotted ("TORCH_CUDA_ARCH_LIST") and dot-less (CUTLASS). */
    archFlag: z.string(),
    dotlessFlag: z.string(),
    limit: z.string(),
    source,
  }),
]);
export type DeviceTargets = z.infer<typeof DeviceTargetsSchema>;

/** One release of a package built on torch and the torch minors it serves. */
export const OnTorchReleaseSchema = z.object({
  /** A full version ("2.11.0") or a series ("0.27", matching 0.27.0, 0.27.1). */
  version: z.string().regex(/^\d+\.\d+(\.\d+)?$/),
  /** Torch versions served, MAJOR.MINOR: `min` inclusive, `below` exclusive (null: no upper bound). */
  servesTorch: servesRange,
  /** Built against PyTorch's stable C ABI rather than one torch minor's C++ ABI. */
  stableAbi: z.boolean(),
  /**
   * Packages on torch that nixpkgs' file of this release lists in `dependencies` (torchaudio 2.11.0: torchcodec), as
   * read in that file; `pin check` compares it with the evaluated propagatedBuildInputs.
   */
  nixpkgsDependencies: z.array(z.string()).optional(),
  /** CUDA versions this release builds with: `min` inclusive, `below` exclusive (null: no bound); absent: any. */
  cuda: z.object({ min: version2, below: version2.nullable(), source }).optional(),
  /** CUDA versions with which this release is reported to fail to build, with the source; such combinations are dropped. */
  failsWithCuda: z.object({ cuda: z.array(version2), source }).optional(),
  /**
   * Capabilities for which a build of this release holds code that fails at run time on those very GPUs, with the
   * source; such combinations are dropped.
   */
  failsOnCapabilities: z.object({ capabilities: z.array(capability), source }).optional(),
  /** What device code a build holds for a variant's capabilities (absent: `torchArchList`, exactly them, no PTX). */
  targets: DeviceTargetsSchema.optional(),
  source,
});
export type OnTorchRelease = z.infer<typeof OnTorchReleaseSchema>;

/** How one era of a package's nixpkgs file hands the CUDA capabilities to its build. */
const ArchListEraSchema = z.object({
  /** First version of the package whose nixpkgs file does it this way (MAJOR.MINOR). */
  from: version2,
  /** Where the file sets `TORCH_CUDA_ARCH_LIST`: in `env`, as a top-level attribute, or not at all. */
  placement: z.enum(["env", "topLevel", "none"]),
  /** The Nix expression, as written in the file. */
  expr: z.string(),
  source,
});
export type ArchListEra = z.infer<typeof ArchListEraSchema>;

/** The fields of a nixpkgs pin (NixpkgsPinSchema) that record a package built on torch's version at that revision. */
export const PIN_FIELDS = ["torchaudio", "torchvision", "torchcodec", "flashAttn", "xformers", "bitsandbytes", "vllm"] as const;

/** One package built on torch: a row of generator/catalog/packages.ts (whose header says what each field means). */
export const PackageOnTorchSchema = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  /** Attribute in nixpkgs' `pythonXYZPackages`. */
  attr: z.string(),
  /** Name used in prose ("torchvision"). */
  label: z.string(),
  /** Field of a nixpkgs pin that records this package's version at that revision. */
  pinField: z.enum(PIN_FIELDS),
  releases: z.array(OnTorchReleaseSchema).min(1),
  archList: z.array(ArchListEraSchema),
  /**
   * Where its libraries with device code are: a directory of the installed package (relative to site-packages, every
   * shared object in it), or `file`: a RegExp the file name of an extension module beside the packages matches.
   */
  deviceCode: z.object({ directory: z.string(), file: z.string().optional(), source }),
  /** Set when the package has no CPU-only build: the reason (sourced); its CPU-only combinations are dropped with it. */
  cudaOnly: z.string().optional(),
  /**
   * Memory one compile process of this package needs, GiB, with its source (pkgs/variant-attrs.nix caps MAX_JOBS by
   * it; generator/model/concurrency.ts gives builds floor(memory per build / this) cores). Absent: catalog/machines.ts GIB_PER_COMPILE_JOB (4 GiB).
   */
  gibPerCompileJob: z.object({ gib: z.number().positive(), source }).optional(),
  /** Reports of builds on some systems or CUDA versions not reproduced here: a note (never a drop), with the source. */
  caveats: z.array(z.object({ system: z.enum(SYSTEMS).optional(), minCuda: version2.optional(), note: z.string() })).optional(),
  /**
   * Fixes a pin's nixpkgs needs for this package, as data (which attribute, what change, why, with the source): the
   * builder applies those with an `apply` key where `when` holds (pkgs/package-on-torch.nix); the others are notes of
   * what a recipe of that kind does, shown by explain. `when`: the pins (revisions) it concerns, the CUDA range, the
   * system; an absent key holds everywhere.
   */
  fixes: z
    .array(
      z.object({
        attr: z.string(),
        change: z.string(),
        why: z.string(),
        apply: z.enum(["unbreak", "cudaCrt", "cupyCudaPackages", "bnbCapabilities"]).optional(),
        when: z
          .object({ pins: z.array(z.string()).optional(), minCuda: version2.optional(), belowCuda: version2.optional(), system: z.enum(SYSTEMS).optional() })
          .default({}),
        source,
      }),
    )
    .optional(),
  /** Builder features a build of it needs beyond the matrix policy's (nix.conf system-features), with the source. */
  requiredSystemFeatures: z.object({ features: z.array(z.string()), source }).optional(),
  /** The pname the build must have where nixpkgs' file has another (pythonMetadataCheckHook, NixOS/nixpkgs#532778). */
  pname: z.object({ value: z.string(), source }).optional(),
  /** Keys of the probe's per-package `gpu` results that must hold on a GPU (generator/verify/probe.py). */
  gpuChecks: z.array(z.object({ key: z.string(), label: z.string() })),
  /** How far its device-code promise has met real binaries (docs/real-builds.md), or null (the tests' models only). */
  checkedOnRealBuild: z.string().nullable(),
  /** Build duration estimate without recorded builds, seconds, with where it comes from. */
  buildSeconds: z.object({ seconds: z.number().positive(), source }),
  inEnv: z.boolean(),
  /** Built only when matrix.ts `packages` names it (the CUDA extensions); absent/false: also in the default `packages`. */
  optIn: z.boolean().optional(),
  source,
});
export type PackageOnTorch = z.infer<typeof PackageOnTorchSchema>;

/**
 * One extra's facts (an environment's nixpkgs Python attribute, generator/catalog/extras.ts). `deviceCode`: "none"
 * (pure Python or CPU-only native code), "runtimeJit" (compiles its kernels at run time on the user's host: nothing
 * of the build to judge), "notJudged" (ships device code the variant does not compile for its capabilities).
 */
export const ExtraFactSchema = z.object({
  /** nixpkgs attribute in pythonXYZPackages: "deepspeed". */
  attr: z.string().regex(/^[A-Za-z_][A-Za-z0-9_'-]*$/),
  deviceCode: z.enum(["none", "runtimeJit", "notJudged"]),
  /** Whether it takes `torch` from its Python set (so the environment builds it on the variant's torch). */
  takesTorch: z.boolean(),
  /** What the environment's name promises about it, in words (shown by `explain`). */
  promise: z.string(),
  /** Where nixpkgs has it: the first revision or PR that carries it, when a source gives it. */
  since: z.string().optional(),
  source,
});
export type ExtraFact = z.infer<typeof ExtraFactSchema>;

/** What one torch minor's cpp_extension accepts in TORCH_CUDA_ARCH_LIST (generator/catalog/torch-arch-list.ts). */
export const TorchArchListFactsSchema = z.object({
  /** torch MAJOR.MINOR. */
  torch: version2,
  /** Every accepted numeric entry (without "+PTX", which any accepted entry takes), or null when the list was not read. */
  accepted: z.array(z.string()).nullable(),
  /** Entries seen refused (ValueError); with `accepted` null the only ones known. */
  refused: z.array(z.string()),
  source,
});
export type TorchArchListFacts = z.infer<typeof TorchArchListFactsSchema>;

/** A third-party library with device code that nixpkgs' torch links statically (generator/catalog/device-code.ts says what each field means). */
export const BundledDeviceCodeSchema = z.object({
  origin: z.enum(["nccl", "magma", "nvshmem"]),
  label: z.string(),
  library: z.string(),
  names: z.array(z.string()),
  libraryDefault: z.boolean(),
  flags: z.enum(["gencode", "cmake"]),
  deviceLinkedByTorch: z.boolean(),
  ptxVisible: z.boolean(),
  extraSass: z.array(z.object({ sass: z.string(), minCuda: version2, belowCuda: version2.nullable(), why: z.string() })),
  linkedAt: z.union([z.literal("every pin"), z.array(z.string())]),
  source,
  inferred: z.string().optional(),
});
export type BundledDeviceCode = z.infer<typeof BundledDeviceCodeSchema>;

/** What the public CUDA binary cache's jobs hold (generator/catalog/binary-cache.ts says why). */
export const CudaCacheSchema = z.object({
  name: z.string(),
  /** Systems the Hydra builds for. */
  systems: z.array(z.enum(SYSTEMS)),
  /** What is evaluated, in words. */
  jobs: z.string(),
  /** torch's CUDA dependencies built from source per CUDA set, by origin: the attribute torch takes. */
  perCudaSet: z.record(z.string(), z.string()),
  /** Python packages of torch's closure that read cudaSupport. */
  perPythonSet: z.array(z.string()),
  source,
});
export type CudaCache = z.infer<typeof CudaCacheSchema>;

/** Measured uncompressed cubin bytes per compute capability of one origin's library (generator/catalog/device-code-size.ts). */
const DeviceCodeBytesSchema = z.object({ library: z.string(), perCapability: z.record(capability, z.number().int().positive()), source });
/** The origins whose device code size was measured. */
export const MEASURED_ORIGINS = ["torch", "magma", "nvshmem"] as const;
export type DeviceCodeBytes = Record<(typeof MEASURED_ORIGINS)[number], z.infer<typeof DeviceCodeBytesSchema>>;

/**
 * nixpkgs' own facts about one CUDA capability: an entry of `cudaCapabilityToInfo`
 * (pkgs/development/cuda-modules/_cuda/db/bootstrap/cuda.nix). nixpkgs' backendStdenv refuses a capability outside its
 * CUDA range ("Requested CUDA capabilities which are too old/new for CUDA X.Y"), builds a Jetson capability only on
 * aarch64-linux, and builds Jetson, `a` and `f` capabilities only on request (never in the default list).
 */
export const NixpkgsCapabilityInfoSchema = z.object({
  /** "12.1", "9.0a", "10.3f". */
  capability: z.string().regex(/^\d+\.\d+[af]?$/),
  archName: z.string(),
  /** Part of NVIDIA's Jetson line: "tells us what architecture to build for (as Jetson devices are aarch64)". */
  isJetson: z.boolean(),
  /** An architecture-specific feature set (the `a` suffix). */
  isArchitectureSpecific: z.boolean(),
  /** A family-specific feature set (the `f` suffix). */
  isFamilySpecific: z.boolean(),
  /** The oldest CUDA (MAJOR.MINOR) nixpkgs allows it with. */
  minCuda: version2,
  /**
   * The newest CUDA nixpkgs allows it with, or null. Inclusive: the file's doc comment says "maximum (exclusive)", but
   * its own entries read only as inclusive ("10.1f" has min = max = 12.9; "10.1" Thor ends at 12.9, the last CUDA that
   * has it) and the rule in _cuda/lib/cuda.nix compares with versionAtLeast, so nixpkgs' behaviour wins over its comment.
   */
  maxCuda: version2.nullable(),
  /** The CUDA after which nixpkgs leaves it out of the default list, or null. */
  dontDefaultAfter: version2.nullable(),
  source,
});
export type NixpkgsCapabilityInfo = z.infer<typeof NixpkgsCapabilityInfoSchema>;

/** nixpkgs' capability table as read at one revision (`rev`), in its order (generator/catalog/gpus.ts). */
export const NixpkgsCapabilityTableSchema = z.object({
  rev: z.string().regex(/^[0-9a-f]{40}$/),
  entries: z.array(NixpkgsCapabilityInfoSchema).min(1),
  /** The rule that keeps Jetson capabilities apart from the others (catalog/cuda.ts says why the stricter era's). */
  jetsonRule: source,
  source,
});
export type NixpkgsCapabilityTable = z.infer<typeof NixpkgsCapabilityTableSchema>;

/** One nixpkgs patch of CUDA's math headers against glibc 2.42 (generator/catalog/cuda.ts). */
const CudaHeaderFixSchema = z.object({
  /** The pull request ("NixOS/nixpkgs#484031"). */
  pr: z.string().regex(/^NixOS\/nixpkgs#\d+$/),
  /** When it was on master (YYYY-MM-DD): a pin dated on or after it has the fix. */
  merged: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** The CUDA versions it fixes: `min` inclusive, `below` exclusive (null: open). */
  cuda: z.object({ min: version2, below: version2.nullable() }),
  /** What it patched. */
  what: z.string(),
});
export type CudaHeaderFix = z.infer<typeof CudaHeaderFixSchema>;

/** glibc 2.42 against CUDA's math headers: since when nixpkgs has it, and the fixes (generator/catalog/cuda.ts). */
export const GlibcCudaHeadersSchema = z.object({
  since: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  fixes: z.array(CudaHeaderFixSchema).min(1),
  source,
});

/** One public binary cache that serves nixpkgs' CUDA packages, and for which systems (generator/catalog/binary-cache.ts). */
export const PublicCudaCacheSchema = z.object({
  name: z.string(),
  /** The substituter URL for nix.conf `extra-substituters`. */
  url: z.string().url(),
  /** Its signing key for nix.conf `extra-trusted-public-keys`. */
  publicKey: z.string().regex(/^[^:\s]+:[A-Za-z0-9+/]+=*$/),
  /** Systems it serves CUDA packages for. */
  systems: z.array(z.enum(SYSTEMS)),
  /**
   * "builds": what it holds follows from a jobset read here (Catalog.cudaCache), so the cache model counts on it;
   * "may hold": it publishes CUDA packages, but which nixpkgs revisions and capabilities is not known here, so the
   * model counts on nothing from it and `pin cache` (Nix's own query on the user's machine) is the way to know.
   */
  holds: z.enum(["builds", "may hold"]),
  /** What it holds, in words. */
  what: z.string(),
  source,
});
export type PublicCudaCache = z.infer<typeof PublicCudaCacheSchema>;

/** A duration with where it comes from. */
const SecondsSchema = z.object({ seconds: z.number().positive(), source });

/** The derivations the cache model counts when the cache cannot serve them (generator/catalog/binary-cache.ts). */
export const REBUILT_ORIGINS = ["magma", "nccl", "nvshmem", "triton"] as const;

/** A table keyed by strings, with its source (the Arm core names, the hosts people know them by). */
/**
 * Versions of a package built on torch that nixpkgs marks insecure (`meta.knownVulnerabilities`, so evaluation refuses
 * them unless `config.permittedInsecurePackages` lists their name), and whether each catalog pin's file does
 * (generator/catalog/advisories.ts).
 */
export const KnownVulnerableSchema = z.object({
  /** A catalog package name ("vllm"). */
  package: z.string(),
  /** Versions below this one are affected ("0.20.0", the first with every fix). */
  below: z.string().regex(/^\d+(\.\d+)*$/),
  /** The advisories, each with what was read of it. */
  advisories: z.array(z.string()).min(1),
  /** The nixpkgs change that marked it, the branch and the day after which it landed. */
  markedBy: z.object({ pr: z.string(), branch: z.string(), after: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
  /** Per catalog pin (revision) whose version is below `below`: whether its file marks it, and how that is known. */
  pins: z.record(z.string(), z.object({ marks: z.enum(["yes", "no", "unknown"]), why: z.string() })),
  source,
});
export type KnownVulnerable = z.infer<typeof KnownVulnerableSchema>;

const NamedTableSchema = z.object({ names: z.record(z.string(), z.string()), source });

/**
 * The whole catalog: every fact the generator knows, each table under its schema. `packagesOnTorch` is the one table
 * of packages built on torch (torchaudio included: its releases are that table's torchaudio row).
 */
export const CatalogSchema = z.object({
  gpus: z.array(GpuArchSchema).min(1),
  cuda: z.array(CudaToolkitSchema).min(1),
  isas: z.array(CpuIsaSchema).min(1),
  python: z.array(PythonVersionSchema).min(1),
  torch: z.array(TorchReleaseSchema).min(1),
  nixpkgs: z.array(NixpkgsPinSchema).min(1),
  packagesOnTorch: z.array(PackageOnTorchSchema).min(1),
  extras: z.array(ExtraFactSchema),
  torchArchLists: z.array(TorchArchListFactsSchema),
  bundledDeviceCode: z.array(BundledDeviceCodeSchema),
  cudaCache: CudaCacheSchema,
  deviceCodeBytes: z.object({ torch: DeviceCodeBytesSchema, magma: DeviceCodeBytesSchema, nvshmem: DeviceCodeBytesSchema }),
  /** nixpkgs' capability table (cudaCapabilityToInfo) as read at one revision (generator/catalog/gpus.ts). */
  nixpkgsCapabilities: NixpkgsCapabilityTableSchema,
  /** glibc 2.42 against CUDA's math headers, per nixpkgs revision date (generator/catalog/cuda.ts). */
  glibcCudaHeaders: GlibcCudaHeadersSchema,
  /** CUDA major families and their minor-version compatibility floors (generator/catalog/cuda.ts). */
  cudaMajors: z.array(CudaMajorSchema).min(1),
  /** Package versions nixpkgs marks insecure, per pin (generator/catalog/advisories.ts). */
  knownVulnerable: z.array(KnownVulnerableSchema),
  /** The public caches of nixpkgs' CUDA packages (generator/catalog/binary-cache.ts). */
  publicCudaCaches: z.array(PublicCudaCacheSchema).min(1),
  /** Default durations of what the cache model counts as rebuilt (generator/catalog/binary-cache.ts). */
  rebuildSeconds: z.object({ magma: SecondsSchema, nccl: SecondsSchema, nvshmem: SecondsSchema, triton: SecondsSchema }),
  /**
   * Default build times of what the plan builds when no earlier report knows it (generator/catalog/binary-cache.ts):
   * torch's two figures with the cores each was measured at, the environment, a CUDA closure, one check.
   */
  buildSeconds: z.object({
    torchCuda: SecondsSchema.extend({ cores: z.number().int().positive() }),
    torchCpu: SecondsSchema.extend({ cores: z.number().int().positive() }),
    environment: SecondsSchema,
    cudaClosure: SecondsSchema,
    check: SecondsSchema,
  }),
  /** PyTorch's arch-specific SASS beyond TORCH_CUDA_ARCH_LIST (generator/catalog/device-code.ts). */
  extraSass: z.object({ entries: z.array(z.object({ when: capability, adds: z.string().regex(/^sm_\d+[af]?$/), minCuda: version2.nullable() })), source }),
  /** Heads of code the compiler adds to cubins of any origin, as RegExp sources (generator/catalog/device-code.ts). */
  compilerHelperNames: z.object({ patterns: z.array(z.string()).min(1), source }),
  /** Arm core names by "implementer/part" (MIDR_EL1 as /proc/cpuinfo prints it; generator/catalog/cpu-isas.ts). */
  armCores: NamedTableSchema,
  /** Hosts people recognise by their Arm cores, by core name (generator/catalog/cpu-isas.ts). */
  armHostHints: NamedTableSchema,
});
/** The whole catalog, as CatalogSchema parses it. */
export type Catalog = z.infer<typeof CatalogSchema>;

/** A GitHub-hosted Linux runner (generator/catalog/ci-runners.ts says what each field means). */
export const HostedRunnerSchema = z.object({
  system: z.enum(SYSTEMS),
  labels: z.array(z.string()).min(1),
  cpus: z.number().int().positive(),
  memoryGB: z.number().positive(),
  diskGB: z.number().positive(),
  cpuFeatures: z.array(z.string()).min(1),
  source,
});
export type HostedRunner = z.infer<typeof HostedRunnerSchema>;

/** One way a Nix-built CUDA program finds the host's GPU driver (generator/catalog/machines.ts DRIVER_ROUTES). */
export const DriverRouteSchema = z.object({
  id: z.enum(["nixos", "nixglhost", "flox"]),
  /** What the user runs (PROGRAM stands for e.g. result-torch-env-…/bin/python3). */
  command: z.string(),
  /** What must hold on the host for it to work. */
  needs: z.array(z.string()).min(1),
  source,
});
export type DriverRoute = z.infer<typeof DriverRouteSchema>;

/**
 * The catalog's second value: facts about the machines and tools the project runs on (generator/catalog/machines.ts)
 * and the CI runners its workflows are written for (generator/catalog/ci-runners.ts). Apart from `CatalogSchema`
 * because no matrix or pin changes them (local-catalog.json does not extend them) and because start-up-critical
 * readers (the `--jobs` help, the preflight checks) read some of them without loading zod: `machines` of
 * generator/catalog/index.ts is this value, parsed with the catalog; tests/catalog-tables.test.ts lists the readers
 * that import the table modules instead, and why.
 */
export const MachineFactsSchema = z.object({
  floxMinVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
  gibPerCompileJob: z.number().positive(),
  nixMin: z.object({
    version: z.string().regex(/^\d+\.\d+(\.\d+)?$/),
    minverSince: z.object({ pr: z.string(), month: z.string(), previous: z.string(), previousSince: z.string(), torchAfter: z.string(), torchAfterPr: z.string() }),
    source,
  }),
  floxMin: z.object({ version: z.string(), source }),
  storeFreeFloor: z.object({ bytes: z.number().int().positive(), kind: z.enum(["heuristic", "measured"]), source }),
  nixosDriverLib: z.object({ dir: z.string().startsWith("/"), source }),
  nixglhost: z.object({ fixedDirs: z.array(z.string()).min(1), searchList: z.string(), nvidiaDsoPatterns: z.array(z.string()).min(1), cudaDsoPatterns: z.array(z.string()).min(1), source }),
  floxCuda: z.object({ legacyVariable: z.string(), auditLibrary: z.string(), source }),
  driverRoutes: z.array(DriverRouteSchema).min(1),
  github: z.object({
    matrixLimit: z.number().int().positive(),
    limits: z.object({ hostedJobMinutes: z.number().positive(), selfHostedJobMinutes: z.number().positive(), source }),
    hostedRunners: z.array(HostedRunnerSchema).min(1),
    selfHostedLabels: z.record(z.string(), z.array(z.string()).min(1)),
    selfHostedNeeds: z.string(),
  }),
});
/** The catalog's second value (MachineFactsSchema). */
export type MachineFacts = z.infer<typeof MachineFactsSchema>;
