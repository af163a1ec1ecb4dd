#!/usr/bin/env python3
"""variant-matrix probe: what a Python environment's torch and the packages built on it really are.

Runs inside the Python being checked (a variant's Nix check, `variant-matrix verify`, or by hand) and prints one
JSON object on stdout; it judges nothing. The comparison with a variant's promise is generator/verify/compare.ts,
shared by `verify` and the Nix checks of pkgs/checks.nix.

Usage: probe.py [--gpu] [--cuobjdump[=PATH]] [--no-torchaudio] [--packages=torchaudio,torchvision,flash-attn]
       probe.py --check=PACKAGE:KEY | --checks=PACKAGE:KEY,...   (GPU checks in this process: what the child runs)
  --gpu          also run on the GPU: a matmul compared with the CPU result, and each package's CUDA kernels
                 (torchaudio.functional.rnnt_loss and forced_align; torchvision.ops.nms and roi_align: CUDA tensors
                 against the CPU result; flash-attn's flash_attn_func and xformers' memory_efficient_attention in
                 fp16/bf16 against scaled_dot_product_attention's math backend; vLLM's silu_and_mul custom op against
                 torch; bitsandbytes' 8-bit blockwise
                 quantize/dequantize round trip)
  --packages     the packages built on torch to probe (default: every one below that imports; one that is not
                 installed is reported as not importable); --no-torchaudio leaves torchaudio out
  --cuobjdump    list the device code of torch's and each probed package's shared libraries (cuobjdump --list-elf,
                 --list-ptx, -symbols, and -ptx for the .entry names of each PTX arch; and -all --list-elf/--list-ptx,
                 which also reads the relocatable fatbins of -rdc=true objects, where bitsandbytes keeps its PTX and
                 which the CUDA runtime JIT-compiles too); PATH defaults to `cuobjdump` on PATH
The GPU checks of the packages run in one child Python (this script with --checks=PACKAGE:KEY,...; CheckChild), so a
package that ends the process from C (bitsandbytes calls exit(1) when a CUDA call fails) or dies on a signal is that
check's failure, with the exit status and the last line of its stderr, never a probe with no result; the checks after
it go on in a fresh child. The child starts first, and cuobjdump reads the libraries in parallel (DeviceCodeReader:
every run of every library one job, up to the CPUs, largest library first) from the start, before torch imports:
torch's and each package's libraries are found by their import specs (importlib.util.find_spec, which imports
nothing), so the probe takes about the longest of torch's import + CUDA initialisation + the GPU checks and the
longest cuobjdump run, not their sum.
Output shape (every key always present; null where not applicable):
  {"probe": 1, "python": {"version": "3.13.5", "executable": ...}, "machine": "x86_64",
   "torch": {"ok": true, "error": null, "version": "2.12.0", "file": ..., "cuda": "12.8" | null,
             "archFlags": ["sm_90"], "nvccArchFlags": "-gencode;arch=compute_90,code=sm_90" | null,
             "cpuCapability": "AVX512", "libDir": ..., "libs": [mapped libtorch*/libc10* paths]},
   "gpu": {"available": bool, "devices": [{"name": ..., "capability": "9.0"}], "matmul": {"ok", "error",
           "maxAbsDiff"} | null},
   "torchaudio": null (older probes held torchaudio's result here; compare.ts still reads them),
   "packages": {"torchaudio": {"ok", "error", "version", "file", "libDir", "libsAfterImport",
                               "newLibtorch" (mapped by its import and op, outside torch's lib dir: foreign_libtorch),
                               "gpu": {"rnntLoss": {"ok", "error"}, "forcedAlign": {...}}},
                "torchvision": {... "gpu": {"nms": {"ok", "error"}, "roiAlign": {"ok", "error"}}}},
   "libraries": {"<path>": {"real": resolved path, "bytes": size}} (every library of torch and of the probed packages,
                 the ones --cuobjdump reads, with or without it: what a proof's device code is matched against) | null,
   "cuobjdump": {"tool": path | null, "error": str | null,
                 "libs": {"<path>": {"elf": ["sm_90", "sm_90a"], "ptx": ["compute_90"],
                                     "all": {"elf": [...], "ptx": ["compute_90"], "files": [kernel file names]},
                                     "heads": ["at", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ...],
                                     "blocks": [{"kind": "elf", "arch": "sm_100f", "heads": [0, 1]},
                                                {"kind": "ptx", "arch": "compute_121", "heads": [1] | null}]}}} | null}
  `elf`/`ptx` come from --list-elf/--list-ptx (file names: a family-specific sm_100f cubin is listed as sm_100).
  `blocks` come from `cuobjdump -symbols`, one per fatbin entry in its order, with the arch it prints
  (`arch = sm_100f`); `heads` of an ELF block index the library's `heads` table: the first identifier of each
  function's name (`_ZN2at6native…` -> "at", `_Z24ncclSymkDevKernel_Fp8ToyPf` -> "ncclSymkDevKernel_Fp8Toy"),
  which is what tells where code came from (the comparison, not this script, decides). A PTX block carries no
  names in -symbols; its heads come from the `.entry` lines of its arch in `cuobjdump -ptx` (null when that fails).
A torch import that dies (illegal instruction on a CPU without the variant's ISA) kills this process; the caller
reports the signal.
"""
import glob
import importlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys

# libtorch.so, libtorch_cpu.so, libtorch_cuda.so, libc10.so, libc10_cuda.so (not libtorchaudio*.so).
LIB_RE = re.compile(r"/(libtorch(_[a-z_]+)?\.so[.0-9]*|libc10(_[a-z_]+)?\.so[.0-9]*)$")
ARCH_RE = re.compile(r"\.(sm_\d+[af]?|compute_\d+[af]?)\.(cubin|ptx)\b")


def mapped_libs():
    """Paths of libtorch*/libc10* shared objects mapped into this process (/proc/self/maps)."""
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and LIB_RE.search(parts[5]) and parts[5] not in found:
                    found.append(parts[5])
    except OSError:
        pass
    return sorted(found)


def err(e):
    return "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")


def shared_objects(d):
    if not d or not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, n) for n in os.listdir(d) if ".so" in n and os.path.isfile(os.path.join(d, n)))


IDENT_RE = re.compile(r"(\d+)")


def head_of(name):
    """The first identifier of a (possibly Itanium-mangled) function name: `_ZN2at6native3fooEv` -> "at",
    `_Z17ncclDevKernel_ToyPf` -> "ncclDevKernel_Toy", `_ZN57_INTERNAL_36317ce5_…` -> "_INTERNAL_36317ce5_…",
    a `$`-joined alias (`$_ZN13pytorch_flash…$_ZN…`, `$__internal_0_$__cuda_sm20_div_s64`) -> the head of its first
    part, an unmangled name -> itself."""
    if name.startswith("$") and len(name) > 1:
        return head_of(name[1:].split("$", 1)[0])
    if not name.startswith("_Z"):
        return name
    i = 2
    # local entities (_ZZ), nesting (N), cv/ref qualifiers and the `L` of internal linkage precede the first name
    while i < len(name) and name[i] in "ZNLKVrRO":
        i += 1
    if name.startswith("St", i):
        return "std"
    m = IDENT_RE.match(name, i)
    if not m:
        return name
    n = int(m.group(1))
    start = m.end()
    return name[start:start + n] or name


def parse_symbols(text):
    """Blocks of `cuobjdump -symbols` output, in order: [{"kind": "elf"|"ptx", "arch": "sm_90", "names": [...]}]."""
    blocks = []
    cur = None
    for line in text.splitlines():
        if line.startswith("Fatbin elf code:") or line.startswith("Fatbin ptx code:"):
            cur = {"kind": "elf" if "elf" in line else "ptx", "arch": None, "names": []}
            blocks.append(cur)
        elif cur is not None and line.startswith("arch = "):
            cur["arch"] = line.split("=", 1)[1].strip()
        elif cur is not None and line.startswith("STT_FUNC"):
            parts = line.split()
            if len(parts) >= 4:
                cur["names"].append(parts[-1])
    return blocks


def ptx_entry_heads(tool, lib):
    """Heads of the `.entry` names of each PTX arch in `lib` ({"sm_121": [...]}) from one streamed `cuobjdump -ptx`
    (each PTX entry starts with its `arch = sm_XY` header), or None when cuobjdump fails."""
    try:
        p = subprocess.Popen([tool, "-ptx", lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    heads = {}
    arch = None
    for line in p.stdout:
        if line.startswith("arch = "):
            arch = line.split("=", 1)[1].strip()
            heads.setdefault(arch, set())
        elif ".entry" in line and arch is not None:
            m = re.search(r"\.entry\s+([A-Za-z0-9_$]+)", line)
            if m:
                heads[arch].add(head_of(m.group(1)))
    return {a: sorted(h) for a, h in heads.items()} if p.wait() == 0 else None


def read_symbols(tool, lib):
    """`cuobjdump -symbols lib` parsed (parse_symbols), and for a library whose blocks include PTX, the heads of each
    PTX arch's `.entry` names (ptx_entry_heads): (blocks, ptx heads) or None when -symbols fails. One job of
    DeviceCodeReader: -ptx follows -symbols in the same worker, since it runs only where -symbols found PTX."""
    r = subprocess.run([tool, "-symbols", lib], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None
    parsed = parse_symbols(r.stdout)
    return parsed, (ptx_entry_heads(tool, lib) if any(b["kind"] == "ptx" for b in parsed) else {})


def heads_and_blocks(symbols):
    """The head table and blocks of read_symbols' result `symbols`, or (None, None) when it is None."""
    if symbols is None:
        return None, None
    parsed, ptx_heads = symbols
    table = []
    index = {}

    def ix(h):
        if h not in index:
            index[h] = len(table)
            table.append(h)
        return index[h]

    blocks = []
    for b in parsed:
        arch = b["arch"] or "?"
        if b["kind"] == "elf":
            blocks.append({"kind": "elf", "arch": arch, "heads": sorted({ix(head_of(n)) for n in b["names"]})})
        else:
            hs = None if ptx_heads is None else ptx_heads.get(arch)
            blocks.append({"kind": "ptx", "arch": arch.replace("sm_", "compute_"),
                           "heads": None if hs is None else sorted({ix(h) for h in hs})})
    return table, blocks


def list_archs(tool, flag, lib, key, all_fatbins=False):
    """Archs in `cuobjdump [-all] --list-elf|--list-ptx lib` (sorted, de-duplicated; PTX as compute_XY) and the file
    names it printed, each once. Without -all cuobjdump reads the device-linked image (.nv_fatbin) only; with -all it
    also reads the relocatable fatbins (__nv_relfatbin) that `-rdc=true` objects leave behind, which is where
    bitsandbytes' PTX lives (CUDA_SEPARABLE_COMPILATION) and which the CUDA runtime JIT-compiles too."""
    cmd = [tool] + (["-all"] if all_fatbins else []) + [flag, lib]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # cuobjdump exits non-zero on a library without device code ("does not contain device code").
    archs = set()
    names = []
    for line in r.stdout.splitlines():
        m = ARCH_RE.search(line)
        if not m:
            continue
        a = m.group(1)
        archs.add(a if key == "elf" else a.replace("sm_", "compute_"))
        name = line.split(":", 1)[1].strip() if ":" in line else line.strip()
        if name not in names:
            names.append(name)
    return sorted(archs), names


def cpu_count():
    """The CPUs this process may run on (its affinity mask; os.cpu_count() where there is none), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def file_size(path):
    """The size of the file at `path` in bytes (0 when it cannot be read: it sorts last)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# A library this large has its -symbols read beside its lists (DeviceCodeReader), not after them.
SPECULATE_BYTES = 32 << 20
# The cuobjdump runs of one library, each reading the whole file: (job key, flag, list key, -all).
LIST_JOBS = (("elf", "--list-elf", "elf", False), ("ptx", "--list-ptx", "ptx", False),
             ("all-elf", "--list-elf", "elf", True), ("all-ptx", "--list-ptx", "ptx", True))


class DeviceCodeReader:
    """cuobjdump over libraries in parallel: every run of every library (--list-elf, --list-ptx, the same with -all,
    and -symbols followed by -ptx where it found PTX) is one job of a pool of `workers` threads (default: the CPUs
    this process may use), each job a cuobjdump process; libraries are queued largest first, -symbols (the one -ptx
    waits for) before the lists. `add` queues and returns at once, so the reading overlaps the rest of the probe;
    `entries` waits and gives what cuobjdump_libs always gave. -symbols is read only for a library the lists find
    device code in; for one of SPECULATE_BYTES or more (libtorch_cuda.so: 456 MB, seconds a run) it runs beside the
    lists instead of after them, and its result is dropped when they find none. A cuobjdump that cannot be started
    raises OSError from `entries`."""

    def __init__(self, tool, workers=None):
        from concurrent.futures import ThreadPoolExecutor
        self.tool = tool
        self.pool = ThreadPoolExecutor(max_workers=workers or cpu_count())
        self.jobs = {}

    def add(self, libs):
        """Queue every cuobjdump run of `libs` (largest file first; a library queued before is not read again)."""
        for lib in sorted(set(libs) - set(self.jobs), key=lambda p: (-file_size(p), p)):
            jobs = {"symbols": self.pool.submit(read_symbols, self.tool, lib)} if file_size(lib) >= SPECULATE_BYTES else {}
            for job, flag, key, all_fatbins in LIST_JOBS:
                jobs[job] = self.pool.submit(list_archs, self.tool, flag, lib, key, all_fatbins)
            self.jobs[lib] = jobs

    def entry(self, lib):
        """One library's entry (the module docstring's shape), waiting for its runs."""
        jobs = self.jobs[lib]
        entry = {"elf": jobs["elf"].result()[0], "ptx": jobs["ptx"].result()[0], "heads": None, "blocks": None, "all": None}
        # -all: the device-linked image and every relocatable fatbin, de-duplicated per kernel file name.
        rel = {"elf": [], "ptx": [], "files": []}
        for job, key in (("all-elf", "elf"), ("all-ptx", "ptx")):
            rel[key], names = jobs[job].result()
            rel["files"] += names
        entry["all"] = rel
        if entry["elf"] or entry["ptx"] or rel["elf"] or rel["ptx"]:
            entry["heads"], entry["blocks"] = heads_and_blocks(jobs["symbols"].result())
        return entry

    def has_device_code(self, lib):
        """Whether the lists of `lib` (waited for) found any ELF or PTX."""
        return any(self.jobs[lib][job].result()[0] for job, _flag, _key, _all in LIST_JOBS)

    def entries(self, libs):
        """{lib: entry} for `libs` in their order (queued here if not yet), then the pool is shut down."""
        try:
            self.add(libs)
            for lib in libs:
                if "symbols" not in self.jobs[lib] and self.has_device_code(lib):
                    self.jobs[lib]["symbols"] = self.pool.submit(read_symbols, self.tool, lib)
            return {lib: self.entry(lib) for lib in libs}
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)


def cuobjdump_libs(tool, libs):
    """The device code of `libs` ({lib: entry}, the module docstring's shape), read in parallel (DeviceCodeReader)."""
    return DeviceCodeReader(tool).entries(libs)


def audio_load(torch):
    import torchaudio.functional as F
    F.forced_align(torch.zeros(1, 3, 3).log_softmax(-1), torch.tensor([[1]], dtype=torch.int32), blank=0)


def audio_rnnt(torch, ta):
    F = ta.functional
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(1, 4, 3, 5, generator=gen)
    targets = torch.tensor([[1, 2]], dtype=torch.int32)
    lengths = torch.tensor([4], dtype=torch.int32)
    tlen = torch.tensor([2], dtype=torch.int32)
    cpu = F.rnnt_loss(logits, targets, lengths, tlen, blank=0)
    cuda = F.rnnt_loss(logits.cuda(), targets.cuda(), lengths.cuda(), tlen.cuda(), blank=0).cpu()
    return torch.allclose(cpu, cuda, rtol=1e-4, atol=1e-4)


def audio_align(torch, ta):
    F = ta.functional
    gen = torch.Generator().manual_seed(0)
    lp = torch.randn(1, 10, 5, generator=gen).log_softmax(-1)
    tg = torch.tensor([[1, 2, 3]], dtype=torch.int32)
    cpu_path, _ = F.forced_align(lp, tg, blank=0)
    cuda_path, _ = F.forced_align(lp.cuda(), tg.cuda(), blank=0)
    return torch.equal(cpu_path, cuda_path.cpu())


def boxes(torch, n=64):
    gen = torch.Generator().manual_seed(0)
    xy = torch.rand(n, 2, generator=gen) * 100
    wh = torch.rand(n, 2, generator=gen) * 50 + 1
    return torch.cat([xy, xy + wh], 1), torch.rand(n, generator=gen)


def vision_load(torch):
    import torchvision
    torchvision.ops.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)


def vision_nms(torch, tv):
    b, s = boxes(torch)
    cpu = tv.ops.nms(b, s, 0.5)
    cuda = tv.ops.nms(b.cuda(), s.cuda(), 0.5).cpu()
    return torch.equal(cpu, cuda)


def vision_roi_align(torch, tv):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 32, 32, generator=gen)
    rois = torch.tensor([[0, 1.0, 1.0, 20.0, 20.0], [1, 4.0, 2.0, 30.0, 17.0]])
    cpu = tv.ops.roi_align(x, rois, output_size=(5, 5), spatial_scale=1.0, sampling_ratio=2, aligned=True)
    cuda = tv.ops.roi_align(x.cuda(), rois.cuda(), output_size=(5, 5), spatial_scale=1.0, sampling_ratio=2, aligned=True).cpu()
    return torch.allclose(cpu, cuda, rtol=1e-4, atol=1e-5)


def attention_inputs(torch, dtype):
    """q, k, v of shape (batch 2, seqlen 128, heads 4, headdim 64), flash-attn's and xformers' layout: the fp32 CPU
    tensors and their `dtype` copies on the GPU."""
    gen = torch.Generator().manual_seed(0)
    qkv = [torch.randn(2, 128, 4, 64, generator=gen) for _ in range(3)]
    return qkv, [t.to("cuda", dtype) for t in qkv]


def sdpa_math(torch, q, k, v):
    """torch.nn.functional.scaled_dot_product_attention with the math backend, in the (batch, seqlen, heads, dim)
    layout (SDPA takes (batch, heads, seqlen, dim))."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    t = lambda x: x.transpose(1, 2)  # noqa: E731
    with sdpa_kernel(SDPBackend.MATH):
        return t(torch.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v)))


def flash_attn_load(torch):
    # flash_attn_interface imports the flash_attn_2_cuda extension (it has no CPU op).
    import flash_attn.flash_attn_interface  # noqa: F401


def flash_attn_func_check(torch, fa):
    """flash_attn_func in fp16 and bf16 against SDPA's math backend: flash-attn's own test criterion
    (tests/test_flash_attn.py, v2.8.3): max |out - ref32| <= 2 * max |ref_dtype - ref32|, where ref32 is the math
    reference in fp32 and ref_dtype the same in the input dtype."""
    from flash_attn import flash_attn_func
    for dtype in (torch.float16, torch.bfloat16):
        (q, k, v), (qd, kd, vd) = attention_inputs(torch, dtype)
        out = flash_attn_func(qd, kd, vd).float()
        ref32 = sdpa_math(torch, q.cuda(), k.cuda(), v.cuda())
        ref_dt = sdpa_math(torch, qd, kd, vd).float()
        if not float((out - ref32).abs().max()) <= 2 * float((ref_dt - ref32).abs().max()):
            return False
    return True


def xformers_load(torch):
    # xformers/_cpp_lib.py loads the _C extension on import and keeps the failure instead of raising it.
    import xformers
    from xformers import _cpp_lib
    exc = getattr(_cpp_lib, "_cpp_library_load_exception", None)
    if exc is not None:
        raise exc


def xformers_mea_check(torch, xf):
    """xformers.ops.memory_efficient_attention in fp16 and bf16 against SDPA's math backend in fp32, with xformers' own
    forward tolerances (xformers/ops/fmha/common.py ERROR_ATOL / ERROR_RTOL: fp16 4e-3 / 4e-4, bf16 2e-2 / 5e-3)."""
    import xformers.ops
    tol = {torch.float16: (4e-3, 4e-4), torch.bfloat16: (2e-2, 5e-3)}
    for dtype, (atol, rtol) in tol.items():
        (q, k, v), (qd, kd, vd) = attention_inputs(torch, dtype)
        out = xformers.ops.memory_efficient_attention(qd, kd, vd).float()
        if not torch.allclose(out, sdpa_math(torch, q.cuda(), k.cuda(), v.cuda()), atol=atol, rtol=rtol):
            return False
    return True


def bnb_load(torch):
    # bitsandbytes/cextension.py loads libbitsandbytes_<backend>.so with ctypes on import.
    import bitsandbytes.functional  # noqa: F401


def bnb_blockwise_check(torch, bnb):
    """8-bit blockwise quantize/dequantize round trip of a 1024x1024 normal tensor on the GPU, within bitsandbytes' own
    test bounds (tests/test_functional.py test_dynamic_blockwise_quantization, 0.46.1 and 0.48.2: mean absolute error
    < 0.011, mean relative error < 0.018)."""
    import bitsandbytes.functional as F
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(1024, 1024, generator=gen).cuda()
    q, state = F.quantize_blockwise(a)
    back = F.dequantize_blockwise(q, state)
    diff = (a - back).abs()
    return bool(q.is_cuda) and float(diff.mean()) < 0.011 and float((diff / (a.abs() + 1e-8)).mean()) < 0.018


def vllm_load(torch):
    # vllm._C is vLLM's compiled extension: importing it registers its custom ops under torch.ops._C (no model, no
    # download, no engine start).
    import vllm._C  # noqa: F401


def vllm_silu_and_mul_check(torch, vllm):
    """vllm._C's silu_and_mul custom op on the GPU (csrc/activation_kernels.cu: out = silu(x[:, :d]) * x[:, d:]) in
    fp16 against the same computed by torch in fp32, within 1e-2 (vLLM's tests/kernels/core/test_activation.py compares
    its activation ops with torch's within fp16 tolerances). No model is downloaded."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(64, 2 * 512, generator=gen).half().cuda()
    out = torch.empty(64, 512, dtype=torch.float16, device="cuda")
    torch.ops._C.silu_and_mul(out, x)
    xf = x.float()
    ref = torch.nn.functional.silu(xf[:, :512]) * xf[:, 512:]
    return bool(out.is_cuda) and bool(torch.allclose(out.float(), ref, atol=1e-2, rtol=1e-2))


# The packages built on torch this probe knows (generator/catalog/packages.ts names the same packages and GPU check
# keys): package name -> (its Python module, a CPU op or import that loads its extension, its libraries relative to the
# package directory (the first is reported as libDir; "" is the package directory itself; an entry with "*" is a glob,
# e.g. flash-attn's extension installed beside the package in site-packages), {GPU check key: fn(torch, module) -> bool}).
PACKAGES = {
    "torchaudio": ("torchaudio", audio_load, ["lib"], {"rnntLoss": audio_rnnt, "forcedAlign": audio_align}),
    "torchvision": ("torchvision", vision_load, [""], {"nms": vision_nms, "roiAlign": vision_roi_align}),
    "flash-attn": ("flash_attn", flash_attn_load, ["", "../flash_attn_2_cuda*.so"], {"flashAttnFunc": flash_attn_func_check}),
    "xformers": ("xformers", xformers_load, [""], {"memoryEfficientAttention": xformers_mea_check}),
    "bitsandbytes": ("bitsandbytes", bnb_load, [""], {"blockwise8bit": bnb_blockwise_check}),
    "vllm": ("vllm", vllm_load, [""], {"vllmCustomOp": vllm_silu_and_mul_check}),
}


def run_check(name, key):
    """Run one GPU check in this process: {"ok": bool, "error": str | None}."""
    return checked(name, key)[0]


def checked(name, key):
    """run_check's result and whether the check itself raised (its package imported), which may leave the CUDA
    context unusable (a sticky error such as an illegal address): the checks after it then run in a fresh process."""
    import torch
    module, _load, _dirs, checks = PACKAGES[name]
    try:
        mod = __import__(module)
    except Exception as e:  # noqa: BLE001 - the package does not import: nothing ran on the GPU
        return {"ok": False, "error": err(e)}, False
    try:
        return {"ok": bool(checks[key](torch, mod)), "error": None}, False
    except Exception as e:  # noqa: BLE001 - e.g. "no kernel image is available for execution"
        return {"ok": False, "error": err(e)}, True


CHECK_TIMEOUT_S = 600
# What the check child prints before each result line, so a package's own output on stdout is never taken for one.
RESULT_MARK = "variant-matrix-check "


def run_checks(pairs):
    """`--checks=P:K,...` (the child CheckChild starts): run the GPU checks in order in this one process, printing one
    line per result (RESULT_MARK + {"check": "P:K", "ok", "error"}) as each ends; after a check that raised, print
    RESULT_MARK + {"restart": true} and stop, so its parent runs the rest in a fresh process. Returns 0."""
    for name, key in pairs:
        result, raised = checked(name, key)
        sys.stdout.flush()
        print(RESULT_MARK + json.dumps(dict(result, check="%s:%s" % (name, key))))
        sys.stdout.flush()
        if raised:
            print(RESULT_MARK + json.dumps({"restart": True}))
            sys.stdout.flush()
            return 0
    return 0


def has_nvidia_device():
    """Whether the host shows an NVIDIA device node (/dev/nvidia0, …; /dev/dxg under WSL): then the check child is
    started at once, before torch says whether it sees the GPU."""
    return bool(glob.glob("/dev/nvidia[0-9]*")) or os.path.exists("/dev/dxg")


class CheckChild:
    """The GPU checks `pairs` ([(package, key)]) in one child Python (this script, --checks=...), started at once, so
    its torch import and CUDA initialisation overlap the probe's own, and paid once for every check instead of once a
    check. A package that ends the process from C (bitsandbytes calls exit(1) when a CUDA call fails, e.g. with
    CUDA_DISABLE_PTX_JIT=1 and no SASS for the device) or dies on a signal fails the check it was running, with the
    exit status and the last line of the child's stderr; a check over CHECK_TIMEOUT_S is stopped and fails; a check
    that raised ends the child (run_checks). In each case the checks after it go on in a fresh child: each check's
    verdict is the one it had in a process of its own."""

    def __init__(self, pairs):
        self.results = {}
        self.pending = []
        self.proc = None
        self.start(list(pairs))

    def start(self, pairs):
        """Start a child for `pairs` (none when empty), with threads that read its stdout lines and stderr."""
        import queue
        import threading
        self.pending = pairs
        self.proc = None
        if not pairs:
            return
        cmd = [sys.executable, os.path.abspath(__file__), "--checks=" + ",".join("%s:%s" % p for p in pairs)]
        try:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            for p in pairs:
                self.results[p] = {"ok": False, "error": err(e)}
            self.pending = []
            return
        self.lines = queue.Queue()
        self.stderr = []
        self.readers = [threading.Thread(target=self.read_stdout, args=(self.proc.stdout, self.lines), daemon=True),
                        threading.Thread(target=self.stderr.extend, args=(self.proc.stderr,), daemon=True)]
        for t in self.readers:
            t.start()

    @staticmethod
    def read_stdout(stream, lines):
        """Queue the child's result lines (parsed), then None at its end."""
        for line in stream:
            i = line.find(RESULT_MARK)
            if i >= 0:
                try:
                    lines.put(json.loads(line[i + len(RESULT_MARK):]))
                except ValueError:
                    pass
        lines.put(None)

    def ended_without_result(self):
        """The failure of the check the child was running when it ended without printing its result."""
        rc = self.proc.wait()
        for t in self.readers:
            t.join()
        how = ("was killed by signal %d" % -rc) if rc < 0 else ("exited with status %d" % rc)
        tail = [x.strip() for x in self.stderr if x.strip()]
        return {"ok": False, "error": "the process %s during the check, printing no result%s" % (
            how, (": " + tail[-1][:300]) if tail else "")}

    def fail_current_and_restart(self, result):
        self.results[self.pending[0]] = result
        self.start(self.pending[1:])

    def collect(self):
        """Wait for every check: {(package, key): {"ok": bool, "error": str | None}}."""
        import queue
        while self.pending:
            try:
                got = self.lines.get(timeout=CHECK_TIMEOUT_S)
            except queue.Empty:
                self.stop()
                self.fail_current_and_restart({"ok": False, "error": "the check ran over %d s and was stopped" % CHECK_TIMEOUT_S})
                continue
            if got is None:
                self.fail_current_and_restart(self.ended_without_result())
            elif got.get("restart"):
                self.stop()
                self.start(self.pending)
            elif got.get("check") == "%s:%s" % self.pending[0]:
                self.results[self.pending.pop(0)] = {"ok": bool(got.get("ok")), "error": got.get("error")}
        self.stop()
        return self.results

    def stop(self):
        """End the child now (when its results are not wanted, or it ran over time) and reap it."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for t in self.readers:
                t.join()
            self.proc = None


def run_check_in_child(name, key):
    """Run one GPU check of a package in a child Python (CheckChild), so that a package which ends the process from C
    or dies on a signal is reported as that check's failure, never as a probe with no result.
    Returns {"ok": bool, "error": str | None}."""
    return CheckChild([(name, key)]).collect()[(name, key)]


def check_mode(argv):
    """`--check=PACKAGE:KEY` (one check) or `--checks=P:K,P:K` (several in order, run_checks): run them in this
    process and print the results. Returns the exit code, or None when argv asks for no check."""
    for a in argv:
        if a.startswith("--check=") or a.startswith("--checks="):
            pairs = [tuple(x.split(":", 1)) for x in a.split("=", 1)[1].split(",") if x]
            bad = [p for p in pairs if len(p) != 2 or p[0] not in PACKAGES or p[1] not in PACKAGES[p[0]][3]]
            if bad or not pairs:
                sys.stderr.write("probe.py: unknown check %s\n" % a)
                return 2
            if a.startswith("--checks="):
                return run_checks(pairs)
            sys.stdout.flush()
            print(json.dumps(run_check(*pairs[0])))
            sys.stdout.flush()
            return 0
    return None


def check_pairs(names):
    """The GPU checks of the packages `names`, in table order: [(package, key)]."""
    return [(n, k) for n in names for k in PACKAGES[n][3]]


def wanted_packages(argv):
    """The packages to probe (--packages=a,b; --no-torchaudio), or None after naming an unknown one on stderr."""
    wanted = list(PACKAGES)
    for a in argv:
        if a.startswith("--packages="):
            wanted = [p for p in a.split("=", 1)[1].split(",") if p]
    if "--no-torchaudio" in argv:
        wanted = [p for p in wanted if p != "torchaudio"]
    unknown = [p for p in wanted if p not in PACKAGES]
    if unknown:
        sys.stderr.write("probe.py: unknown package(s) %s; known: %s\n" % (", ".join(unknown), ", ".join(PACKAGES)))
        return None
    return wanted


def cuobjdump_tool(argv):
    """--cuobjdump (found on PATH: its path, or "" when absent) or --cuobjdump=PATH; None when not asked for."""
    tool = None
    for a in argv:
        if a == "--cuobjdump":
            tool = shutil.which("cuobjdump") or ""
        elif a.startswith("--cuobjdump="):
            tool = a.split("=", 1)[1]
    return tool


def probe_torch(torch):
    """torch's own facts: version, CUDA, the arch list compiled in, nvcc's flags, the CPU capability, its libraries."""
    t = {"ok": True, "error": None, "version": torch.__version__, "file": torch.__file__,
         "cuda": torch.version.cuda, "archFlags": [], "nvccArchFlags": None, "cpuCapability": None,
         "libDir": os.path.join(os.path.dirname(torch.__file__), "lib"), "libs": mapped_libs()}
    if torch.version.cuda:
        try:
            # The arch list compiled in (TORCH_CUDA_ARCH_LIST); torch.cuda.get_arch_list() is [] without a GPU.
            t["archFlags"] = sorted(set(torch._C._cuda_getArchFlags().split()))
        except Exception:  # noqa: BLE001
            t["archFlags"] = sorted(set(torch.cuda.get_arch_list()))
    m = re.search(r"NVCC architecture flags: (\S*)", torch.__config__.show())
    t["nvccArchFlags"] = m.group(1) if m else None
    try:
        t["cpuCapability"] = torch.backends.cpu.get_cpu_capability()
    except Exception as e:  # noqa: BLE001
        t["cpuCapability"] = None
        t["error"] = err(e)
    return t


def probe_gpu(torch, gpu):
    """The GPUs torch sees (name, capability) and, with --gpu, a 512x512 float32 matmul checked against the CPU's."""
    g = {"available": False, "devices": [], "matmul": None}
    try:
        g["available"] = bool(torch.cuda.is_available())
        for i in range(torch.cuda.device_count() if g["available"] else 0):
            maj, mnr = torch.cuda.get_device_capability(i)
            g["devices"].append({"name": torch.cuda.get_device_name(i), "capability": "%d.%d" % (maj, mnr)})
    except Exception as e:  # noqa: BLE001
        g["error"] = err(e)
    if gpu and g["available"]:
        try:
            torch.backends.cuda.matmul.allow_tf32 = False
            gen = torch.Generator().manual_seed(0)
            a = torch.randn(512, 512, generator=gen, dtype=torch.float32)
            b = torch.randn(512, 512, generator=gen, dtype=torch.float32)
            ref = a @ b
            got = (a.cuda() @ b.cuda()).cpu()
            diff = float((got - ref).abs().max())
            g["matmul"] = {"ok": bool(torch.allclose(got, ref, rtol=1e-3, atol=1e-3)), "error": None, "maxAbsDiff": diff}
        except Exception as e:  # noqa: BLE001 - e.g. "no kernel image is available for execution on the device"
            g["matmul"] = {"ok": False, "error": err(e), "maxAbsDiff": None}
    return g


def foreign_libtorch(before, torch_lib):
    """The libtorch*/libc10* objects mapped since `before` (a set of mapped_libs paths) that are not torch's own: not
    in its lib directory `torch_lib`, the two compared resolved (/proc/self/maps names a file by its real path, while
    torch.__file__ may be under an environment's symlinks). torch maps some of its own only when first used:
    libtorch_cuda_linalg.so on the first CUDA linalg op (torch 2.11.0+cu130 on an H200, 2026-11-28), which a
    package's import or op may be the first to run."""
    own = os.path.realpath(torch_lib)
    return sorted(p for p in mapped_libs() if p not in before and os.path.dirname(os.path.realpath(p)) != own)


def probe_package(torch, name):
    """One package built on torch: it imports, one CPU op runs, the libtorch it maps (its GPU checks, in `gpu`, are
    filled in by probe_packages). Returns its result and the shared objects with its device code (for cuobjdump)."""
    module, load, lib_dirs, _checks = PACKAGES[name]
    before = set(mapped_libs())
    r = {"ok": False, "error": None, "version": None, "file": None, "libDir": None, "libsAfterImport": [],
         "newLibtorch": [], "gpu": {}}
    try:
        mod = __import__(module)
    except Exception as e:  # noqa: BLE001
        r["error"] = err(e)
        return r, []
    if getattr(mod, "__file__", None) is None:
        # A directory without __init__.py imports as a namespace package: not the package.
        r["error"] = "ImportError: %s is a namespace package (no __init__.py): not an installed %s" % (module, name)
        return r, []
    r["ok"] = True
    r["version"] = getattr(mod, "__version__", None)
    r["file"] = mod.__file__
    pkg_dir = os.path.dirname(mod.__file__)
    r["libDir"] = os.path.join(pkg_dir, lib_dirs[0]) if lib_dirs[0] else pkg_dir
    try:
        # Run one CPU op of the extension so that it is loaded (it links libtorch): which libtorch does the
        # dynamic loader map for it?
        load(torch)
    except Exception as e:  # noqa: BLE001
        r["error"] = "CPU op: " + err(e)
    r["libsAfterImport"] = mapped_libs()
    r["newLibtorch"] = foreign_libtorch(before, os.path.join(os.path.dirname(torch.__file__), "lib"))
    return r, package_libs(name, pkg_dir)


def package_libs(name, pkg_dir):
    """The shared objects of package `name` (PACKAGES' library directories) under its directory `pkg_dir`."""
    libs = []
    for d in PACKAGES[name][2]:
        if "*" in d:
            libs += sorted(p for p in glob.glob(os.path.join(pkg_dir, d)) if os.path.isfile(p))
        else:
            libs += shared_objects(os.path.join(pkg_dir, d) if d else pkg_dir)
    return libs


def spec_dir(module):
    """The directory a top-level `module` would be imported from, found without importing it (its spec:
    importlib.util.find_spec reads the path entries only), or None when it is not installed or has no file."""
    try:
        import importlib.util
        spec = importlib.util.find_spec(module)
    except Exception:  # noqa: BLE001 - a broken path entry: found after the import instead
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return os.path.dirname(spec.origin)


def read_before_import(reader, wanted):
    """Queue on `reader` the libraries of torch and of each wanted package where their specs put them, before any of
    them is imported: cuobjdump then reads while torch imports and the GPU child runs, instead of after the import.
    What the imports later find elsewhere is queued then (DeviceCodeReader.add reads no library twice)."""
    torch_dir = spec_dir("torch")
    if torch_dir is not None:
        reader.add(shared_objects(os.path.join(torch_dir, "lib")))
    for name in wanted:
        d = spec_dir(PACKAGES[name][0])
        if d is not None:
            reader.add(package_libs(name, d))


def probe_packages(torch, wanted, gpu_checks, checker, reader):
    """Every wanted package (probe_package), its libraries queued on the cuobjdump `reader` (None: no cuobjdump) as
    each is found; with `gpu_checks`, the GPU checks of those that import, from `checker` (the CheckChild started at
    once, or one started here). A checker whose results are not wanted is stopped. Returns ({package: result}, libs)."""
    results, libs = {}, []
    for name in wanted:
        results[name], own = probe_package(torch, name)
        libs += own
        if reader is not None:
            reader.add(own)
    needed = check_pairs([n for n in wanted if results[n]["ok"]]) if gpu_checks else []
    if needed:
        got = (checker or CheckChild(needed)).collect()
        for name, key in needed:
            results[name]["gpu"][key] = got[(name, key)]
    elif checker is not None:
        checker.stop()
    return results, libs


def probe_extras(argv, torch_lib):
    """A named environment's extras (--promise=FILE, the promise pkgs/checks.nix writes: "extras" = [{attr, modules,
    dist}]): each imports, its distribution's version, and the libtorch its import maps beside the variant's.
    `verify` on a host passes --extras=ATTR,... instead (modules and distribution named as the attribute).
    Returns {attr: result}, or None when argv names no extras (the last such argument wins)."""
    found = None
    for a in argv:
        extras = None
        if a.startswith("--promise="):
            with open(a.split("=", 1)[1]) as f:
                extras = json.load(f).get("extras") or []
        elif a.startswith("--extras="):
            extras = [{"attr": x} for x in a.split("=", 1)[1].split(",") if x]
        if extras is None:
            continue
        found = {}
        for x in extras:
            before = set(mapped_libs())
            r = {"ok": False, "error": None, "version": None, "newLibtorch": []}
            try:
                for m in x.get("modules") or [x["attr"]]:
                    importlib.import_module(m)
                r["ok"] = True
            except Exception as e:  # noqa: BLE001 - any import failure is a finding
                r["error"] = err(e)
            try:
                r["version"] = importlib.metadata.version(x.get("dist") or x["attr"])
            except Exception:  # noqa: BLE001
                r["version"] = None
            r["newLibtorch"] = foreign_libtorch(before, torch_lib)
            found[x["attr"]] = r
    return found


def library_identities(libs):
    """{path: {"real": its resolved path, "bytes": its size}} of `libs`: which files they are (in a Nix store, the
    resolved path names the exact build), so that a proof's device code (a probe.json of another environment of the
    same libraries) is taken only for these very files."""
    return {p: {"real": os.path.realpath(p), "bytes": file_size(p)} for p in libs}


def probe_cuobjdump(tool, libs, reader):
    """The device code of `libs` as cuobjdump `tool` lists it ("" = not on PATH: said as the error), from `reader`
    (the DeviceCodeReader that has been reading them since torch imported)."""
    c = {"tool": tool or None, "error": None, "libs": {}}
    if not tool:
        c["error"] = "cuobjdump is not on PATH"
    else:
        try:
            c["libs"] = reader.entries(libs)
        except OSError as e:
            c["error"] = err(e)
    return c


def main(argv):
    """Probe the running Python and print one JSON document (the shape in the module comment). Exit 2 on bad usage.
    What takes time runs side by side: the GPU checks' child starts first (when the host shows an NVIDIA device), and
    cuobjdump reads torch's libraries from the moment torch imports, while this process goes on probing."""
    single = check_mode(argv)
    if single is not None:
        return single
    gpu = "--gpu" in argv
    wanted = wanted_packages(argv)
    if wanted is None:
        return 2
    tool = cuobjdump_tool(argv)
    out = {
        "probe": 1,
        "python": {"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable},
        "machine": platform.machine(),
        "torch": None,
        "gpu": None,
        "torchaudio": None,
        "packages": None,
        "libraries": None,
        "cuobjdump": None,
    }
    checker = CheckChild(check_pairs(wanted)) if gpu and has_nvidia_device() else None
    # cuobjdump starts before torch imports: the libraries are found by their specs (read_before_import).
    reader = DeviceCodeReader(tool) if tool else None
    if reader is not None:
        read_before_import(reader, wanted)
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is a finding
        if checker is not None:
            checker.stop()
        if reader is not None:
            # Nothing of it is reported: the queued runs are dropped (the running ones end on their own).
            reader.pool.shutdown(wait=False, cancel_futures=True)
        out["torch"] = {"ok": False, "error": err(e)}
        print(json.dumps(out))
        return 0
    lib_dir = os.path.join(os.path.dirname(torch.__file__), "lib")
    if reader is not None:
        reader.add(shared_objects(lib_dir))
    out["torch"] = probe_torch(torch)
    out["gpu"] = probe_gpu(torch, gpu)
    out["packages"], own = probe_packages(torch, wanted, gpu and out["gpu"]["available"], checker, reader)
    extras = probe_extras(argv, lib_dir)
    if extras is not None:
        out["extras"] = extras
    libs = shared_objects(out["torch"]["libDir"]) + own
    out["libraries"] = library_identities(libs)
    if tool is not None:
        out["cuobjdump"] = probe_cuobjdump(tool, libs, reader)
    print(json.dumps(out))
    return 0


def exit_now(code):
    """End the probe as soon as its output is written: flush stdout and stderr, then os._exit, leaving out Python's own
    teardown of torch and its CUDA state (the module objects, the CUDA caching allocator, cuBLAS handles), which the
    process's exit releases anyway. That teardown took about 0.8-1 s on an H200 host (a probe process's wall time
    less its work, 2026-11-29), and the caller waits for the process to end, not only for its output."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]))
