import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { nixString, nixValue, mdCell } from "../generator/generate/render/env.ts";

const nixEval = (expr: string): unknown =>
  JSON.parse(execFileSync("nix-instantiate", ["--eval", "--strict", "--json", "-E", expr], { encoding: "utf8" }));

test("nixString survives real Nix evaluation for hostile strings", () => {
  const hostile = [
    'say "hi"',
    "back\\slash\\",
    "${builtins.throw \"injected\"}",
    "$${not-interp} ${x} \\${y}",
    "line1\nline2\ttab\r",
    "''${antiquote}''",
    "plain $ dollar and { braces }",
  ];
  const expr = `[ ${hostile.map(nixString).join(" ")} ]`;
  assert.equal(nixEval(expr), hostile);
});

test("nixValue renders lists, booleans, null and plain objects", () => {
  assert.is(nixValue(["12.0", "10.0"]), '[ "12.0" "10.0" ]');
  assert.is(nixValue([]), "[ ]");
  assert.is(nixValue(true), "true");
  assert.is(nixValue(null), "null");
  assert.equal(nixEval(`{ a = ${nixValue(["a\"b"])}; b = ${nixValue(false)}; c = ${nixValue(null)}; }`), { a: ['a"b'], b: false, c: null });
  assert.equal(nixEval(`${nixValue({ torchaudio: "2.11.0", "a b": [true] })}`), { torchaudio: "2.11.0", "a b": [true] });
  assert.throws(() => nixValue(new Map()));
  assert.throws(() => nixValue(() => 1));
});

test("mdCell keeps a table row intact", () => {
  assert.is(mdCell("a|b\nc"), "a\\|b c");
});

test.run();
