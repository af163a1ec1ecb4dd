/**
 * `variant-matrix detect`'s work and printing (commands/detect.ts holds its options and loads this module when it
 * runs, so that reading a host and detect's rules stay out of every other command's start-up): one call
 * (detect/choose.ts recommendForHost: read the host, pick the variant), then the recommendation printed with its
 * install lines.
 */
import { withExitCode } from "../errors.ts";
import { installLines, type Recommendation } from "../detect/recommend.ts";
import { loadVariants, type VariantSource } from "../matrix/variant-source.ts";
import { recommendForHost } from "../detect/choose.ts";
import { settingLines, wrap, wrapCommand } from "../text.ts";
import { copyableCommand, terminalWidth, type Io } from "./shared.ts";
import { parsePrefer, type DetectArgs } from "./detect-options.ts";

/**
 * Render a recommendation for the terminal (plain text, one finding per paragraph), wrapped to `width` columns
 * (generator/text.ts): install commands are broken only at spaces, with shell continuations.
 */
export function formatRecommendation(r: Recommendation, install: { org?: string; substituter?: string; from?: HostFlags } = {}, width = 80): string {
  const out: string[] = [];
  const h = r.host;
  const para = (text: string, indent = "", hang?: string) => out.push(wrap(text, width, { indent, hang }));
  para(`Host: ${h.system} (machine ${h.machine}; ${h.sources.machine})`);
  para(`CPU: ${h.cpu} [${h.sources.cpuinfo}]`, "  ", "    ");
  if (h.gpus.length === 0) para(`GPU: none — ${h.gpuAbsentReason ?? "no NVIDIA GPU"}`, "  ", "    ");
  for (const g of h.gpus) para(`GPU ${g.index}: ${g.name}, compute capability ${g.capability} (sm${g.sm}), driver ${g.driver}`, "  ", "    ");
  for (const reason of r.reasons) para(reason, "  - ");
  if (h.systemFeatures.length) {
    para("As a Nix builder this host runs these variants' code; its nix.conf line:", "  ", "    ");
    out.push(...settingLines(`extra-system-features = ${h.systemFeatures.join(" ")}`, width, "    "));
  }
  out.push("");
  for (const p of r.picks) {
    const what = p.kind === "cpu" ? "CPU-only" : `GPU ${p.gpuIndices.join(",")} (${p.gpuName}, sm${p.sm})`;
    if (p.variant) {
      para(`Recommended ${r.package} for ${what}: ${p.variant}`);
      for (const w of p.warnings) para(`warning: ${w}`, "  ! ", "    ");
      out.push("  install:");
      for (const l of installLines(p.variant, install)) out.push(wrapCommand(l, width, "    "));
    } else para(`No ${r.package} variant fits ${what}.`);
    for (const reason of p.reasons) para(reason, "  - ");
    for (const problem of p.problems) para(problem, "  ! ");
    if (p.alternatives.length) para(`Also fits: ${p.alternatives.join(", ")}`, "  ", "    ");
    for (const s of p.suggestions) para(s, "  → ");
    out.push("");
  }
  if (r.status !== "ok" && r.cpuFallback) para(`CPU-only fallback: ${r.cpuFallback}`);
  const next = r.variants[0] ?? r.cpuFallback;
  if (next) {
    if (out.at(-1) !== "") out.push("");
    for (const l of nextStep(r, next, install.from ?? {})) out.push(l.command ? wrapCommand(l.text, width, "  ") : wrap(l.text, width, { indent: "  ", hang: "  " }));
  }
  return out.join("\n").trimEnd() + "\n";
}

/** The options that named the host and matrix detect read, repeated in the commands it prints. */
type HostFlags = Parameters<typeof copyableCommand>[1];

/**
 * detect's "Next:" lines: install of the pick (`next`) for the package detect picked for, linked at ./PACKAGE, with
 * what it does for a GPU or a CPU-only pick; for a recorded host (--cpuinfo/--nvidia-smi), that install runs on
 * that host, and its plan is shown here by `install --dry-run` with the same recording. Commands are whole lines.
 */
export function nextStep(r: Recommendation, next: string, from: NonNullable<HostFlags>): { text: string; command: boolean }[] {
  const gpu = r.picks.some((p) => p.variant === next && p.kind === "gpu");
  const dir = `./${r.package}`;
  const does = gpu
    ? `checks the host, builds, links ${dir}, takes the host's GPU-driver route and verifies ${next} on the GPU`
    : `checks the host, builds, links ${dir} and verifies ${next} (CPU-only: no GPU check)`;
  const pkg = r.package === "torch-env" ? [] : ["--package", r.package];
  const recorded = from.cpuinfo !== undefined || from["nvidia-smi"] !== undefined || from.machine !== undefined;
  const matrixOnly = { matrix: from.matrix };
  if (!recorded)
    return [
      { text: "Next:", command: false },
      { text: copyableCommand(["install", next], matrixOnly), command: true },
      { text: `(${does}); this only checks:`, command: false },
      { text: copyableCommand(["doctor", next], matrixOnly), command: true },
    ];
  return [
    { text: "Next, on the recorded host:", command: false },
    { text: copyableCommand(["install", next], matrixOnly), command: true },
    { text: `(${does}). Its plan for that host, here:`, command: false },
    { text: copyableCommand(["install", "--dry-run", next, ...pkg], from), command: true },
  ];
}

/**
 * Run detect: read the host, load the variants, recommend, print. Returns the exit status instead of exiting, so
 * tests and the CLI share it.
 * @param io where to write (main's run.io; tests hand in recorders).
 */
export async function runDetect(args: DetectArgs, source: VariantSource = loadVariants, io: Io): Promise<number> {
  return withExitCode(io.err, () => detect(args, source, io));
}

/** detect's work (see runDetect): its options to one call (detect/choose.ts recommendForHost), the answer printed. @throws InputError for bad input (an unknown package, a bad host file, a bad matrix) */
async function detect(args: DetectArgs, source: VariantSource, io: Io): Promise<number> {
  const host = { package: args.package, hostRoot: args.hostRoot, cpuinfo: args.cpuinfo, nvidiaSmi: args["nvidia-smi"], machine: args.machine, mem: args.mem };
  const r = await recommendForHost({ ...host, matrix: args.matrix, prefer: parsePrefer(args.prefer) }, source, (t) => io.err(t));
  const install = { org: args.org, substituter: args.substituter, from: { cpuinfo: args.cpuinfo, "nvidia-smi": args["nvidia-smi"], machine: args.machine, matrix: args.matrix } };
  io.out(
    args.json
      ? JSON.stringify({ ...r, install: Object.fromEntries(r.variants.map((n) => [n, installLines(n, install)])) }, null, 2) + "\n"
      : formatRecommendation(r, install, terminalWidth(io)),
  );
  return r.status === "ok" ? 0 : 1;
}
