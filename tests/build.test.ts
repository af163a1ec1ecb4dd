/**
 * Build driver, end to end with real nix-build (offline: --nix-option substituters=) on the tiny derivations of
 * tests/fixtures/build-pkgs, driven as a real child process (`node bin/variant-matrix.js build`, the compiled launcher);
 * dry runs and refusals before any build (nothing built, signalled or killed) run in this process (runMain).
 *
 * Each test sets its own VM_BUILD_TEST_SALT, so its derivations are new to the store and "built" vs "cached" is
 * deterministic; result links, logs and reports go to a temporary directory.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readlinkSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BuildReport, VariantReport } from "../generator/driver/report.ts";
import { BUILD_MATRIX, buildTestContext, FIXTURES, latestReport as latestIn, runDriver, type BuildTestContext } from "./helpers/driver.ts";
import { STAND_IN_BUILDER_FEATURES } from "./helpers/nix.ts";
import { runMain } from "./helpers/main.ts";


const PT_ARM = "pytorch-python313-cuda12_8-sm121-armv9";
const TA_ARM = "torchaudio-python313-cuda12_8-sm121-armv9";
const PT_CPU = "pytorch-python313-cpu-avx2";
const TA_CPU = "torchaudio-python313-cpu-avx2";
const PT_FAIL = "pytorch-python313-cuda12_8-sm90-avx512";
const TA_FAIL = "torchaudio-python313-cuda12_8-sm90-avx512";
const PT_FLAKY = "pytorch-python312-cuda12_9-sm100-avx512bf16";

type Ctx = BuildTestContext;

/** A fresh temp dir, salt and environment (helpers/driver.ts buildTestContext). */
const ctx = (extraEnv: NodeJS.ProcessEnv = {}): Ctx => buildTestContext("vm-build-test-", extraEnv);

/**
 * The arguments of a build test's run: the fixtures, matrix and directories unless `args` names them, offline; and
 * `--no-verify` unless `args` asks for the checks (`--verify`): the fixtures' tiny derivations carry no `tests`, and
 * what these tests hold is the driver's, not the proof's (tests/build-proof.test.ts holds the checks by default).
 */
function driverArgs(c: Ctx, args: string[]): string[] {
  const defaults = (flag: string, value: string) => (args.includes(flag) ? [] : [flag, value]);
  return [
    ...(args.includes("--verify") || args.includes("--no-verify") ? [] : ["--no-verify"]),
    ...defaults("--pkgs-dir", FIXTURES),
    ...defaults("--matrix", BUILD_MATRIX),
    ...defaults("--out-dir", join(c.dir, "out")),
    "--logs-dir",
    join(c.dir, "logs"),
    "--nix-option",
    "substituters=",
    "--plain",
    ...args,
  ];
}

/** `build ARGS…` as a child process of the launcher (helpers/driver.ts runDriver). */
function driver(c: Ctx, args: string[], opts: { env?: NodeJS.ProcessEnv; onSpawn?: (pid: number) => void } = {}) {
  return runDriver(driverArgs(c, args), { ...c.env, ...opts.env }, opts.onSpawn);
}

/**
 * A dry run (or a refusal before any build) in this process (runMain), with the same arguments and the features
 * runDriver declares: nothing is built, signalled or killed, so no process matters. `env` is set for the call only.
 */
async function dryRun(c: Ctx, args: string[], env: Record<string, string> = {}) {
  const features = ["--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`];
  const r = await runMain(["build", ...features, ...driverArgs(c, args)], { env: { VM_BUILD_TEST_SALT: c.salt, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function byName(r: BuildReport): Map<string, VariantReport> {
  return new Map(r.variants.map((v) => [v.name, v]));
}

function latestReport(c: Ctx): BuildReport {
  return latestIn(join(c.dir, "logs"));
}

test("dry run: plan JSON with order, exact commands, nothing built; torchaudio pulls in its pytorch", async () => {
  const c = ctx();
  const r = await dryRun(c, [TA_ARM, "--backend", "nix", "--dry-run", "--json", "--jobs", "2"]);
  assert.is(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(
    plan.variants.map((v: { name: string }) => v.name),
    [PT_ARM, TA_ARM],
  );
  const [pt, ta] = plan.variants;
  assert.is(pt.selectedAs, "dependency");
  assert.is(ta.selectedAs, "requested");
  assert.equal(ta.dependsOn, [PT_ARM]);
  assert.equal(plan.waves, [[PT_ARM], [TA_ARM]]);
  // Each ready alone: the schedule gives each every compile slot of this machine (concurrency.ts startBuilds).
  assert.equal([pt.cores, ta.cores], [plan.slots, plan.slots]);
  assert.equal(pt.command.argv, [
    "nix-build",
    join(FIXTURES, `${PT_ARM}.nix`),
    "-o",
    join(c.dir, "out", `result-${PT_ARM}`),
    "--cores",
    String(pt.cores),
    "--option",
    "extra-system-features",
    STAND_IN_BUILDER_FEATURES[2]!,
    "--option",
    "substituters",
    "",
  ]);
  // The features a builder must declare, and who does: no builder of aarch64-linux is configured (this is x86_64).
  assert.equal(
    plan.systemFeatures.map((g: { system: string; features: string[]; variants: string[]; takenBy: string[] }) => [g.system, g.features, g.variants.length, g.takenBy]),
    [["aarch64-linux", ["big-parallel", "gccarch-armv9-a+i8mm"], 2, []]],
  );
  assert.is(pt.cached, false);
  assert.is(plan.jobs, 2);
  assert.ok(!existsSync(join(c.dir, "out")), "no result links");
  assert.ok(!existsSync(join(c.dir, "logs")), "no logs");
  // Nothing was built or linked: a second dry run still says "to build".
  const again = JSON.parse((await dryRun(c, [TA_ARM, "--backend", "nix", "--dry-run", "--json"])).stdout);
  assert.is(again.toBuild, 2);
});

test("selection errors: unknown name lists close names (exit 2); bad filter names the keys", async () => {
  const c = ctx();
  const r = await dryRun(c, ["pytorch-python313-cuda12_8-sm12-armv9", "--backend", "nix", "--dry-run"]);
  assert.is(r.code, 2);
  assert.match(r.stderr, /unknown variant "pytorch-python313-cuda12_8-sm12-armv9"; close names: pytorch-python313-cuda12_8-sm121-armv9/);
  const f = await dryRun(c, ["--filter", "gpu=121", "--backend", "nix", "--dry-run"]);
  assert.is(f.code, 2);
  assert.match(f.stderr, /allowed keys: package, python, cuda, sm, isa, system/);
  const flt = await dryRun(c, ["--filter", "isa=avx2", "--filter", "package=torchaudio", "--backend", "nix", "--dry-run", "--json"]);
  assert.equal(
    JSON.parse(flt.stdout).variants.map((v: { name: string }) => v.name),
    [PT_CPU, TA_CPU],
  );
});

test("real run, --jobs 2 --retries 1: parallel, dependency order, failure isolation, skipped dependents, retries; then resume and --force", async () => {
  const c = ctx();
  const reportFile = join(c.dir, "report-copy.json");
  const r = await driver(c, ["--backend", "nix", "--jobs", "2", "--retries", "1", "--report", reportFile]);
  assert.is(r.code, 1, r.stderr);
  const rep = latestReport(c);
  assert.equal(JSON.parse(readFileSync(reportFile, "utf8")), rep, "--report holds the same report");
  assert.is(rep.interrupted, false);
  assert.is(rep.backend, "nix");
  assert.is(rep.jobs, 2);
  for (const k of ["runId", "startedAt", "finishedAt", "backend", "jobs", "interrupted", "variants"])
    assert.ok(k in rep, `report has ${k}`);
  const v = byName(rep);
  assert.is(v.size, 7);
  for (const n of [PT_ARM, TA_ARM, PT_CPU, TA_CPU]) {
    assert.is(v.get(n)!.status, "built", n);
    assert.is(v.get(n)!.attempts, 1, n);
    assert.is(v.get(n)!.exitCode, 0);
    assert.ok(v.get(n)!.durationS >= 0.9, `${n} took its second`);
    assert.match(v.get(n)!.outPath!, new RegExp(`^/nix/store/[a-z0-9]{32}-${n}$`));
    assert.is(readlinkSync(join(c.dir, "out", `result-${n}`)), v.get(n)!.outPath);
  }
  // retries: the flaky one fails once, then builds
  assert.is(v.get(PT_FLAKY)!.status, "built");
  assert.is(v.get(PT_FLAKY)!.attempts, 2);
  // failure isolation: the failing one used all attempts; its torchaudio is skipped with the reason
  const failed = v.get(PT_FAIL)!;
  assert.is(failed.status, "failed");
  assert.is(failed.attempts, 2);
  assert.is(failed.exitCode, 100);
  assert.match(failed.reason!, /failed with exit code 3; last output: nvcc fatal: stand-in failure/);
  // Nix's structured log said which derivation failed and its last lines (driver/nix-log.ts), in the builder's order.
  assert.match(failed.failedDrv ?? "", new RegExp(`^/nix/store/[a-z0-9]{32}-${PT_FAIL}\\.drv$`), JSON.stringify(failed));
  assert.equal(failed.lastLines, [`building ${PT_FAIL} (salt ${c.salt})`, `nvcc fatal: stand-in failure of ${PT_FAIL}`]);
  assert.is(v.get(TA_FAIL)!.status, "skipped");
  assert.is(v.get(TA_FAIL)!.reason, `dependency ${PT_FAIL} failed`);
  assert.is(v.get(TA_FAIL)!.attempts, 0);
  // dependency order: each torchaudio started after its pytorch finished
  for (const [pt, ta] of [
    [PT_ARM, TA_ARM],
    [PT_CPU, TA_CPU],
  ])
    assert.ok(Date.parse(v.get(ta)!.startedAt!) >= Date.parse(v.get(pt)!.finishedAt!), `${ta} after ${pt}`);
  // Two at once, never more: the two builds that start first (both ready, two slots) run together, and no moment
  // holds three. This is concurrency, not speed: on a loaded machine the work after each build (its sizes, its
  // origin) holds the slot past `finishedAt`, so how much wall time parallelism saves is bench/schedule.ts's claim
  // (makespan against the same run's lower bound and a sequential loop, measured side by side), not a timed test's.
  const ran = rep.variants.filter((x) => x.startedAt).map((x) => [Date.parse(x.startedAt!), Date.parse(x.finishedAt!)] as const);
  const [first, second] = [...ran].sort((a, b) => a[0] - b[0]);
  assert.ok(second![0] < first![1], `the first two builds overlap: ${JSON.stringify(ran)}`);
  for (const [s] of ran) assert.ok(ran.filter(([a, b]) => a <= s && s < b).length <= 2, "at most 2 concurrent");
  // logs: one per variant that ran, stdout and stderr of the builder in it; latest points at the run
  assert.is(readlinkSync(join(c.dir, "logs/latest")), rep.runId);
  const logs = readdirSync(join(c.dir, "logs", rep.runId)).sort();
  assert.equal(logs, [...[PT_ARM, TA_ARM, PT_CPU, TA_CPU, PT_FAIL, PT_FLAKY].map((n) => `${n}.log`), "report.json"].sort());
  const flog = readFileSync(failed.log!, "utf8");
  assert.match(flog, /building pytorch-python313-cuda12_8-sm90-avx512 \(salt /); // builder stdout
  assert.match(flog, /nvcc fatal: stand-in failure/); // builder stderr
  assert.match(flog, /=== attempt 2\/2/);
  // The log is Nix's human text (nix-build ran with --log-format internal-json, rendered), not its records.
  assert.match(flog, /"--log-format","internal-json"/, "the attempt's header shows the command that ran");
  assert.not.match(flog, /^@nix /m);
  assert.match(flog, new RegExp(`^building '/nix/store/[a-z0-9]{32}-${PT_FAIL}\\.drv'\\.\\.\\.$`, "m"));
  assert.match(flog, /^error: builder for '\/nix\/store\/[a-z0-9]{32}-pytorch-python313-cuda12_8-sm90-avx512\.drv' failed with exit code 3$/m);
  assert.match(r.stdout, /VARIANT\s+STATUS\s+TIME\s+TRIES\s+CLOSURE\s+WHERE\s+REASON/);
  assert.match(r.stdout, /5 built, 0 cached, 1 failed, 1 skipped/);

  // Resume after fixing the failure: only the failed and skipped variants are built; the rest is cached.
  const r2 = await driver(c, ["--backend", "nix", "--jobs", "2"], { env: { VM_BUILD_TEST_FAIL: "0" } });
  assert.is(r2.code, 0, r2.stderr + r2.stdout);
  const v2 = byName(latestReport(c));
  for (const n of [PT_ARM, TA_ARM, PT_CPU, TA_CPU, PT_FLAKY]) {
    assert.is(v2.get(n)!.status, "cached", n);
    assert.is(v2.get(n)!.attempts, 0);
    assert.is(v2.get(n)!.outPath, v.get(n)!.outPath);
  }
  assert.is(v2.get(PT_FAIL)!.status, "built");
  assert.is(v2.get(TA_FAIL)!.status, "built");
  assert.equal(readdirSync(join(c.dir, "logs/latest")).sort(), [`${PT_FAIL}.log`, "report.json", `${TA_FAIL}.log`].sort());

  // --force: the build command runs for every selected variant (nothing reported cached)
  const r3 = await driver(c, [PT_CPU, TA_CPU, "--backend", "nix", "--force"]);
  assert.is(r3.code, 0, r3.stderr);
  const v3 = byName(latestReport(c));
  assert.equal(
    [...v3.values()].map((x) => [x.name, x.status, x.attempts]),
    [
      [PT_CPU, "built", 1],
      [TA_CPU, "built", 1],
    ],
  );
  assert.ok(existsSync(join(c.dir, "logs/latest", `${TA_CPU}.log`)));
});

test("--fail-fast: nothing new starts after a failure", async () => {
  const c = ctx();
  const r = await driver(c, [PT_FAIL, TA_FAIL, PT_CPU, TA_CPU, "--backend", "nix", "--jobs", "1", "--fail-fast"]);
  assert.is(r.code, 1, r.stderr);
  const v = byName(latestReport(c));
  // PT_FAIL and PT_CPU tie on priority; whichever ran first, the run stopped at the failure.
  assert.is(v.get(PT_FAIL)!.status, "failed");
  assert.is(v.get(TA_FAIL)!.status, "skipped");
  assert.is(v.get(TA_CPU)!.status, "skipped");
  assert.match(v.get(TA_CPU)!.reason!, /fail-fast|not started/);
});

test("interrupt: SIGINT to the build driver ends the builds (and their builders), writes interrupted:true, exits 130", async () => {
  // Builds of 600 s, interrupted once both run: an exit long before they would end shows they were stopped, with a
  // margin a loaded machine meets (the wait for them to start is bounded, not timed).
  const c = ctx({ VM_BUILD_TEST_SLEEP: "600" });
  let pid = 0;
  const started = Date.now();
  const done = driver(c, [PT_ARM, TA_ARM, PT_CPU, "--backend", "nix", "--jobs", "2"], { onSpawn: (p) => (pid = p) });
  // wait until both builders are running (their logs say "building …")
  const runDir = () => join(c.dir, "logs/latest");
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const logs = existsSync(runDir()) ? readdirSync(runDir()).filter((f) => f.endsWith(".log")) : [];
    const busy = logs.filter((f) => /building .*\(salt/.test(readFileSync(join(runDir(), f), "utf8")));
    if (busy.length === 2) break;
    // A loaded 2-core machine takes over a minute to start the driver (start-up, evaluation, preflight).
    assert.ok(Date.now() - started < 300_000, "builds started");
  }
  const killed = Date.now();
  process.kill(pid, "SIGINT");
  const r = await done;
  assert.is(r.code, 130, r.stderr);
  assert.ok(Date.now() - killed < 300_000, `did not wait for the 600 s builds (exited ${Date.now() - killed} ms after SIGINT)`);
  const rep = latestReport(c);
  assert.is(rep.interrupted, true);
  assert.is(rep.exitCode, 130);
  const v = byName(rep);
  assert.is(v.get(PT_ARM)!.status, "failed");
  assert.match(v.get(PT_ARM)!.reason!, /interrupted \(SIGINT\)/);
  assert.is(v.get(PT_CPU)!.status, "failed");
  assert.is(v.get(TA_ARM)!.status, "skipped");
  assert.match(v.get(TA_ARM)!.reason!, /interrupted before start/);
  // no builder of this test is left running (nix-build ended its builder on SIGTERM)
  await new Promise((res) => setTimeout(res, 300));
  const ps = await new Promise<string>((res) => {
    const p = spawn("ps", ["-eww", "-o", "args"]);
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("close", () => res(out));
  });
  assert.not.match(ps, new RegExp(`salt ${c.salt}`), "builders ended");
  // the next run resumes: the interrupted variants are still to build
  const plan = JSON.parse((await dryRun(c, [PT_ARM, TA_ARM, PT_CPU, "--backend", "nix", "--dry-run", "--json"])).stdout);
  assert.is(plan.toBuild, 3);
});

test("flox backend (through a stand-in `flox` on PATH): auto picks it, runs `flox build NAME` in the root", async () => {
  const c = ctx();
  const root = join(c.dir, "project");
  mkdirSync(join(root, ".flox/pkgs"), { recursive: true });
  for (const n of [PT_CPU, TA_CPU]) cpSync(join(FIXTURES, `${n}.nix`), join(root, ".flox/pkgs", `${n}.nix`));
  const bin = join(c.dir, "bin");
  mkdirSync(bin);
  const calls = join(c.dir, "flox-calls.txt");
  // STAND-IN for flox (no flox binary here): records its argv and cwd, then builds like `flox build` would.
  writeFileSync(
    join(bin, "flox"),
    `#!/bin/sh
# flox stand-in for tests/build.test.ts: answers --version (build's preflight asks it), records the argv of every
# other call, builds .flox/pkgs/NAME.nix to ./result-NAME.
[ "$1" = --version ] && { echo 1.7.0; exit 0; }
echo "cwd=$(pwd) argv=$*" >> "${calls}"
[ "$1" = build ] || exit 64
exec nix-build ".flox/pkgs/$2.nix" -o "result-$2" --option substituters ''
`,
    { mode: 0o755 },
  );
  const env = { PATH: `${bin}:${process.env.PATH}` };
  const base = ["--root", root, "--pkgs-dir", join(root, ".flox/pkgs"), "--out-dir", root];
  const dry = await dryRun(c, [...base, TA_CPU, "--dry-run", "--json"], env);
  assert.is(dry.code, 0, dry.stderr);
  const plan = JSON.parse(dry.stdout);
  assert.is(plan.backend, "flox");
  assert.equal(
    plan.variants.map((v: { command: unknown }) => v.command),
    [
      { argv: ["flox", "build", PT_CPU], cwd: root },
      { argv: ["flox", "build", TA_CPU], cwd: root },
    ],
  );
  assert.ok(!existsSync(calls), "dry run ran nothing");
  const r = await driver(c, [...base, TA_CPU], { env });
  assert.is(r.code, 0, r.stderr);
  assert.equal(readFileSync(calls, "utf8").trim().split("\n"), [
    `cwd=${root} argv=build ${PT_CPU}`,
    `cwd=${root} argv=build ${TA_CPU}`,
  ]);
  const rep = latestReport(c);
  assert.is(rep.backend, "flox");
  assert.is(readlinkSync(join(root, `result-${TA_CPU}`)), byName(rep).get(TA_CPU)!.outPath);
  // what flox cannot take is refused, not silently dropped
  const bad = await dryRun(c, [...base, TA_CPU, "--builders", "ssh://x", "--dry-run"], env);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--builders, --max-jobs, --substituter and --cores pass through to Nix with --backend nix only/);
});



test("a failure's reason is the builder's own last line, not Nix's substituter warnings", async () => {
  const c = ctx();
  // An unreachable binary cache: Nix warns "unable to download '…/nix-cache-info'" before it builds.
  const r = await driver(c, [PT_FAIL, "--backend", "nix", "--nix-option", "substituters=http://127.0.0.1:9"]);
  assert.is(r.code, 1, r.stderr);
  const failed = byName(latestReport(c)).get(PT_FAIL)!;
  assert.match(readFileSync(failed.log!, "utf8"), /warning: unable to download/, "the log still holds Nix's warning");
  assert.match(failed.reason!, /last output: nvcc fatal: stand-in failure/);
  assert.not.match(failed.reason!, /nix-cache-info/);
});

test("build --verify: each variant's static check (its file's tests.static) runs after it; a broken promise fails its check and its variant, not the others", async () => {
  const c = ctx();
  // A pkgs dir whose two variants carry checks as pkgs/matrix.nix gives them: the pytorch check passes, the
  // torchaudio one fails the way pkgs/checks.nix does (the comparison's last line, exit 1).
  const pkgsDir = join(c.dir, "pkgs-with-checks");
  mkdirSync(pkgsDir);
  const drv = (name: string, script: string) =>
    `derivation { name = ${JSON.stringify(name)}; system = builtins.currentSystem; builder = "/bin/sh"; salt = builtins.getEnv "VM_BUILD_TEST_SALT"; args = [ "-c" ${JSON.stringify(script)} ]; }`;
  for (const [name, check] of [
    [PT_CPU, 'echo "✓ torch version: 2.12.0"; echo ok > $out'],
    [TA_CPU, 'echo "✗ torch version: expected 2.12.0, found 2.11.0"; echo "a promise does not hold"; exit 1'],
  ] as const)
    writeFileSync(
      join(pkgsDir, `${name}.nix`),
      `{ ... }: (${drv(name, "echo built > $out")}) // { tests.static = ${drv(`${name}-check-static`, check)}; }\n`,
    );
  const r = await driver(c, [TA_CPU, "--backend", "nix", "--verify", "--pkgs-dir", pkgsDir]);
  assert.is(r.code, 1, r.stderr);
  const v = byName(latestReport(c));
  assert.is(v.get(PT_CPU)!.status, "built");
  assert.is(v.get(PT_CPU)!.proof, v.get(`check-static-${PT_CPU}`)!.outPath);
  // The variant whose check failed: its output is built, but the variant fails with the broken promise.
  assert.is(v.get(TA_CPU)!.status, "failed");
  assert.ok(v.get(TA_CPU)!.outPath);
  assert.is(v.get(TA_CPU)!.reason, "a promise does not hold: ✗ torch version: expected 2.12.0, found 2.11.0");
  assert.is(v.get(TA_CPU)!.proof, null);
  assert.is(v.get(`check-static-${PT_CPU}`)!.status, "built");
  const bad = v.get(`check-static-${TA_CPU}`)!;
  assert.is(bad.status, "failed");
  assert.match(readFileSync(bad.log!, "utf8"), /✗ torch version: expected 2\.12\.0, found 2\.11\.0/);
  assert.equal(bad.dependsOn, [TA_CPU]);
  assert.equal(bad.command.slice(0, 1), ["nix-build"]);
  assert.ok(Date.parse(bad.startedAt!) >= Date.parse(v.get(TA_CPU)!.finishedAt!), "the check runs after its variant");
});

test.run();
