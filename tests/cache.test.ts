// Know before you build. The real list comes from Nix (`build --dry-run --ask-store`: nix-store --realise
// --dry-run with the user's substituters, here a local file:// binary cache holding part of a variant's closure);
// `--skip-cached` skips what a substituter holds; without Nix's answer, the cache model of catalog/binary-cache.ts
// names what the NixOS-CUDA Hydra's jobs do not build (its jobs: the cudaSupport-sensitive attributes of the sets CI
// evaluation recurses into), checked against a stand-in of that jobset run over the stand-in nixpkgs. The nixpkgs is the stand-in (NOT nixpkgs), whose
// torch has the inputs the real one's closure has (static nccl, magma, libnvshmem, triton), with a salt so that this
// file's store paths are its own.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { CUDA_CACHE, REBUILD_SECONDS } from "../generator/catalog/binary-cache.ts";
import { modelCacheMisses } from "../generator/model/cache-model.ts";
import { parseDryRun, storeName } from "../generator/driver/store.ts";
import { nixpkgsInstanceKey } from "../generator/matrix/expand.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { importVariant, nixStoreDelete, STAND_IN_BUILDER_FEATURES, STAND_IN_NIXPKGS } from "./helpers/nix.ts";
import { WRAPPER_NIXPKGS_ARG } from "../generator/generate/render/index.ts";

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
/**
 * Build `drvs`, push their outputs to a file:// cache, and delete them from the store: only the cache has them. One
 * nix-store builds them all (--keep-going: each it can); with `failed`, a derivation whose outputs are not valid after it
 * (its build failed, or one it depends on) is left out and recorded there (as a Hydra's failed job); without, a failure
 * throws. Returns the outputs pushed.
 */
function intoCacheOnly(drvs: string[], cache: string, failed?: string[]) {
  try {
    nix("nix-store", ["--realise", "--keep-going", ...drvs, "--option", "substituters", "", ...STAND_IN_BUILDER_FEATURES]);
  } catch (e) {
    if (!failed) throw e;
  }
  const shown = JSON.parse(nix("nix", ["--extra-experimental-features", "nix-command", "show-derivation", ...drvs])) as Record<string, { outputs: Record<string, { path: string }> }>;
  const outputsOf = (d: string) => Object.values(shown[d]!.outputs).map((o) => o.path);
  const invalid = (paths: string[]) => new Set(nix("nix-store", ["--check-validity", "--print-invalid", ...paths]).split("\n").filter(Boolean));
  const unbuilt = invalid(drvs.flatMap(outputsOf));
  const outs: string[] = [];
  for (const d of drvs) {
    if (!outputsOf(d).some((o) => unbuilt.has(o))) outs.push(...outputsOf(d));
    else if (failed) failed.push(d);
    else throw new Error(`${d}: built, yet an output is not valid`);
  }
  nix("nix", ["--extra-experimental-features", "nix-command", "copy", "--to", `file://${cache}`, ...outs]);
  // All at once; where one is still alive (nothing deletes then), each on its own, as nixStoreDelete does.
  try {
    nix("nix-store", ["--delete", ...outs]);
  } catch {
    nixStoreDelete(outs);
  }
  const gone = invalid(outs);
  for (const o of outs) assert.ok(gone.has(o), `${o} is gone from the store`);
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

test("build --dry-run --ask-store: with part of the closure in a local binary cache, Nix's own to-build and to-fetch lists, shared ones once", async () => {
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

  const r = await runMain(["build", TA, "--dry-run", "--ask-store", "--no-verify", "--json", "--backend", "nix", "--pkgs-dir", dir, ...substituterOptions(cache)]);
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

  const text = await runMain(["build", PT, "--dry-run", "--ask-store", "--no-verify", "--backend", "nix", "--pkgs-dir", dir, ...substituterOptions(cache)]);
  assert.match(text.stdout, /Nix \(nix-store --realise --dry-run, your substituters\) for 1 variant\(s\): \d+ derivation\(s\) to build, 3 path\(s\) to fetch/);
  assert.match(text.stdout, new RegExp(`Nix: builds \\d+ \\(.*${PT}-2\\.12\\.0.*\\), fetches 3`));
});

test("build --skip-cached: a variant a substituter holds is not built, and the report says substituted; the rest builds", async () => {
  const dir = pkgsDir([PT, TA]);
  const cache = tempDir("vm-cache-bin-");
  const ptDrv = nix("nix-instantiate", [join(dir, `${PT}.nix`)]);
  intoCacheOnly([ptDrv], cache);
  const work = tempDir("vm-cache-run-");
  const r = await runMain([
    "build", PT, TA, "--skip-cached", "--no-verify", "--json", "--backend", "nix", "--pkgs-dir", dir, "--out-dir", work, "--logs-dir", join(work, "logs"),
    "--substituters", `file://${cache}`, "--nix-option", "require-sigs=false",
    "--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`,
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

test("the model (no Nix): a non-default CUDA set's NCCL, NVSHMEM and MAGMA and triton; triton for a set CI does not recurse into; a closure on aarch64; each once", () => {
  const pin = catalog.nixpkgs.find((p) => p.rev === PIN)!;
  assert.is(pin.defaultCuda, "12.9");
  assert.equal(pin.recursedPython, ["3.13", "3.14"]);
  const v = (name: string, python: string, cuda: string, system: "x86_64-linux" | "aarch64-linux" = "x86_64-linux") => ({
    name, system, python, cuda, nixpkgs: PIN, cudaCapabilitiesForPackageSet: false, nixpkgsKey: `${PIN}|${system}|${cuda}`,
  });
  const m = modelCacheMisses(
    [v("a", "3.13", "12.9"), v("a2", "3.14", "12.9"), v("b", "3.13", "12.8"), v("b2", "3.14", "12.8"), v("c", "3.12", "12.9"), v("d", "3.13", "12.9", "aarch64-linux")],
    catalog,
  );
  assert.equal(m.reasons.get("a"), [], "python313Packages is recursed at 2c423e0 (not the default Python): the cache serves it all");
  assert.equal(m.reasons.get("a2"), []);
  const whats = (n: string) => m.builds.filter((b) => b.variants.includes(n)).map((b) => b.what).sort();
  assert.equal(whats("b"), ["magma", "nccl", "nvshmem", "triton"], "CUDA 12.8: every library torch links from that set, and triton");
  assert.equal(m.builds.filter((b) => b.what === "nccl").map((b) => b.variants), [["b", "b2"]], "NCCL once for both Pythons");
  assert.match(m.reasons.get("b")!.join("\n"), /nccl: cudaPackages_12_8 is not the default cudaPackages at 2c423e0 \(CUDA 12\.9\)/);
  assert.match(m.reasons.get("b")!.join("\n"), /libnvshmem: cudaPackages_12_8/);
  assert.match(m.reasons.get("b")!.join("\n"), /magma-cuda-static: cudaPackages_12_8/);
  assert.equal(whats("c"), ["triton"]);
  assert.match(m.reasons.get("c")!.join(" "), /triton: python312Packages is not a set nixpkgs' CI evaluation recurses into at 2c423e0 \(python313Packages, python314Packages\)/);
  assert.match(m.reasons.get("d")!.join(" "), new RegExp(`${CUDA_CACHE.name} builds CUDA packages for x86_64-linux only, not aarch64-linux`));
  assert.is(m.builds.find((b) => b.what === "magma")!.seconds, REBUILD_SECONDS.magma.seconds);
  for (const b of m.builds) assert.ok(b.source.length > 20, `${b.what}: a source`);
  // A pin whose recursed sets are not known: triton counts as built, and the reason says why.
  const unknown = modelCacheMisses([v("e", "3.13", "12.9")], { ...catalog, nixpkgs: catalog.nixpkgs.map((p) => (p.rev === PIN ? { ...p, recursedPython: null } : p)) });
  assert.match(unknown.reasons.get("e")!.join(" "), /which Python sets nixpkgs' CI evaluation recurses into at 2c423e0 is not known/);
});

test("the model agrees with a stand-in of the NixOS-CUDA Hydra's jobset run over the stand-in nixpkgs (CUDA 12.8 and 12.9, Python 3.12 and 3.13)", async () => {
  const pin = catalog.nixpkgs.find((p) => p.rev === PIN)!;
  const nixpkgsFn = `(args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${PIN}"; salt = "${salt}-hydra"; }; }))`;
  // The jobs: attribute paths whose outputs change when cudaSupport flips, in the sets CI evaluation recurses into.
  const sim = `import ${join(ROOT, "tests/fixtures/stand-in-hydra/cuda-packages.nix")} { nixpkgs = ${nixpkgsFn}; defaultCuda = "${pin.defaultCuda}"; }`;
  const jobNames = JSON.parse(nix("nix-instantiate", ["--eval", "--strict", "--json", "-E", `(${sim}).jobNames`])) as string[];
  assert.ok(jobNames.includes("python313Packages.torch") && jobNames.includes("python314Packages.torch"), jobNames.join(", "));
  assert.not.ok(jobNames.some((j) => j.startsWith("python312Packages.") || j.startsWith("python3Packages.")), "sets CI does not recurse into give no job");
  assert.not.ok(jobNames.some((j) => j.startsWith("cudaPackages")), "no CUDA set member reads cudaSupport");
  const jobDrvs = nix("nix-instantiate", ["-E", `(${sim}).jobs`]).split("\n").filter(Boolean);
  // What the cache holds: every job's build closure (the Hydra builds it; harmonia serves its store).
  const cached = new Set(nix("nix-store", ["--query", "--requisites", ...jobDrvs]).split("\n").filter((p) => p.endsWith(".drv")));

  // Variants of a matrix with both CUDA sets and both Pythons, generated into a tree of their own.
  const out = tempDir("vm-hydra-");
  cpSync(join(ROOT, "pkgs"), join(out, "pkgs"), { recursive: true });
  const matrix = { releases: [{ torch: "2.12.0", nixpkgs: PIN }], python: ["3.12", "3.13"], cuda: ["12.8", "12.9"], gpus: ["90"], isas: ["avx2"], cpuOnly: false, packages: ["pytorch"] };
  const m = writeMatrix(out, matrix);
  const g = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(g.status, 0, g.stderr);
  const p = projectFromMatrix(matrix);
  // The stand-in's derivation names of what the model counts (its nccl has a static output of its own name).
  const standInNames = (what: string, python: string) =>
    ({ nccl: ["nccl-stand-in", "nccl-stand-in-static"], nvshmem: ["libnvshmem-stand-in"], magma: ["magma-stand-in"], triton: [`python${python}-triton-stand-in`] })[what] ?? [what];
  const deps = new Set(["nccl-stand-in", "nccl-stand-in-static", "libnvshmem-stand-in", "magma-stand-in", "python3.12-triton-stand-in", "python3.13-triton-stand-in"]);
  const seen: Record<string, string[]> = {};
  for (const v of p.variants) {
    assert.is(v.system, "x86_64-linux", "the Hydra's system");
    const drv = nix("nix-instantiate", ["-E", importVariant(join(out, v.file), nixpkgsFn)]);
    const built = requisiteDrvs(drv).filter((d) => !cached.has(d)).map((d) => storeName(d).replace(/\.drv$/, "")).filter((n) => deps.has(n)).sort();
    const model = modelCacheMisses([{ ...v, nixpkgsKey: nixpkgsInstanceKey(v) }], catalog).builds.flatMap((b) => standInNames(b.what, v.python)).sort();
    assert.equal(model, built, `${v.name}: the model says ${model.join(", ") || "nothing"}; the Hydra's closures leave ${built.join(", ") || "nothing"}`);
    seen[v.name] = built;
  }
  // CUDA 12.8, a versioned set no Hydra job builds with: NCCL (not magma alone) is built off the cache.
  assert.equal(seen["pytorch-python313-cuda12_8-sm90-avx2"], ["libnvshmem-stand-in", "magma-stand-in", "nccl-stand-in", "nccl-stand-in-static", "python3.13-triton-stand-in"]);
  assert.equal(seen["pytorch-python313-cuda12_9-sm90-avx2"], []);
  assert.equal(seen["pytorch-python312-cuda12_9-sm90-avx2"], ["python3.12-triton-stand-in"]);
});

test("pin cache: the model against a binary cache that the stand-in Hydra filled: every answer agrees; a cache holding more is caught", async () => {
  // A checkout of the stand-in nixpkgs (NOT nixpkgs) of the default pin, salted so its store paths are this test's.
  const checkout = join(tempDir("vm-pin-cache-"), "nixpkgs");
  mkdirSync(checkout);
  writeFileSync(join(checkout, "default.nix"), `args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${PIN}"; salt = "${salt}-pin-cache"; }; })\n`);
  writeFileSync(join(checkout, ".git-revision"), `${PIN}\n`);
  // The Hydra's jobs, built, their whole build closures pushed to a file:// cache, and deleted from the local store.
  const sim = `import ${join(ROOT, "tests/fixtures/stand-in-hydra/cuda-packages.nix")} { nixpkgs = import ${checkout}; defaultCuda = "12.9"; }`;
  const jobDrvs = nix("nix-instantiate", ["-E", `(${sim}).jobs`]).split("\n").filter(Boolean);
  const closure = nix("nix-store", ["--query", "--requisites", ...jobDrvs]).split("\n").filter((p) => p.endsWith(".drv"));
  const cache = tempDir("vm-hydra-cache-");
  const failed: string[] = [];
  intoCacheOnly(closure, cache, failed);
  // The jobs that fail at this pin, as on the real Hydra: nixpkgs' flash-attn (pname "flash-attention") fails
  // pythonMetadataCheckPhase until NixOS/nixpkgs#561201; the stand-in models the hook. Nothing torch links is among them.
  assert.ok(failed.length > 0 && failed.every((d) => /-python3\.\d+-flash-attention-/.test(d)), failed.join(", "));
  const ask = () =>
    runMain(["pin", "cache", "--no-fetch", "--nixpkgs", `${PIN}=${checkout}`, "--substituter", `file://${cache}`, "--nix-option", "require-sigs=false", "--json"]);
  const r = await ask();
  assert.is(r.status, 0, r.stdout + r.stderr);
  const checked = (JSON.parse(r.stdout) as { rev: string; status: string; answers?: { python: string; cuda: string; input: string; drv: string; cached: boolean; modelCached: boolean }[] }[]).find((x) => x.status === "checked")!;
  assert.is(checked.rev, PIN);
  const answers = checked.answers!;
  const at = (python: string, cuda: string) => Object.fromEntries(answers.filter((a) => a.python === python && a.cuda === cuda).map((a) => [a.input, a.cached]));
  assert.equal(at("3.13", "12.9"), { nccl: true, nvshmem: true, magma: true, triton: true }, "a recursed set with the default CUDA set: all cached");
  assert.equal(at("3.12", "12.9"), { nccl: true, nvshmem: true, magma: true, triton: false }, "python312Packages is not recursed: its triton is not");
  assert.equal(at("3.13", "12.8"), { nccl: false, nvshmem: false, magma: false, triton: false }, "cudaPackages_12_8: nothing torch links from it");
  for (const a of answers) assert.is(a.cached, a.modelCached, `${a.python} ${a.cuda} ${a.input}`);
  // A cache that also holds cudaPackages_12_8's NCCL (as if some job built with it): the model is contradicted, exit 1.
  const nccl128 = answers.find((a) => a.python === "3.13" && a.cuda === "12.8" && a.input === "nccl")!.drv;
  intoCacheOnly([nccl128], cache);
  const wrong = await runMain(["pin", "cache", "--no-fetch", "--nixpkgs", `${PIN}=${checkout}`, "--substituter", `file://${cache}`, "--nix-option", "require-sigs=false"]);
  assert.is(wrong.status, 1, wrong.stdout + wrong.stderr);
  assert.match(wrong.stdout, /✗ python313Packages, CUDA 12\.8: nccl cached \(model: built\)/);
});

test("without --ask-store the dry run and explain say what the cache cannot serve (offline, from the catalog)", async () => {
  const r = await runMain(["build", "--dry-run", "--json", "--filter", "sm=90", "--filter", "isa=avx2", "--backend", "nix"]);
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { store: unknown; cacheModel: { what: string; key: string; variants: string[] }[]; variants: { name: string; offCache: string[] }[] };
  assert.is(out.store, null);
  for (const what of ["magma", "nccl", "nvshmem"]) {
    const b = out.cacheModel.filter((x) => x.what === what);
    assert.equal(b.map((x) => x.key.split("|").at(-1)).sort(), ["12.8", "13.0"], `${what} for the two non-default CUDA sets, once each`);
  }
  assert.equal(out.cacheModel.filter((b) => b.what === "triton").map((b) => b.key.split("|").at(-1)).sort(), ["12.8", "13.0"], "triton for the non-default sets only: python313Packages is recursed");
  const row = (n: string) => out.variants.find((v) => v.name === n)!;
  assert.equal(row("pytorch-python313-cuda12_9-sm90-avx2").offCache, [], "default CUDA set, a recursed Python set: the cache serves the rest");
  assert.ok(row("pytorch-python313-cuda12_8-sm90-avx2").offCache.length === 4);
  const e = await runMain(["explain", "torchaudio-python313-cuda12_8-sm121-armv9"]);
  assert.match(e.stdout, /note: off the binary cache: .*builds CUDA packages for x86_64-linux only, not aarch64-linux/);
  const x = await runMain(["explain", "pytorch-python313-cuda12_8-sm90-avx2"]);
  assert.match(x.stdout, /note: off the binary cache: nccl: cudaPackages_12_8 is not the default cudaPackages at 2c423e0 \(CUDA 12\.9\); cache\.nixos-cuda\.org holds what the NixOS-CUDA Hydra's jobs build/);
  assert.match(x.stdout, /note: off the binary cache: libnvshmem: /);
  assert.match(x.stdout, /note: off the binary cache: magma-cuda-static: /);
  assert.match(x.stdout, /note: off the binary cache: triton: cudaPackages_12_8 is not the default/);
  assert.not.match((await runMain(["explain", "pytorch-python313-cuda12_9-sm90-avx2"])).stdout, /off the binary cache/);
});

test("eval --ask-store: Nix's to-build and to-fetch lists per evaluated derivation, the union once", async () => {
  const cache = tempDir("vm-cache-bin-");
  const salted = `(args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${PIN}"; salt = "${salt}-eval"; }; }))`;
  // Put torch's magma in the cache only (found through the pytorch variant's drv, as eval evaluates it).
  const first = await runMain(["eval", PT, "--json", "--nixpkgs", salted]);
  assert.is(first.status, 0, first.stderr);
  const ptDrv = (JSON.parse(first.stdout.split("\n")[0]!) as { drvPath: string }).drvPath;
  const magma = requisiteDrvs(ptDrv).filter((d) => /^magma-/.test(storeName(d)));
  intoCacheOnly(magma, cache);
  const r = await runMain(["eval", PT, TA, "--json", "--ask-store", "--nixpkgs", salted, ...substituterOptions(cache)]);
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
