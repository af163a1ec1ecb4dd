// The promise meets real builds. Each package built from source on the H100 host for exactly capability
// 9.0 and for a wrong list (tests/fixtures/probes/h100-real-builds, see its README), replayed through the comparison
// that `verify` and the Nix static check share: a correct build passes every line of its own package, a wrong one
// fails naming the extra capability or PTX. Also: probe.py's GPU checks run in a child process (a package that ends
// the process from C is that package's failed check), through real Python processes with stand-in modules.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { checkPromise, type PromiseCheck, type Probe, type PromiseOf } from "../generator/verify/compare.ts";
import { onTorch } from "../generator/catalog/lib/packages.ts";
import { archEntryAccepted } from "../generator/catalog/lib/torch.ts";
import { catalog } from "../generator/catalog/index.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";

/** The catalog's facts, as `verify` and pkgs/verify-facts.json give them to the comparison. */
const FACTS = catalogCheckerFacts(catalog);

const REC = join(ROOT, "tests/fixtures/probes/h100-real-builds");
const PIN = "a3116115851d68b8952a2a4221cc25a84e56b532"; // torch 2.11.0, torchvision 0.26.0, xformers 0.0.35, bitsandbytes 0.49.2
const probeOf = (build: string) => JSON.parse(readFileSync(join(REC, build, "probe.json"), "utf8")) as Probe;

/** The promise of `{package}-python312-cuda13_0-sm90-avx512` at the version the recording built. */
function variantOf(pkg: string, version: string): PromiseOf {
  return {
    name: `${pkg}-python312-cuda13_0-sm90-avx512`,
    package: pkg,
    version,
    torchVersion: "2.11.0",
    python: "3.12",
    cuda: "13.0",
    sm: "90",
    isa: "avx512",
    system: "x86_64-linux",
    cudaCapabilities: ["9.0"],
    nixpkgs: PIN,
  };
}

/** The lines about a package itself: its import, version, libtorch, GPU checks, and its libraries' device code. */
function ownLines(checks: PromiseCheck[], pkg: string, probe: Probe): PromiseCheck[] {
  const label = onTorch(catalog, pkg)!.label;
  const libs = Object.keys(probe.cuobjdump!.libs).map((l) => l.split("/").slice(-3).join("/"));
  const gpuLabels = onTorch(catalog, pkg)!.gpuChecks.map((c) => c.label);
  return checks.filter((c) => c.promise.startsWith(`${label} `) || gpuLabels.includes(c.promise) || libs.some((l) => c.promise.startsWith(`${l}: `)));
}

const BUILDS = {
  bitsandbytes: { version: "0.49.2", correct: "bnb-90", wrong: { "bnb-wrong-90-80": /beyond the promise: sm_80/ } },
  torchvision: { version: "0.26.0", correct: "tv-90", wrong: { "tv-wrong-80-90": /beyond the promise: sm_80/, "tv-wrong-90ptx": /PTX compute_90.*beyond the promise: compute_90/ } },
  torchaudio: { version: "2.11.0", correct: "ta-90", wrong: { "ta-wrong-80-90": /beyond the promise: sm_80/, "ta-wrong-90ptx": /PTX compute_90.*beyond the promise: compute_90/ } },
  xformers: { version: "0.0.35", correct: "xf-90", wrong: { "xf-wrong-80-90-selective": /beyond the promise: sm_80/ } },
} as const;

for (const [pkg, b] of Object.entries(BUILDS)) {
  test(`${pkg}: the real 9.0 build passes every line of its own package; each wrong build fails naming what is extra`, () => {
    const v = variantOf(pkg, b.version);
    const probe = probeOf(b.correct);
    const own = ownLines(checkPromise(v, probe, FACTS), pkg, probe);
    const kernels = own.filter((c) => c.promise.endsWith(`: ${onTorch(catalog, pkg)!.label}'s kernels`));
    assert.is(kernels.length, 1, `one kernels line: ${own.map((c) => c.promise).join(" | ")}`);
    assert.ok(own.length >= 4, `imports/version/libtorch/GPU/kernels lines: ${own.map((c) => c.promise).join(" | ")}`);
    for (const c of own) assert.is(c.ok, true, `${b.correct}: ${c.promise}: expected ${c.expected}, found ${c.found}`);
    for (const [wrong, names] of Object.entries(b.wrong)) {
      const w = probeOf(wrong);
      const line = ownLines(checkPromise(v, w, FACTS), pkg, w).find((c) => c.promise.endsWith(`: ${onTorch(catalog, pkg)!.label}'s kernels`))!;
      assert.is(line.ok, false, `${wrong} must fail`);
      assert.match(line.found, names, `${wrong}: ${line.found}`);
    }
  });
}

test("bitsandbytes: its PTX is read in the relocatable fatbin (cuobjdump -all); without -all the real build would fail", () => {
  const v = variantOf("bitsandbytes", "0.49.2");
  const probe = probeOf("bnb-90");
  const lib = Object.keys(probe.cuobjdump!.libs).find((l) => l.endsWith("libbitsandbytes_cuda130.so"))!;
  assert.equal(probe.cuobjdump!.libs[lib]!.ptx, [], "the device-linked image holds no PTX");
  assert.equal(probe.cuobjdump!.libs[lib]!.all!.ptx, ["compute_90"], "-all finds it");
  const line = (p: Probe) => checkPromise(v, p, FACTS).find((c) => c.promise.endsWith("bitsandbytes's kernels"))!;
  assert.match(line(probe).expected, /PTX compute_90 in the relocatable fatbin/);
  assert.match(line(probe).found, /SASS sm_90, PTX compute_90 in the relocatable fatbin/);
  const older = structuredClone(probe);
  delete older.cuobjdump!.libs[lib]!.all;
  assert.is(line(older).ok, false, "a probe that reads the image only misses the PTX");
  assert.match(line(older).found, /missing: PTX compute_90 in the relocatable fatbin/);
  // The wrong list "90;80": the CMakeLists sorts it and keeps PTX for the highest (9.0), not the last given (8.0).
  const w = probeOf("bnb-wrong-90-80");
  const wl = Object.values(w.cuobjdump!.libs)[0]!;
  assert.equal(wl.all!.ptx, ["compute_90"]);
  assert.equal(wl.elf, ["sm_80", "sm_90"]);
});

test("torchvision/torchaudio proxies: an 8.0-only build's kernel is the one dispatched (no kernel image on the 9.0 card)", () => {
  const tv = probeOf("tv-only-80").packages!.torchvision!;
  assert.is(tv.gpu.nms!.ok, false);
  assert.match(tv.gpu.nms!.error!, /no kernel image is available/);
  assert.is(tv.gpu.roiAlign!.ok, true, "roi_align is PyPI's kernel, not the proxy's (README)");
  const ta = probeOf("ta-only-80").packages!.torchaudio!;
  assert.is(ta.gpu.forcedAlign!.ok, false);
  assert.match(ta.gpu.forcedAlign!.error!, /no kernel image is available/);
  const v = variantOf("torchvision", "0.26.0");
  const c = checkPromise(v, probeOf("tv-only-80"), FACTS).find((x) => x.promise.endsWith("torchvision's kernels"))!;
  assert.is(c.ok, false);
  assert.match(c.found, /missing: sm_90/);
});

test("a GPU check whose process exits from C is that package's failed check (bitsandbytes, CUDA_DISABLE_PTX_JIT=1)", () => {
  const p = probeOf("bnb-80-nojit");
  const r = p.packages!.bitsandbytes!;
  assert.is(r.ok, true, "the probe itself ran to its end and printed its JSON");
  assert.is(r.gpu.blockwise8bit!.ok, false);
  assert.match(r.gpu.blockwise8bit!.error!, /exited with status 1 during the check.*PTX JIT compilation was disabled/);
  const c = checkPromise(variantOf("bitsandbytes", "0.49.2"), p, FACTS).find((x) => x.promise === onTorch(catalog, "bitsandbytes")!.gpuChecks[0]!.label)!;
  assert.is(c.ok, false);
  // With JIT allowed the same sm_80 build ran on the 9.0 card through its relocatable PTX.
  assert.is(probeOf("bnb-80").packages!.bitsandbytes!.gpu.blockwise8bit!.ok, true);
});

test("flash-attn subset: FLASH_ATTN_CUDA_ARCHS=90 builds sm_90 only; 80;90 adds sm_80; an unrecognised 86 falls back to TORCH_CUDA_ARCH_LIST", () => {
  const v = variantOf("flash-attn", "2.8.3");
  const line = (b: string) => checkPromise(v, probeOf(b), FACTS).find((c) => c.promise.endsWith("flash-attn's kernels"))!;
  assert.is(line("fa-90").ok, true, line("fa-90").found);
  assert.is(line("fa-wrong-80-90").ok, false);
  assert.match(line("fa-wrong-80-90").found, /beyond the promise: sm_80/);
  const fb = Object.values(probeOf("fa-fallback-86").cuobjdump!.libs)[0]!;
  assert.equal(fb.elf, ["sm_86"]);
});

test("torch 2.11's cpp_extension: the accepted TORCH_CUDA_ARCH_LIST entries as read on the H100", () => {
  const rec = JSON.parse(readFileSync(join(REC, "torch-arches.json"), "utf8")) as { accepted: Record<string, string[]>; refused: Record<string, string> };
  for (const e of Object.keys(rec.accepted)) assert.is(archEntryAccepted(catalog, "2.11.0", e), true, e);
  for (const [e, why] of Object.entries(rec.refused)) {
    assert.is(archEntryAccepted(catalog, "2.11.0", e), false, e);
    assert.match(why, /ValueError: Unknown CUDA arch/);
  }
  assert.is(archEntryAccepted(catalog, "2.10.0", "10.1"), null, "a release whose list was not read: unknown");
});

test("verify --probe replays the real bitsandbytes build: its kernels line passes", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, {
    releases: [{ torch: "2.11.0", nixpkgs: PIN }],
    python: ["3.12"],
    cuda: ["13.0"],
    gpus: ["90"],
    isas: ["avx512"],
    cpuOnly: false,
    packages: ["pytorch", "bitsandbytes"],
  });
  const host = ["--machine", "x86_64", "--cpuinfo", join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/cpuinfo"), "--nvidia-smi", join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/nvidia-smi.txt")];
  const r = await runMain(["verify", "bitsandbytes-python312-cuda13_0-sm90-avx512", "--json", "--probe", join(REC, "bnb-90/probe.json"), ...host, "--matrix", m]);
  assert.ok(r.stdout.startsWith("{"), r.stderr);
  const rep = JSON.parse(r.stdout) as { checks: PromiseCheck[] };
  const k = rep.checks.find((c) => c.promise.endsWith("bitsandbytes's kernels"))!;
  assert.is(k.ok, true, `${k.expected} / ${k.found}`);
  assert.is(rep.checks.find((c) => c.promise === "bitsandbytes version")!.ok, true);
  // PyPI torch's own promise (multi-arch wheel) is not this build's: the run fails on torch's lines, not on bitsandbytes'.
  assert.is(r.status, 1);
});

/** Run probe.py's run_check_in_child over stand-in torch and bitsandbytes modules whose check ends the process. */
function childCheck(body: string): { ok: boolean; error: string | null } {
  const dir = tempDir("vm-probe-child-");
  mkdirSync(join(dir, "bitsandbytes"));
  writeFileSync(join(dir, "torch.py"), "# stand-in torch: the check under test never reaches it\n");
  writeFileSync(join(dir, "bitsandbytes", "__init__.py"), "");
  writeFileSync(join(dir, "bitsandbytes", "functional.py"), body);
  const r = spawnSync(
    "python3",
    ["-c", "import json, probe; print(json.dumps(probe.run_check_in_child('bitsandbytes', 'blockwise8bit')))"],
    { env: { ...process.env, PYTHONPATH: `${dir}:${join(ROOT, "generator/verify")}` }, encoding: "utf8" },
  );
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { ok: boolean; error: string | null };
}

test("probe.py: a check that exits from C, or dies on a signal, is a failed check with the status and stderr", () => {
  const exit1 = childCheck('import os, sys\nsys.stderr.write("Error PTX JIT compilation was disabled at line 62 in file csrc/ops.cu\\n")\nsys.stderr.flush()\nos._exit(1)\n');
  assert.is(exit1.ok, false);
  assert.match(exit1.error!, /exited with status 1 during the check, printing no result: Error PTX JIT compilation was disabled/);
  const segv = childCheck("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n");
  assert.is(segv.ok, false);
  assert.match(segv.error!, /killed by signal 11/);
  const raises = childCheck("raise RuntimeError('CUDA error: no kernel image is available for execution on the device')\n");
  assert.equal(raises, { ok: false, error: "RuntimeError: CUDA error: no kernel image is available for execution on the device" });
});

test.run();
