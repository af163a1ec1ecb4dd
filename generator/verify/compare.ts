/**
 * The pure comparison of what a Python environment really holds (the probe's JSON, generator/verify/probe.py)
 * with the promise of a variant's name. Shared by `variant-matrix verify` (generator/commands/verify.ts) and the Nix
 * checks of pkgs/checks.nix (bundled to pkgs/verify-compare.mjs by `generate`), so both judge alike.
 *
 * Code only: what the catalog says (the packages on torch, the device-code origins, nixpkgs' defaults, the pins, the
 * extras) comes in as a `CheckerFacts` parameter (catalog/lib/checker-facts.ts): `verify` passes
 * catalog/lib/checker.ts `catalogCheckerFacts()`, the Nix checks the same facts read from pkgs/verify-facts.json.
 *
 * The "runs on" rules are generator/catalog/lib/capability.ts's (re-exported by compat.ts; shared with expand, detect and fleet): `capabilityRunsOn` (compute capability on a
 * device: same major, minor ≤), and the command passes in detect's `isaFit` verdict for the host's CPU.
 */
import { capabilityRunsOn } from "../catalog/lib/capability.ts";
import { majorMinor } from "../versions.ts";
import type { CheckerFacts, CheckerPackage } from "../catalog/lib/checker-facts.ts";
import type { Variant } from "../matrix/schema.ts";
import { allowedSass, attribute, deviceCodePromises, formatArchs, ownerOf, smOf, type LibDeviceCode, type LibraryOrigins, type OriginPromise } from "./origins.ts";

/** Each library's attribution to origins (origins.ts `attribute`) by its path, for one unchanged probe. */
type Attributions = Map<string, LibraryOrigins>;

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
  /** Per package built on torch (older probes have `torchaudio` only): see PackageProbe. */
  packages?: Record<string, PackageProbe> | null;
  /**
   * A named environment's extras (`--promise=FILE` with `extras`; absent from older probes): per nixpkgs attribute, whether
   * its modules import, the version of its distribution (importlib.metadata), and libtorch mapped by importing it that is
   * not the variant's.
   */
  extras?: Record<string, { ok: boolean; error: string | null; version: string | null; newLibtorch: string[] }> | null;
  /**
   * Every library of torch and of the probed packages (the ones --cuobjdump reads, listed with or without it): its
   * resolved path and size in bytes. Absent from older probes; verify/proof.ts matches a proof's libraries by it.
   */
  libraries?: Record<string, { real: string; bytes: number }> | null;
  /** Per library: --list-elf/--list-ptx targets and, from newer probes, -symbols blocks (origins.ts). */
  cuobjdump: { tool: string | null; error: string | null; libs: Record<string, LibDeviceCode> } | null;
}

/** What probe.py found for one package built on torch. `gpu`: check key (catalog `gpuChecks`) → result. */
export interface PackageProbe {
  ok: boolean;
  error: string | null;
  version: string | null;
  file: string | null;
  libDir: string | null;
  libsAfterImport: string[];
  newLibtorch: string[];
  gpu: Record<string, { ok: boolean; error: string | null }>;
}

/** The probe's packages: its `packages`, or for an older probe (no `packages`) its `torchaudio` entry. */
export function packageProbes(probe: Probe): Record<string, PackageProbe> {
  if (probe.packages) return probe.packages;
  const a = probe.torchaudio;
  if (!a) return {};
  const gpu: PackageProbe["gpu"] = {};
  if (a.rnntLoss) gpu.rnntLoss = a.rnntLoss;
  if (a.forcedAlign) gpu.forcedAlign = a.forcedAlign;
  return { torchaudio: { ok: a.ok, error: a.error, version: a.version, file: a.file, libDir: a.libDir, libsAfterImport: a.libsAfterImport, newLibtorch: a.newLibtorch, gpu } };
}

/** The facts' entry of a package built on torch, or undefined for `pytorch`, an environment or an unknown name. */
export function onTorchIn(facts: Pick<CheckerFacts, "packagesOnTorch">, name: string): CheckerPackage | undefined {
  return facts.packagesOnTorch.find((p) => p.name === name);
}

/** An environment's package word, `{NAME}-env` (the rule of generator/matrix/naming.ts `environmentOf`; `torch-env` too). */
const isEnvironment = (pkg: string) => /^[a-z][a-z0-9]*-env$/.test(pkg);

/** What follows the package word in a variant name (generator/matrix/naming.ts): release tag, Python, CUDA and SM or cpu, ISA. */
const NAME_TAIL = /^\d*-python\d\d+-(?:cuda\d+_\d+-sm\d{2,3}|cpu)-[a-z0-9]+(?:_[a-z0-9]+)*$/;

/** The package built on torch a variant name is of ("torchvision-python313-cpu-avx2" → "torchvision"), or null. */
function onTorchOfName(facts: Pick<CheckerFacts, "packagesOnTorch">, name: string): string | null {
  const hits = facts.packagesOnTorch.filter((p) => name.startsWith(p.name) && NAME_TAIL.test(name.slice(p.name.length)));
  return hits.sort((a, b) => b.name.length - a.name.length)[0]?.name ?? null;
}

/**
 * The packages built on torch a variant promises, with their versions: a package variant promises itself; the
 * environment every package on torch among its `dependsOn` (versions from `onTorchVersions`; without `dependsOn`,
 * every entry of `onTorchVersions`); pytorch none.
 */
export function promisedPackages(v: PromiseOf, facts: Pick<CheckerFacts, "packagesOnTorch">): [string, string][] {
  if (onTorchIn(facts, v.package)) return [[v.package, v.version]];
  if (!isEnvironment(v.package)) return [];
  const versions = v.onTorchVersions ?? {};
  const members = v.dependsOn ? v.dependsOn.map((n) => onTorchOfName(facts, n)).filter((p): p is string => p !== null) : Object.keys(versions);
  return members.map((m) => [m, versions[m] ?? "?"]);
}

/**
 * The parts of a variant the comparison reads (a `Variant` or a `list --json` entry has them; the Nix checks hand in
 * the same fields, with `extras` as pkgs/checks.nix resolved them).
 */
export type PromiseOf = Pick<Variant, "name" | "package" | "version" | "torchVersion" | "python" | "cuda" | "sm" | "isa" | "cudaCapabilities"> &
  Partial<Pick<Variant, "onTorchVersions" | "cudaCapabilitiesForPackageSet" | "nixpkgs">> & {
    system: string;
    /** Names this variant is built against (an environment: pytorch and its members). */
    dependsOn?: readonly string[];
    /**
     * A named environment's extras as the Nix side resolved them (pkgs/checks.nix): nixpkgs attribute, the version the
     * pin carries (null when unknown) and the modules to import (its pythonImportsCheck, else the attribute).
     */
    extras?: readonly (string | { attr: string; version: string | null; modules?: string[] })[];
  };

/** One promise of the name and what was found. `ok: null` = cannot be checked here (e.g. no GPU on this host). */
export interface PromiseCheck {
  promise: string;
  ok: boolean | null;
  expected: string;
  found: string;
}

const capOf = (sm: string) => {
  const d = /^sm_(\d+)(\d)[af]?$/.exec(sm);
  return d ? `${d[1]}.${d[2]}` : null;
};

/**
 * True when SASS target `sm` ("sm_90a", "sm_100f", "sm_86") runs on a device of capability `device`:
 * architecture-specific (`a`) only on its own capability; family-specific (`f`) on the same major with a minor at
 * least its own (CUDA C++ Programming Guide, "Feature Availability": sm_100f runs on 10.0 and 10.3); plain code by
 * binary compatibility.
 */
export function sassRunsOn(sm: string, device: string): boolean {
  const cap = capOf(sm);
  if (cap === null) return false;
  return /a$/.test(sm) ? cap === device : capabilityRunsOn(cap, device);
}

/** The capability of an SM number: "121" → "12.1". */
export function capabilityOfSm(sm: string): string {
  return `${sm.slice(0, -1)}.${sm.slice(-1)}`;
}

const baseVersion = (v: string) => v.split("+")[0]!;
const set = (xs: Iterable<string>) => [...new Set(xs)].sort().join(" ") || "(none)";

/** The probe's torch when it imported. */
type ProbedTorch = Extract<NonNullable<Probe["torch"]>, { ok: true }>;

/** Records one promise check. */
type AddCheck = (promise: string, ok: boolean | null, expected: string, found: string) => void;

const adder =
  (out: PromiseCheck[]): AddCheck =>
  (promise, ok, expected, found) =>
    out.push({ promise, ok, expected, found });

/** The torch build's promises: version, CUDA, the capabilities compiled in (arch list and nvcc flags), the ISA. */
function checkTorchBuild(v: PromiseOf, t: ProbedTorch, opts: { isaRuns?: boolean | null }, add: AddCheck): void {
  add("torch version", baseVersion(t.version) === v.torchVersion, v.torchVersion, t.version);
  add("CUDA of torch", (t.cuda ?? null) === v.cuda, v.cuda ?? "none (CPU-only)", t.cuda ?? "none");
  const wantSm = v.cudaCapabilities.map(smOf);
  add("TORCH_CUDA_ARCH_LIST compiled in (torch.cuda.get_arch_list)", set(t.archFlags) === set(wantSm), set(wantSm), set(t.archFlags));
  const nvcc = [...(t.nvccArchFlags ?? "").matchAll(/code=(sm_\d+[af]?|compute_\d+[af]?)/g)].map((m) => m[1]!);
  add("NVCC architecture flags (torch.__config__.show)", set(nvcc) === set(wantSm), set(wantSm), set(nvcc));
  add("ISA: torch imports and reports its CPU capability", t.cpuCapability !== null, `${v.isa} runs on this CPU`, t.cpuCapability ?? "not reported");
  if (opts.isaRuns !== undefined)
    add(`ISA ${v.isa} runs on this CPU (detect's rule)`, opts.isaRuns, v.isa, opts.isaRuns === null ? "unknown" : opts.isaRuns ? "yes" : "no");
}

/** The GPU: a device this variant's code runs on, and code that runs there (a CPU-only variant: torch has no CUDA). */
function checkGpu(v: PromiseOf, t: ProbedTorch, g: Probe["gpu"], add: AddCheck): void {
  const caps = v.cudaCapabilities;
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
}

/** Device code of every library (cuobjdump) of a CUDA variant, into `out`: per origin where the probe has -symbols blocks. */
function checkDeviceCode(v: PromiseOf, c: Probe["cuobjdump"], facts: CheckerFacts, out: PromiseCheck[], attributions?: Attributions): void {
  const add = adder(out);
  if (v.cuda === null || !c) return;
  if (c.error || !c.tool) {
    add("device code (cuobjdump)", null, "cuobjdump available", c.error ?? "no cuobjdump");
    return;
  }
  const allowed = allowedSass(v.cudaCapabilities, v.cuda, facts);
  const target = v.sm === null ? null : capabilityOfSm(v.sm);
  for (const [lib, d] of Object.entries(c.libs)) {
    if (d.elf.length === 0 && d.ptx.length === 0) continue;
    // Probes with -symbols blocks name the package too ("torch/lib/libtorch_cuda.so"); older ones kept "lib/…".
    const short = d.blocks ? shortLib(lib) : lib.split("/").slice(-2).join("/");
    // -symbols gives the real target of each cubin (sm_100f; --list-elf names it sm_100).
    const sass = d.blocks ? [...new Set(d.blocks.filter((b) => b.kind === "elf").map((b) => b.arch))] : d.elf;
    if (target) add(`${short}: SASS for SM${v.sm}`, sass.some((s) => sassRunsOn(s, target)), `SASS that runs on ${target}`, d.blocks ? formatArchs(sass) : set(sass));
    if (d.blocks) {
      for (const chk of checkOrigins(v, lib, d, facts, attributions)) out.push(chk);
      continue;
    }
    // A probe without -symbols blocks (an older one): the library as a whole.
    const extra = d.elf.filter((s) => !allowed.has(s));
    add(`${short}: no SASS beyond the capabilities (and PyTorch's arch-specific extras)`, extra.length === 0, set(allowed), extra.length ? `also ${set(extra)}` : set(d.elf));
    add(`${short}: no PTX`, d.ptx.length === 0, "(none)", set(d.ptx));
  }
}

/** Each package built on torch the variant promises: its version, the torch it loads, its CUDA kernels. */
function checkPackages(v: PromiseOf, probe: Probe, t: ProbedTorch, facts: CheckerFacts, add: AddCheck): void {
  const probed = packageProbes(probe);
  for (const [name, version] of promisedPackages(v, facts)) {
    const p = onTorchIn(facts, name)!;
    const a = probed[name];
    if (!a || !a.ok) {
      add(`${p.label} imports`, false, `${p.label} ${version}`, a?.error ?? "not probed");
      continue;
    }
    add(`${p.label} version`, baseVersion(a.version ?? "") === version, version, a.version ?? "?");
    const foreign = a.newLibtorch;
    add(`${p.label} loads the variant's own libtorch`, foreign.length === 0 && a.error === null, `only ${t.libDir}`, foreign.length ? `also ${foreign.join(", ")}` : a.error ?? "same libtorch");
    if (v.cuda !== null)
      for (const chk of p.gpuChecks) {
        const r = a.gpu[chk.key];
        add(chk.label, r ? r.ok : null, "runs, equals the CPU result", r ? (r.error ?? (r.ok ? "equal" : "differs")) : "not run (no GPU)");
      }
  }
}

/**
 * A named environment's extras: the version the pin carries, that it imports on the variant's torch; its device code
 * is judged only where generator/catalog/extras.ts says how capabilities reach it (facts' `judgedExtras`).
 */
function checkExtras(v: PromiseOf, probe: Probe, t: ProbedTorch, facts: CheckerFacts, add: AddCheck): void {
  for (const x of v.extras ?? []) {
    const { attr, version } = typeof x === "string" ? { attr: x, version: null } : x;
    const r = probe.extras?.[attr];
    if (!r || !r.ok) {
      add(`extra ${attr} imports`, false, `${attr}${version ? ` ${version}` : ""}`, r?.error ?? "not probed");
      continue;
    }
    if (version !== null) add(`extra ${attr} version`, r.version !== null && baseVersion(r.version) === baseVersion(version), version, r.version ?? "?");
    add(`extra ${attr} loads the variant's own libtorch`, r.newLibtorch.length === 0, `only ${t.libDir}`, r.newLibtorch.length ? `also ${r.newLibtorch.join(", ")}` : "same libtorch");
    if (!facts.judgedExtras.includes(attr)) add(`extra ${attr}: device code`, null, "judged by the catalog", "not judged (generator/catalog/extras.ts)");
  }
}

/**
 * Compare a probe with a variant's promise; one PromiseCheck per promise, in a stable order. GPU promises are null
 * when the probe ran no GPU check (no `--gpu`, or no device).
 * @param facts what the catalog says (checker-facts.ts; `verify`: catalog/lib/checker.ts `catalogCheckerFacts()`).
 * @param opts.isaRuns whether this host's CPU runs the variant's ISA (detect's `isaFit`), or null when unknown.
 * @param opts.attributions each library's attribution to origins, worked out once for this probe and kept for the
 *   next variant compared with the same, unchanged probe (identify shares one across its candidates).
 */
export function checkPromise(v: PromiseOf, probe: Probe, facts: CheckerFacts, opts: { isaRuns?: boolean | null; attributions?: Attributions } = {}): PromiseCheck[] {
  const out: PromiseCheck[] = [];
  const add = adder(out);
  add("Python", majorMinor(probe.python.version) === v.python, v.python, probe.python.version);
  add("system", machineSystem(probe.machine) === v.system, v.system, `${probe.machine} (${machineSystem(probe.machine) ?? "?"})`);

  const t = probe.torch;
  if (!t || !t.ok) {
    add("torch imports", false, `torch ${v.torchVersion}`, t && !t.ok ? t.error : "not probed");
    return out;
  }
  checkTorchBuild(v, t, opts, add);
  checkGpu(v, t, probe.gpu, add);
  checkDeviceCode(v, probe.cuobjdump, facts, out, opts.attributions);
  checkPackages(v, probe, t, facts, add);
  checkExtras(v, probe, t, facts, add);
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
export function identify(variants: readonly PromiseOf[], probe: Probe, facts: CheckerFacts): { matches: string[]; nearest: { name: string; failed: number }[] } {
  // A CUDA torch is compared with CUDA variants only, a CPU torch with CPU-only ones (fewer promises would otherwise
  // make a CPU variant look nearer).
  const cudaTorch = probe.torch?.ok ? probe.torch.cuda !== null : null;
  const candidates = cudaTorch === null ? variants : variants.filter((v) => (v.cuda !== null) === cudaTorch);
  // A library's attribution depends on the probe alone: worked out once for every candidate (bench/attribute.ts).
  const attributions: Attributions = new Map();
  const scored = candidates.map((v) => ({ name: v.name, failed: checkPromise(v, probe, facts, { attributions }).filter((c) => c.ok === false).length }));
  return {
    matches: scored.filter((s) => s.failed === 0).map((s) => s.name),
    nearest: scored.filter((s) => s.failed > 0).sort((a, b) => a.failed - b.failed || a.name.localeCompare(b.name)).slice(0, 5),
  };
}

const shortLib = (lib: string) => lib.split("/").slice(-3).join("/");
const baseName = (lib: string) => lib.split("/").pop()!;
const words = (p: OriginPromise) => {
  const extra = p.sassAllowed.filter((s) => !p.sassRequired.includes(s));
  const where = p.ptx.length && p.ptxIn === "relocatable" ? " in the relocatable fatbin" : "";
  return `SASS ${formatArchs(p.sassRequired)}${extra.length ? ` (+ ${formatArchs(extra)})` : ""}, ${p.ptx.length ? `PTX ${formatArchs(p.ptx)}${where}` : "no PTX"}`;
};

/**
 * One line per origin of one library's device code (origins.ts): each origin found holds its promise, each bundled
 * library that nixpkgs links into this file is there, and PTX no name attributes is one some origin of the file
 * promises.
 */
export function checkOrigins(v: PromiseOf, lib: string, d: LibDeviceCode, facts: CheckerFacts, attributions?: Attributions): PromiseCheck[] {
  const out: PromiseCheck[] = [];
  const short = shortLib(lib);
  const base = baseName(lib);
  let promises: OriginPromise[];
  try {
    promises = deviceCodePromises(v, facts);
  } catch (e) {
    return [{ promise: `${short}: device code per origin`, ok: null, expected: "the catalog's facts", found: (e as Error).message }];
  }
  const attributed = attributions?.get(lib) ?? attribute(lib, d, facts);
  attributions?.set(lib, attributed);
  const { byOrigin, unattributedPtx, relocatablePtx } = attributed;
  const owner = ownerOf(lib, facts);
  for (const p of promises) {
    const found = byOrigin.get(p.origin);
    const here = p.library === null ? p.origin === owner || found !== undefined : p.library === base;
    if (!here && !found) continue;
    if (!found && p.library === null) continue;
    const promise = `${short}: ${p.label}`;
    if (!found) {
      out.push({ promise, ok: p.library === base && !p.unknown ? false : null, expected: `${words(p)} (${p.why})`, found: "none: no kernel of this origin" });
      continue;
    }
    if (p.library !== null && p.library !== base) {
      out.push({ promise, ok: false, expected: `only in ${p.library}`, found: `SASS ${formatArchs(found.sass)} in ${base}` });
      continue;
    }
    const sassOk = p.sassRequired.every((s) => found.sass.has(s)) && [...found.sass].every((s) => p.sassAllowed.includes(s));
    // The relocatable fatbin's PTX (cuobjdump -all) is the owner's; the runtime reads it as it reads the image's.
    const rel = p.origin === owner ? relocatablePtx : new Set<string>();
    const everyPtx = new Set([...found.ptx, ...rel]);
    // PTX that no name attributes may be this origin's (it is judged by library below); promised PTX must be where
    // the promise says it lives.
    const ptxOk =
      [...everyPtx].every((x) => p.ptx.includes(x)) &&
      p.ptx.every((x) => (p.ptxIn === "relocatable" ? rel.has(x) : found.ptx.has(x) || unattributedPtx.has(x)));
    const missing = p.sassRequired.filter((s) => !found.sass.has(s));
    const beyond = [...found.sass].filter((s) => !p.sassAllowed.includes(s));
    const ptxBeyond = [...everyPtx].filter((x) => !p.ptx.includes(x));
    const ptxMissing = p.ptx.filter((x) => !(p.ptxIn === "relocatable" ? rel.has(x) : found.ptx.has(x) || unattributedPtx.has(x)));
    const ptxWords = [found.ptx.size ? `PTX ${formatArchs(found.ptx)}` : "", rel.size ? `PTX ${formatArchs(rel)} in the relocatable fatbin (cuobjdump -all)` : ""].filter(Boolean);
    const detail = [
      `SASS ${formatArchs(found.sass)}`,
      ...(ptxWords.length ? ptxWords : ["no PTX"]),
      ...(beyond.length ? [`beyond the promise: ${formatArchs(beyond)}`] : []),
      ...(ptxBeyond.length ? [`PTX beyond the promise: ${formatArchs(ptxBeyond)}`] : []),
      ...(missing.length ? [`missing: ${formatArchs(missing)}`] : []),
      ...(ptxMissing.length ? [`missing: PTX ${formatArchs(ptxMissing)}${p.ptxIn === "relocatable" ? " in the relocatable fatbin" : ""}`] : []),
    ].join(", ");
    const why = p.unknown ? `${p.why}; the catalog does not know whether nixpkgs at ${v.nixpkgs ?? "this revision"} links it` : p.why;
    out.push({ promise, ok: p.unknown ? null : sassOk && ptxOk, expected: `${words(p)} (${why})`, found: detail });
  }
  // Origins found that the variant does not promise at all (e.g. NVSHMEM in a torch whose nixpkgs file links none).
  for (const [o, found] of byOrigin)
    if (!promises.some((p) => p.origin === o))
      out.push({ promise: `${short}: ${o} device code`, ok: false, expected: `none (nixpkgs' torch at ${v.nixpkgs?.slice(0, 7) ?? "this pin"} does not link ${o})`, found: `SASS ${formatArchs(found.sass)}` });
  if (unattributedPtx.size) {
    const promised = new Set(promises.filter((p) => p.library === base || (p.library === null && p.origin === owner)).flatMap((p) => p.ptx));
    const stray = [...unattributedPtx].filter((x) => !promised.has(x));
    out.push({
      promise: `${short}: PTX whose kernels cuobjdump does not name (attributed by library)`,
      ok: stray.length === 0,
      expected: `only PTX some origin of ${base} promises: ${formatArchs(promised)}`,
      found: stray.length ? `also ${formatArchs(stray)}` : formatArchs(unattributedPtx),
    });
  }
  return out;
}
