// Several PyTorch, CUDA and Python lines in one matrix, without giving up a rule of truth.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { catalog } from "../generator/catalog/index.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
import { explainName } from "../generator/matrix/explain.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";

// The catalog has no tarball hash for PIN28/PIN29: matrix.ts must give one. These tests never fetch it.
const USER_SHA256 = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const PIN28 = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3";
const PIN29 = "6a030d535719c5190187c4cec156f335e95e3211";
const wide: MatrixInput = {
  releases: [{ torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 }, { torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 }],
  python: ["3.11", "3.12", "3.13"],
  cuda: ["12.6", "12.8", "12.9", "13.0"],
  gpus: ["70", "75", "87", "90", "103", "110", "121"],
  isas: ["avx512bf16", "armv8_2", "armv9"],
  cpuOnly: true,
};

test("every kept (GPU, CUDA) pair compiles only what that nvcc knows and the GPU runs", () => {
  const p = projectFromMatrix(wide);
  assert.ok(p.variants.length > 100);
  for (const v of p.variants.filter((v) => v.cuda)) {
    const caps = catalog.cuda.find((c) => c.version === v.cuda)!.capabilities;
    const gpu = catalog.gpus.find((g) => g.sm === v.sm)!;
    for (const c of v.cudaCapabilities) {
      assert.ok(caps.includes(c), `${v.name}: ${c} not in nvcc ${v.cuda}`);
      assert.is(c.split(".")[0], gpu.capability.split(".")[0], v.name);
    }
  }
});

test("CUDA 13.0 dropped sm_70: no 13.0 variant for V100, the reason says so", () => {
  const p = projectFromMatrix({ ...wide, releases: [{ torch: "2.9.1", nixpkgs: PIN29, sha256: USER_SHA256 }] });
  assert.not.ok(p.variants.some((v) => v.sm === "70" && v.cuda === "13.0"));
  const ex = p.excluded.find((e) => e.sm === "70" && e.cuda === "13.0" && e.isa === "avx512bf16")!;
  assert.match(ex.reasons.join(" "), /dropped offline compilation for sm_70 \(last supported in CUDA 12\.9\)/);
  assert.ok(p.variants.some((v) => v.sm === "70" && v.cuda === "12.9"), "V100 still served on 12.9");
});

test("torch 2.9.1 on CUDA 13.0 is dropped: the pin's torch is marked broken for it", () => {
  const p = projectFromMatrix(wide);
  assert.not.ok(p.variants.some((v) => v.cuda === "13.0"));
  const ex = p.excluded.find((e) => e.name === "pytorch29-python313-cuda13_0-sm110-armv9")!;
  assert.match(ex.reasons.join(" "), /broken/);
});

test("SM87 (Orin) is aarch64-only; SM75 is on both systems", () => {
  const p = projectFromMatrix(wide);
  assert.ok(p.variants.some((v) => v.sm === "87" && v.isa === "armv8_2"));
  assert.not.ok(p.variants.some((v) => v.sm === "87" && v.system === "x86_64-linux"));
  assert.ok(p.variants.some((v) => v.sm === "75" && v.system === "x86_64-linux"));
  assert.ok(p.variants.some((v) => v.sm === "75" && v.system === "aarch64-linux"));
});

test("SoC GPUs only pair with ISAs their own SoC CPU runs (Orin has no SVE; Xavier's Carmel no dot product)", () => {
  const p = projectFromMatrix({ ...wide, releases: [{ torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 }], cuda: ["12.6"] });
  assert.not.ok(p.variants.some((v) => v.sm === "87" && v.isa === "armv9"));
  assert.ok(p.variants.some((v) => v.sm === "87" && v.isa === "armv8_2"));
  assert.not.ok(p.variants.some((v) => v.sm === "72"));
  const orin = p.excluded.find((e) => e.sm === "87" && e.isa === "armv9")!;
  assert.match(orin.reasons.join(" "), /Cortex-A78AE.*runs only armv8_2/);
  for (const g of catalog.gpus.filter((g) => g.socCpu))
    for (const k of g.socCpu!.isas) assert.ok(catalog.isas.some((i) => i.key === k && g.systems.includes(i.system)), `${g.sm}: ${k}`);
});

test("Python outside a release's range is dropped; a release with no sourced pin is dropped whole", () => {
  const p = projectFromMatrix({ ...wide, releases: [{ torch: "2.10.0" }] });
  assert.is(p.variants.length, 0);
  assert.match(p.excluded[0].reasons.join(" "), /No nixpkgs revision in the catalog carries PyTorch 2\.10\.0/);
  assert.ok(p.excluded[0].name.startsWith("pytorch-"), "one release: no tag");
});

test("a left-out nixpkgs pin resolves to the catalog's pin for the release", () => {
  // (Python and CUDA versions that pin has: one no pin of the matrix has is refused.)
  const p = projectFromMatrix({ ...wide, releases: [{ torch: "2.9.1" }], python: ["3.12", "3.13"], cuda: ["12.8", "12.9"] });
  assert.ok(p.variants.length > 0);
  assert.ok(p.variants.every((v) => v.nixpkgs === "0182a361324364ae3f436a63005877674cf45efb"), "the hashed 2.9.1 pin is preferred");
});

test("one docs page per (release, CUDA), indexed by BUILD_MATRIX.md", () => {
  const files = renderAll(projectFromMatrix(wide));
  const pages = [...files.keys()].filter((f) => f.startsWith("docs/matrix/")).sort();
  assert.equal(pages, [
    "docs/matrix/pytorch-2.8.0-cpu.md",
    "docs/matrix/pytorch-2.8.0-cuda-12.6.md",
    "docs/matrix/pytorch-2.8.0-cuda-12.8.md",
    "docs/matrix/pytorch-2.8.0-cuda-12.9.md",
    "docs/matrix/pytorch-2.8.0-cuda-13.0.md",
    "docs/matrix/pytorch-2.9.1-cpu.md",
    "docs/matrix/pytorch-2.9.1-cuda-12.6.md",
    "docs/matrix/pytorch-2.9.1-cuda-12.8.md",
    "docs/matrix/pytorch-2.9.1-cuda-12.9.md",
    "docs/matrix/pytorch-2.9.1-cuda-13.0.md",
  ]);
  const index = files.get("BUILD_MATRIX.md")!;
  for (const page of pages) assert.ok(index.includes(`(${page})`), `BUILD_MATRIX.md links ${page}`);
  assert.match(index, /`29` = PyTorch 2\.9\.1/);
  const p129 = files.get("docs/matrix/pytorch-2.9.1-cuda-12.9.md")!;
  assert.match(p129, /`pytorch29-python313-cuda12_9-sm121-armv9`/);
  assert.match(p129, /## Dropped combinations/);
});

test("explain: a name from an old single-release README finds its tagged name and neighbours", () => {
  const p = projectFromMatrix(wide);
  const e = explainName("pytorch-python313-cuda12_9-sm121-armv9", p);
  assert.is(e.kind, "not-in-matrix");
  if (e.kind === "variant") return;
  assert.is(e.nearest[0].name, "pytorch29-python313-cuda12_9-sm121-armv9");
  const d = explainName("pytorch29-python313-cuda12_8-sm110-armv9", p);
  assert.is(d.kind, "excluded");
  if (d.kind === "variant") return;
  assert.match(d.reasons.join(" "), /13\.0/);
  const names = d.nearest.map((s) => s.name);
  assert.ok(names.some((n) => /sm110/.test(n)) || names.length > 0);
  const spark = explainName("torchaudio28-python313-cuda12_9-sm121-armv9", p);
  if (spark.kind === "variant") return assert.unreachable();
  assert.match(spark.reasons.join(" "), /has no cudaPackages_12_9/);
  assert.ok(spark.nearest.some((s) => s.name === "torchaudio29-python313-cuda12_9-sm121-armv9" && /PyTorch 2\.9\.1/.test(s.why)));
  assert.ok(spark.nearest.some((s) => s.name === "torchaudio28-python313-cuda12_8-sm121-armv9" && /CUDA 12\.8/.test(s.why)));
});

test.run();
