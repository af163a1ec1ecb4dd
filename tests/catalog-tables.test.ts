// One catalog, rows apart from rules (issues 54, 67). generator/catalog/'s data modules hold rows only (nixpkgs' _cuda
// db/): every export is a table, each in the Catalog value (CatalogSchema) or the one declared second value, `machines`
// (MachineFactsSchema), and they import no rule; the rules are generator/catalog/lib/ (its lib/). Outside
// generator/catalog/ no module imports a data module: code reads the values (catalog/index.ts), the built-in values
// unparsed where zod must not load (catalog/lib/built-in.ts, equal to the parsed ones), or a catalog/lib rule; and no
// sourced figure (a constant number beside a constant `source`) is written outside generator/catalog/. The checker's
// facts see a local-catalog.json addition; a pin's own default capabilities decide its variants.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { tempDir } from "./helpers/cli.ts";
import { catalog, machines } from "../generator/catalog/index.ts";
import { builtInCatalog } from "../generator/catalog/lib/built-in.ts";
import { builtInMachines } from "../generator/catalog/lib/machines.ts";
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
  "binary-cache.ts:BUILD_SECONDS": (c) => c.buildSeconds,
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

const dataModules = () => readdirSync(CATALOG_DIR).filter((f) => f.endsWith(".ts") && !NOT_DATA.has(f)).sort();
/** JSON's reading of a value: zod's copies lose no meaning, so a parsed table equals its row this way. */
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

test("every export of a data module of generator/catalog/ is a table (no rule), in the Catalog value or `machines`, equal to what they hold", async () => {
  let tables = 0;
  for (const file of dataModules()) {
    const mod = (await import(join(CATALOG_DIR, file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      const key = `${file}:${name}`;
      assert.is.not(typeof value, "function", `${key}: a rule in a data module (its place is generator/catalog/lib/)`);
      assert.ok(WHERE[key], `${key}: an exported table that is in neither the catalog's schema nor MachineFactsSchema`);
      assert.equal(json(WHERE[key]!(catalog, machines)), json(value), key);
      tables++;
    }
  }
  assert.is(tables, Object.keys(WHERE).length, "every listed table was found in its module");
  // The built-in values that zod-free readers take (catalog/lib/built-in.ts) are the parsed ones, unparsed.
  assert.equal(json(builtInCatalog), json(catalog));
  assert.equal(json(builtInMachines), json(machines));
  // The wrong case fails: a table the values do not hold is found by the same reading.
  assert.not.equal(json(catalog.gpus.slice(1)), json(catalog.gpus));
});

test("the package names of catalog/lib/packages.ts are the package table's, as the Catalog value holds it", () => {
  assert.is(TORCH_PACKAGE, "pytorch");
  assert.is(ENV_PACKAGE, "torch-env");
  assert.equal(PACKAGES, [TORCH_PACKAGE, ...catalog.packagesOnTorch.map((p) => p.name), ENV_PACKAGE]);
  assert.equal(DEFAULT_PACKAGES, [TORCH_PACKAGE, ...catalog.packagesOnTorch.filter((p) => !p.optIn).map((p) => p.name), ENV_PACKAGE]);
});

/** Every file under `dir` ending in .ts. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * The data modules of generator/catalog/ that `text` (the file `file`) imports or re-exports: static imports (values or
 * types), `export … from` and dynamic `import("…")`, by base name ("packages.ts").
 */
function dataImports(file: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)"([^"]+)"/gm)) {
    const target = resolve(dirname(file), m[1]!);
    if (dirname(target) === CATALOG_DIR && !NOT_DATA.has(relative(CATALOG_DIR, target))) found.push(relative(CATALOG_DIR, target));
  }
  return found;
}

test("outside generator/catalog/, no module imports a data module: the values (catalog/index.ts, catalog/lib/built-in.ts) or a catalog/lib rule", () => {
  const outside = tsFiles(join(ROOT, "generator")).filter((f) => !f.startsWith(CATALOG_DIR + "/"));
  assert.ok(outside.length > 50, "read generator/'s modules");
  const offences = outside.flatMap((f) => dataImports(f, readFileSync(f, "utf8")).map((m) => `${relative(ROOT, f)} imports catalog/${m}`));
  assert.equal(offences, [], "read it through the Catalog value or `machines` (catalog/index.ts) or a rule of catalog/lib/");
  // The wrong case fails: a table import from driver/ (static, type-only, re-exported or dynamic) is found; lib and the values are not.
  const driverFile = join(ROOT, "generator/driver/x.ts");
  for (const bad of [
    'import { packagesOnTorch } from "../catalog/packages.ts";',
    'import type { PackageOnTorch } from "../catalog/packages.ts";',
    'export { NIX_MIN } from "../catalog/machines.ts";',
    'const { isas } = await import("../catalog/cpu-isas.ts");',
    'import {\n  GIB_PER_COMPILE_JOB,\n} from "../catalog/machines.ts";',
  ])
    assert.is(dataImports(driverFile, bad).length, 1, bad);
  assert.equal(dataImports(driverFile, 'import { PACKAGES } from "../catalog/lib/packages.ts";\nimport { catalog } from "../catalog/index.ts";\nimport type { Catalog } from "../catalog/schema.ts";'), []);
});

test("rows import no rule: no data module of generator/catalog/ imports catalog/lib/", () => {
  const lib = join(CATALOG_DIR, "lib");
  const importsLib = (text: string) => [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"([^"]+)"/g)].some((m) => resolve(CATALOG_DIR, m[1]!).startsWith(lib + "/"));
  assert.equal(dataModules().filter((f) => importsLib(readFileSync(join(CATALOG_DIR, f), "utf8"))), []);
  // The wrong case fails: a row computed by a rule (as catalog/cuda.ts once computed nixpkgs' defaults) is found.
  assert.ok(importsLib('import { nixpkgsDefaultCapabilitiesFor } from "./lib/cuda.ts";'));
  assert.not.ok(importsLib('import type { CudaToolkit } from "./schema.ts";'));
});

/** Whether `e` is a constant number: a numeric literal, or arithmetic of them (`1.75 * 3600`). */
function constantNumber(e: ts.Expression): boolean {
  if (ts.isNumericLiteral(e)) return true;
  if (ts.isParenthesizedExpression(e)) return constantNumber(e.expression);
  if (ts.isPrefixUnaryExpression(e)) return constantNumber(e.operand);
  return ts.isBinaryExpression(e) && constantNumber(e.left) && constantNumber(e.right);
}
/** Whether `e` is constant text: a string literal, a template without substitutions, or `+` of them. */
function constantText(e: ts.Expression): boolean {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return true;
  if (ts.isParenthesizedExpression(e)) return constantText(e.expression);
  return ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken && constantText(e.left) && constantText(e.right);
}

/**
 * The sourced figures written in TypeScript `text`: object literals with a constant number (a property whose value is
 * one) beside a constant source (a property named `source` or `…Source` whose value is constant text), as "line: names".
 * A source made at run time (pin add's, from what it read; a host's "--mem") is no written fact, and is not one.
 */
function sourcedFigures(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      const props = node.properties.filter(ts.isPropertyAssignment);
      const name = (p: ts.PropertyAssignment) => p.name.getText(sf);
      const figures = props.filter((p) => constantNumber(p.initializer)).map(name);
      const sources = props.filter((p) => /^source$|Source$/.test(name(p)) && constantText(p.initializer)).map(name);
      if (figures.length && sources.length) found.push(`${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${[...figures, ...sources].join(", ")}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test("no sourced figure outside generator/catalog/: a number with its source is a row of the catalog", () => {
  const outside = tsFiles(join(ROOT, "generator")).filter((f) => !f.startsWith(CATALOG_DIR + "/"));
  assert.equal(outside.flatMap((f) => sourcedFigures(f, readFileSync(f, "utf8")).map((x) => `${relative(ROOT, f)}:${x}`)), []);
  // The catalog's rows are found by the same reading (so it reads what it is meant to).
  assert.ok(sourcedFigures("binary-cache.ts", readFileSync(join(CATALOG_DIR, "binary-cache.ts"), "utf8")).length >= 9);
  // The wrong case fails: a figure with its source, as model/plan.ts once held them; a run-time source or a figure
  // without one is not a written fact.
  assert.is(sourcedFigures("plan.ts", 'export const X = { seconds: 1.75 * 3600, source: "the guide " + "(midpoint)" };').length, 1);
  assert.is(sourcedFigures("plan.ts", "const M = { cudaOneCapabilitySeconds: 6300, cpuSource: `pytorch/pytorch#183931` };").length, 1);
  assert.equal(sourcedFigures("read-host.ts", 'const a = { bytes: o.mem * 2 ** 30, source: "--mem" }; const b = { seconds: 60, source: `built like ${env}` }; const c = { n: 1 };'), []);
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
