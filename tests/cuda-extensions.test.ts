// The CUDA stack on one torch. flash-attn, xformers and bitsandbytes as packages built on the variant's
// torch: what the catalog keeps and drops (expand), what each build is handed (pkgs/variant-attrs.nix through the real
// nix-instantiate / nix-build against the stand-in nixpkgs of each file era), one torch per closure and `eval`'s
// coupling proof, and `verify` judging a modelled correct build of each (passes) and a modelled wrong one (fails).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cudaBuildOf, onTorch, ownListSass } from "../generator/catalog/lib/packages.ts";
import { packagesOnTorch } from "../generator/catalog/packages.ts";
import { coresForPackage, jobsRule } from "../generator/model/concurrency.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { buildCmd } from "../generator/driver/backend.ts";
import { checkPromise, type Probe } from "../generator/verify/compare.ts";
import type { MatrixInput, Variant } from "../generator/matrix/schema.ts";
import defaultMatrix from "../matrix.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { EXTENSION_LIBS, modelLibraries, NAMES, STAND_IN_CUOBJDUMP_DIR, writeStandInEnv } from "./helpers/device-model.ts";
import { STAND_IN_BUILDER_FEATURES, STAND_IN_NIXPKGS, currentSystem, nixEvalJson, nixPath, runNix } from "./helpers/nix.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { catalog } from "../generator/catalog/index.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

const EXTENSIONS = ["flash-attn", "xformers", "bitsandbytes"] as const;
const ALL = ["pytorch", "torchaudio", "torchvision", ...EXTENSIONS, "torch-env"];
const PIN_2_11 = "549bd84d6279f9852cae6225e372cc67fb91a4c1"; // flash-attn 2.8.2, xformers 0.0.35, bitsandbytes 0.49.2
const PIN_2_9 = "0182a361324364ae3f436a63005877674cf45efb"; // flash-attn 2.8.2, xformers 0.0.30, bitsandbytes 0.49.1
const PIN_2_12 = "2c423e03bbafcff28bfadc6781a4a8257f205cb5"; // flash-attn 2.8.3.post1, xformers 0.0.35, bitsandbytes unknown
const BY_REV = `import ${nixPath(join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
const SYSTEM = currentSystem();
const ISA = SYSTEM === "aarch64-linux" ? "armv9" : "avx2";

const wide: MatrixInput = {
  releases: [{ torch: "2.11.0", nixpkgs: PIN_2_11 }],
  python: ["3.13"],
  cuda: ["12.8", "13.0"],
  gpus: ["75", "86", "90", "100", "103", "110", "120", "121"],
  isas: ["avx2", "armv9"],
  cpuOnly: true,
  packages: ALL,
};

test("opting in: each extension on every CUDA pytorch variant it can serve, built against it; the rest dropped with the reason; the default matrix has none", () => {
  const p = projectFromMatrix(wide);
  const torches = p.variants.filter((v) => v.package === "pytorch");
  const dropped = (name: string) => p.excluded.find((e) => e.name === name);
  for (const t of torches)
    for (const ext of EXTENSIONS) {
      const name = t.name.replace(/^pytorch-/, `${ext}-`);
      const v = p.variants.find((x) => x.name === name);
      if (v) assert.equal(v.dependsOn, [t.name], name);
      else assert.ok(dropped(name)?.reasons.length, `${name}: neither a variant nor dropped with a reason`);
    }
  const kept = (ext: string) => p.variants.filter((v) => v.package === ext);
  for (const ext of EXTENSIONS) assert.ok(kept(ext).some((v) => v.cuda !== null), `${ext} has CUDA variants`);
  // flash-attn: Ampere (SM80) or newer only, CUDA only; SM110 (Thor) has no token in 2.8.x.
  assert.match(dropped("flash-attn-python313-cuda12_8-sm75-avx2")!.reasons.join(" "), /none of which runs on compute capability 7\.5.*Ampere/);
  assert.match(dropped("flash-attn-python313-cpu-avx2")!.reasons.join(" "), /no CPU-only build: nixpkgs' flash-attn is `meta\.broken = !cudaSupport`/);
  assert.match(dropped("flash-attn-python313-cuda13_0-sm110-armv9")!.reasons.join(" "), /compute capability 11\.0/);
  assert.ok(!kept("flash-attn").some((v) => v.cuda === null), "no CPU-only flash-attn");
  // xformers and bitsandbytes have CPU builds in nixpkgs (bitsandbytes: COMPUTE_BACKEND=cpu).
  assert.ok(kept("xformers").some((v) => v.cuda === null) && kept("bitsandbytes").some((v) => v.cuda === null));
  assert.ok(kept("bitsandbytes").some((v) => v.cuda === "13.0"), "0.49.2 builds with CUDA 13 (< 14.0)");
  // A report not reproduced here is a note on the variants it concerns (aarch64 with CUDA 13), not a drop.
  const note = (n: string) => p.variants.find((v) => v.name === n)!.notes.some((x) => /NOT RECOMMENDED/.test(x));
  assert.ok(note("flash-attn-python313-cuda13_0-sm90-armv9"));
  assert.not.ok(note("flash-attn-python313-cuda12_8-sm90-armv9") || note("flash-attn-python313-cuda13_0-sm90-avx2"));
  // The environment holds every chosen package on that torch.
  const env = p.variants.find((v) => v.name === "torch-env-python313-cuda12_8-sm90-avx2")!;
  assert.equal(env.dependsOn, ALL.slice(0, -1).map((k) => `${k}-python313-cuda12_8-sm90-avx2`));
  const envT4 = p.variants.find((v) => v.name === "torch-env-python313-cuda12_8-sm75-avx2")!;
  assert.ok(!envT4.dependsOn.some((d) => d.startsWith("flash-attn")), "an environment holds only the packages kept for its GPU");
  // Opt-in: the default `packages` stays pytorch, torchaudio, torchvision and the environment.
  const d = projectFromMatrix({ ...wide, packages: undefined });
  assert.equal([...new Set(d.variants.map((v) => v.package))], ["pytorch", "torchaudio", "torchvision", "torch-env"]);
  assert.ok(!projectFromMatrix(defaultMatrix).variants.some((v) => (EXTENSIONS as readonly string[]).includes(v.package)));
});

test("pins decide the version: a pin without a known version drops the package with the reason; a release whose code fails on a capability is dropped", () => {
  const p = projectFromMatrix({ ...wide, releases: [{ torch: "2.12.0", nixpkgs: PIN_2_12 }], gpus: ["90"], isas: ["avx2"], cpuOnly: false });
  assert.ok(p.variants.some((v) => v.name === "flash-attn-python313-cuda12_8-sm90-avx2" && v.version === "2.8.3.post1"));
  assert.match(p.excluded.find((e) => e.name === "bitsandbytes-python313-cuda12_8-sm90-avx2")!.reasons[0]!, /No source gives the bitsandbytes version at nixpkgs 2c423e0/);
  const q = projectFromMatrix({ ...wide, releases: [{ torch: "2.9.1", nixpkgs: PIN_2_9 }], cuda: ["12.8", "12.9"], gpus: ["90"], isas: ["avx2"], cpuOnly: false });
  // bitsandbytes' one reported CUDA 12.8 failure (NixOS/nixpkgs#483507) is glibc 2.42 against CUDA <= 12.9's math
  // headers: the revision's, not the package's. Kept, with a note naming the header fix 0182a36 (2026-02-17) lacks.
  const bnb = q.variants.find((v) => v.name === "bitsandbytes-python313-cuda12_8-sm90-avx2" && v.version === "0.49.1");
  assert.ok(bnb);
  assert.ok(bnb.notes.some((n) => /glibc 2\.42/.test(n) && /not NixOS\/nixpkgs#498678/.test(n) && /has NixOS\/nixpkgs#484031/.test(n)), bnb.notes.join("\n"));
  // The torch of the same combination gets the same note: it is the revision's.
  assert.ok(q.variants.find((v) => v.name === "pytorch-python313-cuda12_8-sm90-avx2")!.notes.some((n) => /NixOS\/nixpkgs#498678/.test(n)));
  assert.ok(q.variants.some((v) => v.name === "bitsandbytes-python313-cuda12_9-sm90-avx2"));
  // xformers 0.0.30 compiles its bundled FlashAttention-3 for sm_90 from TORCH_CUDA_ARCH_LIST=9.0, where CUTLASS's
  // wgmma path traps (the H100 recording's toy-fa3): dropped on SM90 with the reason, kept elsewhere.
  assert.match(q.excluded.find((e) => e.name === "xformers-python313-cuda12_8-sm90-avx2")!.reasons.join(" "), /xformers 0\.0\.30 built for compute capability 9\.0 holds code that fails on that GPU at run time: .*device-side assert triggered/);
  const r = projectFromMatrix({ ...wide, releases: [{ torch: "2.9.1", nixpkgs: PIN_2_9 }], cuda: ["12.8"], gpus: ["89"], isas: ["avx2"], cpuOnly: false });
  assert.ok(r.variants.some((v) => v.name === "xformers-python313-cuda12_8-sm89-avx2" && v.version === "0.0.30"));
});

test("cudaBuildOf: flash-attn's own tokens (same major, minor at or below), bitsandbytes' CMake list with PTX for the highest, CUDA ranges", async () => {
  const fa = onTorch(catalog, "flash-attn")!;
  const tok = (caps: string[], cuda = "12.8") => {
    const b = cudaBuildOf(catalog, fa, { version: "2.8.3.post1", cudaCapabilities: caps, cuda });
    return "reason" in b ? b.reason : `${b.env.FLASH_ATTN_CUDA_ARCHS} | ${b.sass.join(" ")} | ${b.ptx.join(" ")}`;
  };
  assert.is(tok(["8.0"]), "80 | sm_80 | ");
  assert.is(tok(["8.6"]), "80 | sm_80 | ", "8.6 runs SM80 code (nixpkgs' dropDots would hand setup.py an ignored 86)");
  assert.is(tok(["8.9"]), "80 | sm_80 | ");
  assert.is(tok(["9.0"]), "90 | sm_90 | ");
  assert.is(tok(["10.3"], "12.9"), "100 | sm_100 | ");
  assert.is(tok(["12.1"], "13.0"), "120 | sm_120 | ");
  assert.is(tok(["8.6", "9.0"]), "80;90 | sm_80 sm_90 | ");
  assert.match(tok(["10.0"], "12.6"), /compiles SM100 code \(which would serve 10\.0\) only with CUDA 12\.8 and later, not 12\.6/);
  assert.match(tok(["7.5"]), /none of which runs on compute capability 7\.5/);
  const bnb = onTorch(catalog, "bitsandbytes")!;
  const b = cudaBuildOf(catalog, bnb, { version: "0.49.2", cudaCapabilities: ["8.6", "9.0"], cuda: "12.9" });
  assert.ok(!("reason" in b));
  if (!("reason" in b)) {
    assert.equal(b.cmakeFlags, ["-DCOMPUTE_CAPABILITY=86;90"]);
    assert.equal(b.sass, ["sm_86", "sm_90"]);
    assert.equal(b.ptx, ["compute_90"], "its CMakeLists keeps PTX for the highest entry");
    assert.is(b.ptxIn, "relocatable", "separable compilation: the PTX is in the relocatable fatbin");
  }
  // Sorted and de-duplicated before the highest is popped (CMakeLists 0.49.2 lines 189-193; H100: "90;80" → compute_90).
  const unsorted = cudaBuildOf(catalog, bnb, { version: "0.49.2", cudaCapabilities: ["9.0", "8.0", "9.0"], cuda: "13.0" });
  assert.ok(!("reason" in unsorted) && unsorted.cmakeFlags.join() === "-DCOMPUTE_CAPABILITY=80;90" && unsorted.ptx.join() === "compute_90");
  const old = cudaBuildOf(catalog, bnb, { version: "0.47.0", cudaCapabilities: ["9.0"], cuda: "13.0" });
  assert.ok("reason" in old && /bitsandbytes 0\.47\.0 builds with CUDA 11\.4 up to 13\.0 \(exclusive\), not CUDA 13\.0/.test(old.reason));
  assert.ok(!("reason" in cudaBuildOf(catalog, bnb, { version: "0.47.0", cudaCapabilities: ["8.0"], cuda: "11.4" })), "0.47.0 accepts CUDA 11.4 (VERSION_LESS 11.4)");
  // flash-attn's setup.py with no recognised token falls back to TORCH_CUDA_ARCH_LIST (H100: fa-fallback-86).
  const t = fa.releases[0]!.targets as Extract<NonNullable<(typeof fa.releases)[0]["targets"]>, { kind: "ownList" }>;
  assert.equal(ownListSass(t, "86", "8.6", "13.0"), ["sm_86"]);
  assert.equal(ownListSass(t, "86;90", "8.6;9.0", "13.0"), ["sm_90"], "8.6 gets no code when 90 is recognised");
  assert.equal(ownListSass(t, "80;90", "9.0", "13.0"), ["sm_80", "sm_90"]);
  // A TORCH_CUDA_ARCH_LIST entry the variant's torch refuses is served by the nearest accepted one below it, with a note.
  const tv = onTorch(catalog, "torchvision")!;
  const served = cudaBuildOf(catalog, tv, { version: "0.26.0", cudaCapabilities: ["8.8"], cuda: "13.0", torchVersion: "2.11.0" });
  assert.ok(!("reason" in served) && served.sass.join() === "sm_87" && served.env.TORCH_CUDA_ARCH_LIST === "8.7" && /refuses TORCH_CUDA_ARCH_LIST entry 8\.8/.test(served.why));
  const plain = cudaBuildOf(catalog, tv, { version: "0.26.0", cudaCapabilities: ["9.0"], cuda: "13.0", torchVersion: "2.11.0" });
  assert.ok(!("reason" in plain) && Object.keys(plain.env).length === 0 && plain.sass.join() === "sm_90");
  const xf = cudaBuildOf(catalog, onTorch(catalog, "xformers")!, { version: "0.0.35", cudaCapabilities: ["9.0"], cuda: "12.8" });
  assert.ok(!("reason" in xf) && xf.sass.join() === "sm_90" && xf.ptx.length === 0 && Object.keys(xf.env).length === 0);
  // Every entry of the table is sourced, with its device-code rule per release.
  for (const p of packagesOnTorch.filter((x) => x.optIn)) {
    assert.ok(p.buildSeconds.source.length > 20 && p.deviceCode.source.length > 20, p.name);
    for (const r of p.releases) if (r.targets && "source" in r.targets) assert.ok(r.targets.source.length > 20, `${p.name} ${r.version}`);
  }
});

/**
 * Generate a matrix of one pin with every package into a temp tree with pkgs/ (in-process through main); returns the
 * tree and its variants. Made once per argument list in this test process: the tests only read the tree.
 */
const trees = new Map<string, Promise<{ dir: string; variants: Variant[] }>>();
function generated(pin: string, torch: string, cuda: string, gpus: string[]): Promise<{ dir: string; variants: Variant[] }> {
  const key = JSON.stringify([pin, torch, cuda, gpus]);
  if (!trees.has(key)) trees.set(key, generateTree(pin, torch, cuda, gpus));
  return trees.get(key)!;
}
async function generateTree(pin: string, torch: string, cuda: string, gpus: string[]): Promise<{ dir: string; variants: Variant[] }> {
  const dir = tempDir("vm-ext-");
  cpSync(join(ROOT, "pkgs"), join(dir, "pkgs"), { recursive: true });
  const m: MatrixInput = { releases: [{ torch, nixpkgs: pin }], python: ["3.13"], cuda: [cuda], gpus, isas: [ISA], cpuOnly: true, packages: ALL };
  const file = writeMatrix(dir, m);
  const g = await runMain(["generate", "--matrix", file, "--out", dir]);
  if (g.status !== 0) throw new Error(`generate ${pin}: ${g.stderr}`);
  return { dir, variants: projectFromMatrix(m).variants };
}
const standIn = (pin: string, overrides = "") =>
  `(args: import ${nixPath(STAND_IN_NIXPKGS)} (args // { standIn = { pin = "${pin}"; pinOverrides = { ${overrides} }; }; }))`;
const variantExpr = (dir: string, name: string, nixpkgs: string) => `(import ${nixPath(join(dir, ".flox/pkgs", `${name}.nix`))} { variantMatrixNixpkgs = ${nixpkgs}; })`;

/** The .drv names in the closure of a variant whose derivation is a torch (the variant's own, or nixpkgs' python3.X-torch). */
function closureDrvs(drv: string): string[] {
  return runNix("nix-store", ["--query", "--requisites", drv]).split("\n").filter((l) => l.endsWith(".drv"));
}

for (const [pin, torch, cuda, eras] of [
  [PIN_2_11, "2.11.0", "12.9", "flash-attn 2.8.2, xformers 0.0.35, bitsandbytes 0.48-file"],
  [PIN_2_9, "2.9.1", "12.9", "flash-attn 2.8.2, xformers 0.0.30, bitsandbytes 0.48-file (0.49.1)"],
  [PIN_2_12, "2.12.0", "12.9", "flash-attn 2.8.3 (FLASH_ATTN_CUDA_ARCHS from dropDots), xformers 0.0.35"],
] as const)
  test(`stand-in ${pin.slice(0, 7)} (${eras}): each extension variant's closure holds exactly its pytorch variant's torch; the environment holds each once; eval proves every coupling`, async () => {
    const { dir, variants } = await generated(pin, torch, cuda, ["86", "90"]);
    const r = await runMain(["eval", "--json", "--root", dir, "--matrix", join(dir, "matrix.ts"), "--nixpkgs", BY_REV]);
    assert.is(r.status, 0, r.stdout + r.stderr);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const summary = lines.pop().summary;
    const byName = new Map(lines.map((l) => [l.name as string, l]));
    const exts = variants.filter((v) => (EXTENSIONS as readonly string[]).includes(v.package));
    assert.ok(exts.length >= 4, exts.map((v) => v.name).join(", "));
    for (const v of exts) {
      const l = byName.get(v.name)!;
      assert.is(l.error, null, v.name);
      assert.is(l.coupling.ok, true, `${v.name}: eval's coupling proof`);
      const torches = closureDrvs(l.drvPath).filter((d) => /-(pytorch-python\d+-|python3\.\d+-torch-)/.test(d));
      assert.equal(torches, [byName.get(v.dependsOn[0]!)!.drvPath], `${v.name}: one torch, its pytorch variant's`);
    }
    assert.is(summary.uncoupled, 0);
    // nixpkgs wires no extension into another (xformers' flash-attn input is commented out in 0.0.30 and gone in
    // 0.0.35), but if it did, it would get the variant: in every variant's Python set each sibling IS the variant.
    for (const xf of exts.filter((v) => v.package === "xformers")) {
      const fa = exts.find((v) => v.package === "flash-attn" && v.dependsOn[0] === xf.dependsOn[0]);
      if (!fa) continue;
      const inSet = nixEvalJson<string>(`${variantExpr(dir, xf.name, standIn(pin))}.passthru.pythonPackages.flash-attn.drvPath`);
      assert.is(inSet, byName.get(fa.name)!.drvPath, `${xf.name}: its set's flash-attn is ${fa.name}`);
    }
    for (const env of variants.filter((v) => v.package === "torch-env" && v.cuda !== null)) {
      const drvs = closureDrvs(byName.get(env.name)!.drvPath);
      // Each distribution once: the variant's derivation ("flash-attn-python313-…") and no nixpkgs one
      // ("python3.13-flash-attention-…", buildPythonPackage's name from the file's pname).
      const own: Record<string, string> = { torch: "pytorch", "flash-attn": "flash-attn" };
      const nixpkgsName: Record<string, string> = { "flash-attn": "flash-attention" };
      for (const pkg of ["torch", ...env.dependsOn.filter((d) => !d.startsWith("pytorch")).map((d) => d.split("-python")[0]!)]) {
        const re = new RegExp(`/[a-z0-9]{32}-(${own[pkg] ?? pkg}-python\\d+-|python3\\.\\d+-${nixpkgsName[pkg] ?? pkg}-\\d)`);
        const n = drvs.filter((d) => re.test(d)).length;
        assert.is(n, 1, `${env.name}: one ${pkg} derivation (${n})`);
      }
    }
  });

test("what each build is handed, in the torch scope: flash-attn's FLASH_ATTN_CUDA_ARCHS (80 for SM86, replacing 2.8.3's dropDots 86), bitsandbytes' -DCOMPUTE_CAPABILITY exactly the capabilities (nixpkgs' own passes none), MAX_JOBS capped by memory", async () => {
  const { dir, variants } = await generated(PIN_2_12, "2.12.0", "12.9", ["86"]);
  const fa = variants.find((v) => v.package === "flash-attn" && v.sm === "86")!;
  assert.is(fa.cudaCapabilitiesForPackageSet, false);
  const nixpkgs = standIn(PIN_2_12, 'bitsandbytes = "0.49.2"; bitsandbytesEra = "0.48";');
  // The nixpkgs file of this era sets FLASH_ATTN_CUDA_ARCHS = dropDots of the capabilities: "86", which setup.py ignores.
  const plain = nixEvalJson<string>(`(${nixpkgs} { config = { allowUnfree = true; cudaSupport = true; cudaCapabilities = [ "8.6" ]; }; }).python313Packages.flash-attn.FLASH_ATTN_CUDA_ARCHS`);
  assert.is(plain, "86");
  const out = runNix("nix-build", ["--no-out-link", "--cores", "4096", ...STAND_IN_BUILDER_FEATURES, "-E", variantExpr(dir, fa.name, nixpkgs)]).trim().split("\n").pop()!;
  const record = Object.fromEntries(readFileSync(out, "utf8").trim().split("\n").map((l) => [l.split("=")[0], l.slice(l.indexOf("=") + 1)]));
  assert.is(record.FLASH_ATTN_CUDA_ARCHS, "80");
  assert.is(record.TORCH_CUDA_ARCH_LIST, "8.6");
  // gibPerCompileJob = 9: at most one compile job per 9 GiB of the builder's memory, whatever --cores says. The real
  // build ran on this machine, so only "capped below 4096" holds everywhere; the rule itself is checked below on
  // recorded memory, not this machine's.
  assert.ok(Number(record.MAX_JOBS) >= 1 && Number(record.MAX_JOBS) < 4096, `MAX_JOBS ${record.MAX_JOBS} capped by memory`);
  assert.is(record.NIX_BUILD_CORES, "4096");
  // The build's own preConfigure, run by sh with /proc/meminfo replaced by a recorded one (MemAvailable in KiB).
  const preConfigure = nixEvalJson<string>(`${variantExpr(dir, fa.name, nixpkgs)}.preConfigure`);
  assert.match(preConfigure, /\/proc\/meminfo/);
  const maxJobs = (cores: number, availableKiB: number) => {
    const meminfo = join(tempDir("vm-meminfo-"), "meminfo");
    writeFileSync(meminfo, `MemTotal:       1056964608 kB\nMemFree:        1000 kB\nMemAvailable:   ${availableKiB} kB\n`);
    const r = spawnSync("sh", ["-c", `${preConfigure.replaceAll("/proc/meminfo", meminfo)}\necho "MAX_JOBS=$MAX_JOBS"`], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, NIX_BUILD_CORES: String(cores) },
    });
    assert.is(r.status, 0, r.stderr);
    return Number(/^MAX_JOBS=(\d+)$/m.exec(r.stdout)![1]);
  };
  const GiB = 1024 * 1024;
  assert.is(maxJobs(4096, 40 * GiB), 4, "40 GiB available: 4 jobs of 9 GiB");
  assert.is(maxJobs(4096, 5 * GiB), 1, "less than 9 GiB: still one job");
  assert.is(maxJobs(2, 100 * GiB), 2, "memory to spare: the cores decide");

  // bitsandbytes (a pin that carries it: 2c423e0's version is unknown, so the stand-in is told one and the variant too).
  const { dir: d2, variants: v2 } = await generated(PIN_2_11, "2.11.0", "12.9", ["86", "90"]);
  for (const sm of ["86", "90"]) {
    const bnb = v2.find((v) => v.package === "bitsandbytes" && v.sm === sm)!;
    const flags = nixEvalJson<string[]>(`${variantExpr(d2, bnb.name, standIn(PIN_2_11))}.cmakeFlags`);
    assert.equal(flags, ["-DCOMPUTE_BACKEND:STRING=cuda", `-DCOMPUTE_CAPABILITY=${sm}`], bnb.name);
  }
  const own = nixEvalJson<string[]>(`(${standIn(PIN_2_11)} { config = { allowUnfree = true; cudaSupport = true; }; }).python313Packages.bitsandbytes.cmakeFlags`);
  assert.ok(!own.some((f) => f.includes("COMPUTE_CAPABILITY")), "nixpkgs' own bitsandbytes names no architecture (upstream then builds them all)");
  // A file that already passes the list (nixpkgs' 0.45.5: lib.cmakeFeature "COMPUTE_CAPABILITY" flags.cmakeCudaArchitecturesString) keeps only ours.
  const replaced = nixEvalJson<string[]>(
    `(import ${nixPath(join(ROOT, "pkgs/variant-attrs.nix"))} { variant = { name = "x"; version = "0.45.5"; cuda = "12.8"; cudaCapabilities = [ "9.0" ]; cflags = [ ]; system = "x86_64-linux"; description = "d"; packageBuild = { env = { }; cmakeFlags = [ "-DCOMPUTE_CAPABILITY=90" ]; gibPerCompileJob = null; }; }; } { version = "0.45.5"; cmakeFlags = [ "-DCOMPUTE_BACKEND:STRING=cuda" "-DCOMPUTE_CAPABILITY:STRING=75;80;86;89;90" ]; }).cmakeFlags`,
  );
  assert.equal(replaced, ["-DCOMPUTE_BACKEND:STRING=cuda", "-DCOMPUTE_CAPABILITY=90"]);
  // The 0.46-era file (no cudaSupport formal: `inherit (torch) cudaPackages cudaSupport`) takes the variant's torch too.
  const era046 = nixEvalJson<{ torch: string; flags: string[] }>(
    `let pkgs = ${standIn(PIN_2_11, 'bitsandbytes = "0.47.0"; bitsandbytesEra = "0.46";')} { config = { allowUnfree = true; cudaSupport = true; }; overlays = [ (f: p: { cudaPackages = f.cudaPackages_12_9; }) ]; };
         v = (import ${nixPath(join(d2, "pkgs/variants.nix"))})."${v2.find((v) => v.package === "bitsandbytes" && v.sm === "90")!.name}" // { version = "0.47.0"; };
         t = pkgs.python313Packages.torch;
         b = import ${nixPath(join(ROOT, "pkgs/package-on-torch.nix"))} { variant = v; torch = t; inherit pkgs; base = pkgs.python313Packages.bitsandbytes; pythonPackages = pkgs.python313Packages; };
       in { torch = b.passthru.standIn.torchDrvPath; flags = b.cmakeFlags; }`,
  );
  assert.equal(era046.flags, ["-DCOMPUTE_BACKEND:STRING=cuda", "-DCOMPUTE_CAPABILITY=90"]);
});

test("nixpkgs' pythonMetadataCheckHook (stand-in at 2c423e0): variants keep the distribution's pname and build; nixpkgs' own flash-attn (pname flash-attention) and a pname set to the variant name fail, as they do not before the hook", async () => {
  const { dir, variants } = await generated(PIN_2_12, "2.12.0", "12.9", ["90"]);
  const nixpkgs = standIn(PIN_2_12);
  const build = (expr: string) => {
    try {
      runNix("nix-build", ["--no-out-link", ...STAND_IN_BUILDER_FEATURES, "-E", expr]);
      return "built";
    } catch (e) {
      return (e as Error).message;
    }
  };
  for (const name of ["flash-attn", "torchaudio", "xformers"].map((k) => variants.find((v) => v.package === k && v.cuda !== null)!.name))
    assert.is(build(variantExpr(dir, name, nixpkgs)), "built", name);
  const own = `(${nixpkgs} { config = { allowUnfree = true; cudaSupport = true; }; }).python313Packages.flash-attn`;
  assert.match(build(own), /pythonMetadataCheckPhase[\s\S]*No package metadata was found for flash-attention/);
  const ta = variants.find((v) => v.package === "torchaudio" && v.cuda !== null)!;
  const renamed = (n: string) => `(${variantExpr(dir, ta.name, n)}).overrideAttrs (old: { pname = "${ta.name}"; })`;
  assert.match(build(renamed(nixpkgs)), new RegExp(`No package metadata was found for ${ta.name}`));
  // Before the hook (549bd84) the same rename builds: the stand-in checks only where nixpkgs does.
  const { dir: d2, variants: v2 } = await generated(PIN_2_11, "2.11.0", "12.9", ["90"]);
  const ta2 = v2.find((v) => v.package === "torchaudio" && v.cuda !== null)!;
  assert.is(build(`(${variantExpr(d2, ta2.name, standIn(PIN_2_11))}).overrideAttrs (old: { pname = "${ta2.name}"; })`), "built");
});

test("the build driver gives a flash-attn build at most one core per 9 GiB of its share of memory; other packages keep coresPerBuild", () => {
  const m = { cpus: 64, memBytes: 128 * 2 ** 30 };
  const rule = jobsRule(m);
  assert.is(rule.coresPerBuild, 8, rule.explanation);
  assert.is(coresForPackage(rule, m, undefined).cores, 8);
  const fa = coresForPackage(rule, m, onTorch(catalog, "flash-attn")!.gibPerCompileJob!.gib);
  assert.is(fa.cores, Math.floor(128 / rule.jobs / 9));
  assert.match(fa.why!, /GiB per compile job/);
  const cmd = buildCmd({ name: "flash-attn-x", file: "/f.nix" }, { backend: "nix", root: "/r", outDir: "/o", cores: 8, coresByName: new Map([["flash-attn-x", fa.cores]]) });
  assert.equal(cmd.argv.slice(cmd.argv.indexOf("--cores"), cmd.argv.indexOf("--cores") + 2), ["--cores", String(fa.cores)]);
});

/** detect's reading of a recorded host (tests/fixtures/hosts). */
const hostArgs = (h: string) => {
  const d = join(ROOT, "tests/fixtures/hosts", h);
  return ["--cpuinfo", join(d, "cpuinfo"), "--nvidia-smi", join(d, "nvidia-smi.txt"), "--machine", h === "dgx-spark" || h === "graviton2-t4g" ? "aarch64" : "x86_64"];
};

test("verify on stand-in environments of modelled builds: a correct build of each extension passes; nixpkgs' unpinned targets, extra PTX or missing PTX fail, naming the library", async () => {
  const dir = tempDir("vm-ext-verify-");
  const m = writeMatrix(dir, { ...wide, cuda: ["12.8"] });
  const variants = projectFromMatrix({ ...wide, cuda: ["12.8"] }).variants;
  const env = { PATH: `${STAND_IN_CUOBJDUMP_DIR}:${process.env.PATH}` };
  const standInFor = (v: Variant, name: string, libs = modelLibraries(v)) =>
    writeStandInEnv(join(dir, name), {
      torchVersion: v.torchVersion,
      torchaudioVersion: v.package === "torch-env" ? v.onTorchVersions.torchaudio! : null,
      torchvisionVersion: v.package === "torch-env" ? v.onTorchVersions.torchvision! : null,
      extensions: Object.fromEntries(EXTENSIONS.filter((e) => v.package === e || v.dependsOn.some((d) => d.startsWith(`${e}-`))).map((e) => [e, v.onTorchVersions[e]!])),
      cuda: v.cuda,
      cudaCapabilities: v.cudaCapabilities,
      python: v.python,
      machine: v.system.split("-")[0]!,
    }, libs, { cuobjdump: "in-process" });
  // verify in this process, the real probe.py in the stand-in environment's Python, the stand-in cuobjdump answering
  // there (its runs as processes: tests/device-code.test.ts and tests/verify-fast.test.ts).
  const verify = (v: Variant, e: string, host: string) => runMain(["verify", v.name, "--python", e, "--no-gpu", "--matrix", m, ...hostArgs(host)], { env });
  const expected: Record<string, RegExp> = {
    "flash-attn": /✓ \S*flash_attn_2_cuda\.cpython-313-x86_64-linux-gnu\.so: flash-attn's kernels: SASS sm_90, no PTX/,
    xformers: /✓ \S*xformers\/_C\.so: xformers's kernels: SASS sm_90, no PTX/,
    bitsandbytes: /✓ \S*bitsandbytes\/libbitsandbytes_cuda128\.so: bitsandbytes's kernels: SASS sm_90, PTX compute_90/,
  };
  for (const ext of EXTENSIONS) {
    const v = variants.find((x) => x.name === `${ext}-python313-cuda12_8-sm90-avx2`)!;
    const r = await verify(v, standInFor(v, ext), "spr-h100");
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, expected[ext]!);
    assert.match(r.stdout, new RegExp(`✓ ${ext} version: ${v.version.replace(/\./g, "\\.")}`));
    assert.match(r.stdout, new RegExp(`– ${onTorch(catalog, ext)!.gpuChecks[0]!.label.replace(/[().]/g, "\\$&")}: expected runs`));
  }
  // SM121 on CUDA 12.8: flash-attn's SM120 code (binary compatibility), the name promising sm121.
  const spark = variants.find((x) => x.name === "flash-attn-python313-cuda12_8-sm121-armv9")!;
  const libs = modelLibraries(spark);
  const faLib = Object.keys(libs).find((k) => k.startsWith("flash_attn_2_cuda"))!;
  assert.equal(libs[faLib]!.map((b) => b.arch), ["sm_120"]);
  const ok = await verify(spark, standInFor(spark, "spark", libs), "dgx-spark");
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  // The environment: every package of the variant, each with its own promise.
  const envV = variants.find((x) => x.name === "torch-env-python313-cuda12_8-sm90-avx2")!;
  const envR = await verify(envV, standInFor(envV, "env"), "spr-h100");
  assert.is(envR.status, 0, envR.stdout + envR.stderr);
  for (const re of Object.values(expected)) assert.match(envR.stdout, re);

  // Wrong builds. flash-attn as nixpkgs' 2.8.2 file builds it (TORCH_CUDA_ARCH_LIST only: setup.py's default list).
  const fa = variants.find((x) => x.name === "flash-attn-python313-cuda12_8-sm90-avx2")!;
  const faLibs = modelLibraries(fa);
  faLibs[EXTENSION_LIBS["flash-attn"]!] = ["sm_80", "sm_90", "sm_100", "sm_120"].map((arch) => ({ kind: "elf" as const, arch, names: [...NAMES["flash-attn"]] }));
  const badFa = await verify(fa, standInFor(fa, "fa-default", faLibs), "spr-h100");
  assert.is(badFa.status, 1, badFa.stdout);
  assert.match(badFa.stdout, /✗ \S*flash_attn_2_cuda\S*: flash-attn's kernels: expected SASS sm_90, no PTX .*beyond the promise: sm_80 sm_100 sm_120/);
  // xformers with a forward-compatible PTX (a `+PTX` arch list).
  const xf = variants.find((x) => x.name === "xformers-python313-cuda12_8-sm90-avx2")!;
  const xfLibs = modelLibraries(xf);
  xfLibs["xformers/_C.so"]!.push({ kind: "ptx", arch: "compute_90", names: [...NAMES.xformers] });
  const badXf = await verify(xf, standInFor(xf, "xf-ptx", xfLibs), "spr-h100");
  assert.is(badXf.status, 1, badXf.stdout);
  assert.match(badXf.stdout, /✗ \S*xformers\/_C\.so: xformers's kernels: expected SASS sm_90, no PTX .*PTX compute_90/);
  // bitsandbytes without COMPUTE_CAPABILITY: every architecture of the toolkit (what nixpkgs' own file builds).
  const bnb = variants.find((x) => x.name === "bitsandbytes-python313-cuda12_8-sm90-avx2")!;
  const all = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"];
  const bnbLibs = modelLibraries(bnb);
  bnbLibs["bitsandbytes/libbitsandbytes_cuda128.so"] = [
    ...all.map((arch) => ({ kind: "elf" as const, arch, names: [...NAMES.bitsandbytes] })),
    { kind: "ptx" as const, arch: "compute_120", names: [...NAMES.bitsandbytes] },
  ];
  const badBnb = await verify(bnb, standInFor(bnb, "bnb-all", bnbLibs), "spr-h100");
  assert.is(badBnb.status, 1, badBnb.stdout);
  // verify wraps its lines to the terminal (COLUMNS): a finding longer than that continues on indented lines.
  assert.match(badBnb.stdout.replace(/\n\s+/g, " "), /✗ \S*libbitsandbytes_cuda128\.so: bitsandbytes's kernels: expected SASS sm_90, PTX compute_90 .*beyond the promise: sm_75 sm_80 sm_86 sm_89 sm_100 sm_120/);
  // ... and one whose last capability lost its PTX.
  const noPtx = modelLibraries(bnb);
  noPtx["bitsandbytes/libbitsandbytes_cuda128.so"] = noPtx["bitsandbytes/libbitsandbytes_cuda128.so"]!.filter((b) => b.kind === "elf");
  assert.is((await verify(bnb, standInFor(bnb, "bnb-noptx", noPtx), "spr-h100")).status, 1);
});

test("replaying the H100 recordings: the attention checks accept PyTorch's fused kernels and refuse a wrong one; a probe without the extensions fails their import promise, never passes it", () => {
  const dir = join(ROOT, "tests/fixtures/probes/h100-extension-criteria");
  const r = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as Record<string, Record<string, { ok: boolean; error: string | null }> | string>;
  assert.is(r.capability, "9.0");
  for (const key of ["flashAttnFunc", "memoryEfficientAttention"]) {
    const cases = r[key] as Record<string, { ok: boolean; error: string | null }>;
    for (const [what, c] of Object.entries(cases)) {
      assert.is(c.error, null, `${key} ${what}`);
      assert.is(c.ok, what.startsWith("correct"), `${key} ${what}`);
    }
    // The key is the one the catalog's gpuChecks name.
    assert.ok(packagesOnTorch.some((p) => p.gpuChecks.some((g) => g.key === key)), key);
  }
  const probe = JSON.parse(readFileSync(join(dir, "probe-no-extensions.json"), "utf8")) as Probe;
  const v = projectFromMatrix({ ...wide, releases: [{ torch: "2.11.0", nixpkgs: PIN_2_11 }], cuda: ["13.0"], gpus: ["90"], isas: ["avx2"], cpuOnly: false }).variants.find((x) => x.package === "flash-attn")!;
  const c = checkPromise(v, probe, FACTS).find((x) => x.promise === "flash-attn imports")!;
  assert.is(c.ok, false);
  assert.match(c.found, /ModuleNotFoundError: No module named 'flash_attn'/);
});

test("detect --package flash-attn: the variant for an H100; for a T4G the dropped reason, not advice to add a GPU the matrix has", async () => {
  const dir = tempDir("vm-ext-detect-");
  const m = writeMatrix(dir, wide);
  const h100 = await runMain(["detect", "--package", "flash-attn", "--matrix", m, ...hostArgs("spr-h100")]);
  assert.is(h100.status, 0, h100.stdout + h100.stderr);
  assert.match(h100.stdout, /Recommended flash-attn for GPU 0,1,2,3,4,5,6,7 \(NVIDIA H100 80GB HBM3, sm90\): flash-attn-python313-cuda12_8-sm90-avx2/);
  const t4g = await runMain(["detect", "--package", "flash-attn", "--matrix", m, ...hostArgs("graviton2-t4g")]);
  assert.is(t4g.status, 1, t4g.stdout + t4g.stderr);
  assert.match(t4g.stdout, /dropped: flash-attn 2\.8\.2 compiles device code only for SM80, SM90, SM100, SM120/);
  assert.not.match(t4g.stdout, /add "75" to gpus/);
});
test.run();
