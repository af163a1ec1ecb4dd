/**
 * The work of `fleet`: read the hosts (readFleetHost), then decide (planFleet: candidates, cover, cost, the matrix
 * to write). Printing and writing are commands/fleet.ts's.
 */
import { PACKAGES } from "../constants.ts";
import { ENV_PACKAGE, TORCH_PACKAGE, onTorch } from "../catalog/packages.ts";

/**
 * The `packages` of the matrix fleet writes for a chosen package: pytorch, the package itself, and for the
 * environment the packages on torch it holds that the current matrix has (every one when it lists none).
 */
export function fleetPackages(pkg: string, current: readonly string[]): string[] {
  if (pkg === TORCH_PACKAGE) return [TORCH_PACKAGE];
  // A named environment (`llm-env`) holds the torch stack as torch-env does, plus its extras (fleetEnvironments).
  if (pkg !== ENV_PACKAGE && !isNamedEnvironment(pkg)) return [TORCH_PACKAGE, pkg];
  const members = PACKAGES.filter((q) => onTorch(q)?.inEnv && (current.length === 0 || current.includes(q)));
  return [TORCH_PACKAGE, ...members, ENV_PACKAGE];
}

/** True for a named environment of matrix.ts (`llm-env`), not a package of the catalog's table. */
function isNamedEnvironment(pkg: string): boolean {
  return !(PACKAGES as readonly string[]).includes(pkg) && environmentOf(pkg) !== null;
}

/** The `environments` a fleet matrix carries: the named environment asked for, with its extras from the matrix; else none. */
export function fleetEnvironments(pkg: string, current: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  const name = isNamedEnvironment(pkg) ? environmentOf(pkg) : null;
  return name !== null && current[name] ? { [name]: [...current[name]!] } : {};
}
import { existsSync, readFileSync, statSync } from "node:fs";
import { environmentOf } from "../naming.ts";
import { join, resolve } from "node:path";
import { catalogAxes, preferredPin } from "../catalog/index.ts";
import { readHost, type HostInfo } from "../detect/host.ts";
import { recommend } from "../detect/recommend.ts";
import { expand } from "../expand.ts";
import { formatCombination } from "../naming.ts";
import { REPO_ROOT } from "../paths.ts";
import { projectFromMatrix, validateMatrix, type Project } from "../project.ts";
import type { Excluded, Variant } from "../schema.ts";
import { compareVersions } from "../versions.ts";
import { commentText } from "../render/literals.ts";
import { FleetUsageError, hostId, type FleetArgs } from "./options.ts";
import { buildCost, fit, leaveOneOut, DEFAULT_BUILD_SECONDS, type BuildSample } from "./cost.ts";
import { coverFleet, type Element, type FleetHost } from "./cover.ts";

/** The `host` object `detect --json` prints (generator/detect/recommend.ts `Recommendation`). */
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

function reasonFor(e: Element, host: HostInfo, candidates: readonly Variant[], catalog: Parameters<typeof recommend>[2], pkg: FleetArgs["package"], excluded: readonly Excluded[]): string {
  const r = recommend(host, candidates, catalog, { package: pkg, excluded });
  const pick = r.picks.find((p) => (e.capability === null ? p.kind === "cpu" : p.capability === e.capability));
  // fleet's candidates are already every GPU and ISA of the catalog: detect's "add X to matrix.ts" advice cannot
  // help here, so only advice outside matrix.ts (a GPU driver upgrade) is kept.
  const help = (pick?.suggestions ?? []).filter((s) => !/matrix\.ts/.test(s));
  const why = [...(pick?.problems ?? []), ...help.map((s) => `to serve it: ${s}`)];
  return why.join("; ") || "no candidate variant runs on it";
}

/**
 * Decide fleet's answer (pure: no I/O, no printing): candidates of the catalog for the chosen release, Python and
 * CUDA versions, the fewest variants that serve every servable host, why the others are not served, the build cost
 * (fitted on `samples`), and the matrix that generates exactly the chosen variants, or why none can be written.
 * @throws FleetUsageError for two hosts with one name; MatrixError for a bad --torch/--python/--cuda choice
 */
export function planFleet(
  p: Project,
  hosts: readonly FleetHost[],
  a: Pick<FleetArgs, "torch" | "python" | "cuda" | "package" | "builders" | "reports">,
  samples: readonly BuildSample[],
) {
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
      gpus: catalogAxes(p.catalog).gpus,
      isas: catalogAxes(p.catalog).isas,
      cpuOnly: true,
      // What the chosen package needs, as the written matrix will ask for it (the environment: the members the current
      // matrix has, so an environment never grows opt-in packages the user did not choose).
      packages: fleetPackages(a.package, p.matrix.packages),
      environments: fleetEnvironments(a.package, p.matrix.environments),
      policy: p.matrix.policy,
    },
    p.catalog,
    "fleet choice (--torch/--python/--cuda)",
  );
  const { variants, excluded } = expand(wide, p.catalog);
  const cover = coverFleet(hosts, variants, p.catalog, a.package);
  const byName = new Map(variants.map((v) => [v.name, v]));
  const toBuild = [...new Set(cover.chosen.flatMap((v) => [...v.dependsOn, v.name]))].map((n) => byName.get(n)!);
  const hostOf = new Map(hosts.map((h) => [h.id, h.host]));
  const unserved = cover.unserved.map((e) => ({ element: e, reason: reasonFor(e, hostOf.get(e.hostId)!, variants, p.catalog, a.package, excluded) }));

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
    // The package every host needs and what it is built against: pytorch, and for the environment its members.
    packages: fleetPackages(a.package, p.matrix.packages),
    environments: fleetEnvironments(a.package, p.matrix.environments),
    policy: p.matrix.policy,
    only,
  };
  // A matrix needs at least one CUDA version and GPU even when every chosen variant is CPU-only.
  if (keep.cuda.length === 0) keep.cuda = [cuda[0]!];
  if (keep.gpus.length === 0) keep.gpus = [p.catalog.gpus[0]!.sm];
  const matrixText =
    `// Written by \`variant-matrix fleet\` for ${commentText(hosts.map((h) => h.id).join(", "))}: the ${cover.chosen.length} ${a.package} ` +
    `variant(s) that serve every servable host${a.package !== TORCH_PACKAGE ? " (and what each is built against)" : ""}.\n` +
    `import { defineMatrix } from "./generator/schema.ts";\n\nexport default defineMatrix(${JSON.stringify(keep, null, 2)});\n`;

  const methodText =
    cover.method.kind === "exact"
      ? `exact (branch and bound over ${cover.method.candidates} candidate variants and ${cover.method.elements} host GPUs/CPUs, ${cover.method.nodes} nodes): no smaller set serves them`
      : `greedy (${cover.method.reason}); ${cover.method.candidates} candidates, ${cover.method.elements} host GPUs/CPUs`;
  const modelText = samples.length
    ? `fitted on ${samples.length} recorded build(s) (${a.reports ?? "logs"}); leave-one-out error ${loo.meanPct === null ? "unknown (needs ≥ 2 builds)" : `mean ${loo.meanPct.toFixed(0)}%, median ${loo.medianPct!.toFixed(0)}%`}`
    : `no recorded builds: default table (${Object.entries(DEFAULT_BUILD_SECONDS).map(([k, d]) => `${k} ${d.seconds >= 3600 ? `${d.seconds / 3600} h` : `${d.seconds / 60} min`}: ${d.source}`).join("; ")}); its error is unknown`;

  // Never write a matrix generate would reject: nothing chosen, or one the schema refuses, is reported instead.
  let refusal: string | null = cover.chosen.length === 0 ? "no variant serves any of these hosts, so there is no matrix to write" : null;
  if (refusal === null) {
    try {
      projectFromMatrix(keep);
    } catch (e) {
      refusal = `the matrix it would write is invalid: ${(e as Error).message}`;
    }
  }
  return { torch, python, cuda, release, cover, toBuild, unserved, builders, cost, samples: samples.length, loo, keep, matrixText, refusal, methodText, modelText };
}

/** What planFleet decides. */
export type FleetPlan = ReturnType<typeof planFleet>;
