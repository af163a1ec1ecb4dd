/**
 * zod schemas for the user's matrix (`matrix.ts`) and for the catalog of facts, and the types exported from them.
 *
 * Two kinds of schema live here:
 * - catalog schemas (`GpuArchSchema`, `CudaToolkitSchema`, ...): the shape of every fact in `generator/catalog/`.
 *   Each fact carries `source`, a document, release note or file that states it.
 * - `makeMatrixSchema(catalog)`: the matrix schema, built from the catalog so that an unknown SM, ISA, CUDA or
 *   Python version is rejected with the field path and the allowed values.
 *
 * The `Variant` and `Excluded` types are what `expand()` returns; `VariantJson` is the `list --json` contract of
 * ARCHITECTURE.md.
 */
import * as z from "zod";

import { DEFAULT_PACKAGES, NIX_ATTR_RE, PACKAGES, SYSTEMS, type PackageName, type System } from "./constants.ts";
export { NIX_ATTR_RE };
import { closestValues, shown } from "./suggest.ts";

/** "; closest: 90, 75" for an unknown value, or "" when no allowed value is close (suggest.ts, edit distance). */
const closestTail = (value: string, allowed: readonly string[]) => {
  const near = closestValues(value, allowed);
  return near.length ? `; closest: ${near.join(", ")}` : "";
};
import { parseCombination } from "./naming.ts";
export { PACKAGES, SYSTEMS, type PackageName, type System };

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

/**
 * Where a variant's compute capabilities go. "torch": torch's `gpuTargets` (and, through torch.cudaCapabilities,
 * torchaudio and torchcodec) only; the rest of the CUDA package set keeps nixpkgs' default capabilities, the
 * derivations binary caches serve. "packageSet": also nixpkgs `config.cudaCapabilities`, so magma, nccl, … are
 * compiled for exactly the variant's capabilities (and built from source). A variant whose capabilities nixpkgs'
 * defaults do not cover is always built with "packageSet" (generator/expand.ts `cudaScopeFor`).
 */
export const CUDA_CAPABILITIES_SCOPES = ["torch", "packageSet"] as const;
export type CudaCapabilitiesScope = (typeof CUDA_CAPABILITIES_SCOPES)[number];

/** What to do with a GPU whose compute capability the CUDA version's nvcc does not know. */
export const BINARY_COMPAT_POLICIES = ["serve", "drop"] as const;
export type BinaryCompatPolicy = (typeof BINARY_COMPAT_POLICIES)[number];

/**
 * The matrix as the user writes it in `matrix.ts` (before validation): derived from the schema (`z.input` of
 * `makeMatrixSchema`), so it cannot drift from what `generate` accepts. Fields (see makeMatrixSchema):
 * releases [{ torch, nixpkgs?, sha256? }], python, cuda, gpus (SM numbers), isas, cpuOnly, packages?, environments?
 * ({ NAME: [nixpkgs Python attribute, …] }: one `NAME-env-…` environment per kept combination), only?,
 * policy? { binaryCompat?, cudaCapabilitiesScope?, requiredSystemFeatures? }.
 */
export type MatrixInput = z.input<ReturnType<typeof makeMatrixSchema>>;

/**
 * A named environment's name (matrix.ts `environments`): lower-case letters and digits, starting with a letter, so
 * `<name>-env` is one word of a variant name that naming.ts parses back (`llm` → `llm-env-python313-cuda13_0-sm121-armv9`).
 */
export const ENVIRONMENT_NAME_RE = /^[a-z][a-z0-9]*$/;
/** Names an environment may not take: `torch` (torch-env is the environment of the stack alone). */
export const RESERVED_ENVIRONMENT_NAMES: readonly string[] = ["torch"];
/**
 * Names every JavaScript object already answers to (`__proto__`, `constructor`, …): a matrix key of that name is
 * dropped by the parse (`__proto__`) or could be read back as the built-in instead of the user's entry, so such names
 * are refused wherever the user names a key (environments; project.ts checks `__proto__` before the parse drops it).
 */
export const OBJECT_MEMBER_NAMES: readonly string[] = ["__proto__", "prototype", ...Object.getOwnPropertyNames(Object.prototype)];

/** The message for a name in OBJECT_MEMBER_NAMES. */
export function reservedNameMessage(name: string): string {
  return `name ${shown(name)} is reserved (every JavaScript object already has a member of that name); choose another`;
}

/**
 * Extras an environment may not list: torch and the packages the variant builds itself. The stack comes from the
 * matrix's `packages`; listing `torch` would ask for what every environment already holds.
 */
export const RESERVED_EXTRAS: readonly string[] = ["torch"];

/** Identity for typing `matrix.ts`: `export default defineMatrix({...})`. */
export function defineMatrix(m: MatrixInput): MatrixInput {
  return m;
}

function uniqueEnum(values: readonly string[], what: string) {
  const allowed = [...values];
  return z
    .array(
      z.string().refine((v) => allowed.includes(v), {
        error: (iss) => `unknown ${what} ${shown(iss.input)}; allowed values: ${allowed.join(", ")}${closestTail(String(iss.input), allowed)}`,
      }),
    )
    .min(1, `must list at least one ${what}; allowed values: ${allowed.join(", ")}`)
    .superRefine((arr, ctx) => {
      const seen = new Set<string>();
      arr.forEach((v, i) => {
        if (seen.has(v)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate ${what} ${shown(v)}` });
        seen.add(v);
      });
    });
}

/** The schema of matrix.ts `releases`: PyTorch releases the catalog knows, each with an optional known pin and hash; no repeats. */
function releasesSchema(catalog: Catalog) {
  const pins = catalog.nixpkgs.map((p) => p.rev);
  const torchVersions = catalog.torch.map((t) => t.version);
  return z
    .array(
      z
        .object({
          torch: z.string().refine((v) => torchVersions.includes(v), {
            error: (iss) => `unknown PyTorch release ${shown(iss.input)}; allowed values: ${torchVersions.join(", ")}`,
          }),
          nixpkgs: z
            .string()
            .refine((v) => pins.includes(v), {
              error: (iss) =>
                `unknown nixpkgs revision ${shown(iss.input)} (the catalog must know what it carries); allowed values: ${pins.join(", ")}`,
            })
            .optional(),
          sha256: z
            .string()
            .regex(SHA256_RE, "expected the nixpkgs tarball hash as `nix-prefetch-url --unpack` prints it (52 base32 chars) or in SRI form (sha256-…=)")
            .optional(),
        })
        .strict(),
    )
    .min(1, `must list at least one release; allowed PyTorch releases: ${torchVersions.join(", ")}`)
    .superRefine((arr, ctx) => {
      const seen = new Set<string>();
      arr.forEach((r, i) => {
        if (seen.has(r.torch))
          ctx.addIssue({ code: "custom", path: [i, "torch"], message: `duplicate PyTorch release ${shown(r.torch)}` });
        seen.add(r.torch);
      });
    });
}

/** The schema of matrix.ts `environments`: names (lower-case letters and digits, not reserved) to nixpkgs Python attributes. */
function environmentsSchema() {
  return z
    .record(
      z.string(),
      z
        .array(
          z.string().regex(NIX_ATTR_RE, {
            error: (iss) => `expected a nixpkgs Python attribute name such as "transformers" (got ${shown(iss.input)})`,
          }),
        )
        .min(1, "an environment lists at least one nixpkgs Python attribute")
        .superRefine((arr, ctx) => {
          const seen = new Set<string>();
          arr.forEach((v, i) => {
            if (seen.has(v)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate attribute ${shown(v)}` });
            else if (RESERVED_EXTRAS.includes(v))
              ctx.addIssue({
                code: "custom",
                path: [i],
                message: `"${v}" is part of every environment's torch stack (the variant's own build); list the extras beside it`,
              });
            seen.add(v);
          });
        }),
    )
    .superRefine((rec, ctx) => {
      for (const n of Object.keys(rec))
        if (!ENVIRONMENT_NAME_RE.test(n))
          ctx.addIssue({
            code: "custom",
            path: [n],
            message: `environment name ${shown(n)}: expected lower-case letters and digits, starting with a letter, such as "${n.toLowerCase().replace(/[^a-z0-9]/g, "").replace(/^[0-9]+/, "").slice(0, 20) || "llm"}" (the environment's variants are named NAME-env-python313-…)`,
          });
        else if (RESERVED_ENVIRONMENT_NAMES.includes(n))
          ctx.addIssue({ code: "custom", path: [n], message: `environment name "${n}" is taken: "${n}-env" is the environment of the torch stack alone` });
        else if (OBJECT_MEMBER_NAMES.includes(n))
          ctx.addIssue({ code: "custom", path: [n], message: reservedNameMessage(n) });
    })
    .default({});
}

/** The schema of matrix.ts `only`: combination names (formatCombination), at least one when given. */
function onlySchema() {
  return z
    .array(
      z.string().refine((c) => parseCombination(c) !== null, {
        error: (iss) =>
          `expected a combination name such as python313-cuda12_8-sm90-avx512bf16 or python313-cpu-avx2 (got ${shown(iss.input)})`,
      }),
    )
    .min(1, "must list at least one combination (or leave `only` out for every combination)")
    .optional();
}

/** The schema of matrix.ts `policy`, every field defaulted. */
function policySchema() {
  return z
    .object({
      binaryCompat: z.enum(BINARY_COMPAT_POLICIES).default("serve"),
      cudaCapabilitiesScope: z.enum(CUDA_CAPABILITIES_SCOPES).default("torch"),
      requiredSystemFeatures: z
        .array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "a Nix system feature name such as big-parallel"))
        .default(["big-parallel"]),
    })
    .strict()
    .default({ binaryCompat: "serve", cudaCapabilitiesScope: "torch", requiredSystemFeatures: ["big-parallel"] });
}

/**
 * Build the zod schema of `matrix.ts` from the catalog: each axis accepts only values the catalog knows.
 * Errors name the field path (e.g. `gpus.3`) and list the allowed values.
 */
export function makeMatrixSchema(catalog: Catalog) {
  return z
    .object({
      releases: releasesSchema(catalog),
      python: uniqueEnum(
        catalog.python.map((p) => p.version),
        "Python version",
      ),
      cuda: uniqueEnum(
        catalog.cuda.map((c) => c.version),
        "CUDA version",
      ),
      gpus: uniqueEnum(
        catalog.gpus.map((g) => g.sm),
        "GPU SM",
      ),
      isas: uniqueEnum(
        catalog.isas.map((i) => i.key),
        "CPU ISA",
      ),
      cpuOnly: z.boolean(),
      // Default: every package but the opt-in CUDA extensions (catalog/packages.ts `optIn`).
      packages: uniqueEnum(PACKAGES, "package").default([...DEFAULT_PACKAGES]),
      environments: environmentsSchema(),
      only: onlySchema(),
      policy: policySchema(),
    })
    .strict();
}
export type Matrix = z.output<ReturnType<typeof makeMatrixSchema>>;

/**
 * One package variant the generator writes. Every field is resolved: the Nix side receives these as literal data.
 * The `list --json` contract (`VariantJson`) is a subset.
 */
export interface Variant {
  /** Package variant name, e.g. "torchaudio-python313-cuda12_8-sm121-armv9". */
  name: string;
  package: PackageName;
  /** What the builder makes: torch itself, a package built on torch (the catalog's table), or the environment. */
  role: "torch" | "onTorch" | "env";
  /**
   * A named environment's extras (matrix.ts `environments`): nixpkgs attribute names of the variant's Python set, each
   * taken from the set whose `torch` is this variant's torch (pkgs/torch-env.nix). [] for every other variant and for
   * `torch-env`.
   */
  extras: string[];
  /** nixpkgs attribute in the Python set of a package built on torch ("torchvision"); null for pytorch and the environment. */
  attr: string | null;
  /** Version of this package (torch's for pytorch and the environment). */
  version: string;
  torchVersion: string;
  /** Versions of the packages built on torch this combination's pin carries and serves: { torchaudio: "2.11.0", … }. */
  onTorchVersions: Record<string, string>;
  /** "3.13" */
  python: string;
  /** "python313Packages" */
  pythonPackageSet: string;
  /** "12.8", or null for CPU-only. */
  cuda: string | null;
  /** "cudaPackages_12_8", or null for CPU-only. */
  cudaPackageSet: string | null;
  /** SM of the target GPU ("121"), or null for CPU-only. */
  sm: string | null;
  /** ISA key ("armv9"). */
  isa: string;
  system: System;
  /** Compute capabilities handed to nvcc ("12.0"); [] for CPU-only. */
  cudaCapabilities: string[];
  /** True when the GPU is served through same-major binary compatibility (capabilities differ from the GPU's). */
  binaryCompat: boolean;
  /**
   * Also set nixpkgs config.cudaCapabilities for the whole package set: policy.cudaCapabilitiesScope "packageSet",
   * or forced because nixpkgs' default capabilities cannot serve this variant (expand.ts `cudaScopeFor`).
   */
  cudaCapabilitiesForPackageSet: boolean;
  /** The derivation's requiredSystemFeatures (routing to remote builders and Hydra machines). */
  requiredSystemFeatures: string[];
  cflags: string[];
  /** nixpkgs revision. */
  nixpkgs: string;
  /** sha256 of the nixpkgs tarball (catalog pin or matrix.ts), checked by `builtins.fetchTarball`. */
  nixpkgsSha256: string;
  /** Names of package variants this one is built against. */
  dependsOn: string[];
  /**
   * What a package built on torch's own build reads besides TORCH_CUDA_ARCH_LIST (catalog/packages.ts `cudaBuildOf`):
   * environment variables (flash-attn's FLASH_ATTN_CUDA_ARCHS), CMake flags replacing any of the same variable
   * (bitsandbytes' -DCOMPUTE_CAPABILITY), and the memory one compile process needs (GiB; the build caps MAX_JOBS to
   * the builder's memory), and the pname nixpkgs' metadata check needs where the file's is not the distribution's.
   * Absent when the package needs none of them.
   */
  packageBuild?: { env: Record<string, string>; cmakeFlags: string[]; gibPerCompileJob: number | null; pname?: string };
  /** Generated file, relative to the repo root: ".flox/pkgs/NAME.nix". */
  file: string;
  /** One-line description naming the hardware. */
  description: string;
  notes: string[];
}

/** The `list --json` contract of ARCHITECTURE.md: one object per package variant. */
export type VariantJson = Pick<
  Variant,
  | "name"
  | "package"
  | "version"
  | "torchVersion"
  | "python"
  | "cuda"
  | "sm"
  | "isa"
  | "system"
  | "cudaCapabilities"
  | "cflags"
  | "nixpkgs"
  | "dependsOn"
  | "file"
  | "notes"
>;

/** A combination of the matrix that was dropped, with every reason in words (ARCHITECTURE.md rule 7). */
export interface Excluded {
  /** The name it would have had, e.g. "pytorch-python313-cuda12_8-sm110-armv9". */
  name: string;
  package: PackageName;
  torchVersion: string;
  python: string;
  cuda: string | null;
  sm: string | null;
  isa: string;
  reasons: string[];
}
