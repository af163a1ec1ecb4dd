/**
 * `doctor [NAME]` as data: the variant (NAME, or detect's pick for the host: choose.ts), the files generated beside the
 * matrix checked to say what it gives now, the backend, and every check of generator/preflight/checks.ts on this host
 * (a recording's GPU driver judged by the recording). The command (generator/commands/doctor.ts) prints the report.
 */
import { dirname } from "node:path";
import { InputError } from "../errors.ts";
import { shown } from "../matrix/suggest.ts";
import type { Backend } from "../driver/backend.ts";
import type { CheckResult } from "../preflight/checks.ts";
import type { ChooseOptions } from "./choose.ts";

/** Bad input for doctor (exit 2): an unknown NAME. */
export class DoctorInputError extends InputError {}

/** What doctor checks: the variant or how to pick it, the host, the backend, the Flox organisation, the matrix. */
export interface DoctorOptions extends ChooseOptions {
  /** `--backend` (default auto: flox when on PATH). */
  backend?: "auto" | "flox" | "nix";
  /** `--org`: also checks `flox auth status`. */
  org?: string;
  /** The matrix file (default: the repository's matrix.ts). */
  matrix?: string;
}

/** doctor's answer. */
export interface DoctorReport {
  /** The variant checked. */
  name: string;
  /** "given", or how detect picked it. */
  chosenBy: string;
  /** The host's Nix system. */
  system: string;
  backend: Backend;
  /** Its CUDA version; null for a CPU variant. */
  cuda: string | null;
  /** Every check, in preflight/checks.ts's order. */
  checks: CheckResult[];
  /** No check failed (exit 0; else 1). */
  ok: boolean;
}

/**
 * Check this host for a variant (see the file header).
 * @throws DoctorInputError for an unknown NAME; InputError for a host file that cannot be read, an invalid matrix, no
 *   variant for this host, or generated files that do not say what the matrix gives now
 */
export async function doctorReport(o: DoctorOptions): Promise<DoctorReport> {
  const [{ loadVariants }, { resolveBackend }, pre, { chooseVariant, isRecordedHost }] = await Promise.all([
    import("../matrix/variant-source.ts"),
    import("../driver/backend.ts"),
    import("../preflight/checks.ts"),
    import("./choose.ts"),
  ]);
  const project = await loadVariants(o.matrix);
  const { name, chosenBy, system } = await chooseVariant(o, project);
  const variant = project.variants.find((v) => v.name === name);
  if (!variant) throw new DoctorInputError(`unknown variant ${shown(name)} (variant-matrix list names them)`);
  // What doctor checks must be what install would build, as detect and install require: the files generated beside
  // the matrix say what it gives now (generate/generated-state.ts, the one comparison).
  if (project.project) (await import("../generate/generated-state.ts")).assertGeneratedFor(project.project, dirname(project.project.matrixFile), "doctor", [variant.name]);
  const backend = await resolveBackend(o.backend ?? "auto");
  const checked = pre.checkedVariants([variant], project.variants);
  const checks = pre.runChecks(
    // The checks judge this machine (its Nix, its nix.conf): a recording's CPU (--cpuinfo without --host-root) is not
    // the one whose nix.conf a system-features line would go to, so its own /proc/cpuinfo decides what it can run.
    { root: o.hostRoot ?? "/", env: process.env, cpuinfoFile: isRecordedHost(o) ? undefined : o.cpuinfo },
    { command: "doctor", variants: checked, backend, pinnedNixpkgs: true, hostSystem: system, org: o.org, teamCaches: project.caches },
  );
  // A recording (--cpuinfo/--nvidia-smi, no --host-root): its GPU driver from the recording, the rest "this machine".
  if (isRecordedHost(o)) await (await import("../preflight/recorded-host.ts")).judgeRecordedHost(o, checks, checked[0]!);
  return { name, chosenBy, system, backend, cuda: variant.cuda, checks, ok: !checks.some((r) => r.status === "fail") };
}
