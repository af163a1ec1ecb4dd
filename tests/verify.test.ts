// `verify` and the shared comparison, replaying what the probe recorded on a real H100 host
// (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130, see its README), plus real child processes for the failure
// paths (no torch, an interpreter killed by SIGILL, a result-* style package directory).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allHold, checkPromise, identify, sassRunsOn, type Probe } from "../generator/verify/compare.ts";
import { allowedSass } from "../generator/verify/origins.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS } from "./helpers/host-model.ts";
import { nixEvalJson, nixInstantiate, runNix } from "./helpers/nix.ts";
import { spawnSync } from "node:child_process";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { CHECKER_FACTS_FORMAT } from "../generator/catalog/lib/checker-facts.ts";
import { renderCheckerBundle, renderCheckerFacts } from "../generator/generate/render/checker.ts";
import { catalog } from "../generator/catalog/index.ts";
import { PYTHON3 } from "./helpers/device-model.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

const H100 = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130");
const probe = JSON.parse(readFileSync(join(H100, "probe.json"), "utf8")) as Probe;
const onDevice = JSON.parse(readFileSync(join(H100, "verify-on-device.json"), "utf8")) as {
  name: string;
  checks: { promise: string; ok: boolean | null }[];
  installationIs: string[];
};
const host = ["--cpuinfo", join(H100, "cpuinfo"), "--nvidia-smi", join(H100, "nvidia-smi.txt"), "--machine", "x86_64"];
const x86Matrix = {
  releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
  python: ["3.13"],
  cuda: ["12.8", "12.9", "13.0"],
  gpus: ["90"],
  isas: ["avx2", "avx512", "avx512bf16", "avx512vnni"],
  cpuOnly: true,
};
const project = projectFromMatrix(x86Matrix);
const variant = (name: string) => project.variants.find((v) => v.name === name)!;

/** A recorded host for the verify runs that read one: their answers never depend on this machine's CPU or GPU. */
const RECORDED = ["--cpuinfo", join(HOSTS, "epyc-nogpu/cpuinfo")];

test("replaying the H100 probe: verify reports what verify printed on the device; unnamed, it picks detect's variant (the shortest wait)", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, x86Matrix);
  // Unnamed, verify checks detect's pick for the host. Since detect ranks by wait (issue 53), that is the CUDA 12.9
  // variant the cache serves, not the CUDA 13.0 one the recording was made against (the device's wheel is cu130):
  // its CUDA promise does not hold on that wheel, and verify says so.
  const picked = await runMain(["verify", "--json", "--probe", join(H100, "probe.json"), ...host, "--matrix", m]);
  assert.is(picked.status, 1, picked.stderr);
  const p = JSON.parse(picked.stdout) as typeof onDevice & { chosenBy: string };
  assert.is(p.chosenBy, "picked by detect for this host");
  assert.match(p.name, /-cuda12_9-sm90-/);
  assert.is(p.checks.find((c) => c.promise === "CUDA of torch")!.ok, false);
  // Named as it was on the device, the verdicts are exactly what verify printed there.
  const r = await runMain(["verify", onDevice.name, "--json", "--probe", join(H100, "probe.json"), ...host, "--matrix", m]);
  assert.is(r.status, 1, r.stderr);
  const rep = JSON.parse(r.stdout) as typeof onDevice & { chosenBy: string };
  assert.is(rep.name, onDevice.name);
  assert.is(rep.chosenBy, "given");
  assert.equal(rep.checks, onDevice.checks);
  // The text report ends with how to install the variant.
  const text = await runMain(["verify", onDevice.name, "--probe", join(H100, "probe.json"), ...host, "--matrix", m, "--org", "acme"]);
  assert.match(text.stdout, new RegExp(`install ${rep.name}:\n  \\$ flox install acme/${rep.name}\n`));
  assert.match(text.stdout, new RegExp(`\n  \\$ npx variant-matrix install ${rep.name}\n`));
  assert.equal(rep.installationIs, []);
  const by = (p: string) => rep.checks.find((c) => c.promise === p)!;
  // An honest verdict on a multi-arch wheel: the GPU, CUDA, torchaudio coupling and kernels hold; the name's
  // Python, torch version and single-capability promises do not.
  assert.is(by("CUDA of torch").ok, true);
  assert.is(by("GPU NVIDIA H100 80GB HBM3 (9.0) runs this variant's code").ok, true);
  assert.is(by("torchaudio loads the variant's own libtorch").ok, true);
  assert.is(by("torchaudio.functional.rnnt_loss on CUDA").ok, true);
  assert.is(by("torchaudio.functional.forced_align on CUDA").ok, true);
  assert.is(by("Python").ok, false);
  assert.is(by("torch version").ok, false);
  assert.is(by("TORCH_CUDA_ARCH_LIST compiled in (torch.cuda.get_arch_list)").ok, false);
  assert.is(by("lib/libtorchaudio.abi3.so: no PTX").ok, false);
});

test("the arch-specific extras rule is data, and it is exactly what a real build carries", () => {
  // The wheel's TORCH_CUDA_ARCH_LIST (torch.cuda.get_arch_list) and its libtorch_cuda.so SASS (cuobjdump on the H100).
  const t = probe.torch as { archFlags: string[]; cuda: string };
  const caps = t.archFlags.map((s) => `${s.slice(3, -1)}.${s.slice(-1)}`);
  const lib = Object.entries(probe.cuobjdump!.libs).find(([p]) => p.endsWith("/libtorch_cuda.so"))![1];
  assert.equal([...allowedSass(caps, t.cuda, FACTS)].sort(), [...lib.elf].sort());
  // CUDA gates: sm_103a and sm_121a need CUDA >= 12.9, sm_110a 13.0.
  assert.equal([...allowedSass(["10.0", "12.0"], "12.8", FACTS)].sort(), ["sm_100", "sm_100a", "sm_120", "sm_120a"]);
  assert.ok(allowedSass(["11.0"], "13.0", FACTS).has("sm_110a"));
  assert.ok(sassRunsOn("sm_90", "9.0") && sassRunsOn("sm_120", "12.1") && !sassRunsOn("sm_120a", "12.1") && !sassRunsOn("sm_90", "10.0"));
});

/** The H100 probe rewritten to be exactly a build of `name` (what a correct variant build would show). */
function faithfulProbe(name: string): Probe {
  const v = variant(name);
  const p = structuredClone(probe);
  p.python.version = `${v.python}.5`;
  const sms = v.cudaCapabilities.map((c) => `sm_${c.replace(".", "")}`);
  p.torch = { ...(p.torch as Extract<Probe["torch"], { ok: true }>), version: v.torchVersion, cuda: v.cuda, archFlags: sms, nvccArchFlags: sms.map((s) => `-gencode;arch=compute_${s.slice(3)},code=${s}`).join(";") };
  for (const d of Object.values(p.cuobjdump!.libs)) if (d.elf.length) {
    d.elf = [...allowedSass(v.cudaCapabilities, v.cuda!, FACTS)];
    d.ptx = [];
  }
  p.torchaudio!.version = v.package === "torchaudio" ? v.version : p.torchaudio!.version;
  return p;
}

test("a probe that keeps the promise passes every check; each broken promise fails its own check", () => {
  const name = "torchaudio-python313-cuda13_0-sm90-avx512bf16";
  const good = faithfulProbe(name);
  const checks = checkPromise(variant(name), good, FACTS, { isaRuns: true });
  assert.ok(allHold(checks), JSON.stringify(checks.filter((c) => c.ok !== true)));
  assert.ok(checks.every((c) => c.ok === true), "nothing left unchecked with a GPU probe");
  // The ISA is not visible in the binary: every ISA variant of the same GPU/CUDA/Python/torch is this installation.
  const who = identify(project.variants.filter((v) => v.package === "torchaudio"), good, FACTS);
  assert.equal(who.matches.sort(), project.variants.filter((v) => v.package === "torchaudio" && v.cuda === "13.0" && v.sm === "90").map((v) => v.name).sort());

  const fails = (mut: (p: Probe) => void, promise: RegExp) => {
    const p = structuredClone(good);
    mut(p);
    const bad = checkPromise(variant(name), p, FACTS).filter((c) => c.ok === false).map((c) => c.promise);
    assert.ok(bad.length > 0 && bad.every((b) => promise.test(b)), `${promise}: ${bad.join(" | ")}`);
  };
  fails((p) => (p.torchaudio!.newLibtorch = ["/nix/store/other-torch/lib/libtorch_cpu.so"]), /own libtorch/);
  fails((p) => (p.torchaudio!.rnntLoss = { ok: false, error: "RuntimeError: no kernel image is available" }), /rnnt_loss/);
  fails((p) => (p.gpu!.devices = [{ name: "NVIDIA A100", capability: "8.0" }]), /runs this variant's code|variant's SM90/);
  fails((p) => (Object.values(p.cuobjdump!.libs).find((d) => d.elf.length)!.ptx = ["compute_90"]), /no PTX/);
  fails((p) => (Object.values(p.cuobjdump!.libs).find((d) => d.elf.length)!.elf.push("sm_80")), /no SASS beyond/);
  fails((p) => ((p.torch as { cuda: string | null }).cuda = null), /CUDA of torch/);
});

test("a CPU-only variant: no GPU promises, and torch must have no CUDA", () => {
  const name = "torchaudio-python313-cpu-avx2";
  const checks = checkPromise(variant(name), probe, FACTS);
  assert.is(checks.find((c) => c.promise === "CPU-only: torch has no CUDA")!.ok, false);
  assert.not.ok(checks.some((c) => /GPU|SASS|PTX/.test(c.promise)));
});

test("the probe's foreign libtorch: a library torch maps late from its own lib directory (through an environment's symlink) is not foreign; another torch's is", () => {
  // What torch maps late, recorded on an H200 (tests/fixtures/probes/h200-late-libs): on its first CUDA linalg op, one
  // more library of its own lib directory.
  const late = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/probes/h200-late-libs/late-libs.json"), "utf8")) as { lib: string; allInOwnDir: boolean; steps: Record<string, { new?: string[] }> };
  const lateNew = Object.values(late.steps).flatMap((s) => s.new ?? []);
  assert.ok(lateNew.length > 0 && late.allInOwnDir && lateNew.every((p) => p.startsWith(`${late.lib}/`)), "the recording has a late mapping from torch's own lib");
  const own = lateNew[0]!.slice(late.lib.length + 1); // libtorch_cuda_linalg.so
  // A real Python runs the probe's foreign_libtorch. Mapping a file (mmap) puts it in /proc/self/maps as loading a
  // shared object does: torch's own late library, and another torch's libtorch_cpu.so.
  const d = tempDir("vm-foreign-");
  for (const dir of ["store-torch/lib", "other-torch/lib", "env/site-packages"]) mkdirSync(join(d, dir), { recursive: true });
  for (const f of [`store-torch/lib/${own}`, "other-torch/lib/libtorch_cpu.so"]) writeFileSync(join(d, f), "x".repeat(4096));
  // The environment's torch is a symlink into the store, as a Nix Python environment's site-packages are.
  symlinkSync(join(d, "store-torch"), join(d, "env/site-packages/torch"));
  const script = [
    "import mmap, sys",
    `sys.path.insert(0, ${JSON.stringify(join(ROOT, "generator/verify"))})`,
    "import probe",
    "before = set(probe.mapped_libs())",
    "held = []",
    "for f in sys.argv[2:]:",
    "    fh = open(f, 'rb'); held.append((fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)))",
    "print('\\n'.join(probe.foreign_libtorch(before, sys.argv[1])))",
  ].join("\n");
  const run = (...files: string[]) => {
    const r = spawnSync(PYTHON3, ["-c", script, join(d, "env/site-packages/torch/lib"), ...files.map((f) => join(d, f))], { encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    return r.stdout.split("\n").filter(Boolean);
  };
  assert.equal(run(`store-torch/lib/${own}`), [], "torch's own, mapped late");
  // The wrong case: another torch's library is named, also beside the own one.
  assert.equal(run(`store-torch/lib/${own}`, "other-torch/lib/libtorch_cpu.so"), [join(d, "other-torch/lib/libtorch_cpu.so")]);
});

test("real processes: no torch, an interpreter killed by SIGILL, a missing interpreter, a result-* package directory", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, x86Matrix);
  const name = "pytorch-python313-cpu-avx2";
  // A real python3 without torch (or with a torch that cannot load: a package directory whose torch raises).
  const pkg = join(dir, "result-pytorch");
  const dep = join(dir, "dep");
  mkdirSync(join(pkg, "lib/python3.13/site-packages/torch"), { recursive: true });
  mkdirSync(join(pkg, "nix-support"), { recursive: true });
  mkdirSync(join(dep, "lib/python3.13/site-packages/helper_mod"), { recursive: true });
  writeFileSync(join(pkg, "nix-support/propagated-build-inputs"), `${dep}\n`);
  writeFileSync(join(dep, "lib/python3.13/site-packages/helper_mod/__init__.py"), "MARK = 'propagated'\n");
  writeFileSync(
    join(pkg, "lib/python3.13/site-packages/torch/__init__.py"),
    "import helper_mod\nraise ImportError('libtorch_cpu.so: cannot open shared object file (' + helper_mod.MARK + ')')\n",
  );
  const r1 = await runMain(["verify", name, "--python", pkg, "--matrix", m, "--no-gpu", ...RECORDED]);
  assert.is(r1.status, 1, r1.stdout + r1.stderr);
  assert.match(r1.stderr, /torch cannot be imported in .*result-pytorch.*ImportError: libtorch_cpu\.so: cannot open shared object file \(propagated\)/);
  assert.not.match(r1.stderr, /Traceback|at .*\.ts:\d+/);

  const sigill = join(dir, "python-sigill");
  writeFileSync(sigill, "#!/bin/sh\nkill -ILL $$\n");
  chmodSync(sigill, 0o755);
  const r2 = await runMain(["verify", name, "--python", sigill, "--matrix", m, ...RECORDED]);
  assert.is(r2.status, 1);
  assert.match(r2.stderr, /killed by SIGILL: illegal instruction: this CPU lacks an instruction the build uses/);

  const r3 = await runMain(["verify", name, "--python", join(dir, "nope"), "--matrix", m, ...RECORDED]);
  assert.is(r3.status, 2);
  assert.match(r3.stderr, /--python: .*nope does not exist/);

  const r4 = await runMain(["verify", "pytorch-python399-cpu-avx2", "--probe", join(H100, "probe.json"), ...host, "--matrix", m]);
  assert.is(r4.status, 2);
  assert.match(r4.stderr, /unknown variant "pytorch-python399-cpu-avx2"/);
});

test("a Python that prints without end: verify keeps a bounded tail of its output and quotes a 30 MB stderr line cut, with its length", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, x86Matrix);
  // 60 MB of stdout in lines, then one line of 30,000,000 characters on stderr, and no result.
  const loud = join(dir, "python-loud");
  writeFileSync(loud, "#!/bin/sh\nyes 'torch is loading' | head -c 60000000\nhead -c 30000000 /dev/zero | tr '\\0' E >&2\nexit 1\n");
  chmodSync(loud, 0o755);
  const r = await runMain(["verify", "pytorch-python313-cpu-avx2", "--python", loud, "--matrix", m, "--no-gpu", ...RECORDED]);
  assert.is(r.status, 1, r.stderr.slice(0, 2000));
  // One message, wrapped to the terminal: its first line at the margin, the rest indented under it.
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.slice(1).filter((l) => !/^\s/.test(l)), [], "one message");
  assert.match(lines.join(" ").replace(/\s+/g, " "), /the probe in .*python-loud printed no result \(exit 1\): E{500}… \(30,000,000 characters, cut\)$/);
  assert.ok(r.stderr.length < 2000, `${r.stderr.length} characters on stderr`);
  // What runProbe kept of it: bounded by PROBE_OUTPUT_KEPT, not by what the Python printed.
  const { PROBE_OUTPUT_KEPT } = await import("../generator/verify/run-probe.ts");
  const { runCommand } = await import("../generator/process.ts");
  const kept = await runCommand([loud], { tail: PROBE_OUTPUT_KEPT });
  assert.ok(kept.stdout.length + kept.stderr.length < 2000, `kept ${kept.stdout.length + kept.stderr.length} characters of 90 MB`);
});

test("Nix checks (release.nix tests.NAME, stand-in): static for every variant, gpuCheck with the cuda feature for CUDA ones; the probe, the compare bundle, its facts and the promise cross the boundary", () => {
  const byRev = `(import ${JSON.stringify(join(ROOT, "tests/fixtures/stand-in-nixpkgs/by-rev.nix"))})`;
  const name = "torchaudio-python313-cuda13_0-sm90-avx512bf16";
  const r = nixEvalJson<{ static: string; gpu: string; gpuFeatures: string[]; staticFeatures: string[]; pkg: string; cpu: string[] }>(`
    let rel = import ${JSON.stringify(join(ROOT, "release.nix"))} { nixpkgs = ${byRev}; }; t = rel.tests.${JSON.stringify(name)}; in {
      static = t.static.drvPath; gpu = t.gpuCheck.drvPath; pkg = rel.${JSON.stringify(name)}.drvPath;
      gpuFeatures = t.gpuCheck.requiredSystemFeatures or [ ]; staticFeatures = t.static.requiredSystemFeatures or [ ];
      cpu = builtins.attrNames rel.tests."pytorch-python313-cpu-avx2";
    }`);
  assert.equal(r.gpuFeatures, ["cuda", "gccarch-cooperlake"], "a GPU builder that runs the variant's ISA (avx512bf16)");
  assert.equal(r.staticFeatures, ["gccarch-cooperlake"], "the static check runs the variant's code too");
  assert.not.ok(r.staticFeatures.includes("cuda"), "the static check needs no GPU");
  assert.equal(r.cpu.sort(), ["recurseForDerivations", "static"]);
  for (const drv of [r.static, r.gpu]) {
    nixInstantiate(`(import ${JSON.stringify(join(ROOT, "release.nix"))} { nixpkgs = ${byRev}; }).tests.${JSON.stringify(name)}.${drv === r.static ? "static" : "gpuCheck"}`, [], { expr: true });
    const req = runNix("nix-store", ["--query", "--requisites", drv]).split("\n");
    assert.ok(req.includes(r.pkg), "the check depends on the variant's own derivation");
    assert.ok(req.some((p) => p.endsWith("-probe.py")), "probe.py");
    const bundle = req.find((p) => p.endsWith("-verify-compare.mjs"))!;
    assert.is(readFileSync(bundle, "utf8"), readFileSync(join(ROOT, "pkgs/verify-compare.mjs"), "utf8"));
    const facts = req.find((p) => p.endsWith("-verify-facts.json"));
    assert.ok(facts, "the facts the bundle judges with are an input of the check");
    assert.is(readFileSync(facts!, "utf8"), readFileSync(join(ROOT, "pkgs/verify-facts.json"), "utf8"));
    const promise = JSON.parse(readFileSync(req.find((p) => p.endsWith(`${name}-promise.json`))!, "utf8"));
    const v = variant(name);
    for (const k of ["name", "package", "version", "torchVersion", "python", "cuda", "sm", "isa", "system", "cudaCapabilities"] as const)
      assert.equal(promise[k], v[k], k);
  }
});

test("the committed compare bundle and its facts are what generate writes, and as a real process they judge like verify", () => {
  const dir = tempDir();
  assert.is(renderCheckerBundle(), readFileSync(join(ROOT, "pkgs/verify-compare.mjs"), "utf8"), "run npm run generate");
  assert.is(renderCheckerFacts(catalog), readFileSync(join(ROOT, "pkgs/verify-facts.json"), "utf8"), "run npm run generate");
  const name = "torchaudio-python313-cuda13_0-sm90-avx512bf16";
  const v = variant(name);
  const promise = join(dir, "promise.json");
  writeFileSync(promise, JSON.stringify(v));
  const bundle = join(ROOT, "pkgs/verify-compare.mjs");
  const facts = join(ROOT, "pkgs/verify-facts.json");
  const run = spawnSync(process.execPath, [bundle, facts, promise, join(H100, "probe.json")], { encoding: "utf8" });
  assert.is(run.status, 1);
  const lines = run.stdout.trim().split("\n");
  const checks = checkPromise(v, probe, FACTS);
  assert.is(lines.length, checks.length + 1);
  checks.forEach((c, i) => assert.ok(lines[i]!.startsWith(`${c.ok ? "✓" : c.ok === false ? "✗" : "–"} ${c.promise}:`), lines[i]));
  const good = join(dir, "good.json");
  writeFileSync(good, JSON.stringify(faithfulProbe(name)));
  assert.is(spawnSync(process.execPath, [bundle, facts, promise, good]).status, 0);
  // Facts of another shape (a bundle and a facts file from different trees), or none: unreadable input, exit 2.
  const old = join(dir, "old-facts.json");
  writeFileSync(old, JSON.stringify({ ...JSON.parse(readFileSync(facts, "utf8")), format: 0 }));
  const stale = spawnSync(process.execPath, [bundle, old, promise, good], { encoding: "utf8" });
  assert.is(stale.status, 2);
  assert.match(stale.stderr, new RegExp(`checker facts: format 0, this checker reads format ${CHECKER_FACTS_FORMAT}`));
  const noFacts = spawnSync(process.execPath, [bundle, promise, good], { encoding: "utf8" });
  assert.is(noFacts.status, 2);
  assert.match(noFacts.stderr, /usage: verify-compare\.mjs FACTS\.json PROMISE\.json PROBE\.json/);
});

// The probe recorded on the H100 with PyPI torchvision 0.26 (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130-torchvision).
const TV = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130-torchvision");
const tvMatrix = {
  releases: [{ torch: "2.11.0", nixpkgs: "a3116115851d68b8952a2a4221cc25a84e56b532" }],
  python: ["3.12"],
  cuda: ["13.0"],
  gpus: ["90"],
  isas: ["avx512"],
  cpuOnly: false,
};

test("replaying the H100 torchvision probe: verify takes the installation for the environment and checks torchvision's promises", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, tvMatrix);
  const r = await runMain(["verify", "--json", "--probe", join(TV, "probe.json"), ...host, "--matrix", m]);
  assert.is(r.status, 1, r.stderr);
  const rep = JSON.parse(r.stdout) as { name: string; checks: { promise: string; ok: boolean | null; found: string }[] };
  assert.is(rep.name, "torch-env-python312-cuda13_0-sm90-avx512", "torch, torchaudio and torchvision import: the environment");
  const by = (p: string) => rep.checks.find((c) => c.promise === p)!;
  // What holds on the real wheel: versions, one libtorch, the CUDA ops against the CPU.
  assert.is(by("torchvision version").ok, true);
  assert.is(by("torchvision loads the variant's own libtorch").ok, true);
  assert.is(by("torchvision.ops.nms on CUDA").ok, true);
  assert.is(by("torchvision.ops.roi_align on CUDA").ok, true);
  assert.is(by("torchaudio.functional.rnnt_loss on CUDA").ok, true);
  // What does not: the wheel's _C.so is multi-arch with a compute_120 PTX (its list ends in +PTX), not sm_90 only.
  const c = by("site-packages/torchvision/_C.so: torchvision's kernels");
  assert.is(c.ok, false);
  assert.match(c.found, /SASS sm_75 sm_80 sm_86 sm_90 sm_100 sm_120, PTX compute_120/);
  assert.is(by("site-packages/torchvision/_C.so: SASS for SM90").ok, true);
});

test("a torchvision variant's promise on the same probe; a failed or missing GPU op is reported, not hidden", () => {
  const p = projectFromMatrix(tvMatrix);
  const v = p.variants.find((x) => x.package === "torchvision")!;
  assert.is(v.version, "0.26.0");
  const tvProbe = JSON.parse(readFileSync(join(TV, "probe.json"), "utf8")) as Probe;
  const ok = checkPromise(v, tvProbe, FACTS);
  assert.ok(!ok.some((c) => /torchaudio/.test(c.promise) && !/libtorchaudio|prefixctc/.test(c.promise)), "a torchvision variant promises nothing about torchaudio");
  const broken = structuredClone(tvProbe);
  broken.packages!.torchvision!.gpu.nms = { ok: false, error: "RuntimeError: CUDA error: no kernel image is available for execution on the device" };
  delete (broken.packages!.torchvision!.gpu as Record<string, unknown>).roiAlign;
  const cs = checkPromise(v, broken, FACTS);
  assert.is(cs.find((c) => c.promise === "torchvision.ops.nms on CUDA")!.ok, false);
  assert.match(cs.find((c) => c.promise === "torchvision.ops.nms on CUDA")!.found, /no kernel image/);
  assert.is(cs.find((c) => c.promise === "torchvision.ops.roi_align on CUDA")!.ok, null, "not run: cannot be checked, never a pass");
  const gone = structuredClone(tvProbe);
  delete gone.packages!.torchvision;
  assert.is(checkPromise(v, gone, FACTS).find((c) => c.promise === "torchvision imports")!.ok, false);
});

// Last, after every test of the file: uvu runs only the tests registered before test.run().
test.run();
