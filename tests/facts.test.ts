/**
 * Facts corrected against their primary sources, where a fact drives behaviour: the Nix floor's reason (lib/minver.nix
 * history), the store floor's kind, torch 2.9's refused arch entries, and the glibc 2.42 / CUDA header window of a
 * nixpkgs revision. Each test fails on the claim it replaced.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { NIX_MIN, NIXOS_DRIVER_LIB, STORE_FREE_FLOOR } from "../generator/preflight/facts.ts";
import { nixpkgs } from "../generator/catalog/torch.ts";
import { compareVersions } from "../generator/versions.ts";
import { archEntryAccepted } from "../generator/catalog/torch-arch-list.ts";
import { GLIBC_242_CUDA_HEADERS, glibcCudaHeaderNote } from "../generator/catalog/cuda.ts";
import { extraFact } from "../generator/catalog/extras.ts";

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
  const d = extraFact("deepspeed")!;
  assert.is(d.deviceCode, "runtimeJit");
  assert.match(d.promise, /blanks TORCH_CUDA_ARCH_LIST/);
  assert.not.match(d.promise, /or TORCH_CUDA_ARCH_LIST of that process/);
});

test("torch 2.9: pytorch/pytorch#166120 shows 10.1 refused, nothing about 10.1a (unknown, not refused)", () => {
  assert.is(archEntryAccepted("2.9.1", "10.1"), false);
  assert.is(archEntryAccepted("2.9.1", "10.1+PTX"), false);
  assert.is(archEntryAccepted("2.9.1", "10.1a"), null);
  assert.is(archEntryAccepted("2.11.0", "10.1a"), false, "2.11's list was read: 10.1a is not in it");
});

test("glibc 2.42 vs CUDA headers: a revision's window, by CUDA version and the fixes it lacks", () => {
  const rev = "0182a361324364ae3f436a63005877674cf45efb";
  // Before glibc 2.42 reached master, and with an unknown date: nothing to say.
  assert.is(glibcCudaHeaderNote(rev, "2025-12-01", "12.8"), null);
  assert.is(glibcCudaHeaderNote(rev, null, "12.8"), null);
  // Between glibc 2.42 and the first fix: both CUDA 12 fixes missing.
  const early = glibcCudaHeaderNote(rev, "2026-01-30", "12.8")!;
  assert.match(early, /not NixOS\/nixpkgs#484031 .*NixOS\/nixpkgs#498678/);
  // 0182a36 (2026-02-17): math_functions.h patched, math_functions.hpp not.
  const pin = glibcCudaHeaderNote(rev, "2026-02-17", "12.9")!;
  assert.match(pin, /it has NixOS\/nixpkgs#484031/);
  assert.match(pin, /but not NixOS\/nixpkgs#498678/);
  assert.match(pin, /not to the package/);
  // CUDA 13.0 has its own fix (cuda_crt), CUDA 13.2 needs none.
  assert.match(glibcCudaHeaderNote(rev, "2026-03-30", "13.0")!, /NixOS\/nixpkgs#512796/);
  assert.is(glibcCudaHeaderNote(rev, "2026-03-30", "12.8"), null, "both CUDA 12 fixes were in by then");
  assert.is(glibcCudaHeaderNote(rev, "2026-03-30", "13.2"), null);
  assert.is(glibcCudaHeaderNote(rev, "2026-05-05", "13.0"), null);
  // Every fix is dated on or after glibc's arrival and names its PR.
  for (const f of GLIBC_242_CUDA_HEADERS.fixes) {
    assert.ok(f.merged >= GLIBC_242_CUDA_HEADERS.since, f.pr);
    assert.match(f.pr, /^NixOS\/nixpkgs#\d+$/);
  }
});

test.run();
