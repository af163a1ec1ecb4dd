/**
 * The pure comparison of what a Python environment really holds (the probe's JSON, generator/verify/probe.py)
 * with the promise of a variant's name. Shared by `variant-matrix verify` (generator/verify/command.ts) and the Nix
 * checks of pkgs/checks.nix (bundled to pkgs/verify-compare.mjs by `generate`), so both judge alike.
 *
 * The "runs on" rules are generator/compat.ts's (shared with expand, detect and fleet): `capabilityRunsOn` (compute capability on a
 * device: same major, minor ≤), and the command passes in detect's `isaFit` verdict for the host's CPU.
 */
import { capabilityRunsOn } from "../compat.ts";
import { compareVersions } from "../versions.ts";

/** What probe.py prints (see its docstring); every field may be null where not applicable. */
export interface Probe {
  probe: 1;
  python: { version: string; executable: string };
  machine: string;
  torch:
    | { ok: false; error: string }
    | {
        ok: true;
        error: string | null;
        version: string;
        file: string;
        cuda: string | null;
        archFlags: string[];
        nvccArchFlags: string | null;
        cpuCapability: string | null;
        libDir: string;
        libs: string[];
      }
    | null;
  gpu: {
    available: boolean;
    devices: { name: string; capability: string }[];
    matmul: { ok: boolean; error: string | null; maxAbsDiff: number | null } | null;
    error?: string;
  } | null;
  torchaudio: {
    ok: boolean;
    error: string | null;
    version: string | null;
    file: string | null;
    libDir: string | null;
    libsAfterImport: string[];
    newLibtorch: string[];
    rnntLoss: { ok: boolean; error: string | null } | null;
    forcedAlign: { ok: boolean; error: string | null } | null;
  } | null;
  cuobjdump: { tool: string | null; error: string | null; libs: Record<string, { elf: string[]; ptx: string[] }> } | null;
}

/** The parts of a variant the comparison reads (a `Variant` or a `list --json` entry has them). */
export interface PromiseOf {
  name: string;
  package: "pytorch" | "torchaudio";
  version: string;
  torchVersion: string;
  python: string;
  cuda: string | null;
  sm: string | null;
  isa: string;
  system: string;
  cudaCapabilities: string[];
}

/** One promise of the name and what was found. `ok: null` = cannot be checked here (e.g. no GPU on this host). */
export interface PromiseCheck {
  promise: string;
  ok: boolean | null;
  expected: string;
  found: string;
}

/**
 * Arch-specific SASS a correct PyTorch build carries beyond TORCH_CUDA_ARCH_LIST: PyTorch's
 * `cmake/Codegen.cmake` `_BUILD_FOR_ADDITIONAL_ARCHS` compiles a few ATen sources (RowwiseScaledMM.cu,
 * ScaledGroupMM.cu, GroupMM.cu) also for these targets when the listed capability is in the build
 * (`_existing_arch_flags MATCHES compute_XY`), gated on the CUDA version where nvcc needs it.
 * Source: pytorch/pytorch cmake/Codegen.cmake (2.10/2.11 era, quoted verbatim in a doc dump of a checkout; the 2.8
 * file at 629e381 has 89/90a/100a only), PRs #148274 and #149978; confirmed on a PyPI torch 2.11.0+cu130 built for
 * 7.5;8.0;8.6;9.0;10.0;12.0, whose libtorch_cuda.so carries exactly sm_89, sm_90a, sm_100a, sm_103a, sm_120a and
 * sm_121a besides (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130, cuobjdump --list-elf on an H100 host).
 */
export const EXTRA_SASS: readonly { when: string; adds: string; minCuda: string | null }[] = [
  { when: "8.6", adds: "sm_89", minCuda: null },
  { when: "9.0", adds: "sm_90a", minCuda: null },
  { when: "10.0", adds: "sm_100a", minCuda: null },
  { when: "10.0", adds: "sm_103a", minCuda: "12.9" },
  { when: "11.0", adds: "sm_110a", minCuda: "13.0" },
  { when: "12.0", adds: "sm_120a", minCuda: null },
  { when: "12.0", adds: "sm_121a", minCuda: "12.9" },
];

const smOf = (cap: string) => `sm_${cap.replace(".", "")}`;
const capOf = (sm: string) => {
  const d = /^sm_(\d+)(\d)[af]?$/.exec(sm);
  return d ? `${d[1]}.${d[2]}` : null;
};
/**
 * The SASS targets a correct build for `caps` with CUDA `cuda` may carry: `sm_XY` of each capability plus the
 * EXTRA_SASS rule. Returns e.g. Set{"sm_90", "sm_90a"} for ["9.0"].
 */
export function allowedSass(caps: readonly string[], cuda: string): Set<string> {
  const s = new Set(caps.map(smOf));
  for (const r of EXTRA_SASS) if (caps.includes(r.when) && (r.minCuda === null || compareVersions(cuda, r.minCuda) >= 0)) s.add(r.adds);
  return s;
}

/** True when SASS target `sm` ("sm_90a", "sm_86") runs on a device of capability `device`: arch-specific only on its own. */
export function sassRunsOn(sm: string, device: string): boolean {
  const cap = capOf(sm);
  if (cap === null) return false;
  return /[af]$/.test(sm) ? cap === device : capabilityRunsOn(cap, device);
}

/** The capability of an SM number: "121" → "12.1". */
export function capabilityOfSm(sm: string): string {
  return `${sm.slice(0, -1)}.${sm.slice(-1)}`;
}

const baseVersion = (v: string) => v.split("+")[0]!;
const set = (xs: Iterable<string>) => [...new Set(xs)].sort().join(" ") || "(none)";

/**
 * Compare a probe with a variant's promise; one PromiseCheck per promise, in a stable order.
 * @param opts.isaRuns whether this host's CPU runs the variant's ISA (detect's `isaFit`), or null when unknown.
 * @param opts.gpuChecked whether the probe ran its GPU checks (`--gpu`); GPU promises are null otherwise.
 */
export function checkPromise(v: PromiseOf, probe: Probe, opts: { isaRuns?: boolean | null } = {}): PromiseCheck[] {
  const out: PromiseCheck[] = [];
  const add = (promise: string, ok: boolean | null, expected: string, found: string) => out.push({ promise, ok, expected, found });
  const pyMinor = probe.python.version.split(".").slice(0, 2).join(".");
  add("Python", pyMinor === v.python, v.python, probe.python.version);
  add("system", machineSystem(probe.machine) === v.system, v.system, `${probe.machine} (${machineSystem(probe.machine) ?? "?"})`);

  const t = probe.torch;
  if (!t || !t.ok) {
    add("torch imports", false, `torch ${v.torchVersion}`, t && !t.ok ? t.error : "not probed");
    return out;
  }
  add("torch version", baseVersion(t.version) === v.torchVersion, v.torchVersion, t.version);
  add("CUDA of torch", (t.cuda ?? null) === v.cuda, v.cuda ?? "none (CPU-only)", t.cuda ?? "none");
  const caps = v.cudaCapabilities;
  const wantSm = caps.map(smOf);
  add("TORCH_CUDA_ARCH_LIST compiled in (torch.cuda.get_arch_list)", set(t.archFlags) === set(wantSm), set(wantSm), set(t.archFlags));
  const nvcc = [...(t.nvccArchFlags ?? "").matchAll(/code=(sm_\d+[af]?|compute_\d+[af]?)/g)].map((m) => m[1]!);
  add("NVCC architecture flags (torch.__config__.show)", set(nvcc) === set(wantSm), set(wantSm), set(nvcc));
  add("ISA: torch imports and reports its CPU capability", t.cpuCapability !== null, `${v.isa} runs on this CPU`, t.cpuCapability ?? "not reported");
  if (opts.isaRuns !== undefined)
    add(`ISA ${v.isa} runs on this CPU (detect's rule)`, opts.isaRuns, v.isa, opts.isaRuns === null ? "unknown" : opts.isaRuns ? "yes" : "no");

  // The GPU: a device this variant's code runs on, and code that runs there.
  const g = probe.gpu;
  if (v.cuda !== null) {
    const devices = g?.available ? g.devices : [];
    if (devices.length === 0) add("a GPU this variant runs on", null, `SM${v.sm}`, "no CUDA device visible");
    for (const d of devices) {
      const runs = caps.some((c) => capabilityRunsOn(c, d.capability));
      add(`GPU ${d.name} (${d.capability}) runs this variant's code`, runs, `capabilities ${caps.join(", ")}`, d.capability);
      if (v.sm !== null && capabilityOfSm(v.sm) !== d.capability)
        add(`GPU is the variant's SM${v.sm}`, false, capabilityOfSm(v.sm!), d.capability);
    }
    if (g?.matmul) add("matmul on the GPU equals the CPU result", g.matmul.ok, "allclose", g.matmul.error ?? `max |diff| ${g.matmul.maxAbsDiff}`);
  } else {
    add("CPU-only: torch has no CUDA", t.cuda === null, "torch.version.cuda is None", t.cuda ?? "None");
  }

  // Device code of every library (cuobjdump).
  const c = probe.cuobjdump;
  if (v.cuda !== null && c) {
    if (c.error || !c.tool) add("device code (cuobjdump)", null, "cuobjdump available", c.error ?? "no cuobjdump");
    else {
      const allowed = allowedSass(caps, v.cuda);
      const target = v.sm === null ? null : capabilityOfSm(v.sm);
      for (const [lib, d] of Object.entries(c.libs)) {
        if (d.elf.length === 0 && d.ptx.length === 0) continue;
        const short = lib.split("/").slice(-2).join("/");
        if (target) add(`${short}: SASS for SM${v.sm}`, d.elf.some((s) => sassRunsOn(s, target)), `SASS that runs on ${target}`, set(d.elf));
        const extra = d.elf.filter((s) => !allowed.has(s));
        add(`${short}: no SASS beyond the capabilities (and PyTorch's arch-specific extras)`, extra.length === 0, set(allowed), extra.length ? `also ${set(extra)}` : set(d.elf));
        add(`${short}: no PTX`, d.ptx.length === 0, "(none)", set(d.ptx));
      }
    }
  }

  // torchaudio: its version, the torch it loads, its CUDA kernels.
  if (v.package === "torchaudio") {
    const a = probe.torchaudio;
    if (!a || !a.ok) add("torchaudio imports", false, `torchaudio ${v.version}`, a?.error ?? "not probed");
    else {
      add("torchaudio version", baseVersion(a.version ?? "") === v.version, v.version, a.version ?? "?");
      const foreign = a.newLibtorch;
      add("torchaudio loads the variant's own libtorch", foreign.length === 0 && a.error === null, `only ${t.libDir}`, foreign.length ? `also ${foreign.join(", ")}` : a.error ?? "same libtorch");
      if (v.cuda !== null) {
        for (const [name, r] of [["rnnt_loss", a.rnntLoss], ["forced_align", a.forcedAlign]] as const)
          add(`torchaudio.functional.${name} on CUDA`, r ? r.ok : null, "runs, equals the CPU result", r ? (r.error ?? (r.ok ? "equal" : "differs")) : "not run (no GPU)");
      }
    }
  }
  return out;
}

/** Nix system of a `uname -m` machine name, or null. */
export function machineSystem(machine: string): string | null {
  return machine === "x86_64" ? "x86_64-linux" : machine === "aarch64" || machine === "arm64" ? "aarch64-linux" : null;
}

/** True when no check failed (a check that could not run, `ok: null`, does not fail). */
export function allHold(checks: readonly PromiseCheck[]): boolean {
  return checks.every((c) => c.ok !== false);
}

/**
 * Which variants of a list this installation is: those whose every checked promise holds, ignoring the promises a
 * host-only fact decides (none here: the probe alone). Returns the names that hold, and for the rest the number of
 * failed promises, fewest first.
 */
export function identify(variants: readonly PromiseOf[], probe: Probe): { matches: string[]; nearest: { name: string; failed: number }[] } {
  // A CUDA torch is compared with CUDA variants only, a CPU torch with CPU-only ones (fewer promises would otherwise
  // make a CPU variant look nearer).
  const cudaTorch = probe.torch?.ok ? probe.torch.cuda !== null : null;
  const candidates = cudaTorch === null ? variants : variants.filter((v) => (v.cuda !== null) === cudaTorch);
  const scored = candidates.map((v) => ({ name: v.name, failed: checkPromise(v, probe).filter((c) => c.ok === false).length }));
  return {
    matches: scored.filter((s) => s.failed === 0).map((s) => s.name),
    nearest: scored.filter((s) => s.failed > 0).sort((a, b) => a.failed - b.failed || a.name.localeCompare(b.name)).slice(0, 5),
  };
}
