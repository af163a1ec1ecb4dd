/**
 * `variant-matrix explain NAME`: a variant's resolved parameters and notes, or why it is dropped and the nearest names.
 *
 * Exit status: 0 NAME is a variant of the matrix; 2 it is not (dropped, not in this matrix, or not a variant name):
 * the why, the matrix.ts change that would add it and the nearest names go to stderr as one error (JSON: stdout).
 */
import type { CommandModule } from "yargs";
import { resolve } from "node:path";
import { checkFilterValues, FILTER_OPTION, matchFilters, parseFilters } from "../filters.ts";
import { REPO_ROOT } from "../paths.ts";
import { project, terminalWidth, UsageError, variantJson, warnUntracked } from "./shared.ts";
import { matrixOption } from "./options.ts";
import { wrap } from "../text.ts";
import { extraFact, extraPromise } from "../catalog/extras.ts";
import { closeCatalogExtras, didYouMean } from "../catalog/extra-hints.ts";
import { clip, ERROR_PREFIX, EXIT } from "../errors.ts";
import { cudaBuildOf, onTorch } from "../catalog/packages.ts";
import { torchReleaseFacts } from "../catalog/index.ts";
import type { Variant } from "../schema.ts";

export const explainCommand: CommandModule<{}, { name: string; json: boolean; matrix?: string }> = {
  command: "explain <name>",
  describe: "show a variant's resolved parameters and notes, or why a name is dropped and the nearest names that exist",
  builder: (y) =>
    y
      .positional("name", { type: "string", demandOption: true, describe: "package variant name" })
      .option("json", { type: "boolean", default: false, describe: "print the explanation as JSON (a variant's fields, or why a name is none and the nearest names) on stdout" })
      .options(matrixOption),
  handler: async (argv) => {
    const [p, { explainName }, { modelCacheMisses }, { nixpkgsInstanceKey }, { modelDeviceCode, DEVICE_CODE_BYTES }, { bundledDeviceCode }, { checkedVariants, hostDriverRoute }] = await Promise.all([
      project(argv.matrix),
      import("../explain.ts"),
      import("../driver/cache-model.ts"),
      import("../expand.ts"),
      import("../catalog/device-code-size.ts"),
      import("../catalog/device-code.ts"),
      import("../preflight/checks.ts"),
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
    const environment = e.kind === "variant" && e.variant.role === "env"
        ? environmentOf(e.variant, p.catalog.nixpkgs.find((n) => n.rev === e.variant.nixpkgs)?.torchcodec ?? null)
        : null;
    // How it finds the host's GPU driver (preflight/checks.ts: NixOS, nixglhost, flox).
    const hostDriver = e.kind === "variant" ? hostDriverRoute(checkedVariants([e.variant], p.variants)[0]!) : null;
    const w = terminalWidth();
    const say = (text: string, indent = "", hang?: string) => console.log(wrap(text, w, { indent, hang }));
    if (argv.json) {
      console.log(JSON.stringify(e.kind === "variant" ? { kind: e.kind, ...e.variant, offCache, deviceCode, hostDriver, releaseFacts: torchReleaseFacts(p.catalog, e.variant.torchVersion), ...(environment ? { environment } : {}) } : e, null, 2));
    } else if (e.kind === "variant") {
      const v = e.variant;
      const rows: [string, string][] = [
        ["name", v.name],
        ["description", v.description],
        ["package", `${v.package} ${v.version} (PyTorch ${v.torchVersion}${Object.entries(v.onTorchVersions).map(([k, x]) => `, ${k} ${x}`).join("")})`],
        ["release", torchReleaseFacts(p.catalog, v.torchVersion).release],
        ...(v.cuda !== null ? [["arch entries", torchReleaseFacts(p.catalog, v.torchVersion).archList] as [string, string]] : []),
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
        ...(hostDriver ? [["host driver", hostDriver.summary] as [string, string]] : []),
        ["file", v.file],
        ["dependsOn", v.dependsOn.join(", ") || "(none)"],
      ];
      // Key column, then the value wrapped under itself (a long name or hash alone on its line stays whole).
      for (const [k, val] of rows) say(val, `${k.padEnd(21)} `, " ".repeat(22));
      if (environment) {
        say("holds (one Python environment, every package on this variant's torch):");
        for (const m of environment.members) say(m, "  ");
        if (environment.torchcodec) say(`${v.pythonPackageSet}.torchcodec (torchaudio's audio I/O), on the same torch`, "  ");
        for (const x of environment.extras) say(`${v.pythonPackageSet}.${x.attr} (extra; device code ${x.deviceCode}): ${x.promise}`, "  ");
        for (const x of environment.extras)
          if (x.closest) say(`extra ${x.attr} is not one the catalog knows; ${didYouMean(x.closest)} (a pin whose Python set lacks it stops this environment's evaluation)`, "note: ", "  ");
      }
      for (const n of v.notes) say(n, "note: ", "  ");
      for (const r of offCache) say(`off the binary cache: ${r}`, "note: ", "  ");
      if (v.cuda !== null && !offCache.length)
        say("the CUDA set, magma and triton it needs are the ones the CUDA binary cache builds; only torch-based packages are built", "note: ", "  ");
      if (deviceCode) {
        const mb = (b: number) => `${(b / 1e6).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`;
        const line = (parts: typeof deviceCode.torch) =>
          parts.map((x) => `${x.origin} ${mb(x.bytes)} (${x.capabilities.length} capabilit${x.capabilities.length === 1 ? "y" : "ies"})`).join(", ") +
          `: ${mb(parts.reduce((a, x) => a + x.bytes, 0))}`;
        const approx = [...new Set([...deviceCode.torch, ...deviceCode.packageSet].flatMap((x) => x.approximated))];
        say("device code of its torch (model: uncompressed cubins per library, measured in PyPI torch 2.11 on an H100; catalog/device-code-size.ts):");
        const label = (name: string, mine: boolean) => `${name}${mine ? " (this variant)" : ""}: `;
        say(line(deviceCode.torch), `  ${label("torch scope", deviceCode.scope === "torch")}`, "    ");
        say(line(deviceCode.packageSet), `  ${label("package-set scope", deviceCode.scope === "packageSet")}`, "    ");
        say(`NCCL is not modelled (PyPI links it dynamically, not per capability)${approx.length ? `; approximated: ${approx.join(", ")}` : ""}`, "  ", "    ");
      }
    } else {
      // Not a variant of this matrix: bad input for explain (exit 2), the why on stderr with the one error prefix.
      const head = { excluded: "dropped", "not-in-matrix": "not in this matrix", unknown: "not a variant name" }[e.kind];
      const lines = [wrap(`${ERROR_PREFIX}${clip(e.name)}: ${head}`, w, { hang: "  " })];
      for (const r of e.reasons) lines.push(wrap(r, w, { indent: "  - ", hang: "    " }));
      if (e.matrixChanges.length) lines.push(wrap(`to add it, edit matrix.ts: ${e.matrixChanges.join("; ")}`, w, { hang: "  " }));
      if (e.nearest.length) {
        lines.push("nearest names that exist:");
        for (const s of e.nearest) lines.push(wrap(`${s.name} (${s.why})`, w, { indent: "  ", hang: "    " }));
      }
      process.stderr.write(lines.join("\n") + "\n");
    }
    if (e.kind !== "variant") process.exitCode = EXIT.input;
  },
};

/**
 * What an environment variant holds, for `explain`: its members (pytorch first), whether torchcodec comes with them (the
 * pin's Python set has it: pkgs/torch-env.nix adds it), and per extra whether its device code is judged (catalog/extras.ts).
 */
function environmentOf(v: Variant, pinTorchcodec: string | null): {
  members: string[];
  torchcodec: boolean;
  /** closest: the catalog's extras an unknown extra is close to (a likely typo), when there are any. */
  extras: { attr: string; deviceCode: "none" | "not judged"; promise: string; closest?: string[] }[];
} {
  return {
    members: v.dependsOn,
    torchcodec: pinTorchcodec !== null,
    extras: v.extras.map((attr) => {
      const judged = extraPromise(attr).judged && extraFact(attr)?.deviceCode === "none";
      const closest = closeCatalogExtras(attr);
      return { attr, deviceCode: judged ? "none" : "not judged", promise: extraPromise(attr).line.slice(attr.length + 2), ...(closest.length ? { closest } : {}) };
    }),
  };
}

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
