/**
 * The work of `fleet` (see command.ts): read the hosts, expand the candidates, cover, cost, print.
 */
import { PACKAGES } from "../constants.ts";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { preferredPin } from "../catalog/index.ts";
import { readHost, type HostInfo } from "../detect/host.ts";
import { recommend } from "../detect/recommend.ts";
import { expand } from "../expand.ts";
import { formatCombination } from "../naming.ts";
import { REPO_ROOT } from "../paths.ts";
import { loadProject, projectFromMatrix, validateMatrix } from "../project.ts";
import type { Variant } from "../schema.ts";
import { compareVersions } from "../versions.ts";
import { FleetUsageError, hostId, type FleetArgs } from "./options.ts";
import { buildCost, fit, leaveOneOut, readSamples, DEFAULT_BUILD_SECONDS } from "./cost.ts";
import { coverFleet, type Element, type FleetHost } from "./cover.ts";

/** The `host` object `detect --json` prints (generator/detect/command.ts). */
interface DetectJsonHost {
  system: HostInfo["system"];
  machine: HostInfo["machine"];
  cpu: string;
  features: string[];
  gpus: HostInfo["gpus"];
  sources?: HostInfo["sources"];
  gpuAbsentReason?: string | null;
}

/** A HostInfo from what detect --json printed: the feature list and GPUs are all recommend() reads. */
function hostFromDetectJson(h: DetectJsonHost): HostInfo {
  return {
    machine: h.machine,
    system: h.system,
    cpu: { arch: h.machine, features: [...h.features].sort(), modelName: h.cpu, vendor: null, armCores: [], logicalCpus: 0 },
    gpus: h.gpus,
    sources: h.sources ?? { cpuinfo: "detect --json", nvidiaSmi: "detect --json", machine: "detect --json" },
    gpuAbsentReason: h.gpuAbsentReason ?? null,
  };
}

/** Read one host: a detect --json file (its `host`, or a bare HostInfo) or a cpuinfo/nvidia-smi.txt directory. */
export async function readFleetHost(path: string): Promise<FleetHost> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new FleetUsageError(`host ${path}: no such file or directory`);
  if (statSync(abs).isDirectory()) {
    const cpuinfo = join(abs, "cpuinfo");
    if (!existsSync(cpuinfo)) throw new FleetUsageError(`host ${path}: a host directory needs a cpuinfo file (and nvidia-smi.txt for GPUs)`);
    const smi = join(abs, "nvidia-smi.txt");
    const host = await readHost({ cpuinfo, nvidiaSmi: existsSync(smi) ? smi : undefined });
    return { id: hostId(path), host };
  }
  let j: { host?: DetectJsonHost };
  try {
    j = JSON.parse(readFileSync(abs, "utf8"));
  } catch (e) {
    throw new FleetUsageError(`host ${path}: not JSON (${(e as Error).message})`);
  }
  const h = j.host;
  if (!h || !h.system || !h.machine || !Array.isArray(h.features) || !Array.isArray(h.gpus))
    throw new FleetUsageError(`host ${path}: not what \`variant-matrix detect --json\` prints (host.system, host.machine, host.features, host.gpus)`);
  return { id: hostId(path), host: hostFromDetectJson(h) };
}

function reasonFor(e: Element, host: HostInfo, candidates: readonly Variant[], catalog: Parameters<typeof recommend>[2], pkg: FleetArgs["package"]): string {
  const r = recommend(host, candidates, catalog, { package: pkg });
  const pick = r.picks.find((p) => (e.capability === null ? p.kind === "cpu" : p.capability === e.capability));
  // fleet's candidates are already every GPU and ISA of the catalog: detect's "add X to matrix.ts" advice cannot
  // help here, so only advice outside matrix.ts (a driver upgrade) is kept.
  const help = (pick?.suggestions ?? []).filter((s) => !/matrix\.ts/.test(s));
  const why = [...(pick?.problems ?? []), ...help.map((s) => `to serve it: ${s}`)];
  return why.join("; ") || "no candidate variant runs on it";
}

/** Run fleet with parsed arguments; prints and sets process.exitCode. */
export async function runFleet(a: FleetArgs): Promise<void> {
  const p = await loadProject({ matrixFile: a.matrix ? resolve(process.cwd(), a.matrix) : undefined });
  const hosts = await Promise.all(a.hosts.map(readFleetHost));
  const ids = new Set<string>();
  for (const h of hosts) {
    if (ids.has(h.id)) throw new FleetUsageError(`two hosts are named ${h.id}: rename one file or directory`);
    ids.add(h.id);
  }
  const torch = a.torch ?? p.matrix.releases[0]!.torch;
  const rel = p.matrix.releases.find((r) => r.torch === torch);
  const pin = rel?.nixpkgs ? p.catalog.nixpkgs.find((n) => n.rev === rel.nixpkgs) : preferredPin(p.catalog, torch);
  const release = { torch, ...(pin ? { nixpkgs: pin.rev } : {}), ...(rel?.sha256 ? { sha256: rel.sha256 } : {}) };
  const python = a.python ?? [...p.matrix.python].sort(compareVersions).at(-1)!;
  const cuda = a.cuda ?? p.matrix.cuda;
  // Candidates: every GPU and ISA of the catalog for this release, Python and CUDA choice.
  const wide = validateMatrix(
    {
      releases: [release],
      python: [python],
      cuda,
      gpus: p.catalog.gpus.map((g) => g.sm),
      isas: p.catalog.isas.map((i) => i.key),
      cpuOnly: true,
      packages: [...PACKAGES],
      policy: p.matrix.policy,
    },
    p.catalog,
    "fleet choice (--torch/--python/--cuda)",
  );
  const { variants } = expand(wide, p.catalog);
  const cover = coverFleet(hosts, variants, p.catalog, a.package);
  const byName = new Map(variants.map((v) => [v.name, v]));
  const toBuild = [...new Set(cover.chosen.flatMap((v) => [...v.dependsOn, v.name]))].map((n) => byName.get(n)!);
  const hostOf = new Map(hosts.map((h) => [h.id, h.host]));
  const unserved = cover.unserved.map((e) => ({ element: e, reason: reasonFor(e, hostOf.get(e.hostId)!, variants, p.catalog, a.package) }));

  const samples = readSamples(a.reports ? resolve(process.cwd(), a.reports) : join(REPO_ROOT, "logs"));
  const model = fit(samples);
  const loo = leaveOneOut(samples);
  const builders = Number.isInteger(a.builders) && a.builders >= 1 ? a.builders : 1;
  const cost = buildCost(toBuild, model, builders);

  const only = cover.chosen.map((v) => formatCombination(v));
  const uniq = <T>(xs: T[]) => [...new Set(xs)];
  const keep = {
    releases: [release],
    python: [python],
    cuda: uniq(cover.chosen.map((v) => v.cuda).filter((c): c is string => c !== null)).sort(compareVersions),
    gpus: uniq(cover.chosen.map((v) => v.sm).filter((s): s is string => s !== null)).sort((x, y) => Number(x) - Number(y)),
    isas: uniq(cover.chosen.map((v) => v.isa)),
    cpuOnly: cover.chosen.some((v) => v.cuda === null),
    packages: a.package === "torchaudio" ? ["pytorch", "torchaudio"] : ["pytorch"],
    policy: p.matrix.policy,
    only,
  };
  // A matrix needs at least one CUDA version and GPU even when every chosen variant is CPU-only.
  if (keep.cuda.length === 0) keep.cuda = [cuda[0]!];
  if (keep.gpus.length === 0) keep.gpus = [p.catalog.gpus[0]!.sm];
  const matrixText =
    `// Written by \`variant-matrix fleet\` for ${hosts.map((h) => h.id).join(", ")}: the ${cover.chosen.length} ${a.package} ` +
    `variant(s) that serve every servable host${a.package === "torchaudio" ? " (and the pytorch each is built against)" : ""}.\n` +
    `import { defineMatrix } from "./generator/schema.ts";\n\nexport default defineMatrix(${JSON.stringify(keep, null, 2)});\n`;

  const methodText =
    cover.method.kind === "exact"
      ? `exact (branch and bound over ${cover.method.candidates} candidate variants and ${cover.method.elements} host GPUs/CPUs, ${cover.method.nodes} nodes): no smaller set serves them`
      : `greedy (${cover.method.reason}); ${cover.method.candidates} candidates, ${cover.method.elements} host GPUs/CPUs`;
  const modelText = samples.length
    ? `fitted on ${samples.length} recorded build(s) (${a.reports ?? "logs"}); leave-one-out error ${loo.meanPct === null ? "unknown (needs ≥ 2 builds)" : `mean ${loo.meanPct.toFixed(0)}%, median ${loo.medianPct!.toFixed(0)}%`}`
    : `no recorded builds: default table (pytorch ${DEFAULT_BUILD_SECONDS.pytorch.seconds / 3600} h: ${DEFAULT_BUILD_SECONDS.pytorch.source}; torchaudio ${DEFAULT_BUILD_SECONDS.torchaudio.seconds / 60} min: ${DEFAULT_BUILD_SECONDS.torchaudio.source}); its error is unknown`;

  if (a.writeMatrix !== undefined) {
    // Never write a matrix generate would reject: nothing chosen, or one the schema refuses, is reported instead.
    let refusal: string | null = cover.chosen.length === 0 ? "no variant serves any of these hosts, so there is no matrix to write" : null;
    if (refusal === null) {
      try {
        projectFromMatrix(keep);
      } catch (e) {
        refusal = `the matrix it would write is invalid: ${(e as Error).message}`;
      }
    }
    if (refusal !== null) {
      console.error(`fleet: --write-matrix: ${refusal}; nothing written`);
      process.exitCode = 1;
      if (a.writeMatrix === "") return;
    } else if (a.writeMatrix !== "") {
      writeFileSync(resolve(process.cwd(), a.writeMatrix), matrixText);
      console.error(`wrote ${a.writeMatrix}`);
    }
  }
  if (a.json) {
    console.log(
      JSON.stringify(
        {
          choice: { torch, nixpkgs: release.nixpkgs ?? null, python, cuda, package: a.package },
          method: cover.method,
          variants: cover.chosen.map((v) => v.name),
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
          cost: { ...cost, builders, model: samples.length ? "fit" : "default", samples: samples.length, leaveOneOut: loo },
          matrix: a.writeMatrix === "" ? matrixText : undefined,
        },
        null,
        2,
      ),
    );
  } else if (a.writeMatrix === "") process.stdout.write(matrixText);
  else {
    const out: string[] = [];
    out.push(`Fleet: ${hosts.length} host(s); PyTorch ${torch}, Python ${python}, CUDA ${cuda.join(", ")}; package ${a.package}`);
    out.push(`Method: ${methodText}.`);
    out.push(`Variants (${cover.chosen.length}):`);
    for (const v of cover.chosen) {
      const who = cover.assignment.filter((x) => x.variant.name === v.name).map((x) => x.element.hostId);
      out.push(`  ${v.name}  ← ${uniq(who).join(", ")}`);
    }
    out.push("Hosts:");
    for (const x of cover.assignment) {
      const what = x.element.gpus ? `GPU ${x.element.gpus.indices.join(",")} ${x.element.gpus.name} (${x.element.capability})` : "CPU only";
      out.push(
        `  ${x.element.hostId}: ${what} → ${x.variant.name} (${x.native ? "native" : "binary-compatible"} code${x.isaIsBest ? ", the host's widest ISA" : `, ISA ${x.variant.isa}: not the host's widest, which would cost another variant`})`,
      );
    }
    if (unserved.length) {
      out.push("Not served:");
      for (const u of unserved)
        out.push(`  ${u.element.hostId}: ${u.element.gpus ? `GPU ${u.element.gpus.indices.join(",")} ${u.element.gpus.name} (${u.element.capability})` : "CPU"}: ${u.reason}`);
    }
    out.push(
      `Build cost: ${cost.builds} package builds and ${cost.cudaClosures} CUDA closure(s) built from source ` +
        `(package-set scope; ${cost.sharedCudaSets} nixpkgs default CUDA set(s) shared, from the binary cache), ` +
        `${cost.hours.toFixed(1)} build-hours; makespan on ${builders} builder(s) ${cost.makespanHours.toFixed(1)} h (the driver's scheduler).`,
    );
    out.push(`  Model: ${modelText}.`);
    console.log(out.join("\n"));
  }
  if (unserved.length) process.exitCode = 1;
}
