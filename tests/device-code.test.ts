// A correct build passes its own proof. The device code of a variant's libraries is checked per origin
// (torch's, torchaudio's own kernels; NCCL, MAGMA, NVSHMEM as nixpkgs links them), through the real probe.py
// with a stand-in cuobjdump that prints the real tool's formats about modelled libraries (tests/helpers/
// device-model.ts, derived from the catalog's facts), and on what cuobjdump printed on an H100 host.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { checkPromise, promisedPackages, type Probe, type PromiseCheck } from "../generator/verify/compare.ts";
import { attribute, originOf } from "../generator/verify/origins.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { Variant } from "../generator/matrix/schema.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import defaultMatrix from "../matrix.ts";
import { modelLibraries, NAMES, PYTHON3, STAND_IN_CUOBJDUMP_DIR, writeModel, writeStandInEnv, type ModelLibs } from "./helpers/device-model.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { catalog } from "../generator/catalog/index.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

const PROBE_DIR = join(ROOT, "generator/verify");
const CUOBJDUMP = join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump");
const TOY = join(ROOT, "tests/fixtures/probes/h100-static-link-toy");

/**
 * The Python that runs probe.py's own cuobjdump reading (`cuobjdump_libs`: DeviceCodeReader, list_archs,
 * read_symbols, ptx_entry_heads, the parsers) with an IN-PROCESS STAND-IN for the cuobjdump processes: the stand-in
 * cuobjdump (tests/fixtures/stand-in-cuobjdump/cuobjdump) is loaded as a module, and probe.py's `subprocess` is
 * replaced by a shim whose `run` and `Popen` answer a run of that tool with the stand-in's `answer(argv)` (the very
 * function its `main` prints), and hand any other command to the real subprocess module. probe.py is not changed;
 * only the process per cuobjdump run is gone (thousands of them here: about 6 per library). The first `verify
 * --python` case below and tests/verify-fast.test.ts still run the stand-in as real processes; the other `verify
 * --python` cases run the real probe.py in a real Python through `verify`, the stand-in answering in that Python
 * (writeStandInEnv's `cuobjdump: "in-process"`).
 * argv: PROBE_DIR TOOL; stdin: the libraries as a JSON list; prints {lib: entry} as JSON.
 */
const IN_PROCESS_DRIVER = `
import importlib.util, io, json, subprocess, sys
from importlib.machinery import SourceFileLoader
sys.path.insert(0, sys.argv[1])
import probe
tool, libs = sys.argv[2], json.load(sys.stdin)
loader = SourceFileLoader("stand_in_cuobjdump", tool)
stand_in = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
loader.exec_module(stand_in)

class InProcessRun:
    """subprocess.CompletedProcess of an in-process stand-in cuobjdump run (probe.py passes text=True)."""
    def __init__(self, argv, stdout, stderr):
        self.args = argv
        self.returncode, out, err = stand_in.answer(list(argv[1:]))
        self.stdout = out if stdout == subprocess.PIPE else None
        self.stderr = err if stderr == subprocess.PIPE else None

class InProcessPopen(InProcessRun):
    """subprocess.Popen of an in-process stand-in cuobjdump run: stdout a text stream, wait() its status."""
    def __init__(self, argv, stdout=None, stderr=None, text=None):
        super().__init__(argv, stdout, stderr)
        self.stdout = None if self.stdout is None else io.StringIO(self.stdout)
    def wait(self, timeout=None):
        return self.returncode

class InProcessSubprocess:
    """probe.py's subprocess module, with runs of the stand-in cuobjdump answered in this process."""
    PIPE, DEVNULL = subprocess.PIPE, subprocess.DEVNULL
    @staticmethod
    def run(argv, stdout=None, stderr=None, text=None, **kw):
        if argv[0] != tool:
            return subprocess.run(argv, stdout=stdout, stderr=stderr, text=text, **kw)
        return InProcessRun(argv, stdout, stderr)
    @staticmethod
    def Popen(argv, stdout=None, stderr=None, text=None, **kw):
        if argv[0] != tool:
            return subprocess.Popen(argv, stdout=stdout, stderr=stderr, text=text, **kw)
        return InProcessPopen(argv, stdout, stderr)

probe.subprocess = InProcessSubprocess
print(json.dumps(probe.cuobjdump_libs(tool, libs)))
`;

/** probe.py's cuobjdump reading (`cuobjdump_libs`) of `libs` in one Python, the stand-in answering in-process (IN_PROCESS_DRIVER). */
async function probeLibs(libs: string[], tool = CUOBJDUMP): Promise<Record<string, NonNullable<Probe["cuobjdump"]>["libs"][string]>> {
  return new Promise((resolve, reject) => {
    const p = spawn(PYTHON3, ["-c", IN_PROCESS_DRIVER, PROBE_DIR, tool]);
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`probe.py exited ${code}: ${err}`))));
    p.stdin.end(JSON.stringify(libs));
  });
}

/** A probe of a modelled correct build of `v` (everything but the device code as the variant promises). */
function probeOf(v: Variant, libs: Probe["cuobjdump"] extends infer C ? (C extends { libs: infer L } ? L : never) : never): Probe {
  return {
    probe: 1,
    python: { version: `${v.python}.0`, executable: "stand-in" },
    machine: v.system === "x86_64-linux" ? "x86_64" : "aarch64",
    torch: {
      ok: true,
      error: null,
      version: v.torchVersion,
      file: "stand-in",
      cuda: v.cuda,
      archFlags: v.cudaCapabilities.map((c) => `sm_${c.replace(".", "")}`),
      nvccArchFlags: v.cudaCapabilities.map((c) => `-gencode;arch=compute_${c.replace(".", "")},code=sm_${c.replace(".", "")}`).join(";"),
      cpuCapability: "DEFAULT",
      libDir: "stand-in/torch/lib",
      libs: [],
    },
    gpu: { available: false, devices: [], matmul: null },
    torchaudio: null,
    // Every package built on torch the variant promises imports, at its version, on the same libtorch.
    packages: Object.fromEntries(
      promisedPackages(v, FACTS).map(([name, version]) => [
        name,
        { ok: true, error: null, version, file: "stand-in", libDir: "stand-in", libsAfterImport: [], newLibtorch: [], gpu: {} },
      ]),
    ),
    cuobjdump: { tool: CUOBJDUMP, error: null, libs },
  };
}

/** detect's reading of a recorded host (tests/fixtures/hosts). */
const hostArgs = (h: string) => {
  const d = join(ROOT, "tests/fixtures/hosts", h);
  return ["--cpuinfo", join(d, "cpuinfo"), "--nvidia-smi", join(d, "nvidia-smi.txt"), "--machine", h === "dgx-spark" ? "aarch64" : "x86_64"];
};
const failed = (cs: PromiseCheck[]) => cs.filter((c) => c.ok === false);

/** Model, write and probe every distinct device-code configuration of `variants` once; returns each variant's probe. */
async function probeModelled(variants: Variant[], mutate?: (v: Variant, libs: ModelLibs) => void): Promise<Map<string, Probe>> {
  const dir = tempDir();
  const keys = new Map<string, { libs: ModelLibs; paths: string[]; rels: string[] }>();
  // Device code does not depend on the ISA or Python, and the environment variant holds the libraries of the
  // pytorch, torchaudio and torchvision variants: one model (the environment's) per torch, pin, CUDA, capabilities
  // and scope.
  const keyOf = (v: Variant) => JSON.stringify([v.torchVersion, v.nixpkgs, v.cuda, v.cudaCapabilities, v.cudaCapabilitiesForPackageSet, mutate ? v.name : ""]);
  for (const v of variants) {
    const k = keyOf(v);
    if (keys.has(k)) continue;
    const libs = modelLibraries({ ...v, package: mutate ? v.package : "torch-env" });
    mutate?.(v, libs);
    const site = join(dir, String(keys.size), "site-packages");
    keys.set(k, { libs, paths: writeModel(site, libs), rels: Object.keys(libs) });
  }
  const all = await probeLibs([...keys.values()].flatMap((x) => x.paths));
  const out = new Map<string, Probe>();
  for (const v of variants) {
    const x = keys.get(keyOf(v))!;
    out.set(v.name, probeOf(v, Object.fromEntries(x.paths.map((p) => [p, all[p]!]))));
  }
  return out;
}

test("a correct build of every CUDA variant of the default and the widest matrix holds every promise the probe can check without a GPU", async () => {
  for (const [label, m] of [["default", defaultMatrix], ["widest", widestMatrix()]] as const) {
    const variants = projectFromMatrix(m).variants.filter((v) => v.cuda !== null);
    assert.ok(variants.length > 0);
    assert.ok(variants.some((v) => v.cudaCapabilitiesForPackageSet) && variants.some((v) => !v.cudaCapabilitiesForPackageSet), `${label}: both scopes`);
    const probes = await probeModelled(variants);
    for (const v of variants) {
      const checks = checkPromise(v, probes.get(v.name)!, FACTS);
      assert.equal(failed(checks), [], `${label} ${v.name}`);
      // The device code was judged per origin: torch's own kernels and NCCL in libtorch_cuda.so, MAGMA in linalg.
      const promises = checks.map((c) => c.promise);
      for (const p of ["torch/lib/libtorch_cuda.so: torch's kernels", "torch/lib/libtorch_cuda.so: bundled NCCL", "torch/lib/libtorch_cuda_linalg.so: bundled MAGMA"])
        assert.ok(promises.includes(p), `${v.name}: ${p}`);
      assert.ok(promises.includes("torchaudio/lib/libtorchaudio.abi3.so: torchaudio's kernels"), v.name);
    }
  }
});

test("each scope's third-party device code is what the catalog says: torch scope nixpkgs' defaults + PTX, package-set scope the variant's", async () => {
  const m = { releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }], python: ["3.13"], cuda: ["12.8", "12.9", "13.0"], gpus: ["90", "110", "121"], isas: ["armv9"], cpuOnly: false };
  const torchScope = projectFromMatrix(m).variants;
  const pkgScope = projectFromMatrix({ ...m, policy: { cudaCapabilitiesScope: "packageSet" } }).variants;
  const line = (v: Variant, probe: Probe, p: string) => checkPromise(v, probe, FACTS).find((c) => c.promise.endsWith(p))!;
  const t = torchScope.find((v) => v.name === "pytorch-python313-cuda12_9-sm90-armv9")!;
  const pt = (await probeModelled([t])).get(t.name)!;
  assert.is(line(t, pt, "libtorch_cuda.so: bundled NCCL").found, "SASS sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_100f sm_103 sm_120 sm_121, PTX compute_121");
  assert.match(line(t, pt, "libtorch_cuda.so: bundled NCCL").expected, /torch scope: nixpkgs' default capabilities of CUDA 12\.9, the cached build/);
  assert.is(line(t, pt, "libtorch_cuda_linalg.so: bundled MAGMA").found.split(", PTX ")[1], "compute_75 compute_80 compute_86 compute_89 compute_90 compute_100 compute_103 compute_120 compute_121");
  assert.is(line(t, pt, "libtorch_nvshmem.so: bundled NVSHMEM").found, "SASS sm_90, no PTX");
  assert.is(line(t, pt, "libtorch_cuda.so: torch's kernels").found, "SASS sm_90 sm_90a, no PTX");
  // CUDA 12.8: NCCL's FP8 kernels are sm_100a, the forward-compatible PTX is compute_120 (12.0 is the last default).
  const t128 = torchScope.find((v) => v.name === "pytorch-python313-cuda12_8-sm121-armv9")!;
  assert.is(line(t128, (await probeModelled([t128])).get(t128.name)!, "libtorch_cuda.so: bundled NCCL").found, "SASS sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_100a sm_120, PTX compute_120");
  // Package-set scope: NCCL for the variant's capability plus its FP8 kernels, no forward-compatible PTX; MAGMA keeps
  // its PTX (CMake without -real).
  const p = pkgScope.find((v) => v.name === "pytorch-python313-cuda12_9-sm90-armv9")!;
  assert.ok(p.cudaCapabilitiesForPackageSet);
  const pp = (await probeModelled([p])).get(p.name)!;
  assert.is(line(p, pp, "libtorch_cuda.so: bundled NCCL").found, "SASS sm_90 sm_100f, no PTX");
  assert.is(line(p, pp, "libtorch_cuda_linalg.so: bundled MAGMA").found, "SASS sm_90, PTX compute_90");
  // Thor (11.0) is forced into the package-set scope even under the torch policy.
  const thor = torchScope.find((v) => v.name === "pytorch-python313-cuda13_0-sm110-armv9")!;
  assert.ok(thor.cudaCapabilitiesForPackageSet);
  assert.is(line(thor, (await probeModelled([thor])).get(thor.name)!, "libtorch_cuda.so: bundled NCCL").found, "SASS sm_100f sm_110, no PTX");
});

test("wrong builds fail, naming the library and the origin", async () => {
  const variants = projectFromMatrix(defaultMatrix).variants;
  const audio = variants.find((v) => v.name === "torchaudio-python313-cuda12_9-sm90-avx512")!;
  const fails = async (v: Variant, mutate: (libs: ModelLibs) => void) => failed(checkPromise(v, (await probeModelled([v], (_v, libs) => mutate(libs))).get(v.name)!, FACTS));
  // A torch whose own kernels also target sm_80.
  const extra = await fails(audio, (libs) => libs["torch/lib/libtorch_cuda.so"]!.push({ kind: "elf", arch: "sm_80", names: ["_ZN2at6native18elementwise_kernelILi128ELi2EEEviT1_"] }));
  assert.equal(extra.map((c) => c.promise), ["torch/lib/libtorch_cuda.so: torch's kernels"]);
  assert.match(extra[0]!.found, /beyond the promise: sm_80/);
  // A torch with its own PTX.
  const ptx = await fails(audio, (libs) => libs["torch/lib/libtorch_cuda.so"]!.push({ kind: "ptx", arch: "compute_90", names: ["_ZN2at6native18elementwise_kernelILi128ELi2EEEviT1_"] }));
  assert.equal(ptx.map((c) => c.promise), ["torch/lib/libtorch_cuda.so: torch's kernels"]);
  // A torchaudio compiled for nixpkgs' default list of CUDA 12.9.
  const defaults = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"];
  const ta = await fails(audio, (libs) => (libs["torchaudio/lib/libtorchaudio.abi3.so"] = defaults.map((arch) => ({ kind: "elf", arch, names: ["_ZN10torchaudio4rnnt11ReduceMax2DILi256EffEEviPKT0_PT1_"] }))));
  assert.equal(ta.map((c) => c.promise), ["torchaudio/lib/libtorchaudio.abi3.so: torchaudio's kernels"]);
  assert.match(ta[0]!.found, /beyond the promise: sm_75 sm_80 sm_86 sm_89 sm_100 sm_103 sm_120 sm_121/);
  // A library without SASS for the variant's GPU (MAGMA missing sm_90).
  const noSass = await fails(audio, (libs) => (libs["torch/lib/libtorch_cuda_linalg.so"] = libs["torch/lib/libtorch_cuda_linalg.so"]!.filter((b) => b.arch !== "sm_90")));
  assert.equal(noSass.map((c) => c.promise).sort(), ["torch/lib/libtorch_cuda_linalg.so: SASS for SM90", "torch/lib/libtorch_cuda_linalg.so: bundled MAGMA"]);
  // NCCL compiled for the variant's capability in the torch scope (the overlay leaked config.cudaCapabilities).
  const leaked = await fails(audio, (libs) => {
    const cuda = libs["torch/lib/libtorch_cuda.so"]!;
    libs["torch/lib/libtorch_cuda.so"] = cuda.filter((b) => !b.names.some((n) => /nccl/.test(n)) || b.arch === "sm_90" || b.arch === "sm_100f");
  });
  assert.equal(leaked.map((c) => c.promise), ["torch/lib/libtorch_cuda.so: bundled NCCL"]);
  assert.match(leaked[0]!.found, /missing: sm_75 sm_80/);
  // MAGMA kernels where nixpkgs does not put them.
  const stray = await fails(audio, (libs) => libs["torchaudio/lib/libtorchaudio.abi3.so"]!.push({ kind: "elf", arch: "sm_90", names: ["_Z20magma_max_nan_kernelIdEviPT_"] }));
  assert.equal(stray.map((c) => c.promise), ["torchaudio/lib/libtorchaudio.abi3.so: bundled MAGMA"]);
  // Stray PTX the probe could not name (cuobjdump -ptx failing) is judged by library.
  const c = (await probeModelled([audio])).get(audio.name)!;
  const lib = Object.entries(c.cuobjdump!.libs).find(([p]) => p.endsWith("libtorch_cuda.so"))!;
  for (const b of lib[1].blocks!) if (b.kind === "ptx") b.heads = null;
  lib[1].blocks!.push({ kind: "ptx", arch: "compute_90", heads: null });
  const un = failed(checkPromise(audio, c, FACTS));
  assert.equal(un.map((x) => x.promise), ["torch/lib/libtorch_cuda.so: PTX whose kernels cuobjdump does not name (attributed by library)"]);
  assert.is(un[0]!.found, "also compute_90");
});

test("verify NAME --python ENV --no-gpu on a stand-in environment of a modelled build: every promise holds; a wrong one exits 1 naming library and origin", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, defaultMatrix);
  const variants = projectFromMatrix(defaultMatrix).variants;
  const env = { PATH: `${STAND_IN_CUOBJDUMP_DIR}:${process.env.PATH}` };
  // The first case runs the stand-in cuobjdump as a process per run (as the real tool), the others in the probe's Python.
  for (const [i, name] of ["torchaudio-python313-cuda12_8-sm121-armv9", "pytorch-python313-cuda13_0-sm110-armv9", "torchaudio-python313-cuda12_9-sm90-avx512"].entries()) {
    const v = variants.find((x) => x.name === name)!;
    const t = { torchVersion: v.torchVersion, torchaudioVersion: v.package === "torchaudio" ? v.version : null, cuda: v.cuda, cudaCapabilities: v.cudaCapabilities, python: v.python, machine: v.system.split("-")[0]! };
    const e = writeStandInEnv(join(dir, name), t, modelLibraries(v), { cuobjdump: i === 0 ? "process" : "in-process" });
    const host = v.system === "aarch64-linux" ? "dgx-spark" : "spr-h100";
    const r = await runMain(["verify", name, "--python", e, "--no-gpu", "--matrix", m, ...hostArgs(host)], { env });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ torch\/lib\/libtorch_cuda\.so: bundled NCCL: SASS/);
    assert.match(r.stdout, /✓ torch\/lib\/libtorch_cuda_linalg\.so: bundled MAGMA: SASS/);
    assert.match(r.stdout, /– a GPU this variant runs on/);
  }
  const v = variants.find((x) => x.name === "torchaudio-python313-cuda12_9-sm90-avx512")!;
  const libs = modelLibraries(v);
  libs["torch/lib/libtorch_cuda.so"]!.push({ kind: "elf", arch: "sm_80", names: ["_ZN2at6native18elementwise_kernelILi128ELi2EEEviT1_"] });
  const e = writeStandInEnv(join(dir, "wrong"), { torchVersion: v.torchVersion, torchaudioVersion: v.version, cuda: v.cuda, cudaCapabilities: v.cudaCapabilities, python: v.python, machine: "x86_64" }, libs, { cuobjdump: "in-process" });
  const r = await runMain(["verify", v.name, "--python", e, "--no-gpu", "--matrix", m, ...hostArgs("spr-h100")], { env });
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /✗ torch\/lib\/libtorch_cuda\.so: torch's kernels: expected SASS sm_90 \(\+ sm_90a\), no PTX .*found SASS sm_80 sm_90 sm_90a, no PTX, beyond the promise: sm_80/);
});

test("verify --python on a stand-in torch-env (torch, torchaudio, torchvision of one variant): every package's promise holds, and without NAME verify takes it for the environment; a torchvision with PTX fails", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, defaultMatrix);
  const variants = projectFromMatrix(defaultMatrix).variants;
  const env = { PATH: `${STAND_IN_CUOBJDUMP_DIR}:${process.env.PATH}` };
  const v = variants.find((x) => x.name === "torch-env-python313-cuda12_9-sm121-armv9")!;
  const t = { torchVersion: v.torchVersion, torchaudioVersion: v.onTorchVersions.torchaudio!, torchvisionVersion: v.onTorchVersions.torchvision!, cuda: v.cuda, cudaCapabilities: v.cudaCapabilities, python: v.python, machine: "aarch64" };
  const e = writeStandInEnv(join(dir, "env"), t, modelLibraries(v), { cuobjdump: "in-process" });
  const r = await runMain(["verify", v.name, "--python", e, "--no-gpu", "--matrix", m, ...hostArgs("dgx-spark")], { env });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /✓ torchvision version: 0\.27\.1/);
  assert.match(r.stdout, /✓ torchaudio version: 2\.11\.0/);
  assert.match(r.stdout, /✓ \S*torchvision\/_C\.so: torchvision's kernels: SASS sm_121, no PTX/);
  assert.match(r.stdout, /– torchvision\.ops\.nms on CUDA: expected runs/);
  const picked = await runMain(["verify", "--json", "--python", e, "--no-gpu", "--matrix", m, ...hostArgs("dgx-spark")], { env });
  assert.is((JSON.parse(picked.stdout) as { name: string }).name.split("-python")[0], "torch-env", picked.stdout + picked.stderr);
  // The same environment whose torchvision also carries a forward-compatible PTX (as a `+PTX` arch list would).
  const libs = modelLibraries(v);
  libs["torchvision/_C.so"]!.push({ kind: "ptx", arch: "compute_121", names: [...NAMES.torchvision] });
  const w = writeStandInEnv(join(dir, "wrong"), t, libs, { cuobjdump: "in-process" });
  const bad = await runMain(["verify", v.name, "--python", w, "--no-gpu", "--matrix", m, ...hostArgs("dgx-spark")], { env });
  assert.is(bad.status, 1, bad.stdout + bad.stderr);
  assert.match(bad.stdout, /✗ \S*torchvision\/_C\.so: torchvision's kernels: expected SASS sm_121, no PTX .*found SASS sm_121, PTX compute_121/);
});

test("on an H100 host: the toy static link shows device-linked NCCL-like code without listed PTX, -dw code with it, and sm_100f only in -symbols", async () => {
  // The real cuobjdump outputs of tests/fixtures/probes/h100-static-link-toy, replayed through probe.py's parsers.
  const text = readFileSync(join(TOY, "toy2-rdc-dw.txt"), "utf8");
  const section = (mode: string) => text.split(`=== cuobjdump ${mode} libtorchish.so\n`)[1]!.split("\n=== ")[0]!;
  const r = spawnSync(
    PYTHON3,
    ["-c", "import sys, json; sys.path.insert(0, sys.argv[1]); import probe; print(json.dumps([{**b, 'heads': sorted({probe.head_of(n) for n in b['names']})} for b in probe.parse_symbols(sys.stdin.read())]))", PROBE_DIR],
    { input: section("-symbols"), encoding: "utf8" },
  );
  assert.is(r.status, 0, r.stderr);
  const blocks = JSON.parse(r.stdout) as { kind: "elf" | "ptx"; arch: string; heads: string[] }[];
  assert.equal(blocks.map((b) => `${b.kind}:${b.arch}:${b.heads.join(",")}`), [
    "elf:sm_90:at_native_own_kernel",
    "elf:sm_75:ncclSymkDevKernel_AllReduceToy",
    "elf:sm_90:ncclSymkDevKernel_AllReduceToy",
    "elf:sm_120:ncclSymkDevKernel_AllReduceToy",
    "ptx:sm_121:",
    "elf:sm_100f:ncclSymkDevKernel_Fp8Toy",
    "elf:sm_75:ncclDevKernel_Toy,nccl_helper",
    "elf:sm_90:ncclDevKernel_Toy,nccl_helper",
    "elf:sm_120:ncclDevKernel_Toy,nccl_helper",
  ]);
  assert.match(section("--list-elf"), /libtorchish\.5\.sm_100\.cubin/);
  assert.equal(section("--list-ptx").trim().split("\n"), ["PTX file    1: libtorchish.1.sm_121.ptx"]);
  assert.is(section("-all --list-ptx").trim().split("\n").length, 3, "the -dc objects' PTX is in the relocatable fatbin only");
  // The PTX entry names `cuobjdump -ptx -arch sm_121` gave there name the -dw symmetric kernel.
  assert.match(readFileSync(join(TOY, "toy2-ptx-arch-filter.txt"), "utf8"), /\.visible \.entry _Z30ncclSymkDevKernel_AllReduceToyPf\(/);
  // Attribution: a helper device function of NCCL (nccl_helper) shares its cubin with an NCCL kernel; the kernel decides.
  const heads = [...new Set(blocks.flatMap((b) => b.heads))];
  const a = attribute("/x/torch/lib/libtorch_cuda.so", {
    elf: [],
    ptx: [],
    heads,
    blocks: blocks.map((b) => ({ kind: b.kind, arch: b.kind === "ptx" ? b.arch.replace("sm_", "compute_") : b.arch, heads: b.kind === "ptx" ? [heads.indexOf("ncclSymkDevKernel_AllReduceToy")] : b.heads.map((h) => heads.indexOf(h)) })),
  }, FACTS);
  assert.equal([...a.byOrigin.get("nccl")!.sass].sort(), ["sm_100f", "sm_120", "sm_75", "sm_90"]);
  assert.equal([...a.byOrigin.get("nccl")!.ptx], ["compute_121"]);
  assert.equal([...a.byOrigin.get("torch")!.sass], ["sm_90"]);
});

test("on an H100 host: PyPI torch 2.11.0's libraries attribute as their build made them (NCCL dynamic, MAGMA in linalg, NVSHMEM with torch's kernels)", async () => {
  const rec = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130-symbols/probe.json"), "utf8")) as Probe;
  const libs = rec.cuobjdump!.libs;
  const by = (suffix: string) => {
    const [p, d] = Object.entries(libs).find(([k]) => k.endsWith(suffix))!;
    return attribute(p, d, FACTS).byOrigin;
  };
  const cuda = by("/libtorch_cuda.so");
  assert.equal([...cuda.keys()], ["torch"], "PyPI links NCCL dynamically: no NCCL kernel in libtorch_cuda.so");
  assert.is([...cuda.get("torch")!.sass].length, 12);
  const linalg = by("/libtorch_cuda_linalg.so");
  assert.equal([...linalg.keys()], ["magma"]);
  assert.equal([...linalg.get("magma")!.sass].sort(), ["sm_100", "sm_120", "sm_80", "sm_86", "sm_90"]);
  const nvshmem = by("/libtorch_nvshmem.so");
  assert.equal([...nvshmem.keys()].sort(), ["nvshmem", "torch"]);
  assert.equal([...nvshmem.get("nvshmem")!.sass].sort(), [...nvshmem.get("torch")!.sass].sort(), "device-linked at torch's capabilities");
  const audio = by("/libtorchaudio.abi3.so");
  assert.equal([...audio.keys()], ["torchaudio"]);
  assert.equal([...audio.get("torchaudio")!.ptx], ["compute_120"], "PyPI's torchaudio carries PTX (its arch list ends in +PTX)");
  assert.is(originOf("/x/torch/lib/libtorch_cuda.so", "c10d", FACTS), "torch", "c10d's kernels taking an ncclWindow stay torch's");
});

test.run();
