import { test } from "uvu";
import * as assert from "uvu/assert";
import { catalog } from "../generator/catalog/index.ts";
import { projectFromMatrix, MatrixError } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";

// The catalog has no tarball hash for PIN28/PIN29: matrix.ts must give one. These tests never fetch it.
const USER_SHA256 = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const PIN28 = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3";
const PIN29 = "6a030d535719c5190187c4cec156f335e95e3211";
const base: MatrixInput = {
  releases: [{ torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 }],
  python: ["3.13"],
  cuda: ["12.8"],
  gpus: ["80", "90", "103", "110", "120", "121"],
  isas: ["avx512", "armv9"],
  cpuOnly: true,
};
const gpu = (sm: string) => catalog.gpus.find((g) => g.sm === sm)!;
const cudaOf = (v: string) => catalog.cuda.find((c) => c.version === v)!;

test("default matrix: every kept variant keeps the promise of its name", () => {
  const p = projectFromMatrix(matrix);
  assert.ok(p.variants.length > 0);
  for (const v of p.variants) {
    assert.ok(v.name.includes(`-python${v.python.replace(".", "")}-`), v.name);
    assert.is(v.pythonPackageSet, `python${v.python.replace(".", "")}Packages`);
    if (v.cuda) {
      assert.is(v.cudaPackageSet, `cudaPackages_${v.cuda.replace(".", "_")}`);
      const g = gpu(v.sm!);
      assert.ok(g.systems.includes(v.system), `${v.name}: GPU not on ${v.system}`);
      for (const cap of v.cudaCapabilities) {
        assert.ok(cudaOf(v.cuda).capabilities.includes(cap), `${v.name}: nvcc ${v.cuda} cannot compile ${cap}`);
        const [M, m] = cap.split(".").map(Number);
        const [GM, Gm] = g.capability.split(".").map(Number);
        assert.ok(M === GM && m <= Gm, `${v.name}: ${cap} code does not run on ${g.capability}`);
        assert.not.match(cap, /sm_/);
      }
      assert.is(v.binaryCompat, !v.cudaCapabilities.includes(g.capability));
    } else {
      assert.equal(v.cudaCapabilities, []);
      assert.is(v.cudaPackageSet, null);
      assert.is(v.sm, null);
    }
    assert.equal(v.cflags, catalog.isas.find((i) => i.key === v.isa)!.cflags);
    if (v.package === "torchaudio") {
      assert.is(v.dependsOn.length, 1);
      const torch = p.variants.find((t) => t.name === v.dependsOn[0]);
      assert.ok(torch, `${v.name}: sibling missing`);
      assert.is(torch!.package, "pytorch");
      for (const k of ["python", "cuda", "sm", "isa", "system", "nixpkgs"] as const) assert.equal(torch![k], v[k]);
      assert.equal(torch!.cudaCapabilities, v.cudaCapabilities);
    }
  }
  const names = p.variants.map((v) => v.name);
  assert.is(new Set(names).size, names.length, "names are unique");
});

test("sm121 and sm103 on CUDA 12.8 are served by binary compatibility, with a note", () => {
  const p = projectFromMatrix(base);
  const spark = p.variants.find((v) => v.name === "pytorch-python313-cuda12_8-sm121-armv9")!;
  assert.ok(spark);
  assert.equal(spark.cudaCapabilities, ["12.0"]);
  assert.ok(spark.binaryCompat);
  assert.match(spark.notes.join(" "), /binary compatibility/i);
  const b300 = p.variants.find((v) => v.name === "pytorch-python313-cuda12_8-sm103-avx512")!;
  assert.equal(b300.cudaCapabilities, ["10.0"]);
  const h100 = p.variants.find((v) => v.name === "pytorch-python313-cuda12_8-sm90-avx512")!;
  assert.equal(h100.cudaCapabilities, ["9.0"]);
  assert.not.ok(h100.binaryCompat);
});

test("sm110 on CUDA 12.8 is dropped, naming the CUDA version that would work", () => {
  const p = projectFromMatrix(base);
  assert.not.ok(p.variants.some((v) => v.sm === "110"));
  const ex = p.excluded.find((e) => e.name === "torchaudio-python313-cuda12_8-sm110-armv9")!;
  assert.ok(ex);
  assert.match(ex.reasons.join(" "), /13\.0/);
  assert.match(ex.reasons.join(" "), /major/);
});

test("SoC-only GPUs have no x86 variant, with a reason", () => {
  const p = projectFromMatrix(base);
  assert.not.ok(p.variants.some((v) => v.sm === "121" && v.system === "x86_64-linux"));
  const ex = p.excluded.find((e) => e.name === "pytorch-python313-cuda12_8-sm121-avx512")!;
  assert.match(ex.reasons.join(" "), /aarch64-linux/);
});

test("policy drop drops what binary compatibility would serve", () => {
  const p = projectFromMatrix({ ...base, policy: { binaryCompat: "drop" } });
  assert.not.ok(p.variants.some((v) => v.binaryCompat));
  const ex = p.excluded.find((e) => e.name === "pytorch-python313-cuda12_8-sm121-armv9")!;
  assert.match(ex.reasons.join(" "), /policy\.binaryCompat is "drop"/);
  assert.ok(p.variants.some((v) => v.name === "pytorch-python313-cuda12_8-sm120-armv9"));
});

test("CUDA 12.9 compiles sm121 and sm103 natively", () => {
  const p = projectFromMatrix({ ...base, releases: [{ torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 }], cuda: ["12.9"] });
  const spark = p.variants.find((v) => v.name === "pytorch-python313-cuda12_9-sm121-armv9")!;
  assert.equal(spark.cudaCapabilities, ["12.1"]);
  assert.not.ok(spark.binaryCompat);
});

test("CPU-only variants: one per ISA, no CUDA", () => {
  const p = projectFromMatrix(base);
  const cpu = p.variants.filter((v) => v.cuda === null && v.package === "pytorch").map((v) => v.name);
  assert.equal(cpu, ["pytorch-python313-cpu-avx512", "pytorch-python313-cpu-armv9"]);
});

test("several releases put the release tag into every name; one release puts none", () => {
  const two = projectFromMatrix({ ...base, releases: [{ torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 }, { torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 }], cuda: ["12.8"] });
  assert.ok(two.variants.every((v) => /^(pytorch|torchaudio|torchvision|torch-env)(28|29)-/.test(v.name)));
  assert.ok(two.variants.some((v) => v.name === "torch-env28-python313-cuda12_8-sm90-armv9"));
  assert.ok(two.variants.some((v) => v.name === "torchaudio29-python313-cuda12_8-sm90-armv9"));
  const one = projectFromMatrix(base);
  assert.ok(one.variants.every((v) => /^(pytorch|torchaudio|torchvision|torch-env)-python/.test(v.name)));
});

test("a nixpkgs pin whose torch is broken for CUDA 13 drops those combinations", () => {
  const p = projectFromMatrix({ ...base, releases: [{ torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 }], cuda: ["13.0"] });
  assert.is(p.variants.filter((v) => v.cuda).length, 0);
  assert.match(p.excluded[0].reasons.join(" "), /broken/);
});

test("expansion is deterministic", () => {
  const a = JSON.stringify(projectFromMatrix(matrix).variants);
  const b = JSON.stringify(projectFromMatrix(structuredClone(matrix)).variants);
  assert.is(a, b);
});

const bad: [string, Partial<MatrixInput> | Record<string, unknown>, RegExp][] = [
  ["unknown SM", { gpus: ["80", "81"] }, /gpus\.1: unknown GPU SM "81"; allowed values: .*121/],
  ["unknown ISA", { isas: ["avx2", "sse4"] }, /isas\.1: unknown CPU ISA "sse4"; allowed values: .*armv8_2/],
  ["unknown CUDA", { cuda: ["11.8"] }, /cuda\.0: unknown CUDA version "11\.8"; allowed values: .*12\.8/],
  ["unknown Python", { python: ["3.8"] }, /python\.0: unknown Python version "3\.8"; allowed values: .*3\.13/],
  ["empty axis", { gpus: [] }, /gpus: must list at least one GPU SM; allowed values/],
  ["duplicate", { isas: ["avx2", "avx2"] }, /isas\.1: duplicate CPU ISA "avx2"/],
  ["pin without the release", { releases: [{ torch: "2.8.0", nixpkgs: PIN29, sha256: USER_SHA256 }] }, /releases\.0\.nixpkgs: .*carries PyTorch 2\.9\.1, not 2\.8\.0; allowed values: fe5e41d7/],
  ["unknown field", { gpu: ["80"] }, /gpu/],
  ["bad policy", { policy: { binaryCompat: "maybe" } }, /policy\.binaryCompat/],
  ["only: a combination the axes lack", { only: ["python313-cuda12_8-sm95-avx2"] }, /only\.0: "python313-cuda12_8-sm95-avx2" is not a combination of the axes: the matrix lacks gpus 95/],
  ["only: not a combination name", { only: ["pytorch-python313-cpu-avx2"] }, /only\.0: expected a combination name/],
];

test("only: the matrix expands to exactly the listed combinations", () => {
  const all = projectFromMatrix(base);
  const pick = all.variants.filter((v) => v.package === "pytorch").slice(0, 3);
  const only = pick.map((v) => v.name.replace(/^pytorch-/, ""));
  const p = projectFromMatrix({ ...base, only });
  assert.equal(
    p.variants.map((v) => v.name).sort(),
    pick.flatMap((v) => ["pytorch", "torchaudio", "torchvision", "torch-env"].map((pkg) => v.name.replace(/^pytorch/, pkg))).sort(),
  );
  assert.ok(p.excluded.length < all.excluded.length, "combinations outside `only` are not listed as dropped");
});
for (const [what, patch, re] of bad)
  test(`bad matrix: ${what} names the field and the allowed values`, () => {
    try {
      projectFromMatrix({ ...base, ...patch });
      assert.unreachable("should have thrown");
    } catch (e) {
      assert.instance(e, MatrixError);
      assert.match((e as Error).message, re);
    }
  });

test.run();
