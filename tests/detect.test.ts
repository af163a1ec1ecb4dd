/**
 * detect: parsing recorded hosts (tests/fixtures/hosts/, see its README), the selection rule of recommend(), the
 * command's exit codes, one run as a real child process, and runs against the real catalog and matrix.
 *
 * Most recommend() tests use a small hand-made catalog and hand-made Variant objects (`fixtureVariants`), so they
 * do not move when matrix.ts or the generator change; the last group uses the real catalog and generator.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { machine as osMachine } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cliArgv, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import {
  HostInputError,
  MachineError,
  armCoreName,
  compareVersions,
  hostFromTexts,
  machineToSystem,
  parseCpuinfo,
  parseNvidiaSmi,
  readHost,
  type HostInfo,
} from "../generator/host/read-host.ts";
import { recommend, type Recommendation } from "../generator/detect/recommend.ts";
import { hostCapacity } from "../generator/model/concurrency.ts";
import { variantWait } from "../generator/model/wait.ts";
import { capabilitiesRunOn, cudaForDriver } from "../generator/matrix/compat.ts";
import { runDetect } from "../generator/commands/detect-main.ts";
import type { VariantSource } from "../generator/matrix/variant-source.ts";
import { formatName } from "../generator/matrix/naming.ts";
import type { Variant } from "../generator/matrix/schema.ts";
import type { Catalog, CpuIsa } from "../generator/catalog/schema.ts";
import { catalog as builtInCatalog } from "../generator/catalog/index.ts";
import type { PackageName } from "../generator/catalog/lib/packages.ts";
import type { System } from "../generator/constants.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const HOSTS = join(ROOT, "tests/fixtures/hosts");
const hostFile = (h: string, f: string) => join(HOSTS, h, f);

/** A recorded host: its cpuinfo, and its nvidia-smi output when it has one. */
function host(name: string, opts: { machine?: string; smi?: string | null } = {}): HostInfo {
  const smi = opts.smi === undefined ? readFileSync(hostFile(name, "nvidia-smi.txt"), "utf8") : opts.smi;
  return hostFromTexts({
    cpuinfo: readFileSync(hostFile(name, "cpuinfo"), "utf8"),
    cpuinfoFile: `${name}/cpuinfo`,
    nvidiaSmi: smi,
    nvidiaSmiFile: `${name}/nvidia-smi.txt`,
    gpuAbsentReason: smi === null ? "no NVIDIA GPU: nvidia-smi not found" : null,
    machine: opts.machine ?? null,
    machineSource: "test",
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A hand-made catalog. CUDA rows mirror NVIDIA's release notes (Table 3 minimum drivers; nvcc target lists, see
// generator/catalog/cuda.ts); ISA rows mirror the shape of generator/catalog/cpu-isas.ts. Kept small on purpose.
// ---------------------------------------------------------------------------------------------------------------
// The catalog has no tarball hash for PIN28/PIN29: matrix.ts must give one. These tests never fetch it.
const USER_SHA256 = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const PIN28 = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3";
const PIN29 = "6a030d535719c5190187c4cec156f335e95e3211";
const isa = (key: string, system: System, rank: number, requiredCpuFeatures: string[]): CpuIsa => ({
  key,
  label: key,
  system,
  cflags: ["-mtest"],
  cpus: ["test"],
  notFor: [],
  requiredCpuFeatures,
  rank,
  gccarch: { arch: `test-${key}`, declaredBy: [], why: "test fixture" },
  source: "test fixture",
});
const AVX512 = ["avx2", "fma", "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"];
// The built-in catalog's tables this fixture does not replace (gpus, cuda, isas, python, torch, nixpkgs are its own).
const { gpus: _g, cuda: _c, isas: _i, python: _p, torch: _t, nixpkgs: _n, ...builtInTables } = builtInCatalog;
const CAT: Catalog = {
  gpus: [
    ["75", "7.5", "T4 / T4G", ["x86_64-linux", "aarch64-linux"]],
    ["80", "8.0", "A100", ["x86_64-linux", "aarch64-linux"]],
    ["86", "8.6", "RTX A6000", ["x86_64-linux", "aarch64-linux"]],
    ["90", "9.0", "H100 / GH200", ["x86_64-linux", "aarch64-linux"]],
    ["120", "12.0", "RTX 5090", ["x86_64-linux", "aarch64-linux"]],
    ["121", "12.1", "DGX Spark (GB10)", ["aarch64-linux"]],
  ].map(([sm, capability, label, systems]) => ({
    sm: sm as string,
    capability: capability as string,
    family: "test",
    products: [label as string],
    label: label as string,
    systems: systems as System[],
    source: "test fixture",
  })),
  cuda: [
    ["12.6", "560.28.03", ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0"]],
    ["12.8", "570.26", ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "12.0"]],
    ["12.9", "575.51.03", ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "10.3", "12.0", "12.1"]],
    ["13.0", "580.65.06", ["7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"]],
  ].map(([version, minDriverLinux, capabilities]) => ({
    version: version as string,
    packageSet: `cudaPackages_${(version as string).replace(".", "_")}`,
    capabilities: capabilities as string[],
    minDriverLinux: minDriverLinux as string,
    nixpkgsDefaultCapabilities: (capabilities as string[]).filter((c) => !["8.7", "8.8", "10.1", "11.0"].includes(c)),
    source: "test fixture",
  })),
  isas: [
    isa("avx2", "x86_64-linux", 0, ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"]),
    isa("avx512", "x86_64-linux", 1, AVX512),
    isa("avx512vnni", "x86_64-linux", 2, [...AVX512, "avx512_vnni"]),
    isa("avx512bf16", "x86_64-linux", 3, [...AVX512, "avx512_vnni", "avx512_bf16"]),
    isa("armv8_2", "aarch64-linux", 0, ["asimd", "fphp", "asimdhp", "asimddp", "atomics"]),
    isa("armv9", "aarch64-linux", 1, ["asimd", "asimdhp", "asimddp", "sve", "sve2", "i8mm", "svei8mm"]),
  ],
  python: [
    { version: "3.12", packageSet: "python312Packages", source: "test" },
    { version: "3.13", packageSet: "python313Packages", source: "test" },
  ],
  torch: [
    { version: "2.8.0", nameTag: "28", torchaudio: "2.8.0", python: ["3.12", "3.13"], cuda: ["12.6", "12.8"], source: "t" },
    { version: "2.9.1", nameTag: "29", torchaudio: "2.9.1", python: ["3.12", "3.13"], cuda: ["12.8", "12.9"], source: "t" },
  ],
  // The built-in catalog's other tables; torchaudio's releases are this fixture's.
  ...builtInTables,
  packagesOnTorch: builtInTables.packagesOnTorch.map((p) =>
    p.name === "torchaudio"
      ? {
          ...p,
          releases: [
            { version: "2.8.0", servesTorch: { min: "2.8", below: "2.9" }, stableAbi: false, source: "t" },
            { version: "2.9.1", servesTorch: { min: "2.9", below: "2.10" }, stableAbi: false, source: "t" },
          ],
        }
      : p,
  ),
  nixpkgs: [
    { rev: PIN28, date: null, sha256: "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", sha256Source: "test", torch: "2.8.0", torchaudio: "2.8.0", python: ["3.12", "3.13"], cuda: ["12.6", "12.8"], brokenCuda: {}, torchcodec: null, torchvision: null, flashAttn: null, xformers: null, bitsandbytes: null, vllm: null, defaultPython: null, defaultCuda: null, recursedPython: null, nixpkgsDefaultCapabilities: null, bundledLinksKnown: false, channel: null, inferred: {}, source: "t" },
    { rev: PIN29, date: null, sha256: "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", sha256Source: "test", torch: "2.9.1", torchaudio: "2.9.1", python: ["3.12", "3.13"], cuda: ["12.8", "12.9"], brokenCuda: {}, torchcodec: null, torchvision: null, flashAttn: null, xformers: null, bitsandbytes: null, vllm: null, defaultPython: null, defaultCuda: null, recursedPython: null, nixpkgsDefaultCapabilities: null, bundledLinksKnown: false, channel: null, inferred: {}, source: "t" },
  ],
};

interface FixtureMatrix {
  releases: { torch: string; cuda: string[]; nixpkgs: string }[];
  python: string[];
  gpus: string[];
  isas: string[];
  cpuOnly: boolean;
}

/**
 * Variants of a fixture matrix, built by the documented rules (not by generator/matrix/expand.ts): the GPU's own
 * capability when the CUDA version compiles it, else the newest same-major lower capability it compiles
 * (binaryCompat), else dropped; SoC-only GPUs only on their system; the release tag in the name when the matrix
 * holds several releases.
 */
function fixtureVariants(m: FixtureMatrix): Variant[] {
  const out: Variant[] = [];
  const tagged = m.releases.length > 1;
  for (const rel of m.releases) {
    const t = CAT.torch.find((x) => x.version === rel.torch)!;
    for (const python of m.python)
      for (const isaKey of m.isas) {
        const isaRow = CAT.isas.find((i) => i.key === isaKey)!;
        const combos: { cuda: string | null; sm: string | null; caps: string[]; bc: boolean }[] = [];
        if (m.cpuOnly) combos.push({ cuda: null, sm: null, caps: [], bc: false });
        for (const cuda of rel.cuda)
          for (const sm of m.gpus) {
            const g = CAT.gpus.find((x) => x.sm === sm)!;
            if (!g.systems.includes(isaRow.system)) continue;
            const tk = CAT.cuda.find((c) => c.version === cuda)!;
            if (tk.capabilities.includes(g.capability)) combos.push({ cuda, sm, caps: [g.capability], bc: false });
            else {
              const [maj, min] = g.capability.split(".").map(Number);
              const lower = tk.capabilities.filter((c) => {
                const [a, b] = c.split(".").map(Number);
                return a === maj && b < min;
              });
              if (lower.length) combos.push({ cuda, sm, caps: [lower[lower.length - 1]], bc: true });
            }
          }
        for (const c of combos)
          for (const pkg of ["pytorch", "torchaudio"] as PackageName[]) {
            const parts = { package: pkg, tag: tagged ? t.nameTag : "", python, cuda: c.cuda, sm: c.sm, isa: isaKey };
            out.push({
              name: formatName(parts),
              package: pkg,
              role: pkg === "pytorch" ? "torch" : "onTorch",
              extras: [],
              attr: pkg === "pytorch" ? null : pkg,
              version: pkg === "pytorch" ? t.version : t.torchaudio,
              torchVersion: t.version,
              onTorchVersions: { torchaudio: t.torchaudio },
              python,
              pythonPackageSet: `python${python.replace(".", "")}Packages`,
              cuda: c.cuda,
              cudaPackageSet: c.cuda ? `cudaPackages_${c.cuda.replace(".", "_")}` : null,
              sm: c.sm,
              isa: isaKey,
              system: isaRow.system,
              cudaCapabilities: c.caps,
              binaryCompat: c.bc,
              cudaCapabilitiesForPackageSet: true,
              requiredSystemFeatures: ["big-parallel"],
              cflags: isaRow.cflags,
              nixpkgs: rel.nixpkgs,
              nixpkgsSha256: "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
              nixpkgsKey: [rel.nixpkgs, isaRow.system, c.cuda ? `cudaPackages_${c.cuda.replace(".", "_")}` : "cpu", ...(c.cuda ? c.caps : [])].join("|"),
              dependsOn: pkg === "torchaudio" ? [formatName({ ...parts, package: "pytorch" })] : [],
              file: `.flox/pkgs/${formatName(parts)}.nix`,
              description: "test",
              notes: [],
            });
          }
      }
  }
  return out;
}

const R28 = { torch: "2.8.0", cuda: ["12.8"], nixpkgs: PIN28, sha256: USER_SHA256 };
const R29 = { torch: "2.9.1", cuda: ["12.9"], nixpkgs: PIN29, sha256: USER_SHA256 };
const ALL_ISAS = ["avx2", "avx512", "avx512vnni", "avx512bf16", "armv8_2", "armv9"];
/** Like the default matrix.ts: one release on CUDA 12.8, Python 3.13, every ISA, CPU-only variants. */
const M28: FixtureMatrix = { releases: [R28], python: ["3.13"], gpus: ["75", "80", "86", "90", "120", "121"], isas: ALL_ISAS, cpuOnly: true };
const rec = (h: HostInfo, m: FixtureMatrix, pkg: PackageName = "torchaudio"): Recommendation =>
  recommend(h, fixtureVariants(m), CAT, { package: pkg });
const text = (r: Recommendation) => JSON.stringify(r);

// --- parsing ---------------------------------------------------------------------------------------------------

test("cpuinfo x86 (Sapphire-Rapids-class, recorded): flags line, avx512_bf16 spelling", () => {
  const c = parseCpuinfo(readFileSync(hostFile("spr-h100", "cpuinfo"), "utf8"));
  assert.is(c.arch, "x86_64");
  for (const f of ["avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16"]) assert.ok(c.features.includes(f), f);
  assert.is(c.vendor, "GenuineIntel");
  assert.is(c.logicalCpus, 2);
  assert.equal(c.armCores, []);
});

test("cpuinfo aarch64: Features line and CPU part → core names (Graviton3, Grace, GB10)", () => {
  const g3 = parseCpuinfo(readFileSync(hostFile("graviton3-t4g", "cpuinfo"), "utf8"));
  assert.is(g3.arch, "aarch64");
  assert.ok(g3.features.includes("sve") && g3.features.includes("asimddp") && g3.features.includes("i8mm"));
  assert.not.ok(g3.features.includes("sve2"), "Neoverse V1 has SVE but not SVE2");
  assert.equal(g3.armCores, [{ implementer: "0x41", part: "0xd40", count: 16 }]);
  assert.is(armCoreName(builtInCatalog, g3.armCores[0]!), "Neoverse V1");
  const grace = parseCpuinfo(readFileSync(hostFile("gh200", "cpuinfo"), "utf8"));
  assert.equal(grace.armCores, [{ implementer: "0x41", part: "0xd4f", count: 72 }]);
  assert.is(armCoreName(builtInCatalog, grace.armCores[0]!), "Neoverse V2");
  assert.ok(grace.features.includes("sve2"));
  const spark = parseCpuinfo(readFileSync(hostFile("dgx-spark", "cpuinfo"), "utf8"));
  assert.equal(
    spark.armCores.map((k) => [armCoreName(builtInCatalog, k), k.count]),
    [["Cortex-A725", 10], ["Cortex-X925", 10]],
  );
  const n1 = parseCpuinfo(readFileSync(hostFile("graviton2-t4g", "cpuinfo"), "utf8"));
  assert.is(armCoreName(builtInCatalog, n1.armCores[0]!), "Neoverse N1");
  // The names come from the catalog value: a catalog whose table lacks the core names none.
  assert.is(armCoreName({ armCores: { names: {}, source: "none" } }, n1.armCores[0]!), null);
});

test("cpuinfo: features are the intersection over all CPUs (code must run on every core)", () => {
  const c = parseCpuinfo(
    "processor\t: 0\nFeatures\t: fp asimd sve sve2\nCPU implementer\t: 0x41\nCPU part\t: 0xd85\n\n" +
      "processor\t: 1\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd87\n",
  );
  assert.equal(c.features, ["asimd", "fp", "sve"]);
});

test("cpuinfo that cannot be parsed: the error names the file, the line number and the line", () => {
  const file = hostFile("bad", "cpuinfo-missing-colon");
  try {
    parseCpuinfo(readFileSync(file, "utf8"), file);
    assert.unreachable("should throw");
  } catch (e) {
    assert.instance(e, HostInputError);
    const err = e as HostInputError;
    assert.is(err.line, 19);
    assert.is(err.text, "wp\t\t yes");
    assert.match(err.message, `${file}:19:`);
    assert.match(err.message, "wp\t\t yes");
  }
  assert.throws(() => parseCpuinfo("hello world\n", "x"), /x:1: cannot read this line/);
  assert.throws(() => parseCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\n", "x"), /no `flags` line/);
  assert.throws(() => parseCpuinfo("processor\t: zero\nflags\t: avx2\n", "x"), /x:1:.*CPU number/);
  assert.throws(() => parseCpuinfo("processor\t: 0\nFeatures\t: fp\nCPU part\t: d40\n", "x"), /x:3:.*hex/);
});

test("recorded host files with huge lines: the error quotes the line cut, with its length; a file too large for a host is refused unread", async () => {
  const dir = tempDir("vm-detect-huge-");
  const good = hostFile("spr-h100", "cpuinfo");
  // A cpuinfo whose third line is 1,000,000 characters without a colon.
  const cpuinfo = join(dir, "cpuinfo");
  writeFileSync(cpuinfo, `processor\t: 0\nflags\t\t: avx2\n${"z".repeat(1_000_000)}\n`);
  const r = await runMain(["detect", "--cpuinfo", cpuinfo, "--machine", "x86_64"]);
  assert.is(r.status, 2, r.stdout);
  assert.match(r.stderr, `${cpuinfo}:3: cannot read this line`);
  assert.match(r.stderr, new RegExp(`3 \\| z{200}… \\(1,000,000 characters, cut\\)`));
  assert.ok(r.stderr.length < 1000, `${r.stderr.length} characters on stderr`);
  // An nvidia-smi line whose capability field is 500,000 characters: the line and the field both cut.
  const smi = join(dir, "nvidia-smi.txt");
  writeFileSync(smi, `${"9".repeat(500_000)}x, NVIDIA H100, 570.124.06\n`);
  const g = await runMain(["detect", "--cpuinfo", good, "--nvidia-smi", smi, "--machine", "x86_64"]);
  assert.is(g.status, 2, g.stdout);
  assert.match(g.stderr, /compute capability "9{40}… \(500,001 characters, cut\)" is not MAJOR\.MINOR/);
  assert.match(g.stderr, /1 \| 9{200}… \(500,026 characters, cut\)/);
  assert.ok(g.stderr.length < 1000, `${g.stderr.length} characters on stderr`);
  // The live nvidia-smi printing a 1,000,000-character line: read bounded, the line quoted cut.
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "nvidia-smi"), "#!/bin/sh\nhead -c 1000000 /dev/zero | tr '\\0' 9\necho\n", { mode: 0o755 });
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    await readHost();
    assert.unreachable("the live nvidia-smi's line cannot be read");
  } catch (e) {
    assert.instance(e, HostInputError);
    assert.match((e as Error).message, /^nvidia-smi:1: cannot read this line: .*\n  1 \| 9{200}… \(1,000,000 characters, cut\)$/);
    assert.ok((e as Error).message.length < 1000, `${(e as Error).message.length} characters`);
  } finally {
    process.env.PATH = path;
  }
  // 20 MB of cpuinfo: no host's; refused without being read whole or quoted.
  const big = join(dir, "cpuinfo-big");
  writeFileSync(big, `flags\t: ${"a".repeat(20 << 20)}\n`);
  const b = await runMain(["detect", "--cpuinfo", big, "--machine", "x86_64"]);
  assert.is(b.status, 2, b.stdout);
  assert.match(b.stderr, `cannot read --cpuinfo file ${big}: it holds more than 16 MiB, which no host's /proc/cpuinfo, meminfo or nvidia-smi output does`);
  assert.ok(b.stderr.length < 1000, `${b.stderr.length} characters on stderr`);
});

test("nvidia-smi csv: one GPU per line; names with commas; no devices; unreadable lines name the line", () => {
  assert.equal(parseNvidiaSmi("9.0, NVIDIA H100 80GB HBM3, 570.124.06\n12.1, NVIDIA GB10, 580.95.05\n"), [
    { index: 0, name: "NVIDIA H100 80GB HBM3", capability: "9.0", sm: "90", driver: "570.124.06" },
    { index: 1, name: "NVIDIA GB10", capability: "12.1", sm: "121", driver: "580.95.05" },
  ]);
  assert.is(parseNvidiaSmi("8.6, NVIDIA RTX A6000, rev B, 570.124.06\n")[0].name, "NVIDIA RTX A6000, rev B");
  assert.equal(parseNvidiaSmi("No devices were found\n"), []);
  assert.throws(
    () => parseNvidiaSmi(readFileSync(hostFile("bad", "nvidia-smi-with-header.txt"), "utf8"), "h.txt"),
    (e: Error) => e instanceof HostInputError && e.line === 1 && /h\.txt:1: .*compute capability "compute_cap"/.test(e.message),
  );
  assert.throws(
    () => parseNvidiaSmi(readFileSync(hostFile("bad", "nvidia-smi-old-driver.txt"), "utf8"), "o.txt"),
    /o\.txt:1: this nvidia-smi does not know the compute_cap field/,
  );
  assert.throws(() => parseNvidiaSmi("9.0, NVIDIA H100, [N/A]\n", "n"), /n:1:.*driver version "\[N\/A\]"/);
});

test("machine → Nix system; versions compare numerically; GPU driver → CUDA via minDriverLinux", () => {
  assert.equal(machineToSystem("x86_64"), { arch: "x86_64", system: "x86_64-linux" });
  assert.equal(machineToSystem("aarch64"), { arch: "aarch64", system: "aarch64-linux" });
  assert.is(machineToSystem("arm64").system, "aarch64-linux");
  assert.throws(() => machineToSystem("ppc64le"), /unsupported machine "ppc64le"; allowed values: x86_64, amd64, aarch64, arm64/);
  assert.ok(compareVersions("570.26", "570.124.06") < 0, "570.26 < 570.124.06 (numeric, not string)");
  assert.ok(compareVersions("580.65.06", "575.51.03") > 0);
  assert.is(compareVersions("570.26", "570.26.0"), 0);
  assert.equal(cudaForDriver("570.124.06", CAT.cuda).map((c) => c.version), ["12.8", "12.6"]);
  assert.equal(cudaForDriver("580.95.05", CAT.cuda).map((c) => c.version), ["13.0", "12.9", "12.8", "12.6"]);
  assert.equal(cudaForDriver("535.183.01", CAT.cuda), []);
  assert.throws(
    () => host("gh200", { machine: "x86_64" }),
    (e: Error) => e instanceof MachineError && /contradicts .*aarch64 CPU/.test(e.message),
  );
});

test("binary compatibility: same major, minor ≤ the GPU's; never across a major", () => {
  assert.ok(capabilitiesRunOn(["12.0"], "12.1"));
  assert.ok(capabilitiesRunOn(["12.1"], "12.1"));
  assert.not.ok(capabilitiesRunOn(["12.1"], "12.0"));
  assert.not.ok(capabilitiesRunOn(["10.0"], "12.1"));
  assert.not.ok(capabilitiesRunOn(["9.0"], "10.0"));
});

// --- recommend on the fixture catalog ------------------------------------------------------------------------

test("x86 server with AVX-512 BF16 and 8× H100: native sm90, widest ISA avx512bf16, one variant for all GPUs", () => {
  const r = rec(host("spr-h100"), M28);
  assert.is(r.status, "ok");
  assert.equal(r.variants, ["torchaudio-python313-cuda12_8-sm90-avx512bf16"]);
  assert.is(r.picks.length, 1);
  assert.equal(r.picks[0].gpuIndices, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.not.ok(r.picks[0].binaryCompat);
  assert.ok(r.picks[0].alternatives.includes("torchaudio-python313-cuda12_8-sm90-avx2"));
  assert.match(text(r), "one variant covers them all");
  assert.is(r.host.maxCuda, "12.8");
  assert.equal(rec(host("spr-h100"), M28, "pytorch").variants, ["pytorch-python313-cuda12_8-sm90-avx512bf16"]);
});

test("Grace Hopper GH200 (Neoverse V2, SM90): armv9 on aarch64-linux", () => {
  const r = rec(host("gh200"), M28);
  assert.is(r.host.system, "aarch64-linux");
  assert.equal(r.variants, ["torchaudio-python313-cuda12_8-sm90-armv9"]);
  assert.match(r.host.cpu, "Neoverse V2 ×72");
});

test("DGX Spark (GB10, SM121): 12.0 code on CUDA 12.8 by binary compatibility, native once 12.9 exists", () => {
  const only128 = rec(host("dgx-spark"), M28);
  assert.equal(only128.variants, ["torchaudio-python313-cuda12_8-sm121-armv9"]);
  const p = only128.picks[0];
  assert.ok(p.binaryCompat);
  assert.match(p.reasons.join("\n"), "carries 12.0 code, which runs on 12.1");
  assert.ok(
    p.suggestions.some((s) => s.includes(`add "12.9" to cuda in matrix.ts`) && s.includes(PIN29)),
    p.suggestions.join("\n"),
  );

  const both = rec(host("dgx-spark"), { ...M28, releases: [R28, R29] });
  assert.equal(both.variants, ["torchaudio29-python313-cuda12_9-sm121-armv9"]);
  assert.not.ok(both.picks[0].binaryCompat);
  assert.ok(both.picks[0].alternatives.includes("torchaudio28-python313-cuda12_8-sm121-armv9"));

  // Same Spark with a GPU driver that predates CUDA 12.9 (570 < 575.51.03) but is ≥ 525.60.13, the CUDA 12.x minimum
  // under minor-version compatibility: the native 12.9 build runs (its code is SASS from every origin), native before
  // binary-compatible; the reasons say so and what a ≥ 575.51.03 driver adds.
  const oldDriver = host("dgx-spark", { smi: "12.1, NVIDIA GB10, 570.124.06\n" });
  const r = rec(oldDriver, { ...M28, releases: [R28, R29] });
  assert.equal(r.variants, ["torchaudio29-python313-cuda12_9-sm121-armv9"]);
  assert.match(r.picks[0].reasons.join("\n"), "runs under CUDA minor-version compatibility: driver 570.124.06 is below 575.51.03, CUDA 12.9's own minimum, but ≥ 525.60.13");
  assert.ok(r.picks[0].suggestions.some((x) => x.startsWith("a driver ≥ 575.51.03 runs CUDA 12.9 with full support")), r.picks[0].suggestions.join("\n"));
  // Below 525.60.13 neither runs CUDA 12.9's code nor 12.8's: nothing fits, and the drop names both minimums.
  const older = rec(host("dgx-spark", { smi: "12.1, NVIDIA GB10, 520.61.05\n" }), { ...M28, releases: [R28, R29] });
  assert.is(older.status, "none");
  assert.match(older.picks[0].problems.join("\n"), "and it is below 525.60.13 (the CUDA 12.x minimum under minor-version compatibility)");
});

test("native before newer: a native build wins over a binary-compatible one on a newer CUDA", () => {
  // sm121 on 12.8 (binary-compatible) vs sm121 on 12.9 (native): native wins even when ordered the other way.
  const r = rec(host("dgx-spark"), { ...M28, releases: [{ torch: "2.9.1", cuda: ["12.8", "12.9"], nixpkgs: PIN29 }] });
  assert.equal(r.variants, ["torchaudio-python313-cuda12_9-sm121-armv9"]);
  // Python: newest wins among otherwise equal variants; the older one is an alternative.
  const py = rec(host("gh200"), { ...M28, python: ["3.12", "3.13"] });
  assert.equal(py.variants, ["torchaudio-python313-cuda12_8-sm90-armv9"]);
  assert.is(py.picks[0].alternatives[0], "torchaudio-python312-cuda12_8-sm90-armv9");
});

test("Graviton3 (Neoverse V1: SVE, no SVE2) with a T4G: armv8_2, never armv9", () => {
  const r = rec(host("graviton3-t4g"), M28);
  assert.equal(r.variants, ["torchaudio-python313-cuda12_8-sm75-armv8_2"]);
  assert.is(r.host.isa, "armv8_2");
  assert.match(r.reasons[0], "not armv9 (lacks sve2)");
  assert.not.ok(text(r).includes("sm75-armv9\""), "armv9 must not be offered");
  // A matrix with armv9 only has nothing for this CPU: say why and which matrix.ts change adds one.
  const armv9only = rec(host("graviton3-t4g"), { ...M28, isas: ["avx2", "armv9"] });
  assert.is(armv9only.status, "none");
  assert.match(armv9only.picks[0].problems.join("\n"), "armv9 needs sve2");
  assert.ok(armv9only.picks[0].suggestions.some((s) => s.startsWith(`add "armv8_2" to isas in matrix.ts`)));
  // Without SM75 in the matrix: add "75".
  const no75 = rec(host("graviton3-t4g"), { ...M28, gpus: ["90", "121"] });
  assert.is(no75.status, "none");
  assert.ok(no75.picks[0].suggestions.includes(`add "75" to gpus in matrix.ts`));
  assert.is(no75.cpuFallback, "torchaudio-python313-cpu-armv8_2");
  // The real AWS pairing (g5g: Graviton2 = Neoverse N1) gets the same variant.
  assert.equal(rec(host("graviton2-t4g"), M28).variants, ["torchaudio-python313-cuda12_8-sm75-armv8_2"]);
});

test("no NVIDIA GPU: the CPU-only variant of the widest ISA (AMD EPYC 7763: avx2)", () => {
  const viaFile = rec(host("epyc-nogpu"), M28);
  assert.is(viaFile.status, "ok");
  assert.equal(viaFile.variants, ["torchaudio-python313-cpu-avx2"]);
  assert.is(viaFile.picks[0].kind, "cpu");
  const noSmi = rec(host("epyc-nogpu", { smi: null }), M28);
  assert.equal(noSmi.variants, ["torchaudio-python313-cpu-avx2"]);
  assert.match(noSmi.picks[0].reasons[0], "nvidia-smi not found");
  const noCpuOnly = rec(host("epyc-nogpu", { smi: null }), { ...M28, cpuOnly: false });
  assert.is(noCpuOnly.status, "none");
  assert.ok(noCpuOnly.picks[0].suggestions.includes("set cpuOnly: true in matrix.ts"));
});

test("GPU driver too old for the matrix's CUDA: names the minimum driver; suggests a CUDA the GPU driver runs", () => {
  const r = rec(host("h100-old-driver"), M28);
  assert.is(r.status, "none");
  assert.equal(r.variants, []);
  const p = r.picks[0];
  assert.match(p.problems.join("\n"), "driver 520.61.05 is too old for the matrix's sm90 variants: CUDA 12.8 needs ≥ 570.26, and it is below 525.60.13");
  assert.ok(p.suggestions.some((x) => x.startsWith("upgrade the NVIDIA driver to ≥ 570.26 (CUDA 12.8), or to ≥ 525.60.13 to run it under CUDA minor-version compatibility")), p.suggestions.join("\n"));
  assert.match(p.suggestions.join("\n"), "no CUDA version in the catalog runs on driver 520.61.05");
  assert.is(r.cpuFallback, "torchaudio-python313-cpu-avx512bf16");
  // R535 and R560 are below CUDA 12.8's own minimum but ≥ 525.60.13: the 12.8 build runs under minor-version
  // compatibility (SASS 9.0 from every origin), said so; with CUDA 12.6 in the matrix (R560 runs it with full
  // support) the 12.6 build ranks first.
  for (const d of ["535.183.01", "560.35.03"]) {
    const rd = rec(host("h100-old-driver", { smi: `9.0, NVIDIA H100 80GB HBM3, ${d}\n` }), M28);
    assert.equal(rd.variants, ["torchaudio-python313-cuda12_8-sm90-avx512bf16"], d);
    assert.match(rd.picks[0].reasons.join("\n"), `runs under CUDA minor-version compatibility: driver ${d} is below 570.26, CUDA 12.8's own minimum, but ≥ 525.60.13`);
    assert.match(rd.reasons.join("\n"), "under CUDA minor-version compatibility it");
  }
  const with126 = rec(host("h100-old-driver", { smi: "9.0, NVIDIA H100 80GB HBM3, 560.35.03\n" }), {
    ...M28,
    releases: [{ ...R28, cuda: ["12.6", "12.8"] }],
  });
  assert.equal(with126.variants, ["torchaudio-python313-cuda12_6-sm90-avx512bf16"]);
  assert.match(with126.picks[0].reasons.join("\n"), "runs under CUDA minor-version compatibility (driver 560.35.03 ≥ 525.60.13");
});

test("two different GPUs: says so, one variant per GPU kind; a missing SM makes it partial", () => {
  const r = rec(host("two-gpus"), M28);
  assert.is(r.status, "ok");
  assert.equal(r.variants, [
    "torchaudio-python313-cuda12_8-sm80-avx512bf16",
    "torchaudio-python313-cuda12_8-sm86-avx512bf16",
  ]);
  assert.equal(r.picks.map((p) => p.gpuIndices), [[0, 1], [2]]);
  assert.match(r.reasons.join("\n"), "GPUs of 2 different compute capabilities");
  assert.match(r.reasons.join("\n"), "one variant per GPU kind is recommended");
  const partial = rec(host("two-gpus"), { ...M28, gpus: ["80"] });
  assert.is(partial.status, "partial");
  assert.equal(partial.variants, ["torchaudio-python313-cuda12_8-sm80-avx512bf16"]);
  assert.ok(partial.picks[1].suggestions.includes(`add "86" to gpus in matrix.ts`));
});

test("a GPU the catalog does not know, and a package the matrix does not build", () => {
  const r = rec(host("spr-h100", { smi: "6.1, NVIDIA GeForce GTX 1080, 570.124.06\n" }), M28);
  assert.is(r.status, "none");
  assert.match(r.picks[0].problems[0], "compute capability 6.1 (sm61) is not in the catalog");
  const onlyArm = rec(host("spr-h100"), { ...M28, isas: ["armv9"] });
  assert.match(onlyArm.picks[0].problems.join("\n"), "no torchaudio variants for x86_64-linux");
  assert.ok(onlyArm.picks[0].suggestions.includes(`add "avx512bf16" to isas in matrix.ts`));
});

// --- the command --------------------------------------------------------------------------------------------

const fixtureSource: VariantSource = async () => ({ catalog: CAT, variants: fixtureVariants(M28) });
async function run(args: Parameters<typeof runDetect>[0]) {
  let out = "";
  let err = "";
  const code = await runDetect(args, fixtureSource, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

test("runDetect: text and JSON output, exit 0 / 1 / 2", async () => {
  // The fixture matrix has no environment: torchaudio is named (the default, torch-env, is tested on matrix.ts below).
  const ok = await run({ package: "torchaudio", cpuinfo: hostFile("gh200", "cpuinfo"), "nvidia-smi": hostFile("gh200", "nvidia-smi.txt") });
  assert.is(ok.code, 0);
  // (Wrapped to the terminal: compared with its line breaks read as spaces.)
  assert.match(ok.out.replace(/\s+/g, " "), "Recommended torchaudio for GPU 0 (NVIDIA GH200 480GB, sm90): torchaudio-python313-cuda12_8-sm90-armv9");
  const json = await run({
    json: true,
    package: "pytorch",
    cpuinfo: hostFile("spr-h100", "cpuinfo"),
    "nvidia-smi": hostFile("spr-h100", "nvidia-smi.txt"),
  });
  assert.equal(JSON.parse(json.out).variants, ["pytorch-python313-cuda12_8-sm90-avx512bf16"]);
  // Every package of the catalog's table, and the environment, is recommended by the same rule.
  // (The default matrix, matrix.ts, which has them.)
  for (const pkg of ["torchvision", "torch-env"]) {
    let out = "";
    const code = await runDetect(
      { json: true, package: pkg, matrix: join(ROOT, "matrix.ts"), cpuinfo: hostFile("spr-h100", "cpuinfo"), "nvidia-smi": hostFile("spr-h100", "nvidia-smi.txt") },
      undefined,
      { out: (x) => (out += x), err: () => {} },
    );
    assert.is(code, 0, out);
    const [name] = JSON.parse(out).variants as string[];
    assert.match(name!, new RegExp(`^${pkg}-python313-cuda\\d+_\\d+-sm90-avx512bf16$`));
  }
  const none = await run({
    package: "torchaudio",
    cpuinfo: hostFile("h100-old-driver", "cpuinfo"),
    "nvidia-smi": hostFile("h100-old-driver", "nvidia-smi.txt"),
  });
  assert.is(none.code, 1);
  assert.match(none.out.replace(/\s+/g, " "), "upgrade the NVIDIA driver to ≥ 570.26");
  const badPkg = await run({ package: "torchtext", cpuinfo: hostFile("gh200", "cpuinfo") });
  assert.is(badPkg.code, 2);
  assert.match(badPkg.err, `--package: unknown package "torchtext"; allowed values: pytorch, torchaudio, torchvision, flash-attn, xformers, bitsandbytes, vllm, torch-env`);
  const badMachine = await run({ machine: "riscv64", cpuinfo: hostFile("gh200", "cpuinfo") });
  assert.is(badMachine.code, 2);
  assert.match(badMachine.err, "allowed values: x86_64, amd64, aarch64, arm64");
  const missing = await run({ cpuinfo: hostFile("nope", "cpuinfo") });
  assert.is(missing.code, 2);
  assert.match(missing.err, "cannot read --cpuinfo file");
  // A recorded CPU without a recorded GPU list is not mixed with this machine's GPUs.
  const cpuOnly = await run({ json: true, package: "torchaudio", cpuinfo: hostFile("epyc-nogpu", "cpuinfo") });
  assert.equal(JSON.parse(cpuOnly.out).variants, ["torchaudio-python313-cpu-avx2"]);
});

function child(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      cliArgv(args),
      { cwd: ROOT, timeout: 120_000 },
      (err, stdout, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test("child process: `detect --cpuinfo … --nvidia-smi … --json` against the real matrix; bad file exits 2", async () => {
  const r = await child([
    "detect",
    "--cpuinfo",
    hostFile("dgx-spark", "cpuinfo"),
    "--nvidia-smi",
    hostFile("dgx-spark", "nvidia-smi.txt"),
    "--json",
  ]);
  assert.ok(r.code === 0 || r.code === 1, r.stderr);
  const out = JSON.parse(r.stdout) as Recommendation;
  assert.is(out.host.system, "aarch64-linux");
  assert.equal(out.host.gpus.map((g) => g.sm), ["121"]);
  // No --package: the environment of the whole stack, what a user activates.
  assert.is(out.package, "torch-env");
  assert.ok(out.variants.length > 0);
  for (const name of out.variants) assert.match(name, /^torch-env\d*-python\d+-cuda\d+_\d+-sm121-armv9$/);

  const bad = await child(["detect", "--cpuinfo", hostFile("bad", "cpuinfo-missing-colon")]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "cpuinfo-missing-colon:19: cannot read this line");
  assert.match(bad.stderr, "19 | wp\t\t yes");
  assert.is(bad.stdout, "");

  const unknown = await child(["detect", "--bogus"]);
  assert.is(unknown.code, 2);
});

// --- the real catalog and the real generated matrix ---------------------------------------------------------

test("real catalog: the recorded hosts get the documented ISA and their GPU's SM", async () => {
  const { catalog } = await import("../generator/catalog/index.ts");
  const { projectFromMatrix } = await import("../generator/matrix/project.ts");
  const p = projectFromMatrix(
    {
      releases: [
        { torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 },
        { torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 },
      ],
      python: ["3.13"],
      cuda: ["12.8", "12.9"],
      gpus: ["75", "80", "86", "90", "121"],
      isas: ALL_ISAS,
      cpuOnly: true,
    },
    catalog,
  );
  const r = (h: HostInfo) => recommend(h, p.variants, catalog, { package: "torchaudio" });
  assert.equal(r(host("spr-h100")).host.isa, "avx512bf16");
  assert.equal(r(host("graviton3-t4g")).host.isa, "armv8_2");
  assert.equal(r(host("gh200")).host.isa, "armv9");
  assert.equal(r(host("dgx-spark")).host.isa, "armv9");
  assert.equal(r(host("epyc-nogpu")).host.isa, "avx2");
  const spark = r(host("dgx-spark"));
  assert.is(spark.status, "ok");
  assert.match(spark.variants[0], /-cuda12_9-sm121-armv9$/);
  assert.not.ok(spark.picks[0].binaryCompat, "CUDA 12.9 compiles 12.1 natively");
  const g3 = r(host("graviton3-t4g"));
  for (const v of g3.variants) assert.match(v, /-sm75-armv8_2$/);
  const old = r(host("h100-old-driver"));
  assert.is(old.status, "none");
  assert.match(old.picks[0].problems.join("\n"), "CUDA 12.8 needs ≥ 570.26");
});

test("real catalog and default matrix: a Thor host gets an sm110 variant on CUDA 13.0 (armv9)", async () => {
  const { loadProject } = await import("../generator/matrix/project.ts");
  const p = await loadProject();
  const thor = recommend(host("thor"), p.variants, p.catalog, { package: "torchaudio" });
  assert.is(thor.status, "ok", JSON.stringify(thor.picks));
  assert.is(thor.host.isa, "armv9");
  assert.match(thor.variants[0]!, /^torchaudio-python313-cuda13_0-sm110-armv9$/);
  assert.not.ok(thor.picks[0]!.binaryCompat);
  const v = p.variants.find((x) => x.name === thor.variants[0])!;
  assert.equal(v.cudaCapabilities, ["11.0"]);
});

test("a package the matrix lists but drops everywhere (bitsandbytes at the default pin): detect gives the first drop reason, not \"add it to packages\"", async () => {
  const [{ projectFromMatrix }, { default: matrix }] = await Promise.all([import("../generator/matrix/project.ts"), import("../matrix.ts")]);
  const p = projectFromMatrix({ ...matrix, packages: [...matrix.packages!, "bitsandbytes"] });
  const dropped = p.excluded.filter((e) => e.package === "bitsandbytes");
  assert.ok(dropped.length > 0 && !p.variants.some((v) => v.package === "bitsandbytes"), "the default pin yields no bitsandbytes");
  const source: VariantSource = async () => ({ catalog: p.catalog, variants: p.variants, excluded: p.excluded });
  for (const h of ["spr-h100", "epyc-nogpu"]) {
    let out = "";
    const code = await runDetect({ package: "bitsandbytes", cpuinfo: hostFile(h, "cpuinfo"), nvidiaSmi: undefined, "nvidia-smi": h === "spr-h100" ? hostFile(h, "nvidia-smi.txt") : undefined } as never, source, { out: (s) => (out += s), err: () => {} });
    assert.is(code, 1);
    const flat = out.replace(/\s+/g, " ");
    assert.not.match(flat, /add "bitsandbytes" to packages/, out);
    assert.ok(flat.includes(`bitsandbytes is in packages of matrix.ts, but every one of its ${dropped.length} combination(s) is dropped: ${dropped[0]!.reasons[0]!}`), out);
  }
  // Not in packages at all: still told to add it.
  const without = recommend(host("spr-h100"), p.variants, p.catalog, { package: "xformers", excluded: p.excluded });
  assert.ok(without.picks[0]!.suggestions.includes('add "xformers" to packages in matrix.ts'), JSON.stringify(without.picks[0]));
});

test("real generated matrix (loadProject): every recommendation is a generated variant for the host", async () => {
  const { loadProject } = await import("../generator/matrix/project.ts");
  const p = await loadProject();
  const names = new Set(p.variants.map((v) => v.name));
  for (const h of ["spr-h100", "gh200", "dgx-spark", "thor", "graviton3-t4g", "epyc-nogpu", "two-gpus", "h100-old-driver"]) {
    const hi = host(h);
    const r = recommend(hi, p.variants, p.catalog, { package: "torchaudio" });
    for (const pick of r.picks) {
      if (pick.variant === null) {
        assert.ok(pick.problems.length > 0, `${h}: no variant and no reason`);
        continue;
      }
      assert.ok(names.has(pick.variant), `${h}: ${pick.variant} is not generated`);
      const v = p.variants.find((x) => x.name === pick.variant)!;
      assert.is(v.system, hi.system, h);
      assert.is(v.sm, pick.sm, h);
      if (pick.capability) assert.ok(capabilitiesRunOn(v.cudaCapabilities, pick.capability), h);
    }
  }
});

test("live host (no files): reads /proc/cpuinfo and uname; a missing nvidia-smi means no GPU", async () => {
  const h = await readHost();
  assert.is(h.sources.cpuinfo, "/proc/cpuinfo");
  assert.is(h.sources.machine, "uname -m");
  assert.is(h.machine, machineToSystem(osMachine()).arch);
  if (h.gpus.length === 0) assert.ok(h.gpuAbsentReason);
});

// --- the shortest wait ----------------------------------------------------------------------------------------

/** Every recorded host directory with a cpuinfo and an nvidia-smi.txt (tests/fixtures/hosts, `bad/` left out). */
function recordedHosts(): string[] {
  return readdirSync(HOSTS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== "bad" && existsSync(hostFile(d.name, "cpuinfo")) && existsSync(hostFile(d.name, "nvidia-smi.txt")))
    .map((d) => d.name);
}

test("every recorded host: detect picks a native variant whose modelled wait is the smallest of the fitting native ones", async () => {
  const [{ loadProject }, { variantRunsOn, variantDriverSupport }] = await Promise.all([
    import("../generator/matrix/project.ts"),
    import("../generator/matrix/compat.ts"),
  ]);
  const p = await loadProject();
  const hosts = recordedHosts();
  assert.ok(hosts.includes("h100-driver580") && hosts.length >= 10, hosts.join(", "));
  let judged = 0;
  for (const h of hosts) {
    const hi = host(h);
    const r = recommend(hi, p.variants, p.catalog, { package: "torch-env" });
    for (const pick of r.picks) {
      if (pick.variant === null) continue;
      // The fitting variants by the one "runs on" rule, and the minimum wait among the native ones, from the model.
      const gpu = pick.capability === null ? null : { capability: pick.capability, driver: hi.gpus.find((g) => g.capability === pick.capability)!.driver };
      const fits = p.variants.filter((v) => v.package === "torch-env" && v.system === hi.system && variantRunsOn(v, hi, gpu, p.catalog));
      const nativeAll = gpu ? fits.filter((v) => !v.binaryCompat && v.cudaCapabilities.includes(gpu.capability)) : fits;
      // Full driver support ranks before CUDA minor-version compatibility.
      const full = gpu ? nativeAll.filter((v) => variantDriverSupport(v, gpu, p.catalog) === "full") : nativeAll;
      const native = full.length ? full : nativeAll;
      const pool = native.length ? native : fits;
      const min = Math.min(...pool.map((v) => variantWait(v, p.variants, p.catalog, hostCapacity(hi)).seconds!));
      const chosen = p.variants.find((v) => v.name === pick.variant)!;
      assert.ok(pool.includes(chosen), `${h}: ${pick.variant} is ${native.length ? "native" : "a fit"}`);
      assert.is(variantWait(chosen, p.variants, p.catalog, hostCapacity(hi)).seconds, min, `${h}: ${pick.variant} waits the least`);
      judged++;
    }
  }
  assert.ok(judged >= 8, `${judged} picks judged`);
});

test("H100 with driver 580: a CUDA 12.9 variant (the pin's default CUDA set), the cuda13_0 trade in one line; --prefer newest keeps the newest CUDA", async () => {
  const { loadProject } = await import("../generator/matrix/project.ts");
  const p = await loadProject();
  const r = recommend(host("h100-driver580"), p.variants, p.catalog, { package: "torch-env" });
  assert.is(r.status, "ok");
  assert.match(r.variants[0]!, /^torch-env-python313-cuda12_9-sm90-avx512bf16$/);
  const trade = r.picks[0]!.reasons.find((x) => x.startsWith("cuda13_0 also fits"));
  assert.ok(trade, r.picks[0]!.reasons.join("\n"));
  // The trade is the difference of the two waits on the host's capacity (16 CPUs of the recording).
  const cap = hostCapacity(host("h100-driver580"));
  const [wb, wn] = [r.variants[0]!, "torch-env-python313-cuda13_0-sm90-avx512bf16"].map((n) => variantWait(p.variants.find((v) => v.name === n)!, p.variants, p.catalog, cap).seconds!);
  assert.ok(wn > wb, `${wn} > ${wb}`);
  assert.match(trade!, `cuda13_0 also fits: about +${((wn - wb) / 3600).toFixed(1)} h of NCCL, NVSHMEM, magma and triton from source`);
  const newest = recommend(host("h100-driver580"), p.variants, p.catalog, { package: "torch-env", prefer: "newest" });
  assert.match(newest.variants[0]!, /-cuda13_0-sm90-avx512bf16$/);
  assert.not.ok(newest.picks[0]!.reasons.some((x) => x.includes("also fits")));
  // Driver 570 allows CUDA <= 12.8, off the cache: what a driver upgrade would save.
  const old = recommend(host("spr-h100"), p.variants, p.catalog, { package: "torch-env" });
  assert.match(old.variants[0]!, /-cuda12_8-sm90-/);
  // The saving is the difference of the two waits on the recording's capacity (2 CPUs).
  const oldCap = hostCapacity(host("spr-h100"));
  const waitOfName = (n: string) => variantWait(p.variants.find((v) => v.name === n)!, p.variants, p.catalog, oldCap).seconds!;
  const saved = waitOfName(old.variants[0]!) - waitOfName(old.variants[0]!.replace("cuda12_8", "cuda12_9"));
  assert.ok(saved > 0, String(saved));
  assert.ok(old.picks[0]!.suggestions.some((x) => x.startsWith(`a driver ≥ 575.51.03 (CUDA 12.9) would save about ${(saved / 3600).toFixed(1)} h`)), old.picks[0]!.suggestions.join("\n"));
  // The command: --prefer is checked (yargs choices; runDetect's own check names the values).
  let err = "";
  const code = await runDetect({ prefer: "oldest" } as never, async () => ({ catalog: p.catalog, variants: p.variants, excluded: p.excluded }), { out: () => {}, err: (x) => (err += x) });
  assert.is(code, 2);
  assert.match(err, /--prefer: unknown value "oldest"; allowed values: wait, newest/);
});

test("CUDA minor-version compatibility: a newer minor runs on a driver of its major's minimum when its code needs no PTX JIT", async () => {
  const { driverSupport, needsPtxJit, variantDriverSupport } = await import("../generator/matrix/compat.ts");
  const cat = builtInCatalog;
  const t = (v: string) => cat.cuda.find((c) => c.version === v)!;
  // The catalog's family minimums (NVIDIA minor-version compatibility: 12.x >= 525, 13.x >= 580).
  assert.equal(cat.cudaMajors.map((m) => [m.major, m.minDriverLinux]), [["12", "525.60.13"], ["13", "580.65.06"]]);
  assert.is(driverSupport("595.45.04", t("13.2"), cat.cudaMajors), "full");
  assert.is(driverSupport("580.159.04", t("13.2"), cat.cudaMajors), "minorCompat");
  assert.is(driverSupport("575.57.08", t("13.0"), cat.cudaMajors), null, "a 12.x driver never runs 13.x");
  assert.is(driverSupport("570.124.06", t("12.9"), cat.cudaMajors), "minorCompat");
  assert.is(driverSupport("520.61.05", t("12.6"), cat.cudaMajors), null, "below 12.x's minimum");
  assert.is(driverSupport("580.159.04", t("13.2"), []), null, "without the family table, only full support");
  // The device-code side: SASS for the GPU from torch and from the bundled libraries, or JIT would be needed.
  const base = { cuda: "13.2", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" };
  assert.not.ok(needsPtxJit({ ...base, cudaCapabilities: ["9.0"], cudaCapabilitiesForPackageSet: false }, "9.0", cat), "9.0 is a default of 13.2's set");
  assert.not.ok(needsPtxJit({ ...base, cudaCapabilities: ["12.0"], cudaCapabilitiesForPackageSet: true }, "12.1", cat), "12.0 SASS runs on 12.1");
  assert.ok(needsPtxJit({ ...base, cudaCapabilities: ["8.0"], cudaCapabilitiesForPackageSet: true }, "9.0", cat), "no 9.x SASS");
  // Torch scope on a set whose defaults have no SASS for the GPU: the bundled NCCL/MAGMA would need their PTX JIT-compiled.
  const noDefaults = { ...cat, nixpkgs: [], cuda: cat.cuda.map((c) => (c.version === "13.2" ? { ...c, nixpkgsDefaultCapabilities: ["7.5", "8.0"] } : c)) };
  assert.ok(needsPtxJit({ ...base, cudaCapabilities: ["9.0"], cudaCapabilitiesForPackageSet: false }, "9.0", noDefaults));
  const gpu = { capability: "9.0", driver: "580.159.04" };
  assert.is(variantDriverSupport({ ...base, cudaCapabilities: ["9.0"], cudaCapabilitiesForPackageSet: false }, gpu, cat), "minorCompat");
  assert.is(variantDriverSupport({ ...base, cudaCapabilities: ["9.0"], cudaCapabilitiesForPackageSet: false }, gpu, noDefaults), null);
});

test("H100 with driver 580 (recorded): CUDA 13.2 variants run under minor-version compatibility, said so, ranked after full support; below 580.65.06 no 13.x fits", async () => {
  const [{ projectFromMatrix }, { default: matrix }] = await Promise.all([import("../generator/matrix/project.ts"), import("../matrix.ts")]);
  const p = projectFromMatrix({ ...matrix, cuda: ["12.9", "13.0", "13.2"], gpus: ["90"], isas: ["avx512bf16"], packages: ["pytorch"] });
  const v132 = "pytorch-python313-cuda13_2-sm90-avx512bf16";
  assert.ok(p.variants.some((v) => v.name === v132), "the default pin carries CUDA 13.2");
  const r = recommend(host("h100-driver580"), p.variants, p.catalog, { package: "pytorch" });
  assert.is(r.status, "ok");
  // Host finding: 13.0 with full support, 13.2 only under minor-version compatibility.
  assert.is(r.host.maxCuda, "13.0");
  assert.equal(r.host.minorCompatCuda, ["13.2"]);
  assert.match(r.reasons.join("\n"), "runs CUDA up to 13.0 of the catalog's 12.6, 12.8, 12.9, 13.0, 13.2 with full support (13.0 needs ≥ 580.65.06); under CUDA minor-version compatibility it also runs 13.2 (needs ≥ 595.45.04), being ≥ 580.65.06 (CUDA 13.x)");
  const pick = r.picks[0]!;
  // The 12.9 and 13.0 builds run with full support and rank first; 13.2 is named with what it loses.
  assert.match(r.variants[0]!, /-cuda(12_9|13_0)-sm90-avx512bf16$/);
  assert.ok(pick.alternatives.includes(v132), pick.alternatives.join(", "));
  const line = pick.reasons.find((x) => x.startsWith("runs under CUDA minor-version compatibility"));
  assert.ok(line, pick.reasons.join("\n"));
  assert.match(line!, `driver 580.159.04 ≥ 580.65.06, the CUDA 13.x minimum under minor-version compatibility`);
  assert.match(line!, `${v132} (CUDA 13.2 needs ≥ 595.45.04`);
  assert.match(line!, "loses JIT of PTX newer than the driver");
  assert.match(line!, "cudaErrorCallRequiresNewerDriver");
  assert.not.match(line!, /cuda13_0|cuda12_9/, "13.0 and 12.9 run with full support");
  // The driver-upgrade line says what a newer driver adds.
  assert.ok(pick.suggestions.some((x) => x.startsWith("a driver ≥ 595.45.04 runs CUDA 13.2 with full support: it adds JIT of their PTX")), pick.suggestions.join("\n"));
  // --prefer newest: still full support first (13.0), 13.2 named.
  const newest = recommend(host("h100-driver580"), p.variants, p.catalog, { package: "pytorch", prefer: "newest" });
  assert.is(newest.variants[0], "pytorch-python313-cuda13_0-sm90-avx512bf16");
  // With only 13.2 in the matrix it is the pick, and its own driver line says minor-version compatibility.
  const only132 = projectFromMatrix({ ...matrix, cuda: ["13.2"], gpus: ["90"], isas: ["avx512bf16"], packages: ["pytorch"] });
  const r132 = recommend(host("h100-driver580"), only132.variants, only132.catalog, { package: "pytorch" });
  assert.equal(r132.variants, [v132]);
  assert.match(r132.picks[0]!.reasons.join("\n"), `runs under CUDA minor-version compatibility: driver 580.159.04 is below 595.45.04, CUDA 13.2's own minimum, but ≥ 580.65.06`);
  assert.ok(r132.picks[0]!.suggestions.some((x) => x.startsWith("a driver ≥ 595.45.04 runs CUDA 13.2 with full support (the pick's CUDA 13.2 needs ≥ 595.45.04)")));
  // A driver below the 13.x minimum (an R575 driver): no 13.x variant fits, by either rule.
  const r575 = recommend(host("h100-driver580", { smi: "9.0, NVIDIA H100 80GB HBM3, 575.57.08\n" }), only132.variants, only132.catalog, { package: "pytorch" });
  assert.is(r575.status, "none");
  assert.match(r575.picks[0]!.problems.join("\n"), "driver 575.57.08 is too old for the matrix's sm90 variants: CUDA 13.2 needs ≥ 595.45.04, and it is below 580.65.06 (the CUDA 13.x minimum under minor-version compatibility)");
  const mixed = recommend(host("h100-driver580", { smi: "9.0, NVIDIA H100 80GB HBM3, 575.57.08\n" }), p.variants, p.catalog, { package: "pytorch" });
  assert.equal(mixed.variants, ["pytorch-python313-cuda12_9-sm90-avx512bf16"]);
  assert.not.ok(mixed.picks[0]!.alternatives.some((n) => n.includes("cuda13_")), mixed.picks[0]!.alternatives.join(", "));
});

test("vLLM below 0.20 (CVE-2026-27893, …): each pin's insecure mark as the catalog knows it, in the variant's notes and detect's warnings", async () => {
  const { insecureNote } = await import("../generator/catalog/lib/packages.ts");
  const vllm = builtInCatalog.packagesOnTorch.find((p) => p.name === "vllm")!;
  const at = (rev: string, v = "0.16.0") => insecureNote(builtInCatalog, vllm, v, rev, "3.13");
  // 26.05 (a311611): branched before NixOS/nixpkgs#523800; whether its file marks it is not known: the permission is named.
  assert.match(at("a3116115851d68b8952a2a4221cc25a84e56b532")!, 'whether nixpkgs a311611\'s file does is not known');
  assert.match(at("a3116115851d68b8952a2a4221cc25a84e56b532")!, 'nixpkgs.config.permittedInsecurePackages = [ "python3.13-vllm-0.16.0" ]');
  // Revisions before the mark: said so, no permission asked.
  assert.match(at("549bd84d6279f9852cae6225e372cc67fb91a4c1")!, "predates NixOS/nixpkgs#523800");
  assert.not.match(at("549bd84d6279f9852cae6225e372cc67fb91a4c1")!, "permittedInsecurePackages");
  // A fixed version, or another package: nothing.
  assert.is(at("2c423e03bbafcff28bfadc6781a4a8257f205cb5", "0.24.0"), null);
  assert.is(insecureNote(builtInCatalog, builtInCatalog.packagesOnTorch.find((p) => p.name === "torchvision")!, "0.1.0", "x", "3.13"), null);
  // The variants of a pin with vLLM 0.15.1 (0182a36) carry the note; detect repeats it as a warning.
  const [{ projectFromMatrix }, { default: matrix }] = await Promise.all([import("../generator/matrix/project.ts"), import("../matrix.ts")]);
  const p = projectFromMatrix({ ...matrix, releases: [{ torch: "2.9.1", nixpkgs: "0182a361324364ae3f436a63005877674cf45efb" }], cuda: ["12.8"], gpus: ["90"], isas: ["avx512bf16"], packages: ["pytorch", "vllm"] });
  const v = p.variants.find((x) => x.package === "vllm");
  assert.ok(v, p.excluded.filter((e) => e.package === "vllm").map((e) => e.reasons[0]).join("\n"));
  assert.ok(v!.notes.some((n) => n.startsWith(`vLLM ${v!.version} is below 0.20.0, which fixes CVE-2026-27893`)), v!.notes.join("\n"));
  const r = recommend(host("h100-driver580"), p.variants, p.catalog, { package: "vllm" });
  assert.ok(r.picks[0]!.warnings.some((w) => w.includes("predates NixOS/nixpkgs#523800")), JSON.stringify(r.picks[0]));
});

test.run();
