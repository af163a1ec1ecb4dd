/**
 * Facts corrected against their primary sources, where a fact drives behaviour: the Nix floor's reason (lib/minver.nix
 * history), the store floor's kind, torch 2.9's refused arch entries, and the glibc 2.42 / CUDA header window of a
 * nixpkgs revision. Each test fails on the claim it replaced.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { NIX_MIN, NIXOS_DRIVER_LIB, STORE_FREE_FLOOR } from "../generator/catalog/machines.ts";
import { nixpkgs } from "../generator/catalog/torch.ts";
import { compareVersions } from "../generator/versions.ts";
import { archEntryAccepted } from "../generator/catalog/lib/torch.ts";
import { glibcCudaHeaderNote, nixpkgsCudaFacts } from "../generator/catalog/lib/cuda.ts";
import { extraFact } from "../generator/catalog/lib/packages.ts";
import { gpus } from "../generator/catalog/gpus.ts";
import { jetsonCapabilities, nixpkgsAllows, nixpkgsCapability, nixpkgsDefaultCapabilitiesFor } from "../generator/catalog/lib/cuda.ts";
import { cuda } from "../generator/catalog/cuda.ts";
import { catalog } from "../generator/catalog/index.ts";
import { cudaScopeFor, nixpkgsInstanceKey, serveGpu } from "../generator/matrix/expand.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";
import { CUDA_CACHE } from "../generator/catalog/binary-cache.ts";
import { cudaCacheSubstituter, cudaCachesFor, substituterLines } from "../generator/catalog/lib/binary-cache.ts";
import { modelCacheMisses } from "../generator/model/cache-model.ts";
import { torchNewerThanCatalog } from "../generator/pin/facts.ts";

test("Nix 2.18: lib/minver.nix said 2.3.17 before NixOS/nixpkgs#428076 (August 2025); every pin is later, by its torch", () => {
  assert.is(NIX_MIN.version, "2.18");
  assert.is(NIX_MIN.minverSince.previous, "2.3.17");
  assert.is(NIX_MIN.minverSince.month, "2025-08");
  assert.not.match(NIX_MIN.source, /of 2025 and later/);
  // torch 2.8.0 reached nixpkgs after the minver bump: a pin carrying an older torch could ask for 2.3.17 only.
  for (const p of nixpkgs)
    assert.ok(compareVersions(p.torch, NIX_MIN.minverSince.torchAfter) >= 0, `${p.rev.slice(0, 7)} carries torch ${p.torch}, older than the minver bump`);
  for (const p of nixpkgs) if (p.date !== null) assert.ok(p.date >= `${NIX_MIN.minverSince.month}-01`, p.rev);
});

test("the store floor is a heuristic from a wheel build, not a measured Nix store", () => {
  assert.is(STORE_FREE_FLOOR.kind, "heuristic");
  assert.match(STORE_FREE_FLOOR.source, /^heuristic: /);
  assert.match(STORE_FREE_FLOOR.source, /not a Nix store/);
});

test("libcuda: the runpath comes from pkgs/by-name addDriverRunpath; LD_LIBRARY_PATH is the other way in", () => {
  assert.match(NIXOS_DRIVER_LIB.source, /pkgs\/by-name\/ad\/addDriverRunpath/);
  assert.match(NIXOS_DRIVER_LIB.source, /pkgs\/by-name\/au\/autoAddDriverRunpath/);
  assert.not.match(NIXOS_DRIVER_LIB.source, /pkgs\/development\/cuda-modules/);
  assert.match(NIXOS_DRIVER_LIB.source, /LD_LIBRARY_PATH/);
});

test("deepspeed: jit_load blanks TORCH_CUDA_ARCH_LIST, so the variable matters only for DS_BUILD_OPS; not judged", () => {
  const d = extraFact(catalog, "deepspeed")!;
  assert.is(d.deviceCode, "runtimeJit");
  assert.match(d.promise, /blanks TORCH_CUDA_ARCH_LIST/);
  assert.not.match(d.promise, /or TORCH_CUDA_ARCH_LIST of that process/);
});

test("torch 2.9: pytorch/pytorch#166120 shows 10.1 refused, nothing about 10.1a (unknown, not refused)", () => {
  assert.is(archEntryAccepted(catalog, "2.9.1", "10.1"), false);
  assert.is(archEntryAccepted(catalog, "2.9.1", "10.1+PTX"), false);
  assert.is(archEntryAccepted(catalog, "2.9.1", "10.1a"), null);
  assert.is(archEntryAccepted(catalog, "2.11.0", "10.1a"), false, "2.11's list was read: 10.1a is not in it");
});

test("glibc 2.42 vs CUDA headers: a revision's window, by CUDA version and the fixes it lacks", () => {
  const rev = "0182a361324364ae3f436a63005877674cf45efb";
  // Before glibc 2.42 reached master, and with an unknown date: nothing to say.
  assert.is(glibcCudaHeaderNote(catalog, rev, "2025-12-01", "12.8"), null);
  assert.is(glibcCudaHeaderNote(catalog, rev, null, "12.8"), null);
  // Between glibc 2.42 and the first fix: both CUDA 12 fixes missing.
  const early = glibcCudaHeaderNote(catalog, rev, "2026-01-30", "12.8")!;
  assert.match(early, /not NixOS\/nixpkgs#484031 .*NixOS\/nixpkgs#498678/);
  // 0182a36 (2026-02-17): math_functions.h patched, math_functions.hpp not.
  const pin = glibcCudaHeaderNote(catalog, rev, "2026-02-17", "12.9")!;
  assert.match(pin, /it has NixOS\/nixpkgs#484031/);
  assert.match(pin, /but not NixOS\/nixpkgs#498678/);
  assert.match(pin, /not to the package/);
  // CUDA 13.0 has its own fix (cuda_crt), CUDA 13.2 needs none.
  assert.match(glibcCudaHeaderNote(catalog, rev, "2026-03-30", "13.0")!, /NixOS\/nixpkgs#512796/);
  assert.is(glibcCudaHeaderNote(catalog, rev, "2026-03-30", "12.8"), null, "both CUDA 12 fixes were in by then");
  assert.is(glibcCudaHeaderNote(catalog, rev, "2026-03-30", "13.2"), null);
  assert.is(glibcCudaHeaderNote(catalog, rev, "2026-05-05", "13.0"), null);
  // Every fix is dated on or after glibc's arrival and names its PR.
  for (const f of catalog.glibcCudaHeaders.fixes) {
    assert.ok(f.merged >= catalog.glibcCudaHeaders.since, f.pr);
    assert.match(f.pr, /^NixOS\/nixpkgs#\d+$/);
  }
});

const gpu = (sm: string) => gpus.find((g) => g.sm === sm)!;
const toolkit = (v: string) => cuda.find((c) => c.version === v)!;

test("nixpkgs' capability table as data: Jetson, a/f, min/max CUDA; every catalog GPU has its row; defaults follow nixpkgs' rule", () => {
  assert.equal(jetsonCapabilities(catalog.nixpkgsCapabilities), ["7.2", "8.7", "10.1", "11.0"]);
  assert.is(nixpkgsCapability(catalog.nixpkgsCapabilities, "8.8"), undefined, "commented out in nixpkgs");
  assert.ok(nixpkgsCapability(catalog.nixpkgsCapabilities, "9.0a")!.isArchitectureSpecific && nixpkgsCapability(catalog.nixpkgsCapabilities, "10.3f")!.isFamilySpecific);
  for (const c of catalog.nixpkgsCapabilities.entries) assert.match(c.source, /55d5788/);
  for (const g of gpus) {
    const info = nixpkgsCapability(catalog.nixpkgsCapabilities, g.capability);
    assert.ok(info, `SM${g.sm}: no nixpkgs row`);
    // A Jetson capability is aarch64-only in nixpkgs; the catalog's row must not offer another system.
    if (info.isJetson) assert.equal(g.systems, ["aarch64-linux"], `SM${g.sm}`);
  }
  // The lists an earlier hand evaluation of _cudaCapabilityIsDefault gave (graham33/nixos-dgx-spark#176: nine with 12.9).
  assert.equal(nixpkgsDefaultCapabilitiesFor(catalog.nixpkgsCapabilities, "12.6"), ["7.5", "8.0", "8.6", "8.9", "9.0"]);
  assert.equal(nixpkgsDefaultCapabilitiesFor(catalog.nixpkgsCapabilities, "12.8"), ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]);
  assert.equal(nixpkgsDefaultCapabilitiesFor(catalog.nixpkgsCapabilities, "12.9"), ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]);
  assert.equal(nixpkgsDefaultCapabilitiesFor(catalog.nixpkgsCapabilities, "13.0"), ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]);
  for (const t of cuda) assert.equal(t.nixpkgsDefaultCapabilities, nixpkgsDefaultCapabilitiesFor(catalog.nixpkgsCapabilities, t.version), t.version);
  // max is inclusive: Thor's 10.1 is allowed with CUDA 12.9 (its last) and not 13.0.
  assert.ok(nixpkgsAllows(catalog.nixpkgsCapabilities, "10.1", "12.9") && !nixpkgsAllows(catalog.nixpkgsCapabilities, "10.1", "13.0") && nixpkgsAllows(catalog.nixpkgsCapabilities, "10.1f", "12.9"));
});

test("SM121 is native from CUDA 12.9 only (nixpkgs min 12.9); on 12.8 it is served by 12.0 code, or dropped under policy drop", () => {
  assert.equal(serveGpu(gpu("121"), toolkit("12.9"), "serve", catalog), { ok: true, capabilities: ["12.1"], binaryCompat: false });
  const on128 = serveGpu(gpu("121"), toolkit("12.8"), "serve", catalog);
  assert.ok(on128.ok && on128.binaryCompat);
  assert.equal(on128.ok && on128.capabilities, ["12.0"]);
  assert.not.ok(serveGpu(gpu("121"), toolkit("12.8"), "drop", catalog).ok);
  // Even an nvcc 12.8 that listed sm_121 would not make it native: nixpkgs allows 12.1 from CUDA 12.9 only.
  const listing = { ...toolkit("12.8"), capabilities: [...toolkit("12.8").capabilities, "12.1"] };
  const s = serveGpu(gpu("121"), listing, "serve", catalog);
  assert.ok(s.ok && s.binaryCompat, "served by 12.0, not natively");
  const d = serveGpu(gpu("121"), listing, "drop", catalog);
  assert.ok(!d.ok && /nixpkgs allows compute capability 12\.1 with CUDA 12\.9 and later, not 12\.8/.test(d.reason), JSON.stringify(d));
});

test("nixpkgs wins where nvcc and nixpkgs disagree: 7.2 (Xavier) ends at CUDA 12.2 in nixpkgs though nvcc 12.x lists sm_72", () => {
  const s = serveGpu(gpu("72"), toolkit("12.6"), "serve", catalog);
  assert.ok(!s.ok && /nixpkgs allows compute capability 7\.2 with CUDA 10\.0 to 12\.2, not 12\.6/.test(s.reason), JSON.stringify(s));
});

test("SM110 (Thor): only aarch64-linux, CUDA 13.0 only, and its CUDA set never holds a non-Jetson capability", () => {
  for (const scope of ["torch", "packageSet"] as const) {
    const m: MatrixInput = {
      releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
      python: ["3.13"],
      cuda: ["12.8", "12.9", "13.0"],
      gpus: ["90", "110", "120", "121"],
      isas: ["avx2", "armv9"],
      cpuOnly: false,
      packages: ["pytorch", "torch-env"],
      policy: { cudaCapabilitiesScope: scope },
    };
    const p = projectFromMatrix(m);
    const thor = p.variants.filter((v) => v.sm === "110");
    assert.ok(thor.length > 0, "an SM110 variant on aarch64 with CUDA 13.0");
    const keys = new Map<string, Set<string>>();
    for (const v of p.variants) {
      const k = nixpkgsInstanceKey(v);
      if (!keys.has(k)) keys.set(k, new Set());
      for (const c of v.cudaCapabilities) keys.get(k)!.add(c);
    }
    for (const v of thor) {
      assert.is(v.system, "aarch64-linux", v.name);
      assert.is(v.cuda, "13.0", v.name);
      assert.equal(v.cudaCapabilities, ["11.0"], v.name);
      assert.ok(v.cudaCapabilitiesForPackageSet, `${v.name}: its own config.cudaCapabilities`);
      // Every variant sharing its nixpkgs instance (its CUDA set) has Jetson capabilities only.
      for (const c of keys.get(nixpkgsInstanceKey(v))!) assert.ok(jetsonCapabilities(catalog.nixpkgsCapabilities).includes(c), `${v.name} shares a CUDA set with ${c}`);
    }
    const x86 = p.excluded.find((e) => e.sm === "110" && e.isa === "avx2" && e.cuda === "13.0")!;
    assert.match(x86.reasons.join(" "), /aarch64-linux/);
  }
  assert.throws(() => cudaScopeFor(["11.0", "12.1"], nixpkgsCudaFacts(catalog, null, toolkit("13.0")), "packageSet"), /Jetson capabilities 11\.0 with non-Jetson 12\.1/);
});

test("caches per system: cache.nixos-cuda.org builds x86_64-linux; cache.flox.dev may hold aarch64-linux CUDA, with its key as a nix.conf block", () => {
  assert.equal(cudaCachesFor(catalog, "x86_64-linux").map((c) => [c.name, c.holds]), [["cache.nixos-cuda.org", "builds"], ["cache.flox.dev", "may hold"]]);
  assert.equal(cudaCachesFor(catalog, "aarch64-linux").map((c) => [c.name, c.holds]), [["cache.flox.dev", "may hold"]]);
  // The model counts only on a cache whose jobset was read, on its systems.
  assert.equal(catalog.publicCudaCaches.filter((c) => c.holds === "builds").flatMap((c) => c.systems), [...CUDA_CACHE.systems]);
  assert.is(cudaCacheSubstituter(catalog).publicKey, "cache.nixos-cuda.org:74DUi4Ye579gUqzH4ziL9IyiJBlDpMRn9MBN8oNan9M=");
  assert.is(catalog.publicCudaCaches.find((c) => c.name === "cache.flox.dev")!.url, "https://cache.flox.dev");
  assert.is(catalog.publicCudaCaches.find((c) => c.name === "cache.flox.dev")!.publicKey, "flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs=");
  assert.is(
    substituterLines(cudaCachesFor(catalog, "aarch64-linux")).join("\n"),
    "extra-substituters = https://cache.flox.dev\nextra-trusted-public-keys = flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs=",
  );
  // The model names the cache that may hold an aarch64 variant's CUDA closure, with its key, and still counts it as built.
  const pin = nixpkgs.find((p) => p.torch === "2.12.0")!;
  const m = modelCacheMisses([{ name: "arm", system: "aarch64-linux", python: "3.13", cuda: "12.9", nixpkgs: pin.rev, cudaCapabilitiesForPackageSet: false, nixpkgsKey: "arm" }], catalog);
  assert.match(m.reasons.get("arm")!.join(" "), /unless cache\.flox\.dev \(https:\/\/cache\.flox\.dev, key flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw\/aV7GEed86nQ7IsOs=\) holds them: it may/);
  assert.ok(m.builds.some((b) => b.what === "cuda-closure" && b.variants.includes("arm")), "may hold: never counted as cached");
  for (const c of catalog.publicCudaCaches) {
    assert.match(c.url, /^https:\/\/[a-z.-]+$/);
    assert.match(c.publicKey, /^[a-z0-9.-]+:[A-Za-z0-9+/]{43}=$/, c.name);
  }
});

test("pin inspect's note: a nixpkgs whose torch is newer than every catalog release names pin add; one the catalog knows does not", () => {
  const newest = [...catalog.torch].map((t) => t.version).sort(compareVersions).at(-1)!;
  const sets = (torch: string | null) => ({ pythonSets: [{ torch: { expr: "python313Packages.torch.version", value: torch } }] }) as Parameters<typeof torchNewerThanCatalog>[0];
  const [maj, min] = newest.split(".").map(Number);
  const next = `${maj}.${min! + 1}.0`;
  assert.equal(torchNewerThanCatalog(sets(next), catalog), { torch: next, newest });
  assert.is(torchNewerThanCatalog(sets(newest), catalog), null);
  assert.is(torchNewerThanCatalog(sets("2.8.0"), catalog), null);
  assert.is(torchNewerThanCatalog(sets(null), catalog), null, "a pin without torch says nothing");
});

test.run();
