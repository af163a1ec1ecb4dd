/**
 * install as a library call (generator/install/install.ts): planInstall returns the plan as data, and runInstall runs
 * it through the steps it is handed. Called directly here, in this process, no CLI:
 * - a dry-run plan for a recorded DGX Spark holds the recording's facts (system, CPUs, GPU and driver, each with its
 *   file), the route that host takes (nixglhost: DIR is the environment's withHostDriver output), the commands it
 *   would run and the build driver's arguments for that host; the checks only this machine answers say so; nothing is
 *   asked of the store and nothing is made at DIR;
 * - a pre-build check that fails stops everything before any build: a user's file at DIR (planInstall throws, the file
 *   is unchanged), and a check to fix (the plan lists it, Nix is not asked where the output is, and runInstall refuses
 *   the plan without calling the build or verify step);
 * - one source per fact (issue 55): a real install given a recording is refused, naming --dry-run, with nothing done
 *   (also through the CLI).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { runMain } from "./helpers/main.ts";
import type { BuildArgs } from "../generator/driver/build-options.ts";
import type { InstallSteps, VerifyRequest } from "../generator/install/install.ts";

/** The library, as the commands load it (one copy of errors.ts: see tests/helpers/main.ts). */
const lib = () => import("../generator/install/install.ts");

const SPARK = { cpuinfo: join(HOSTS, "dgx-spark/cpuinfo"), nvidiaSmi: join(HOSTS, "dgx-spark/nvidia-smi.txt") };
/** The recorded Spark's logical CPUs: its cpuinfo's processor blocks (10 Cortex-X925 + 10 Cortex-A725). */
const SPARK_CPUS = 20;
const H100 = { cpuinfo: join(HOSTS, "spr-h100/cpuinfo"), nvidiaSmi: join(HOSTS, "spr-h100/nvidia-smi.txt"), machine: "x86_64" };
const H100_ARGS = ["--cpuinfo", H100.cpuinfo, "--nvidia-smi", H100.nvidiaSmi, "--machine", H100.machine];

/** Run `f` with `env`'s variables set in this process (the checks read process.env), then put them back. */
async function withEnv<T>(env: NodeJS.ProcessEnv, f: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await f();
  } finally {
    for (const [k, v] of Object.entries(before)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** The error `f` rejects with (fails the test when it resolves). */
async function rejection(f: () => Promise<unknown>): Promise<Error> {
  try {
    await f();
  } catch (e) {
    return e as Error;
  }
  assert.unreachable("expected a rejection");
  throw new Error("unreachable");
}

/** Steps that record what runInstall asks of them. */
function recordingSteps(): InstallSteps & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    build: async (a: BuildArgs) => (calls.push(`build ${a.names?.join(" ")}`), 0),
    verify: async (r: VerifyRequest) => (calls.push(`verify ${r.name}`), { code: 0, report: null }),
    progress: (e) => void calls.push(`progress ${e.kind}`),
  };
}

test("planInstall for a recorded DGX Spark (dry run): the recording's facts, its route, the commands and the build's host, as data", async () => {
  const dir = join(tempDir("vm-install-plan-"), "torch-env");
  const { planInstall } = await lib();
  const plan = await planInstall({ ...SPARK, dryRun: true, dir, backend: "nix", logsDir: join(dir, "..", "logs") });
  assert.match(plan.variant.name, /^torch-env-python313-cuda\S+-sm121-armv9$/);
  assert.is(plan.chosen.chosenBy, `picked by detect for the recorded host (${SPARK.cpuinfo})`);
  assert.is(plan.chosen.system, "aarch64-linux");
  // The recording's facts, each with its file.
  assert.ok(plan.recorded);
  assert.is(plan.recorded!.system, "aarch64-linux");
  assert.is(plan.recorded!.cpus, SPARK_CPUS);
  assert.is(plan.recorded!.sources.cpuinfo, SPARK.cpuinfo);
  assert.is(plan.recorded!.sources.nvidiaSmi, SPARK.nvidiaSmi);
  assert.equal(plan.recorded!.gpus.map((g) => [g.capability, g.driver]), [["12.1", "580.95.05"]]);
  // The build driver plans for that host, not this machine.
  // The recording holds no meminfo: its memory is unknown, said (never this machine's).
  assert.equal(plan.build.forHost, {
    system: "aarch64-linux", cpus: SPARK_CPUS, label: `the recorded host (${SPARK.cpuinfo})`,
    memBytes: null, memSource: `not recorded (no ${SPARK.cpuinfo.replace(/cpuinfo$/, "meminfo")}; --mem GIB gives it)`,
  });
  assert.is(plan.build.dryRun, true);
  assert.equal(plan.build.names, [plan.variant.name]);
  // The route the Spark takes (its driver outside /run/opengl-driver/lib): DIR is the environment with wrapped Pythons.
  assert.is(plan.throughNixglhost, true);
  assert.is(plan.wrapped, true);
  assert.is(plan.file, join(ROOT, plan.variant.file));
  assert.equal(plan.commands, [
    { step: "link", argv: ["nix-build", plan.file, "-A", "withHostDriver", "-o", dir] },
    { step: "first-start", argv: [join(dir, "bin/python3"), "-c", "pass"] },
  ]);
  assert.equal(plan.places.map((p) => p.link), [dir]);
  // Each check says whose fact it is: the GPU driver the recording's, the rest this machine's.
  assert.match(plan.gpu!.detail, /^the recorded host \(\S+dgx-spark\/nvidia-smi\.txt\): nvidia-smi sees 1 GPU\(s\), driver 580\.95\.05/);
  for (const c of plan.checks.filter((x) => x.id !== "gpu-driver")) assert.match(c.detail, /^this machine/, `${c.id}: ${c.detail}`);
  // A dry run asks the store nothing and makes nothing.
  assert.is(plan.ready, null);
  assert.not.ok(existsSync(dir));
});

test("a pre-build check fails: a user's file at DIR stops planInstall, a check to fix stops runInstall; nothing is built, Nix is not asked", async () => {
  // A host whose Nix lacks the variant's system features and the CUDA cache (both stop install: a nix.conf fix).
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9" });
  const logs = join(h.dir, "logs");
  const options = { ...H100, hostRoot: h.root, backend: "nix" as const, logsDir: logs };
  const { planInstall, runInstall } = await lib();
  const file = join(h.dir, "mine");
  writeFileSync(file, "the user's own\n");
  const e = await withEnv(h.env, () => rejection(() => planInstall({ ...options, dir: file })));
  assert.is(e.name, "InstallPlaceError");
  assert.match(e.message, /^nothing was built: --dir \S+mine exists and is not a link install made/);
  assert.is(readFileSync(file, "utf8"), "the user's own\n");

  const dir = join(h.dir, "torch-env");
  const plan = await withEnv(h.env, () => planInstall({ ...options, dir }));
  assert.equal(plan.stops.map((s) => s.id).sort(), ["cuda-cache", "system-features"]);
  assert.is(plan.ready, null, "where the output is, is not asked while a check stops install");
  const steps = recordingSteps();
  const refused = await rejection(() => runInstall(plan, steps));
  assert.match(refused.message, /^2 check\(s\) to fix before anything is built/);
  assert.equal(steps.calls, []);
  assert.not.ok(existsSync(dir));
  assert.not.ok(existsSync(logs));
});

test("a real install for a recorded host is refused: it would build, link and verify on this machine; --dry-run named, nothing built or linked", async () => {
  const dir = join(tempDir("vm-install-plan-"), "torch-env");
  const { planInstall } = await lib();
  const e = await rejection(() => planInstall({ ...SPARK, dir, backend: "nix" }));
  assert.is(e.name, "InstallForOtherHostError");
  assert.match(e.message, /^install torch-env-\S+-sm121-armv9: --cpuinfo, --nvidia-smi describe another host, but install builds, links and verifies on this machine/);
  // The CLI: exit 2, both commands whole (the dry run here with the recording, the install on that host without it).
  const logs = join(dir, "..", "logs");
  for (const args of [H100_ARGS, ["--machine", "aarch64"]]) {
    const r = await runMain(["install", "pytorch-python313-cpu-avx2", "--dir", dir, "--backend", "nix", "--logs-dir", logs, ...args]);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.is(r.stdout, "");
    const flat = r.stderr.replace(/\s+/g, " ");
    assert.match(flat, /nothing was done/);
    assert.ok(flat.includes(`\`npx variant-matrix install --dry-run pytorch-python313-cpu-avx2 ${args.join(" ")}\``), flat);
    assert.ok(flat.includes("and install it on that host with `npx variant-matrix install pytorch-python313-cpu-avx2`"), flat);
  }
  assert.not.ok(existsSync(dir));
  assert.not.ok(existsSync(logs));
  // With --dry-run the same recording plans (exit 0).
  const dry = await runMain(["install", "pytorch-python313-cpu-avx2", "--dry-run", "--dir", dir, "--backend", "nix", "--logs-dir", logs, ...H100_ARGS]);
  assert.is(dry.status, 0, dry.stderr);
});

test.run();
