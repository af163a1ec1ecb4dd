// verify in seconds (issue 53): probe.py runs every GPU check in one child Python (a check that raises or ends the
// process sends the rest to a fresh one) and reads cuobjdump in parallel, largest library first, with the same
// results as the probe before (tests/fixtures/probes/h100-verify-fast/probe_old.py, main f48a4ad). Real Python
// processes over stand-in modules and the stand-in cuobjdump; the H100 recording of old against new is replayed.
// No timing is asserted here: bench/verify.ts prints the times.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { PYTHON3, STAND_IN_CUOBJDUMP_DIR } from "./helpers/device-model.ts";

const PROBE_DIR = join(ROOT, "generator/verify");
const REC = join(ROOT, "tests/fixtures/probes/h100-verify-fast");
const HOST = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130");
const CUOBJDUMP = join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump");

/**
 * Stand-in torch and torchaudio whose two GPU checks behave as `rnnt` says ("ok", "raise", "exit"); every import of
 * torch appends a line to DIR/imports, so the test counts the Python processes that ran checks.
 */
function standIns(rnnt: "ok" | "raise" | "exit"): string {
  const dir = tempDir("vm-check-child-");
  mkdirSync(join(dir, "torchaudio"));
  writeFileSync(
    join(dir, "torch.py"),
    `# stand-in torch: any attribute or call is another stand-in value; each import is counted
import os
open(os.path.join(os.path.dirname(__file__), "imports"), "a").write("%d\\n" % os.getpid())
class Any:
    def __getattr__(self, n): return Any()
    def __call__(self, *a, **k): return Any()
def allclose(*a, **k): return True
def equal(*a, **k): return True
def __getattr__(n): return Any()
`,
  );
  writeFileSync(join(dir, "torchaudio", "__init__.py"), "from . import functional\n");
  const body = {
    ok: "    print('a package talking on stdout', end='')\n    return Any()",
    raise: "    raise RuntimeError('CUDA error: an illegal memory access was encountered')",
    exit: "    sys.stderr.write('Error from C at line 62\\n'); sys.stderr.flush(); os._exit(1)",
  }[rnnt];
  writeFileSync(
    join(dir, "torchaudio", "functional.py"),
    `import os, sys\nfrom torch import Any\ndef rnnt_loss(*a, **k):\n${body}\ndef forced_align(*a, **k):\n    return Any(), None\n`,
  );
  return dir;
}

/** Run the checks of torchaudio and torchvision (not installed) through probe.py's CheckChild. */
function checks(dir: string): { results: Record<string, { ok: boolean; error: string | null }>; processes: number } {
  const r = spawnSync(
    PYTHON3,
    ["-c", "import json, probe; r = probe.CheckChild(probe.check_pairs(['torchaudio', 'torchvision'])).collect(); print(json.dumps({'%s:%s' % k: v for k, v in r.items()}))"],
    { env: { ...process.env, PYTHONPATH: `${dir}:${PROBE_DIR}` }, encoding: "utf8" },
  );
  assert.is(r.status, 0, r.stderr);
  const processes = readFileSync(join(dir, "imports"), "utf8").trim().split("\n").length;
  return { results: JSON.parse(r.stdout), processes };
}

test("probe.py: every GPU check runs in one child Python, in table order, and a package's own stdout is no result", () => {
  const { results, processes } = checks(standIns("ok"));
  assert.equal(Object.keys(results), ["torchaudio:rnntLoss", "torchaudio:forcedAlign", "torchvision:nms", "torchvision:roiAlign"]);
  assert.equal(results["torchaudio:rnntLoss"], { ok: true, error: null });
  assert.equal(results["torchaudio:forcedAlign"], { ok: true, error: null });
  assert.match(results["torchvision:nms"]!.error!, /ModuleNotFoundError: No module named 'torchvision'/);
  assert.is(processes, 1, "one torch import for four checks");
});

test("probe.py: a check that raises fails alone and the checks after it run in a fresh child", () => {
  const { results, processes } = checks(standIns("raise"));
  assert.equal(results["torchaudio:rnntLoss"], { ok: false, error: "RuntimeError: CUDA error: an illegal memory access was encountered" });
  assert.equal(results["torchaudio:forcedAlign"], { ok: true, error: null });
  assert.is(processes, 2);
});

test("probe.py: a check that ends the process fails with its status and stderr; the rest still run", () => {
  const { results, processes } = checks(standIns("exit"));
  assert.is(results["torchaudio:rnntLoss"]!.ok, false);
  assert.match(results["torchaudio:rnntLoss"]!.error!, /exited with status 1 during the check, printing no result: Error from C at line 62/);
  assert.equal(results["torchaudio:forcedAlign"], { ok: true, error: null });
  assert.match(results["torchvision:roiAlign"]!.error!, /No module named 'torchvision'/);
  assert.is(processes, 2);
});

/** A stand-in environment: torch with modelled libraries (device code, none, a large one) and torchaudio. */
function standInEnv(): string {
  const site = tempDir("vm-probe-same-");
  mkdirSync(join(site, "torch/lib"), { recursive: true });
  mkdirSync(join(site, "torchaudio/lib"), { recursive: true });
  writeFileSync(
    join(site, "torch/__init__.py"),
    `__version__ = "2.12.0"\nint32 = "int32"\nclass _T:\n    def log_softmax(self, d): return self\ndef zeros(*a, **k): return _T()\ndef tensor(*a, **k): return _T()\nclass version:\n    cuda = "12.9"\nclass _C:\n    @staticmethod\n    def _cuda_getArchFlags(): return "sm_90"\nclass __config__:\n    @staticmethod\n    def show(): return "  - NVCC architecture flags: -gencode;arch=compute_90,code=sm_90\\n"\nclass backends:\n    class cpu:\n        @staticmethod\n        def get_cpu_capability(): return "DEFAULT"\nclass cuda:\n    @staticmethod\n    def is_available(): return False\n    @staticmethod\n    def device_count(): return 0\n`,
  );
  writeFileSync(join(site, "torchaudio/__init__.py"), '__version__ = "2.12.0"\n');
  writeFileSync(join(site, "torchaudio/functional.py"), "def forced_align(*a, **k):\n    return None, None\n");
  const model = (blocks: object[]) => JSON.stringify({ model: "variant-matrix device code", blocks });
  writeFileSync(
    join(site, "torch/lib/libtorch_cuda.so"),
    model([
      { kind: "elf", arch: "sm_90", names: ["_ZN2at6native3fooEv"] },
      { kind: "elf", arch: "sm_90", names: ["_Z17ncclDevKernel_ToyPf"] },
      { kind: "ptx", arch: "sm_90", names: ["_ZN2at6native3barEv"] },
    ]).padEnd(33 << 20, " "), // ≥ 32 MiB: its -symbols is read beside its lists
  );
  writeFileSync(join(site, "torch/lib/libtorch_cuda_linalg.so"), model([{ kind: "elf", arch: "sm_80", names: ["magma_foo"] }]));
  writeFileSync(join(site, "torch/lib/libtorch_cpu.so"), "no device code");
  writeFileSync(
    join(site, "torchaudio/lib/libtorchaudio.so"),
    model([
      { kind: "elf", arch: "sm_90", names: ["_ZN10torchaudio4rnntEv"] },
      { kind: "ptx", arch: "sm_90", names: ["_ZN10torchaudio4rnntEv"] },
      { kind: "relptx", arch: "sm_90", names: ["_ZN10torchaudio4rnntEv"] },
    ]),
  );
  return site;
}

test("probe.py: the parallel cuobjdump reading prints what the probe before it printed, byte for byte", () => {
  const site = standInEnv();
  // A cuobjdump that logs each run, to see the order and count of the runs.
  const log = join(site, "runs.log");
  const tool = join(site, "cuobjdump");
  writeFileSync(tool, `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(CUOBJDUMP)} "$@"\n`);
  chmodSync(tool, 0o755);
  const run = (script: string, args: string[]) => spawnSync(PYTHON3, [script, ...args], { env: { ...process.env, PYTHONPATH: site }, encoding: "utf8" });
  for (const args of [[`--cuobjdump=${tool}`, "--gpu", "--packages=torchaudio,torchvision"], [`--cuobjdump=${join(site, "missing")}`], ["--packages=torchaudio"]]) {
    const [was, now] = [run(join(REC, "probe_old.py"), args), run(join(PROBE_DIR, "probe.py"), args)];
    assert.is(now.status, 0, now.stderr);
    // The probe now also names each library's resolved path and size (`libraries`, what a proof is matched against,
    // verify/proof.ts), before `cuobjdump`: the rest is the same, byte for byte.
    const j = JSON.parse(now.stdout);
    assert.ok(j.libraries[join(site, "torch/lib/libtorch_cuda.so")].bytes === 33 << 20, "libraries: resolved path and size");
    delete j.libraries;
    if (!args.some((a) => a.startsWith("--packages="))) {
      // Without --packages the probe reads every package of the table; vllm (issue 56) joined it after the old probe
      // was recorded.
      assert.ok(j.packages.vllm, "the new probe reads vllm too");
      delete j.packages.vllm;
    }
    assert.is(JSON.stringify(j), JSON.stringify(JSON.parse(was.stdout)), args.join(" "));
  }
  const probe = JSON.parse(run(join(PROBE_DIR, "probe.py"), [`--cuobjdump=${tool}`]).stdout);
  assert.equal(probe.cuobjdump.libs[join(site, "torch/lib/libtorch_cuda.so")].heads, ["at", "ncclDevKernel_Toy"]);
});

test("probe.py: cuobjdump reads the largest library first, up to the CPUs at once", () => {
  const site = standInEnv();
  const log = join(site, "runs.log");
  const tool = join(site, "cuobjdump");
  writeFileSync(tool, `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(CUOBJDUMP)} "$@"\n`);
  chmodSync(tool, 0o755);
  const libs = ["torch/lib/libtorch_cpu.so", "torch/lib/libtorch_cuda_linalg.so", "torch/lib/libtorch_cuda.so"].map((l) => join(site, l));
  // One worker: the runs happen in the order the reader queues them.
  const r = spawnSync(PYTHON3, ["-c", "import sys, json, probe; print(json.dumps(list(probe.DeviceCodeReader(sys.argv[1], workers=1).entries(sys.argv[2:]))))", tool, ...libs], {
    env: { ...process.env, PYTHONPATH: PROBE_DIR },
    encoding: "utf8",
  });
  assert.is(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout), libs, "entries in the order asked");
  const runs = readFileSync(log, "utf8").trim().split("\n");
  const firstOf = (lib: string) => runs.findIndex((l) => l.endsWith(lib));
  assert.equal(runs[0], `-symbols ${libs[2]}`, "the largest library's -symbols first");
  assert.ok(firstOf("libtorch_cuda.so") < firstOf("libtorch_cuda_linalg.so") && firstOf("libtorch_cuda_linalg.so") < firstOf("libtorch_cpu.so"), runs.join("\n"));
  assert.ok(!runs.some((l) => l.startsWith("-symbols") && l.endsWith("libtorch_cpu.so")), "no -symbols for a small library without device code");
  assert.ok(runs.some((l) => l === `-symbols ${libs[1]}`), "-symbols after the lists for a small one with device code");
});

test("the H100 recording: old and new probes printed the same JSON in every mode; verify on it passes every GPU check", async () => {
  assert.equal(readFileSync(join(REC, "equal.txt"), "utf8").trim().split("\n"), ["plain: old == new: True", "gpu: old == new: True", "cuobjdump: old == new: True", "both: old == new: True"]);
  const r = await runMain(["verify", "--json", "--probe", join(REC, "probe.json"), "--cpuinfo", join(HOST, "cpuinfo"), "--nvidia-smi", join(HOST, "nvidia-smi.txt"), "--machine", "x86_64"]);
  const rep = JSON.parse(r.stdout) as { checks: { promise: string; ok: boolean | null; found: string }[] };
  const gpu = rep.checks.filter((c) => /GPU|CUDA kernels|matmul/i.test(c.promise));
  assert.ok(gpu.length >= 2, rep.checks.map((c) => c.promise).join("\n"));
  for (const c of gpu) assert.is(c.ok, true, `${c.promise}: ${c.found}`);
});

test("the probe starts cuobjdump before torch imports: the libraries are found by torch's spec, not torch.__file__", () => {
  const dir = tempDir("vm-probe-early-");
  const torch = join(dir, "site", "torch");
  mkdirSync(join(torch, "lib"), { recursive: true });
  writeFileSync(join(torch, "lib", "libtorch_cuda.so"), "stand-in library\n");
  // A cuobjdump that says when it first ran (a marker file) and lists no device code.
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "cuobjdump"), `#!/bin/sh\ntouch "${dir}/cuobjdump-ran"\necho "cuobjdump info: File does not contain device code" >&2\nexit 1\n`);
  chmodSync(join(bin, "cuobjdump"), 0o755);
  // torch's import waits (up to 10 s) for cuobjdump to have run, and writes what it saw: on the probe of main 7ddb295
  // cuobjdump started only after this import, which then saw nothing.
  writeFileSync(
    join(torch, "__init__.py"),
    `import os, time
d = ${JSON.stringify(dir)}
for _ in range(200):
    if os.path.exists(os.path.join(d, "cuobjdump-ran")): break
    time.sleep(0.05)
open(os.path.join(d, "seen"), "w").write("yes" if os.path.exists(os.path.join(d, "cuobjdump-ran")) else "no")
__version__ = "2.12.0"
class _V: cuda = None
version = _V()
class _Cfg:
    @staticmethod
    def show(): return ""
__config__ = _Cfg()
class _B:
    class cpu:
        @staticmethod
        def get_cpu_capability(): return "AVX2"
backends = _B()
class cuda:
    @staticmethod
    def is_available(): return False
`,
  );
  const r = spawnSync(PYTHON3, [join(PROBE_DIR, "probe.py"), "--cuobjdump", "--packages="], {
    env: { ...process.env, PYTHONPATH: join(dir, "site"), PATH: `${bin}:${process.env.PATH}` },
    encoding: "utf8",
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(readFileSync(join(dir, "seen"), "utf8"), "yes", "cuobjdump ran while torch imported");
  const out = JSON.parse(r.stdout) as { torch: { ok: boolean; libDir: string }; cuobjdump: { libs: Record<string, unknown> } };
  assert.ok(out.torch.ok, JSON.stringify(out.torch));
  // The library read early is the one torch's import says is its own: read once, reported under that path.
  assert.equal(Object.keys(out.cuobjdump.libs), [join(out.torch.libDir, "libtorch_cuda.so")]);
});

test.run();
