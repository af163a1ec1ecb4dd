// Content-addressed nixpkgs pins, current PyTorch on CUDA 13 (SM110, native SM121/SM103), and a stand-in
// nixpkgs that fails where real nixpkgs would.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { onTorch, packageOnTorch, releaseOf, releaseServes } from "../generator/catalog/lib/packages.ts";
import { catalog, checkPairings } from "../generator/catalog/index.ts";
import { nixpkgsTarballUrl, preferredPin } from "../generator/catalog/lib/torch.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { SHA256_RE } from "../generator/catalog/schema.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { nixEvalJson, nixPath, nixStr, STAND_IN_NIXPKGS } from "./helpers/nix.ts";

const HASHLESS = catalog.nixpkgs.find((p) => p.sha256 === null)!;
const small = { python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx2"], cpuOnly: false };

test("catalog pins: a hash is SRI or base32 with its source; the preferred pin of a release has one when any does", () => {
  for (const p of catalog.nixpkgs) {
    if (p.sha256 === null) assert.is(p.sha256Source, null, p.rev);
    else {
      assert.match(p.sha256, SHA256_RE);
      assert.ok(p.sha256Source && p.sha256Source.length > 10, `${p.rev}: sha256Source`);
    }
  }
  for (const t of catalog.torch) {
    const carriers = catalog.nixpkgs.filter((p) => p.torch === t.version);
    if (carriers.some((p) => p.sha256)) assert.ok(preferredPin(catalog, t.version)!.sha256, t.version);
  }
  assert.ok(catalog.nixpkgs.some((p) => p.torch.startsWith("2.11.")), "a pin carrying PyTorch 2.11");
});

test("generate refuses a pin without a hash: exit 2, the pin, the prefetch command, no file written", async () => {
  const out = tempDir();
  const m = writeMatrix(out, { ...small, releases: [{ torch: HASHLESS.torch, nixpkgs: HASHLESS.rev }] });
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /releases\.0\.sha256: /);
  assert.ok(r.stderr.includes(HASHLESS.rev), "names the pin");
  assert.ok(r.stderr.includes(`nix-prefetch-url --unpack ${nixpkgsTarballUrl(HASHLESS.rev)}`), r.stderr);
  assert.equal(readdirSync(out), ["matrix.ts"]);
});

test("a hash given in matrix.ts makes that pin usable and reaches every generated file; a malformed one is refused", async () => {
  const sha = "0".repeat(52);
  const out = tempDir();
  const m = writeMatrix(out, { ...small, releases: [{ torch: HASHLESS.torch, nixpkgs: HASHLESS.rev, sha256: sha }] });
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 0, r.stderr);
  const files = readdirSync(join(out, ".flox/pkgs"));
  assert.ok(files.length > 0);
  const data = readFileSync(join(out, "pkgs/variants.nix"), "utf8");
  assert.is(data.split(`nixpkgsSha256 = "${sha}";`).length - 1, files.length, "every variant's data carries the hash");

  const bad = tempDir();
  const mb = writeMatrix(bad, { ...small, releases: [{ torch: HASHLESS.torch, nixpkgs: HASHLESS.rev, sha256: "abc" }] });
  const rb = await runMain(["generate", "--matrix", mb, "--out", bad]);
  assert.is(rb.status, 2);
  assert.match(rb.stderr, /releases\.0\.sha256: expected the nixpkgs tarball hash/);
  assert.equal(readdirSync(bad), ["matrix.ts"]);
});

test("every committed generated variant fetches nixpkgs with a sha256 (pkgs/variants.nix, one entry per wrapper)", () => {
  const files = readdirSync(join(ROOT, ".flox/pkgs")).filter((f) => f.endsWith(".nix"));
  assert.ok(files.length > 100);
  const data = readFileSync(join(ROOT, "pkgs/variants.nix"), "utf8");
  const hashes = data.match(/nixpkgsSha256 = "sha256-[A-Za-z0-9+/]{43}=";/g) ?? [];
  assert.is(hashes.length, files.length);
  assert.not.match(data, /nixpkgsSha256 = null/);
  for (const f of files) assert.ok(data.includes(`"${f.slice(0, -4)}" = {`), `${f}: its data entry`);
});

test("real Nix 2.8 fetchTarball checks an SRI sha256 (our pkgs/nixpkgs.nix call) and refuses a wrong one", () => {
  // A local tarball stands in for GitHub's; the hash is what nix-prefetch-url --unpack prints for it.
  const dir = tempDir("vm-tarball-");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "default.nix"), "{ ... }: { answer = 42; }\n");
  execFileSync("tar", ["-czf", join(dir, "t.tar.gz"), "-C", dir, "src"]);
  const url = `file://${join(dir, "t.tar.gz")}`;
  const base32 = execFileSync("nix-prefetch-url", ["--unpack", url], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  const sri = execFileSync("nix", ["--extra-experimental-features", "nix-command", "hash", "to-sri", "--type", "sha256", base32], { encoding: "utf8" }).trim();
  assert.match(sri, SHA256_RE);
  const fetch = (h: string) => nixEvalJson<number>(`(import (builtins.fetchTarball { url = ${nixStr(url)}; sha256 = ${nixStr(h)}; }) { }).answer`);
  assert.is(fetch(sri), 42);
  assert.is(fetch(base32), 42);
  assert.throws(() => fetch("sha256-" + "B".repeat(43) + "="), /hash mismatch/);
});

test("widest matrix: SM110 aarch64-only on 11.0; SM121 12.1 and SM103 10.3 on CUDA >= 12.9; no SM70/72 on 13.x; versions of the pin", () => {
  const p = projectFromMatrix(widestMatrix());
  const sm110 = p.variants.filter((v) => v.sm === "110");
  assert.ok(sm110.length > 0, "SM110 has variants");
  for (const v of sm110) {
    assert.is(v.system, "aarch64-linux", v.name);
    assert.equal(v.cudaCapabilities, ["11.0"], v.name);
  }
  const ge129 = (c: string | null) => c !== null && c !== "12.6" && c !== "12.8";
  const sm121 = p.variants.filter((v) => v.sm === "121" && ge129(v.cuda));
  const sm103 = p.variants.filter((v) => v.sm === "103" && ge129(v.cuda));
  assert.ok(sm121.length > 0 && sm103.length > 0);
  for (const v of sm121) assert.equal(v.cudaCapabilities, ["12.1"], v.name);
  for (const v of sm103) assert.equal(v.cudaCapabilities, ["10.3"], v.name);
  assert.not.ok(p.variants.some((v) => (v.sm === "70" || v.sm === "72") && v.cuda?.startsWith("13.")));
  assert.ok(p.excluded.some((e) => e.sm === "70" && e.cuda === "13.0" && e.reasons.some((r) => /dropped offline compilation for sm_70/.test(r))));
  const sm75 = p.variants.filter((v) => v.sm === "75");
  assert.ok(sm75.some((v) => v.system === "x86_64-linux") && sm75.some((v) => v.system === "aarch64-linux"), "T4/T4G on both");
  for (const v of p.variants) {
    const pin = catalog.nixpkgs.find((n) => n.rev === v.nixpkgs)!;
    assert.is(v.torchVersion, pin.torch, v.name);
    const on = onTorch(catalog, v.package);
    assert.is(v.version, on ? pin[on.pinField] : pin.torch, v.name);
    assert.ok(v.nixpkgsSha256 && v.nixpkgsSha256 === pin.sha256, v.name);
  }
});

test("widest matrix (list --json): torch 2.12.0 and 2.13.0 variants, whose torchaudio is 2.11.0 built on them, on hashed pins; names unambiguous", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, widestMatrix());
  const r = await runMain(["list", "--json", "--matrix", m]);
  assert.is(r.status, 0, r.stderr);
  const list = JSON.parse(r.stdout) as { name: string; package: string; version: string; torchVersion: string; dependsOn: string[]; nixpkgs: string }[];
  const byName = new Map(list.map((v) => [v.name, v]));
  for (const [torch, tag] of [["2.12.0", "212"], ["2.13.0", "213"]] as const) {
    const tas = list.filter((v) => v.package === "torchaudio" && v.torchVersion === torch);
    assert.ok(tas.length > 0, `torchaudio variants on torch ${torch}`);
    for (const v of tas) {
      assert.is(v.version, "2.11.0", v.name);
      assert.match(v.name, new RegExp(`^torchaudio${tag}-`), "the tag names the torch release");
      assert.is(byName.get(v.dependsOn[0]!)?.version, torch, `${v.name} is built on torch ${torch}`);
      const pin = catalog.nixpkgs.find((p) => p.rev === v.nixpkgs)!;
      assert.is(pin.torch, torch);
      assert.ok(pin.sha256 && pin.sha256Source && pin.source, `${v.name}: a hashed, sourced pin`);
    }
  }
  assert.is(byName.size, list.length, "every name once");
  // The pairing is data: torchaudio 2.11 serves torch >= 2.11, and a release may not name a torchaudio that does not serve it.
  const ta = releaseOf(packageOnTorch(catalog, "torchaudio"), "2.11.0")!;
  assert.ok(releaseServes(ta, "2.12.0") && releaseServes(ta, "2.11.0") && !releaseServes(ta, "2.10.0"));
  const bad = { ...catalog, torch: catalog.torch.map((t) => (t.version === "2.10.0" ? { ...t, torchaudio: "2.11.0" } : t)) };
  assert.throws(() => checkPairings(bad), /PyTorch 2\.10\.0 pairs torchaudio 2\.11\.0 with torch 2\.10\.0, but torchaudio 2\.11\.0 serves torch >= 2\.11/);
});

test("every pin records where its hash was read, and which of its facts were inferred rather than read", () => {
  for (const p of catalog.nixpkgs) {
    if (p.sha256) assert.ok(p.sha256Source && p.sha256Source.length > 10, p.rev);
    for (const [k, why] of Object.entries(p.inferred)) {
      assert.ok(k in p, `${p.rev}: inferred names a field of the pin (${k})`);
      assert.ok(why.length > 10, `${p.rev}: inferred.${k} says how`);
    }
  }
  const doc = readFileSync(join(ROOT, "BUILD_MATRIX.md"), "utf8");
  const a311 = catalog.nixpkgs.find((p) => p.rev.startsWith("a311611"))!;
  assert.ok(doc.includes(a311.inferred.torch!.slice(0, 40)), "BUILD_MATRIX.md shows how a311611's torch was inferred");
});

test("stand-in pins agree with the catalog (versions, Python and CUDA sets, CUDA majors torch accepts, recursed Python sets)", () => {
  const pins = nixEvalJson<Record<string, { torch: string; torchaudio: string; python: string[]; cuda: string[]; cudaMajors: string[]; recursedPython: string[] }>>(
    `import ${nixPath(join(STAND_IN_NIXPKGS, "pins.nix"))}`,
  );
  assert.equal(Object.keys(pins).sort(), catalog.nixpkgs.map((p) => p.rev).sort());
  for (const p of catalog.nixpkgs) {
    const s = pins[p.rev]!;
    assert.is(s.torch, p.torch, p.rev);
    assert.is(s.torchaudio, p.torchaudio, p.rev);
    assert.equal(s.python, p.python, p.rev);
    assert.equal(s.cuda, p.cuda, p.rev);
    assert.equal(s.recursedPython, p.recursedPython, `${p.rev} recursedPython`);
    for (const c of catalog.cuda.map((c) => c.version))
      assert.is(c in p.brokenCuda, !s.cudaMajors.includes(c.split(".")[0]!), `${p.rev} CUDA ${c} broken`);
  }
});

const standIn = (pin: string, overlays = "[ ]") =>
  `(import ${nixPath(STAND_IN_NIXPKGS)} { config.allowUnfree = true; overlays = ${overlays}; standIn.pin = ${nixStr(pin)}; })`;

test("stand-in: an override argument the real torch lacks fails as in nixpkgs (every era); real ones pass", () => {
  for (const p of catalog.nixpkgs) {
    const py = `python${p.python.at(-1)!.replace(".", "")}Packages`;
    const torch = `${standIn(p.rev)}.${py}.torch`;
    assert.match(nixEvalJson<string>(`(${torch}.override { cudaSupport = false; gpuTargets = [ ]; }).name`), /torch/);
    assert.throws(
      () => nixEvalJson(`(${torch}.override { gpuTarget = [ "9.0" ]; }).name`),
      /called with unexpected argument 'gpuTarget'/,
      `${p.rev}: misspelled gpuTargets`,
    );
    const ta = `${standIn(p.rev)}.${py}.torchaudio`;
    assert.throws(() => nixEvalJson(`(${ta}.override { pytorch = null; }).name`), /unexpected argument 'pytorch'/);
  }
});

test("stand-in: only the pin's package sets exist; torch refuses a CUDA major its brokenConditions reject", () => {
  const old = catalog.nixpkgs.find((p) => p.rev.startsWith("0182a36"))!;
  const names = nixEvalJson<string[]>(`builtins.attrNames ${standIn(old.rev)}`);
  assert.ok(names.includes("python313Packages") && !names.includes("python314Packages"), "no python314Packages at 0182a36");
  assert.ok(names.includes("cudaPackages_12_9") && !names.includes("cudaPackages_13_0"));
  const cuda13 = catalog.nixpkgs.find((p) => p.cuda.includes("13.0") && "13.0" in p.brokenCuda)!;
  const ov = `[ (f: p: { cudaPackages = f.cudaPackages_13_0; }) ]`;
  assert.throws(
    () => nixEvalJson(`(${standIn(cuda13.rev, ov)}.python313Packages.torch.override { cudaSupport = true; }).drvPath`),
    /marked as broken.*Unsupported CUDA version/,
  );
});

test("the default matrix documents the pins: BUILD_MATRIX.md shows each pin's hash and its source", () => {
  const doc = readFileSync(join(ROOT, "BUILD_MATRIX.md"), "utf8");
  for (const p of catalog.nixpkgs) {
    assert.ok(doc.includes(p.rev), p.rev);
    if (p.sha256) assert.ok(doc.includes(p.sha256), `${p.rev}: hash shown`);
  }
  assert.ok(existsSync(join(ROOT, "docs/matrix/pytorch-2.12.0-cuda-13.0.md")));
  assert.match(readFileSync(join(ROOT, "docs/matrix/pytorch-2.12.0-cuda-13.0.md"), "utf8"), /sm110|SM110/);
});

test.run();
