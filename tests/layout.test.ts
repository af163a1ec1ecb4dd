// One command layer. Only generator/cli.ts and generator/commands/ import yargs; libraries never import a
// command; no import cycles among generator/ modules (static and dynamic imports); every import runs down the layers
// and no two folders import each other. And words a reader can follow:
// no comment points at a tracker this repository does not hold ("issue 34"), and every generator/… or pkgs/… path a
// generator/ comment names exists.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { commentsOf } from "./helpers/comments.ts";
import { ROOT } from "./helpers/cli.ts";

const GEN = join(ROOT, "generator");
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}
const all = files(GEN);
/** Local imports of a file (static `from "…"` and dynamic `import("…")`), as absolute paths. */
const importsOf = (f: string) =>
  [...readFileSync(f, "utf8").matchAll(/(?:from\s+|import\()\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => resolve(dirname(f), m[1]!));
const rel = (f: string) => relative(GEN, f);

test("only cli.ts and commands/ import yargs, and no library imports a command", () => {
  const isCommand = (f: string) => rel(f) === "cli.ts" || rel(f).startsWith("commands/");
  for (const f of all) {
    const text = readFileSync(f, "utf8");
    if (!isCommand(f)) {
      assert.not.match(text, /from\s+"yargs|import\("yargs/, `${rel(f)} imports yargs`);
      for (const i of importsOf(f)) assert.not.ok(rel(i).startsWith("commands/"), `${rel(f)} imports ${rel(i)}`);
    }
  }
  assert.ok(all.some((f) => rel(f) === "commands/verify.ts") && all.some((f) => rel(f) === "commands/generate.ts"));
});

/**
 * The places in TypeScript `text` that touch the process's output or exit: `console.…`, `process.stdout`,
 * `process.stderr`, `process.exit` and `process.exitCode`, read from the syntax tree (so a comment, or a string that
 * holds code for another program, such as the CI workflow's `node -e` script in generator/generate/ci.ts, is not one), as
 * "line: text".
 */
function processOutputUses(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const [obj, prop] = [node.expression.text, node.name.text];
      if (obj === "console" || (obj === "process" && ["stdout", "stderr", "exit", "exitCode"].includes(prop)))
        found.push(`${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${obj}.${prop}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test("main(argv, io) is the one entry: nothing under generator/ but cli.ts writes to the process's streams, uses console or ends the process", () => {
  // cli.ts is the entry (processIo, `process.exitCode = await main()`, CommandRun.exitNow). The one other entry:
  // verify/check-main.ts, the program of the Nix checks, which generate bundles apart to pkgs/verify-compare.mjs
  // (generator/generate/render/checker.ts) and Nix runs inside a check, where no variant-matrix main exists.
  const entries = new Set(["cli.ts", "verify/check-main.ts"]);
  const offenders = all.filter((f) => !entries.has(rel(f))).flatMap((f) => processOutputUses(f, readFileSync(f, "utf8")).map((u) => `${rel(f)}:${u}`));
  assert.equal(offenders, []);
  assert.ok(processOutputUses("cli.ts", readFileSync(join(GEN, "cli.ts"), "utf8")).length > 0, "the reading finds cli.ts's own uses");
  // The wrong case fails: each way of printing or exiting is found, and a comment or a string is not.
  for (const bad of ['console.log("x");', 'console.error("x");', "process.stdout.write(s);", "process.stderr.write(s);", "process.exit(2);", "process.exitCode = 1;", "const { columns } = process.stdout;"])
    assert.equal(processOutputUses("bad.ts", `const s = "";\n${bad}\n`).length, 1, bad);
  assert.equal(processOutputUses("ok.ts", '// console.log("x")\nconst code = "process.stdout.write(1)";\n'), []);
});

test("commands spawn no process: no file under generator/commands imports node:child_process, zx or the process module", () => {
  const commands = all.filter((f) => rel(f).startsWith("commands/"));
  assert.ok(commands.length > 5, "found the commands");
  const spawns = /(?:from\s+|import\(\s*)"(?:(?:node:)?child_process|zx(?:\/[^"]*)?|\.\.\/process\.ts)"/;
  assert.equal(commands.filter((f) => spawns.test(readFileSync(f, "utf8"))).map(rel), []);
  // The wrong case fails: the same reading catches either import, static or dynamic.
  for (const bad of ['import { spawnSync } from "node:child_process";', 'const { $ } = await import("zx");', 'await import("child_process")', 'const { runTool } = await import("../process.ts");'])
    assert.ok(spawns.test(bad), bad);
});

/**
 * Where a file of generator/commands/ (`file`, its `text`) does work a command leaves to the library, which returns the
 * data it prints: imports a `node:` module other than node:path (which resolves arguments against the working
 * directory), reads `process.env`, imports a host reader (generator/host/), or takes from generator/catalog/ anything but
 * a type or one of OPTION_TEXT_NAMES (statically, or a whole module by a dynamic import). Read from the syntax tree, as
 * "line: what".
 */
function commandWork(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
  const fromModule = (node: ts.Node, spec: string, names: string[] | null) => {
    const target = relative(GEN, resolve(dirname(file), spec));
    if (spec.startsWith("node:") || /^(fs|os|path|child_process)(\/|$)/.test(spec)) {
      if (spec !== "node:path" && spec !== "path") found.push(`${at(node)}: imports ${spec}`);
    } else if (target.startsWith("host/")) found.push(`${at(node)}: imports ${target}`);
    else if (target.startsWith("catalog/")) {
      const taken = names === null ? ["(the whole module)"] : names.filter((n) => !OPTION_TEXT_NAMES.has(n));
      if (taken.length) found.push(`${at(node)}: takes ${taken.join(", ")} from ${target}`);
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      if (!clause?.isTypeOnly) {
        const bindings = clause?.namedBindings;
        const names = bindings && ts.isNamedImports(bindings) ? bindings.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : null;
        // `import { type A } from` takes nothing; a default or namespace import takes the whole module.
        if (!(names && names.length === 0 && !clause?.name)) fromModule(node, node.moduleSpecifier.text, clause?.name ? null : names);
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && !node.isTypeOnly) {
      const names = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : null;
      if (!(names && names.length === 0)) fromModule(node, node.moduleSpecifier.text, names);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      fromModule(node, node.arguments[0].text, null);
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "process" && node.name.text === "env") {
      found.push(`${at(node)}: reads process.env`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * What a command may take from catalog/: the names its options' help shows (the packages; --jobs' slot rule in words,
 * catalog/lib/machines.ts slotsFormula). pin cache's default cache is no longer one: pin/run.ts takes it from the Catalog value.
 */
const OPTION_TEXT_NAMES = new Set(["PACKAGES", "slotsFormula"]);

test("commands/ only parse and print: no node: module but node:path, no process.env, no host reader, from catalog/ only the names options show", () => {
  const commands = all.filter((f) => rel(f).startsWith("commands/"));
  assert.ok(commands.length > 15, "found the commands");
  const offences = commands.flatMap((f) => commandWork(f, readFileSync(f, "utf8")).map((o) => `${rel(f)}:${o}`));
  assert.equal(offences, []);
  // The wrong cases fail, each once: a file read, the OS, the environment, a host reader, a catalog rule (static or by a
  // dynamic import), the catalog's table; types, node:path and the option texts' names pass.
  const cmd = join(GEN, "commands/x.ts");
  for (const bad of [
    'import { readFileSync } from "node:fs";',
    'import { homedir } from "node:os";',
    'const { readdirSync } = await import("node:fs");',
    "const home = process.env.HOME;",
    'import { readHost } from "../host/read-host.ts";',
    'import { cudaBuildOf, PACKAGES } from "../catalog/packages.ts";',
    'const { nixpkgsCudaFacts } = await import("../catalog/cuda.ts");',
    'import { catalog } from "../catalog/index.ts";',
    'import * as pkgs from "../catalog/packages.ts";',
    'export { gpus } from "../catalog/gpus.ts";',
  ])
    assert.is(commandWork(cmd, bad).length, 1, bad);
  const ok = [
    'import { resolve } from "node:path";',
    'import type { Catalog } from "../catalog/schema.ts";',
    'import { type Variant } from "../catalog/packages.ts";',
    'import { PACKAGES } from "../catalog/packages.ts";',
    'const { variantFacts } = await import("../model/variant-facts.ts");',
    "// process.env.HOME",
  ].join("\n");
  assert.equal(commandWork(cmd, ok), []);
});

test("no import cycles under generator/", () => {
  const graph = new Map(all.map((f) => [f, importsOf(f).filter((i) => all.includes(i))]));
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "open") {
      cycles.push([...path.slice(path.indexOf(f)), f].map(rel).join(" -> "));
      return;
    }
    state.set(f, "open");
    for (const i of graph.get(f)!) visit(i, [...path, f]);
    state.set(f, "done");
  };
  for (const f of all) visit(f, []);
  assert.equal(cycles, []);
});

/**
 * The layers of generator/, top to bottom (ARCHITECTURE.md's layout lists them in this order): a module imports only
 * from its own folder, a folder of its own layer or one below; "" is generator/'s own files (cli.ts aside, which sits
 * above every command).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["cli.ts"],
  ["commands"],
  ["install", "fleet", "pin"],
  ["detect", "verify", "driver"],
  ["preflight", "generate"],
  ["model"],
  ["matrix", "host"],
  ["catalog"],
  [""],
];
/** The folder (first path part under generator/) of `f`, "cli.ts" for the entry, "" for generator/'s other files. */
const folderOf = (f: string) => {
  const r = rel(f);
  return r.includes("/") ? r.slice(0, r.indexOf("/")) : r === "cli.ts" ? "cli.ts" : "";
};
const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

/** The imports of `graph` (file → its imports) that run from a folder into one of a higher layer, or of no layer. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([f, imports]) =>
    imports
      .filter((i) => layerOf(folderOf(i)) < 0 || layerOf(folderOf(f)) < 0 || layerOf(folderOf(i)) < layerOf(folderOf(f)))
      .map((i) => `${rel(f)} -> ${rel(i)}`),
  );
}

/** Circles between folders of `graph`: folder pairs each importing the other (directly or through others). */
function folderCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const edges = new Map<string, Set<string>>();
  for (const [f, imports] of graph)
    for (const i of imports) if (folderOf(i) !== folderOf(f)) edges.set(folderOf(f), (edges.get(folderOf(f)) ?? new Set()).add(folderOf(i)));
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(edges.get(from) ?? [])].some((n) => n === to || (!seen.has(n) && (seen.add(n), reaches(n, to, seen))));
  return [...edges].flatMap(([a, bs]) => [...bs].filter((b) => a < b && reaches(b, a)).map((b) => `${a || "generator/"} <-> ${b || "generator/"}`));
}

test("every import runs down the layers (commands → install/fleet/pin → detect/verify/driver → preflight/generate → model → matrix/host → catalog → generator/'s helpers), and no two folders import each other", () => {
  const graph = new Map(all.map((f) => [f, importsOf(f).filter((i) => all.includes(i))]));
  const unplaced = [...new Set(all.map(folderOf))].filter((d) => layerOf(d) < 0);
  assert.equal(unplaced, [], "folders of generator/ in no layer");
  assert.equal(upwardImports(graph), []);
  assert.equal(folderCircles(graph), []);
  // The rules catch what they are for: an upward import, and two folders of one layer importing each other.
  const f = (p: string) => join(GEN, p);
  assert.equal(upwardImports(new Map([[f("catalog/packages.ts"), [f("matrix/naming.ts")]], [f("model/plan.ts"), [f("catalog/packages.ts")]]])), [
    "catalog/packages.ts -> matrix/naming.ts",
  ]);
  assert.equal(folderCircles(new Map([[f("driver/run.ts"), [f("detect/choose.ts")]], [f("detect/choose.ts"), [f("driver/report.ts")]]])), ["detect <-> driver"]);
});

/** Every text file under `dir` (sources, Nix, templates, generated files), as absolute paths. */
function textFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? textFiles(p) : /\.(ts|nix|py|njk|mjs|json|md)$/.test(p) ? [p] : [];
  });
}


test('no "issue N" of a tracker this repository does not hold, in generator/ or pkgs/ (an upstream owner/repo issue is fine)', () => {
  const found: string[] = [];
  for (const f of [...textFiles(GEN), ...textFiles(join(ROOT, "pkgs"))]) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/\bissues?\s?#?\d+/gi)) {
      // "pytorch/pytorch issue #157842", "huggingface/candle issue #733": an upstream tracker, named.
      if (/[\w.-]+\/[\w.-]+\s+$/.test(text.slice(Math.max(0, m.index! - 80), m.index))) continue;
      found.push(`${relative(ROOT, f)}:${text.slice(0, m.index).split("\n").length}: ${m[0]}`);
    }
  }
  assert.equal(found, [], "say why the rule exists instead of which issue asked for it");
});

test("every generator/… and pkgs/… path a generator/ comment names exists (a path below pkgs/<dir>/ is nixpkgs' own)", () => {
  // This repository's pkgs/ holds files only, so pkgs/top-level/…, pkgs/development/… name nixpkgs' tree.
  assert.equal(readdirSync(join(ROOT, "pkgs")).filter((n) => statSync(join(ROOT, "pkgs", n)).isDirectory()), []);
  const missing: string[] = [];
  for (const f of textFiles(GEN).filter((x) => /\.(ts|nix|py|njk)$/.test(x))) {
    for (const c of commentsOf(f)) {
      for (const m of c.matchAll(/(?<![\w./-])((?:generator|pkgs)\/[\w.\/-]*[\w\/])/g)) {
        const path = m[1]!.replace(/\.$/, "");
        if (/^pkgs\/[^/]+\//.test(path)) continue;
        if (!existsSync(join(ROOT, path))) missing.push(`${relative(ROOT, f)}: ${path}`);
      }
    }
  }
  assert.equal(missing, []);
});

test.run();
