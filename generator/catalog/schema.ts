/**
 * zod schemas for the catalog of facts (generator/catalog/): the shape of every fact, and the types inferred from
 * them. Each fact carries `source`, a document, release note or file that states it. The built-in tables are
 * validated against `CatalogSchema` when generator/catalog/index.ts loads, and a user's `local-catalog.json`
 * (generator/catalog/local.ts) against the same schemas.
 */
import * as z from "zod";

import { SYSTEMS } from "../constants.ts";

const version2 = z.string().regex(/^\d+\.\d+$/, "expected MAJOR.MINOR, e.g. 12.8");
const capability = z.string().regex(/^\d+\.\d+$/, "expected a compute capability written MAJOR.MINOR, e.g. 12.0");
const source = z.string().min(3);

/** A sha256 as Nix accepts it in `fetchTarball { sha256 }`: SRI ("sha256-" + 44 base64 chars) or 52 base32 chars. */
export const SHA256_RE = /^(sha256-[A-Za-z0-9+/]{43}=|[0-9abcdfghijklmnpqrsvwxyz]{52})$/;

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
 * One torchaudio release and the PyTorch releases it serves. Before 2.11 torchaudio X.Y was built against the C++
 * ABI of exactly torch X.Y (`servesTorch = { min: "X.Y", below: "X.(Y+1)" }`); torchaudio 2.11 builds against
 * PyTorch's stable ABI and serves every torch from 2.11 on (`below: null`), and it is the last torchaudio release,
 * so torch 2.12 pairs with torchaudio 2.11.0. A TorchRelease may only name a torchaudio that serves it (checked when
 * the catalog loads, generator/catalog/index.ts).
 */
export const TorchaudioReleaseSchema = z.object({
  /** "2.11.0" */
  version: z.string().regex(/^\d+\.\d+\.\d+$/),
  /** Torch versions served, MAJOR.MINOR: `min` inclusive, `below` exclusive (null: no upper bound). */
  servesTorch: z.object({ min: version2, below: version2.nullable() }),
  /** Built against PyTorch's stable C ABI (libtorch's `torch/csrc/stable`), not one torch's C++ ABI. */
  stableAbi: z.boolean(),
  /**
   * Whether nixpkgs' torchaudio of this release depends on torchcodec (`dependencies = [ torch torchcodec ]`, from
   * 2.11.0), as read in its nixpkgs file; `pin check` compares it with the evaluated propagatedBuildInputs.
   */
  nixpkgsDependsOnTorchcodec: z.boolean().optional(),
  source,
});
export type TorchaudioRelease = z.infer<typeof TorchaudioReleaseSchema>;

/**
 * A nixpkgs revision and what it carries. A variant is only emitted when a known pin carries its torch release,
 * Python set and CUDA package set, and its torch is not marked broken for that CUDA.
 */
export const NixpkgsPinSchema = z.object({
  /** 40-hex git revision of NixOS/nixpkgs. */
  rev: z.string().regex(/^[0-9a-f]{40}$/),
  /** Commit date of the revision (YYYY-MM-DD), when a source gives it; the newer of two pins is preferred. */
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).nullable(),
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
  /** NixOS channel the revision was taken from: "nixos-unstable", "nixos-26.05"; null when unknown. */
  channel: z.string().nullable(),
  /**
   * Facts of this entry that were inferred (from dates, neighbouring revisions, PR order) rather than read at this
   * revision: field name ("torch", "cuda", "brokenCuda", ...) → how it was inferred. Shown in BUILD_MATRIX.md.
   */
  inferred: z.record(z.string(), z.string()),
  source,
});
export type NixpkgsPin = z.infer<typeof NixpkgsPinSchema>;

/** The whole catalog: every fact the generator knows. */
export interface Catalog {
  gpus: GpuArch[];
  cuda: CudaToolkit[];
  isas: CpuIsa[];
  python: PythonVersion[];
  torch: TorchRelease[];
  torchaudio: TorchaudioRelease[];
  nixpkgs: NixpkgsPin[];
}

export const CatalogSchema = z.object({
  gpus: z.array(GpuArchSchema).min(1),
  cuda: z.array(CudaToolkitSchema).min(1),
  isas: z.array(CpuIsaSchema).min(1),
  python: z.array(PythonVersionSchema).min(1),
  torch: z.array(TorchReleaseSchema).min(1),
  torchaudio: z.array(TorchaudioReleaseSchema).min(1),
  nixpkgs: z.array(NixpkgsPinSchema).min(1),
});
