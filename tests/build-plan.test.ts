/**
 * Build driver, pure parts: plan (DAG, order, waves, priorities, simulate, lower bound), the --jobs rule,
 * selection (closure over dependsOn, close names), directory scan, backend commands.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join, resolve } from "node:path";
import { DEFAULT_ESTIMATE_S, TORCH_BUILD_MODEL, estimateBuild, lowerBound, makePlan, pickNext, PlanError, simulate, transitiveDependents, type NodeState } from "../generator/model/plan.ts";
import { capacityOf, jobsRule, startBuilds, type Capacity } from "../generator/model/concurrency.ts";
import { checkTargets, GPU_CHECK_FEATURE, selectTargets, SelectionError, targetsFromVariants } from "../generator/driver/targets.ts";
import { readFileSync } from "node:fs";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import buildMatrix from "./fixtures/build-matrix.ts";
import { buildCmd } from "../generator/driver/backend.ts";
import { formatDuration, makeRunId, summaryTable, type BuildReport } from "../generator/driver/report.ts";

const FIXTURES = resolve(import.meta.dirname, "fixtures/build-pkgs");
const GiB = 2 ** 30;

/**
 * The fixed-jobs schedule (`--jobs J --cores C`): J builds at once, C cores each; at the torch model's 24 reference
 * cores a build takes its estimate of a plan made without cores.
 */
const fixedCapacity = (jobs: number, cores: number = TORCH_BUILD_MODEL.referenceCores): Capacity => capacityOf({ cpus: jobs * cores, memBytes: null }, { cores, jobs });

const t = (name: string, dependsOn: string[] = []) => ({
  name,
  package: (name.startsWith("torchaudio") ? "torchaudio" : "pytorch") as "pytorch" | "torchaudio",
  dependsOn,
});

test("plan: DAG, topological order, waves; pytorch first without history", () => {
  const plan = makePlan([t("torchaudio-a", ["pytorch-a"]), t("pytorch-b"), t("pytorch-a"), t("torchaudio-b", ["pytorch-b"])]);
  assert.equal(plan.waves, [["pytorch-a", "pytorch-b"], ["torchaudio-a", "torchaudio-b"]]);
  assert.equal(plan.order, ["pytorch-a", "pytorch-b", "torchaudio-a", "torchaudio-b"]);
  const a = plan.nodes.get("pytorch-a")!;
  assert.is(a.estimateSource, "default");
  assert.is(a.priority, DEFAULT_ESTIMATE_S.pytorch + DEFAULT_ESTIMATE_S.torchaudio);
  assert.equal(a.dependents, ["torchaudio-a"]);
  assert.equal(transitiveDependents(plan, "pytorch-b"), ["torchaudio-b"]);
});

test("plan: durations from earlier reports drive longest-first (critical path), package median for unknowns", () => {
  const history = new Map([
    ["pytorch-a", 100],
    ["pytorch-b", 300],
    ["torchaudio-a", 500],
  ]);
  const plan = makePlan([t("pytorch-a"), t("pytorch-b"), t("pytorch-c"), t("torchaudio-a", ["pytorch-a"])], history);
  // pytorch-a: 100 + 500 (its torchaudio) beats pytorch-b's 300; pytorch-c gets the pytorch median 200
  assert.is(plan.nodes.get("pytorch-a")!.priority, 600);
  assert.is(plan.nodes.get("pytorch-c")!.estimateS, 200);
  assert.is(plan.nodes.get("pytorch-c")!.estimateSource, "package-median");
  assert.equal(plan.order, ["pytorch-a", "torchaudio-a", "pytorch-b", "pytorch-c"]);
  const state = new Map<string, NodeState>([["pytorch-a", "running"]]);
  assert.is(pickNext(plan, state), "pytorch-b", "torchaudio-a waits for pytorch-a");
  state.set("pytorch-a", "built");
  assert.is(pickNext(plan, state), "torchaudio-a");
});

test("plan: missing dependency and cycles are errors", () => {
  assert.throws(() => makePlan([t("torchaudio-a", ["pytorch-a"])]), (e: unknown) => e instanceof PlanError && /not in the plan/.test((e as Error).message));
  assert.throws(() => makePlan([t("pytorch-x", ["pytorch-y"]), t("pytorch-y", ["pytorch-x"])]), /cycle among: pytorch-x, pytorch-y/);
});

test("simulate and lower bound: list scheduling longest first", () => {
  const d = new Map([
    ["pytorch-a", 10],
    ["pytorch-b", 6],
    ["pytorch-c", 4],
    ["torchaudio-a", 2],
  ]);
  const plan = makePlan([t("pytorch-a"), t("pytorch-b"), t("pytorch-c"), t("torchaudio-a", ["pytorch-a"])], d);
  const sim = simulate(plan, 2);
  assert.is(sim.makespan, 12);
  const lb = lowerBound(plan, 2);
  assert.equal(lb, { criticalPath: 12, totalWork: 22, bound: 12 });
  assert.is(simulate(plan, 1).makespan, 22);
  assert.is(simulate(plan, 2, new Map(), new Set(["pytorch-a"])).makespan, 6, "cached nodes take no time");
});

test("jobs rule: min of CPUs and memory / 4 GiB, cores per build, documented explanation", () => {
  assert.equal(jobsRule({ cpus: 64, memBytes: 256 * GiB }).jobs, 8);
  assert.equal(jobsRule({ cpus: 64, memBytes: 256 * GiB }).coresPerBuild, 8);
  assert.equal(jobsRule({ cpus: 64, memBytes: 64 * GiB }).jobs, 2, "memory-bound: 16 slots");
  assert.equal(jobsRule({ cpus: 2, memBytes: 23 * GiB }), {
    jobs: 1,
    coresPerBuild: 2,
    slots: 2,
    explanation: "slots = min(2 CPUs, floor(23.0 GiB / 4 GiB)) = 2; jobs = 1 = floor(2 / 2); cores per build = 2",
  });
  assert.equal(jobsRule({ cpus: 8, memBytes: 2 * GiB }).jobs, 1, "never below 1");
  assert.equal(jobsRule({ cpus: 64, memBytes: 256 * GiB }, 4).jobs, 16, "--cores 4");
  assert.equal(jobsRule({ cpus: 64, memBytes: 256 * GiB }, undefined, 4).coresPerBuild, 16, "--jobs 4");
});

test("targets come from the variant list (with their systems); torchaudio pulls in pytorch; filters; close names", () => {
  const p = projectFromMatrix(buildMatrix);
  const targets = targetsFromVariants(p.variants, resolve(import.meta.dirname, "..")).map((x) => ({ ...x, file: join(FIXTURES, `${x.name}.nix`) }));
  assert.is(targets.length, p.variants.length);
  const ta = targets.find((x) => x.name === "torchaudio-python313-cuda12_8-sm121-armv9")!;
  assert.equal(ta.dependsOn, ["pytorch-python313-cuda12_8-sm121-armv9"]);
  assert.is(ta.system, "aarch64-linux");
  assert.is(targets.find((x) => x.name === "pytorch-python313-cpu-avx2")!.system, "x86_64-linux");

  const s = selectTargets(targets, { names: ["torchaudio-python313-cuda12_8-sm121-armv9"] });
  assert.equal(s.targets.map((x) => x.name).sort(), ["pytorch-python313-cuda12_8-sm121-armv9", "torchaudio-python313-cuda12_8-sm121-armv9"]);
  assert.is(s.why.get("pytorch-python313-cuda12_8-sm121-armv9"), "dependency");
  const f = selectTargets(targets, { filters: ["cuda=12_8", "sm=90", "python=313", "isa=avx512"], package: "torchaudio" });
  assert.equal(f.targets.map((x) => x.name).sort(), ["pytorch-python313-cuda12_8-sm90-avx512", "torchaudio-python313-cuda12_8-sm90-avx512"]);
  const cpu = selectTargets(targets, { filters: ["cuda=none", "package=pytorch", "python=3.13", "isa=avx2"] });
  assert.equal(cpu.targets.map((x) => x.name), ["pytorch-python313-cpu-avx2"]);
  assert.throws(() => selectTargets(targets, { names: ["pytorch-python313-cpu-avx"] }), (e: unknown) => e instanceof SelectionError && /close names: pytorch-python313-cpu-avx/.test((e as Error).message));
  assert.throws(() => selectTargets(targets, { filters: ["isa=avx9000"] }), /isa=avx9000 matches no variant/);
  assert.throws(() => selectTargets(targets, { filters: ["isa=avx2", "sm=121"] }), /selection is empty/);
});

test("backend commands: argument arrays, flox in the root, nix with pass-through options", () => {
  const target = { name: "pytorch-python313-cpu-avx2", file: "/p/.flox/pkgs/pytorch-python313-cpu-avx2.nix" };
  assert.equal(buildCmd(target, { backend: "flox", root: "/p", outDir: "/elsewhere", builders: "x", cores: 3 }), {
    argv: ["flox", "build", "pytorch-python313-cpu-avx2"],
    cwd: "/p",
    outLink: "/p/result-pytorch-python313-cpu-avx2",
  });
  assert.equal(
    buildCmd(target, { backend: "nix", root: "/p", outDir: "/o", builders: "ssh://big x86_64-linux - 32", cores: 8, nixOptions: [["substituters", ""]] }).argv,
    ["nix-build", target.file, "-o", "/o/result-pytorch-python313-cpu-avx2", "--builders", "ssh://big x86_64-linux - 32", "--cores", "8", "--option", "substituters", ""],
  );
});

test("report helpers: run ids sort by time, durations, summary table", () => {
  const a = makeRunId(new Date("2025-01-02T03:04:05.678Z"));
  assert.match(a, /^20250102T030405Z-[0-9a-f]{4}$/);
  assert.ok(a < makeRunId(new Date("2025-01-02T03:04:06Z")));
  assert.is(formatDuration(4.21), "4.2s");
  assert.is(formatDuration(3725), "1h02m");
  const rep: BuildReport = {
    runId: a,
    startedAt: "2025-01-02T03:04:05.000Z",
    finishedAt: "2025-01-02T03:05:05.000Z",
    backend: "nix",
    jobs: 2,
    interrupted: false,
    exitCode: 1,
    logsDir: "/l",
    variants: [
      { name: "pytorch-x", package: "pytorch", status: "failed", reason: "exit code 100: boom", durationS: 12, outPath: null, log: "/l/pytorch-x.log", exitCode: 100, attempts: 2, selectedAs: "dependency", dependsOn: [], startedAt: null, finishedAt: null, command: [], origin: null, machine: null, copiedTo: null, copyError: null },
      { name: "torchaudio-x", package: "torchaudio", status: "skipped", reason: "dependency pytorch-x failed", durationS: 0, outPath: null, log: null, exitCode: null, attempts: 0, selectedAs: "requested", dependsOn: ["pytorch-x"], startedAt: null, finishedAt: null, command: [], origin: null, machine: null, copiedTo: null, copyError: null },
      { name: "torchvision-x", package: "torchvision", status: "built", reason: null, durationS: 3, outPath: "/nix/store/x", log: "/l/tv.log", exitCode: 0, attempts: 1, selectedAs: "requested", dependsOn: [], startedAt: null, finishedAt: null, command: [], origin: "built", machine: "local", copiedTo: null, copyError: null, narSize: 1234, closureSize: 1812345678 },
    ],
  };
  assert.is(
    summaryTable(rep),
    [
      "VARIANT        STATUS   TIME   TRIES  CLOSURE  WHERE           REASON",
      "pytorch-x      failed   12.0s  2                               exit code 100: boom",
      "torchaudio-x   skipped                                         dependency pytorch-x failed",
      "torchvision-x  built    3.0s   1      1.8 GB   built on local",
      "",
      "1 built, 0 cached, 1 failed, 1 skipped in 1m00s; exit 1",
    ].join("\n"),
  );
});

test("dry-run rows (pure): plan order, exact commands, cached nodes, cross-system notes, the CUDA closures", async () => {
  const { dryRunRows } = await import("../generator/driver/dry-run.ts");
  const p = projectFromMatrix({ releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["13.0"], gpus: ["90", "110"], isas: ["avx2", "armv9"], cpuOnly: false });
  const targets = targetsFromVariants(p.variants, "/repo");
  const sel = selectTargets(targets, { names: ["torchaudio-python313-cuda13_0-sm90-avx2", "torchaudio-python313-cuda13_0-sm110-armv9"] });
  const plan = makePlan(sel.targets);
  const cached = new Map([["pytorch-python313-cuda13_0-sm90-avx2", { cached: true, by: "store" as const, outPath: "/nix/store/x-pt", drvPath: null }]]);
  const backend = { backend: "nix" as const, root: "/repo", outDir: "/out" };
  const d = dryRunRows(plan, cached, sel.why, backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(2) });
  assert.equal(d.rows.map((r) => r.name), plan.order);
  assert.is(d.cached, 1);
  assert.is(d.toBuild, 3);
  const pt = d.rows.find((r) => r.name === "pytorch-python313-cuda13_0-sm90-avx2")!;
  assert.is(pt.cached, true);
  assert.is(pt.selectedAs, "dependency");
  assert.equal(pt.command.argv, ["nix-build", "/repo/.flox/pkgs/pytorch-python313-cuda13_0-sm90-avx2.nix", "-o", "/out/result-pytorch-python313-cuda13_0-sm90-avx2"]);
  const arm = d.rows.find((r) => r.name === "torchaudio-python313-cuda13_0-sm110-armv9")!;
  assert.match(arm.notes.join(" "), /differs from this host \(x86_64-linux\): needs a remote builder/);
  // SM110 forces its own CUDA closure; SM90 shares nixpkgs' default set.
  assert.is(d.cudaClosures.own.length, 1);
  assert.is(d.cudaClosures.shared.length, 1);
  assert.ok(d.cudaClosures.own[0]!.variants.every((n) => n.includes("sm110")));
  const forced = dryRunRows(plan, cached, sel.why, backend, { host: "x86_64-linux", force: true, capacity: fixedCapacity(1) });
  const one = dryRunRows(plan, cached, sel.why, backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(1) });
  assert.is(forced.toBuild, 4);
  assert.ok(forced.estimatedMakespanS! > one.estimatedMakespanS!, "on one builder, a built torch shortens the estimate");
});

test("estimates: a named environment has torch-env's default; a package no table knows is unknown with its reason, never NaN", async () => {
  const { dryRunRows } = await import("../generator/driver/dry-run.ts");
  const { dryRunText } = await import("../generator/driver/dry-run-text.ts");
  const { defaultBuildSeconds } = await import("../generator/model/plan.ts");
  assert.is(defaultBuildSeconds("llm-env")!.seconds, DEFAULT_ESTIMATE_S["torch-env"]);
  assert.match(defaultBuildSeconds("llm-env")!.source, /named environment is built like torch-env/);
  assert.is(defaultBuildSeconds("constructor"), null, "no figure from Object.prototype");
  assert.is(defaultBuildSeconds("mystery"), null);
  const target = (name: string, pkg: string, dependsOn: string[] = []) => ({
    name, package: pkg, dependsOn, file: `/x/${name}.nix`, system: "x86_64-linux" as const, python: "3.13", cuda: null, sm: null, isa: "avx2",
    torchVersion: "2.12.0", cudaCapabilitiesForPackageSet: false, nixpkgsKey: "k",
  });
  const backend = { backend: "nix" as const, root: "/x", outDir: "/out" };
  const why = new Map<string, "requested" | "dependency">();
  const named = makePlan([target("pytorch-a", "pytorch"), target("llm-env-a", "llm-env", ["pytorch-a"])]);
  assert.is(named.nodes.get("llm-env-a")!.estimateS, 60);
  const ok = dryRunRows(named, new Map(), why, backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(1) });
  // A CPU-only torch (cuda null): the model's CPU figure at its reference cores (plan.ts TORCH_BUILD_MODEL).
  assert.is(ok.estimatedMakespanS, TORCH_BUILD_MODEL.cpuSeconds + 60);
  assert.is(ok.estimatedMakespanUnknown, null);
  const odd = makePlan([target("pytorch-a", "pytorch"), target("mystery-a", "mystery", ["pytorch-a"])]);
  const node = odd.nodes.get("mystery-a")!;
  assert.is(node.estimateS, null);
  assert.is(node.estimateSource, "unknown");
  assert.match(node.unknownReason!, /no default build time for package "mystery"/);
  assert.ok(Number.isFinite(node.priority) && Number.isFinite(odd.nodes.get("pytorch-a")!.priority));
  const d = dryRunRows(odd, new Map(), why, backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(1) });
  assert.is(d.estimatedMakespanS, null);
  assert.match(d.estimatedMakespanUnknown!, /no estimate for mystery-a/);
  // Cached, it needs no estimate: the makespan is known again.
  const cached = new Map([["mystery-a", { cached: true, by: "store" as const, outPath: "/nix/store/x", drvPath: null }]]);
  assert.is(dryRunRows(odd, cached, why, backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(1) }).estimatedMakespanS, TORCH_BUILD_MODEL.cpuSeconds);
  const text = dryRunText({
    d, backend: "nix", rule: { jobs: 1, explanation: "x" }, coresPerBuild: null, capped: new Map(), capacity: fixedCapacity(1), fromHistory: false, askedStore: false,
    needs: { groups: [], local: null, localBuilds: true, hostLine: null }, preflight: "", verbose: true,
  });
  assert.not.match(text, /NaN/);
  assert.match(text, /wait unknown: no estimate for mystery-a/);
  assert.match(text, /mystery-a {2}est unknown \(no earlier build of mystery-a or of another mystery, and no default build time for package "mystery"\)/);
  assert.not.match(JSON.stringify(d), /NaN/);
  assert.is(formatDuration(Number.NaN), "unknown");
});

test("the wait: dependency builds the cache cannot serve come before torch, and the headline is the sum of its critical chain", async () => {
  const [{ default: matrix }, { modelCacheMisses }, { dryRunRows }, { dryRunText }] = await Promise.all([
    import("../matrix.ts"),
    import("../generator/model/cache-model.ts"),
    import("../generator/driver/dry-run.ts"),
    import("../generator/driver/dry-run-text.ts"),
  ]);
  const p = projectFromMatrix(matrix);
  // CUDA 12.8 is not the default cudaPackages of the pin (12.9): NCCL, NVSHMEM, magma and triton are off the cache.
  const sel = selectTargets(targetsFromVariants(p.variants, "/x"), { names: ["torch-env-python313-cuda12_8-sm90-avx512bf16"] }).targets;
  const model = modelCacheMisses(sel.map((t) => ({ ...t, nixpkgs: t.nixpkgs! })), p.catalog);
  assert.equal(model.builds.map((b) => b.what).sort(), ["magma", "nccl", "nvshmem", "triton"]);
  const backend = { backend: "nix" as const, root: "/x", outDir: "/out" };
  const rows = (jobs: number) => dryRunRows(makePlan(sel, new Map(), { cores: 16 }), new Map(), new Map(), backend, { host: "x86_64-linux", force: false, capacity: fixedCapacity(jobs, 16), model });
  const est = (pkg: string) => makePlan(sel, new Map(), { cores: 16 }).nodes.get(sel.find((t) => t.package === pkg)!.name)!.estimateS!;
  const deps = model.builds.map((b) => b.seconds!);
  for (const jobs of [1, 2, 8]) {
    const d = rows(jobs);
    const chain = d.wait.parts.reduce((a, x) => a + x.seconds, 0);
    assert.is(d.estimatedMakespanS, chain, `jobs ${jobs}: the headline is the sum of its parts`);
    assert.is(d.wait.seconds, d.estimatedMakespanS);
    assert.ok(d.wait.parts.some((x) => x.offCache) && d.wait.parts.findIndex((x) => x.offCache) < d.wait.parts.findIndex((x) => x.what === "pytorch"), "a dependency build precedes torch on the chain");
    assert.ok(d.estimatedMakespanS! > d.variantsMakespanS!, "the dependency builds are in the headline");
    const text = dryRunText({
      d, backend: "nix", rule: { jobs, explanation: "x" }, coresPerBuild: 16, capped: new Map(), capacity: fixedCapacity(jobs, 16), fromHistory: false, askedStore: false,
      needs: { groups: [], local: null, localBuilds: true, hostLine: null }, preflight: "",
    });
    assert.match(text, `wait ${formatDuration(d.estimatedMakespanS!)} until the last variant is ready: `);
    assert.not.match(text, /not in the makespan/);
  }
  // One build at a time: all the work, the dependencies included.
  const all = deps.reduce((a, b) => a + b, 0) + est("pytorch") + est("torchaudio") + est("torchvision") + est("torch-env");
  assert.is(rows(1).estimatedMakespanS, all);
  // Enough builders: the critical path, computed here from the parts: the longest dependency, torch, the longer
  // package on torch, the environment.
  assert.is(rows(8).estimatedMakespanS, Math.max(...deps) + est("pytorch") + Math.max(est("torchaudio"), est("torchvision")) + est("torch-env"));
});

test("estimates follow what drives them: CUDA or CPU, the capabilities compiled, the builder's cores; an earlier build wins", () => {
  const cpu = estimateBuild({ package: "pytorch", cuda: null }, 24)!;
  const one = estimateBuild({ package: "pytorch", cuda: "12.9", cudaCapabilities: ["9.0"] }, 24)!;
  const two = estimateBuild({ package: "pytorch", cuda: "12.9", cudaCapabilities: ["9.0", "10.0"] }, 24)!;
  assert.is(cpu.seconds, TORCH_BUILD_MODEL.cpuSeconds);
  assert.is(one.seconds, TORCH_BUILD_MODEL.cudaOneCapabilitySeconds);
  assert.ok(cpu.seconds < one.seconds && one.seconds < two.seconds, `${cpu.seconds} < ${one.seconds} < ${two.seconds}`);
  assert.is(two.seconds - one.seconds, one.seconds - cpu.seconds, "each capability adds the same device-code time");
  assert.is(estimateBuild({ package: "pytorch", cuda: "12.9", cudaCapabilities: ["9.0"] }, 12)!.seconds, 2 * one.seconds, "half the cores, twice the time");
  assert.match(one.basis, /^model: CUDA, 1 capability, 24 cores$/);
  assert.match(cpu.basis, /^model: CPU/);
  assert.is(estimateBuild({ package: "torchaudio", cuda: "12.9" }, 4)!.basis, "catalog figure");
  const t = { name: "pytorch-a", package: "pytorch" as const, dependsOn: [], cuda: "12.9", cudaCapabilities: ["9.0"] };
  const fresh = makePlan([t], new Map(), { cores: 8 }).nodes.get("pytorch-a")!;
  assert.is(fresh.estimateSource, "model");
  assert.is(fresh.estimateS, 3 * one.seconds);
  const earlier = makePlan([t], new Map([["pytorch-a", 1234]]), { cores: 8 }).nodes.get("pytorch-a")!;
  assert.is(earlier.estimateS, 1234);
  assert.is(earlier.estimateSource, "history");
  assert.is(earlier.estimateBasis, "an earlier build of this variant");
});

test("build's checks (static by default, --verify-gpu): each check target requires the system features its derivation in pkgs/checks.nix requires", () => {
  const v = { name: "torch-env-python313-cuda13_0-sm90-avx512bf16", system: "x86_64-linux", package: "torch-env", cuda: "13.0", file: "/x.nix", dependsOn: [], requiredSystemFeatures: ["big-parallel", "gccarch-cooperlake"] };
  const cpu = { ...v, name: "pytorch-python313-cpu-avx2", cuda: null, requiredSystemFeatures: ["big-parallel", "gccarch-haswell"] };
  const { targets } = checkTargets([v, cpu] as never, "/tmp/checks", true);
  const by = new Map(targets.map((x) => [x.name, x.requiredSystemFeatures]));
  // The GPU check: `cuda` (what NixOS's nix-required-mounts nvidia-gpu preset declares) and the ISA feature, not big-parallel.
  assert.equal(by.get(`check-gpu-${v.name}`), ["cuda", "gccarch-cooperlake"]);
  assert.equal(by.get(`check-static-${v.name}`), ["gccarch-cooperlake"]);
  assert.equal(by.get("check-static-pytorch-python313-cpu-avx2"), ["gccarch-haswell"]);
  assert.not.ok(by.has("check-gpu-pytorch-python313-cpu-avx2"), "no GPU check for a CPU-only variant");
  // An environment's static check comes after its members' static checks (its proof lists theirs: members.json), the
  // GPU check after the variant alone; a member outside the selection has no check to wait for.
  const env = { ...cpu, name: "torch-env-python313-cpu-avx2", package: "torch-env", dependsOn: ["pytorch-python313-cpu-avx2", "torchaudio-python313-cpu-avx2"] };
  const deps = new Map(checkTargets([v, cpu, env] as never, "/tmp/checks", true).targets.map((x) => [x.name, x.dependsOn]));
  assert.equal(deps.get(`check-static-${env.name}`), [env.name, "check-static-pytorch-python313-cpu-avx2"]);
  assert.equal(deps.get(`check-gpu-${v.name}`), [v.name]);
  // The Nix side says the same: gpuCheck requires [ "cuda" ] ++ isaFeatures, static isaFeatures (the gccarch- entries).
  const nix = readFileSync(resolve(import.meta.dirname, "../pkgs/checks.nix"), "utf8");
  assert.match(nix, `gpuCheck = check "gpu" "--gpu \${cuobjdump}" { requiredSystemFeatures = [ "${GPU_CHECK_FEATURE}" ] ++ isaFeatures; }`);
  assert.match(nix, "static = check \"static\" cuobjdump ((if isaFeatures == [ ] then { } else { requiredSystemFeatures = isaFeatures; }) // members);");
  assert.match(readFileSync(resolve(import.meta.dirname, "../pkgs/isa-features.nix"), "utf8"), 'builtins.substring 0 8 f == "gccarch-"');
});

test.run();
