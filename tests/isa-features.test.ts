// Each variant built once, on a builder that can run it. (1) Every derivation of a variant requires its
// ISA's `gccarch-…` system feature (catalog/cpu-isas.ts), and the real Nix refuses to build one on a machine that
// does not declare it and builds it on one that does. (2) One derivation per package of the table in every closure:
// torchcodec's check input is the variant's own torchvision. The nixpkgs is the stand-in (NOT nixpkgs).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { gccarchFeature } from "../generator/catalog/lib/machines.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { ROOT, runCli, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { BUILD_MATRIX, FIXTURES } from "./helpers/driver.ts";
import { importVariant, nixEvalJson, nixPath, runNix, standInNixpkgs, STAND_IN_NIXPKGS } from "./helpers/nix.ts";

const project = projectFromMatrix(matrix);
const BY_REV = `import ${nixPath(join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
const release = `(import ${nixPath(join(ROOT, "release.nix"))} { nixpkgs = ${BY_REV}; })`;

test("catalog: each ISA names one gccarch feature, all different; x86 ones are nixpkgs architectures whose inferiors run the flags", () => {
  const f = new Map(catalog.isas.map((i) => [i.key, gccarchFeature(i)]));
  assert.is(new Set(f.values()).size, catalog.isas.length, "avx2 ≠ avx512 ≠ … ; armv8_2 ≠ armv9");
  assert.is(f.get("avx2"), "gccarch-x86-64-v3");
  assert.is(f.get("avx512"), "gccarch-x86-64-v4");
  // The -march of the flags, where the flags are one (x86-64-v3/-v4, and the Arm ones spelled exactly).
  for (const i of catalog.isas) {
    const march = i.cflags.find((c) => c.startsWith("-march="))!.slice(7);
    if (i.cflags.length === 1) assert.is(i.gccarch.arch, march, i.key);
    assert.ok(i.gccarch.declaredBy.includes(i.gccarch.arch), `${i.key}: a builder of that very arch declares it`);
    assert.ok(i.gccarch.why.length > 40, `${i.key}: why`);
  }
});

test("every variant of the default and the widest matrix requires its ISA's feature, beside big-parallel", () => {
  for (const vs of [project.variants, projectFromMatrix(widestMatrix()).variants]) {
    for (const v of vs) {
      const isa = catalog.isas.find((i) => i.key === v.isa)!;
      assert.equal(v.requiredSystemFeatures, ["big-parallel", gccarchFeature(isa)], v.name);
    }
  }
});

test("the derivations carry it: pytorch, torchaudio, torchvision, torchcodec in their set, the environment and the checks", () => {
  for (const isa of ["avx2", "avx512bf16", "armv9"]) {
    const env = project.variants.find((v) => v.package === "torch-env" && v.isa === isa && v.cuda !== null)!;
    const [pt, ta, tv] = env.dependsOn;
    const want = gccarchFeature(catalog.isas.find((i) => i.key === isa)!);
    const got = nixEvalJson<Record<string, string[]>>(`let r = ${release}; f = d: d.requiredSystemFeatures or [ ]; in {
      pt = f r.${JSON.stringify(pt)}; ta = f r.${JSON.stringify(ta)}; tv = f r.${JSON.stringify(tv)}; env = f r.${JSON.stringify(env.name)};
      codec = f r.${JSON.stringify(ta)}.pythonPackages.torchcodec;
      static = f r.tests.${JSON.stringify(pt)}.static; gpu = f r.tests.${JSON.stringify(pt)}.gpuCheck;
    }`);
    for (const [k, fs] of Object.entries(got)) assert.ok(fs.includes(want), `${isa} ${k}: ${fs}`);
    assert.ok(got.gpu!.includes("cuda"), "the GPU check also needs a GPU builder");
  }
});

test("the real Nix refuses a variant on a builder without its feature and builds it on one that declares it", () => {
  const v = project.variants.find((x) => x.package === "pytorch" && x.isa === "avx2" && x.cuda === null)!;
  const expr = importVariant(join(ROOT, v.file), `(args: import ${nixPath(STAND_IN_NIXPKGS)} (args // { standIn = { pin = "${v.nixpkgs}"; salt = "isa-${process.pid}-${Date.now()}"; }; }))`);
  const build = (features: string) =>
    spawnSync("nix-build", ["--no-out-link", "--option", "substituters", "", "--option", "system-features", features, "-E", expr], { encoding: "utf8" });
  const refused = build("big-parallel gccarch-x86-64-v4");
  assert.is.not(refused.status, 0);
  assert.match(refused.stderr, /with features \{big-parallel, gccarch-x86-64-v3\} is required to build/);
  const built = build("big-parallel gccarch-x86-64-v3");
  assert.is(built.status, 0, built.stderr);
});

/**
 * The .drv files of each closure by Python distribution (the stand-in marks each package's derivation): the closure of
 * every drv in `drvs` from one `nix-store --query --graph` of them all (an edge "A" -> "B": B refers to A), walked
 * here, each .drv file read once; the same sets as one `nix-store --query --requisites` per drv.
 */
function byDistAll(drvs: string[]): Map<string, string[]>[] {
  const store = drvs[0]!.slice(0, drvs[0]!.lastIndexOf("/") + 1);
  const refs = new Map<string, string[]>();
  for (const m of runNix("nix-store", ["--query", "--graph", ...drvs]).matchAll(/^"([^"]+)" -> "([^"]+)"/gm))
    refs.set(store + m[2]!, [...(refs.get(store + m[2]!) ?? []), store + m[1]!]);
  const dist = new Map<string, string | null>();
  const distOf = (d: string) => {
    if (!dist.has(d)) dist.set(d, /\("standInDistName","([^"]+)"\)/.exec(readFileSync(d, "utf8"))?.[1] ?? null);
    return dist.get(d)!;
  };
  return drvs.map((root) => {
    const closure = new Set<string>([root]);
    const todo = [root];
    while (todo.length) for (const r of refs.get(todo.pop()!) ?? []) if (!closure.has(r)) (closure.add(r), todo.push(r));
    const out = new Map<string, string[]>();
    for (const d of [...closure].filter((x) => x.endsWith(".drv"))) {
      const n = distOf(d);
      if (n) out.set(n, [...(out.get(n) ?? []), d]);
    }
    return out;
  });
}
const byDist = (drv: string) => byDistAll([drv])[0]!;

test("one derivation per package per closure: every environment of the default matrix holds torch, torchaudio, torchvision and torchcodec once each", () => {
  const envs = project.variants.filter((v) => v.package === "torch-env");
  assert.ok(envs.length >= 100, `${envs.length} environments`);
  const drvs = runNix("nix-instantiate", ["-E", `let r = ${release}; in [ ${envs.map((e) => `r.${JSON.stringify(e.name)}`).join(" ")} ]`]).split("\n").filter(Boolean);
  assert.is(drvs.length, envs.length);
  const closures = byDistAll(drvs);
  for (const [i, seen] of closures.entries()) {
    for (const d of ["torch", "torchaudio", "torchvision", "torchcodec"])
      assert.is(seen.get(d)?.length, 1, `${envs[i]!.name}: ${d} ×${seen.get(d)?.length ?? 0}`);
  }
});

test("the wrong wiring shows: without the siblings, torchcodec's check input is a second torchvision", () => {
  const env = project.variants.find((v) => v.package === "torch-env" && v.cuda !== null)!;
  const [pt, ta, tv] = env.dependsOn.map((n) => project.variants.find((v) => v.name === n)!);
  const n = standInNixpkgs(env.nixpkgs);
  // pkgs/torch-env.nix called the wrong way, without the siblings: the members, and a set with torch replaced only.
  const expr = `let n = ${n}; in
    import ${nixPath(join(ROOT, "pkgs/torch-env.nix"))} {
      variant = (import ${nixPath(join(ROOT, "pkgs/variants.nix"))}).${JSON.stringify(env.name)};
      pkgs = import ${nixPath(join(ROOT, "pkgs/nixpkgs.nix"))} { variant = (import ${nixPath(join(ROOT, "pkgs/variants.nix"))}).${JSON.stringify(env.name)}; nixpkgs = n; };
      members = [ ${[pt!, ta!, tv!].map((v) => importVariant(join(ROOT, v.file), "n")).join(" ")} ];
      siblings = [ ];
    }`;
  const drv = runNix("nix-instantiate", ["-E", expr]).trim();
  assert.is(byDist(drv).get("torchvision")?.length, 2, "the set's own torchvision beside the variant's");
});

test("build: a machine that does not declare a variant's feature is refused before anything builds, with the nix.conf line; a builder that does takes it", async () => {
  const PT = "pytorch-python313-cpu-avx2"; // a toy derivation of tests/fixtures/build-pkgs, selected as a real variant
  // The fixture carries no check (--no-verify): what this test holds is the variant's own feature.
  const base = ["build", PT, "--no-verify", "--backend", "nix", "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--nix-option", "substituters=", "--plain"];
  const logs = tempDir("vm-isa-logs-");
  const refused = await runMain([...base, "--logs-dir", logs, "--out-dir", logs, "--nix-option", "system-features=big-parallel"]);
  assert.is(refused.status, 2, refused.stdout + refused.stderr);
  // (wrapped to the terminal's width: any whitespace between words)
  assert.match(refused.stderr, /this machine's Nix declares no gccarch-x86-64-v3, which 1\s+variant\(s\) require/);
  assert.match(refused.stderr, /extra-system-features = .*gccarch-x86-64-v3/, "the nix.conf line of what this CPU runs");
  assert.is(readdirSync(logs).filter((f) => f.startsWith("result-")).length, 0, "nothing was built");
  // The dry run says the same as a warning, and names a remote builder that declares the feature as the one to take it.
  const dry = await runMain([...base, "--dry-run", "--nix-option", "system-features=big-parallel"]);
  assert.is(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /x86_64-linux big-parallel gccarch-x86-64-v3: 1 variant\(s\); warning: no configured builder declares them/);
  const remote = await runMain([...base, "--dry-run", "--nix-option", "system-features=big-parallel", "--builders", "ssh://big x86_64-linux - 8 1 big-parallel,gccarch-x86-64-v3"]);
  assert.match(remote.stdout, /gccarch-x86-64-v3: 1 variant\(s\); taken by ssh:\/\/big/);
  // Declared: it builds.
  const ok = runCli([...base, "--logs-dir", logs, "--out-dir", logs, "--nix-option", "system-features=big-parallel gccarch-x86-64-v3"], { env: { VM_BUILD_TEST_SALT: `isa-${Date.now()}` } });
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
});

test.run();
