// release.nix, the one entry point for engines, and one nixpkgs instance per distinct key.
// Real nix-instantiate against the STAND-IN nixpkgs (tests/fixtures/stand-in-nixpkgs/by-rev.nix: one stand-in per
// recorded pin, selected by revision); the stand-in traces every instantiation, so the counts are measured.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { nixpkgsInstanceKey } from "../generator/matrix/expand.ts";
import { REPO_ROOT, STAND_IN_NIXPKGS, nixPath } from "./helpers/nix.ts";
import { WRAPPER_NIXPKGS_ARG } from "../generator/generate/render/index.ts";
import { catalog } from "../generator/catalog/index.ts";

const BY_REV = `import ${nixPath(join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
const project = projectFromMatrix(matrix);

const keyOf = nixpkgsInstanceKey;

/**
 * Runs nix-instantiate with the stand-in (release.nix takes it as `nixpkgs`, a .flox/pkgs wrapper as
 * `variantMatrixNixpkgs`; Nix passes an --arg only to a function that names it); returns the .drv paths and the
 * number of nixpkgs instantiations.
 */
function instantiate(args: string[]): { drvs: string[]; instances: number; stderr: string } {
  const r = spawnSync("nix-instantiate", [...args, "--arg", "nixpkgs", BY_REV, "--arg", WRAPPER_NIXPKGS_ARG, BY_REV], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  assert.is(r.status, 0, r.stderr);
  const drvs = r.stdout.split("\n").filter((l) => l.endsWith(".drv"));
  const instances = r.stderr.split("\n").filter((l) => l.includes("stand-in nixpkgs instantiated")).length;
  return { drvs, instances, stderr: r.stderr };
}

test("nix-instantiate release.nix -A all: every variant, and exactly one nixpkgs instance per distinct key", () => {
  const { drvs, instances } = instantiate(["release.nix", "-A", "all"]);
  assert.is(drvs.length, project.variants.length);
  const keys = new Set(project.variants.map(keyOf));
  assert.is(instances, keys.size, `instantiations (${instances}) = distinct keys (${keys.size})`);
  assert.ok(keys.size < project.variants.length / 2, "sharing happens");
});

test("nix-instantiate release.nix (top level) lists each variant once, plus its checks; all and bySystem are not recursed", () => {
  const { drvs } = instantiate(["release.nix"]);
  // Each variant once, a static check for each, a GPU check for each CUDA variant (tests.NAME, recursed).
  const cudaCount = project.variants.filter((v) => v.cuda !== null).length;
  assert.is(drvs.length, 2 * project.variants.length + cudaCount);
  assert.is(new Set(drvs).size, drvs.length);
  assert.is(drvs.filter((d) => d.endsWith("-check-static.drv")).length, project.variants.length);
  assert.is(drvs.filter((d) => d.endsWith("-check-gpu.drv")).length, cudaCount);
  const names = JSON.parse(
    execFileSync("nix-instantiate", ["--eval", "--json", "-E", `builtins.attrNames (import ./release.nix { nixpkgs = ${BY_REV}; })`], { cwd: REPO_ROOT, encoding: "utf8" }),
  ) as string[];
  assert.equal(names.sort(), [...project.variants.map((v) => v.name), "all", "bySystem", "tests"].sort());
  const sys = instantiate(["release.nix", "-A", "bySystem.aarch64-linux"]);
  assert.is(sys.drvs.length, project.variants.filter((v) => v.system === "aarch64-linux").length);
});

test("one torchaudio file instantiates nixpkgs exactly once, and its torch is its pytorch file's derivation", () => {
  const ta = project.variants.find((v) => v.name === "torchaudio-python313-cuda12_8-sm121-armv9")!;
  const one = instantiate([ta.file]);
  assert.is(one.instances, 1, one.stderr);
  const pt = instantiate([`.flox/pkgs/${ta.dependsOn[0]}.nix`]);
  const refs = execFileSync("nix-store", ["--query", "--references", one.drvs[0]!], { encoding: "utf8" });
  assert.ok(refs.split("\n").includes(pt.drvs[0]!), "torchaudio.drv depends on the pytorch file's .drv");
  const viaRelease = instantiate(["release.nix", "-A", ta.name]);
  assert.equal(viaRelease.drvs, one.drvs, "release.nix -A NAME is the same derivation as .flox/pkgs/NAME.nix");
});



test("generated derivations declare requiredSystemFeatures from matrix.ts (default big-parallel; overridable) and their ISA's gccarch feature", () => {
  const v = project.variants.find((x) => x.package === "pytorch")!;
  const name = v.name;
  const feats = JSON.parse(
    execFileSync("nix-instantiate", ["--eval", "--strict", "--json", "-E", `(import ./release.nix { nixpkgs = ${BY_REV}; }).${JSON.stringify(name)}.requiredSystemFeatures`], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }),
  );
  assert.equal(feats, ["big-parallel", `gccarch-${catalog.isas.find((i) => i.key === v.isa)!.gccarch.arch}`]);
  const none = projectFromMatrix({ ...matrix, policy: { ...matrix.policy, requiredSystemFeatures: [] } });
  assert.ok(none.variants.every((x) => x.requiredSystemFeatures.length === 1 && x.requiredSystemFeatures[0]!.startsWith("gccarch-")), "the ISA's feature stays");
  assert.throws(() => projectFromMatrix({ ...matrix, policy: { ...matrix.policy, requiredSystemFeatures: ["Big Parallel"] } }), /requiredSystemFeatures\.0/);
});

test.run();
