/**
 * A MODEL of the device code a correct nixpkgs build of a variant holds (tests only), and the stand-in environment
 * that carries it: a Python package directory with a stand-in `torch` (and `torchaudio`) whose libraries are JSON
 * models that the stand-in cuobjdump (tests/fixtures/stand-in-cuobjdump/cuobjdump) prints in the real tool's formats.
 *
 * The model is derived from the catalog's per-origin facts through generator/verify/origins.ts
 * (`deviceCodePromises`), not from a second copy of them: each origin's code goes where nixpkgs' build puts it
 * (torch's own kernels in every torch library that has device code, NCCL in libtorch_cuda.so, MAGMA in
 * libtorch_cuda_linalg.so, NVSHMEM in the same cubins as torch's kernels of libtorch_nvshmem.so), with kernel names
 * of the shapes the real libraries hold (the H100 recording of PyPI torch 2.11.0; NCCL's from its
 * src/device/generate.py and symmetric/generate.py, since PyPI links NCCL dynamically).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deviceCodePromises, type DeviceCodeVariant, type OriginPromise } from "../../generator/verify/origins.ts";
import { ROOT, tempDir } from "./cli.ts";
import { catalogCheckerFacts } from "../../generator/catalog/lib/checker.ts";
import { catalog } from "../../generator/catalog/index.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

/** One fatbin entry of a modelled library ("relptx": PTX in the relocatable fatbin, listed by cuobjdump -all only). */
export interface ModelBlock {
  kind: "elf" | "ptx" | "relptx";
  arch: string;
  names: string[];
}
/** Modelled libraries by path relative to site-packages ("torch/lib/libtorch_cuda.so"). [] = no device code. */
export type ModelLibs = Record<string, ModelBlock[]>;

/**
 * The Python interpreter `python3` runs here (its `sys.executable`; "python3" when that cannot be read). Where python3
 * is a pyenv shim (a bash script: about 0.1 s a start idle, near 1 s on a loaded 2-core machine, against 0.03 s for
 * the interpreter), tests that start Python many times start this one: the same interpreter, without the shim.
 */
export const PYTHON3 = realPython3();

function realPython3(): string {
  const py = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const interpreter = py.status === 0 ? py.stdout.trim() : "";
  return interpreter.startsWith("/") ? interpreter : "python3";
}

/**
 * The stand-in cuobjdump's directory (put it first on PATH, or pass `--cuobjdump=DIR/cuobjdump`): a copy of
 * tests/fixtures/stand-in-cuobjdump/cuobjdump, made once per test process, whose `#!` line names PYTHON3 with `-S`
 * (the stand-in imports the standard library only, so the site-packages' start-up, 40 ms of a 90 ms start here, is
 * skipped). The fixture's `#!/usr/bin/env python3` goes through PATH, and the thousands of calls of the device-code
 * tests would pay a pyenv shim each time. Same script, same output.
 */
export const STAND_IN_CUOBJDUMP_DIR = standInCuobjdumpDir();

function standInCuobjdumpDir(): string {
  const fixture = join(ROOT, "tests/fixtures/stand-in-cuobjdump/cuobjdump");
  if (!PYTHON3.startsWith("/")) return join(ROOT, "tests/fixtures/stand-in-cuobjdump");
  const dir = tempDir("vm-stand-in-cuobjdump-");
  const text = readFileSync(fixture, "utf8").replace(/^#!.*\n/, `#!${PYTHON3} -S\n`);
  writeFileSync(join(dir, "cuobjdump"), text);
  chmodSync(join(dir, "cuobjdump"), 0o755);
  return dir;
}

/**
 * Python run before probe.py by a stand-in interpreter written with `cuobjdump: "in-process"` (writeStandInEnv):
 * runs of the stand-in cuobjdump (argv[0] is STAND_IN_CUOBJDUMP_DIR/cuobjdump, as verify finds it on PATH) are
 * answered in this process by the stand-in's own `answer(argv)` (the function its `main` prints), through
 * `subprocess.run` and `subprocess.Popen` as probe.py calls them; any other command is a real process. probe.py is not
 * changed: only the process per cuobjdump run is gone (30 of them for one variant). tests/verify-fast.test.ts and the
 * first `verify --python` case of tests/device-code.test.ts run the stand-in as real processes.
 */
const IN_PROCESS_CUOBJDUMP = (tool: string) => `# STAND-IN (tests/helpers/device-model.ts): the stand-in cuobjdump answered in this process.
import importlib.util, io, os, subprocess
from importlib.machinery import SourceFileLoader
TOOL = ${JSON.stringify(tool)}
_loader = SourceFileLoader("stand_in_cuobjdump", TOOL)
stand_in = importlib.util.module_from_spec(importlib.util.spec_from_loader(_loader.name, _loader))
_loader.exec_module(stand_in)
_run, _Popen = subprocess.run, subprocess.Popen

def _is_tool(argv):
    return isinstance(argv, (list, tuple)) and len(argv) > 0 and os.path.realpath(str(argv[0])) == os.path.realpath(TOOL)

def run(argv, *a, stdout=None, stderr=None, **kw):
    """subprocess.run, a run of the stand-in cuobjdump answered in-process (probe.py passes text=True)."""
    if not _is_tool(argv):
        return _run(argv, *a, stdout=stdout, stderr=stderr, **kw)
    code, out, err = stand_in.answer(list(argv[1:]))
    return subprocess.CompletedProcess(argv, code, out if stdout == subprocess.PIPE else None, err if stderr == subprocess.PIPE else None)

class _Answered:
    """subprocess.Popen of an in-process stand-in run: stdout a text stream, wait() its status."""
    def __init__(self, argv, stdout):
        self.args = argv
        self.returncode, out, _err = stand_in.answer(list(argv[1:]))
        self.stdout = io.StringIO(out) if stdout == subprocess.PIPE else None
    def wait(self, timeout=None):
        return self.returncode

def Popen(argv, *a, **kw):
    if not _is_tool(argv):
        return _Popen(argv, *a, **kw)
    return _Answered(argv, kw.get("stdout"))

subprocess.run, subprocess.Popen = run, Popen
`;

/** Kernel names per origin, as the real libraries spell them. */
export const NAMES = {
  torch: [
    "_ZN2at6native29vectorized_elementwise_kernelILi2EN48_GLOBAL__N__70991ef6_15_IGammaKernel_cu_cb51a28d10CalcIgammaIdEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN14at_cuda_detail3cub6detail11EmptyKernelIvEEvv",
    "$__internal_0_$__cuda_sm20_div_s64",
  ],
  nvshmemTorch: ["_ZN4c10d17nvshmem_extension9allToAllVEPvS1_Plmi"],
  nvshmem: ["_Z23nvshmemi_transfer_quietIL13threadgroup_t0EEvb"],
  nccl: ["_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"],
  ncclSymmetric: ["_Z35ncclSymkDevKernel_AllReduce_AGxLL_R21ncclSymkDevWorkArgs4K"],
  ncclFp8: ["_Z40ncclSymkDevKernel_AllReduce_AGxLLMC_R_f8e421ncclSymkDevWorkArgs4K"],
  magma: ["_Z11dlascl_fulliidPdi", "_Z20magma_max_nan_kernelIdEviPT_"],
  torchaudio: ["_ZN10torchaudio4rnnt11ReduceMax2DILi256EffEEviPKT0_PT1_"],
  torchvision: ["_ZN6vision3ops61_GLOBAL__N__roi_align_kernel_cu_roi_align_forward_kernel_implIfEEviPKT_S5_iiiiiiPS3_"],
  // flash-attn 2's kernels are templates in namespace `flash` (csrc/flash_attn/src/flash_fwd_kernel.h).
  "flash-attn": ["_ZN5flash15flash_fwd_kernelI23Flash_fwd_kernel_traitsILi64ELi128ELi128ELi4ELb0ELb0EN7cutlass6half_tEEEvv"],
  // xformers' cutlass attention kernels are global functions (xformers/csrc/attention/cuda/fmha/kernels/cutlassF_f16_aligned.cu).
  xformers: ["_Z37fmha_cutlassF_f16_aligned_64x64_rf_sm80N15AttentionKernelIN7cutlass6half_tENS0_4arch5Sm80ELb1ELi64ELi64ELi64ELb1ELb1EE6ParamsE"],
  // bitsandbytes' kernels are global templates (csrc/kernels.cu kQuantizeBlockwise).
  bitsandbytes: ["_Z18kQuantizeBlockwiseIfLi4096ELi4ELi0ELi0EEvPfS0_PhS0_S1_ii"],
  // vLLM's activation kernels are templates in namespace `vllm` (csrc/activation_kernels.cu act_and_mul_kernel).
  vllm: ["_ZN4vllm18act_and_mul_kernelIN3c104HalfEXadL_ZNS_11silu_kernelIS2_EET_RKS4_EELb1EEEvPS4_PS5_i"],
} as const;

/**
 * Where each CUDA extension's modelled library sits (relative to site-packages): flash-attn's extension module beside
 * its package (setup.py `CUDAExtension(name="flash_attn_2_cuda")`), xformers' `_C.so`, bitsandbytes' CUDA library.
 */
export const EXTENSION_LIBS: Record<string, string> = {
  "flash-attn": "flash_attn_2_cuda.cpython-313-x86_64-linux-gnu.so",
  xformers: "xformers/_C.so",
  bitsandbytes: "bitsandbytes/libbitsandbytes_cuda128.so",
  vllm: "vllm/_C.abi3.so",
};

const promiseOf = (ps: OriginPromise[], origin: string) => ps.find((p) => p.origin === origin);

/**
 * The libraries a correct build of `v` holds (torch's, and torchaudio's for a torchaudio variant), per the
 * variant's scope and pin. CPU-only: the same files without device code.
 */
export function modelLibraries(v: DeviceCodeVariant & { dependsOn?: readonly string[] }): ModelLibs {
  const libs: ModelLibs = { "torch/lib/libc10.so": [], "torch/lib/libtorch_cuda.so": [] };
  // What the variant's environment holds: a package built on torch holds itself; the environment every one.
  const withAudio = v.package === "torchaudio" || v.package === "torch-env";
  const withVision = v.package === "torchvision" || v.package === "torch-env";
  if (withAudio) Object.assign(libs, { "torchaudio/lib/_torchaudio.abi3.so": [], "torchaudio/lib/libtorchaudio.abi3.so": [] });
  if (withVision) Object.assign(libs, { "torchvision/image.so": [], "torchvision/_C.so": [] });
  // The CUDA extensions the variant holds: itself, or (an environment) those among its dependsOn.
  const extensions = Object.keys(EXTENSION_LIBS).filter((n) => v.package === n || (v.package === "torch-env" && (v.dependsOn ?? []).some((d: string) => d.startsWith(`${n}-python`))));
  for (const n of extensions) libs[EXTENSION_LIBS[n]!] = [];
  if (v.cuda === null) return libs;
  const ps = deviceCodePromises(v, FACTS);
  // Each extension's code exactly as its build makes it (origins.ts from catalog/lib/packages.ts `cudaBuildOf`).
  for (const n of extensions) {
    const p = promiseOf(ps, n)!;
    // vLLM's CUDA 13 kernel lists also compile family targets of its entries ("12.0f"): a correct build holds them too.
    const family = n === "vllm" ? p.sassAllowed.filter((a) => a.endsWith("f")) : [];
    libs[EXTENSION_LIBS[n]!] = [
      ...[...p.sassRequired, ...family].map((arch): ModelBlock => ({ kind: "elf", arch, names: [...NAMES[n as keyof typeof NAMES]] })),
      // Where the build keeps its PTX (catalog `ptxIn`): bitsandbytes' separable compilation leaves it relocatable.
      ...p.ptx.map((arch): ModelBlock => ({ kind: p.ptxIn === "relocatable" ? "relptx" : "ptx", arch, names: [...NAMES[n as keyof typeof NAMES]] })),
    ];
  }
  const torch = promiseOf(ps, "torch")!;
  const cuda: ModelBlock[] = torch.sassAllowed.map((arch) => ({ kind: "elf", arch, names: [...NAMES.torch] }));
  const nccl = promiseOf(ps, "nccl");
  if (nccl) {
    // Device-linked collectives and -dw symmetric kernels per capability, the FP8 ones on their own target, the
    // symmetric kernels' forward-compatible PTX (toy on the H100 host: the -dc code's PTX is not listed).
    const fp8 = nccl.sassRequired.filter((s) => /[af]$/.test(s));
    for (const arch of nccl.sassRequired.filter((s) => !fp8.includes(s)))
      cuda.push({ kind: "elf", arch, names: [...NAMES.ncclSymmetric] }, { kind: "elf", arch, names: [...NAMES.nccl] });
    for (const arch of fp8) cuda.push({ kind: "elf", arch, names: [...NAMES.ncclFp8] });
    for (const arch of nccl.ptx) cuda.push({ kind: "ptx", arch, names: [...NAMES.ncclSymmetric] });
  }
  libs["torch/lib/libtorch_cuda.so"] = cuda;
  const magma = promiseOf(ps, "magma");
  if (magma) {
    const blocks: ModelBlock[] = [];
    for (const arch of magma.sassRequired) {
      const cap = arch.slice(3);
      if (magma.ptx.includes(`compute_${cap}`)) blocks.push({ kind: "ptx", arch: `compute_${cap}`, names: [...NAMES.magma] });
      blocks.push({ kind: "elf", arch, names: [...NAMES.magma] });
    }
    libs["torch/lib/libtorch_cuda_linalg.so"] = blocks;
  }
  const nvshmem = promiseOf(ps, "nvshmem");
  if (nvshmem)
    libs["torch/lib/libtorch_nvshmem.so"] = nvshmem.sassRequired.map((arch) => ({ kind: "elf", arch, names: [...NAMES.nvshmemTorch, ...NAMES.nvshmem] }));
  if (withAudio) libs["torchaudio/lib/libtorchaudio.abi3.so"] = promiseOf(ps, "torchaudio")!.sassRequired.map((arch) => ({ kind: "elf", arch, names: [...NAMES.torchaudio] }));
  // torchvision's _C.so: its kernels for exactly the capabilities (nixpkgs' TORCH_CUDA_ARCH_LIST without +PTX).
  if (withVision) libs["torchvision/_C.so"] = promiseOf(ps, "torchvision")!.sassRequired.map((arch) => ({ kind: "elf", arch, names: [...NAMES.torchvision] }));
  return libs;
}

/** Write modelled libraries under `sitePackages` (JSON files the stand-in cuobjdump reads). */
export function writeModel(sitePackages: string, libs: ModelLibs): string[] {
  return Object.entries(libs).map(([rel, blocks]) => {
    const p = join(sitePackages, rel);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, JSON.stringify({ model: "variant-matrix device code", blocks }));
    return p;
  });
}

/** What the stand-in torch reports besides its libraries. */
export interface StandInTorch {
  torchVersion: string;
  torchaudioVersion: string | null;
  /** torchvision's version when the environment holds it (a torchvision or environment variant). */
  torchvisionVersion?: string | null;
  /** Versions of the CUDA extensions the environment holds ({ "flash-attn": "2.8.2" }). */
  extensions?: Record<string, string>;
  cuda: string | null;
  cudaCapabilities: string[];
  python: string;
  machine: string;
}

/** How a stand-in environment's interpreter runs the stand-in cuobjdump. */
export interface StandInEnvOptions {
  /** "process" (default): one process per run, as the real tool; "in-process": answered inside the probe's Python. */
  cuobjdump?: "process" | "in-process";
}

/**
 * A stand-in Python environment of a modelled build: `DIR/lib/python3.X/site-packages` with a `torch` (and
 * `torchaudio`) package answering probe.py's questions as a build of the variant would, and `DIR/bin/python3`, a
 * STAND-IN interpreter (this machine's python3 reporting the variant's Python version and machine, since the probe
 * reads them from the interpreter). Returns DIR. With `cuobjdump: "in-process"` the interpreter answers runs of the
 * stand-in cuobjdump in its own process (IN_PROCESS_CUOBJDUMP); by default each run is a process, as the real tool.
 */
export function writeStandInEnv(dir: string, t: StandInTorch, libs: ModelLibs, opts: StandInEnvOptions = {}): string {
  const site = join(dir, `lib/python${t.python}/site-packages`);
  mkdirSync(join(site, "torch/lib"), { recursive: true });
  const sms = t.cudaCapabilities.map((c) => `sm_${c.replace(".", "")}`);
  const nvcc = sms.map((s) => `-gencode;arch=compute_${s.slice(3)},code=${s}`).join(";");
  writeFileSync(
    join(site, "torch/__init__.py"),
    `# STAND-IN torch (tests/helpers/device-model.ts): answers generator/verify/probe.py as a build of a variant would.
__version__ = ${JSON.stringify(t.torchVersion)}
int32 = "int32"
class _T:
    def log_softmax(self, dim):
        return self
def zeros(*a, **k):
    return _T()
def tensor(*a, **k):
    return _T()
class version:
    cuda = ${t.cuda === null ? "None" : JSON.stringify(t.cuda)}
class _C:
    @staticmethod
    def _cuda_getArchFlags():
        return ${JSON.stringify(sms.join(" "))}
class __config__:
    @staticmethod
    def show():
        return "PyTorch built with:\\n  - NVCC architecture flags: ${t.cuda === null ? "" : nvcc}\\n"
class backends:
    class cpu:
        @staticmethod
        def get_cpu_capability():
            return "DEFAULT"
class cuda:
    @staticmethod
    def is_available():
        return False
    @staticmethod
    def device_count():
        return 0
    @staticmethod
    def get_arch_list():
        return []
`,
  );
  if (t.torchaudioVersion) {
    mkdirSync(join(site, "torchaudio/lib"), { recursive: true });
    writeFileSync(join(site, "torchaudio/__init__.py"), `__version__ = ${JSON.stringify(t.torchaudioVersion)}\n`);
    writeFileSync(join(site, "torchaudio/functional.py"), "def forced_align(*a, **k):\n    return None, None\n");
  }
  if (t.torchvisionVersion) {
    mkdirSync(join(site, "torchvision"), { recursive: true });
    writeFileSync(join(site, "torchvision/__init__.py"), `__version__ = ${JSON.stringify(t.torchvisionVersion)}\nfrom . import ops\n`);
    writeFileSync(join(site, "torchvision/ops.py"), "def nms(*a, **k):\n    return None\n");
  }
  // STAND-IN modules of the CUDA extensions: the imports probe.py's load functions make, nothing more.
  const stubs: Record<string, [string, Record<string, string>]> = {
    "flash-attn": ["flash_attn", { "flash_attn_interface.py": "# stand-in: the real one imports flash_attn_2_cuda\n" }],
    xformers: ["xformers", { "_cpp_lib.py": "_cpp_library_load_exception = None\n" }],
    bitsandbytes: ["bitsandbytes", { "functional.py": "# stand-in\n" }],
    // A package directory: Python finds it before the modelled vllm/_C.abi3.so (a JSON file, not an ELF).
    vllm: ["vllm", { "_C/__init__.py": "# stand-in: the real one is the compiled extension that registers torch.ops._C\n" }],
  };
  for (const [pkg, version] of Object.entries(t.extensions ?? {})) {
    const [module, files] = stubs[pkg]!;
    mkdirSync(join(site, module), { recursive: true });
    writeFileSync(join(site, module, "__init__.py"), `__version__ = ${JSON.stringify(version)}\n`);
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(site, module, f, ".."), { recursive: true });
      writeFileSync(join(site, module, f), text);
    }
  }
  writeModel(site, libs);
  mkdirSync(join(dir, "bin"), { recursive: true });
  const py = join(dir, "bin/python3");
  const [maj, min] = t.python.split(".").map(Number);
  let prelude = "";
  if (opts.cuobjdump === "in-process") {
    const file = join(dir, "bin/in_process_cuobjdump.py");
    writeFileSync(file, IN_PROCESS_CUOBJDUMP(join(STAND_IN_CUOBJDUMP_DIR, "cuobjdump")));
    prelude = `runpy.run_path(${JSON.stringify(file)})\n`;
  }
  writeFileSync(
    py,
    `#!/bin/sh
# STAND-IN interpreter: this machine's python3, reporting Python ${t.python} on ${t.machine}, with the stand-in torch first.
PYTHONPATH=${JSON.stringify(site)} exec ${JSON.stringify(PYTHON3)} -c 'import sys, runpy, platform
${prelude}sys.version_info = (${maj}, ${min}, 0, "final", 0)
platform.machine = lambda: ${JSON.stringify(t.machine)}
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$@"
`,
  );
  chmodSync(py, 0o755);
  return dir;
}
