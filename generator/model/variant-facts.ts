/**
 * What `explain NAME` says of a variant beyond its fields, as data: what the CUDA binary cache cannot serve it (the
 * cache model), its torch's device code per CUDA scope at nixpkgs' defaults of its pin, what an environment holds, how
 * it finds the host's GPU driver, its release's facts, the build rows of a package with its own arch handling, and the
 * warnings of a package its nixpkgs marks broken. Pure over a variant and a loaded Project; it loads neither zod nor
 * catalog/index.ts (explain of a variant reads p.catalog). The command (generator/commands/explain.ts) prints it.
 */
import { modelCacheMisses } from "./cache-model.ts";
import { modelDeviceCode } from "../catalog/lib/device-code.ts";
import { nixpkgsCudaFacts } from "../catalog/lib/cuda.ts";
import { torchReleaseFacts } from "../catalog/lib/torch.ts";
import { extraFact, extraPromise } from "../catalog/lib/packages.ts";
import { cudaBuildOf, fixesFor, fixText, nixpkgsBrokenWarnings, onTorch } from "../catalog/lib/packages.ts";
import type { Catalog } from "../catalog/schema.ts";
import { closeCatalogExtras } from "../matrix/extra-hints.ts";
import { checkedVariants, hostDriverRoute } from "../matrix/driver-route.ts";
import { closurePackages } from "../matrix/naming.ts";
import type { Project } from "../matrix/project.ts";
import type { Variant } from "../matrix/schema.ts";

/** The device code of a variant's torch in each CUDA scope (catalog/device-code-size.ts's model), and which is its own. */
export interface VariantDeviceCode {
  torch: ReturnType<typeof modelDeviceCode>;
  packageSet: ReturnType<typeof modelDeviceCode>;
  scope: "torch" | "packageSet";
  /** The measurements the model rests on. */
  sources: string[];
}

/** What an environment variant holds. */
export interface VariantEnvironment {
  /** Its members (pytorch first). */
  members: string[];
  /** torchcodec comes with them: the pin's Python set has it (pkgs/torch-env.nix adds it). */
  torchcodec: boolean;
  /** Per extra: whether its device code is judged, its promise, and (an unknown one) the catalog's extras close to it. */
  extras: { attr: string; deviceCode: "none" | "not judged"; promise: string; closest?: string[] }[];
}

/** explain's facts of one variant beyond its fields. */
export interface VariantFacts {
  /** Why the CUDA binary cache cannot serve its inputs, in words (none: it serves them). */
  offCache: string[];
  /** null for a CPU variant. */
  deviceCode: VariantDeviceCode | null;
  /** null unless an environment variant. */
  environment: VariantEnvironment | null;
  /** null for a CPU variant. */
  hostDriver: ReturnType<typeof hostDriverRoute>;
  releaseFacts: ReturnType<typeof torchReleaseFacts>;
  /** A package built on torch with its own arch handling: what its build is handed and the device code it holds, as [key, value] rows. */
  buildRows: [string, string][];
  /** A package of its closure its nixpkgs marks broken (the words detect and install print for their pick). */
  warnings: string[];
}

/** The facts of `v`, a variant of `p` (see the file header). */
export function variantFacts(v: Variant, p: Pick<Project, "catalog" | "variants">): VariantFacts {
  const pin = p.catalog.nixpkgs.find((n) => n.rev === v.nixpkgs) ?? null;
  return {
    // What the CUDA binary cache cannot serve this variant (the model of catalog/binary-cache.ts).
    offCache: modelCacheMisses([v], p.catalog).reasons.get(v.name)!,
    deviceCode: deviceCodeOf(p.catalog, v),
    environment: v.role === "env" ? environmentOf(p.catalog, v, pin?.torchcodec ?? null) : null,
    // How it finds the host's GPU driver (matrix/driver-route.ts: NixOS, nixglhost, flox).
    hostDriver: hostDriverRoute(checkedVariants([v], p.variants)[0]!),
    releaseFacts: torchReleaseFacts(p.catalog, v.torchVersion),
    buildRows: buildRows(p.catalog, v),
    warnings: nixpkgsBrokenWarnings(p.catalog, closurePackages(v), { rev: v.nixpkgs, cuda: v.cuda, system: v.system }),
  };
}

/**
 * What a CUDA variant's torch's device code weighs in each CUDA scope (catalog/device-code-size.ts: a model from
 * measurements), with nixpkgs' default capabilities at the variant's pin: its own where pin add read them, else the
 * catalog's table. null for a CPU variant.
 */
function deviceCodeOf(cat: Catalog, v: Variant): VariantDeviceCode | null {
  if (v.cuda === null) return null;
  const tk = cat.cuda.find((c) => c.version === v.cuda);
  const pin = cat.nixpkgs.find((n) => n.rev === v.nixpkgs) ?? null;
  const defaults = tk ? [...nixpkgsCudaFacts(cat, pin, tk).defaults] : [];
  const nvshmem = cat.bundledDeviceCode.find((b) => b.origin === "nvshmem");
  const links = nvshmem !== undefined && (nvshmem.linkedAt === "every pin" || nvshmem.linkedAt.includes(v.nixpkgs));
  return {
    torch: modelDeviceCode(cat, v.cudaCapabilities, defaults, "torch", links),
    packageSet: modelDeviceCode(cat, v.cudaCapabilities, defaults, "packageSet", links),
    scope: v.cudaCapabilitiesForPackageSet ? "packageSet" : "torch",
    sources: Object.values(cat.deviceCodeBytes).map((d) => d.source),
  };
}

/**
 * What an environment variant holds: its members (pytorch first), whether torchcodec comes with them (the pin's Python
 * set has it: pkgs/torch-env.nix adds it), and per extra whether its device code is judged (catalog/extras.ts).
 */
function environmentOf(cat: Catalog, v: Variant, pinTorchcodec: string | null): VariantEnvironment {
  return {
    members: v.dependsOn,
    torchcodec: pinTorchcodec !== null,
    extras: v.extras.map((attr) => {
      const judged = extraPromise(cat, attr).judged && extraFact(cat, attr)?.deviceCode === "none";
      const closest = closeCatalogExtras(cat, attr);
      return { attr, deviceCode: judged ? "none" : "not judged", promise: extraPromise(cat, attr).line.slice(attr.length + 2), ...(closest.length ? { closest } : {}) };
    }),
  };
}

/**
 * The rows of a package built on torch with its own arch handling (catalog/lib/packages.ts `cudaBuildOf`): what its build
 * is handed (an own arch variable, a CMake flag, the memory per compile job) and the device code it then holds.
 */
function buildRows(cat: Catalog, v: Variant): [string, string][] {
  const p = onTorch(cat, v.package);
  if (!p || v.cuda === null) return [];
  const b = cudaBuildOf(cat, p, { ...v, cuda: v.cuda });
  if ("reason" in b) return [];
  const rows: [string, string][] = [];
  for (const [k, x] of Object.entries(b.env)) rows.push([k, x]);
  for (const f of b.cmakeFlags) rows.push(["cmakeFlags", f]);
  if (p.gibPerCompileJob) rows.push(["memory per job", `${p.gibPerCompileJob.gib} GiB (MAX_JOBS capped to the builder's memory; ${p.gibPerCompileJob.source})`]);
  rows.push(["device code", `SASS ${b.sass.join(" ")}${b.sassAlso?.length ? ` (+ ${b.sassAlso.join(" ")} allowed)` : ""}${b.ptx.length ? `, PTX ${b.ptx.join(" ")}` : ", no PTX"} (${b.why})`]);
  // An unbreak fix is said by the warning row instead (the warnings: the words detect and install print too).
  for (const f of fixesFor(p, v.nixpkgs, v.cuda, v.system)) if (f.apply !== "unbreak") rows.push([f.apply ? "fix applied" : "fix recorded", fixText(f)]);
  return rows;
}
