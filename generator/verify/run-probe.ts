/**
 * Running the probe (generator/verify/probe.py) in a Python environment, for `verify`: which interpreter and
 * PYTHONPATH `--python PATH` means (resolvePython), and the child process that runs the probe and reads its JSON
 * (runProbe). The command (commands/verify.ts) decides and prints; this module owns the process.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import path from "node:path";
import { InputError } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import { ProcessStartError, runCommand, type CommandResult } from "../process.ts";
import type { Probe } from "./compare.ts";

/** The probe script shipped in the repository (also used by pkgs/checks.nix). */
export const PROBE_SCRIPT = path.join(REPO_ROOT, "generator", "verify", "probe.py");

/** Bad input for verify (exit 2). */
export class VerifyInputError extends InputError {}

/** How to run the probe: interpreter and extra environment. */
export interface PythonTarget {
  interpreter: string;
  env: Record<string, string>;
  /** What the user named, for messages. */
  label: string;
  /** A program the interpreter runs under (e.g. ["/…/bin/nixglhost"]: the host's driver route). */
  wrapper?: string[];
}

/**
 * Resolve `--python`: an interpreter file; a directory with bin/python3 (flox environment, venv); or a package
 * output with lib/python3.X/site-packages (a `result-*` link), whose site-packages and those of every path in its
 * nix-support/propagated-build-inputs closure go on PYTHONPATH of `python3` from PATH.
 * @throws VerifyInputError when PATH does not exist or holds none of these.
 */
export function resolvePython(p: string | undefined): PythonTarget {
  if (p === undefined) return { interpreter: "python3", env: {}, label: "python3 on PATH" };
  if (!existsSync(p)) throw new VerifyInputError(`--python: ${p} does not exist`);
  if (!statSync(p).isDirectory()) return { interpreter: p, env: {}, label: p };
  for (const bin of ["bin/python3", "bin/python"]) if (existsSync(path.join(p, bin))) return { interpreter: path.join(p, bin), env: {}, label: p };
  const sites = sitePackagesClosure(p);
  if (sites.length === 0)
    throw new VerifyInputError(`--python: ${p} has neither bin/python3 nor lib/python3.X/site-packages (not an environment or a Python package output)`);
  return { interpreter: "python3", env: { PYTHONPATH: sites.join(":") }, label: `${p} (on PYTHONPATH of python3)` };
}

/** The site-packages directories of `root` and of every path in its nix-support/propagated-build-inputs closure. */
function sitePackagesClosure(root: string): string[] {
  const seen = new Set<string>();
  const sites: string[] = [];
  const visit = (dir: string) => {
    const real = path.resolve(dir);
    if (seen.has(real)) return;
    seen.add(real);
    const lib = path.join(real, "lib");
    if (existsSync(lib))
      for (const d of readdirSync(lib)) if (/^python3\.\d+$/.test(d) && existsSync(path.join(lib, d, "site-packages"))) sites.push(path.join(lib, d, "site-packages"));
    const prop = path.join(real, "nix-support", "propagated-build-inputs");
    if (existsSync(prop)) for (const dep of readFileSync(prop, "utf8").split(/\s+/).filter(Boolean)) visit(dep);
  };
  visit(root);
  return sites;
}

/**
 * What runProbe keeps of the Python's output, however much it prints (a Python that prints without end would
 * otherwise fill this process's memory): of stdout the last lines, the probe's JSON result among them (about 0.6 MB on
 * an H100, so 32 Mi characters leave room); of stderr the last 3 lines a failure quotes, each cut at 500 characters
 * with its length said.
 */
export const PROBE_OUTPUT_KEPT = { stdout: { lines: 4, lineChars: 32 << 20 }, stderr: { lines: 3, lineChars: 500 } } as const;

/** The outcome of running the probe: its JSON, or why there is none. */
export type ProbeRun = { ok: true; probe: Probe } | { ok: false; exit: 1 | 2; message: string };

/**
 * Run probe.py in `target` (a real child process, at most 30 minutes): with `--cuobjdump` (unless `opts.cuobjdump` is
 * false: verify given a proof reads no device code here), `--gpu` when `opts.gpu`, and `--extras=A,B` for an
 * environment's extras. Asynchronous, so that verify reads the host and loads the matrix
 * while the probe runs (seconds on a GPU host: torch's import, CUDA's initialisation, cuobjdump of libtorch_cuda.so).
 * Never rejects for a Python that fails: a program not found is exit 2, a signal (SIGILL: the ISA promise does not
 * hold) or no JSON result exit 1 (2 when the Python exited 0 without one).
 */
export async function runProbe(target: PythonTarget, opts: { gpu: boolean; extras?: readonly string[]; cuobjdump?: boolean }): Promise<ProbeRun> {
  const args = [PROBE_SCRIPT, ...(opts.cuobjdump === false ? [] : ["--cuobjdump"]), ...(opts.gpu ? ["--gpu"] : []), ...(opts.extras?.length ? [`--extras=${opts.extras.join(",")}`] : [])];
  const argv = [...(target.wrapper ?? []), target.interpreter, ...args];
  let r: CommandResult;
  try {
    r = await runCommand(argv, { env: { ...process.env, ...target.env }, input: "", timeoutMs: 30 * 60_000, tail: PROBE_OUTPUT_KEPT });
  } catch (e) {
    if (!(e instanceof ProcessStartError)) throw e;
    if (e.code !== "ENOENT") return { ok: false, exit: 1, message: `the probe in ${target.label} printed no result (exit null): ${e.message}` };
    return {
      ok: false,
      exit: 2,
      message: target.wrapper
        ? `cannot run ${target.wrapper[0]}: not found (--host-driver: put nixglhost on PATH or give its path; docs/gpu-driver.md)`
        : `cannot run ${target.interpreter}: not found (give --python PATH)`,
    };
  }
  if (r.signal) {
    const why =
      r.stopped ??
      (r.signal === "SIGILL"
        ? "illegal instruction: this CPU lacks an instruction the build uses, so the ISA promise does not hold on this host"
        : r.signal === "SIGSEGV"
          ? "segmentation fault while importing torch/torchaudio (often a torchaudio built against another torch)"
          : `signal ${r.signal} (${osConstants.signals[r.signal] ?? "?"})`);
    return { ok: false, exit: 1, message: `the probe in ${target.label} was killed by ${r.signal}: ${why}` };
  }
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    const probe = JSON.parse(line) as Probe;
    if (probe.probe !== 1) throw new Error("not a probe");
    return { ok: true, probe };
  } catch {
    const err = r.stderr.trim().split("\n").slice(-3).join(" | ");
    return { ok: false, exit: r.code === 0 ? 2 : 1, message: `the probe in ${target.label} printed no result (exit ${r.code}): ${err || "no output"}` };
  }
}
