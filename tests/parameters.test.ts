/**
 * Records, not argument lists. No function in generator/ takes more than 5 parameters: where one needs six or more
 * inputs, they travel as a context record (detect's `Facts`/`GpuCase`, expand's `KeptCombo`, ask-nix's `NixQuestion`),
 * whose fields are named at the call site. Every function declaration, method, constructor, accessor, arrow function
 * and function expression is counted with TypeScript's own parser, as tests/function-length.test.ts measures length;
 * a type of a function (a signature in an interface or a function type) is not a function and is not counted.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers/cli.ts";

const MAX_PARAMETERS = 5;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** A function with a body: what is called, not a type that describes a call. */
function isFunction(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n) ||
    ts.isArrowFunction(n) ||
    ts.isFunctionExpression(n)
  );
}

/** Every function of `file` with more than `max` parameters: "path:line name (N parameters)". */
function wideFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (isFunction(n) && n.parameters.length > max) {
      const line = src.getLineAndCharacterOfPosition(n.getStart()).line + 1;
      const parent = n.parent;
      const name = ts.isConstructorDeclaration(n)
        ? "constructor"
        : (n.name?.getText() ?? (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) ? parent.name.getText() : "(anonymous)"));
      out.push(`${relative(ROOT, file)}:${line} ${name} (${n.parameters.length} parameters)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

test(`no function in generator/ takes more than ${MAX_PARAMETERS} parameters`, () => {
  const all = files(join(ROOT, "generator"));
  assert.ok(all.some((f) => f.endsWith("matrix/expand.ts")), "found generator/'s sources");
  assert.equal(all.flatMap((f) => wideFunctions(f, readFileSync(f, "utf8"), MAX_PARAMETERS)), []);
});

test("the count sees a declaration, an arrow, a method, a constructor and a function expression, and passes types and records", () => {
  const six = "a: number, b: number, c: number, d: number, e: number, f?: number";
  const text =
    `export function wide(${six}): void {}\n` +
    `const arrow = (${six}) => a;\n` +
    `class C {\n  constructor(${six}) {}\n  method(${six}) {}\n}\n` +
    `const expr = function named(${six}) {};\n` +
    `const inObject = { prop: (${six}) => 0 };\n` +
    // Not counted: five parameters, a record, a function type, an interface's call signature.
    `function five(a: number, b: number, c: number, d: number, e: number) {}\n` +
    `function record(o: { a: number; b: number; c: number; d: number; e: number; f: number }) {}\n` +
    `type Fn = (${six}) => void;\n` +
    `interface I { m(${six}): void }\n`;
  assert.equal(wideFunctions(join(ROOT, "generator/x.ts"), text, MAX_PARAMETERS), [
    "generator/x.ts:1 wide (6 parameters)",
    "generator/x.ts:2 arrow (6 parameters)",
    "generator/x.ts:4 constructor (6 parameters)",
    "generator/x.ts:5 method (6 parameters)",
    "generator/x.ts:7 named (6 parameters)",
    "generator/x.ts:8 prop (6 parameters)",
  ]);
});

test.run();
