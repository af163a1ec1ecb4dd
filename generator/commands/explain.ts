/**
 * `variant-matrix explain NAME`: a variant's resolved parameters and notes, or why it is dropped and the nearest names.
 *
 * Exit status: 0 NAME is a variant of the matrix; 2 it is not (dropped, not in this matrix, or not a variant name):
 * the why, the matrix.ts change that would add it and the nearest names go to stderr as one error (JSON: stdout).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { printer, project, runOf, terminalWidth, type Io } from "./shared.ts";
import { matrixOption, outputOptions, type ArgsOf, type OptionTypes } from "./options.ts";
import { wrap } from "../text.ts";
import { didYouMean } from "../matrix/extra-hints.ts";
import { clip, ERROR_PREFIX, EXIT } from "../errors.ts";
import type { Variant } from "../matrix/schema.ts";
import type { Explanation } from "../matrix/explain.ts";
import type { VariantDeviceCode, VariantFacts } from "../model/variant-facts.ts";

/** The positional of `explain`. */
const namePositional = { name: { type: "string", demandOption: true, describe: "package variant name" } } as const;

/** The options of `explain` (yargs), the shared ones defined once in options.ts. */
const explainOptions = {
  json: { ...outputOptions.json, describe: "print the explanation as JSON (a variant's fields, or why a name is none and the nearest names) on stdout" },
  ...matrixOption,
} as const;

/** The yargs command module `explain <name>`; generator/cli.ts registers it. */
export const explainCommand: CommandModule<object, OptionTypes<typeof namePositional & typeof explainOptions>> = {
  command: "explain <name>",
  describe: "show a variant's resolved parameters and notes, or why a name is dropped and the nearest names that exist",
  builder: (y: Argv<object>) => y.positional("name", namePositional.name).options(explainOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof namePositional & typeof explainOptions>>) => {
    const run = runOf(argv);
    run.exitCode = await runExplain(argv, run.io);
  },
};

/**
 * Run explain: a variant's rows (or its JSON), or why NAME is none on stderr with exit 2.
 * @returns the exit status (0, or EXIT.input when NAME is not a variant)
 * @throws InputError for an invalid matrix
 */
async function runExplain(argv: ArgsOf<typeof namePositional & typeof explainOptions>, io: Io): Promise<number> {
  const print = printer(io);
  const p = await project(argv.matrix);
  // A variant of the matrix needs no more; matrix/explain.ts (the catalog's values, expand) is loaded only to say why not.
  const variant = p.variants.find((v) => v.name === argv.name);
  const e: Explanation = variant ? { kind: "variant", variant } : (await import("../matrix/explain.ts")).explainName(argv.name, p);
  const w = terminalWidth(io);
  if (e.kind !== "variant") {
    if (argv.json) print.out(JSON.stringify(e, null, 2));
    else io.err(notVariantText(e, w));
    return EXIT.input;
  }
  // What it says beyond the fields (model/variant-facts.ts), loaded with neither zod nor catalog/index.ts.
  const facts = (await import("../model/variant-facts.ts")).variantFacts(e.variant, p);
  if (argv.json)
    print.out(JSON.stringify({ kind: e.kind, ...e.variant, offCache: facts.offCache, deviceCode: facts.deviceCode, hostDriver: facts.hostDriver, releaseFacts: facts.releaseFacts, warnings: facts.warnings, ...(facts.environment ? { environment: facts.environment } : {}) }, null, 2));
  else printVariant(e.variant, facts, w, print.out);
  return 0;
}

/** A variant for the terminal (each line to `out`): its rows (key, then the value wrapped under itself), what it holds, its notes. */
function printVariant(v: Variant, facts: VariantFacts, w: number, out: (line: string) => void): void {
  const { offCache, deviceCode, environment, hostDriver } = facts;
  const say = (text: string, indent = "", hang?: string) => out(wrap(text, w, { indent, hang }));
  const rows: [string, string][] = [
    ["name", v.name],
    ["description", v.description],
    ["package", `${v.package} ${v.version} (PyTorch ${v.torchVersion}${Object.entries(v.onTorchVersions).map(([k, x]) => `, ${k} ${x}`).join("")})`],
    ["release", facts.releaseFacts.release],
    ...(v.cuda !== null ? [["arch entries", facts.releaseFacts.archList] as [string, string]] : []),
    ["system", v.system],
    ["python", `${v.python} (${v.pythonPackageSet})`],
    ["cuda", v.cuda ? `${v.cuda} (${v.cudaPackageSet})` : "none (CPU only)"],
    ["gpu", v.sm ? `SM${v.sm}` : "none"],
    ["TORCH_CUDA_ARCH_LIST", v.cudaCapabilities.join(";") || "(none)"],
    ["cudaCapabilities", `${JSON.stringify(v.cudaCapabilities)}${v.cudaCapabilitiesForPackageSet ? " (whole CUDA package set: config.cudaCapabilities)" : " (torch and the packages built on it; the CUDA set keeps nixpkgs' defaults)"}`],
    ...facts.buildRows,
    ...facts.warnings.map((x): [string, string] => ["warning", x]),
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
  if (deviceCode) printDeviceCode(deviceCode, say);
}

/** The device code of a variant's torch per CUDA scope (catalog/device-code-size.ts's model), under explain's rows. */
function printDeviceCode(deviceCode: VariantDeviceCode, say: (text: string, indent?: string, hang?: string) => void): void {
  const mb = (b: number) => `${oneDecimal(b / 1e6)} MB`;
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

/**
 * `x` as `x.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })` writes it ("1,025.3"),
 * without ICU: the first number format of a process loads ICU's locale data, some 10–25 ms of explain's start-up
 * (bench/startup.ts). Same rule: the shortest decimal form of `x` (String(x)) rounded to one digit half away from zero
 * (ECMA-402's default halfExpand), the integer part grouped by threes with ",". A value String() writes otherwise (a
 * negative, NaN, an exponent) goes to toLocaleString itself. tests/project-cache.test.ts compares the two.
 */
export function oneDecimal(x: number): string {
  const s = String(x);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return x.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const frac = m[2] ?? "";
  // Tenths as one integer (digits of the integer part and the first fraction digit), plus one when the next digit is ≥ 5.
  let tenths = BigInt(m[1]! + (frac[0] ?? "0"));
  if ((frac[1] ?? "0") >= "5") tenths += 1n;
  const t = tenths.toString().padStart(2, "0");
  return `${t.slice(0, -1).replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${t.slice(-1)}`;
}

/**
 * Why NAME is not a variant of this matrix (bad input for explain, exit 2), as one error on stderr with the one
 * prefix: dropped, not in this matrix, or not a variant name; the matrix.ts change that would add it; the nearest names.
 */
function notVariantText(e: Exclude<Explanation, { kind: "variant" }>, w: number): string {
  const head = { excluded: "dropped", "not-in-matrix": "not in this matrix", unknown: "not a variant name" }[e.kind];
  const lines = [wrap(`${ERROR_PREFIX}${clip(e.name)}: ${head}`, w, { hang: "  " })];
  for (const r of e.reasons) lines.push(wrap(r, w, { indent: "  - ", hang: "    " }));
  if (e.matrixChanges.length) lines.push(wrap(`to add it, edit matrix.ts: ${e.matrixChanges.join("; ")}`, w, { hang: "  " }));
  if (e.nearest.length) {
    lines.push("nearest names that exist:");
    for (const s of e.nearest) lines.push(wrap(`${s.name} (${s.why})`, w, { indent: "  ", hang: "    " }));
  }
  return lines.join("\n") + "\n";
}
