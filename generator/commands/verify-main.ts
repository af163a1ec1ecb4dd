/**
 * `variant-matrix verify`'s work and printing (commands/verify.ts holds its options and loads this module when it
 * runs, so that the probe's comparison, the preflight checks and detect's rules stay out of every other command's
 * start-up): check a variant's promise against a probe, identify the installation, and print the report.
 */
import { errorLine, withExitCode } from "../errors.ts";
import { shown } from "../matrix/suggest.ts";
import { readFileSync } from "node:fs";
import { environmentOf, parseName } from "../matrix/naming.ts";
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import { HostFileError, HostInputError, MachineError, readHost, type HostInfo } from "../host/read-host.ts";
import { installLines, recommend } from "../detect/recommend.ts";
import { isaFit } from "../matrix/compat.ts";
import { loadVariants, type VariantSource } from "../matrix/variant-source.ts";
import { allHold, checkPromise, identify, packageProbes, type Probe, type PromiseCheck } from "../verify/compare.ts";
import { catalogCheckerFacts } from "../catalog/lib/checker.ts";
import { resolvePython, runProbe, VerifyInputError } from "../verify/run-probe.ts";
import { ENV_PACKAGE, TORCH_PACKAGE } from "../catalog/lib/packages.ts";
import { checkedVariants, HostAnswers } from "../preflight/checks.ts";
import { existsOn } from "../preflight/host-root.ts";
import { machines } from "../catalog/index.ts";
import { driverCause } from "../verify/driver.ts";
import { wrap, wrapLines } from "../text.ts";
import { terminalWidth, type Io } from "./shared.ts";
import type { VerifyArgs } from "./verify-options.ts";

/** What verify reports (also its --json shape). */
export interface VerifyReport {
  name: string;
  /** Why this name: "given" or "picked by detect for this host". */
  chosenBy: string;
  python: string;
  checks: PromiseCheck[];
  holds: boolean;
  /** Variants of the matrix whose every promise holds for this installation. */
  installationIs: string[];
  nearest: { name: string; failed: number }[];
  /** Why torch sees no GPU that nvidia-smi sees (verify/driver.ts), with the ways to run again; null when not that. */
  hostDriver?: { lines: string[] } | null;
}

/** What a probe is checked against: the matrix's variants, the catalog, and the host (null when not read). */
export interface VerifyContext {
  variants: readonly Variant[];
  catalog: Catalog;
  host: HostInfo | null;
}

/**
 * The pure part: check `name` (or detect's pick on the context's host) against `probe` (of the Python `label`) and
 * identify the installation.
 * @throws VerifyInputError for an unknown name or when detect picks nothing.
 */
export function verifyProbe(probe: Probe, label: string, ctx: VerifyContext, name: string | undefined): VerifyReport {
  const { variants, catalog, host } = ctx;
  let chosenBy = "given";
  let v: Variant | undefined;
  if (name !== undefined) {
    v = variants.find((x) => x.name === name);
    if (!v) throw new VerifyInputError(`unknown variant ${shown(name)} (not in the generated matrix; see \`variant-matrix list\`)`);
  } else {
    if (!host) throw new VerifyInputError("no NAME given and no host to pick one for");
    const pkg = probedPackage(catalog, probe, variants);
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
export function probedPackage(cat: Pick<Catalog, "packagesOnTorch">, probe: Probe, variants: readonly Variant[]): string {
  const probed = packageProbes(probe);
  const ok = cat.packagesOnTorch.filter((p) => probed[p.name]?.ok).map((p) => p.name);
  const env = variants.find((v) => v.package === ENV_PACKAGE);
  if (env && ok.length && cat.packagesOnTorch.filter((p) => p.inEnv && variants.some((v) => v.package === p.name)).every((p) => ok.includes(p.name)))
    return ENV_PACKAGE;
  return ok.find((n) => variants.some((v) => v.package === n)) ?? TORCH_PACKAGE;
}

/**
 * Render a report for the terminal. When the variant was picked by detect, or its promise does not hold here, it ends
 * with how to install that variant (detect/recommend.ts installLines).
 */
export function formatReport(r: VerifyReport, install: { org?: string; substituter?: string } = {}, width = 80): string {
  const out = [`verify ${r.name} (${r.chosenBy}) in ${r.python}`];
  for (const c of r.checks) {
    const mark = c.ok === true ? "✓" : c.ok === false ? "✗" : "–";
    out.push(`  ${mark} ${c.promise}: ${c.ok === true ? c.found : `expected ${c.expected}, found ${c.found}`}`);
  }
  if (r.hostDriver) for (const l of r.hostDriver.lines) out.push(wrap(l, width, { indent: "    ", hang: "      " }));
  const failed = r.checks.filter((c) => c.ok === false).length;
  const unchecked = r.checks.filter((c) => c.ok === null).length;
  out.push(`${r.checks.length - failed - unchecked} of ${r.checks.length} promises hold, ${failed} failed, ${unchecked} not checkable here.`);
  out.push(
    r.installationIs.length
      ? `This installation is: ${r.installationIs.join(", ")}`
      : `This installation is none of the matrix's variants${r.nearest.length ? ` (nearest: ${r.nearest.map((n) => `${n.name}, ${n.failed} failed`).join("; ")})` : ""}.`,
  );
  if (r.chosenBy !== "given" || !r.holds) {
    out.push(`install ${r.name}:`);
    for (const l of installLines(r.name, install)) out.push(`  $ ${l}`);
  }
  // Wrapped to the terminal (generator/text.ts): prose at spaces, install commands with shell continuations.
  return wrapLines(out.join("\n"), width) + "\n";
}

/**
 * Run verify; returns the exit status (0, 1, 2; see the file header) instead of exiting.
 * @param io where to write (main's run.io; tests hand in recorders).
 */
export async function runVerify(args: VerifyArgs, source: VariantSource = loadVariants, io: Io): Promise<number> {
  return withExitCode(io.err, () => verify(args, source, io));
}

/** verify's work (see runVerify). @throws VerifyInputError (an InputError) for bad input */
async function verify(args: VerifyArgs, source: VariantSource, io: Io): Promise<number> {
  // The probe (seconds on a GPU host) runs while the host is read and the matrix loaded; their errors are reported
  // in this order: the probe's, the host's, the matrix's.
  const probing = probeOf(args, source);
  const reading = hostOf(args);
  const loading = source(args.matrix);
  for (const p of [reading, loading]) p.catch(() => {}); // awaited below, or not at all when the probe fails
  const got = await probing;
  if (!got.ok) {
    io.err(errorLine(got.message));
    return got.exit;
  }
  const { probe, label } = got;
  if (probe.torch && !probe.torch.ok) {
    io.err(errorLine(`torch cannot be imported in ${label}: ${probe.torch.error}`));
    return 1;
  }
  const host = await reading;
  const { catalog, variants } = await loading;
  const report = verifyProbe(probe, label, { variants, catalog, host }, args.name);
  addDriverCause(report, probe, variants, host, args);
  io.out(args.json ? JSON.stringify(report, null, 2) + "\n" : formatReport(report, { org: args.org, substituter: args.substituter }, terminalWidth(io)));
  return report.holds ? 0 : 1;
}

/** The host as detect reads it (--cpuinfo, --nvidia-smi, --machine or this machine). @throws VerifyInputError for bad input */
async function hostOf(args: VerifyArgs): Promise<HostInfo> {
  try {
    return await readHost({ cpuinfo: args.cpuinfo, nvidiaSmi: args["nvidia-smi"], machine: args.machine });
  } catch (e) {
    if (e instanceof HostInputError || e instanceof HostFileError || e instanceof MachineError) throw new VerifyInputError(e.message);
    throw e;
  }
}

/**
 * The probe verify checks: the recorded one (`--probe FILE`), or one run in `--python` (through `--host-driver` when
 * given; a named environment's extras probed too), with what it ran in; or why there is none (its exit status).
 * @throws VerifyInputError for an unreadable --probe file or a --python that is no Python
 */
async function probeOf(args: VerifyArgs, source: VariantSource): Promise<{ ok: true; probe: Probe; label: string } | { ok: false; exit: 1 | 2; message: string }> {
  if (args.probe) {
    let probe: Probe;
    try {
      probe = JSON.parse(readFileSync(args.probe, "utf8")) as Probe;
    } catch (e) {
      throw new VerifyInputError(`--probe: cannot read ${args.probe}: ${(e as Error).message}`);
    }
    return { ok: true, probe, label: `the recorded probe ${args.probe} (${probe.python?.executable ?? "?"})` };
  }
  const target = resolvePython(args.python);
  // A named environment's extras are probed too (they are part of its promise: version, import on its torch).
  const envName = args.name ? parseName(args.name)?.package : undefined;
  const extras =
    envName && environmentOf(envName) !== null && envName !== ENV_PACKAGE
      ? ((await source(args.matrix)).variants.find((v) => v.name === args.name)?.extras ?? [])
      : [];
  if (args.hostDriver !== undefined) target.wrapper = [args.hostDriver || "nixglhost"];
  const r = await runProbe(target, { gpu: args.gpu !== false, extras });
  if (!r.ok) return r;
  return { ok: true, probe: r.probe, label: `${target.label} (${r.probe.python.executable})` };
}

/**
 * When the variant's torch sees no GPU while nvidia-smi sees one, say why on the GPU check (verify/driver.ts) and how to
 * run again through the host's driver; the check then fails instead of reading "not checkable here".
 */
function addDriverCause(report: VerifyReport, probe: Probe, variants: readonly Variant[], host: HostInfo | null, args: VerifyArgs): void {
  const v = variants.find((x) => x.name === report.name);
  // Only when the probe asked torch for the GPU (not --no-gpu, not a probe recorded without it).
  if (!v || !host || v.cuda === null || args.gpu === false || !probe.gpu || probe.gpu.available || host.gpus.length === 0) return;
  const h = { root: args.hostRoot ?? "/", env: process.env };
  const p = new HostAnswers(h);
  const cause = driverCause(
    {
      cuda: v.cuda,
      torchSeesGpu: !!probe.gpu?.available,
      hostGpus: host.gpus.length,
      hostLibcuda: p.driver().hostLibcuda,
      nixosDriver: existsOn(h, `${machines.nixosDriverLib.dir}/libcuda.so.1`),
      throughRoute: args.hostDriver !== undefined ? args.hostDriver || "nixglhost" : null,
    },
    checkedVariants([v], variants)[0]!,
    `npx variant-matrix verify ${v.name}${args.python ? ` --python ${args.python}` : ""}`,
  );
  if (!cause) return;
  const gpu = report.checks.find((c) => c.promise === "a GPU this variant runs on");
  if (gpu) Object.assign(gpu, { ok: false, found: cause.found });
  report.holds = allHold(report.checks);
  report.hostDriver = { lines: cause.lines };
}

