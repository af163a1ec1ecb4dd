/**
 * `variant-matrix explain NAME`: a variant's resolved parameters and notes, or why it is dropped and the nearest names.
 */
import type { CommandModule } from "yargs";
import { resolve } from "node:path";
import { checkFilterValues, FILTER_OPTION, matchFilters, parseFilters } from "../filters.ts";
import { REPO_ROOT } from "../paths.ts";
import { matrixOption, project, UsageError, variantJson, warnUntracked } from "./shared.ts";
import { cudaBuildOf, onTorch } from "../catalog/packages.ts";
import type { Variant } from "../schema.ts";

export const explainCommand: CommandModule<{}, { name: string; json: boolean; matrix?: string }> = {
  command: "explain <name>",
  describe: "show a variant's resolved parameters and notes, or why a name is dropped and the nearest names that exist",
  builder: (y) =>
    y
      .positional("name", { type: "string", demandOption: true, describe: "package variant name" })
      .option("json", { type: "boolean", default: false })
      .options(matrixOption),
  handler: async (argv) => {
    const [p, { explainName }, { modelCacheMisses }, { nixpkgsInstanceKey }, { modelDeviceCode, DEVICE_CODE_BYTES }, { bundledDeviceCode }] = await Promise.all([
      project(argv.matrix),
      import("../explain.ts"),
      import("../driver/cache-model.ts"),
      import("../expand.ts"),
      import("../catalog/device-code-size.ts"),
      import("../catalog/device-code.ts"),
    ]);
    const e = explainName(argv.name, p);
    // What the CUDA binary cache cannot serve this variant (the model of catalog/binary-cache.ts).
    const offCache =
      e.kind === "variant"
        ? modelCacheMisses([{ ...e.variant, nixpkgsKey: nixpkgsInstanceKey(e.variant) }], p.catalog.nixpkgs).reasons.get(e.variant.name)!
        : [];
    // What its torch's device code weighs in each CUDA scope (catalog/device-code-size.ts: a model from measurements).
    const deviceCode =
      e.kind === "variant" && e.variant.cuda !== null
        ? (() => {
            const v = e.variant;
            const defaults = p.catalog.cuda.find((c) => c.version === v.cuda)?.nixpkgsDefaultCapabilities ?? [];
            const nvshmem = bundledDeviceCode.find((b) => b.origin === "nvshmem");
            const links = nvshmem !== undefined && (nvshmem.linkedAt === "every pin" || nvshmem.linkedAt.includes(v.nixpkgs));
            return {
              torch: modelDeviceCode(v.cudaCapabilities, defaults, "torch", links),
              packageSet: modelDeviceCode(v.cudaCapabilities, defaults, "packageSet", links),
              scope: v.cudaCapabilitiesForPackageSet ? "packageSet" : "torch",
              sources: Object.values(DEVICE_CODE_BYTES).map((d) => d.source),
            };
          })()
        : null;
    if (argv.json) {
      console.log(JSON.stringify(e.kind === "variant" ? { kind: e.kind, ...e.variant, offCache, deviceCode } : e, null, 2));
    } else if (e.kind === "variant") {
      const v = e.variant;
      const rows: [string, string][] = [
        ["name", v.name],
        ["description", v.description],
        ["package", `${v.package} ${v.version} (PyTorch ${v.torchVersion}${Object.entries(v.onTorchVersions).map(([k, x]) => `, ${k} ${x}`).join("")})`],
        ["system", v.system],
        ["python", `${v.python} (${v.pythonPackageSet})`],
        ["cuda", v.cuda ? `${v.cuda} (${v.cudaPackageSet})` : "none (CPU only)"],
        ["gpu", v.sm ? `SM${v.sm}` : "none"],
        ["TORCH_CUDA_ARCH_LIST", v.cudaCapabilities.join(";") || "(none)"],
        ["cudaCapabilities", `${JSON.stringify(v.cudaCapabilities)}${v.cudaCapabilitiesForPackageSet ? " (whole CUDA package set: config.cudaCapabilities)" : " (torch and the packages built on it; the CUDA set keeps nixpkgs' defaults)"}`],
        ...packageRows(v),
        ["isa", `${v.isa}: ${v.cflags.join(" ")}`],
        ["nixpkgs", v.nixpkgs],
        ["nixpkgs sha256", v.nixpkgsSha256],
        ["systemFeatures", v.requiredSystemFeatures.join(" ") || "(none)"],
        ["file", v.file],
        ["dependsOn", v.dependsOn.join(", ") || "(none)"],
      ];
      for (const [k, val] of rows) console.log(`${k.padEnd(21)} ${val}`);
      for (const n of v.notes) console.log(`note: ${n}`);
      for (const r of offCache) console.log(`note: off the binary cache: ${r}`);
      if (v.cuda !== null && !offCache.length)
        console.log("note: the CUDA set, magma and triton it needs are the ones the CUDA binary cache builds; only torch-based packages are built");
      if (deviceCode) {
        const mb = (b: number) => `${(b / 1e6).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`;
        const line = (parts: typeof deviceCode.torch) =>
          parts.map((x) => `${x.origin} ${mb(x.bytes)} (${x.capabilities.length} capabilit${x.capabilities.length === 1 ? "y" : "ies"})`).join(", ") +
          `: ${mb(parts.reduce((a, x) => a + x.bytes, 0))}`;
        const approx = [...new Set([...deviceCode.torch, ...deviceCode.packageSet].flatMap((x) => x.approximated))];
        console.log("device code of its torch (model: uncompressed cubins per library, measured in PyPI torch 2.11 on an H100; catalog/device-code-size.ts):");
        const label = (name: string, mine: boolean) => `${name}${mine ? " (this variant)" : ""}:`.padEnd(34);
        console.log(`  ${label("torch scope", deviceCode.scope === "torch")}${line(deviceCode.torch)}`);
        console.log(`  ${label("package-set scope", deviceCode.scope === "packageSet")}${line(deviceCode.packageSet)}`);
        console.log(`  NCCL is not modelled (PyPI links it dynamically, not per capability)${approx.length ? `; approximated: ${approx.join(", ")}` : ""}`);
      }
    } else {
      const head = { excluded: "dropped", "not-in-matrix": "not in this matrix", unknown: "not a variant name" }[e.kind];
      console.log(`${e.name}: ${head}`);
      for (const r of e.reasons) console.log(`  - ${r}`);
      if (e.matrixChanges.length) console.log(`to add it, edit matrix.ts: ${e.matrixChanges.join("; ")}`);
      if (e.nearest.length) {
        console.log("nearest names that exist:");
        for (const s of e.nearest) console.log(`  ${s.name}  (${s.why})`);
      }
    }
    if (e.kind !== "variant") process.exitCode = 1;
  },
};

/**
 * The rows of a package built on torch with its own arch handling (catalog/packages.ts `cudaBuildOf`): what its build
 * is handed (an own arch variable, a CMake flag, the memory per compile job) and the device code it then holds.
 */
function packageRows(v: Variant): [string, string][] {
  const p = onTorch(v.package);
  if (!p || v.cuda === null) return [];
  const b = cudaBuildOf(p, v.version, v.cudaCapabilities, v.cuda, v.torchVersion);
  if ("reason" in b) return [];
  const rows: [string, string][] = [];
  for (const [k, x] of Object.entries(b.env)) rows.push([k, x]);
  for (const f of b.cmakeFlags) rows.push(["cmakeFlags", f]);
  if (p.gibPerCompileJob) rows.push(["memory per job", `${p.gibPerCompileJob.gib} GiB (MAX_JOBS capped to the builder's memory; ${p.gibPerCompileJob.source})`]);
  rows.push(["device code", `SASS ${b.sass.join(" ")}${b.ptx.length ? `, PTX ${b.ptx.join(" ")}` : ", no PTX"} (${b.why})`]);
  return rows;
}
