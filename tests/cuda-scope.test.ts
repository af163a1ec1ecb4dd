// The CUDA capability scope. By default ("torch") only torch and the packages built on it get the
// variant's capabilities and the rest of the CUDA set keeps nixpkgs' defaults (binary-cache hits); the catalog forces
// the package-set scope where those defaults cannot serve a variant (Jetson capabilities, capabilities missing from
// nixpkgs' default list). Checked on the generator's output, against the stand-in (what crosses into nixpkgs), and in
// the cost model.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { catalog } from "../generator/catalog/index.ts";
import { nixpkgsCudaFacts } from "../generator/catalog/lib/cuda.ts";
import { jetsonCapabilities } from "../generator/catalog/lib/cuda.ts";
import { cudaScopeFor, nixpkgsInstanceKey } from "../generator/matrix/expand.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import defaultMatrix from "../matrix.ts";
import { buildCost, fit } from "../generator/fleet/cost.ts";
import { DEFAULT_CUDA_CLOSURE_SECONDS } from "../generator/model/plan.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { runCli } from "./helpers/cli.ts";
import { importVariant, nixEvalJson, standInNixpkgs } from "./helpers/nix.ts";

const def = projectFromMatrix(defaultMatrix);
const cuda = (v: string) => catalog.cuda.find((c) => c.version === v)!;

test("the rule is data: Jetson capabilities and ones outside nixpkgs' default list force the package-set scope", () => {
  assert.equal(cudaScopeFor(["9.0"], nixpkgsCudaFacts(catalog, null, cuda("12.8")), "torch"), { packageSet: false, reason: null });
  assert.equal(cudaScopeFor(["9.0"], nixpkgsCudaFacts(catalog, null, cuda("12.8")), "packageSet"), { packageSet: true, reason: null });
  assert.match(cudaScopeFor(["11.0"], nixpkgsCudaFacts(catalog, null, cuda("13.0")), "torch").reason!, /Jetson capability 11\.0/);
  assert.match(cudaScopeFor(["7.0"], nixpkgsCudaFacts(catalog, null, cuda("12.8")), "torch").reason!, /7\.0 is not in nixpkgs' default cudaCapabilities for CUDA 12\.8/);
  // 12.1 (GB10) is a default only from CUDA 12.9 on (nixpkgs: min 12.9); on 12.8 the variant compiles 12.0 anyway.
  assert.ok(cuda("12.9").nixpkgsDefaultCapabilities.includes("12.1") && !cuda("12.8").nixpkgsDefaultCapabilities.includes("12.1"));
  for (const c of catalog.cuda) {
    for (const j of jetsonCapabilities(catalog.nixpkgsCapabilities)) assert.not.ok(c.nixpkgsDefaultCapabilities.includes(j), `${c.version} ${j}`);
    for (const d of c.nixpkgsDefaultCapabilities) assert.ok(c.capabilities.includes(d), `${c.version}: default ${d} is one nvcc compiles`);
  }
});

test("default matrix: only the variants the catalog forces set config.cudaCapabilities; each says why", () => {
  const cudaVs = def.variants.filter((v) => v.cuda !== null);
  const forced = cudaVs.filter((v) => v.cudaCapabilitiesForPackageSet);
  assert.ok(forced.length > 0 && forced.length < cudaVs.length / 10, `${forced.length} forced of ${cudaVs.length}`);
  for (const v of cudaVs) {
    const expect = cudaScopeFor(v.cudaCapabilities, nixpkgsCudaFacts(catalog, null, cuda(v.cuda!)), "torch");
    assert.is(v.cudaCapabilitiesForPackageSet, expect.packageSet, v.name);
    assert.is(v.notes.some((n) => n.startsWith("CUDA package-set scope")), expect.packageSet, `${v.name}: note`);
  }
  assert.ok(forced.every((v) => v.sm === "110"), forced.map((v) => v.name).join(" "));
  const r = runCli(["explain", forced[0]!.name]);
  assert.match(r.stdout, /whole CUDA package set: config\.cudaCapabilities/);
  assert.match(r.stdout, /Jetson capability 11\.0/);
});

test("against the stand-in: torch scope imports nixpkgs without cudaCapabilities, and torch and torchaudio still compile exactly the variant's list", () => {
  const ta = def.variants.find((v) => v.name === "torchaudio-python313-cuda12_9-sm121-armv9")!;
  const pt = def.variants.find((v) => v.name === ta.dependsOn[0])!;
  const n = standInNixpkgs(ta.nixpkgs);
  const r = nixEvalJson<{ config: Record<string, unknown>; torchArch: string; taArch: string; codecArch: string | null }>(`
    let ta = ${importVariant(ta.file, n)}; pt = ${importVariant(pt.file, n)}; in {
      config = pt.standIn.importedWith.config;
      torchArch = builtins.head (builtins.match ".*TORCH_CUDA_ARCH_LIST=\\"([^\\"]*)\\".*" pt.preConfigure);
      taArch = ta.TORCH_CUDA_ARCH_LIST;
      codecArch = ta.pythonPackages.torchcodec.TORCH_CUDA_ARCH_LIST or null;
    }`);
  assert.not.ok("cudaCapabilities" in r.config);
  assert.not.ok("cudaForwardCompat" in r.config);
  assert.is(r.torchArch, "12.1");
  assert.is(r.taArch, "12.1");
  assert.is(r.codecArch, "12.1");
});

test("instances and cost: fewer nixpkgs instances under the torch scope; one CUDA closure per forced instance in the cost", () => {
  const count = (m: ReturnType<typeof widestMatrix>) => new Set(projectFromMatrix(m).variants.map(nixpkgsInstanceKey)).size;
  const w = widestMatrix();
  const wTorch = count(w);
  const wSet = count({ ...w, policy: { cudaCapabilitiesScope: "packageSet" } });
  assert.ok(wTorch < wSet / 2, `widest: ${wTorch} instances (torch) vs ${wSet} (packageSet)`);
  const dTorch = new Set(def.variants.map(nixpkgsInstanceKey)).size;
  assert.ok(dTorch <= 12, `default matrix: ${dTorch} instances`);

  const sm110 = def.variants.filter((v) => v.sm === "110" && v.isa === "armv9");
  const sm90 = def.variants.filter((v) => v.sm === "90" && v.isa === "avx2" && v.cuda === "13.0");
  const none = fit([]);
  const c110 = buildCost(sm110, none, 1, catalog);
  const c90 = buildCost(sm90, none, 1, catalog);
  assert.is(c110.cudaClosures, 1);
  assert.is(c90.cudaClosures, 0);
  assert.is(c90.sharedCudaSets, 1);
  // Each modelled extra build is added once: Thor's CUDA closure (and triton with it); SM90 on CUDA 13.0 at a pin whose
  // default set is 12.9: the libraries torch links from that set (NCCL, NVSHMEM, MAGMA) and triton (model/cache-model.ts).
  const extra = (c: typeof c110) => c.rebuilt.reduce((a, b) => a + b.seconds!, 0) / 3600;
  assert.equal(c110.rebuilt.map((b) => b.what).sort(), ["cuda-closure", "triton"]);
  assert.equal(c90.rebuilt.map((b) => b.what).sort(), ["magma", "nccl", "nvshmem", "triton"]);
  assert.ok(c110.rebuilt.find((b) => b.what === "cuda-closure")!.seconds === DEFAULT_CUDA_CLOSURE_SECONDS.seconds);
  assert.ok(Math.abs(c110.hours - extra(c110) - (c90.hours - extra(c90))) < 1e-9, "the modelled builds' hours are added");
  assert.ok(c110.makespanHours >= c110.hours - 1e-9, "one builder: the closure is on the critical path");
  assert.match(DEFAULT_CUDA_CLOSURE_SECONDS.source, /555389/);
});

test.run();
