/**
 * The work of `fleet`: fleetAnswer checks --package, reads the hosts (readFleetHost) and the earlier builds, then
 * decides (planFleet: candidates, cover, cost, the matrix to write) and says what the builders must declare. Printing,
 * and writing the matrix and manifests where the options say, are commands/fleet.ts's.
 */
import { clip, UsageError } from "../errors.ts";
import "../zod-jitless.ts";
import * as z from "zod";
import { PACKAGES } from "../catalog/lib/packages.ts";
import { ENV_PACKAGE, TORCH_PACKAGE, onTorch } from "../catalog/lib/packages.ts";

/**
 * The `packages` of the matrix fleet writes for a chosen package: pytorch, the package itself, and for the
 * environment the packages on torch it holds that the current matrix has (every one when it lists none).
 */
export function fleetPackages(cat: Pick<Catalog, "packagesOnTorch">, pkg: string, current: readonly string[]): string[] {
  if (pkg === TORCH_PACKAGE) return [TORCH_PACKAGE];
  // A named environment (`llm-env`) holds the torch stack as torch-env does, plus its extras (fleetEnvironments).
  if (pkg !== ENV_PACKAGE && !isNamedEnvironment(pkg)) return [TORCH_PACKAGE, pkg];
  const members = PACKAGES.filter((q) => onTorch(cat, q)?.inEnv && (current.length === 0 || current.includes(q)));
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
import { environmentOf } from "../matrix/naming.ts";
import { join, resolve } from "node:path";
import { catalogAxes } from "../catalog/lib/axes.ts";
import { preferredPin } from "../catalog/lib/torch.ts";
import { readHost, recordedSmiFile, type HostInfo } from "../host/read-host.ts";
import { recommend } from "../detect/recommend.ts";
import { expand } from "../matrix/expand.ts";
import { formatCombination } from "../matrix/naming.ts";
import { REPO_ROOT } from "../paths.ts";
import { projectFromMatrix, validateMatrix, type Project } from "../matrix/project.ts";
import type { Excluded, Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import { compareVersions } from "../versions.ts";
import { commentText } from "../nix-literals.ts";
import { hostId, type FleetArgs } from "./fleet-options.ts";
import { buildCost, fit, leaveOneOut, readSamples, DEFAULT_BUILD_SECONDS, TORCH_BUILD_MODEL, type BuildSample } from "./cost.ts";
import { availableParallelism, totalmem } from "node:os";
import { capacityOf } from "../model/concurrency.ts";
import { coverFleet, type CoverMethod, type Element, type FleetHost } from "./cover.ts";

/** The machines a host file may name (`uname -m`, as detect --json prints it), each with its Nix system. */
const HOST_MACHINES = { x86_64: "x86_64-linux", aarch64: "aarch64-linux" } as const;

/**
 * The schema of a host file: what `detect --json` prints (generator/detect/recommend.ts `Recommendation`), of which
 * fleet reads `host` (its other keys, and the host's own extra keys such as `isa`, are passed over). Built on first use:
 * a fleet of host directories never builds it.
 */
const hostFileSchema = lazySchema(() => {
  const text = z.string({ error: "expected a string" });
  const gpu = z.object(
    {
      index: z.number({ error: "expected a number" }).int("expected a whole number").nonnegative("expected 0 or more"),
      name: text.min(1, "expected the GPU's name"),
      capability: text.regex(/^\d+\.\d+$/, "expected MAJOR.MINOR as a string, e.g. \"9.0\""),
      sm: text.regex(/^\d+$/, "expected the SM number as a string, e.g. \"90\""),
      driver: text.regex(/^\d+(\.\d+)+$/, "expected the driver's version as a string, e.g. \"570.124.06\""),
    },
    { error: "expected a GPU object {index, name, capability, sm, driver}" },
  );
  const host = z
    .object(
      {
        system: z.enum(Object.values(HOST_MACHINES), { error: `expected one of ${Object.values(HOST_MACHINES).join(", ")}` }),
        machine: z.enum(Object.keys(HOST_MACHINES) as (keyof typeof HOST_MACHINES)[], { error: `expected one of ${Object.keys(HOST_MACHINES).join(", ")}` }),
        cpu: text.nullable().optional(),
        features: z.array(text, { error: "expected a list of CPU feature names" }),
        gpus: z.array(gpu, { error: "expected a list of GPUs ([] for none)" }),
        sources: z.object({ cpuinfo: text, nvidiaSmi: text, machine: text }, { error: "expected {cpuinfo, nvidiaSmi, machine}" }).optional(),
        gpuAbsentReason: text.nullable().optional(),
        memory: z
          .object({ bytes: z.number({ error: "expected a number of bytes or null" }).nonnegative().nullable(), source: text }, { error: "expected {bytes, source}" })
          .optional(),
        logicalCpus: z.number({ error: "expected a number of CPUs" }).int("expected a whole number").nonnegative().optional(),
      },
      { error: "expected the host object detect --json prints" },
    )
    .refine((h) => HOST_MACHINES[h.machine] === h.system, { message: "machine and system disagree (x86_64 is x86_64-linux, aarch64 is aarch64-linux)", path: ["system"] });
  return z.object({ host }, { error: "expected an object with a `host` key, as `variant-matrix detect --json` prints" });
});

/** A zod schema built on first use (zod is loaded with the first call). */
function lazySchema<T>(build: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= build());
}

/** The `host` of a host file, as the schema gives it. */
type DetectJsonHost = z.infer<ReturnType<typeof hostFileSchema>>["host"];

/** A HostInfo from what detect --json printed: the feature list and GPUs are all recommend() reads. */
function hostFromDetectJson(h: DetectJsonHost): HostInfo {
  return {
    machine: h.machine,
    system: h.system,
    cpu: { arch: h.machine, features: [...h.features].sort(), modelName: h.cpu ?? null, vendor: null, armCores: [], logicalCpus: h.logicalCpus ?? 0 },
    gpus: h.gpus,
    sources: h.sources ?? { cpuinfo: "detect --json", nvidiaSmi: "detect --json", machine: "detect --json" },
    gpuAbsentReason: h.gpuAbsentReason ?? null,
    memory: h.memory ?? { bytes: null, source: "not in the detect --json file" },
  };
}

/** A host file that is not what `detect --json` prints (exit 2): the file, then each field that is wrong. */
export class HostFileShapeError extends UsageError {}

/**
 * Read one host: a detect --json file (its `host`, checked field by field) or a cpuinfo/nvidia-smi.txt directory.
 * @throws UsageError for a path that does not exist or a directory without cpuinfo; HostFileShapeError for a file that
 *   is not JSON or not what detect --json prints (naming the file and each wrong field); read-host.ts errors for a
 *   directory's unreadable files
 */
export async function readFleetHost(path: string): Promise<FleetHost> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new UsageError(`host ${path}: no such file or directory`);
  if (statSync(abs).isDirectory()) {
    const cpuinfo = join(abs, "cpuinfo");
    if (!existsSync(cpuinfo)) throw new UsageError(`host ${path}: a host directory needs a cpuinfo file (and nvidia-smi.txt or nvidia-smi.csv for GPUs)`);
    const host = await readHost({ cpuinfo, nvidiaSmi: recordedSmiFile(abs) });
    return { id: hostId(path), host };
  }
  let j: unknown;
  try {
    j = JSON.parse(readFileSync(abs, "utf8"));
  } catch (e) {
    throw new HostFileShapeError(`host ${path}: not JSON (${clip((e as Error).message, 200)}); a host file is what \`variant-matrix detect --json\` prints`);
  }
  const parsed = hostFileSchema().safeParse(j);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const said = issues.slice(0, 3).map((i) => `${i.path.length ? i.path.map(String).join(".") : "(the whole file)"}: ${i.message}`);
    const more = issues.length > 3 ? `; and ${issues.length - 3} more` : "";
    throw new HostFileShapeError(`host ${path}: not what \`variant-matrix detect --json\` prints: ${said.join("; ")}${more}`);
  }
  return { id: hostId(path), host: hostFromDetectJson(parsed.data.host) };
}

/** What fleet chose among: the candidate variants of the package, the dropped combinations, and the catalog. */
interface FleetCandidates {
  candidates: readonly Variant[];
  excluded: readonly Excluded[];
  catalog: Parameters<typeof recommend>[2];
  package: FleetArgs["package"];
}

/** Why no candidate serves element `e` of `host`: detect's problems for it, and its advice outside matrix.ts. */
function reasonFor(e: Element, host: HostInfo, c: FleetCandidates): string {
  const r = recommend(host, c.candidates, c.catalog, { package: c.package, excluded: c.excluded });
  const pick = r.picks.find((p) => (e.capability === null ? p.kind === "cpu" : p.capability === e.capability));
  // fleet's candidates are already every GPU and ISA of the catalog: detect's "add X to matrix.ts" advice cannot
  // help here, so only advice outside matrix.ts (a GPU driver upgrade) is kept.
  const help = (pick?.suggestions ?? []).filter((s) => !/matrix\.ts/.test(s));
  const why = [...(pick?.problems ?? []), ...help.map((s) => `to serve it: ${s}`)];
  return why.join("; ") || "no candidate variant runs on it";
}

/** What `planFleet` reads of fleet's arguments. */
type PlanArgs = Pick<FleetArgs, "torch" | "python" | "cuda" | "package" | "builders" | "reports">;

/** @throws UsageError when two hosts have one name */
function checkHostNames(hosts: readonly FleetHost[]): void {
  const ids = new Set<string>();
  for (const h of hosts) {
    if (ids.has(h.id)) throw new UsageError(`two hosts are named ${h.id}: rename one file or directory`);
    ids.add(h.id);
  }
}

/**
 * The release (--torch, else the matrix's first; on its matrix pin, else the catalog's preferred one), Python
 * (--python, else the matrix's newest) and CUDA versions (--cuda, else the matrix's) of the fleet's candidates.
 */
function fleetChoice(p: Project, a: PlanArgs) {
  const torch = a.torch ?? p.matrix.releases[0]!.torch;
  const rel = p.matrix.releases.find((r) => r.torch === torch);
  const pin = rel?.nixpkgs ? p.catalog.nixpkgs.find((n) => n.rev === rel.nixpkgs) : preferredPin(p.catalog, torch);
  const release = { torch, ...(pin ? { nixpkgs: pin.rev } : {}), ...(rel?.sha256 ? { sha256: rel.sha256 } : {}) };
  const python = a.python ?? [...p.matrix.python].sort(compareVersions).at(-1)!;
  const cuda = a.cuda ?? p.matrix.cuda;
  return { torch, release, python, cuda };
}

/**
 * Candidates: every GPU and ISA of the catalog for the chosen release, Python and CUDA, with what the chosen package
 * needs as the written matrix will ask for it (the environment: the members the current matrix has, so an
 * environment never grows opt-in packages the user did not choose).
 * @throws MatrixError for a bad --torch/--python/--cuda choice
 */
function fleetCandidates(p: Project, a: PlanArgs, c: ReturnType<typeof fleetChoice>) {
  const wide = validateMatrix(
    {
      releases: [c.release],
      python: [c.python],
      cuda: c.cuda,
      gpus: catalogAxes(p.catalog).gpus,
      isas: catalogAxes(p.catalog).isas,
      cpuOnly: true,
      packages: fleetPackages(p.catalog, a.package, p.matrix.packages),
      environments: fleetEnvironments(a.package, p.matrix.environments),
      policy: p.matrix.policy,
    },
    p.catalog,
    "fleet choice (--torch/--python/--cuda)",
  );
  return expand(wide, p.catalog);
}

/** The matrix that generates exactly the chosen variants (`only`), with what each is built against. */
function fleetMatrix(p: Project, a: PlanArgs, c: ReturnType<typeof fleetChoice>, chosen: readonly Variant[]) {
  const uniq = <T>(xs: T[]) => [...new Set(xs)];
  const keep = {
    releases: [c.release],
    python: [c.python],
    cuda: uniq(chosen.map((v) => v.cuda).filter((x): x is string => x !== null)).sort(compareVersions),
    gpus: uniq(chosen.map((v) => v.sm).filter((s): s is string => s !== null)).sort((x, y) => Number(x) - Number(y)),
    isas: uniq(chosen.map((v) => v.isa)),
    cpuOnly: chosen.some((v) => v.cuda === null),
    // The package every host needs and what it is built against: pytorch, and for the environment its members.
    packages: fleetPackages(p.catalog, a.package, p.matrix.packages),
    environments: fleetEnvironments(a.package, p.matrix.environments),
    policy: p.matrix.policy,
    only: chosen.map((v) => formatCombination(v)),
  };
  // A matrix needs at least one CUDA version and GPU even when every chosen variant is CPU-only.
  if (keep.cuda.length === 0) keep.cuda = [c.cuda[0]!];
  if (keep.gpus.length === 0) keep.gpus = [p.catalog.gpus[0]!.sm];
  return keep;
}

/** The matrix.ts text of `keep`, with a comment naming the hosts it serves. */
function matrixTextOf(hosts: readonly FleetHost[], pkg: FleetArgs["package"], chosen: number, keep: object): string {
  return (
    `// Written by \`variant-matrix fleet\` for ${commentText(hosts.map((h) => h.id).join(", "))}: the ${chosen} ${pkg} ` +
    `variant(s) that serve every servable host${pkg !== TORCH_PACKAGE ? " (and what each is built against)" : ""}.\n` +
    `import { defineMatrix } from "./generator/matrix/schema.ts";\n\nexport default defineMatrix(${JSON.stringify(keep, null, 2)});\n`
  );
}

/** How the cover was found, in words. */
function methodTextOf(method: CoverMethod): string {
  return method.kind === "exact"
    ? `exact (branch and bound over ${method.candidates} candidate variants and ${method.elements} host GPUs/CPUs, ${method.nodes} nodes): no smaller set serves them`
    : `greedy (${method.reason}); ${method.candidates} candidates, ${method.elements} host GPUs/CPUs`;
}

/** Where the build-time model comes from and how wrong it is, in words. */
function modelTextOf(samples: readonly BuildSample[], reports: string | undefined, loo: ReturnType<typeof leaveOneOut>): string {
  if (samples.length)
    return `fitted on ${samples.length} recorded build(s) (${reports ?? "logs"}); leave-one-out error ${loo.meanPct === null ? "unknown (needs ≥ 2 builds)" : `mean ${loo.meanPct.toFixed(0)}%, median ${loo.medianPct!.toFixed(0)}%`}`;
  const time = (s: number) => (s >= 3600 ? `${s / 3600} h` : `${s / 60} min`);
  const m = TORCH_BUILD_MODEL;
  const torch =
    `pytorch: the build plan's model at ${m.referenceCores} cores, CUDA ${time(m.cudaOneCapabilitySeconds)} for one capability ` +
    `(${DEFAULT_BUILD_SECONDS.pytorch!.source}), CPU-only ${m.cpuFigure.seconds / 60} min at ${m.cpuFigure.cores} cores, ${Math.round(m.cpuSeconds / 60)} min at ${m.referenceCores} (${m.cpuSource})`;
  const table = Object.entries(DEFAULT_BUILD_SECONDS)
    .filter(([k]) => k !== "pytorch")
    .map(([k, d]) => `${k} ${time(d.seconds)}: ${d.source}`)
    .join("; ");
  return `no recorded builds: default table (${torch}; ${table}); its error is unknown`;
}

/** Never write a matrix generate would reject: why nothing is written (nothing chosen, or a matrix the schema refuses), or null. */
function refusalOf(chosen: number, keep: unknown): string | null {
  if (chosen === 0) return "no variant serves any of these hosts, so there is no matrix to write";
  try {
    projectFromMatrix(keep);
  } catch (e) {
    return `the matrix it would write is invalid: ${(e as Error).message}`;
  }
  return null;
}

/**
 * Decide fleet's answer (pure: no I/O, no printing): candidates of the catalog for the chosen release, Python and
 * CUDA versions, the fewest variants that serve every servable host, why the others are not served, the build cost
 * (fitted on `samples`), and the matrix that generates exactly the chosen variants, or why none can be written.
 * @throws UsageError for two hosts with one name; MatrixError for a bad --torch/--python/--cuda choice
 */
export function planFleet(p: Project, hosts: readonly FleetHost[], a: PlanArgs, samples: readonly BuildSample[]) {
  checkHostNames(hosts);
  const choice = fleetChoice(p, a);
  const { torch, python, cuda, release } = choice;
  const { variants, excluded } = fleetCandidates(p, a, choice);
  // One builder's capacity for the waits and the costs alike (this machine's, where `build` runs), and one history: the
  // samples the cost model fits on are the earlier builds the waits take (stand-ins are neither: report.ts realBuilds).
  const history = new Map(samples.map((s) => [s.name, s.seconds]));
  const capacity = capacityOf({ cpus: availableParallelism(), memBytes: totalmem() });
  const cover = coverFleet(hosts, variants, p.catalog, a.package, { capacity, history });
  const byName = new Map(variants.map((v) => [v.name, v]));
  const toBuild = [...new Set(cover.chosen.flatMap((v) => [...v.dependsOn, v.name]))].map((n) => byName.get(n)!);
  const hostOf = new Map(hosts.map((h) => [h.id, h.host]));
  const among: FleetCandidates = { candidates: variants, excluded, catalog: p.catalog, package: a.package };
  const unserved = cover.unserved.map((e) => ({ element: e, reason: reasonFor(e, hostOf.get(e.hostId)!, among) }));
  const loo = leaveOneOut(samples);
  const builders = Number.isInteger(a.builders) && a.builders >= 1 ? a.builders : 1;
  const cost = buildCost(toBuild, fit(samples), builders, p.catalog, capacity.slots);
  const keep = fleetMatrix(p, a, choice, cover.chosen);
  const matrixText = matrixTextOf(hosts, a.package, cover.chosen.length, keep);
  const refusal = refusalOf(cover.chosen.length, keep);
  const methodText = methodTextOf(cover.method);
  const modelText = modelTextOf(samples, a.reports, loo);
  return { torch, python, cuda, release, cover, toBuild, unserved, builders, cost, samples: samples.length, loo, keep, matrixText, refusal, methodText, modelText };
}

/** What planFleet decides. */
export type FleetPlan = ReturnType<typeof planFleet>;

/** What the build machines must declare, per system (generator/system-features.ts featureNeeds). */
export type FeatureNeeds = { system: string; features: string[]; variants: number }[];

/**
 * `--package`: a package of the catalog's table, or a named environment the matrix has (`llm-env`).
 * @throws UsageError naming the allowed values
 */
function checkPackage(pkg: string, p: Project): void {
  if ((PACKAGES as readonly string[]).includes(pkg) || p.variants.some((v) => v.role === "env" && v.package === pkg)) return;
  const envs = [...new Set(p.variants.filter((v) => v.role === "env" && !(PACKAGES as readonly string[]).includes(v.package)).map((v) => v.package))];
  throw new UsageError(`--package: unknown package "${pkg}"; allowed values: ${[...PACKAGES, ...envs].join(", ")}${envs.length ? "" : " (named environments come from matrix.ts environments)"}`);
}

/**
 * fleet's answer for its parsed options: --package checked, the hosts read (`hosts`: detect --json files or
 * directories of cpuinfo + nvidia-smi.txt), the earlier builds under `logsDir` (default: logs/ of the repository) that
 * the cost model fits (a foreign or damaged report left out with one warning through `warn`, as build does), the plan
 * (planFleet), and what the build machines must declare.
 * @throws UsageError for an unknown --package or a bad host file; what planFleet throws
 */
export async function fleetAnswer(
  p: Project,
  a: PlanArgs & { hosts: readonly string[]; logsDir?: string },
  warn: (text: string) => void,
): Promise<{ plan: FleetPlan; needs: FeatureNeeds; hostCount: number }> {
  checkPackage(a.package, p);
  const hosts = await Promise.all(a.hosts.map(readFleetHost));
  const [{ readEarlierReports }, { featureNeeds }] = await Promise.all([import("../driver/report.ts"), import("../system-features.ts")]);
  const logs = a.logsDir ?? join(REPO_ROOT, "logs");
  const samples = readEarlierReports((onSkip) => readSamples(logs, onSkip), warn);
  const plan = planFleet(p, hosts, a, samples);
  const needs = featureNeeds(plan.toBuild, null, []).map((g) => ({ system: g.system, features: g.features, variants: g.variants.length }));
  return { plan, needs, hostCount: hosts.length };
}
