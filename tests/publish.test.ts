// Ship what you build. The build driver's report records each built variant's NAR and closure size (checked
// against nix-store's own answer); `publish --to file:///DIR` leaves the closures in that binary cache; `publish
// --org ORG --dry-run` plans `flox publish -o ORG NAME` in build order through a STAND-IN flox
// (tests/fixtures/stand-in-flox) and runs nothing, and refuses a dirty tree naming the file; explain models the
// device code of both CUDA scopes. Real nix-build / nix-store / nix copy and git.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesFor, modelDeviceCode } from "../generator/catalog/lib/device-code.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { BUILD_MATRIX, FIXTURES, latestReport, newSalt, runDriver } from "./helpers/driver.ts";
import { catalog } from "../generator/catalog/index.ts";

const PT = "pytorch-python313-cpu-avx2";
const TA = "torchaudio-python313-cpu-avx2";
const STAND_IN_FLOX = join(ROOT, "tests/fixtures/stand-in-flox");
const nix = (tool: string, args: string[]) => execFileSync(tool, args, { encoding: "utf8" }).trim();

/**
 * Build the toy variants PT and TA into a fresh directory once per file (the tests read the outputs and copy their
 * closures, neither changes them); returns it and the run's report. A test run alone builds them itself.
 */
let once: ReturnType<typeof build> | undefined;
const built = () => (once ??= build());
async function build() {
  const dir = tempDir("vm-publish-");
  chmodSync(dir, 0o755);
  const env = { ...process.env, VM_BUILD_TEST_SALT: newSalt() };
  // The fixtures carry no checks (--no-verify): what these tests hold is publish's.
  const r = await runDriver(["--no-verify", "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--out-dir", dir, "--logs-dir", join(dir, "logs"), "--backend", "nix", "--nix-option", "substituters=", "--plain", TA], env);
  assert.is(r.code, 0, r.stderr);
  return { dir, report: latestReport(join(dir, "logs")) };
}

test("the report gives each built variant's narSize and closureSize, equal to nix-store's sizes over its closure", async () => {
  const { report } = await built();
  for (const v of report.variants) {
    assert.is(v.status, "built");
    const closure = nix("nix-store", ["--query", "--requisites", v.outPath!]).split("\n");
    const sizes = nix("nix-store", ["--query", "--size", ...closure]).split("\n").map(Number);
    assert.is(v.closureSize, sizes.reduce((a, b) => a + b, 0), `${v.name}: closure`);
    assert.is(v.narSize, Number(nix("nix-store", ["--query", "--size", v.outPath!])), `${v.name}: NAR`);
    assert.ok(v.closureSize! > v.narSize! || closure.length === 1);
  }
  const ta = report.variants.find((v) => v.name === TA)!;
  assert.ok(nix("nix-store", ["--query", "--requisites", ta.outPath!]).split("\n").length >= 1);
});

test("publish NAMES --to file:///DIR leaves their closures in that binary cache; a name not built is refused with its build command", async () => {
  const { dir, report } = await built();
  const cache = tempDir("vm-publish-cache-");
  // The stand-ins carry no static check (no proof): published unproven, each with its marker (tests/proof.test.ts).
  const r = await runMain(["publish", TA, "--to", `file://${cache}`, "--matrix", BUILD_MATRIX, "--out-dir", dir, "--pkgs-dir", FIXTURES, "--allow-unproven", "--json"]);
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { report: { name: string; role: string; status: string }[] };
  assert.equal(out.report.map((x) => [x.name, x.role, x.status]), [[PT, "variant", "copied"], [PT, "unproven", "copied"], [TA, "variant", "copied"], [TA, "unproven", "copied"]], "pytorch first, then what is built on it");
  for (const v of report.variants) {
    const hash = v.outPath!.slice("/nix/store/".length, "/nix/store/".length + 32);
    assert.ok(existsSync(join(cache, `${hash}.narinfo`)), `${v.name}: in the cache`);
    const info = nix("nix", ["--extra-experimental-features", "nix-command", "path-info", "--store", `file://${cache}`, v.outPath!]);
    assert.is(info, v.outPath);
  }
  const missing = await runMain(["publish", "torchaudio-python313-cuda12_8-sm121-armv9", "--to", `file://${cache}`, "--matrix", BUILD_MATRIX, "--out-dir", dir]);
  assert.is(missing.status, 2);
  assert.match(missing.stderr.replace(/\s*\\\n\s*/g, " ").replace(/\n\s*/g, " "), /not built \(no result link in \S+\): 2 variants; build first, then publish .* \$ npx variant-matrix build pytorch-python313-cuda12_8-sm121-armv9 torchaudio-python313-cuda12_8-sm121-armv9 --out-dir /);
});

test("publish --to --dry-run before a build: exit 0 at 80 columns, every line fitting, naming what is not built, the build to run first and each copy (a built variant's store path, a pending one's result link); the real run still refuses, wrapped", async () => {
  const { dir, report } = await built();
  const cache = tempDir("vm-publish-preview-");
  const empty = tempDir("vm-publish-unbuilt-");
  const flat = (t: string) => t.replace(/ \\\n\s*/g, " ").replace(/\n\s*/g, " ");
  const fits = (t: string) => t.split("\n").filter((l) => [...l].length > 80);
  const preview = (outDir: string, ...more: string[]) => runMain(["publish", TA, "--to", `file://${cache}`, "--matrix", BUILD_MATRIX, "--out-dir", outDir, "--pkgs-dir", FIXTURES, "--dry-run", ...more], { env: { COLUMNS: "80" } });
  // Nothing built yet.
  const r = await preview(empty);
  assert.is(r.status, 0, r.stderr);
  assert.equal(fits(r.stdout + r.stderr), [], "no line wider than 80");
  const text = flat(r.stdout);
  assert.match(text, `publish to file://${cache}: 2 variant(s) in build order, 2 not built yet (no result link in ${empty})`);
  assert.ok(text.includes(`$ npx variant-matrix build ${PT} ${TA} --out-dir ${empty}`), r.stdout);
  // pytorch first, each copy through the result link the build will leave.
  const copies = [...text.matchAll(/\$ nix copy --to (\S+) (\S+)/g)].map((m) => [m[1], m[2]]);
  assert.equal(copies, [[`file://${cache}`, join(empty, `result-${PT}`)], [`file://${cache}`, join(empty, `result-${TA}`)]]);
  assert.is(existsSync(join(cache, "nix-cache-info")), false, "a dry run copies nothing");
  // JSON: the built steps (none), and what is not built with the build's argv.
  const j = JSON.parse((await preview(empty, "--json")).stdout);
  assert.equal(j.steps, []);
  assert.equal(j.notBuilt.names, [PT, TA]);
  assert.equal(j.notBuilt.build, ["npx", "variant-matrix", "build", PT, TA, "--out-dir", empty]);
  // PT built (its result link), TA not: PT's copy names its store path, TA's its link; the build names TA only.
  const half = tempDir("vm-publish-half-");
  symlinkSync(readlinkSync(join(dir, `result-${PT}`)), join(half, `result-${PT}`));
  const h = await preview(half);
  assert.is(h.status, 0, h.stderr);
  assert.equal(fits(h.stdout), []);
  const ht = flat(h.stdout);
  assert.match(ht, /2 variant\(s\) in build order, 1 not built yet/);
  assert.ok(ht.includes(`$ npx variant-matrix build ${TA} --out-dir ${half}`), h.stdout);
  const ptOut = report.variants.find((v) => v.name === PT)!.outPath!;
  assert.equal([...ht.matchAll(/\$ nix copy --to \S+ (\S+)/g)].map((m) => m[1]), [ptOut, join(half, `result-${TA}`)]);
  // Everything built: the copies of the store paths only, as before.
  const all = await preview(dir);
  assert.is(all.status, 0, all.stderr);
  assert.not.match(all.stdout, /not built/);
  assert.equal([...flat(all.stdout).matchAll(/\$ nix copy --to \S+ (\S+)/g)].map((m) => m[1]), [PT, TA].map((n) => report.variants.find((v) => v.name === n)!.outPath));
  // Without --dry-run before the build: exit 2, the refusal wrapped to 80 columns, nothing copied.
  const real = await runMain(["publish", TA, "--to", `file://${cache}`, "--matrix", BUILD_MATRIX, "--out-dir", empty], { env: { COLUMNS: "80" } });
  assert.is(real.status, 2);
  assert.equal(fits(real.stderr), [], real.stderr);
  assert.ok(flat(real.stderr).includes(`$ npx variant-matrix build ${PT} ${TA} --out-dir ${empty}`), real.stderr);
  assert.is(existsSync(join(cache, "nix-cache-info")), false);
});

/** A git project with a pushed upstream and a committed manifest.lock: what flox publish needs. */
function floxProject(): string {
  const base = tempDir("vm-publish-git-");
  const remote = join(base, "remote.git");
  const root = join(base, "project");
  const git = (cwd: string, ...a: string[]) => execFileSync("git", ["-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "init.defaultBranch=main", ...a], { cwd, stdio: "ignore" });
  mkdirSync(remote);
  git(remote, "init", "-q", "--bare");
  mkdirSync(join(root, ".flox/env"), { recursive: true });
  mkdirSync(join(root, ".flox/pkgs"), { recursive: true });
  writeFileSync(join(root, ".flox/env/manifest.lock"), readFileSync(join(ROOT, ".flox/env/manifest.lock")));
  writeFileSync(join(root, ".flox/pkgs", `${PT}.nix`), readFileSync(join(FIXTURES, `${PT}.nix`)));
  git(root, "init", "-q");
  git(root, "add", ".");
  git(root, "commit", "-qm", "variants");
  git(root, "remote", "add", "origin", remote);
  git(root, "push", "-q", "-u", "origin", "HEAD:main");
  git(root, "branch", "-q", "--set-upstream-to=origin/main");
  return root;
}

test("publish --org ORG --dry-run: flox publish per variant, pytorch first, preconditions checked, nothing run; a dirty tree exits 2 naming the file", async () => {
  const root = floxProject();
  const calls = join(root, "..", "calls.txt");
  const env = { PATH: `${STAND_IN_FLOX}:${process.env.PATH}`, STAND_IN_FLOX_CALLS: calls, STAND_IN_FLOX_LOGGED_IN: "1" };
  const r = await runMain(["publish", TA, "--org", "acme", "--dry-run", "--json", "--root", root, "--matrix", BUILD_MATRIX], { env });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const plan = JSON.parse(r.stdout) as { preconditions: { check: string; ok: boolean }[]; steps: { argv: string[]; action: string }[] };
  assert.equal(plan.preconditions.map((c) => [c.check, c.ok]), [["tracked and committed", true], ["pushed", true], ["locked", true], ["logged in", true]]);
  assert.equal(plan.steps.map((s) => s.argv.join(" ")), [`flox publish -o acme ${PT}`, `flox publish -o acme ${TA}`]);
  assert.equal(readFileSync(calls, "utf8").trim().split("\n"), ["auth status"], "no flox publish ran");
  // An uncommitted change under .flox/pkgs: exit 2, naming it (with --dry-run too).
  writeFileSync(join(root, ".flox/pkgs", `${PT}.nix`), "# changed\n");
  const dirty = await runMain(["publish", TA, "--org", "acme", "--dry-run", "--root", root, "--matrix", BUILD_MATRIX], { env });
  assert.is(dirty.status, 2, dirty.stdout + dirty.stderr);
  assert.match(dirty.stderr, new RegExp(`uncommitted or untracked under \\.flox/ or pkgs/: \\.flox/pkgs/${PT}\\.nix`));
  // Not logged in: named too.
  execFileSync("git", ["checkout", "--", "."], { cwd: root });
  const anon = await runMain(["publish", TA, "--org", "acme", "--dry-run", "--root", root, "--matrix", BUILD_MATRIX], { env: { ...env, STAND_IN_FLOX_LOGGED_IN: "0" } });
  assert.is(anon.status, 2);
  assert.match(anon.stderr, /logged in: flox auth status: You are not logged in/);
  // Without --dry-run and with everything in order, the stand-in records the publishes in that order.
  const real = await runMain(["publish", TA, "--org", "acme", "--root", root, "--matrix", BUILD_MATRIX], { env });
  assert.is(real.status, 0, real.stdout + real.stderr);
  assert.equal(readFileSync(calls, "utf8").trim().split("\n").filter((l) => l.startsWith("publish")), [`publish -o acme ${PT}`, `publish -o acme ${TA}`]);
});

test("explain of a CUDA variant shows its modelled device code per library in both scopes, with the source", async () => {
  const r = await runMain(["explain", "pytorch-python313-cuda12_9-sm121-armv9"]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /device code of its torch \(model: uncompressed cubins per library, measured in PyPI torch 2\.11 on an H100/);
  assert.match(r.stdout, /torch scope \(this variant\):\s+torch 1,024\.7 MB \(1 capability\), magma [\d,.]+ MB \(9 capabilities\), nvshmem 1\.0 MB/);
  assert.match(r.stdout, /package-set scope:\s+torch 1,024\.7 MB \(1 capability\), magma 105\.7 MB \(1 capability\)/);
  // The model: sums of the measured per-capability bytes, approximations said.
  const torchScope = modelDeviceCode(catalog, ["12.1"], ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"], "torch", true);
  const magma = torchScope.find((x) => x.origin === "magma")!;
  assert.is(magma.bytes, ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"].reduce((a, c) => a + bytesFor(catalog, "magma", c).bytes, 0));
  assert.is(bytesFor(catalog, "magma", "12.1").from, "12.0");
  assert.is(bytesFor(catalog, "torch", "8.9").from, "8.6");
  assert.ok(magma.approximated.includes("7.5←8.0"), "MAGMA was not measured at 7.5: said");
  const json = JSON.parse((await runMain(["explain", "pytorch-python313-cuda12_9-sm121-armv9", "--json"])).stdout);
  assert.ok(json.deviceCode.sources.every((s: string) => /device-code-size-pypi-torch2\.11-h100/.test(s)));
  assert.is(JSON.parse((await runMain(["explain", "pytorch-python313-cpu-avx2", "--json"])).stdout).deviceCode, null, "CPU variants carry none");
});

test("detect prints how to install the chosen variant: flox install ORG/NAME with --org, and the Nix line with the cache", async () => {
  const host = join(ROOT, "tests/fixtures/hosts/dgx-spark");
  const args = ["detect", "--cpuinfo", join(host, "cpuinfo"), "--nvidia-smi", join(host, "nvidia-smi.txt"), "--machine", "aarch64"];
  const r = await runMain([...args, "--org", "acme", "--substituter", "s3://bucket"]);
  assert.is(r.status, 0, r.stderr);
  const name = /Recommended torch-env for GPU 0 \(NVIDIA GB10, sm121\): (\S+)/.exec(r.stdout)![1]!;
  assert.match(r.stdout, new RegExp(`install:\n    flox install acme/${name}\n`));
  assert.match(r.stdout, new RegExp(`\n    NIX_CONFIG='extra-substituters = s3://bucket' npx variant-matrix install ${name}\n`));
  const plain = await runMain(args);
  assert.not.match(plain.stdout, /flox install/, "no organisation, no flox line");
  const json = JSON.parse((await runMain([...args, "--json", "--org", "acme"])).stdout);
  assert.equal(json.install[name], [`flox install acme/${name}`, `npx variant-matrix install ${name}`]);
});

test.run();
