// `variant-matrix eval` (in-process through main; Nix runs as its real child processes) evaluates variants to drvPaths through release.nix in parallel and proves from
// the .drv files that each torchaudio is built against exactly its pytorch variant. Real nix-instantiate and
// nix-store against the stand-in nixpkgs (by revision).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { evalVariants } from "../generator/driver/eval.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { tempDir, writeMatrix, ROOT } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { nixPath, STAND_IN_NIXPKGS } from "./helpers/nix.ts";

const BY_REV = `import ${nixPath(join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
const project = projectFromMatrix(matrix);

test("eval --json: every variant of the default matrix has a drvPath; every pair is proven coupled; exit 0", async () => {
  const r = await runMain(["eval", "--json", "--jobs", "2", "--nixpkgs", BY_REV]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const summary = lines.pop().summary;
  assert.is(lines.length, project.variants.length);
  for (const l of lines) {
    assert.equal(Object.keys(l).filter((k) => k !== "coupling").sort(), ["attribute", "drvPath", "error", "name", "outputs", "system"]);
    assert.is(l.error, null, l.name);
    assert.match(l.drvPath, /^\/nix\/store\/.*\.drv$/);
    assert.is(l.system, project.variants.find((v) => v.name === l.name)!.system);
    assert.ok(l.outputs.out, `${l.name}: out path`);
  }
  const pairs = lines.filter((l) => l.name && !l.name.startsWith("pytorch"));
  assert.ok(["torchaudio", "torchvision", "torch-env"].every((k) => pairs.some((l) => l.name.startsWith(`${k}-`))), "every package built on torch is proven");
  for (const l of pairs) {
    assert.is(l.coupling.ok, true, l.name);
    assert.is(l.coupling.pytorchDrvPath, lines.find((x) => x.name === l.coupling.pytorch).drvPath);
  }
  assert.equal(summary.errors, 0);
  assert.is(summary.pairs, pairs.length);
  assert.is(summary.coupled, pairs.length);
});

test("eval with a filter selects those variants plus the pytorch each torchaudio needs", async () => {
  const r = await runMain(["eval", "--json", "--filter", "package=torchaudio", "--filter", "sm=110", "--nixpkgs", BY_REV]);
  assert.is(r.status, 0, r.stderr);
  const names = r.stdout.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.name).map((l) => l.name);
  const want = project.variants.filter((v) => v.sm === "110" && ["pytorch", "torchaudio"].includes(v.package)).map((v) => v.name);
  assert.equal(names.sort(), want.sort());
});

test("a variant that fails to evaluate is reported with Nix's error, the others still evaluate; exit 1", async () => {
  // A tree with two pins; the nixpkgs handed in knows only one of them, so the other pin's variants fail.
  const out = tempDir("vm-eval-");
  cpSync(join(ROOT, "pkgs"), join(out, "pkgs"), { recursive: true });
  const m = writeMatrix(out, {
    releases: [{ torch: "2.9.1" }, { torch: "2.11.0", nixpkgs: "549bd84d6279f9852cae6225e372cc67fb91a4c1" }],
    python: ["3.13"],
    cuda: ["12.9"],
    gpus: ["90"],
    isas: ["avx512"],
    cpuOnly: false,
  });
  assert.is((await runMain(["generate", "--matrix", m, "--out", out])).status, 0);
  const onlyNew = `{ "549bd84d6279f9852cae6225e372cc67fb91a4c1" = (${BY_REV})."549bd84d6279f9852cae6225e372cc67fb91a4c1"; }`;
  const r = await runMain(["eval", "--json", "--matrix", m, "--root", out, "--nixpkgs", onlyNew]);
  assert.is(r.status, 1, r.stdout + r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const summary = lines.pop().summary;
  const bad = lines.filter((l) => l.error);
  assert.equal(bad.map((l) => l.name).sort(), ["pytorch29-python313-cuda12_9-sm90-avx512", "torch-env29-python313-cuda12_9-sm90-avx512", "torchaudio29-python313-cuda12_9-sm90-avx512", "torchvision29-python313-cuda12_9-sm90-avx512"]);
  for (const l of bad) assert.match(l.error, /has no 0182a361324364ae3f436a63005877674cf45efb/);
  assert.ok(lines.filter((l) => !l.error).every((l) => l.drvPath), "the 2.11 variants still evaluate");
  assert.is(summary.errors, 4);
});

test("the coupling proof reads the .drv: a torchaudio paired with another pytorch is reported NOT coupled", async () => {
  const ta = project.variants.find((v) => v.name === "torchaudio-python313-cuda12_9-sm121-armv9")!;
  const wrongTorch = project.variants.find((v) => v.name === "pytorch-python313-cuda13_0-sm121-armv9")!;
  const { results, summary } = await evalVariants({
    root: ROOT,
    variants: [{ ...ta, dependsOn: [wrongTorch.name] }, wrongTorch],
    jobs: 2,
    nixpkgsExpr: BY_REV,
    engine: "nix-instantiate",
  });
  const r = results.find((x) => x.name === ta.name)!;
  assert.is(r.coupling!.ok, false);
  assert.is(summary.uncoupled, 1);
});

test("eval of an unknown name: exit 2 with the nearest names", async () => {
  const r = await runMain(["eval", "torchaudio-python313-cuda12_9-sm121-armv8"]);
  assert.is(r.status, 2);
  assert.match(r.stderr, /unknown variant "torchaudio-python313-cuda12_9-sm121-armv8"; close names: torchaudio-python313-cuda12_9-sm121-armv/);
});

test.run();
