// The suite's own files: every test a file registers runs. uvu runs only the tests registered before `test.run()`;
// one registered after it never runs alone, and under tests/run.mjs (files share a worker process) it ran as the next
// file's test (catalog.test.ts had two such tests, found when quick files began sharing processes).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/cli.ts";

/** The lines of `text` (1-based) that register a test at the top level, and those that run the suite. */
export function registrations(text: string): { tests: number[]; runs: number[] } {
  const lines = text.split("\n");
  const at = (re: RegExp) => lines.flatMap((l, i) => (re.test(l) ? [i + 1] : []));
  return { tests: at(/^test(\.only)?\(/), runs: at(/^test\.run\(\)/) };
}

test("registrations: a test after test.run() is seen (the wrong case), one before it is not", () => {
  const wrong = registrations(`test("a", () => {});\ntest.run();\ntest("b", () => {});\n`);
  assert.equal(wrong, { tests: [1, 3], runs: [2] });
  assert.ok(Math.max(...wrong.tests) > wrong.runs[0]);
  const right = registrations(`test("a", () => {});\n  test("nested, not top level", () => {});\ntest.run();\n`);
  assert.equal(right, { tests: [1], runs: [3] });
});

test("every tests/*.test.ts calls test.run() once, after its last top-level test", () => {
  const dir = join(ROOT, "tests");
  const wrong: string[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".test.ts")).sort()) {
    const r = registrations(readFileSync(join(dir, f), "utf8"));
    if (r.runs.length !== 1) wrong.push(`${f}: test.run() ${r.runs.length} times`);
    else if (r.tests.some((l) => l > r.runs[0])) wrong.push(`${f}: test at line ${r.tests.filter((l) => l > r.runs[0]).join(", ")} after test.run() (line ${r.runs[0]})`);
  }
  assert.equal(wrong, []);
});

test.run();
