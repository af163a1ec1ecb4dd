// One catalog, data apart from rules (issue 54). Every sourced table exported by a module of generator/catalog/ is
// in the Catalog value (CatalogSchema) or in the one declared second value, `machines` (MachineFactsSchema); outside
// generator/catalog/ nothing imports a table from a data module, only catalog/index.ts (the values), schema.ts
// (types, schemas), local.ts and the rules (functions) of a module, except the start-up readers listed below with
// why; the checker's facts see a local-catalog.json addition; a pin's own default capabilities decide its variants.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./helpers/cli.ts";
import { catalog, machines } from "../generator/catalog/index.ts";
import { withLocalCatalog } from "../generator/catalog/local.ts";
import { PACKAGES, DEFAULT_PACKAGES, ENV_PACKAGE, TORCH_PACKAGE } from "../generator/catalog/lib/packages.ts";
import { catalogCheckerFacts } from "../generator/catalog/lib/checker.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { Catalog, MachineFacts, NixpkgsPin } from "../generator/catalog/schema.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const CATALOG_DIR = join(ROOT, "generator/catalog");
/** The catalog's modules that are not data: the values, the schemas, the local catalog reader. */
const NOT_DATA = new Set(["index.ts", "schema.ts", "local.ts"]);

/** Where each exported table of a data module lives in the two values. */
const WHERE: Record<string, (c: Catalog, m: MachineFacts) => unknown> = {
  "binary-cache.ts:CUDA_CACHE": (c) => c.cudaCache,
  "binary-cache.ts:REBUILD_SECONDS": (c) => c.rebuildSeconds,
  "binary-cache.ts:PUBLIC_CUDA_CACHES": (c) => c.publicCudaCaches,
  "ci-runners.ts:GITHUB_MATRIX_LIMIT": (_, m) => m.github.matrixLimit,
  "ci-runners.ts:GITHUB_LIMITS": (_, m) => m.github.limits,
  "ci-runners.ts:GITHUB_HOSTED_RUNNERS": (_, m) => m.github.hostedRunners,
  "ci-runners.ts:DEFAULT_SELF_HOSTED_LABELS": (_, m) => m.github.selfHostedLabels,
  "ci-runners.ts:SELF_HOSTED_NEEDS": (_, m) => m.github.selfHostedNeeds,
  "cpu-isas.ts:isas": (c) => c.isas,
  "cpu-isas.ts:ARM_CORES": (c) => c.armCores,
  "cpu-isas.ts:ARM_HOST_HINTS": (c) => c.armHostHints,
  "cuda.ts:cuda": (c) => c.cuda,
  "cuda.ts:GLIBC_242_CUDA_HEADERS": (c) => c.glibcCudaHeaders,
  "advisories.ts:KNOWN_VULNERABLE": (c) => c.knownVulnerable,
  "cuda.ts:CUDA_MINOR_VERSION_COMPAT": (c) => c.cudaMajors,
  "device-code-size.ts:DEVICE_CODE_BYTES": (c) => c.deviceCodeBytes,
  "device-code.ts:bundledDeviceCode": (c) => c.bundledDeviceCode,
  "device-code.ts:EXTRA_SASS": (c) => c.extraSass,
  "device-code.ts:COMPILER_HELPER_NAMES": (c) => c.compilerHelperNames,
  "extras.ts:EXTRAS": (c) => c.extras,
  "gpus.ts:gpus": (c) => c.gpus,
  "gpus.ts:NIXPKGS_CAPABILITIES": (c) => c.nixpkgsCapabilities,
  "machines.ts:FLOX_MIN_VERSION": (_, m) => m.floxMinVersion,
  "machines.ts:GIB_PER_COMPILE_JOB": (_, m) => m.gibPerCompileJob,
  "machines.ts:NIX_MIN": (_, m) => m.nixMin,
  "machines.ts:FLOX_MIN": (_, m) => m.floxMin,
  "machines.ts:STORE_FREE_FLOOR": (_, m) => m.storeFreeFloor,
  "machines.ts:NIXOS_DRIVER_LIB": (_, m) => m.nixosDriverLib,
  "machines.ts:NIXGLHOST": (_, m) => m.nixglhost,
  "machines.ts:FLOX_CUDA": (_, m) => m.floxCuda,
  "machines.ts:DRIVER_ROUTES": (_, m) => m.driverRoutes,
  "packages.ts:packagesOnTorch": (c) => c.packagesOnTorch,
  "python.ts:python": (c) => c.python,
  "torch-arch-list.ts:torchArchLists": (c) => c.torchArchLists,
  "torch.ts:torch": (c) => c.torch,
  "torch.ts:nixpkgs": (c) => c.nixpkgs,
};

/**
 * The package vocabulary: names derived from the package table (local-catalog.json adds no package, only releases),
 * read where a name is checked or written (option choices, the naming rule, the matrix schema). Each is checked equal
 * to its derivation from the Catalog value.
 */
const NAMES: Record<string, (c: Catalog) => unknown> = {
  "packages.ts:TORCH_PACKAGE": () => "pytorch",
  "packages.ts:ENV_PACKAGE": () => "torch-env",
  "packages.ts:PACKAGES": (c) => [TORCH_PACKAGE, ...c.packagesOnTorch.map((p) => p.name), ENV_PACKAGE],
  "packages.ts:DEFAULT_PACKAGES": (c) => [TORCH_PACKAGE, ...c.packagesOnTorch.filter((p) => !p.optIn).map((p) => p.name), ENV_PACKAGE],
};

const dataModules = () => readdirSync(CATALOG_DIR).filter((f) => f.endsWith(".ts") && !NOT_DATA.has(f)).sort();

test("every exported table of generator/catalog/ is in the Catalog value or the second value `machines`, equal to what they hold", async () => {
  let tables = 0;
  for (const file of dataModules()) {
    const mod = (await import(join(CATALOG_DIR, file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value === "function") continue; // a rule
      const key = `${file}:${name}`;
      if (NAMES[key]) {
        assert.equal(value, NAMES[key]!(catalog), key);
        continue;
      }
      assert.ok(WHERE[key], `${key}: an exported table that is in neither the catalog's schema nor MachineFactsSchema`);
      // Parsed values equal the tables: nothing was dropped by the schema (JSON: zod's copies lose no meaning).
      assert.equal(JSON.parse(JSON.stringify(WHERE[key]!(catalog, machines))), JSON.parse(JSON.stringify(value)), key);
      tables++;
    }
  }
  assert.is(tables, Object.keys(WHERE).length, "every listed table was found in its module");
  // The wrong case fails: a table the values do not hold is found by the same reading.
  assert.not.equal(JSON.parse(JSON.stringify(catalog.gpus.slice(1))), JSON.parse(JSON.stringify(catalog.gpus)));
});

/**
 * Modules outside generator/catalog/ that import tables from a data module, and why: each is loaded at the CLI's start-up
 * (`--help`, `list`, `explain` must load neither zod nor the catalog: tests/cli-startup.test.ts, bench/cli.ts) or on
 * build's path for files already generated, which does not parse the catalog; none of these tables is extended by
 * local-catalog.json, so the Catalog value would hold the same.
 */
const START_UP_EXCEPTIONS: Record<string, { names: string[]; why: string }> = {
  "generator/preflight/checks.ts": {
    names: ["PUBLIC_CUDA_CACHES", "FLOX_CUDA", "FLOX_MIN", "NIX_MIN", "NIXGLHOST", "NIXOS_DRIVER_LIB", "STORE_FREE_FLOOR", "isas"],
    why: "loaded at start-up through commands/verify.ts until verify's work moved to commands/verify-main.ts (loaded by its handler); kept until it reads the Catalog value",
  },
  "generator/preflight/driver-route.ts": { names: ["DRIVER_ROUTES", "NIXOS_DRIVER_LIB"], why: "explain's host driver route, which explain reads without zod or the catalog (bench/startup.ts); kept until it reads the Catalog value" },
  "generator/model/concurrency.ts": { names: ["GIB_PER_COMPILE_JOB"], why: "build's --jobs default, loaded at start-up by commands/build.ts" },
  "generator/commands/build.ts": { names: ["GIB_PER_COMPILE_JOB"], why: "build --help's --jobs text" },
  "generator/verify/driver.ts": { names: ["NIXOS_DRIVER_LIB"], why: "loaded at start-up through commands/verify.ts until verify-main.ts; kept until it reads the Catalog value" },
  "generator/model/plan.ts": { names: ["packagesOnTorch"], why: "detect/rules.ts → model/wait.ts loaded it at start-up until detect's and verify's work moved to NAME-main.ts (build estimates); kept until it reads the Catalog value" },
  "generator/commands/pin.ts": { names: ["PUBLIC_CUDA_CACHES"], why: "pin cache --help's --substituter default, a command module loaded at start-up" },
  "generator/driver/eval-first.ts": { names: ["NIX_MIN"], why: "build of files already generated does not parse the catalog" },
};

/** What a dynamic import of a data module takes (file:module → the binding), each a rule. */
const DYNAMIC_RULES: Record<string, string> = {
  "generator/driver/builders.ts:cpu-isas.ts": "gccarchFeature",
  "generator/commands/explain.ts:device-code-size.ts": "modelDeviceCode",
  "generator/commands/explain.ts:cuda.ts": "nixpkgsCudaFacts",
  "generator/commands/explain.ts:torch-arch-list.ts": "torchReleaseFacts",
};

/** Every file under `dir` ending in .ts. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The value bindings (not `type` ones) each import or re-export of `text` takes from a catalog data module. */
function catalogImports(file: string, text: string): { module: string; names: string[] }[] {
  const out: { module: string; names: string[] }[] = [];
  const spec = (s: string) => relative(CATALOG_DIR, resolve(dirname(file), s));
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?\{([^}]*)\}\s*from\s*"([^"]+)"/gm)) {
    const mod = spec(m[4]!);
    if (m[2] || mod.includes("/") || mod.startsWith("..") || NOT_DATA.has(mod)) continue;
    const names = m[3]!.split(",").map((n) => n.trim()).filter((n) => n && !n.startsWith("type ")).map((n) => n.split(/\s+as\s+/)[0]!);
    out.push({ module: mod, names });
  }
  for (const m of text.matchAll(/import\("([^"]+)"\)/g)) {
    const mod = spec(m[1]!);
    if (!mod.includes("/") && !mod.startsWith("..") && !NOT_DATA.has(mod)) out.push({ module: mod, names: ["(dynamic import)"] });
  }
  return out;
}

test("outside generator/catalog/, no table of a data module is imported: only rules, the package names and the listed start-up readers", async () => {
  const offences: string[] = [];
  const used = new Set<string>();
  for (const file of tsFiles(join(ROOT, "generator")).filter((f) => !f.startsWith(CATALOG_DIR + "/"))) {
    const rel = relative(ROOT, file);
    for (const { module, names } of catalogImports(file, readFileSync(file, "utf8"))) {
      const mod = (await import(join(CATALOG_DIR, module))) as Record<string, unknown>;
      for (const n of names) {
        if (n !== "(dynamic import)" && (typeof mod[n] === "function" || NAMES[`${module}:${n}`] || !(n in mod))) continue; // a rule, a name, a type
        // A handler's dynamic import takes the rule named here (checked to be a function of that module).
        const rule = DYNAMIC_RULES[`${rel}:${module}`];
        if (n === "(dynamic import)" && rule && typeof mod[rule] === "function") continue;
        const ex = START_UP_EXCEPTIONS[rel];
        if (ex?.names.includes(n)) {
          used.add(`${rel}:${n}`);
          continue;
        }
        offences.push(`${rel} imports ${n} from catalog/${module}`);
      }
    }
  }
  assert.equal(offences, [], "read it through the Catalog value (catalog/index.ts) or `machines`");
  // Every exception is still needed (an exception nobody uses is removed from the list).
  const listed = Object.entries(START_UP_EXCEPTIONS).flatMap(([f, e]) => e.names.map((n) => `${f}:${n}`));
  assert.equal(listed.filter((k) => !used.has(k)), []);
  // The wrong case fails: an import of a table is found by the same reading.
  const wrong = catalogImports(join(ROOT, "generator/x.ts"), 'import { gpus, nixpkgsAllows } from "./catalog/gpus.ts";');
  assert.equal(wrong, [{ module: "gpus.ts", names: ["gpus", "nixpkgsAllows"] }]);
});

/** A pin of the built-in catalog, made a new local one (another revision, no hash source needed beyond its own). */
function localPin(over: Partial<NixpkgsPin>): NixpkgsPin {
  const base = catalog.nixpkgs.find((p) => p.torch === "2.12.0" && p.sha256)!;
  return { ...base, rev: "1".repeat(40), inferred: {}, source: "test: a pin added with pin add", bundledLinksKnown: false, nixpkgsDefaultCapabilities: null, ...over };
}

function localCatalogDir(content: unknown): string {
  const dir = tempDir("catalog-tables-"); // removed when the test process exits
  writeFileSync(join(dir, "local-catalog.json"), JSON.stringify(content));
  return dir;
}

test("the checker's facts see a local-catalog.json addition: a pin's own default capabilities, its links, an arch list", () => {
  const own = { "12.9": ["9.0", "12.0"] };
  const dir = localCatalogDir({
    nixpkgs: [localPin({ nixpkgsDefaultCapabilities: own })],
    torchArchLists: [{ torch: "9.9", accepted: null, refused: ["8.8"], source: "test" }],
  });
  const cat = withLocalCatalog(catalog, dir);
  const facts = catalogCheckerFacts(cat);
  assert.equal(facts.pinDefaultCapabilities["1".repeat(40)], own);
  assert.ok(facts.torchArchLists.some((l) => l.torch === "9.9"));
  // A pin pin add wrote is not one whose bundled links were read; the built-in pins are.
  assert.not.ok(facts.knownPins.includes("1".repeat(40)));
  assert.equal(facts.knownPins, catalog.nixpkgs.map((p) => p.rev));
  // The built-in catalog's facts have neither.
  const builtIn = catalogCheckerFacts(catalog);
  assert.is(builtIn.pinDefaultCapabilities["1".repeat(40)], undefined);
  assert.not.ok(builtIn.torchArchLists.some((l) => l.torch === "9.9"));
  // The same schema validates it: a bad capability is refused with its field.
  const bad = localCatalogDir({ nixpkgs: [localPin({ nixpkgsDefaultCapabilities: { "12.9": ["sm_90"] } })] });
  assert.throws(() => withLocalCatalog(catalog, bad), /nixpkgs\.0\.nixpkgsDefaultCapabilities\.12\.9\.0/);
});

test("a pin added with its own default capabilities decides the CUDA scope of its variants; other pins keep the catalog's", () => {
  const rev = "1".repeat(40);
  const base = catalog.nixpkgs.find((p) => p.torch === "2.12.0" && p.sha256)!;
  const matrix = (nixpkgs: string) => ({
    releases: [{ torch: "2.12.0", nixpkgs, sha256: base.sha256! }],
    python: ["3.13"],
    cuda: ["12.9"],
    gpus: ["90", "120"],
    isas: ["avx2"],
    cpuOnly: false,
    packages: ["pytorch"],
  });
  // At this pin nixpkgs' defaults for CUDA 12.9 lack 12.0: its sm120 variant must build its CUDA set (package-set scope).
  const dir = localCatalogDir({ nixpkgs: [localPin({ nixpkgsDefaultCapabilities: { "12.9": ["7.5", "8.0", "8.6", "8.9", "9.0"] } })] });
  const cat = withLocalCatalog(catalog, dir);
  const own = projectFromMatrix(matrix(rev), cat).variants;
  const sm120 = own.find((v) => v.sm === "120")!;
  const sm90 = own.find((v) => v.sm === "90")!;
  assert.ok(sm120.cudaCapabilitiesForPackageSet, sm120.name);
  assert.ok(sm120.notes.some((n) => /12\.0 is not in nixpkgs' default cudaCapabilities for CUDA 12\.9 \(7\.5, 8\.0, 8\.6, 8\.9, 9\.0\)/.test(n)), sm120.notes.join("\n"));
  assert.not.ok(sm90.cudaCapabilitiesForPackageSet, sm90.name);
  // The built-in pin of the same torch has no table of its own: the catalog's defaults (12.0 in them) keep the torch scope.
  const builtIn = projectFromMatrix(matrix(base.rev), cat).variants.find((v) => v.sm === "120")!;
  assert.not.ok(builtIn.cudaCapabilitiesForPackageSet, builtIn.name);
});

test.run();
