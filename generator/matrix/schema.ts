/**
 * zod schemas for the user's matrix (`matrix.ts`), and the types exported from them: `makeMatrixSchema(catalog)`,
 * built from the catalog so that an unknown SM, ISA, CUDA or Python version is rejected with the field path and the
 * allowed values. The catalog's own schemas are generator/catalog/schema.ts.
 *
 * The `Variant` and `Excluded` types are what `expand()` returns; `VariantJson` is the `list --json` contract of
 * docs/contributing.md.
 */
import "../zod-jitless.ts";
import * as z from "zod";

import { NIX_ATTR_RE, type System } from "../constants.ts";
import { DEFAULT_PACKAGES, PACKAGES, type PackageName } from "../catalog/lib/packages.ts";
import { SHA256_RE, type Catalog } from "../catalog/schema.ts";
import { closestValues, shown } from "./suggest.ts";
import { parseCombination } from "./naming.ts";
import { CACHE_KEY_FORM, CACHE_URL_FORM, cacheUrlProblem, isCacheUrl, isPublicKey, publicKeyProblem } from "./team-cache.ts";

/** "; closest: 90, 75" for an unknown value, or "" when no allowed value is close (suggest.ts, edit distance). */
const closestTail = (value: string, allowed: readonly string[]) => {
  const near = closestValues(value, allowed);
  return near.length ? `; closest: ${near.join(", ")}` : "";
};


/**
 * Where a variant's compute capabilities go. "torch": torch's `gpuTargets` (and, through torch.cudaCapabilities,
 * torchaudio and torchcodec) only; the rest of the CUDA package set keeps nixpkgs' default capabilities, the
 * derivations binary caches serve. "packageSet": also nixpkgs `config.cudaCapabilities`, so magma, nccl, … are
 * compiled for exactly the variant's capabilities (and built from source). A variant whose capabilities nixpkgs'
 * defaults do not cover is always built with "packageSet" (generator/matrix/expand.ts `cudaScopeFor`).
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
 * policy? { binaryCompat?, cudaCapabilitiesScope?, requiredSystemFeatures? }, caches? ([{ url, publicKey }]: the team's
 * binary caches, team-cache.ts).
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

/**
 * The `params` key of a zod issue that stands for one message at several indices of an array (ascending, relative
 * to the array; the issue's own path is the first of them). project.ts `zodIssues` expands it to one issue per index.
 * A matrix with 200,000 repeats of one value is one such issue: zod's cost per issue (building, stamping and copying
 * each) made 200,000 issues of their own take seconds (bench/bad-input.ts, "matrix errors").
 */
export const SAME_AT = "sameAt";

/** Index `i` under `key` of `groups` (the indices of each distinct bad value, in order of first appearance). */
function groupAt(groups: Map<string, number[]>, key: string, i: number): void {
  const at = groups.get(key);
  if (at) at.push(i);
  else groups.set(key, [i]);
}

/** One issue per group: `message(key)` at every index of the group (SAME_AT). */
function addGrouped(ctx: z.core.$RefinementCtx<unknown>, groups: Map<string, number[]>, message: (key: string) => string): void {
  for (const [key, at] of groups) ctx.addIssue({ code: "custom", path: [at[0]!], message: message(key), params: { [SAME_AT]: at } });
}

/**
 * An axis of allowed strings: each entry one of `values` ("unknown WHAT …; allowed values: …; closest: …"), none
 * repeated ("duplicate WHAT …"), at least one. Checked in one pass over the array, one issue per distinct bad value
 * with every index it stands at (SAME_AT). Runs also when some entry is no string (zod's own issue for it), on the
 * strings.
 */
function uniqueEnum(values: readonly string[], what: string) {
  const allowed = [...values];
  const known = new Set(allowed);
  return z
    .array(z.string())
    .min(1, `must list at least one ${what}; allowed values: ${allowed.join(", ")}`)
    .superRefine(
      (arr, ctx) => {
        const unknown = new Map<string, number[]>();
        const repeated = new Map<string, number[]>();
        const seen = new Set<string>();
        arr.forEach((v, i) => {
          if (typeof v !== "string") return;
          if (!known.has(v)) groupAt(unknown, v, i);
          if (seen.has(v)) groupAt(repeated, v, i);
          else seen.add(v);
        });
        addGrouped(ctx, unknown, (v) => `unknown ${what} ${shown(v)}; allowed values: ${allowed.join(", ")}${closestTail(v, allowed)}`);
        addGrouped(ctx, repeated, (v) => `duplicate ${what} ${shown(v)}`);
      },
      { when: (payload) => Array.isArray(payload.value) },
    );
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
  // The matrix is the user's data, which may hold 200,000 bad entries: zod's jitless object parser hands an axis'
  // issues on with one spread call (`push(...issues)`), which overflows the stack past about 100,000, where its JIT
  // parser does not (tests/matrix-messages.test.ts). zod reads `jitless` when a schema is built, so this one schema
  // is built with the JIT and every other keeps zod-jitless.ts's setting.
  z.config({ jitless: false });
  try {
    return matrixSchemaOf(catalog);
  } finally {
    z.config({ jitless: true });
  }
}

/** makeMatrixSchema's schema, built under the caller's zod configuration. */
function matrixSchemaOf(catalog: Catalog) {
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
      // The team's binary caches (team-cache.ts): URL and public key each; the flake's nixConfig, doctor, install and
      // publish use them.
      caches: cachesSchema(),
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
  /**
   * The nixpkgs instance the variant needs (expand.ts `nixpkgsInstanceKey`, computed once when the matrix is
   * expanded): revision, system, CUDA package set or "cpu", and the capabilities when they go to the whole package
   * set. Variants with one key share one nixpkgs instance (and CUDA closure); pkgs/matrix.nix's `keyOf` reads it.
   */
  nixpkgsKey: string;
  /** Names of package variants this one is built against. */
  dependsOn: string[];
  /**
   * What a package built on torch's own build reads besides TORCH_CUDA_ARCH_LIST (catalog/lib/packages.ts `cudaBuildOf`):
   * environment variables (flash-attn's FLASH_ATTN_CUDA_ARCHS), CMake flags replacing any of the same variable
   * (bitsandbytes' -DCOMPUTE_CAPABILITY), and the memory one compile process needs (GiB; the build caps MAX_JOBS to
   * the builder's memory), and the pname nixpkgs' metadata check needs where the file's is not the distribution's.
   * `fixes`: the catalog's fixes (catalog/packages.ts `fixes`) the Nix builders apply to this variant's pin, CUDA and
   * system ("unbreak", "cudaCrt", "cupyCudaPackages", "bnbCapabilities"). Absent when the package needs none of them.
   */
  packageBuild?: { env: Record<string, string>; cmakeFlags: string[]; gibPerCompileJob: number | null; pname?: string; fixes?: string[] };
  /** Generated file, relative to the repo root: ".flox/pkgs/NAME.nix". */
  file: string;
  /** One-line description naming the hardware. */
  description: string;
  notes: string[];
}

/** The `list --json` contract of docs/contributing.md: one object per package variant. */
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

/** The zod schema of matrix.ts `caches`: at most a few caches, each with a URL and key of the forms above, no URL twice. */
function cachesSchema() {
  return z
    .array(
      z
        .object({
          url: z.string().refine(isCacheUrl, { error: (iss) => `${cacheUrlProblem(String(iss.input))}: expected ${CACHE_URL_FORM} (got ${shown(iss.input)})` }),
          publicKey: z.string().refine(isPublicKey, { error: (iss) => `${publicKeyProblem(String(iss.input))}: expected ${CACHE_KEY_FORM} (got ${shown(iss.input)})` }),
          // The path of the secret key `publish` signs with (relative to matrix.ts), never the key: no generated file holds it.
          secretKeyFile: z.string().min(1, { error: "expected the path of a secret key file (nix key generate-secret), not empty" }).optional(),
        })
        .strict(),
    )
    .superRefine((arr, ctx) => {
      const seen = new Set<string>();
      arr.forEach((c, i) => {
        const u = c.url.replace(/\/+$/, "");
        if (seen.has(u)) ctx.addIssue({ code: "custom", path: [i, "url"], message: `duplicate cache ${shown(c.url)}` });
        seen.add(u);
      });
    })
    .default([]);
}
