/**
 * Contract tests between the generated `.flox/pkgs` files, the builders in `pkgs/` and nixpkgs, run with the REAL
 * `nix-instantiate` / `nix-build` against the STAND-IN nixpkgs of tests/fixtures/stand-in-nixpkgs (offline, seconds).
 *
 * For every case (a pytorch variant file, the torchaudio file built against it, and their `list --json` entries):
 * - the variant data in the files matches the `list --json` entries;
 * - nixpkgs was imported with the variant's system and config (allowUnfree, cudaSupport, cudaForwardCompat = false,
 *   cudaCapabilities exactly when the variant asks for the whole package set), with the cudaPackages overlay for CUDA
 *   (`cudaPackages` resolved to the variant's versioned set) and none for CPU-only;
 * - torch and torchaudio came from the variant's Python set (python313Packages, never python3Packages), torch was
 *   overridden with cudaSupport and gpuTargets = the capabilities, torchaudio with exactly the pytorch file's torch
 *   (same drvPath; its .drv depends on that .drv);
 * - NIX_CFLAGS_COMPILE keeps what nixpkgs set and ends with the ISA flags; TORCH_CUDA_ARCH_LIST is the capabilities
 *   joined with ";" for torch AND torchaudio (also when config.cudaCapabilities is not set); pname and name carry
 *   the variant name; meta.platforms = [ system ]; passthru.variant is the file's data;
 * - a real `nix-build` of the cases for this machine's system runs the hooks the builder added: MAX_JOBS equals
 *   NIX_BUILD_CORES inside the build, for two different `--cores` values.
 * Plus: every pkgs/*.nix, .flox/pkgs/*.nix and fixture parses; the builders refuse a nixpkgs whose torch version
 * differs from the variant's, a torch variant that does not match the torchaudio variant, and a derivation handed in
 * as `nixpkgs`.
 *
 * Cases come from tests/fixtures/generated-example/list.json (hand-written examples of the generated format); add
 * cases from the real generator with `casesFromList(JSON.parse(<variant-matrix list --json>))`.
 * A missing Nix FAILS the tests; nothing is skipped.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { VariantJson } from "../generator/schema.ts";
import {
  GENERATED_EXAMPLE_DIR,
  REPO_ROOT,
  STAND_IN_NIXPKGS,
  casesFromList,
  currentSystem,
  hasNix,
  importVariant,
  nixBuild,
  nixEvalJson,
  nixFilesIn,
  nixInstantiate,
  nixParse,
  nixPath,
  nixStoreDelete,
  nixStoreReferences,
  nixStr,
  standInNixpkgs,
  type ContractCase,
} from "./helpers/nix.ts";

import { runCli } from "./helpers/cli.ts";

const exampleList = JSON.parse(readFileSync(path.join(GENERATED_EXAMPLE_DIR, "list.json"), "utf8")) as VariantJson[];
// Real generated files: pairs chosen to cover binary compatibility (sm121 on 12.8), native CUDA on both systems,
// and CPU-only on both systems, read from the real `variant-matrix list --json`.
const REAL = ["sm121-armv9", "sm90-avx512bf16", "sm80-armv8_2", "cpu-avx2", "cpu-armv9"];
const realRun = runCli(["list", "--json"]);
if (realRun.status !== 0) throw new Error(`variant-matrix list --json failed: ${realRun.stderr}`);
const realList = (JSON.parse(realRun.stdout) as VariantJson[]).filter((v) => REAL.some((r) => v.name.endsWith(`-${r}`)));
const cases: ContractCase[] = [...casesFromList(exampleList), ...casesFromList(realList)];

/** What the test reads back from one evaluated package. */
interface Seen {
  name: string;
  pname: string;
  version: string;
  drvPath: string;
  meta: { description: string; platforms: string[] };
  variant: Record<string, unknown> & { description: string; cudaCapabilitiesForPackageSet: boolean };
  NIX_CFLAGS_COMPILE: string;
  TORCH_CUDA_ARCH_LIST: string | null;
  preConfigure: string;
  cudaCapabilities: string[] | null;
  torchDrvPath: string | null;
  standIn: {
    importedWith: { system: string; config: Record<string, unknown>; overlayCount: number };
    pythonSet: string;
    cudaPackages: string;
    overrideArgs: { cudaSupport: boolean; gpuTargets: string[]; torchDrvPath?: string; torchName?: string };
  };
}

function nixpkgsFor(c: ContractCase): string {
  return standInNixpkgs({ torch: c.pytorch.torchVersion, torchaudio: c.torchaudio.version });
}

function evalCase(c: ContractCase): { pytorch: Seen; torchaudio: Seen } {
  const expr = `
    let
      nixpkgs = ${nixpkgsFor(c)};
      pick = d: {
        # (no attribute named outPath here: --json would print the whole set as that string)
        inherit (d) name pname version drvPath meta variant NIX_CFLAGS_COMPILE preConfigure standIn;
        TORCH_CUDA_ARCH_LIST = d.TORCH_CUDA_ARCH_LIST or null;
        cudaCapabilities = d.cudaCapabilities or null;
        torchDrvPath = if d ? torch then d.torch.drvPath else null;
      };
    in {
      pytorch = pick ${importVariant(c.pytorch.file, "nixpkgs")};
      torchaudio = pick ${importVariant(c.torchaudio.file, "nixpkgs")};
    }`;
  return nixEvalJson(expr);
}

const pythonSetOf = (v: VariantJson) => `python${v.python.replace(".", "")}Packages`;
const cudaSetOf = (v: VariantJson) => (v.cuda === null ? null : `cudaPackages_${v.cuda.replace(".", "_")}`);

/** Checks shared by pytorch and torchaudio. */
function checkPackage(seen: Seen, e: VariantJson): void {
  const where = e.name;
  const isCuda = e.cuda !== null;

  // The file's variant data is the list --json entry.
  const v = seen.variant;
  for (const key of ["name", "package", "version", "torchVersion", "python", "cuda", "sm", "isa", "system", "cudaCapabilities", "cflags"] as const) {
    assert.equal(v[key], e[key], `${where}: variant.${key}`);
  }
  assert.is(v.nixpkgsRev, e.nixpkgs, `${where}: variant.nixpkgsRev`);
  assert.is(v.pythonPackageSet, pythonSetOf(e), `${where}: variant.pythonPackageSet`);
  assert.is(v.cudaPackageSet, cudaSetOf(e), `${where}: variant.cudaPackageSet`);
  for (const cap of e.cudaCapabilities) assert.match(cap, /^\d+\.\d+$/, `${where}: capability written X.Y`);

  // How nixpkgs was imported.
  const imp = seen.standIn.importedWith;
  assert.is(imp.system, e.system, `${where}: nixpkgs system`);
  assert.is(imp.config.allowUnfree, true, `${where}: config.allowUnfree`);
  assert.is(imp.config.cudaSupport, isCuda, `${where}: config.cudaSupport`);
  assert.is(imp.config.cudaForwardCompat, false, `${where}: config.cudaForwardCompat`);
  if (isCuda && v.cudaCapabilitiesForPackageSet) {
    assert.equal(imp.config.cudaCapabilities, e.cudaCapabilities, `${where}: config.cudaCapabilities`);
  } else {
    assert.not.ok("cudaCapabilities" in imp.config, `${where}: config.cudaCapabilities must not be set`);
  }
  assert.is(imp.overlayCount, isCuda ? 1 : 0, `${where}: overlays (the cudaPackages overlay for CUDA only)`);

  // Which sets the package came from.
  assert.is(seen.standIn.pythonSet, pythonSetOf(e), `${where}: Python package set`);
  if (isCuda) assert.is(seen.standIn.cudaPackages, cudaSetOf(e), `${where}: cudaPackages resolved to`);
  else assert.not.match(seen.standIn.cudaPackages, /^cudaPackages_\d/, `${where}: no versioned cudaPackages for CPU`);
  assert.is(seen.standIn.overrideArgs.cudaSupport, isCuda, `${where}: override cudaSupport`);

  // Flags, arch list, parallelism.
  const cflags = e.cflags.join(" ");
  assert.ok(
    seen.NIX_CFLAGS_COMPILE === cflags || seen.NIX_CFLAGS_COMPILE.endsWith(` ${cflags}`),
    `${where}: NIX_CFLAGS_COMPILE ends with the ISA flags: ${seen.NIX_CFLAGS_COMPILE}`,
  );
  if (isCuda) assert.is(seen.TORCH_CUDA_ARCH_LIST, e.cudaCapabilities.join(";"), `${where}: TORCH_CUDA_ARCH_LIST`);
  assert.ok(seen.preConfigure.includes('export MAX_JOBS="$NIX_BUILD_CORES"'), `${where}: MAX_JOBS from NIX_BUILD_CORES`);
  assert.not.match(seen.preConfigure, /-j\s*\d|MAX_JOBS=\d/, `${where}: no hard-coded job count`);

  // Names and meta.
  assert.is(seen.pname, e.name, `${where}: pname`);
  assert.is(seen.name, `${e.name}-${e.version}`, `${where}: name (store path name)`);
  assert.is(seen.version, e.version, `${where}: version`);
  assert.equal(seen.meta.platforms, [e.system], `${where}: meta.platforms`);
  assert.is(seen.meta.description, v.description, `${where}: meta.description`);
}

test("nix-instantiate is available (the contract tests need it)", () => {
  assert.ok(hasNix(), "nix-instantiate not found: install Nix (Debian: apt-get install nix-bin)");
});

test("every pkgs/*.nix, .flox/pkgs/*.nix and Nix fixture parses", () => {
  const files = [
    ...nixFilesIn("pkgs"),
    ...nixFilesIn(".flox/pkgs"),
    ...nixFilesIn("tests/fixtures/generated-example"),
    ...nixFilesIn("tests/fixtures/stand-in-nixpkgs"),
  ];
  assert.ok(nixFilesIn("pkgs").length >= 4, "pkgs/ holds the builders");
  for (const f of files) nixParse(f);
});

test("cases: every example torchaudio is paired with its pytorch", () => {
  assert.ok(cases.length >= 3, `expected the example cases, got ${cases.length}`);
  assert.ok(cases.some((c) => c.pytorch.cuda === null), "a CPU-only case");
  assert.ok(cases.some((c) => c.pytorch.cuda !== null), "a CUDA case");
});

for (const c of cases) {
  test(`contract: ${c.pytorch.name} + ${c.torchaudio.name}`, () => {
    const seen = evalCase(c);
    checkPackage(seen.pytorch, c.pytorch);
    checkPackage(seen.torchaudio, c.torchaudio);

    // torch: gpuTargets are the capabilities; its passthru tells consumers what it was built for.
    assert.equal(seen.pytorch.standIn.overrideArgs.gpuTargets, c.pytorch.cudaCapabilities, "torch gpuTargets");
    assert.equal(seen.pytorch.cudaCapabilities, c.pytorch.cudaCapabilities, "torch passthru.cudaCapabilities");
    assert.ok(seen.pytorch.NIX_CFLAGS_COMPILE.startsWith("-Wno-error "), "nixpkgs' own torch flags are kept");

    // torchaudio: built against exactly the pytorch file's torch.
    assert.is(seen.torchaudio.torchDrvPath, seen.pytorch.drvPath, "passthru.torch is the pytorch file's torch");
    assert.is(seen.torchaudio.standIn.overrideArgs.torchDrvPath, seen.pytorch.drvPath, "override torch drvPath");
    assert.is(seen.torchaudio.standIn.overrideArgs.torchName, `${c.pytorch.name}-${c.pytorch.version}`);
    assert.equal(c.torchaudio.dependsOn, [c.pytorch.name], "list --json dependsOn");

    // The torchaudio .drv really depends on the torch .drv.
    const [taDrv] = nixInstantiate(importVariant(c.torchaudio.file, nixpkgsFor(c)), [], { expr: true });
    assert.is(taDrv, seen.torchaudio.drvPath);
    assert.ok(nixStoreReferences(taDrv!).includes(seen.pytorch.drvPath), "torchaudio.drv references pytorch.drv");
  });
}

test("nix-build: the stand-in packages build offline and MAX_JOBS follows NIX_BUILD_CORES", () => {
  const system = currentSystem();
  const buildable = cases.filter((c) => c.pytorch.system === system);
  assert.ok(buildable.length > 0, `no case for this machine's system ${system}`);
  for (const c of buildable) {
    const pt = importVariant(c.pytorch.file, nixpkgsFor(c));
    const ta = importVariant(c.torchaudio.file, nixpkgsFor(c));
    const outs = nixEvalJson<string[]>(`[ ${pt}.outPath ${ta}.outPath ]`);
    for (const cores of [3, 5]) {
      nixStoreDelete([outs[1]!, outs[0]!]);
      const built = nixBuild(`[ ${pt} ${ta} ]`, { cores });
      assert.equal(built, outs, `${c.pytorch.name}: built paths`);
      for (const [i, v] of [c.pytorch, c.torchaudio].entries()) {
        const report = Object.fromEntries(
          readFileSync(built[i]!, "utf8")
            .trim()
            .split("\n")
            .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
        ) as Record<string, string>;
        assert.is(report.NIX_BUILD_CORES, String(cores), `${v.name}: NIX_BUILD_CORES`);
        assert.is(report.MAX_JOBS, String(cores), `${v.name}: MAX_JOBS inside the build`);
        assert.ok(report.NIX_CFLAGS_COMPILE!.endsWith(v.cflags.join(" ")), `${v.name}: cflags in the build env`);
        if (v.cuda !== null) {
          assert.is(report.TORCH_CUDA_ARCH_LIST, v.cudaCapabilities.join(";"), `${v.name}: TORCH_CUDA_ARCH_LIST`);
        }
      }
    }
  }
});

test("the builders refuse a nixpkgs whose torch is not the variant's version", () => {
  const c = cases[0]!;
  const wrong = standInNixpkgs({ torch: "2.9.1", torchaudio: c.torchaudio.version });
  assert.throws(
    () => nixEvalJson(`${importVariant(c.pytorch.file, wrong)}.name`),
    (e: Error) => /provides torch 2\.9\.1,\s+but the variant promises/.test(e.message),
  );
});

test("torchaudio refuses a torch of another variant", () => {
  const a = cases[0]!;
  const other = cases.find((c) => c.pytorch.name !== a.pytorch.name)!;
  // The generated file fixes `torch`; call the builder with the file's variant and the other file's torch.
  const expr = `
    let
      nixpkgs = ${nixpkgsFor(a)};
      variant = ${importVariant(a.torchaudio.file, "nixpkgs")}.variant;
    in (import ${nixPath("pkgs/torchaudio.nix")} {
      inherit nixpkgs variant;
      torch = ${importVariant(other.pytorch.file, "nixpkgs")};
    }).drvPath`;
  assert.throws(
    () => nixEvalJson(expr),
    (e: Error) => e.message.includes(`torch ${other.pytorch.name} differs in`),
  );
});

test("a derivation handed in as `nixpkgs` (callPackage filling it) is refused with a clear message", () => {
  const c = cases[0]!;
  const drv = `(derivation { name = "nixpkgs"; system = "x"; builder = "/bin/sh"; })`;
  assert.throws(
    () => nixEvalJson(`${importVariant(c.pytorch.file, drv)}.name`),
    (e: Error) => e.message.includes("did callPackage fill `nixpkgs`"),
  );
});

test("the stand-in is named as a stand-in and does not pretend to be nixpkgs", () => {
  const head = readFileSync(path.join(STAND_IN_NIXPKGS, "default.nix"), "utf8").split("\n").slice(0, 3).join("\n");
  assert.match(head, /STAND-IN NIXPKGS/);
  assert.is(nixEvalJson<boolean>(`(import ${nixPath(STAND_IN_NIXPKGS)} { }).standIn.isStandIn`), true);
  assert.ok(REPO_ROOT.length > 0 && nixStr("a${b}") === '"a\\${b}"');
});

test.run();
