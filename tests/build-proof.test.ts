/**
 * Proven by default (issue 66): `build` builds each variant's static check after it, the check's output is the
 * variant's proof (a store path holding probe.json and report.txt, linked as result-NAME-proof beside the result), a
 * broken promise fails that variant with the promise named, `--no-verify` builds no check and says what is unproven,
 * and an environment's proof lists its members' proofs (members.json).
 *
 * Real nix-build (offline) runs the real pkgs/checks.nix, the real generator/verify/probe.py and the real
 * pkgs/verify-compare.mjs over STAND-INS: each variant is a derivation holding a stand-in Python environment of a
 * modelled build (tests/helpers/device-model.ts: a stand-in torch answering the probe, libraries that are JSON models
 * of their device code), and the `pkgs` checks.nix is called with is a STAND-IN of the three things it takes from
 * nixpkgs (runCommand, nodejs, cudaPackages.cuda_cuobjdump: the stand-in cuobjdump of tests/fixtures). The builders run
 * as the nixbld users, so they use this machine's /usr/bin/python3 and /usr/bin/node.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BuildReport, VariantReport } from "../generator/driver/report.ts";
import type { Variant } from "../generator/matrix/schema.ts";
import { loadProject, type Project } from "../generator/matrix/project.ts";
import { renderVariantsData } from "../generator/generate/render/index.ts";
import { nixString } from "../generator/nix-literals.ts";
import { BUILD_MATRIX, buildTestContext, latestReport, runDriver, type BuildTestContext } from "./helpers/driver.ts";
import { modelLibraries, writeStandInEnv, type ModelLibs } from "./helpers/device-model.ts";
import { ROOT } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const PT90 = "pytorch-python313-cuda12_8-sm90-avx512";
const PT100 = "pytorch-python313-cuda12_8-sm100-avx512";
const ENV_CPU = "torch-env-python313-cpu-avx2";
const PT_CPU = "pytorch-python313-cpu-avx2";

/** The build matrix's project, loaded once (no top-level await in the tests' CommonJS bundles). */
let project: Project | null = null;
let byName = new Map<string, Variant>();
async function loaded(): Promise<Project> {
  project ??= await loadProject({ root: ROOT, matrixFile: BUILD_MATRIX });
  byName = new Map(project.variants.map((v) => [v.name, v]));
  return project;
}
function variant(name: string): Variant {
  const v = byName.get(name);
  if (!v) throw new Error(`no variant ${name} in ${BUILD_MATRIX}`);
  return v;
}

/** STAND-IN of the nixpkgs parts pkgs/checks.nix uses, and the stand-in variant derivations (see the module comment). */
const STAND_IN_PKGS = `# STAND-IN (tests/build-proof.test.ts), not nixpkgs: what pkgs/checks.nix takes from its pkgs, running for real.
let
  system = builtins.currentSystem;
  salt = builtins.getEnv "VM_BUILD_TEST_SALT";
  sh = name: script: derivation { inherit name system salt; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" script ]; };
  bins = ds: builtins.concatStringsSep ":" (map (d: "\${d}/bin") ds);
in rec {
  pkgs = {
    # nixpkgs' runCommand: the script runs with the nativeBuildInputs' bin directories on PATH; passthru kept.
    runCommand = name: env: script:
      (derivation ((builtins.removeAttrs env [ "nativeBuildInputs" "passthru" ]) // {
        inherit name system salt;
        builder = "/bin/sh";
        PATH = "\${bins (env.nativeBuildInputs or [ ])}:/usr/bin:/bin";
        args = [ "-c" script ];
      })) // (env.passthru or { });
    nodejs = sh "nodejs-stand-in" "mkdir -p $out/bin && ln -s /usr/bin/node $out/bin/node";
    cudaPackages.cuda_cuobjdump = sh "cuobjdump-stand-in"
      "mkdir -p $out/bin && cp \${/. + ${nixString(join(ROOT, "tests/fixtures/stand-in-cuobjdump/cuobjdump"))}} $out/bin/cuobjdump && chmod +x $out/bin/cuobjdump";
  };
  # A variant: its stand-in environment's tree (site-packages and bin/python3) copied to $out.
  packageOf = name: src: sh name "cp -r \${src} $out && chmod -R u+w $out";
}
`;

/** What each variant's tree holds: the modelled libraries of a correct build, or `wrong` changed. */
type Libs = (v: Variant) => ModelLibs;

/**
 * A --pkgs-dir for `names` (and their dependencies): variants.nix of the build matrix, the stand-in pkgs, and per
 * variant NAME.nix: its stand-in derivation with `tests` from the real pkgs/checks.nix (an environment's memberChecks
 * as pkgs/matrix.nix gives them: each member's static check).
 */
async function proofPkgs(c: BuildTestContext, names: string[], libs: Libs = modelLibraries): Promise<string> {
  const project = await loaded();
  const dir = join(c.dir, "pkgs");
  mkdirSync(join(dir, "trees"), { recursive: true });
  writeFileSync(join(dir, "variants.nix"), renderVariantsData(project));
  writeFileSync(join(dir, "stand-in-pkgs.nix"), STAND_IN_PKGS);
  const all = new Set<string>();
  const visit = (n: string) => {
    if (all.has(n)) return;
    all.add(n);
    variant(n).dependsOn.forEach(visit);
  };
  names.forEach(visit);
  for (const n of all) {
    const v = variant(n);
    const withAudio = v.package === "torchaudio" || v.package === "torch-env";
    const withVision = v.package === "torchvision" || v.package === "torch-env";
    const tree = writeStandInEnv(join(dir, "trees", n), {
      torchVersion: v.torchVersion,
      torchaudioVersion: withAudio ? v.onTorchVersions.torchaudio! : null,
      torchvisionVersion: withVision ? v.onTorchVersions.torchvision! : null,
      cuda: v.cuda, cudaCapabilities: v.cudaCapabilities, python: v.python, machine: v.system.split("-")[0]!,
    }, libs(v));
    // The interpreter the nixbld users can run (this machine's), its site-packages found from where it lies (the store).
    writeFileSync(
      join(tree, "bin/python3"),
      readFileSync(join(tree, "bin/python3"), "utf8")
        .replace(/^PYTHONPATH=\S+ exec \S+/m, `here=$(cd "$(dirname "$0")/.." && pwd)\nPYTHONPATH="$here/lib/python${v.python}/site-packages" exec /usr/bin/python3`),
    );
    writeFileSync(
      join(dir, `${n}.nix`),
      `# STAND-IN variant ${n} (tests/build-proof.test.ts) with the real pkgs/checks.nix as its tests.
{ ... }:
let
  s = import ./stand-in-pkgs.nix;
  v = (import ./variants.nix).${nixString(n)};
  package = s.packageOf ${nixString(n)} ./trees/${n};
in
package // {
  tests = import ${nixString(join(ROOT, "pkgs/checks.nix"))} {
    inherit (s) pkgs;
    variant = v;
    inherit package;
    # The variant's tree is a Python environment holding it and its torch.
    pythonPackages = { python.withPackages = _: package; };
    memberChecks = if v.role == "env" then map (m: { name = m; static = (import (./. + "/\${m}.nix") { }).tests.static; }) v.dependsOn else [ ];
  };
}
`,
    );
  }
  chmodSync(dir, 0o755);
  return dir;
}

/** `build ARGS` of the stand-ins in `pkgs`, offline, into the context's directories (a real child process). */
function build(c: BuildTestContext, pkgs: string, args: string[]) {
  return runDriver(
    ["--pkgs-dir", pkgs, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--logs-dir", join(c.dir, "logs"), "--backend", "nix", "--nix-option", "substituters=", "--plain", ...args],
    c.env,
  );
}

const entries = (r: BuildReport) => new Map<string, VariantReport>(r.variants.map((v) => [v.name, v]));

test("a variant whose library lacks the promised SASS fails with the broken promise named; its correct sibling passes, its proof a store path beside its result", async () => {
  const c = buildTestContext("vm-proof-");
  // sm100's libtorch_cuda.so without torch's sm_100 kernels: built, but not what its name promises.
  const pkgs = await proofPkgs(c, [PT90, PT100], (v) => {
    const libs = modelLibraries(v);
    if (v.name === PT100) libs["torch/lib/libtorch_cuda.so"] = libs["torch/lib/libtorch_cuda.so"]!.filter((b) => !(b.arch === "sm_100" && b.names.some((n) => n.startsWith("_ZN2at"))));
    return libs;
  });
  const r = await build(c, pkgs, [PT90, PT100]);
  assert.is(r.code, 1, r.stdout + r.stderr);
  const rep = entries(latestReport(join(c.dir, "logs")));
  const good = rep.get(PT90)!;
  const bad = rep.get(PT100)!;
  // The correct one: built and proven; its proof is its static check's output, linked beside its result.
  assert.is(good.status, "built", good.reason ?? "");
  assert.is(good.unproven, null);
  assert.match(good.proof!, /^\/nix\/store\/[a-z0-9]{32}-pytorch-python313-cuda12_8-sm90-avx512-check-static$/);
  assert.is(good.proofLink, join(c.dir, "out", `result-${PT90}-proof`));
  assert.is(readlinkSync(good.proofLink!), good.proof);
  assert.is(readlinkSync(join(c.dir, "out", `result-${PT90}`)), good.outPath, "the result itself is where it was");
  const probe = JSON.parse(readFileSync(join(good.proof!, "probe.json"), "utf8"));
  assert.ok(probe.cuobjdump, "the probe read the libraries with cuobjdump");
  assert.match(readFileSync(join(good.proof!, "report.txt"), "utf8"), new RegExp(`${PT90}: every promise holds`));
  assert.equal(Object.keys(good.outputs!), ["out"], "the proof link is no output of the variant");
  // The wrong one: its output was built, but the variant fails with the promise that broke.
  assert.is(bad.status, "failed");
  assert.ok(bad.outPath, "its output is built");
  assert.match(bad.reason!, /^a promise does not hold: ✗ torch\/lib\/libtorch_cuda\.so: torch's kernels: expected SASS sm_100.*missing: sm_100/);
  assert.is(bad.proof, null);
  assert.match(bad.unproven!, new RegExp(`^its static check check-static-${PT100} failed: ✗ torch/lib/libtorch_cuda\\.so`));
  assert.not.ok(existsSync(join(c.dir, "out", `result-${PT100}-proof`)), "no proof of a broken promise");
  assert.is(rep.get(`check-static-${PT100}`)!.status, "failed");
  assert.is(rep.get(`check-static-${PT90}`)!.status, "built");
  // The summary: a row per variant and check, then the proof of one and why the other has none.
  assert.match(r.stdout, /2 built, 0 cached, 2 failed, 0 skipped \(1 proven, 1 unproven\)/);
  assert.match(r.stdout, new RegExp(`proof of ${PT90}: \\S*result-${PT90}-proof -> ${good.proof}`));
  assert.match(r.stdout, new RegExp(`unproven: ${PT100}: its static check check-static-${PT100} failed: ✗ torch/lib/libtorch_cuda\\.so: torch's kernels`));
});

test("--no-verify builds no check: no proof, no proof link, and the last lines say which variants are unproven", async () => {
  const c = buildTestContext("vm-proof-none-");
  const pkgs = await proofPkgs(c, [PT_CPU]);
  const r = await build(c, pkgs, [PT_CPU, "--no-verify"]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const report = latestReport(join(c.dir, "logs"));
  assert.equal(report.variants.map((v) => v.name), [PT_CPU], "no check node");
  const v = report.variants[0]!;
  assert.is(v.status, "built");
  assert.is(v.proof, null);
  assert.is(v.unproven, "not checked (--no-verify)");
  assert.not.ok(existsSync(join(c.dir, "out", `result-${PT_CPU}-proof`)));
  assert.match(r.stdout.trimEnd().split("\n").at(-1)!, new RegExp(`^unproven \\(built without their static checks, --no-verify\\): ${PT_CPU}$`));
  assert.match(r.stdout, /1 built, 0 cached, 0 failed, 0 skipped \(0 proven, 1 unproven\)/);
});

test("an environment's proof lists its members' proofs (members.json), each the member's own proof; a second build builds nothing and keeps them", async () => {
  const c = buildTestContext("vm-proof-env-");
  const pkgs = await proofPkgs(c, [ENV_CPU]);
  const r = await build(c, pkgs, [ENV_CPU]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const rep = entries(latestReport(join(c.dir, "logs")));
  const env = rep.get(ENV_CPU)!;
  assert.ok(env.proof, env.unproven ?? "");
  const members = JSON.parse(readFileSync(join(env.proof!, "members.json"), "utf8")) as { name: string; proof: string }[];
  assert.equal(members.map((m) => m.name), variant(ENV_CPU).dependsOn);
  for (const m of members) {
    assert.is(m.proof, rep.get(m.name)!.proof, `${m.name}: the environment lists the member's own proof`);
    assert.ok(existsSync(join(m.proof, "report.txt")));
  }
  assert.ok(existsSync(join(env.proof!, "probe.json")) && existsSync(join(env.proof!, "report.txt")));
  // The environment's check ran after its members' checks (the driver's plan, as Nix's inputs say).
  const check = rep.get(`check-static-${ENV_CPU}`)!;
  for (const m of variant(ENV_CPU).dependsOn) assert.ok(check.dependsOn.includes(`check-static-${m}`), check.dependsOn.join(" "));
  // Built already: every variant and check cached, each proof the same, its link made again.
  const again = await build(c, pkgs, [ENV_CPU]);
  assert.is(again.code, 0, again.stdout + again.stderr);
  const rep2 = entries(latestReport(join(c.dir, "logs")));
  assert.is(rep2.get(ENV_CPU)!.status, "cached");
  assert.is(rep2.get(ENV_CPU)!.proof, env.proof);
  assert.is(rep2.get(`check-static-${ENV_CPU}`)!.status, "cached");
});

test("the wait counts the checks by default (build --dry-run), --no-verify takes them out", async () => {
  const c = buildTestContext("vm-proof-wait-");
  const pkgs = await proofPkgs(c, [ENV_CPU]);
  const dry = async (extra: string[]) => {
    const r = await runMain(["build", "--dry-run", "--json", "--pkgs-dir", pkgs, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--logs-dir", join(c.dir, "logs"), "--backend", "nix", "--ask-nix-timeout", "0", ENV_CPU, ...extra]);
    assert.is(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { variants: { name: string }[]; wait: { seconds: number; parts: { what: string; seconds: number }[] } };
  };
  const checked = await dry([]);
  const unchecked = await dry(["--no-verify"]);
  const names = (p: { variants: { name: string }[] }) => p.variants.map((v) => v.name);
  assert.equal(names(checked).filter((n) => n.startsWith("check-static-")).sort(), variant(ENV_CPU).dependsOn.concat(ENV_CPU).map((n) => `check-static-${n}`).sort());
  assert.not.ok(names(unchecked).some((n) => n.startsWith("check-")));
  // The environment's check ends the chain, after its members' checks (2 min each, the default figure): the wait is
  // at least both checks longer than the environment's own 1 min build.
  assert.equal(checked.wait.parts.at(-1), { ...checked.wait.parts.at(-1)!, what: "static check", seconds: 120 });
  assert.ok(checked.wait.seconds >= unchecked.wait.seconds + 240 - 60, `${checked.wait.seconds} vs ${unchecked.wait.seconds}`);
});

test.run();
