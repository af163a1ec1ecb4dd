// Issue 25: know before you build. The real list comes from Nix (`build --dry-run --probe-store`: nix-store --realise
// --dry-run with the user's substituters, here a local file:// binary cache holding part of a variant's closure);
// `--skip-cached` skips what a substituter holds; without Nix's answer, the cache model of catalog/binary-cache.ts
// names magma and triton for a non-default CUDA set or Python. The nixpkgs is the stand-in (NOT nixpkgs), whose
// torch has the inputs the real one's closure has (static nccl, magma, libnvshmem, triton), with a salt so that this
// file's store paths are its own.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { CUDA_CACHE, REBUILD_SECONDS } from "../generator/catalog/binary-cache.ts";
import { modelCacheMisses } from "../generator/driver/cache-model.ts";
import { parseDryRun, storeName } from "../generator/driver/store.ts";
import { ROOT, runCli, tempDir } from "./helpers/cli.ts";
import { nixStoreDelete, STAND_IN_NIXPKGS } from "./helpers/nix.ts";
import { WRAPPER_NIXPKGS_ARG } from "../generator/render/index.ts";

const PIN = "2c423e03bbafcff28bfadc6781a4a8257f205cb5"; // the default matrix's pin: default CUDA 12.9, default Python 3.14
const PT = "pytorch-python313-cuda12_9-sm90-avx2";
const TA = "torchaudio-python313-cuda12_9-sm90-avx2";
const salt = `cache-test-${process.pid}-${Date.now()}`;

/** A --pkgs-dir whose NAME.nix is the generated variant file on the stand-in of PIN (with this file's salt). */
function pkgsDir(names: string[]): string {
  const dir = join(tempDir("vm-cache-"), "pkgs");
  mkdirSync(dir);
  for (const n of names)
    writeFileSync(
      join(dir, `${n}.nix`),
      `{ }: import ${join(ROOT, ".flox/pkgs", `${n}.nix`)} {\n` +
        `  ${WRAPPER_NIXPKGS_ARG} = args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${PIN}"; salt = "${salt}"; }; });\n}\n`,
    );
  return dir;
}

const nix = (tool: string, args: string[]) => execFileSync(tool, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const requisiteDrvs = (drv: string) => nix("nix-store", ["--query", "--requisites", drv]).split("\n").filter((p) => p.endsWith(".drv"));
/** Build `drvs`, push their outputs to a file:// cache, and delete them from the store: only the cache has them. */
function intoCacheOnly(drvs: string[], cache: string) {
  const outs = drvs.flatMap((d) => nix("nix-store", ["--realise", d, "--option", "substituters", ""]).split("\n"));
  nix("nix", ["--extra-experimental-features", "nix-command", "copy", "--to", `file://${cache}`, ...outs]);
  nixStoreDelete(outs);
  for (const o of outs) assert.throws(() => nix("nix-store", ["--check-validity", o]), undefined, `${o} is gone from the store`);
  return outs;
}
const substituterOptions = (cache: string) => ["--nix-option", `substituters=file://${cache}`, "--nix-option", "require-sigs=false"];

test("parseDryRun reads Nix's printMissing report (plural, singular, fetched, unknown, unreachable substituters)", () => {
  const s = [
    "warning: unable to download 'https://cache.example/nix-cache-info': Couldn't resolve host name (6)",
    "these 2 derivations will be built:",
    "  /nix/store/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-magma-2.9.0.drv",
    "  /nix/store/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-python3.13-torch-2.12.0.drv",
    "this path will be fetched (0.01 MiB download, 0.05 MiB unpacked):",
    "  /nix/store/cccccccccccccccccccccccccccccccc-nccl-2.30.7",
    "don't know how to build these paths:",
    "  /nix/store/dddddddddddddddddddddddddddddddd-x",
  ].join("\n");
  const r = parseDryRun(s);
  assert.equal(r.toBuild.map(storeName), ["magma-2.9.0", "python3.13-torch-2.12.0"]);
  assert.equal(r.toFetch.map(storeName), ["nccl-2.30.7"]);
  assert.equal(r.unknown.map(storeName), ["x"]);
  assert.equal(r.unreachable, ["https://cache.example"]);
  assert.equal(parseDryRun("this derivation will be built:\n  /nix/store/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-y.drv\n").toBuild.length, 1);
});

test("build --dry-run --probe-store: with part of the closure in a local binary cache, Nix's own to-build and to-fetch lists, shared ones once", () => {
  const dir = pkgsDir([PT, TA]);
  const cache = tempDir("vm-cache-bin-");
  const ptDrv = nix("nix-instantiate", [join(dir, `${PT}.nix`)]);
  const deps = requisiteDrvs(ptDrv);
  const named = (re: RegExp) => deps.filter((d) => re.test(storeName(d)));
  const magma = named(/^magma-/);
  const nccl = named(/^nccl-/);
  assert.is(magma.length, 1, "torch's closure holds a static magma");
  assert.is(nccl.length, 2, "nccl and its static output");
  assert.is(named(/-triton-/).length, 1, "and triton");
  intoCacheOnly([...magma, ...nccl], cache);

  const r = runCli(["build", TA, "--dry-run", "--probe-store", "--json", "--backend", "nix", "--pkgs-dir", dir, ...substituterOptions(cache)]);
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    store: { toBuild: string[]; toFetch: string[]; answered: number };
    variants: { name: string; store: { toBuild: string[]; toFetch: string[] } }[];
  };
  const pt = out.variants.find((v) => v.name === PT)!.store;
  const ta = out.variants.find((v) => v.name === TA)!.store;
  const fetched = [...magma, ...nccl].map(storeName).sort();
  assert.equal([...pt.toFetch].sort(), fetched, "what the cache holds is fetched");
  for (const n of fetched) assert.not.ok(pt.toBuild.includes(n), `${n} is not built`);
  // The variants' derivations are named after them (pkgs/variant-attrs.nix): PT-2.12.0, TA-2.11.0.
  const torch = `${PT}-2.12.0`;
  assert.ok(pt.toBuild.includes(torch) && pt.toBuild.some((n) => /triton/.test(n)), pt.toBuild.join(", "));
  assert.ok(ta.toBuild.includes(torch) && ta.toBuild.includes(`${TA}-2.11.0`), ta.toBuild.join(", "));
  // Across the selection torch (needed by both) is counted once.
  assert.is(out.store.answered, 2);
  assert.is(out.store.toBuild.filter((n) => n === torch).length, 1);
  assert.equal(out.store.toBuild, [...new Set([...pt.toBuild, ...ta.toBuild])]);
  assert.equal([...out.store.toFetch].sort(), fetched);

  const text = runCli(["build", PT, "--dry-run", "--probe-store", "--backend", "nix", "--pkgs-dir", dir, ...substituterOptions(cache)]);
  assert.match(text.stdout, /Nix \(nix-store --realise --dry-run, your substituters\) for 1 variant\(s\): \d+ derivation\(s\) to build, 3 path\(s\) to fetch/);
  assert.match(text.stdout, new RegExp(`Nix: builds \\d+ \\(.*${PT}-2\\.12\\.0.*\\), fetches 3`));
});

test("build --skip-cached: a variant a substituter holds is not built, and the report says substituted; the rest builds", () => {
  const dir = pkgsDir([PT, TA]);
  const cache = tempDir("vm-cache-bin-");
  const ptDrv = nix("nix-instantiate", [join(dir, `${PT}.nix`)]);
  intoCacheOnly([ptDrv], cache);
  const work = tempDir("vm-cache-run-");
  const r = runCli([
    "build", PT, TA, "--skip-cached", "--json", "--backend", "nix", "--pkgs-dir", dir, "--out-dir", work, "--logs-dir", join(work, "logs"),
    "--substituters", `file://${cache}`, "--nix-option", "require-sigs=false",
  ]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const rep = JSON.parse(r.stdout) as { variants: { name: string; status: string; origin: string | null; attempts: number; reason: string | null }[] };
  const pt = rep.variants.find((v) => v.name === PT)!;
  assert.is(pt.status, "cached");
  assert.is(pt.origin, "substituted");
  assert.is(pt.attempts, 0, "nothing ran for it");
  assert.match(pt.reason!, /--skip-cached/);
  assert.is((pt as { log?: string | null }).log, null, "no build log: its command never ran");
  const ta = rep.variants.find((v) => v.name === TA)!;
  assert.is(ta.status, "built");
  assert.ok(ta.attempts >= 1);
});

test("the model (no Nix): magma for a CUDA set other than the pin's default, triton for another Python, a closure on aarch64; each once", () => {
  const pin = catalog.nixpkgs.find((p) => p.rev === PIN)!;
  assert.is(pin.defaultCuda, "12.9");
  assert.is(pin.defaultPython, "3.14");
  const v = (name: string, python: string, cuda: string, system: "x86_64-linux" | "aarch64-linux" = "x86_64-linux") => ({
    name, system, python, cuda, nixpkgs: PIN, cudaCapabilitiesForPackageSet: false, nixpkgsKey: `${PIN}|${system}|${cuda}`,
  });
  const m = modelCacheMisses(
    [v("a", "3.14", "12.9"), v("b", "3.14", "12.8"), v("b2", "3.14", "12.8"), v("c", "3.13", "12.9"), v("d", "3.13", "12.9", "aarch64-linux")],
    catalog.nixpkgs,
  );
  assert.equal(m.reasons.get("a"), [], "default Python and CUDA set on x86_64: the cache serves it all");
  assert.equal(m.builds.filter((b) => b.what === "magma").map((b) => b.variants), [["b", "b2"]], "magma once for both");
  assert.match(m.reasons.get("b")![0]!, /magma: cudaPackages_12_8 is not the default cudaPackages at 2c423e0 \(CUDA 12\.9\)/);
  assert.match(m.reasons.get("c")!.join(" "), /triton: python313Packages is not the default Python at 2c423e0 \(3\.14\)/);
  assert.not.match(m.reasons.get("c")!.join(" "), /magma/);
  assert.match(m.reasons.get("d")!.join(" "), new RegExp(`${CUDA_CACHE.name} builds CUDA packages for x86_64-linux only, not aarch64-linux`));
  assert.is(m.builds.find((b) => b.what === "magma")!.seconds, REBUILD_SECONDS.magma.seconds);
  for (const b of m.builds) assert.ok(b.source.length > 20, `${b.what}: a source`);
});

test("without --probe-store the dry run and explain say what the cache cannot serve (offline, from the catalog)", () => {
  const r = runCli(["build", "--dry-run", "--json", "--filter", "sm=90", "--filter", "isa=avx2", "--backend", "nix"]);
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { store: unknown; cacheModel: { what: string; key: string; variants: string[] }[]; variants: { name: string; offCache: string[] }[] };
  assert.is(out.store, null);
  const magma = out.cacheModel.filter((b) => b.what === "magma");
  assert.equal(magma.map((b) => b.key.split("|").at(-1)).sort(), ["12.8", "13.0"], "magma for the two non-default CUDA sets, once each");
  assert.is(out.cacheModel.filter((b) => b.what === "triton").length, 3, "triton per CUDA set (Python 3.13 is not 3.14)");
  for (const row of out.variants) assert.ok(row.offCache.length > 0, row.name);
  const e = runCli(["explain", "torchaudio-python313-cuda12_8-sm121-armv9"]);
  assert.match(e.stdout, /note: off the binary cache: .*builds CUDA packages for x86_64-linux only, not aarch64-linux/);
  const x = runCli(["explain", "pytorch-python313-cuda12_8-sm90-avx2"]);
  assert.match(x.stdout, /note: off the binary cache: magma: cudaPackages_12_8 is not the default/);
  assert.match(x.stdout, /note: off the binary cache: triton: python313Packages is not the default Python/);
});

test("eval --probe-store: Nix's to-build and to-fetch lists per evaluated derivation, the union once", () => {
  const cache = tempDir("vm-cache-bin-");
  const salted = `(args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${PIN}"; salt = "${salt}-eval"; }; }))`;
  // Put torch's magma in the cache only (found through the pytorch variant's drv, as eval evaluates it).
  const first = runCli(["eval", PT, "--json", "--nixpkgs", salted]);
  assert.is(first.status, 0, first.stderr);
  const ptDrv = (JSON.parse(first.stdout.split("\n")[0]!) as { drvPath: string }).drvPath;
  const magma = requisiteDrvs(ptDrv).filter((d) => /^magma-/.test(storeName(d)));
  intoCacheOnly(magma, cache);
  const r = runCli(["eval", PT, TA, "--json", "--probe-store", "--nixpkgs", salted, ...substituterOptions(cache)]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, any>);
  const rows = lines.filter((l) => l.store && l.store.name).map((l) => l.store as { name: string; toBuild: string[]; toFetch: string[] });
  assert.equal(rows.map((x) => x.name).sort(), [PT, TA].sort());
  for (const row of rows) {
    assert.equal(row.toFetch, magma.map(storeName), `${row.name}: magma from the cache`);
    assert.ok(row.toBuild.includes(`${PT}-2.12.0`), `${row.name} builds the torch`);
  }
  const sum = lines.at(-1)!;
  assert.is(sum.store.toBuild.filter((n: string) => n === `${PT}-2.12.0`).length, 1, "torch once across both");
  assert.equal(sum.store.toFetch, magma.map(storeName));
});

test.run();
