/**
 * What `detect` knows about a host: its CPU (from `/proc/cpuinfo`), its NVIDIA GPUs (from `nvidia-smi`) and its
 * machine (`uname -m`). Parsing is pure (text in, data out); `readHost()` at the bottom is the only I/O.
 *
 * Inputs and their formats:
 * - `/proc/cpuinfo`: blocks of `key<TAB>: value` lines, one block per logical CPU, separated by blank lines.
 *   x86 lists its ISA extensions in `flags`; aarch64 in `Features`, and names the core with `CPU implementer` and
 *   `CPU part` (the MIDR_EL1 fields). Feature names are the kernel's spellings: x86 `avx512_bf16`,
 *   `avx512_vnni`, `avx512f`, `avx2` (arch/x86/include/asm/cpufeatures.h); aarch64 `asimddp`, `sve`, `sve2`,
 *   `i8mm`, `bf16`, `svebf16` (`hwcap_str[]` in arch/arm64/kernel/cpuinfo.c; Documentation/arch/arm64/elf_hwcaps.rst).
 * - `nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader`: one line per GPU,
 *   fields separated by ", ", e.g. `9.0, NVIDIA H100 80GB HBM3, 570.124.06` (format as shown in
 *   triton-inference-server/server PR #8070; `compute_cap` is "MAJOR.MINOR"). When the GPU driver sees no GPU it prints
 *   `No devices were found`. Drivers before the R510 series do not know the `compute_cap` field
 *   (huggingface/candle issue #733, driver 470).
 * - `uname -m`: `x86_64` or `aarch64` (`arm64` on some systems is accepted as aarch64).
 */
import { InputError } from "../errors.ts";
import { open, stat } from "node:fs/promises";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { machine as osMachine, totalmem } from "node:os";
import { cutLine, runTool } from "../process.ts";
import type { Catalog, CudaToolkit } from "../catalog/schema.ts";
import type { System } from "../constants.ts";

/** The most characters of a host file's line a message quotes; a longer line is cut, its length said. */
export const QUOTED_LINE_CHARS = 200;

/**
 * A recorded or live host file that cannot be read. `line` is 1-based (0 when the problem is not one line, e.g. a
 * missing `flags` line); `text` is that line as found. The message names the file and the line, quoted up to
 * QUOTED_LINE_CHARS characters (a longer one cut, with its length).
 */
export class HostInputError extends InputError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly text: string,
    readonly problem: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${problem}\n  ${line} | ${cutLine(text, QUOTED_LINE_CHARS)}` : `${file}: ${problem}`);
  }
}

/** CPU architecture family as `/proc/cpuinfo` shows it. */
export type CpuArch = "x86_64" | "aarch64";

/** One distinct aarch64 core type on the host (big.LITTLE hosts have several). */
export interface ArmCore {
  /** `CPU implementer`, lower-case hex: "0x41" (Arm Ltd). */
  implementer: string;
  /** `CPU part`, lower-case hex: "0xd4f". */
  part: string;
  /** How many logical CPUs report this core. */
  count: number;
}

/** The CPU part of a host, parsed from `/proc/cpuinfo`. */
export interface CpuInfo {
  arch: CpuArch;
  /**
   * Feature names every logical CPU reports (the intersection over all processor blocks: code must run on any
   * core the scheduler picks), in the kernel's spelling, sorted.
   */
  features: string[];
  /** x86 `model name` of the first CPU ("Intel(R) Xeon(R) Platinum 8480+"), null on aarch64 or when absent. */
  modelName: string | null;
  /** x86 `vendor_id` ("GenuineIntel", "AuthenticAMD"), null on aarch64. */
  vendor: string | null;
  /** aarch64 core types (empty on x86). */
  armCores: ArmCore[];
  /** Number of processor blocks (logical CPUs). */
  logicalCpus: number;
}

/** One NVIDIA GPU as `nvidia-smi` reports it. */
export interface GpuInfo {
  /** 0-based position in nvidia-smi's output (its device index). */
  index: number;
  /** Product name: "NVIDIA H100 80GB HBM3". */
  name: string;
  /** Compute capability "MAJOR.MINOR": "9.0". */
  capability: string;
  /** SM number (capability without the dot): "90". */
  sm: string;
  /** Driver version: "570.124.06". */
  driver: string;
}

/** Everything `recommend()` needs to know about a host. */
export interface HostInfo {
  /** `uname -m` (normalised: `arm64` becomes `aarch64`). */
  machine: CpuArch;
  /** Nix system of the host: "x86_64-linux". */
  system: System;
  cpu: CpuInfo;
  /** NVIDIA GPUs, in nvidia-smi order; [] when there is none. */
  gpus: GpuInfo[];
  /** Where each part came from (file paths or "/proc/cpuinfo", "nvidia-smi", "uname"), for the report. */
  sources: { cpuinfo: string; nvidiaSmi: string; machine: string };
  /** Why there is no GPU information, when `gpus` is empty: "nvidia-smi not found", "No devices were found". */
  gpuAbsentReason: string | null;
  /**
   * The host's memory in bytes (`MemTotal` of /proc/meminfo, of a recording's `meminfo` file, or `--mem`), and where
   * it comes from; bytes null when nothing says (a recording without one): the wait's schedule then takes memory as
   * not limiting and says so.
   */
  memory: { bytes: number | null; source: string };
}

/**
 * `MemTotal` of a /proc/meminfo text, in bytes (the kernel writes it in kB, i.e. KiB: fs/proc/meminfo.c).
 * @throws HostInputError naming the file when it has no readable MemTotal line
 */
export function parseMeminfo(text: string, file: string): number {
  const m = /^MemTotal:\s+(\d+)\s*kB\s*$/m.exec(text);
  if (!m) throw new HostInputError(file, 0, "", `no "MemTotal: N kB" line (a copy of the host's /proc/meminfo is expected)`);
  return Number(m[1]) * 1024;
}

/**
 * The host's memory: `--mem` GiB when given, else the `meminfo` file beside a recorded cpuinfo (a host directory), else
 * for this machine /proc/meminfo; a recording without one: unknown (null).
 * @throws HostInputError for an unreadable meminfo file or a --mem that is no positive number
 */
export async function readMemory(o: { mem?: number; cpuinfo?: string }): Promise<HostInfo["memory"]> {
  if (o.mem !== undefined) {
    if (!(Number.isFinite(o.mem) && o.mem > 0)) throw new HostInputError("--mem", 0, "", `${o.mem}: not a positive number of GiB (e.g. --mem 128)`);
    return { bytes: o.mem * 2 ** 30, source: "--mem" };
  }
  const file = o.cpuinfo !== undefined ? join(dirname(o.cpuinfo), "meminfo") : "/proc/meminfo";
  if (!existsSync(file)) return o.cpuinfo !== undefined ? { bytes: null, source: `not recorded (no ${file}; --mem GIB gives it)` } : { bytes: totalmem(), source: "os.totalmem()" };
  return { bytes: parseMeminfo(await readText(file, ""), file), source: file };
}

/**
 * The name of an Arm core by the catalog's table (Catalog.armCores, generator/catalog/cpu-isas.ts), or null when
 * unknown: "Neoverse V2". Informational only: the ISA choice reads the feature list, never the core name.
 */
export function armCoreName(cat: Pick<Catalog, "armCores">, core: Pick<ArmCore, "implementer" | "part">): string | null {
  return cat.armCores.names[`${core.implementer}/${core.part}`] ?? null;
}

/** A hint naming well-known hosts with this core ("e.g. AWS Graviton3") by Catalog.armHostHints, or null. */
export function armHostHint(cat: Pick<Catalog, "armHostHints">, coreName: string | null): string | null {
  return coreName ? (cat.armHostHints.names[coreName] ?? null) : null;
}

const CPUINFO_LINE = /^([A-Za-z][A-Za-z0-9 _()/-]*?)\s*:(.*)$/;

/**
 * Parse `/proc/cpuinfo` text.
 * @param file name used in error messages.
 * @throws HostInputError naming the first line that is not `key : value` (or blank), a `processor` value that is
 *   not a number, a hex field that is not hex, or (line 0) a file with no `flags`/`Features` line at all.
 */
export function parseCpuinfo(text: string, file = "/proc/cpuinfo"): CpuInfo {
  const lines = text.split(/\r?\n/);
  type Block = Map<string, { value: string; line: number; text: string }>;
  const blocks: Block[] = [];
  let cur: Block | null = null;
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (raw.trim() === "") {
      cur = null;
      return;
    }
    const m = CPUINFO_LINE.exec(raw);
    if (!m) throw new HostInputError(file, n, raw, "cannot read this line: expected `key : value` as in /proc/cpuinfo");
    const key = m[1].trim();
    const value = (m[2] ?? "").trim();
    // Some kernels (aarch64 before 4.x, and a few vendor kernels) print a leading block without `processor`.
    if (key === "processor") {
      if (!/^\d+$/.test(value))
        throw new HostInputError(file, n, raw, "cannot read this line: `processor` must be a CPU number");
      cur = new Map();
      blocks.push(cur);
    } else if (cur === null) {
      cur = new Map();
      blocks.push(cur);
    }
    if ((key === "CPU implementer" || key === "CPU part") && !/^0x[0-9a-fA-F]+$/.test(value))
      throw new HostInputError(file, n, raw, `cannot read this line: \`${key}\` must be a hex number such as 0x41`);
    (cur as Block).set(key, { value, line: n, text: raw });
  });

  const withFlags = blocks.filter((b) => b.has("flags"));
  const withFeatures = blocks.filter((b) => b.has("Features"));
  if (withFlags.length === 0 && withFeatures.length === 0)
    throw new HostInputError(
      file,
      0,
      "",
      "no `flags` line (x86_64) or `Features` line (aarch64) found: is this a /proc/cpuinfo file?",
    );
  if (withFlags.length > 0 && withFeatures.length > 0) {
    const f = withFeatures[0].get("Features")!;
    throw new HostInputError(file, f.line, f.text, "cannot read this line: a file with x86 `flags` lines cannot also have aarch64 `Features`");
  }
  const arch: CpuArch = withFlags.length > 0 ? "x86_64" : "aarch64";
  const key = arch === "x86_64" ? "flags" : "Features";
  const featureBlocks = arch === "x86_64" ? withFlags : withFeatures;

  const sets = featureBlocks.map((b) => new Set(b.get(key)!.value.split(/\s+/).filter(Boolean)));
  const features = [...sets[0]].filter((f) => sets.every((s) => s.has(f))).sort();

  const armCores: ArmCore[] = [];
  if (arch === "aarch64") {
    for (const b of blocks) {
      const imp = b.get("CPU implementer")?.value.toLowerCase();
      const part = b.get("CPU part")?.value.toLowerCase();
      if (!imp || !part) continue;
      const found = armCores.find((c) => c.implementer === imp && c.part === part);
      if (found) found.count++;
      else armCores.push({ implementer: imp, part, count: 1 });
    }
  }
  const first = blocks[0];
  return {
    arch,
    features,
    modelName: arch === "x86_64" ? (first?.get("model name")?.value ?? null) : null,
    vendor: arch === "x86_64" ? (first?.get("vendor_id")?.value ?? null) : null,
    armCores,
    logicalCpus: blocks.filter((b) => b.has("processor")).length || blocks.length,
  };
}

/**
 * Parse `nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader` output. The name may itself
 * contain commas, so the first field is the capability, the last the GPU driver's version, and everything between the name.
 * `No devices were found` (nvidia-smi's message for a GPU driver without GPUs) yields [].
 * @param file name used in error messages.
 * @throws HostInputError naming the line that is not `MAJOR.MINOR, NAME, DRIVER` (a header line, `[N/A]`, an
 *   error such as `Field "compute_cap" is not a valid field to query.` from drivers before R510, ...).
 */
export function parseNvidiaSmi(text: string, file = "nvidia-smi"): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const n = i + 1;
    const t = raw.trim();
    if (t === "") continue;
    if (/^No devices were found$/i.test(t)) continue;
    if (/compute_cap/.test(t) && /not a valid field/i.test(t))
      throw new HostInputError(
        file,
        n,
        raw,
        "this nvidia-smi does not know the compute_cap field (drivers before R510); upgrade the NVIDIA driver",
      );
    const parts = t.split(",").map((s) => s.trim());
    if (parts.length < 3)
      throw new HostInputError(file, n, raw, "cannot read this line: expected `COMPUTE_CAP, NAME, DRIVER_VERSION`");
    const capability = parts[0];
    const driver = parts[parts.length - 1];
    const name = parts.slice(1, -1).join(", ");
    if (!/^\d+\.\d+$/.test(capability))
      throw new HostInputError(
        file,
        n,
        raw,
        `cannot read this line: compute capability "${cutLine(capability, 40)}" is not MAJOR.MINOR (e.g. 9.0)`,
      );
    if (!/^\d+(\.\d+)+$/.test(driver))
      throw new HostInputError(
        file,
        n,
        raw,
        `cannot read this line: driver version "${cutLine(driver, 40)}" is not numeric (e.g. 570.124.06)`,
      );
    if (name === "")
      throw new HostInputError(file, n, raw, "cannot read this line: the GPU name is empty");
    const [maj, min] = capability.split(".");
    gpus.push({ index: gpus.length, name, capability, sm: `${Number(maj)}${Number(min)}`, driver });
  }
  return gpus;
}

/** Machine names accepted by `--machine` and `uname -m`, and the Nix system each maps to. */
export const MACHINES: Record<string, { arch: CpuArch; system: System }> = {
  x86_64: { arch: "x86_64", system: "x86_64-linux" },
  amd64: { arch: "x86_64", system: "x86_64-linux" },
  aarch64: { arch: "aarch64", system: "aarch64-linux" },
  arm64: { arch: "aarch64", system: "aarch64-linux" },
};

/** Thrown for a machine name detect does not handle (exit 2). */
export class MachineError extends InputError {}

/**
 * Map a `uname -m` value to the Nix system: x86_64 → x86_64-linux, aarch64 (or arm64) → aarch64-linux.
 * @throws MachineError naming the allowed values.
 */
export function machineToSystem(machine: string): { arch: CpuArch; system: System } {
  const m = MACHINES[machine.trim()];
  if (!m)
    throw new MachineError(
      `unsupported machine "${machine.trim()}"; allowed values: ${Object.keys(MACHINES).join(", ")} (as \`uname -m\` prints them)`,
    );
  return m;
}

export { compareVersions } from "../versions.ts";
import { compareVersions } from "../versions.ts";

/**
 * Assemble a host from already-read texts (pure; `readHost` does the reading).
 * When `machine` is null the machine is the one the cpuinfo describes.
 * @throws HostInputError for unreadable texts; MachineError for an unknown machine or one that contradicts the
 *   cpuinfo (an aarch64 cpuinfo with `--machine x86_64`).
 */
export function hostFromTexts(input: {
  cpuinfo: string;
  cpuinfoFile: string;
  nvidiaSmi: string | null;
  nvidiaSmiFile: string;
  gpuAbsentReason?: string | null;
  machine: string | null;
  machineSource: string;
  /** The host's memory (readMemory); default: not recorded. */
  memory?: HostInfo["memory"];
}): HostInfo {
  const cpu = parseCpuinfo(input.cpuinfo, input.cpuinfoFile);
  const m = machineToSystem(input.machine ?? cpu.arch);
  if (m.arch !== cpu.arch)
    throw new MachineError(
      `machine ${input.machine} (${input.machineSource}) contradicts ${input.cpuinfoFile}, which describes an ${cpu.arch} CPU`,
    );
  const gpus = input.nvidiaSmi === null ? [] : parseNvidiaSmi(input.nvidiaSmi, input.nvidiaSmiFile);
  const gpuAbsentReason =
    gpus.length > 0 ? null : (input.gpuAbsentReason ?? `${input.nvidiaSmiFile} lists no GPU ("No devices were found")`);
  return {
    machine: m.arch,
    system: m.system,
    cpu,
    gpus,
    sources: { cpuinfo: input.cpuinfoFile, nvidiaSmi: input.nvidiaSmiFile, machine: input.machineSource },
    gpuAbsentReason,
    memory: input.memory ?? { bytes: null, source: "not recorded" },
  };
}

/**
 * Options of `readHost`: recorded files instead of the live host, as `detect --cpuinfo/--nvidia-smi/--machine`.
 * `cpuinfo` may name a recorded host directory (as `fleet` reads them): its `cpuinfo` file, and its `nvidia-smi.txt`
 * unless `nvidiaSmi` is given.
 */
export interface ReadHostOptions {
  cpuinfo?: string;
  nvidiaSmi?: string;
  machine?: string;
  /** `--mem`: the host's memory in GiB (default: a recording's meminfo file, or this machine's). */
  mem?: number;
  /**
   * false: this machine's GPUs are not asked for (no nvidia-smi run; `gpus` [] and `sources.nvidiaSmi` "not read"), for
   * a caller that needs them only in some cases (verify with a NAME: only when torch sees no GPU). Default true.
   */
  gpus?: boolean;
}

/** Thrown when a recorded host file named on the command line cannot be opened (exit 2). */
export class HostFileError extends InputError {}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false; // readText names the file and why it cannot be read
  }
}

/**
 * The most bytes of a host file read (cpuinfo, nvidia-smi's output, meminfo): a /proc/cpuinfo of a few hundred CPUs is
 * well under 1 MiB, so a larger file is no recording of a host and is refused, never read whole.
 */
export const MAX_HOST_FILE_BYTES = 16 << 20;

/**
 * `file` as UTF-8, read up to MAX_HOST_FILE_BYTES (a /proc file, whose size stat gives as 0, is read to its end too).
 * @throws HostFileError when it cannot be read, or holds more than MAX_HOST_FILE_BYTES
 */
async function readText(file: string, what: string): Promise<string> {
  const named = `${what ? `${what} ` : ""}${file}`;
  let chunks: Buffer[];
  try {
    const fh = await open(file, "r");
    try {
      chunks = [];
      let total = 0;
      for (;;) {
        const buf = Buffer.alloc(1 << 20);
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        chunks.push(buf.subarray(0, bytesRead));
        total += bytesRead;
        if (total > MAX_HOST_FILE_BYTES)
          throw new HostFileError(`cannot read ${named}: it holds more than ${MAX_HOST_FILE_BYTES >> 20} MiB, which no host's /proc/cpuinfo, meminfo or nvidia-smi output does; give the host's own file`);
      }
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (e instanceof HostFileError) throw e;
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new HostFileError(`cannot read ${named}: ${why}`);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Run the real nvidia-smi query; returns its stdout, or null with the reason when there is no usable GPU. */
async function runNvidiaSmi(): Promise<{ text: string | null; reason: string | null }> {
  // Its output kept bounded (a line per GPU; a broken driver's message): a long line is cut with its length said.
  const tail = { stdout: { lines: 4096, lineChars: 4096 }, stderr: { lines: 20, lineChars: QUOTED_LINE_CHARS } };
  const p = await runTool(["nvidia-smi", "--query-gpu=compute_cap,name,driver_version", "--format=csv,noheader"], { timeoutMs: 30_000, tail });
  const out = p.stdout;
  const err = p.stderr;
  // 127: nvidia-smi could not be started (not on PATH), or a wrapper's shell found none.
  if (p.code === 127 || /nvidia-smi: (command )?not found/.test(err)) return { text: null, reason: "no NVIDIA GPU: nvidia-smi not found" };
  if (p.code !== 0) {
    const msg = (err.trim() || out.trim() || `exit code ${p.code}`).split("\n")[0];
    if (/No devices were found/i.test(out + err)) return { text: null, reason: "no NVIDIA GPU: nvidia-smi found no devices" };
    // compute_cap unknown to an old GPU driver: hand the text to the parser, which names the problem.
    if (/compute_cap/.test(out + err)) return { text: out + err, reason: null };
    return { text: null, reason: `no usable NVIDIA GPU: nvidia-smi failed: ${msg}` };
  }
  return { text: out, reason: null };
}

/** The names a recorded host directory's nvidia-smi output may have: the documented one first. */
export const RECORDED_SMI_NAMES = ["nvidia-smi.txt", "nvidia-smi.csv"] as const;

/**
 * The recorded nvidia-smi output of host directory `dir`: `nvidia-smi.txt` or `nvidia-smi.csv` (the same query's
 * output, `--format=csv,noheader`); undefined when it has none (a CPU-only host).
 * @throws HostFileError when it holds both, or another `nvidia-smi*` file that would otherwise be passed over in silence
 */
export function recordedSmiFile(dir: string): string | undefined {
  const found = RECORDED_SMI_NAMES.filter((n) => existsSync(join(dir, n)));
  if (found.length > 1) throw new HostFileError(`${dir} holds both ${found.join(" and ")}: keep one (the host's nvidia-smi output)`);
  if (found.length === 1) return join(dir, found[0]!);
  const other = readdirSync(dir).find((n) => /^nvidia-smi/i.test(n));
  if (other)
    throw new HostFileError(
      `${join(dir, other)}: a recorded host directory's nvidia-smi output is named ${RECORDED_SMI_NAMES.join(" or ")}; rename it (without one, the host counts as having no NVIDIA GPU)`,
    );
  return undefined;
}

/**
 * Read the host: `/proc/cpuinfo` (or `opts.cpuinfo`), `nvidia-smi` (or `opts.nvidiaSmi`; a missing nvidia-smi
 * means no NVIDIA GPU), and the machine (`opts.machine`, else the one the cpuinfo file describes when a file was
 * given, else `os.machine()`, which is `uname -m`).
 * @throws HostFileError when a named file cannot be opened; HostInputError when a text cannot be parsed;
 *   MachineError for an unknown or contradicting machine.
 */
export async function readHost(opts: ReadHostOptions = {}): Promise<HostInfo> {
  if (opts.cpuinfo !== undefined && (await isDirectory(opts.cpuinfo))) {
    const dir = opts.cpuinfo;
    const cpuinfo = join(dir, "cpuinfo");
    if (!existsSync(cpuinfo))
      throw new HostFileError(`--cpuinfo ${dir} is a directory without a cpuinfo file (a recorded host directory holds cpuinfo and, for GPUs, nvidia-smi.txt or nvidia-smi.csv)`);
    opts = { ...opts, cpuinfo, nvidiaSmi: opts.nvidiaSmi ?? recordedSmiFile(dir) };
  }
  const cpuinfoFile = opts.cpuinfo ?? "/proc/cpuinfo";
  const cpuinfo = await readText(cpuinfoFile, opts.cpuinfo ? "--cpuinfo file" : "");
  let nvidiaSmi: string | null;
  let gpuAbsentReason: string | null = null;
  if (opts.nvidiaSmi !== undefined) {
    nvidiaSmi = await readText(opts.nvidiaSmi, "--nvidia-smi file");
  } else if (opts.cpuinfo !== undefined) {
    // A recorded CPU without a recorded GPU list: do not mix in this machine's GPUs.
    nvidiaSmi = null;
    gpuAbsentReason = "no NVIDIA GPU recorded (no --nvidia-smi file given with --cpuinfo)";
  } else if (opts.gpus === false) {
    nvidiaSmi = null;
    gpuAbsentReason = "not read (nvidia-smi was not run)";
  } else {
    const r = await runNvidiaSmi();
    nvidiaSmi = r.text;
    gpuAbsentReason = r.reason;
  }
  let machine: string | null;
  let machineSource: string;
  if (opts.machine !== undefined) {
    machine = opts.machine;
    machineSource = "--machine";
  } else if (opts.cpuinfo !== undefined) {
    machine = null;
    machineSource = `inferred from ${cpuinfoFile}`;
  } else {
    machine = osMachine();
    machineSource = "uname -m";
  }
  return hostFromTexts({
    cpuinfo,
    cpuinfoFile,
    nvidiaSmi,
    nvidiaSmiFile: opts.nvidiaSmi ?? (opts.gpus === false && opts.cpuinfo === undefined ? "not read" : "nvidia-smi"),
    gpuAbsentReason,
    machine,
    machineSource,
    memory: await readMemory({ mem: opts.mem, cpuinfo: opts.cpuinfo }),
  });
}
