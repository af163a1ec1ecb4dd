// Named environments (matrix.ts `environments`). For every nixpkgs pin of the catalog, against the stand-in of
// that pin's era (tests/fixtures/stand-in-nixpkgs: peft on the set's torch, einops without torch, deepspeed on the set's
// torch where the pin carries it, extras-by-pin.nix), the real CLI generates a matrix with named environments into a
// temp tree, and the real nix-instantiate / nix-store / nix-build check:
// - the environment's .drv closure holds exactly one torch .drv, its pytorch variant's, and each extra once;
// - an extra the pin lacks (deepspeed before mid-2026) stops evaluation naming the attribute and the pin;
// - an extra built on another torch (a user's overlay pins peft to the stock torch) stops evaluation naming it, and the
//   closure of that environment holds two torches (the failure the guard exists for);
// - the CUDA environment builds, and deepspeed in it sees the variant's capabilities at build time.
// And the pure side: the schema refuses bad names and attributes; naming parses environment names back.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { formatName, parseName } from "../generator/matrix/naming.ts";
import { torchDrvs } from "../generator/driver/eval.ts";
import { allHold, checkPromise, type Probe } from "../generator/verify/compare.ts";
import { validateMatrix } from "../generator/matrix/project.ts";
import type { VariantJson } from "../generator/matrix/schema.ts";
import type { NixpkgsPin } from "../generator/catalog/schema.ts";
import { runMain } from "./helpers/main.ts";
import { generateForPin } from "./helpers/matrices.ts";
import {
  REPO_ROOT,
  STAND_IN_BUILDER_FEATURES,
  STAND_IN_NIXPKGS,
  currentSystem,
  importVariant,
  nixBuild,
  nixEvalJson,
  nixEvalJsonWritingDrvs,
  nixInstantiate,
  nixPath,
  runNix,
  standInCheckout,
  standInNixpkgs,
} from "./helpers/nix.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

const SYSTEM = currentSystem();
const ISA = SYSTEM === "aarch64-linux" ? "armv9" : "avx2";
const extrasByPin = nixEvalJson<Record<string, Record<string, string>>>(`import ${nixPath(path.join(STAND_IN_NIXPKGS, "extras-by-pin.nix"))}`);

interface PinCase {
  pin: NixpkgsPin;
  hasDeepspeed: boolean;
  list: VariantJson[];
  dir: string;
}

/** One CUDA and one CPU combination of the pin with environments `llm` (peft, einops) and `ds` (deepspeed). */
async function caseFor(pin: NixpkgsPin): Promise<PinCase> {
  const { dir, list } = await generateForPin(pin, ISA, "vm-envs-", { environments: { llm: ["peft", "einops"], ds: ["deepspeed"] } });
  return { pin, hasDeepspeed: "deepspeed" in (extrasByPin[pin.rev] ?? {}), list, dir };
}

/** Every pin's case: generated once for the file, before the first test. */
const perPin: PinCase[] = [];
test.before(async () => {
  for (const pin of catalog.nixpkgs) perPin.push(await caseFor(pin));
});

/** The .drv files of the closure of `drv`, by the Python distribution the stand-in marks them with. */
function distsIn(drv: string): Map<string, string[]> {
  const byDist = new Map<string, string[]>();
  for (const d of runNix("nix-store", ["--query", "--requisites", drv]).split("\n").filter((p) => p.endsWith(".drv"))) {
    const m = /\("standInDistName","([^"]+)"\)/.exec(readFileSync(d, "utf8"));
    if (m) byDist.set(m[1]!, [...(byDist.get(m[1]!) ?? []), d]);
  }
  return byDist;
}

test("naming: NAME-env variants format and parse back; torch-env is the environment named torch", () => {
  const parts = { package: "llm-env", tag: "", python: "3.13", cuda: "13.0", sm: "121", isa: "armv9" };
  assert.is(formatName(parts), "llm-env-python313-cuda13_0-sm121-armv9");
  assert.equal(parseName("llm-env-python313-cuda13_0-sm121-armv9"), parts);
  assert.equal(parseName("audio2-env29-python313-cpu-avx2"), { package: "audio2-env", tag: "29", python: "3.13", cuda: null, sm: null, isa: "avx2" });
  assert.is(parseName("Llm-env-python313-cpu-avx2"), null);
  assert.is(parseName("llm-python313-cpu-avx2"), null);
});

test("schema: environment names and extras are validated, with the field named", () => {
  const base = { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["13.0"], gpus: ["90"], isas: ["avx2"], cpuOnly: false };
  const bad = (environments: unknown, re: RegExp) => {
    let msg = "";
    try {
      validateMatrix({ ...base, environments });
    } catch (e) {
      msg = (e as Error).message;
    }
    assert.match(msg, re);
  };
  bad({ "My-LLM": ["peft"] }, /environments\.My-LLM.*lower-case letters and digits/s);
  bad({ torch: ["peft"] }, /environments\.torch.*taken/s);
  bad({ llm: [] }, /environments\.llm.*at least one/s);
  bad({ llm: ["peft", "peft"] }, /environments\.llm\.1.*duplicate attribute "peft"/s);
  bad({ llm: ["not an attr"] }, /environments\.llm\.0.*nixpkgs Python attribute name/s);
  bad({ llm: ["torch"] }, /environments\.llm\.0.*torch stack/s);
  const m = validateMatrix({ ...base, environments: { llm: ["transformers", "accelerate"] } });
  assert.equal(m.environments, { llm: ["transformers", "accelerate"] });
});

test("every pin: a named environment per kept combination, holding the stack; its .drv closure holds exactly one torch, the pytorch variant's, and each extra once", () => {
  const cases = perPin.flatMap(({ pin, list }) => {
    const envs = list.filter((v) => v.package === "llm-env");
    assert.is(envs.length, 2, `${pin.rev.slice(0, 7)}: one llm-env per combination (CUDA, CPU)`);
    return envs.map((env) => ({ pin, list, env, pt: list.find((v) => v.name === env.dependsOn[0])! }));
  });
  // One evaluation for every environment (its .drv files written for nix-store): the pytorch variant's .drv, the
  // environment's, its extras, and the torch peft was called with.
  const rows = nixEvalJsonWritingDrvs<{ pt: string; drv: string; extras: string[]; peftTorch: string }[]>(
    `[ ${cases.map(({ pin, env, pt }) => `(let n = ${standInNixpkgs(pin.rev)}; e = ${importVariant(env.file, "n")}; in { pt = ${importVariant(pt.file, "n")}.drvPath; drv = e.drvPath; extras = e.extras; peftTorch = e.pythonPackages.peft.standIn.torchDrvPath; })`).join("\n")} ]`,
  );
  for (const [i, { pin, list, env }] of cases.entries()) {
    const r = rows[i]!;
    const torchEnv = list.find((v) => v.package === "torch-env" && v.dependsOn[0] === env.dependsOn[0])!;
    assert.equal(env.dependsOn, torchEnv.dependsOn, `${env.name}: the torch stack of torch-env`);
    assert.equal(r.extras, ["peft", "einops"]);
    const dists = distsIn(r.drv);
    assert.equal(dists.get("torch"), [r.pt], `${pin.rev.slice(0, 7)} ${env.name}: torch .drv files in the closure`);
    for (const d of ["peft", "einops", "torchaudio", "torchvision"]) assert.is(dists.get(d)?.length, 1, `${env.name}: ${d} once`);
    // peft is built on the variant's torch (the stand-in records the torch it was called with).
    assert.is(r.peftTorch, r.pt, `${env.name}: peft on the variant's torch`);
  }
});

test("every pin: deepspeed is in the environment where the pin carries it; where it does not, evaluation names the attribute and the pin", () => {
  assert.ok(perPin.some((p) => p.hasDeepspeed) && perPin.some((p) => !p.hasDeepspeed), "both kinds of pin occur");
  const dsEnv = (list: VariantJson[]) => list.find((v) => v.package === "ds-env" && v.cuda !== null)!;
  // Where the pin carries deepspeed: one evaluation for all of them (.drv files written for nix-store).
  const carrying = perPin.filter((p) => p.hasDeepspeed).map(({ pin, list }) => ({ pin, env: dsEnv(list), pt: list.find((v) => v.name === dsEnv(list).dependsOn[0])! }));
  const rows = nixEvalJsonWritingDrvs<{ pt: string; drv: string; arch: string }[]>(
    `[ ${carrying.map(({ pin, env, pt }) => `(let n = ${standInNixpkgs(pin.rev)}; e = ${importVariant(env.file, "n")}; in { pt = ${importVariant(pt.file, "n")}.drvPath; drv = e.drvPath; arch = e.pythonPackages.deepspeed.TORCH_CUDA_ARCH_LIST; })`).join("\n")} ]`,
  );
  for (const [i, { env, pt }] of carrying.entries()) {
    const r = rows[i]!;
    assert.equal(distsIn(r.drv).get("torch"), [r.pt], `${env.name}: one torch`);
    assert.is(r.arch, pt.cudaCapabilities.join(";"), `${env.name}: deepspeed's build-time TORCH_CUDA_ARCH_LIST is torch.cudaCapabilities`);
  }
  // Where it does not: each environment alone must fail to evaluate, naming the attribute and the pin.
  for (const { pin, list } of perPin.filter((p) => !p.hasDeepspeed)) {
    const env = dsEnv(list);
    const p = spawnSync("nix-instantiate", ["-E", importVariant(env.file, standInNixpkgs(pin.rev))], { encoding: "utf8" });
    assert.is.not(p.status, 0, `${pin.rev.slice(0, 7)}: an environment with an extra the pin lacks must not evaluate`);
    assert.match(p.stderr, new RegExp(`${env.name}: nixpkgs ${pin.rev} has no python\\d+Packages\\.deepspeed`));
  }
});

test("an extra built on another torch stops evaluation, naming it; without the guard its closure would hold two torches", () => {
  const { pin, list } = perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
  const env = list.find((v) => v.package === "llm-env" && v.cuda !== null)!;
  const py = `python${env.python.replace(".", "")}Packages`;
  // A user's overlay that pins peft to the set's stock torch: overrideScope replaces `torch`, but peft keeps its own.
  const pinned = `(args: import ${nixPath(STAND_IN_NIXPKGS)} (args // { standIn = { pin = "${pin.rev}"; };
      overlays = (args.overlays or [ ]) ++ [ (final: prev: { ${py} = prev.${py}.overrideScope (f: p: { peft = p.peft.override { torch = prev.${py}.torch; }; }); }) ]; }))`;
  const p = spawnSync("nix-instantiate", ["-E", importVariant(env.file, pinned)], { encoding: "utf8" });
  assert.is.not(p.status, 0, "an environment with an extra on another torch must not evaluate");
  assert.match(p.stderr, /llm-env-python313-[^:]+: extra peft is built on \/nix\/store\/\S+-torch-[\d.]+\.drv, not on this variant's torch/);
  // What the guard prevents: the withPackages of the members and that peft holds two torch .drv files.
  const [twoTorches] = nixInstantiate(
    `let e = ${importVariant(list.find((v) => v.package === "torch-env" && v.cuda !== null)!.file, pinned)}; ` +
      `in e.pythonPackages.python.withPackages (_: [ e.torch e.pythonPackages.peft ])`,
    [],
    { expr: true },
  );
  assert.is(distsIn(twoTorches!).get("torch")?.length, 2, "the unguarded environment holds two torches");
});

test("the CUDA environment with extras builds (one torch: no buildEnv collision, no duplicated package)", () => {
  const { list } = perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
  const n = standInNixpkgs("2c423e03bbafcff28bfadc6781a4a8257f205cb5");
  for (const pkg of ["llm-env", "ds-env"]) {
    const env = list.find((v) => v.package === pkg && v.cuda !== null)!;
    assert.is(nixBuild(importVariant(env.file, n)).length, 1, `${env.name}: built`);
  }
  void STAND_IN_BUILDER_FEATURES;
});

test("eval: the one-torch proof covers named environments (their whole .drv closure holds their pytorch variant's torch only)", async () => {
  const { pin, dir } = perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
  const byRev = `import ${nixPath(path.join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
  const r = await runMain(["eval", "--json", "--jobs", "1", "--matrix", path.join(dir, "matrix.ts"), "--root", dir, "--nixpkgs", byRev, "--filter", "package=llm-env"]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const envs = lines.filter((l) => l.name?.startsWith("llm-env-"));
  assert.is(envs.length, 2, `${pin.rev.slice(0, 7)}: both llm-env variants evaluated`);
  for (const l of envs) {
    assert.is(l.coupling.ok, true, l.name);
    assert.equal(l.coupling.otherTorches, [], `${l.name}: no other torch`);
  }
});

test("eval's torch detector: nixpkgs' torch and the matrix's pytorch variants are torches; torchaudio, torchvision are not", () => {
  const h = "/nix/store/" + "a".repeat(32);
  const paths = [
    `${h}-python3.13-torch-2.12.0.drv`,
    `${h}-pytorch-python313-cuda13_0-sm90-avx2-2.12.0.drv`,
    `${h}-pytorch29-python313-cpu-avx2-2.9.1.drv`,
    `${h}-python3.13-torchaudio-2.11.0.drv`,
    `${h}-torchvision-python313-cpu-avx2-0.27.1.drv`,
    `${h}-python3.13-torch-2.12.0`,
  ];
  assert.equal(torchDrvs(paths), paths.slice(0, 3));
});

test("detect --package llm-env recommends the named environment; an environment the matrix lacks is a usage error (exit 2)", async () => {
  const { dir } = perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
  const host = path.join(REPO_ROOT, "tests/fixtures/hosts/epyc-nogpu");
  const args = ["--matrix", path.join(dir, "matrix.ts"), "--cpuinfo", path.join(host, "cpuinfo"), "--nvidia-smi", path.join(host, "nvidia-smi.txt"), "--machine", "x86_64"];
  const ok = await runMain(["detect", "--package", "llm-env", "--json", ...args]);
  assert.is(ok.status, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).variants, ["llm-env-python313-cpu-avx2"]);
  const bad = await runMain(["detect", "--package", "audio-env", ...args]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /no environment "audio-env"; its environments: torch-env, llm-env, ds-env/);
});

test("the comparison: an extra promises its version and that it imports on the variant's torch; deepspeed's device code is said to be not judged", () => {
  const v = {
    name: "llm-env-python313-cpu-avx2", package: "llm-env", version: "2.12.0", torchVersion: "2.12.0", python: "3.13", cuda: null, sm: null,
    isa: "avx2", system: "x86_64-linux", cudaCapabilities: [], dependsOn: ["pytorch-python313-cpu-avx2"],
    extras: [{ attr: "peft", version: "0.11.1" }, { attr: "deepspeed", version: "0.19.5" }],
  };
  const probe = (extras: Probe["extras"]): Probe => ({
    probe: 1, python: { version: "3.13.5", executable: "/x/bin/python3" }, machine: "x86_64",
    torch: { ok: true, error: null, version: "2.12.0", file: "/t/torch/__init__.py", cuda: null, archFlags: [], nvccArchFlags: null, cpuCapability: "AVX2", libDir: "/t/torch/lib", libs: [] },
    gpu: { available: false, devices: [], matmul: null }, torchaudio: null, packages: {}, cuobjdump: null, extras,
  } as unknown as Probe);
  const good = { peft: { ok: true, error: null, version: "0.11.1", newLibtorch: [] }, deepspeed: { ok: true, error: null, version: "0.19.5", newLibtorch: [] } };
  const ok = checkPromise(v, probe(good), FACTS);
  assert.ok(allHold(ok), JSON.stringify(ok.filter((c) => c.ok === false)));
  const ds = ok.find((c) => c.promise === "extra deepspeed: device code")!;
  assert.is(ds.ok, null);
  assert.match(ds.found, /not judged/);
  assert.not.ok(ok.some((c) => c.promise === "extra peft: device code"), "a pure-Python extra has no device code to judge");
  // Wrong ones fail: another version, an import error, a second libtorch mapped by the import, an extra not probed.
  assert.not.ok(allHold(checkPromise(v, probe({ ...good, peft: { ...good.peft, version: "0.12.0" } }), FACTS)));
  assert.not.ok(allHold(checkPromise(v, probe({ ...good, peft: { ...good.peft, ok: false, error: "ImportError: no module named peft" } }), FACTS)));
  assert.not.ok(allHold(checkPromise(v, probe({ ...good, deepspeed: { ...good.deepspeed, newLibtorch: ["/other/torch/lib/libtorch_cpu.so"] } }), FACTS)));
  assert.not.ok(allHold(checkPromise(v, probe(null), FACTS)));
});

test("pin inspect --extra reads an extra's version in every Python set of a pin, null where the pin lacks it", async () => {
  for (const [rev, deepspeed] of [["a3116115851d68b8952a2a4221cc25a84e56b532", null], ["2c423e03bbafcff28bfadc6781a4a8257f205cb5", "0.19.5"]] as const) {
    const r = await runMain(["pin", "inspect", standInCheckout(rev), "--json", "--extra", "deepspeed", "--extra", "peft"]);
    assert.is(r.status, 0, r.stderr);
    const sets = JSON.parse(r.stdout).facts.pythonSets as { set: string; extras: { attr: string; value: string | null }[] }[];
    const py313 = sets.find((x) => x.set === "python313Packages")!;
    assert.equal(py313.extras.map((x) => [x.attr, x.value]), [["deepspeed", deepspeed], ["peft", "0.11.1"]], rev.slice(0, 7));
  }
  const bad = await runMain(["pin", "inspect", standInCheckout("2c423e03bbafcff28bfadc6781a4a8257f205cb5"), "--extra", "not an attr"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--extra: "not an attr" is not a nixpkgs attribute name/);
});

test("explain of a named environment lists what it holds and, per extra, whether its device code is judged (80 columns)", async () => {
  const { dir } = perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
  const m = path.join(dir, "matrix.ts");
  const r = await runMain(["explain", "llm-env-python313-cpu-" + ISA, "--matrix", m], { env: { COLUMNS: "80" } });
  assert.is(r.status, 0, r.stderr);
  const holds = r.stdout.slice(r.stdout.indexOf("holds ("), r.stdout.indexOf("\nnote: "));
  for (const n of ["pytorch-python313-cpu-", "torchaudio-python313-cpu-", "torchvision-python313-cpu-", "python313Packages.torchcodec"]) assert.ok(holds.includes(n), n);
  assert.match(holds, /python313Packages\.peft \(extra; device code none\)/);
  assert.match(holds, /python313Packages\.einops \(extra; device code none\)/);
  for (const l of holds.split("\n")) assert.ok(l.length <= 80, `wider than 80: ${l}`);
  const ds = await runMain(["explain", "ds-env-python313-cuda" + perPin.find((p) => p.pin.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!.list.find((v) => v.package === "ds-env" && v.cuda)!.name.split("-cuda")[1], "--matrix", m, "--json"]);
  const j = JSON.parse(ds.stdout);
  assert.equal(j.environment.extras.map((x: { attr: string; deviceCode: string }) => [x.attr, x.deviceCode]), [["deepspeed", "not judged"]]);
  assert.match(j.environment.extras[0].promise, /compiles each op at run time/);
  const none = await runMain(["explain", "audio-env-python313-cpu-" + ISA, "--matrix", m]);
  assert.is(none.status, 2, "a name that is no variant is bad input (exit 2, on stderr)");
  assert.match(none.stderr.replace(/\s+/g, " "), /matrix\.ts defines no environment "audio" \(its environments: llm, ds\)/);
});

test.run();
