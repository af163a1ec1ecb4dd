/**
 * verify as a library: planVerify (options → VerifyPlan: which Python, which recorded probe or proof, checked before
 * anything runs) and runVerify (VerifyPlan → VerifyReport, a value; nothing printed). `variant-matrix verify`
 * (commands/verify-main.ts) prints the report; install calls the same two functions (commands/install.ts).
 *
 * What takes time runs side by side, the probe first: runVerify starts the probe (verify/run-probe.ts) before it loads
 * the comparison, the catalog and detect's rules, and reads the host and the matrix while the probe runs. nvidia-smi
 * runs only where the answer needs it (no NAME: detect's pick; torch seeing no GPU: the driver's cause), not beside
 * the probe's own CUDA start.
 *
 * Given a proof (verify/proof.ts: the static check's probe.json and report.txt), the probe runs without --cuobjdump
 * (import, CUDA init, the GPU checks) and the device code is judged from the proof, when the proof is about the same
 * libraries; else the report says why it was set aside and the probe runs again reading the device code here.
 */
import { readFileSync } from "node:fs";
import { resolvePython, runProbe, VerifyInputError, type PythonTarget } from "./run-probe.ts";
import { notAProof, readProof, withProofDeviceCode, type ProofRead } from "./proof.ts";
import { ENV_PACKAGE, TORCH_PACKAGE } from "../catalog/lib/packages.ts";
import type { Probe, PromiseCheck } from "./compare.ts";
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { HostInfo } from "../host/read-host.ts";
import type { VariantSource } from "../matrix/variant-source.ts";

export { VerifyInputError } from "./run-probe.ts";

/** What verify reports (also `verify --json`'s shape). */
export interface VerifyReport {
  name: string;
  /** Why this name: "given" or "picked by detect for this host". */
  chosenBy: string;
  /** The Python checked, in words: the --python given and its interpreter, or the recorded probe. */
  python: string;
  checks: PromiseCheck[];
  holds: boolean;
  /** Variants of the matrix whose every promise holds for this installation. */
  installationIs: string[];
  nearest: { name: string; failed: number }[];
  /** Why torch sees no GPU that nvidia-smi sees (verify/driver.ts), with the ways to run again; null when not that. */
  hostDriver?: { lines: string[] } | null;
  /**
   * The proof given (absent: none): `used` true when the device code was judged from its probe.json (its cuobjdump
   * `tool`, its report's last line `summary`); false with `why` when it was set aside and cuobjdump ran here.
   */
  proof?: { path: string; used: boolean; why: string | null; tool: string | null; summary: string | null };
}

/** What verify is asked (the options of `verify`, and what install hands it). Every field may be left out. */
export interface VerifyOptions {
  /** The variant whose promise is checked; default: detect's pick for the host. */
  name?: string;
  /** An interpreter, an environment directory (bin/python3) or a package output (run-probe.ts resolvePython); default python3 on PATH. */
  python?: string;
  /** A recorded probe (JSON file) to judge instead of running one. */
  probe?: string;
  /** A proof (directory of probe.json and report.txt) whose device code is judged instead of running cuobjdump here. */
  proof?: string;
  /** Run the GPU checks (default true). */
  gpu?: boolean;
  /** Run the probe through the host's GPU driver: "" nixglhost from PATH, else the path to it. */
  hostDriver?: string;
  /** A recorded host (detect's --cpuinfo, --nvidia-smi, --machine). */
  cpuinfo?: string;
  nvidiaSmi?: string;
  machine?: string;
  /** The root of the host the driver's cause is looked for under (tests' modelled hosts; default /). */
  hostRoot?: string;
  /** The matrix file (default the repository's matrix.ts). */
  matrix?: string;
}

/** What runVerify runs: the options, and what planVerify resolved from them. */
export interface VerifyPlan {
  options: VerifyOptions;
  /** The probe recorded elsewhere (--probe), with its label; null when one is run here. */
  recorded: { probe: Probe; label: string } | null;
  /** The Python the probe runs in (null for a recorded probe). */
  target: PythonTarget | null;
  /** The proof given, read (or why it cannot be used); null when none was given or a recorded probe is judged. */
  proof: ProofRead | null;
}

/** verify could not judge anything: the probe gave no result, or torch does not import (exit 1, with the message). */
export class VerifyRunError extends Error {
  override name = "VerifyRunError";
  readonly exitCode = 1;
}

/**
 * Check the options before anything runs: the recorded probe is read, `--python` resolved, the proof read.
 * @throws VerifyInputError (exit 2) for an unreadable --probe file, a --python that is no Python, or a --proof that is
 *   no proof at all (no such path, not a directory: proof.ts notAProof); a proof that cannot be used is set aside
 */
export function planVerify(options: VerifyOptions): VerifyPlan {
  if (options.probe) {
    let probe: Probe;
    try {
      probe = JSON.parse(readFileSync(options.probe, "utf8")) as Probe;
    } catch (e) {
      throw new VerifyInputError(`--probe: cannot read ${options.probe}: ${(e as Error).message}`);
    }
    return { options, recorded: { probe, label: `the recorded probe ${options.probe} (${probe.python?.executable ?? "?"})` }, target: null, proof: null };
  }
  const none = options.proof === undefined ? null : notAProof(options.proof);
  if (none) throw new VerifyInputError(`--proof: ${none}; nothing was run (leave out --proof to read the device code here with cuobjdump)`);
  const target = resolvePython(options.python);
  if (options.hostDriver !== undefined) target.wrapper = [options.hostDriver || "nixglhost"];
  return { options, recorded: null, target, proof: options.proof === undefined ? null : readProof(options.proof) };
}

/** What a probe is checked against: the matrix's variants, the catalog, and the host (null when not read). */
export interface VerifyContext {
  variants: readonly Variant[];
  catalog: Catalog;
  host: HostInfo | null;
}

/**
 * Run a plan: the probe (or the recorded one), the comparison with the variant's promise, the installation's
 * identity, the driver's cause when torch sees no GPU. Prints nothing.
 * @param source where the variants come from (default the matrix; tests hand in their own)
 * @throws VerifyInputError (exit 2) for an unknown NAME, a host or matrix that cannot be read, a Python that cannot be
 *   run; VerifyRunError (exit 1) when the probe gives no result or torch does not import
 */
export async function runVerify(plan: VerifyPlan, source?: VariantSource): Promise<VerifyReport> {
  const o = plan.options;
  // The probe first (seconds on a GPU host); everything else loads and reads while it runs. Errors are reported in
  // this order: the probe's, the host's, the matrix's.
  const probing = probeOf(plan, source);
  const sourcing = source ? Promise.resolve(source) : import("../matrix/variant-source.ts").then((m) => m.loadVariants);
  const loading = sourcing.then((s) => s(o.matrix));
  // nvidia-smi only where the answer needs it (see the file header); the CPU and machine at once.
  const recordedSmi = o.nvidiaSmi !== undefined || o.cpuinfo !== undefined;
  const reading = hostOf(o, o.name === undefined || recordedSmi);
  // The comparison's modules load while the probe runs too (verifyProbe imports them again from the module cache).
  const preloading = Promise.all([import("./compare.ts"), import("../catalog/lib/checker.ts"), import("../matrix/compat.ts"), import("../matrix/suggest.ts")]);
  for (const p of [reading, loading, preloading]) p.catch(() => {}); // awaited below, or not at all when the probe fails
  const { probe, label, proof } = await probing;
  if (probe.torch && !probe.torch.ok) throw new VerifyRunError(`torch cannot be imported in ${label}: ${probe.torch.error}`);
  let host = await reading;
  const { catalog, variants } = await loading;
  const report = await verifyProbe(probe, label, { variants, catalog, host }, o.name);
  if (proof) report.proof = proof;
  if (needsDriverCause(report, probe, variants, o) && host.gpus.length === 0 && host.sources.nvidiaSmi === NOT_READ) host = await hostOf(o, true);
  await addDriverCause(report, probe, { variants, host }, o);
  return report;
}

/** The probe judged, what it ran in, and what became of the proof. */
interface Probed {
  probe: Probe;
  label: string;
  proof: VerifyReport["proof"] | null;
}

/**
 * The probe verify checks: the recorded one, or one run in the plan's Python (a named environment's extras probed
 * too); with a usable proof, without --cuobjdump and the device code taken from the proof (else run again with it).
 * @throws VerifyInputError when the Python cannot be run; VerifyRunError when it gives no result
 */
async function probeOf(plan: VerifyPlan, source: VariantSource | undefined): Promise<Probed> {
  if (plan.recorded) return { ...plan.recorded, proof: null };
  const o = plan.options;
  const target = plan.target!;
  const extras = await extrasOf(o, source);
  const run = async (cuobjdump: boolean) => {
    const r = await runProbe(target, { gpu: o.gpu !== false, extras, cuobjdump });
    if (!r.ok) throw r.exit === 2 ? new VerifyInputError(r.message) : new VerifyRunError(r.message);
    return r.probe;
  };
  const label = (p: Probe) => `${target.label} (${p.python.executable})`;
  const read = plan.proof;
  if (!read) {
    const probe = await run(true);
    return { probe, label: label(probe), proof: null };
  }
  const path = read.ok ? read.proof.path : read.path;
  const setAside = (why: string) => ({ path, used: false, why, tool: null, summary: null });
  if (!read.ok) {
    const probe = await run(true);
    return { probe, label: label(probe), proof: setAside(read.reason) };
  }
  const live = await run(false);
  if (live.torch && !live.torch.ok) return { probe: live, label: label(live), proof: null };
  const merged = withProofDeviceCode(live, read.proof);
  if (merged.ok) {
    const { probe: p, summary } = read.proof;
    return { probe: merged.probe, label: label(live), proof: { path, used: true, why: null, tool: p.cuobjdump!.tool, summary } };
  }
  const probe = await run(true);
  return { probe, label: label(probe), proof: setAside(merged.reason) };
}

/** A named environment's extras, probed too (part of its promise: version, import on its torch); [] otherwise. */
async function extrasOf(o: VerifyOptions, source: VariantSource | undefined): Promise<string[]> {
  if (!o.name) return [];
  const { environmentOf, parseName } = await import("../matrix/naming.ts");
  const envName = parseName(o.name)?.package;
  if (!envName || environmentOf(envName) === null || envName === ENV_PACKAGE) return [];
  const s = source ?? (await import("../matrix/variant-source.ts")).loadVariants;
  return (await s(o.matrix)).variants.find((v) => v.name === o.name)?.extras ?? [];
}

/** The `sources.nvidiaSmi` of a host read without running nvidia-smi (host/read-host.ts `gpus: false`). */
const NOT_READ = "not read";

/**
 * The host as detect reads it (--cpuinfo, --nvidia-smi, --machine or this machine); `gpus` false leaves nvidia-smi
 * out (no GPUs, their source NOT_READ). @throws VerifyInputError for bad input
 */
async function hostOf(o: VerifyOptions, gpus: boolean): Promise<HostInfo> {
  const { HostFileError, HostInputError, MachineError, readHost } = await import("../host/read-host.ts");
  try {
    return await readHost({ cpuinfo: o.cpuinfo, nvidiaSmi: o.nvidiaSmi, machine: o.machine, gpus });
  } catch (e) {
    if (e instanceof HostInputError || e instanceof HostFileError || e instanceof MachineError) throw new VerifyInputError(e.message);
    throw e;
  }
}

/**
 * The pure part: check `name` (or detect's pick on the context's host) against `probe` (of the Python `label`) and
 * identify the installation.
 * @throws VerifyInputError for an unknown name or when detect picks nothing.
 */
export async function verifyProbe(probe: Probe, label: string, ctx: VerifyContext, name: string | undefined): Promise<VerifyReport> {
  const [{ allHold, checkPromise, identify }, { catalogCheckerFacts }, { isaFit }, { shown }] = await Promise.all([
    import("./compare.ts"),
    import("../catalog/lib/checker.ts"),
    import("../matrix/compat.ts"),
    import("../matrix/suggest.ts"),
  ]);
  const { variants, catalog, host } = ctx;
  let chosenBy = "given";
  let v: Variant | undefined;
  if (name !== undefined) {
    v = variants.find((x) => x.name === name);
    if (!v) throw new VerifyInputError(`unknown variant ${shown(name)} (not in the generated matrix; see \`variant-matrix list\`)`);
  } else {
    if (!host) throw new VerifyInputError("no NAME given and no host to pick one for");
    const { recommend } = await import("../detect/recommend.ts");
    const pkg = await probedPackage(catalog, probe, variants);
    const r = recommend(host, [...variants], catalog, { package: pkg });
    const pick = r.variants[0] ?? r.cpuFallback;
    if (!pick) throw new VerifyInputError(`detect picks no ${pkg} variant of the matrix for this host; give NAME`);
    v = variants.find((x) => x.name === pick)!;
    chosenBy = "picked by detect for this host";
  }
  // detect's own rule: the host's CPU runs the ISA when it has every feature the ISA requires.
  const isaRuns = host ? isaFit(host, catalog).runnable.some((i) => i.key === v!.isa) : null;
  const facts = catalogCheckerFacts(catalog);
  const checks = checkPromise(v, probe, facts, { isaRuns });
  const who = identify(variants.filter((x) => x.package === v!.package), probe, facts);
  return { name: v.name, chosenBy, python: label, checks, holds: allHold(checks), installationIs: who.matches, nearest: who.nearest };
}

/**
 * Which package variant a probed installation is, by what imports in it: the environment when every package on torch
 * it holds imports (and the matrix has environments), else the first package on torch that imports (table order),
 * else pytorch.
 */
export async function probedPackage(cat: Pick<Catalog, "packagesOnTorch">, probe: Probe, variants: readonly Variant[]): Promise<string> {
  const { packageProbes } = await import("./compare.ts");
  const probed = packageProbes(probe);
  const ok = cat.packagesOnTorch.filter((p) => probed[p.name]?.ok).map((p) => p.name);
  const env = variants.find((v) => v.package === ENV_PACKAGE);
  if (env && ok.length && cat.packagesOnTorch.filter((p) => p.inEnv && variants.some((v) => v.package === p.name)).every((p) => ok.includes(p.name)))
    return ENV_PACKAGE;
  return ok.find((n) => variants.some((v) => v.package === n)) ?? TORCH_PACKAGE;
}

/** Whether the GPU check may owe its failure to the host's driver: a CUDA variant, GPU checks asked for, torch sees no GPU. */
function needsDriverCause(report: VerifyReport, probe: Probe, variants: readonly Variant[], o: VerifyOptions): boolean {
  const v = variants.find((x) => x.name === report.name);
  return !!v && v.cuda !== null && o.gpu !== false && !!probe.gpu && !probe.gpu.available;
}

/**
 * When the variant's torch sees no GPU while nvidia-smi sees one, say why on the GPU check (verify/driver.ts) and how to
 * run again through the host's driver; the check then fails instead of reading "not checkable here".
 */
async function addDriverCause(report: VerifyReport, probe: Probe, ctx: { variants: readonly Variant[]; host: HostInfo | null }, o: VerifyOptions): Promise<void> {
  const { variants, host } = ctx;
  const v = variants.find((x) => x.name === report.name);
  // Only when the probe asked torch for the GPU (not --no-gpu, not a probe recorded without it).
  if (!v || !host || !needsDriverCause(report, probe, variants, o) || host.gpus.length === 0) return;
  const [{ checkedVariants, HostAnswers }, { existsOn }, { machines }, { driverCause }, { allHold }] = await Promise.all([
    import("../preflight/checks.ts"),
    import("../preflight/host-root.ts"),
    import("../catalog/index.ts"),
    import("./driver.ts"),
    import("./compare.ts"),
  ]);
  const h = { root: o.hostRoot ?? "/", env: process.env };
  const p = new HostAnswers(h);
  const cause = driverCause(
    {
      cuda: v.cuda,
      torchSeesGpu: !!probe.gpu?.available,
      hostGpus: host.gpus.length,
      hostLibcuda: p.driver().hostLibcuda,
      nixosDriver: existsOn(h, `${machines.nixosDriverLib.dir}/libcuda.so.1`),
      throughRoute: o.hostDriver !== undefined ? o.hostDriver || "nixglhost" : null,
    },
    checkedVariants([v], variants)[0]!,
    `npx variant-matrix verify ${v.name}${o.python ? ` --python ${o.python}` : ""}`,
  );
  if (!cause) return;
  const gpu = report.checks.find((c) => c.promise === "a GPU this variant runs on");
  if (gpu) Object.assign(gpu, { ok: false, found: cause.found });
  report.holds = allHold(report.checks);
  report.hostDriver = { lines: cause.lines };
}
