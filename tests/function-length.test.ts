/**
 * Code a newcomer can read. No function in generator/ is longer than 80 lines (a newcomer reads a function whole): every function declaration,
 * method, arrow function and function expression, measured from its first to its last line with TypeScript's own
 * parser; the Python probe (generator/verify/probe.py) with Python's own (`ast`). A long function is cut into named
 * steps; a long table of data is not a function and is not measured.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers/cli.ts";

const MAX_LINES = 80;

function files(dir: string, ext = ".ts"): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p, ext) : p.endsWith(ext) ? [p] : [];
  });
}

/** Every Python function of `text` longer than `max` lines, by python3's `ast` (end_lineno): "path:line name (N lines)". */
function longPythonFunctions(file: string, text: string, max: number): string[] {
  const script =
    "import ast, json, sys\n" +
    "t = ast.parse(sys.stdin.read())\n" +
    "print(json.dumps([[n.lineno, n.name, n.end_lineno - n.lineno + 1] for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]))\n";
  const r = spawnSync("python3", ["-c", script], { input: text, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`python3 could not parse ${file}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as [number, string, number][]).filter(([, , n]) => n > max).map(([line, name, n]) => `${relative(ROOT, file)}:${line} ${name} (${n} lines)`);
}

/** Every function of `file` longer than `max` lines: "path:line name (N lines)". */
function longFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)) {
      const first = src.getLineAndCharacterOfPosition(n.getStart()).line;
      const last = src.getLineAndCharacterOfPosition(n.getEnd()).line;
      const parent = n.parent;
      const name = n.name?.getText() ?? (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) ? parent.name.getText() : "(anonymous)");
      if (last - first + 1 > max) out.push(`${relative(ROOT, file)}:${first + 1} ${name} (${last - first + 1} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test(`no function in generator/ is longer than ${MAX_LINES} lines`, () => {
  const long = files(join(ROOT, "generator")).flatMap((f) => longFunctions(f, readFileSync(f, "utf8"), MAX_LINES));
  assert.equal(long, []);
});

test(`no Python function in generator/ is longer than ${MAX_LINES} lines`, () => {
  const py = files(join(ROOT, "generator"), ".py");
  assert.ok(py.some((f) => f.endsWith("probe.py")), "found the probe");
  assert.equal(py.flatMap((f) => longPythonFunctions(f, readFileSync(f, "utf8"), MAX_LINES)), []);
  // The wrong case fails: a long Python function is seen.
  const long = `def f():\n${Array.from({ length: 85 }, (_, i) => `    x${i}()`).join("\n")}\n`;
  assert.equal(longPythonFunctions(join(ROOT, "generator/x.py"), long, MAX_LINES), ["generator/x.py:1 f (86 lines)"]);
});

test("the measure sees a long function, an arrow function and a method, and passes a long table", () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  x${i}();`).join("\n");
  const text =
    `function f() {\n${body(85)}\n}\n` +
    `const g = () => {\n${body(10)}\n};\n` +
    `class C { m() {\n${body(90)}\n} }\n` +
    `const table = [\n${Array.from({ length: 200 }, (_, i) => `  { k: ${i} },`).join("\n")}\n];\n`;
  const long = longFunctions(join(ROOT, "generator/x.ts"), text, MAX_LINES);
  assert.equal(long.map((l) => l.replace(/ \(\d+ lines\)$/, "")), ["generator/x.ts:1 f", `generator/x.ts:${87 + 12 + 1} m`]);
});

test("no `as unknown as` in generator/: a type that does not fit is fixed where it is declared, not cast away", () => {
  const casts = files(join(ROOT, "generator")).filter((f) => /\bas unknown as\b/.test(readFileSync(f, "utf8"))).map((f) => relative(ROOT, f));
  assert.equal(casts, []);
});

test.run();
