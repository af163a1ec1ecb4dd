// vLLM on the variant's torch (issue 56): the catalog's verdicts on the default matrix (kept exactly where its facts
// allow, every drop with its reason and the nearest combination that works; an environment naming vllm gets the same
// verdicts), what `explain` says of an SM121 variant (the 12.0f family rule, the memory per compile job), the build
// plan's estimate and jobs, and `verify` judging a modelled correct vLLM install (passes) and a wrong-capability one
// (fails). One torch per closure against the stand-in of each era: tests/one-torch.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { cudaBuildOf, nixpkgsBrokenWarnings, onTorch } from "../generator/catalog/lib/packages.ts";
import { closurePackages } from "../generator/matrix/naming.ts";
import { catalog } from "../generator/catalog/index.ts";
import { coresForPackage, jobsRule } from "../generator/model/concurrency.ts";
import { modelCacheMisses } from "../generator/model/cache-model.ts";
import { variantWait, type Wait } from "../generator/model/wait.ts";
import { capacityOf } from "../generator/model/concurrency.ts";
import { waitWords } from "../generator/detect/rules.ts";
import { makePlan } from "../generator/model/plan.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { compareVersions } from "../generator/versions.ts";
import type { MatrixInput, Variant } from "../generator/matrix/schema.ts";
import defaultMatrix from "../matrix.ts";
import { placeless, ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { nixEvalJson, nixPath } from "./helpers/nix.ts";
import { runMain } from "./helpers/main.ts";
import { EXTENSION_LIBS, modelLibraries, NAMES, STAND_IN_CUOBJDUMP_DIR, writeStandInEnv } from "./helpers/device-model.ts";

const VLLM = onTorch(catalog, "vllm")!;
/** The repository's default matrix with vLLM opted in and an environment that names it. */
const withVllm: MatrixInput = { ...defaultMatrix, packages: [...(defaultMatrix.packages ?? []), "vllm"], environments: { serve: ["vllm"] } };
const project = projectFromMatrix(withVllm);
const combo = (n: string) => n.replace(/^(vllm|serve-env)-/, "");

test("the default matrix with vllm: variants exactly where the catalog's facts allow, every drop with its reason", () => {
  const pin = catalog.nixpkgs.find((p) => p.rev === defaultMatrix.releases[0]!.nixpkgs)!;
  const rel = VLLM.releases.find((r) => pin.vllm!.startsWith(`${r.version}.`))!;
  const kept = project.variants.filter((v) => v.package === "vllm");
  const dropped = project.excluded.filter((e) => e.package === "vllm");
  assert.ok(kept.length > 0, "some vLLM variants");
  // Each kept one: the pin's version, a CUDA in the release's range, the capabilities its list serves, built on its torch.
  for (const v of kept) {
    assert.is(v.version, pin.vllm);
    assert.ok(compareVersions(v.cuda!, rel.cuda!.min) >= 0, `${v.name}: CUDA ${v.cuda}`);
    assert.ok(!("reason" in cudaBuildOf(catalog, VLLM, { ...v, cuda: v.cuda! })), v.name);
    assert.equal(v.dependsOn, [v.name.replace(/^vllm-/, "pytorch-")]);
    assert.ok(v.requiredSystemFeatures.includes("big-parallel"), v.name);
  }
  // Every other combination of the matrix is dropped, with a reason; the ones whose torch is kept say vLLM's own.
  const torchKept = new Set(project.variants.filter((v) => v.package === "pytorch").map((v) => v.name.replace(/^pytorch-/, "")));
  assert.is(kept.length + dropped.length, project.variants.filter((v) => v.package === "pytorch").length + project.excluded.filter((e) => e.package === "pytorch").length);
  for (const e of dropped) {
    assert.ok(e.reasons.length > 0, e.name);
    if (!torchKept.has(combo(e.name))) continue;
    const text = e.reasons.join(" ");
    if (e.cuda === null) assert.match(text, /vLLM has no CPU-only build/);
    else {
      assert.match(text, new RegExp(`vLLM ${pin.vllm!.replace(/\./g, "\\.")} builds with CUDA 13\\.0 and later, not CUDA ${e.cuda!.replace(".", "\\.")}`));
      assert.match(text, /Nearest that works: vLLM for SM\d+ with CUDA 13\.0 or 13\.2 at nixpkgs 2c423e0/);
    }
  }
  // The GPUs vLLM 0.24 lists for CUDA 13: all of the matrix's (SM121 and SM103 through 12.0 and 10.0).
  assert.equal([...new Set(kept.map((v) => v.sm))].sort(), [...defaultMatrix.gpus].sort());
});

test("549bd84 and a311611 carry vLLM 0.16.0 (inferred), a release the catalog has no facts for: every vLLM combination dropped saying so, naming the pins that carry one", () => {
  for (const rev of ["549bd84d6279f9852cae6225e372cc67fb91a4c1", "a3116115851d68b8952a2a4221cc25a84e56b532"]) {
    const pin = catalog.nixpkgs.find((q) => q.rev === rev)!;
    assert.is(pin.vllm, "0.16.0");
    assert.match(pin.inferred.vllm!, /NixOS\/nixpkgs#498040/);
    assert.not.match(pin.inferred.vllm!, /0\.19\.0 or 0\.20\.1/);
  }
  assert.is(VLLM.releases.find((r) => r.version === "0.16"), undefined, "no 0.16 row: its CUDA range and arch lists were not read");
  const p = projectFromMatrix({ ...withVllm, releases: [{ torch: "2.11.0", nixpkgs: "549bd84d6279f9852cae6225e372cc67fb91a4c1" }], cuda: ["12.8", "13.0"] });
  assert.is(p.variants.filter((v) => v.package === "vllm" || v.package === "serve-env").length, 0);
  const e = p.excluded.find((x) => x.name === "vllm-python313-cuda13_0-sm90-avx2")!;
  assert.match(e.reasons.join(" "), /nixpkgs 549bd84 carries vLLM 0\.16\.0, a release the catalog's vLLM table \(generator\/catalog\/packages\.ts\) lacks/);
  assert.match(e.reasons.join(" "), /Nearest that works: nixpkgs 0182a36 \(vLLM 0\.15\.1, PyTorch 2\.9\.1, CUDA 12\.8\/12\.9\), nixpkgs 2c423e0 \(vLLM 0\.24\.0/);
  // The environment naming vllm: the same verdict, with vLLM's reason.
  const env = p.excluded.find((x) => x.name === "serve-env-python313-cuda13_0-sm90-avx2")!;
  assert.match(env.reasons.join(" "), /^vllm: nixpkgs 549bd84 carries vLLM 0\.16\.0/);
});

test("0182a36: vLLM 0.15.1 with CUDA 12.9 is kept, bitsandbytes built for the variant's SM (build-vllm's recipes there), never dropped for bitsandbytes", async () => {
  const m: MatrixInput = { ...withVllm, releases: [{ torch: "2.9.1", nixpkgs: "0182a361324364ae3f436a63005877674cf45efb" }], cuda: ["12.8", "12.9"], gpus: ["90", "120"], environments: {} };
  const p = projectFromMatrix(m);
  const v = p.variants.find((x) => x.name === "vllm-python313-cuda12_9-sm90-avx2")!;
  assert.ok(v, "vLLM 0.15.1 with CUDA 12.9 is offered");
  assert.is(v.version, "0.15.1");
  // The fix is what build-vllm's 47 CUDA 12.9 files do (one capability); CUDA 12.8 needs none.
  assert.ok(v.packageBuild!.fixes!.includes("bnbCapabilities"), v.packageBuild!.fixes!.join(" "));
  assert.not.ok(p.variants.find((x) => x.name === "vllm-python313-cuda12_8-sm90-avx2")!.packageBuild!.fixes?.includes("bnbCapabilities"));
  assert.equal(p.excluded.filter((e) => e.package === "vllm" && /bitsandbytes/.test(e.reasons.join(" "))), []);
  const dir = tempDir("vm-vllm-129-");
  const r = await runMain(["list", "--excluded", "--matrix", writeMatrix(dir, m)], { env: { COLUMNS: "400" } });
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stdout, /vllm-python313-cuda12_9/);
  // pkgs/python-set.nix: the siblings' capabilities, dotless, replace any COMPUTE_CAPABILITY of nixpkgs' bitsandbytes;
  // without the fix the set's bitsandbytes is left as it was.
  const bnbFlags = (fixes: string[]) =>
    nixEvalJson<string[]>(`let
      drv = a: a // { overrideAttrs = f: drv (a // f a); };
      set = { bitsandbytes = drv { cmakeFlags = [ "-DCOMPUTE_BACKEND:STRING=cuda" "-DCOMPUTE_CAPABILITY:STRING=75;80" ]; }; overrideScope = f: let final = set // f final set; in final; };
      sib = { attr = "vllm"; name = "vllm-x"; pythonPackageSet = "python313Packages"; nixpkgsRev = "r"; cudaCapabilities = [ "9.0" "12.1" ]; packageBuild.fixes = [ ${fixes.map((f) => `"${f}"`).join(" ")} ]; };
    in (import ${nixPath(join(ROOT, "pkgs/python-set.nix"))} { pkgs = { python313Packages = set; cudaPackages = { }; }; variant = { name = "x"; nixpkgsRev = "r"; pythonPackageSet = "python313Packages"; }; torch = { }; siblings = [ sib ]; }).bitsandbytes.cmakeFlags or [ ]`);
  assert.equal(bnbFlags(["bnbCapabilities"]), ["-DCOMPUTE_BACKEND:STRING=cuda", "-DCOMPUTE_CAPABILITY=90;121"]);
  assert.equal(bnbFlags(["cudaCrt"]), ["-DCOMPUTE_BACKEND:STRING=cuda", "-DCOMPUTE_CAPABILITY:STRING=75;80"]);
});

test("an environment naming vllm gets the package's verdicts: kept exactly where vLLM is, holding the vLLM variant", () => {
  const vl = new Set(project.variants.filter((v) => v.package === "vllm").map((v) => combo(v.name)));
  const envs = project.variants.filter((v) => v.package === "serve-env");
  assert.equal(new Set(envs.map((v) => combo(v.name))), vl);
  for (const v of envs) {
    assert.ok(v.dependsOn.includes(`vllm-${combo(v.name)}`), v.name);
    assert.equal(v.extras, [], `${v.name}: vllm is a member, not an extra "not in the catalog"`);
  }
  const gone = project.excluded.filter((e) => e.package === "serve-env" && project.variants.some((v) => v.name === `pytorch-${combo(e.name)}`));
  assert.ok(gone.length > 0);
  for (const e of gone) assert.match(e.reasons.join(" "), /^vllm: /);
});

test("SM121 with CUDA 13: TORCH_CUDA_ARCH_LIST 12.0 (the 12.0f family kernels), the CUTLASS list, 6 GiB per job; explain says so", async () => {
  const name = "vllm-python313-cuda13_0-sm121-armv9";
  const v = project.variants.find((x) => x.name === name)!;
  assert.equal(v.cudaCapabilities, ["12.1"]);
  assert.equal(v.packageBuild, {
    env: { TORCH_CUDA_ARCH_LIST: "12.0" },
    cmakeFlags: ["-DTORCH_CUDA_ARCH_LIST=12.0", "-DCUTLASS_NVCC_ARCHS_ENABLED=120"],
    gibPerCompileJob: 6,
    fixes: ["unbreak", "cudaCrt", "cupyCudaPackages"],
  });
  // A capability its list has is compiled as itself (SM90 → 9.0, 90).
  assert.equal(project.variants.find((x) => x.name === "vllm-python313-cuda13_0-sm90-avx2")!.packageBuild!.cmakeFlags, ["-DTORCH_CUDA_ARCH_LIST=9.0", "-DCUTLASS_NVCC_ARCHS_ENABLED=90"]);
  const dir = tempDir("vm-vllm-explain-");
  const r = await runMain(["explain", name, "--matrix", writeMatrix(dir, withVllm)], { env: { COLUMNS: "400" } });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /TORCH_CUDA_ARCH_LIST\s+12\.0/);
  assert.match(r.stdout, /serves 12\.1 by 12\.0 \(its 12\.0f family kernels run on 12\.1\)/);
  assert.match(r.stdout, /memory per job\s+6 GiB/);
  assert.match(r.stdout, /SASS sm_120/);
});

test("the build plan: vLLM's estimate is hours, its builds get one core per 6 GiB of their share of memory", () => {
  assert.ok(VLLM.buildSeconds.seconds >= 3600, "hours, not the default 30 minutes");
  assert.match(VLLM.buildSeconds.source, /NixOS\/nixpkgs#413831/);
  const m = { cpus: 20, memBytes: 128 * 2 ** 30 };
  const rule = jobsRule(m);
  const c = coresForPackage(rule, m, VLLM.gibPerCompileJob!.gib);
  assert.is(c.cores, Math.min(rule.coresPerBuild, Math.floor(128 / rule.jobs / 6)));
  // On a 16 GiB builder: 2 jobs at most, as a third party's 15 GB builder (importing graham33's overlay) was set.
  const small = { cpus: 8, memBytes: 16 * 2 ** 30 };
  assert.is(coresForPackage(jobsRule(small), small, 6).cores, Math.max(1, Math.floor(16 / jobsRule(small).jobs / 6)));
  // The plan (model/plan.ts) estimates the vLLM node with the catalog's hours, on top of its torch.
  const v = project.variants.find((x) => x.name === "vllm-python313-cuda13_0-sm121-armv9")!;
  const t = project.variants.find((x) => x.name === v.dependsOn[0])!;
  const plan = makePlan([t, v]);
  assert.is(plan.nodes.get(v.name)!.estimateS, VLLM.buildSeconds.seconds);
  assert.equal(plan.order, [t.name, v.name]);
  // The derivation asks for a big-parallel builder besides its ISA's gccarch feature (pkgs/variant-attrs.nix adds them).
  assert.ok(v.requiredSystemFeatures.includes("big-parallel") && v.requiredSystemFeatures.some((f) => f.startsWith("gccarch-")), v.requiredSystemFeatures.join(" "));
});

/** detect's reading of a recorded host (tests/fixtures/hosts). */
const hostArgs = (h: string) => {
  const d = join(ROOT, "tests/fixtures/hosts", h);
  return ["--cpuinfo", join(d, "cpuinfo"), "--nvidia-smi", join(d, "nvidia-smi.txt"), "--machine", h === "dgx-spark" ? "aarch64" : "x86_64"];
};

test("verify on a stand-in environment of a modelled vLLM install: the correct SM121 build (sm_120 + sm_120f) passes; a wrong capability fails", async () => {
  const dir = tempDir("vm-vllm-verify-");
  const m = writeMatrix(dir, withVllm);
  const env = { PATH: `${STAND_IN_CUOBJDUMP_DIR}:${process.env.PATH}` };
  const standIn = (v: Variant, name: string, libs = modelLibraries(v)) =>
    writeStandInEnv(join(dir, name), {
      torchVersion: v.torchVersion,
      torchaudioVersion: null,
      extensions: { vllm: v.version },
      cuda: v.cuda,
      cudaCapabilities: v.cudaCapabilities,
      python: v.python,
      machine: v.system.split("-")[0]!,
    }, libs, { cuobjdump: "in-process" });
  const verify = (v: Variant, e: string, host: string) => runMain(["verify", v.name, "--python", e, "--no-gpu", "--matrix", m, ...hostArgs(host)], { env });
  const spark = project.variants.find((x) => x.name === "vllm-python313-cuda13_0-sm121-armv9")!;
  const libs = modelLibraries(spark);
  assert.equal(libs[EXTENSION_LIBS.vllm!]!.map((b) => b.arch), ["sm_120", "sm_120f"]);
  const ok = await verify(spark, standIn(spark, "ok", libs), "dgx-spark");
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /✓ \S*vllm\/_C\.abi3\.so: vLLM's kernels: SASS sm_120 sm_120f, no PTX/);
  assert.match(ok.stdout, /✓ vLLM version: 0\.24\.0/);
  assert.match(ok.stdout, /– vllm\._C's silu_and_mul custom op on CUDA/);
  // Wrong: built for the H100 (sm_90), and built with 12.1 handed as a plain target (sm_121, no 12.0 kernels).
  for (const [label, archs, re] of [
    ["sm90", ["sm_90"], /missing: sm_120.*beyond the promise: sm_90|beyond the promise: sm_90.*missing: sm_120/],
    ["sm121", ["sm_121"], /missing: sm_120.*beyond the promise: sm_121|beyond the promise: sm_121.*missing: sm_120/],
  ] as const) {
    const bad = modelLibraries(spark);
    bad[EXTENSION_LIBS.vllm!] = archs.map((arch) => ({ kind: "elf" as const, arch, names: [...NAMES.vllm] }));
    const r = await verify(spark, standIn(spark, `bad-${label}`, bad), "dgx-spark");
    assert.is(r.status, 1, `${label}: ${r.stdout}`);
    assert.match(r.stdout.replace(/\n\s+/g, " "), new RegExp(`✗ \\S*vllm/_C\\.abi3\\.so: vLLM's kernels: expected SASS sm_120`));
    assert.match(r.stdout.replace(/\n\s+/g, " "), re);
  }
});

test("detect --package vllm: the SM121 variant for a DGX Spark; with CUDA 12.8 only, vLLM's reason, not a variant", async () => {
  const dir = tempDir("vm-vllm-detect-");
  const detect = (m: MatrixInput) => runMain(["detect", "--package", "vllm", "--matrix", writeMatrix(dir, m), ...hostArgs("dgx-spark")], { env: { COLUMNS: "400" } });
  const yes = await detect(withVllm);
  assert.is(yes.status, 0, yes.stdout + yes.stderr);
  assert.match(yes.stdout, /vllm-python313-cuda13_0-sm121-armv9/);
  const no = await detect({ ...withVllm, cuda: ["12.8"] });
  assert.is.not(no.status, 0);
  assert.match(no.stdout + no.stderr, /vLLM 0\.24\.0 builds with CUDA 13\.0 and later, not CUDA 12\.8/);
});

test("detect, install and explain say nixpkgs' verdict against a vLLM pick in one wording (catalog/lib/packages.ts nixpkgsBrokenWarnings); nothing for a pick without vLLM", async () => {
  const dir = tempDir("vm-vllm-broken-");
  const m = writeMatrix(dir, withVllm);
  const name = "vllm-python313-cuda13_0-sm121-armv9";
  const v = project.variants.find((x) => x.name === name)!;
  const words = nixpkgsBrokenWarnings(catalog, closurePackages(v), { rev: v.nixpkgs, cuda: v.cuda, system: v.system });
  assert.is(words.length, 1);
  assert.match(words[0]!, /^nixpkgs calls vLLM's CUDA build broken at this revision; this project builds it anyway with vllm: meta\.broken = false/);
  assert.match(words[0]!, /'The CUDA build is still broken'/);
  // Where nixpkgs does not mark it broken (a pin the fix does not name), or CPU-only: nothing.
  assert.equal(nixpkgsBrokenWarnings(catalog, ["vllm", "pytorch"], { rev: "0".repeat(40), cuda: "13.0", system: "aarch64-linux" }), []);
  assert.equal(nixpkgsBrokenWarnings(catalog, ["vllm", "pytorch"], { rev: v.nixpkgs, cuda: null, system: "aarch64-linux" }), []);
  const flat = (t: string) => t.replace(/\s+/g, " ");
  const said = flat(`warning: ${words[0]}`);
  const run = (...a: string[]) => runMain([...a, "--matrix", m, ...hostArgs("dgx-spark")], { env: { COLUMNS: "100" } });
  for (const pkg of ["vllm", "serve-env"]) {
    const d = await run("detect", "--package", pkg);
    assert.is(d.status, 0, d.stderr);
    assert.ok(flat(d.stdout).includes(said), `detect --package ${pkg}:\n${d.stdout}`);
    // The recordings' paths are the checkout's: counted as short words wherever it is cloned (helpers/cli.ts placeless).
    for (const l of placeless(d.stdout).split("\n")) assert.ok([...l].length <= 100 || !l.includes(" "), `wider than 100: ${l}`);
    const j = JSON.parse((await run("detect", "--package", pkg, "--json")).stdout);
    assert.equal(j.picks[0].warnings, words);
    const i = await run("install", "--dry-run", "--package", pkg, "--backend", "nix", "--dir", join(dir, pkg));
    assert.ok(flat(i.stdout).includes(said), `install --dry-run --package ${pkg}:\n${i.stdout}${i.stderr}`);
  }
  const e = await runMain(["explain", name, "--matrix", m, "--json"]);
  assert.equal(JSON.parse(e.stdout).warnings, words);
  // The same matrix's torch environment holds no vLLM: no warning from either.
  const plain = await run("detect");
  assert.is(plain.status, 0, plain.stderr);
  assert.not.match(plain.stdout, /CUDA build broken/);
  const plainInstall = await run("install", "--dry-run", "--backend", "nix", "--dir", join(dir, "torch-env"));
  assert.not.match(plainInstall.stdout, /CUDA build broken/);
});

test("a vLLM environment's wait counts the dependencies explain says are rebuilt for it (bitsandbytes, cupy, flashinfer): the catalog's figure where it has one, unknown where not", () => {
  const env = project.variants.find((x) => x.name === "serve-env-python313-cuda13_0-sm121-armv9")!;
  const vllm = project.variants.find((x) => x.name === "vllm-python313-cuda13_0-sm121-armv9")!;
  const deps = (w: Wait) => w.offCache.filter((b) => b.what === "dependency");
  // One build at a time at the torch model's reference cores (--cores 24 --jobs 1): the parts add up.
  const one = capacityOf({ cpus: 24, memBytes: null }, { cores: 24, jobs: 1 });
  const w = variantWait(env, project.variants, catalog, one);
  // The packages explain names in its fix rows other than vLLM itself, one build each, before vLLM.
  assert.equal(deps(w).map((b) => b.attr).sort(), ["bitsandbytes", "cupy", "flashinfer"]);
  const bnb = deps(w).find((b) => b.attr === "bitsandbytes")!;
  const figure = onTorch(catalog, "bitsandbytes")!.buildSeconds;
  assert.equal([bnb.seconds, bnb.source], [figure.seconds, figure.source]);
  assert.equal(bnb.variants, [vllm.name]);
  // cupy and flashinfer: no sourced figure in the catalog, so the wait is unknown and names them, never a made-up number.
  for (const a of ["cupy", "flashinfer"]) {
    const b = deps(w).find((x) => x.attr === a)!;
    assert.is(b.seconds, null);
    assert.match(b.source, new RegExp(`no sourced build time for ${a}`));
  }
  assert.is(w.seconds, null);
  assert.equal(w.unknown.map((n) => n.split("|")[0]).sort(), ["cupy", "flashinfer"]);
  assert.match(waitWords(w), /^unknown: more than \S+, with no estimate for cupy, flashinfer$/);
  // The same as explain's reasons for the variant: what is off the cache names them (one model).
  const reasons = modelCacheMisses([vllm], catalog).reasons.get(vllm.name)!.join("\n");
  for (const a of ["bitsandbytes", "cupy", "flashinfer"]) assert.match(reasons, new RegExp(`^${a}: a dependency of vLLM that the catalog fixes here`, "m"));
  // The vLLM variant and its environment share them: one model over both counts each once.
  assert.is(modelCacheMisses([vllm, env], catalog).builds.filter((b) => b.what === "dependency").length, 3);
  // Its torch alone rebuilds none of them.
  assert.equal(deps(variantWait(project.variants.find((x) => x.name === vllm.dependsOn[0])!, project.variants, catalog, one)), []);
  // With figures for all three (a catalog whose vLLM fixes name bitsandbytes only), the wait is a number: exactly
  // bitsandbytes' figure more than with no fix naming a dependency (one build at a time).
  const withFixes = (keep: (attr: string) => boolean) => ({
    ...catalog,
    packagesOnTorch: catalog.packagesOnTorch.map((p) => (p.name === "vllm" ? { ...p, fixes: p.fixes!.filter((f) => f.attr === "vllm" || keep(f.attr)) } : p)),
  });
  const only = variantWait(env, project.variants, withFixes((a) => a === "bitsandbytes"), one);
  const none = variantWait(env, project.variants, withFixes(() => false), one);
  assert.ok(only.seconds !== null && none.seconds !== null);
  assert.is(only.seconds! - none.seconds!, figure.seconds);
  assert.ok(only.parts.some((p) => p.what === "dependency"), "on the critical chain, one build at a time");
});

test.run();
