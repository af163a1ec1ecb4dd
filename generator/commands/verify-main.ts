/**
 * `variant-matrix verify`'s work as the command does it (commands/verify.ts holds its options and loads this module
 * when it runs): map the options onto verify's library (verify/verify.ts planVerify → runVerify → VerifyReport) and print
 * the report. This module's own imports are light, so that the probe starts before the comparison, the catalog and
 * detect's rules load (runVerify loads them while the probe runs).
 */
import { errorLine, EXIT, withExitCode } from "../errors.ts";
import type { VariantSource } from "../matrix/variant-source.ts";
import { planVerify, runVerify, VerifyInputError, VerifyRunError, type VerifyOptions, type VerifyReport } from "../verify/verify.ts";
import { terminalWidth, type Io } from "./shared.ts";
import type { VerifyArgs } from "./verify-options.ts";

export type { VerifyReport } from "../verify/verify.ts";

/** verify's options as the library takes them, from the command's arguments. */
export function verifyOptionsOf(args: VerifyArgs): VerifyOptions {
  return {
    name: args.name,
    python: args.python,
    probe: args.probe,
    proof: args.proof,
    gpu: args.gpu,
    hostDriver: args.hostDriver,
    cpuinfo: args.cpuinfo,
    nvidiaSmi: args["nvidia-smi"],
    machine: args.machine,
    hostRoot: args.hostRoot,
    matrix: args.matrix,
  };
}

/**
 * Render a report for the terminal. When the variant was picked by detect, or its promise does not hold here, it ends
 * with how to install that variant (detect/recommend.ts installLines).
 */
export async function formatReport(r: VerifyReport, install: { org?: string; substituter?: string } = {}, width = 80): Promise<string> {
  const [{ installLines }, { wrap, wrapLines }] = await Promise.all([import("../detect/recommend.ts"), import("../text.ts")]);
  const out = [`verify ${r.name} (${r.chosenBy}) in ${r.python}`];
  if (r.proof) out.push(proofLine(r.proof));
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

/** The report's line about the proof given: the device code judged from it, or why it was set aside. */
export function proofLine(p: NonNullable<VerifyReport["proof"]>): string {
  return p.used
    ? `device code judged from the proof at ${p.path} (its cuobjdump ${p.tool}${p.summary ? `; its report: ${p.summary}` : ""}); cuobjdump did not run here`
    : `the proof at ${p.path} was set aside: ${p.why}; device code read here with cuobjdump`;
}

/**
 * Run verify; returns the exit status (0, 1, 2; see commands/verify.ts) instead of exiting.
 * @param source where the variants come from (default the matrix; tests hand in their own)
 * @param io where to write (main's run.io; tests hand in recorders).
 */
export async function verifyMain(args: VerifyArgs, source: VariantSource | undefined, io: Io): Promise<number> {
  return withExitCode(io.err, async () => {
    let report: VerifyReport;
    try {
      report = await runVerify(planVerify(verifyOptionsOf(args)), source);
    } catch (e) {
      if (!(e instanceof VerifyRunError) && !(e instanceof VerifyInputError)) throw e;
      // Wrapped to the terminal, continuation lines under a two-space hang (the message names paths and options).
      const { wrap } = await import("../text.ts");
      io.err(wrap(errorLine(e.message).trimEnd(), terminalWidth(io), { hang: "  " }) + "\n");
      return e instanceof VerifyRunError ? e.exitCode : EXIT.input;
    }
    io.out(args.json ? JSON.stringify(report, null, 2) + "\n" : await formatReport(report, { org: args.org, substituter: args.substituter }, terminalWidth(io)));
    return report.holds ? 0 : 1;
  });
}
