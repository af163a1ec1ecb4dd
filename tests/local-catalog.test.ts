/**
 * local-catalog.json extends every table a user may need to add to (generator/catalog/local.ts): releases of a package
 * built on torch, extras, TORCH_CUDA_ARCH_LIST facts, besides pins and PyTorch releases; a file of the shape written
 * before torchaudio's releases moved into the package table still reads. Real files in a temp directory, the real
 * merge, and one real `generate` run.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { addLocalEntry, withLocalCatalog } from "../generator/catalog/local.ts";
import { onTorch, releaseOf } from "../generator/catalog/lib/packages.ts";
import { extraPromise } from "../generator/catalog/lib/packages.ts";
import { archEntryAccepted } from "../generator/catalog/lib/torch.ts";
import { closeCatalogExtras } from "../generator/matrix/extra-hints.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const torchvision091 = { version: "0.91", servesTorch: { min: "2.99", below: null }, stableAbi: false, source: "test: a torchvision series the built-in table lacks" };
const einopsx = { attr: "einopsx", deviceCode: "none", takesTorch: false, promise: "its version, and that it imports (pure Python)", source: "test" };
const arch299 = { torch: "2.99", accepted: ["9.0", "12.1"], refused: ["10.1"], source: "test: cpp_extension of torch 2.99" };

function withFile(body: unknown): string {
  const dir = tempDir("vm-local-cat-");
  writeFileSync(join(dir, "local-catalog.json"), JSON.stringify(body));
  return dir;
}

test("a local release of a package, an extra and an arch list reach every reader through the Catalog value", () => {
  const cat = withLocalCatalog(catalog, withFile({ packagesOnTorch: { torchvision: [torchvision091] }, extras: [einopsx], torchArchLists: [arch299] }));
  assert.ok(releaseOf(onTorch(cat, "torchvision")!, "0.91.2"), "the series is a release of torchvision now");
  assert.not.ok(releaseOf(onTorch(catalog, "torchvision")!, "0.91.2"), "the built-in catalog is untouched");
  assert.equal(closeCatalogExtras(cat, "einopsx"), [], "a known extra is no typo");
  assert.equal(closeCatalogExtras(catalog, "einopsx"), ["einops"], "without the local file it is one");
  assert.is(extraPromise(cat, "einopsx").judged, true);
  assert.ok(catalogCheckerFacts(cat).judgedExtras.includes("einopsx"), "the checks judge it too");
  assert.not.ok(catalogCheckerFacts(catalog).judgedExtras.includes("einopsx"));
  assert.is(archEntryAccepted(cat, "2.99.0", "12.1"), true);
  assert.is(archEntryAccepted(cat, "2.99.0", "10.1"), false);
  assert.is(archEntryAccepted(catalog, "2.99.0", "12.1"), null, "unknown without it");
});

test("a local entry that repeats a built-in one, names no package of the table, or breaks its schema is refused with the file and the field", () => {
  const builtInTv = onTorch(catalog, "torchvision")!.releases[0]!;
  assert.throws(() => withLocalCatalog(catalog, withFile({ packagesOnTorch: { torchvision: [builtInTv] } })), /local-catalog\.json: torchvision release \S+ is already in the built-in catalog/);
  assert.throws(
    () => withLocalCatalog(catalog, withFile({ packagesOnTorch: { torchvison: [torchvision091] } })),
    /packagesOnTorch\.torchvison: not a package of the table; allowed: torchaudio, torchvision/,
  );
  assert.throws(() => withLocalCatalog(catalog, withFile({ extras: [{ ...einopsx, deviceCode: "maybe" }] })), /invalid local catalog\n\s+extras\.0\.deviceCode/);
  assert.throws(() => withLocalCatalog(catalog, withFile({ extras: [einopsx, einopsx] })), /extra einopsx appears twice/);
});

test("a file of the old shape (top-level torchaudio) reads as the table's torchaudio releases, and pin add rewrites it in the new shape", () => {
  const ta299 = { version: "2.99.0", servesTorch: { min: "2.99", below: null }, stableAbi: true, nixpkgsDependsOnTorchcodec: true, source: "test: an old local torchaudio" };
  const dir = withFile({ torchaudio: [ta299] });
  const cat = withLocalCatalog(catalog, dir);
  const rel = releaseOf(onTorch(cat, "torchaudio")!, "2.99.0")!;
  assert.equal(rel.nixpkgsDependencies, ["torchcodec"]);
  assert.is(rel.servesTorch.min, "2.99");
  const builtIn = catalog.nixpkgs[0]!;
  const file = addLocalEntry(catalog, dir, { pin: { ...builtIn, rev: "e".repeat(40) }, torch: null, torchaudio: null });
  const written = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  assert.not.ok("torchaudio" in written, "no old key left");
  assert.equal((written.packagesOnTorch as Record<string, { version: string }[]>).torchaudio!.map((r) => r.version), ["2.99.0"]);
  assert.ok(releaseOf(onTorch(withLocalCatalog(catalog, dir), "torchaudio")!, "2.99.0"), "and it still reads");
});

test("pin add of a pin the built-in catalog has: said so, naming no local-catalog.json (there is none), nothing written", () => {
  const dir = tempDir("vm-local-cat-known-");
  const builtIn = catalog.nixpkgs[0]!;
  const entry = { pin: builtIn, torch: null, torchaudio: null };
  assert.throws(() => addLocalEntry(catalog, dir, entry), (e: Error) => {
    assert.match(e.message, new RegExp(`^nixpkgs ${builtIn.rev} is already a pin of the built-in catalog: nothing to add`));
    assert.not.match(e.message, /local-catalog\.json/);
    return true;
  });
  assert.not.ok(existsSync(join(dir, "local-catalog.json")));
  // Added once, a second add names the file it is in.
  const other = { pin: { ...builtIn, rev: "d".repeat(40) }, torch: null, torchaudio: null };
  addLocalEntry(catalog, dir, other);
  assert.throws(() => addLocalEntry(catalog, dir, other), /is already in .*local-catalog\.json: nothing to add/);
});

test("generate warns of an extra close to a catalog one, and not once local-catalog.json knows it", async () => {
  const dir = tempDir("vm-local-cat-gen-");
  const m = writeMatrix(dir, { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.9"], gpus: ["90"], isas: ["avx2"], cpuOnly: false, environments: { llm: ["einopsx"] } });
  const before = await runMain(["generate", "--matrix", m, "--out", dir]);
  assert.is(before.status, 0, before.stderr);
  assert.match(before.stderr, /environments\.llm: "einopsx" is not an extra the catalog knows/);
  writeFileSync(join(dir, "local-catalog.json"), JSON.stringify({ extras: [einopsx] }));
  const after = await runMain(["generate", "--matrix", m, "--out", dir]);
  assert.is(after.status, 0, after.stderr);
  assert.not.match(after.stderr, /einopsx/);
});

test.run();
