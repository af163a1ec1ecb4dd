/**
 * `variant-matrix fleet HOST...` (definition, handler and printing; the deciding is fleet/plan.ts fleetAnswer): the fewest variants that
 * serve a whole fleet, which host runs which, who cannot be served and why, the `matrix.ts` that generates
 * exactly those variants, and what they cost to build.
 *
 * A HOST is what `detect --json` printed on that machine (a .json file; its `host`), or a directory holding
 * `cpuinfo` (the machine's /proc/cpuinfo) and, when it has NVIDIA GPUs, `nvidia-smi.txt` (the output of
 * `nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader`), as `detect --cpuinfo/--nvidia-smi`
 * reads them.
 */
import { join, resolve } from "node:path";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { REPEATABLE } from "../constants.ts";
import { PACKAGES } from "../catalog/lib/packages.ts";
import { errorLine, UsageError } from "../errors.ts";
import { wrap } from "../text.ts";
import { printer, project, runOf, terminalWidth, type Io } from "./shared.ts";
import { matrixOption, outputOptions, packagePickOption, type BuiltTypes, type CamelCased } from "./options.ts";

export { hostId, type FleetArgs } from "../fleet/fleet-options.ts";

import type { FeatureNeeds, FleetPlan } from "../fleet/plan.ts";
import { terminalSafe } from "../terminal-safe.ts";

/** The options of `fleet` (yargs), the shared groups defined once in options.ts. */
const fleetOptions = {
  torch: { type: "string", describe: "PyTorch release (default: the matrix's first release)" },
  python: { type: "string", describe: "Python version (default: the newest of the matrix's)" },
  cuda: { ...REPEATABLE, describe: "CUDA versions to choose from (default: the matrix's)" },
  package: {
    ...packagePickOption.package,
    describe: `the package every host needs: ${PACKAGES.join(" | ")} | NAME-env (an environment of matrix.ts); default torch-env, the Python environment of the whole stack; each package brings what it is built on`,
  },
  builders: { type: "number", default: 1, describe: "build machines for the makespan estimate" },
  "logs-dir": { ...outputOptions["logs-dir"], describe: "logs directory of earlier builds (as build --logs-dir) whose report.json files fit the cost model (default: logs)" },
  // The old spelling, kept working but not shown: build and fleet name the logs directory alike.
  reports: { type: "string", hidden: true },
  json: { ...outputOptions.json, describe: "print the plan as JSON (with the cost model's sources)" },
  verbose: { type: "boolean", default: false, describe: "also say why each extra build is needed and where the cost model's figures come from" },
  "write-matrix": { type: "string", describe: "print (or, with a file name, write) the matrix.ts that generates exactly these variants" },
  "write-manifest": { type: "string", describe: "write into DIR one flox manifest per group of hosts sharing a variant (with --org)" },
  org: { type: "string", describe: "the Flox organisation the variants are published to (publish --org): --write-manifest installs ORG/NAME" },
  ...matrixOption,
} as const;

const builder = (y: Argv<object>) =>
  y.positional("hosts", { type: "string", array: true, demandOption: true, describe: "detect --json files or directories of cpuinfo + nvidia-smi.txt" }).options(fleetOptions);

/** Arguments of `fleet` as yargs infers them from its builder (`reports`: the logs directory, --logs-dir or the old --reports). */
type FleetCommandArgs = CamelCased<BuiltTypes<typeof builder>>;

/** The yargs command module `fleet <hosts..>`; generator/cli.ts registers it. Sets its run's exit status 1 for a host nothing serves. */
export const fleetCommand: CommandModule<object, BuiltTypes<typeof builder>> = {
  command: "fleet <hosts..>",
  describe: "the fewest variants that serve every host of a fleet (detect --json files or cpuinfo/nvidia-smi.txt dirs), and their build cost (default package: torch-env)",
  builder,
  handler: async (argv: ArgumentsCamelCase<BuiltTypes<typeof builder>>) => {
    if (argv.logsDir !== undefined && argv.reports !== undefined) throw new UsageError("give --logs-dir, not both it and the old --reports");
    const run = runOf(argv);
    run.exitCode = await runFleet({ ...argv, reports: argv.logsDir ?? argv.reports }, run.io);
  },
};


/**
 * What one modelled extra build is for, from its key (model/cache-model.ts: `what|rev|system|…`): the system, the
 * CUDA package set or version, the Python set for triton, the capabilities of a package-set closure, and the
 * nixpkgs revision when the builds span several. E.g. "aarch64-linux, CUDA 12.8, Python 3.13".
 */
export function buildFor(key: string, withRev: boolean): string {
  const [what, rev, system, ...rest] = key.split("|");
  const parts = [system!];
  if (what === "cuda-closure") {
    const [set, ...caps] = rest;
    parts.push(set === "cpu" ? "CPU" : `${set}`);
    if (caps.length) parts.push(`capabilities ${caps.join(" ")}`);
  } else if (what === "triton") parts.push(`Python ${rest[0]}`, `CUDA ${rest[1]}`);
  else parts.push(`CUDA ${rest[0]}`);
  if (withRev) parts.push(`nixpkgs ${rev!.slice(0, 7)}`);
  return parts.join(", ");
}

/**
 * Run fleet with parsed arguments: one call (fleet/plan.ts fleetAnswer), then write what the options ask and print (to `io`).
 * @returns the exit status: 1 for a host nothing serves or a matrix fleet refuses to write, else 0
 */
export async function runFleet(a: FleetCommandArgs, io: Io): Promise<number> {
  const print = printer(io);
  // Loaded here, not at start-up: `variant-matrix --help` and the other commands stay light.
  const { fleetAnswer } = await import("../fleet/plan.ts");
  const p = await project(a.matrix);
  const logsDir = a.reports ? resolve(process.cwd(), a.reports) : undefined;
  const { plan: f, needs, hostCount } = await fleetAnswer(p, { ...a, logsDir }, (text) => io.err(terminalSafe(text)));
  const failed = f.unserved.length > 0 || (a.writeMatrix !== undefined && f.refusal !== null) ? 1 : 0;
  if (!(await writeFleetFiles(a, f, io))) return failed;
  if (a.json) print.out(JSON.stringify(fleetJson(a, f, needs), null, 2));
  else if (a.writeMatrix === "") io.out(f.matrixText);
  else print.out(await fleetText(a, f, hostCount, needs, io));
  return failed;
}

/**
 * Write what `--write-manifest DIR` and `--write-matrix FILE` ask for, saying so on `io.err`. A matrix fleet refuses
 * to write is an error line (runFleet: exit 1).
 * @returns false when nothing more is to be printed (a bare --write-matrix whose matrix was refused)
 * @throws UsageError for --write-manifest without --org
 */
async function writeFleetFiles(a: FleetCommandArgs, f: FleetPlan, io: Io): Promise<boolean> {
  if (a.writeManifest !== undefined) {
    if (!a.org) throw new UsageError("--write-manifest needs --org ORG: the manifests install ORG/NAME (what publish --org ORG published)");
    const [{ hostGroupManifests }, { writeOutputFile }] = await Promise.all([import("../fleet/manifests.ts"), import("../output-file.ts")]);
    const dir = resolve(process.cwd(), a.writeManifest);
    const files = hostGroupManifests(f.cover.assignment, a.org);
    for (const [name, text] of files) await writeOutputFile(join(dir, name), text);
    io.err(`wrote ${files.size} flox manifest(s) into ${a.writeManifest}\n`);
  }
  if (a.writeMatrix === undefined) return true;
  if (f.refusal !== null) {
    io.err(errorLine(`--write-matrix: ${f.refusal}; nothing written`));
    return a.writeMatrix !== "";
  }
  if (a.writeMatrix !== "") {
    const { writeOutputFile } = await import("../output-file.ts");
    await writeOutputFile(resolve(process.cwd(), a.writeMatrix), f.matrixText);
    io.err(`wrote ${a.writeMatrix}\n`);
  }
  return true;
}

/** fleet's `--json` answer: the choice, the variants, each host's, the unserved, the cost and its model. */
function fleetJson(a: FleetCommandArgs, f: FleetPlan, needs: FeatureNeeds) {
  const { torch, python, cuda, release, cover, toBuild, unserved, builders, cost, loo, matrixText, modelText } = f;
  return {
    choice: { torch, nixpkgs: release.nixpkgs ?? null, python, cuda, package: a.package },
    method: cover.method,
    variants: cover.chosen.map((v) => v.name),
    // Each chosen variant's modelled wait alone (model/wait.ts variantWait): seconds and the dependency builds it counts.
    waits: Object.fromEntries(
      [...cover.waits].map(([n, w]) => [n, { seconds: w.seconds, offCacheS: w.offCacheSeconds, offCache: w.offCache.map((b) => b.what), parts: w.parts }]),
    ),
    build: toBuild.map((v) => v.name),
    hosts: cover.assignment.map((x) => ({
      host: x.element.hostId,
      capability: x.element.capability,
      gpus: x.element.gpus,
      variant: x.variant.name,
      native: x.native,
      bestIsa: x.isaIsBest,
    })),
    unserved: unserved.map((u) => ({ host: u.element.hostId, capability: u.element.capability, gpus: u.element.gpus, reason: u.reason })),
    cost: { ...cost, builders, model: f.samples ? "fit" : "default", modelSources: modelText, samples: f.samples, leaveOneOut: loo },
    builderFeatures: needs,
    matrix: a.writeMatrix === "" ? matrixText : undefined,
  };
}

/** fleet's answer for the terminal, wrapped to its width: the variants, each host's, the unserved, the build cost. */
async function fleetText(a: FleetCommandArgs, f: FleetPlan, hostCount: number, needs: FeatureNeeds, io: Io): Promise<string> {
  // detect/rules.ts (the wait in words) is loaded here, not at every command's start.
  const { waitWords } = await import("../detect/rules.ts");
  const { torch, python, cuda, cover, unserved, builders, cost, methodText, modelText } = f;
  const uniq = <T>(xs: T[]) => [...new Set(xs)];
  const w = terminalWidth(io);
  const out: string[] = [];
  const para = (text: string, indent = "", hang?: string) => out.push(wrap(text, w, { indent, hang }));
  para(`Fleet: ${hostCount} host(s); PyTorch ${torch}, Python ${python}, CUDA ${cuda.join(", ")}; package ${a.package}`);
  para(`Method: ${methodText}.`);
  out.push(`Variants (${cover.chosen.length}):`);
  for (const v of cover.chosen) {
    const who = cover.assignment.filter((x) => x.variant.name === v.name).map((x) => x.element.hostId);
    const wt = cover.waits.get(v.name);
    para(`${v.name} ← ${uniq(who).join(", ")}${wt ? `; wait ${waitWords(wt)}` : ""}`, "  ", "    ");
  }
  out.push("Hosts:");
  for (const x of cover.assignment) {
    const what = x.element.gpus ? `GPU ${x.element.gpus.indices.join(",")} ${x.element.gpus.name} (${x.element.capability})` : "CPU only";
    para(
      `${x.element.hostId}: ${what} → ${x.variant.name} (${x.native ? "native" : "binary-compatible"} code${x.isaIsBest ? ", the host's widest ISA" : `, ISA ${x.variant.isa}: not the host's widest, which would cost another variant`})`,
      "  ",
      "    ",
    );
  }
  if (unserved.length) {
    out.push("Not served:");
    for (const u of unserved)
      para(`${u.element.hostId}: ${u.element.gpus ? `GPU ${u.element.gpus.indices.join(",")} ${u.element.gpus.name} (${u.element.capability})` : "CPU"}: ${u.reason}`, "  ", "    ");
  }
  const count = (what: string) => cost.rebuilt.filter((b) => b.what === what).length;
  para(
    `Build cost: ${cost.builds} package builds, and ${cost.rebuilt.length} build(s) the CUDA cache cannot serve ` +
      `(${cost.cudaClosures} CUDA closure(s), ${count("nccl")} NCCL, ${count("nvshmem")} NVSHMEM, ${count("magma")} magma, ` +
      `${count("triton")} triton, ${count("dependency")} rebuilt package dependencies; model: catalog/binary-cache.ts; ${cost.sharedCudaSets} nixpkgs default CUDA set(s) come from the cache). ` +
      `${cost.hours.toFixed(1)} build-hours; makespan on ${builders} builder(s) ${cost.makespanHours.toFixed(1)} h (the driver's scheduler).`,
  );
  const revs = new Set(cost.rebuilt.map((b) => b.key.split("|")[1]));
  for (const b of cost.rebuilt) {
    para(`builds ${b.attr ?? b.what} for ${buildFor(b.key, revs.size > 1)} (${b.seconds === null ? "build time unknown" : `${(b.seconds / 3600).toFixed(1)} h`}, for ${b.variants.length} variant(s))`, "  ", "    ");
    if (a.verbose) para(`why: ${b.why}`, "      ", "      ");
  }
  para(
    a.verbose || f.samples ? `Model: ${modelText}.` : "Model: no recorded builds: the default table of build times (--verbose or --json give their sources).",
    "  ",
    "    ",
  );
  para("Builders must declare (nix.conf system-features, or the machines file; NixOS adds gccarch-<gcc.arch> and its inferiors):");
  for (const n of needs) para(`${n.system}: ${n.features.join(" ") || "(nothing)"} for ${n.variants} build(s)`, "  ", "    ");
  return out.join("\n");
}
