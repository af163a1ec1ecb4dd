// flox as it really runs, through a STAND-IN `flox` (tests/fixtures/stand-in-flox: no flox binary here)
// that does what flox/flox's source does: callPackage over flox's nixpkgs + catalogs + every .flox/pkgs package, git-
// tracked files only, `flox build A B` one after another stopping at the first failure, result-NAME, result-NAME-OUTPUT
// and result-NAME-log links. Real nix-build and nix-instantiate; the toy derivations of tests/fixtures/build-pkgs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WRAPPER_NIXPKGS_ARG } from "../generator/generate/render/index.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { BUILD_MATRIX, FIXTURES, latestReport, newSalt, runDriver } from "./helpers/driver.ts";
import { nixPath } from "./helpers/nix.ts";

const STAND_IN_FLOX = join(ROOT, "tests/fixtures/stand-in-flox");
const PT_CPU = "pytorch-python313-cpu-avx2";
const TA_CPU = "torchaudio-python313-cpu-avx2";
const PT_ARM = "pytorch-python313-cuda12_8-sm121-armv9";
const PT_FAIL = "pytorch-python313-cuda12_8-sm90-avx512";

/** The formal arguments flox's callPackage would fill for each `.flox/pkgs` package of `pkgsDir` (scope.nix). */
function autoArgs(pkgsDir: string): Record<string, string[]> {
  const expr = `let s = import ${nixPath(join(STAND_IN_FLOX, "scope.nix"))} { pkgsDir = ${nixPath(pkgsDir)}; }; in builtins.listToAttrs (map (n: { name = n; value = s.autoArgs n; }) s.names)`;
  return JSON.parse(execFileSync("nix-instantiate", ["--eval", "--strict", "--json", "-E", expr], { encoding: "utf8" }));
}

test("no generated wrapper's argument is filled by flox's scope, even beside a hand-written .flox/pkgs/nixpkgs.nix; the old `nixpkgs` argument was", () => {
  const dir = join(tempDir("vm-flox-scope-"), ".flox/pkgs");
  cpSync(join(ROOT, ".flox/pkgs"), dir, { recursive: true });
  const wrappers = readdirSync(dir).filter((f) => f.endsWith(".nix")).map((f) => f.slice(0, -4));
  assert.ok(wrappers.length > 100, `${wrappers.length} generated wrappers`);
  // A user's own package called `nixpkgs`, and one called like the wrappers' argument would be (not generated).
  writeFileSync(join(dir, "nixpkgs.nix"), '{ }: derivation { name = "users-own"; system = "x"; builder = "/bin/sh"; }\n');
  writeFileSync(join(dir, "old-style.nix"), `{ nixpkgs ? null }:\n\n(import ../../pkgs/matrix.nix { inherit nixpkgs; }).package "${PT_CPU}"\n`);
  const args = autoArgs(dir);
  for (const w of wrappers) assert.equal(args[w], [], `${w}: callPackage fills nothing`);
  assert.equal(args["old-style"], ["nixpkgs"], "the previous wrapper's argument would have been filled with the user's package");
  const head = readFileSync(join(dir, `${PT_CPU}.nix`), "utf8");
  assert.match(head, new RegExp(`\\{ ${WRAPPER_NIXPKGS_ARG} \\? null \\}:`));
});

/** A git project whose .flox/pkgs holds the toy variants (tracked), as a flox user's checkout would. */
function project(names: string[]): string {
  const root = join(tempDir("vm-flox-"), "project");
  chmodSync(join(root, ".."), 0o755);
  mkdirSync(join(root, ".flox/pkgs"), { recursive: true });
  for (const n of names) cpSync(join(FIXTURES, `${n}.nix`), join(root, ".flox/pkgs", `${n}.nix`));
  const git = (...a: string[]) => execFileSync("git", ["-c", "user.email=t@example.org", "-c", "user.name=t", ...a], { cwd: root, stdio: "ignore" });
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "--allow-empty", "-m", "variants");
  return root;
}

const floxEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  ...process.env,
  PATH: `${STAND_IN_FLOX}:${process.env.PATH}`,
  VM_BUILD_TEST_SALT: newSalt(),
  ...extra,
});

test("the stand-in is flox: `flox build A B` stops at the first failure; untracked files are invisible; links and log as flox writes them", () => {
  const root = project([PT_FAIL, PT_CPU]);
  const env = floxEnv();
  const r = spawnSync("flox", ["build", PT_FAIL, PT_CPU], { cwd: root, env, encoding: "utf8" });
  assert.is(r.status, 1);
  assert.match(r.stderr, /ERROR: flox build failed/);
  assert.not.ok(existsSync(join(root, `result-${PT_CPU}`)), "the name after the failure was never built");
  const ok = spawnSync("flox", ["build", PT_CPU], { cwd: root, env, encoding: "utf8" });
  assert.is(ok.status, 0, ok.stderr);
  assert.match(readlinkSync(join(root, `result-${PT_CPU}`)), /^\/nix\/store\/.*-pytorch-python313-cpu-avx2$/);
  assert.match(readFileSync(join(root, `result-${PT_CPU}-log`), "utf8"), /building pytorch-python313-cpu-avx2/);
  // Written but not committed or added: flox does not see it.
  cpSync(join(FIXTURES, `${PT_ARM}.nix`), join(root, ".flox/pkgs", `${PT_ARM}.nix`));
  const untracked = spawnSync("flox", ["build", PT_ARM], { cwd: root, env, encoding: "utf8" });
  assert.is(untracked.status, 1);
  assert.match(untracked.stderr, /not found in \.flox\/pkgs/);
});

test("build driver --backend flox: separate `flox build` processes in parallel; a failure hides nothing else; outputs and flox's log in the report", async () => {
  const root = project([PT_CPU, TA_CPU, PT_ARM, PT_FAIL]);
  const dir = join(root, "..");
  const calls = join(dir, "calls.txt");
  const env = floxEnv({ STAND_IN_FLOX_CALLS: calls, VM_BUILD_TEST_SLEEP: "2" });
  // The fixtures carry no checks (--no-verify): what this test holds is flox's builds.
  const args = ["--no-verify", "--root", root, "--pkgs-dir", join(root, ".flox/pkgs"), "--matrix", BUILD_MATRIX, "--logs-dir", join(dir, "logs"), "--plain"];
  const r = await runDriver([...args, "--backend", "flox", "--jobs", "3", TA_CPU, PT_ARM, PT_FAIL], env);
  assert.is(r.code, 1, "one variant failed");
  const rep = latestReport(join(dir, "logs"));
  const by = new Map(rep.variants.map((v) => [v.name, v]));
  assert.is(by.get(PT_FAIL)!.status, "failed");
  assert.match(readFileSync(by.get(PT_FAIL)!.log!, "utf8"), /stand-in failure/);
  for (const n of [PT_CPU, TA_CPU, PT_ARM]) {
    const v = by.get(n)!;
    assert.is(v.status, "built", `${n} built despite ${PT_FAIL}`);
    assert.equal(v.command, ["flox", "build", n]);
    assert.is(readlinkSync(join(root, `result-${n}`)), v.outPath);
    assert.equal(v.outputs, { out: v.outPath });
    assert.is(v.floxLog, readlinkSync(join(root, `result-${n}-log`)));
    assert.match(readFileSync(v.floxLog!, "utf8"), new RegExp(`building ${n}`));
  }
  // One process per name, and independent ones overlapped in time (--jobs 3).
  const ev = readFileSync(calls, "utf8").trim().split("\n").map((l) => l.split(" "));
  const span = (n: string) => [BigInt(ev.find((e) => e[0] === "start" && e[1] === n)![2]!), BigInt(ev.find((e) => e[0] === "end" && e[1] === n)![2]!)] as const;
  assert.is(ev.filter((e) => e[0] === "start").length, 4);
  const [a0, a1] = span(PT_CPU);
  const [b0, b1] = span(PT_ARM);
  assert.ok(a0 < b1 && b0 < a1, "pytorch builds ran side by side");
  const [t0] = span(TA_CPU);
  assert.ok(t0 >= a1, "torchaudio after its pytorch");
});

test("build driver --backend flox: a multi-output variant's other outputs are recorded from flox's result-NAME-OUTPUT links", async () => {
  const root = project([]);
  const salt = newSalt();
  // A toy with two outputs (test only), committed as a user would.
  writeFileSync(
    join(root, ".flox/pkgs", `${PT_CPU}.nix`),
    `{ ... }: derivation { name = "${PT_CPU}"; system = builtins.currentSystem; builder = "/bin/sh"; outputs = [ "out" "dev" ]; salt = "${salt}"; args = [ "-c" "echo $salt > $out; echo dev > $dev" ]; }\n`,
  );
  execFileSync("git", ["add", "."], { cwd: root });
  execFileSync("git", ["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "toy"], { cwd: root, stdio: "ignore" });
  const logs = join(root, "..", "logs");
  const r = await runDriver(["--no-verify", "--root", root, "--pkgs-dir", join(root, ".flox/pkgs"), "--matrix", BUILD_MATRIX, "--logs-dir", logs, "--backend", "flox", "--plain", PT_CPU], floxEnv());
  assert.is(r.code, 0, r.stderr);
  const v = latestReport(logs).variants.find((x) => x.name === PT_CPU)!;
  assert.is(v.outputs!.out, readlinkSync(join(root, `result-${PT_CPU}`)));
  assert.is(v.outputs!.dev, readlinkSync(join(root, `result-${PT_CPU}-dev`)));
  assert.is(readFileSync(v.outputs!.dev!, "utf8"), "dev\n");
  assert.is(Object.keys(v.outputs!).sort().join(","), "dev,out", "result-NAME-log is flox's log, not an output");
  assert.ok(v.floxLog);
});

test.run();
