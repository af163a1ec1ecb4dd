/**
 * The build driver when something other than a build goes wrong, end to end with the real CLI as a child process and
 * real nix-build (offline) on tiny stand-in derivations:
 * - its logs' disk fills up while a build runs: every build it started is ended, the report is written where it can
 *   be (or stderr says where and why not), and it exits 1 with one error line, no stack trace;
 * - an earlier report.json of another shape (`null`, `{"variants":"x"}`) is left out with one warning;
 * - a dry run of a selection holding a named environment prints no NaN, as text or JSON.
 * Dry runs (nothing built, signalled or killed) run in this process (runMain); builds run the launcher.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BuildReport } from "../generator/driver/report.ts";
import { ERROR_PREFIX } from "../generator/errors.ts";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { BUILD_MATRIX, FIXTURES, newSalt, runDriver } from "./helpers/driver.ts";
import { STAND_IN_BUILDER_FEATURES } from "./helpers/nix.ts";

const PT_ARM = "pytorch-python313-cuda12_8-sm121-armv9";
const PT_CPU = "pytorch-python313-cpu-avx2";
const TA_CPU = "torchaudio-python313-cpu-avx2";

/** A fresh temp dir and the environment of a run whose stand-in derivations are new to the store (own salt). */
function ctx(extraEnv: NodeJS.ProcessEnv = {}) {
  const dir = tempDir("vm-build-errors-");
  chmodSync(dir, 0o755);
  const salt = newSalt();
  const env: NodeJS.ProcessEnv = { ...process.env, VM_BUILD_TEST_SALT: salt, ...extraEnv };
  return { dir, salt, env };
}

/** `build ARGS…` offline against `pkgsDir` (default: the stand-ins of tests/fixtures/build-pkgs). */
function driver(c: ReturnType<typeof ctx>, logs: string, args: string[], pkgsDir = FIXTURES) {
  return runDriver(
    // The fixtures' tiny derivations carry no checks: these tests hold the driver's errors, not the proofs.
    ["--no-verify", "--pkgs-dir", pkgsDir, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--logs-dir", logs, "--nix-option", "substituters=", "--plain", ...args],
    c.env,
  );
}

/**
 * `build ARGS…` in this process (runMain), with the features runDriver declares: for dry runs, where no process
 * matters (nothing is built, signalled or killed).
 */
function dryRunInProcess(args: string[]) {
  return runMain(["build", "--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`, ...args]).then((r) => ({ code: r.status, stdout: r.stdout, stderr: r.stderr }));
}

/** Every process's command line (to find builds left running). */
function processes(): string {
  return spawnSync("ps", ["-eww", "-o", "pid=,args="], { encoding: "utf8" }).stdout;
}

/** The lines of `stderr` that are error lines (ERROR_PREFIX), and those that look like a stack trace. */
function errorLines(stderr: string) {
  const lines = stderr.split("\n");
  return { errors: lines.filter((l) => l.startsWith(ERROR_PREFIX)), stack: lines.filter((l) => /^\s+at .+[(:]\d+/.test(l) || /^\w*Error: /.test(l)) };
}

/**
 * A small tmpfs at `dir` (a real filesystem that fills up: ENOSPC as a full disk gives it), unmounted by the
 * returned function. Mounting needs root with CAP_SYS_ADMIN, which `.ci/run` has (it installs with apt-get).
 */
function mountTmpfs(dir: string, size: string): () => void {
  mkdirSync(dir, { recursive: true });
  const m = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=1777`, "tmpfs", dir], { encoding: "utf8" });
  assert.is(m.status, 0, `this test mounts a tmpfs (needs root with CAP_SYS_ADMIN): ${m.stderr}`);
  const umount = () => void spawnSync("umount", ["-l", dir]);
  // A failed assertion or a signal must not leave the mount behind (the temp dir's removal would fail on it).
  process.once("exit", umount);
  return umount;
}

test("logs on a full disk while a build runs: the running build is ended, the report goes where it can, one error line, exit 1", async () => {
  const c = ctx();
  const logs = join(c.dir, "logs");
  const umount = mountTmpfs(logs, "1m");
  try {
    // Three stand-ins named like variants of the build matrix: PT_ARM builds for three minutes; PT_CPU fills the logs'
    // disk (its builder writes there: the daemon runs builds unsandboxed here, as tests/fixtures/build-pkgs' flaky
    // one relies on) and succeeds, so its dependent TA_CPU then starts on a full disk while PT_ARM still runs.
    const pkgs = join(c.dir, "pkgs");
    mkdirSync(pkgs);
    const drv = (name: string, script: string) =>
      `{ ... }: derivation { name = ${JSON.stringify(name)}; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; ` +
      `salt = builtins.getEnv "VM_BUILD_TEST_SALT"; fill = builtins.getEnv "VM_BUILD_TEST_FILL"; args = [ "-c" ${JSON.stringify(script)} ]; }\n`;
    writeFileSync(join(pkgs, `${PT_ARM}.nix`), drv(PT_ARM, `echo "building ${PT_ARM} (salt $salt)"; sleep 600; echo ok > $out`));
    writeFileSync(
      join(pkgs, `${PT_CPU}.nix`),
      drv(PT_CPU, `echo "building ${PT_CPU} (salt $salt)"; sleep 2; cat /dev/zero > "$fill/filler" 2>/dev/null; echo ok > $out`),
    );
    writeFileSync(join(pkgs, `${TA_CPU}.nix`), drv(TA_CPU, `echo "building ${TA_CPU} (salt $salt)"; echo ok > $out`));
    c.env.VM_BUILD_TEST_FILL = logs;
    const reportFile = join(c.dir, "elsewhere", "report.json");
    const t0 = Date.now();
    const r = await driver(c, logs, [PT_ARM, TA_CPU, "--backend", "nix", "--jobs", "2", "--kill-grace", "2", "--report", reportFile], pkgs);
    const took = (Date.now() - t0) / 1000;
    assert.is(r.code, 1, r.stderr + r.stdout);
    // (A margin a loaded 2-core machine meets: start-up and evaluation, over a minute there, are in `took`; the build
    // alone is 600 s.)
    assert.ok(took < 300, `ended the ten-minute build instead of waiting for it (${took.toFixed(1)} s)`);

    // One error line, no stack trace; it says what failed, on which file, what was ended, and where the report is.
    const { errors, stack } = errorLines(r.stderr);
    assert.is(errors.length, 1, r.stderr);
    assert.equal(stack, [], r.stderr);
    const line = errors[0]!;
    assert.match(line, new RegExp(`${TA_CPU}\\.log: ENOSPC: no space left on device`));
    assert.match(line, new RegExp(`ended 1 running build\\(s\\) \\(${PT_ARM}\\)`));
    assert.match(line, /report not written to \S+\/report\.json: ENOSPC/);
    // shortPath prints the report's path relative to the working directory when that is shorter (a checkout under /tmp).
    assert.match(line, new RegExp(`report: \\S*${basename(c.dir).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/elsewhere/report\\.json`), line);

    // No build of this run is left: neither nix-build (its argv names the out link under this test's directory) nor
    // the builder (its argv holds the salt).
    await new Promise((res) => setTimeout(res, 500));
    const ps = processes();
    assert.not.match(ps, new RegExp(`salt ${c.salt}`), "builders ended");
    assert.not.ok(ps.split("\n").some((l) => l.includes("nix-build") && l.includes(c.dir)), "nix-build ended");

    // The report, on the other disk: the error, the ended build, the built one, the one that could not start.
    const rep = JSON.parse(readFileSync(reportFile, "utf8")) as BuildReport;
    assert.is(rep.exitCode, 1);
    assert.is(rep.interrupted, false);
    assert.match(rep.driverError!, /ENOSPC/);
    const v = new Map(rep.variants.map((x) => [x.name, x]));
    assert.is(v.get(PT_CPU)!.status, "built");
    assert.is(v.get(PT_ARM)!.status, "failed");
    assert.match(v.get(PT_ARM)!.reason!, /^stopped: the driver failed \(writing log .*ENOSPC/);
    assert.is(v.get(TA_CPU)!.status, "failed");
    assert.match(v.get(TA_CPU)!.reason!, /^not started: the driver failed \(writing log .*ENOSPC: no space left on device, write\)$/);
    assert.is(v.get(TA_CPU)!.attempts, 0, "its command never ran");
    // The summary still closes the run, and nothing half-written is left on the full disk.
    assert.match(r.stdout, /1 built, 0 cached, 2 failed, 0 skipped .*\(stopped by an error of the driver\); exit 1/);
    const runDir = join(logs, rep.runId);
    assert.equal(readdirSync(runDir).filter((f) => !f.endsWith(".log")), [], "no report.json.*.tmp");
  } finally {
    umount();
  }
});

test("a log directory that cannot be created: no build starts, the report goes to --report, one error line, exit 1", async () => {
  const c = ctx();
  // A file where a directory of the path should be: mkdir fails (ENOTDIR) for root as for anyone.
  writeFileSync(join(c.dir, "not-a-dir"), "");
  const logs = join(c.dir, "not-a-dir", "logs");
  const reportFile = join(c.dir, "report.json");
  const r = await driver(c, logs, [PT_CPU, "--backend", "nix", "--report", reportFile]);
  assert.is(r.code, 1, r.stderr);
  const { errors, stack } = errorLines(r.stderr);
  assert.is(errors.length, 1, r.stderr);
  assert.equal(stack, []);
  assert.match(errors[0]!, /creating the log directory \S+: ENOTDIR: not a directory;/, "the path once, not Node's copy of it");
  assert.match(errors[0]!, /no build was running/);
  assert.match(errors[0]!, /report not written to .*report\.json: ENOTDIR/);
  const rep = JSON.parse(readFileSync(reportFile, "utf8")) as BuildReport;
  assert.match(rep.driverError!, /ENOTDIR/);
  assert.equal(rep.variants.map((x) => [x.name, x.status, x.attempts]), [[PT_CPU, "skipped", 0]]);
  assert.match(rep.variants[0]!.reason!, /^not started: the driver failed/);
  assert.not.ok(existsSync(join(c.dir, "out", `result-${PT_CPU}`)), "nothing was built");
});

test("a read-only logs directory: said as not writable (EROFS), not as a missing directory (ENOENT); no build starts, exit 1", async () => {
  const c = ctx();
  const logs = join(c.dir, "logs");
  mkdirSync(logs);
  // A real read-only filesystem: the directory bind-mounted read-only over itself.
  for (const a of [["--bind", logs, logs], ["-o", "remount,bind,ro", logs]]) {
    const m = spawnSync("mount", a, { encoding: "utf8" });
    assert.is(m.status, 0, `this test mounts (needs root with CAP_SYS_ADMIN): ${m.stderr}`);
  }
  const umount = () => void spawnSync("umount", ["-l", logs]);
  process.once("exit", umount);
  try {
    for (const at of [logs, join(logs, "sub")]) {
      const reportFile = join(c.dir, "report.json");
      const r = await driver(c, at, [PT_CPU, "--backend", "nix", "--report", reportFile]);
      assert.is(r.code, 1, r.stderr);
      const { errors, stack } = errorLines(r.stderr);
      assert.is(errors.length, 1, r.stderr);
      assert.equal(stack, []);
      assert.match(errors[0]!, `creating the log directory ${at}/`);
      assert.match(errors[0]!, `(the logs directory ${at} is not writable, on a read-only filesystem: give --logs-dir a writable directory): EROFS: read-only file system;`);
      assert.not.match(errors[0]!, /ENOENT/);
      assert.match(errors[0]!, /report not written to \S+\/report\.json: EROFS/);
      assert.is(JSON.parse(readFileSync(reportFile, "utf8")).variants[0].status, "skipped");
    }
  } finally {
    umount();
  }
});

test("a bug of the build driver (its status sink throws) while a build runs: the build's process group is ended, the run still reports", async () => {
  const { runBuilds } = await import("../generator/driver/run.ts");
  const { makePlan } = await import("../generator/model/plan.ts");
  const c = ctx();
  // A stand-in `flox` (a real child process): `flox build NAME` writes its pid, then sleeps the seconds in NAME.sleep.
  const bin = join(c.dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "flox"), `#!/bin/sh\necho $$ > "${c.dir}/$2.pid"\nexec sleep "$(cat "${c.dir}/$2.sleep" 2>/dev/null || echo 0)"\n`, { mode: 0o755 });
  writeFileSync(join(c.dir, `${PT_ARM}.sleep`), "600");
  writeFileSync(join(c.dir, `${PT_CPU}.sleep`), "1");
  const target = (name: string, dependsOn: string[] = []) => ({
    name, package: name.startsWith("torchaudio") ? "torchaudio" : "pytorch", dependsOn, file: join(c.dir, `${name}.nix`), system: "x86_64-linux" as const,
    python: "3.13", cuda: null, sm: null, isa: "avx2", torchVersion: "2.11.0", cudaCapabilitiesForPackageSet: false, nixpkgsKey: "k",
  });
  const plan = makePlan([target(PT_ARM), target(PT_CPU), target(TA_CPU, [PT_CPU])]);
  const status = {
    event(e: { type: string; name?: string }) {
      if (e.type === "start" && e.name === TA_CPU) throw new TypeError("the sink broke");
    },
    close() {},
  };
  const logsRoot = join(c.dir, "logs");
  const t0 = Date.now();
  const res = await runBuilds({
    plan, why: new Map(), jobs: 2, retries: 0, failFast: false, cached: new Map(), logsRoot, runId: "run-1", status, killGraceMs: 1000, handleSignals: false,
    backend: { backend: "flox", root: c.dir, outDir: c.dir },
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  assert.ok(Date.now() - t0 < 300_000, "did not wait for the ten-minute build");
  const { report } = res;
  assert.is(report.driverError, "TypeError: the sink broke");
  assert.is(report.exitCode, 1);
  assert.equal(res.ended, [PT_ARM]);
  const v = new Map(report.variants.map((x) => [x.name, x]));
  assert.equal([v.get(PT_CPU)!.status, v.get(PT_ARM)!.status], ["built", "failed"]);
  assert.is(v.get(PT_ARM)!.reason, "stopped: the driver failed (TypeError: the sink broke)");
  assert.is(v.get(TA_CPU)!.attempts, 0, "nothing is started once the run stops");
  // The long build's process is gone, and the report is on disk.
  const pid = Number(readFileSync(join(c.dir, `${PT_ARM}.pid`), "utf8"));
  assert.throws(() => process.kill(pid, 0), /ESRCH/, "the build's process was ended");
  assert.equal(JSON.parse(readFileSync(join(logsRoot, "run-1", "report.json"), "utf8")).driverError, "TypeError: the sink broke");
  assert.equal(res.unwritten, []);
});

test("an earlier report.json of another shape (null, {\"variants\":\"x\"}, not JSON) is left out with one warning; dry run and build work", async () => {
  const c = ctx();
  const logs = join(c.dir, "logs");
  const earlier = (run: string, text: string) => {
    mkdirSync(join(logs, run), { recursive: true });
    writeFileSync(join(logs, run, "report.json"), text);
  };
  earlier("20260101T000000Z-0001", "null");
  earlier("20260101T000000Z-0002", '{"variants":"x"}');
  earlier("20260101T000000Z-0003", '{"variants":[');
  // A good one beside them still gives its estimate.
  earlier("20260101T000000Z-0004", JSON.stringify({ variants: [{ name: PT_CPU, status: "built", origin: "built", durationS: 4321 }] }));
  const warnings = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warning: ") && l.includes("earlier report"));
  for (const json of [false, true]) {
    const r = await dryRunInProcess(["--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--logs-dir", logs, "--nix-option", "substituters=", "--plain", TA_CPU, "--backend", "nix", "--dry-run", ...(json ? ["--json"] : [])]);
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stderr, /TypeError|\n\s+at /);
    const w = warnings(r.stderr);
    assert.is(w.length, 1, r.stderr);
    assert.match(w[0]!, /^warning: 3 earlier reports were left out of the build history/);
    assert.match(w[0]!, /20260101T000000Z-0001\/report\.json \(null, not an object\)/);
    assert.match(w[0]!, /20260101T000000Z-0002\/report\.json \(variants is a string, not a list\)/);
    assert.match(w[0]!, /20260101T000000Z-0003\/report\.json \(not JSON/);
    if (json) {
      const pt = JSON.parse(r.stdout).variants.find((x: { name: string }) => x.name === PT_CPU);
      assert.equal([pt.estimateS, pt.estimateSource], [4321, "history"]);
    }
  }
  // A real build reads the same history and goes on.
  const b = await driver(c, logs, [PT_CPU, "--backend", "nix"]);
  assert.is(b.code, 0, b.stderr);
  assert.is(warnings(b.stderr).length, 1);
});

test("no NaN in a dry run of a selection holding a named environment, as text or JSON", async () => {
  const c = ctx();
  const matrix = writeMatrix(c.dir, {
    releases: [{ torch: "2.11.0", nixpkgs: "549bd84d6279f9852cae6225e372cc67fb91a4c1" }],
    python: ["3.13"],
    cuda: ["12.8"],
    gpus: ["90"],
    isas: ["avx2"],
    cpuOnly: true,
    environments: { llm: ["peft", "einops"] },
  });
  const names = (JSON.parse((await runMain(["list", "--json", "--matrix", matrix])).stdout) as { name: string; package: string }[]).map((v) => v.name);
  const env = names.find((n) => n.startsWith("llm-env-") && n.includes("cuda"))!;
  assert.ok(env, names.join(" "));
  // A dry run evaluates nothing: files named like the variants are enough for the selection.
  const pkgs = join(c.dir, "pkgs");
  mkdirSync(pkgs);
  for (const n of names) writeFileSync(join(pkgs, `${n}.nix`), "# stand-in: a dry run does not read it\n");
  const args = [env, "--pkgs-dir", pkgs, "--matrix", matrix, "--out-dir", join(c.dir, "out"), "--logs-dir", join(c.dir, "logs"), "--backend", "nix", "--dry-run", "--plain"];
  const text = await dryRunInProcess(args);
  assert.is(text.code, 0, text.stderr);
  assert.not.match(text.stdout + text.stderr, /NaN/);
  // The headline (issue 53): the wait until the last variant is ready, with the bases of its estimates.
  assert.match(text.stdout, /wait \d+h\d\dm until the last variant is ready/);
  assert.match(text.stdout, /estimates: pytorch model: CUDA, 1 capability, \d+ cores?; others catalog figures/, text.stdout);
  assert.match(text.stdout, new RegExp(`${env} {2}est 1m00s, to build`));
  const json = await dryRunInProcess([...args, "--json"]);
  assert.is(json.code, 0, json.stderr);
  assert.not.match(json.stdout + json.stderr, /NaN/);
  const plan = JSON.parse(json.stdout);
  assert.ok(Number.isFinite(plan.estimatedMakespanS) && plan.estimatedMakespanS > 0, String(plan.estimatedMakespanS));
  assert.is(plan.estimatedMakespanUnknown, null);
  assert.ok(plan.variants.length >= 4, "the environment pulls in its torch stack");
  for (const v of plan.variants) assert.ok(Number.isFinite(v.estimateS) && Number.isFinite(v.priorityS), `${v.name}: ${v.estimateS}`);
  const row = plan.variants.find((v: { name: string }) => v.name === env);
  assert.equal([row.estimateS, row.estimateSource, row.estimateUnknown], [60, "default", null]);
});

test.run();
