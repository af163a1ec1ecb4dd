/**
 * Entry point of the Nix checks (pkgs/checks.nix): `node pkgs/verify-compare.mjs FACTS.json PROMISE.json PROBE.json`.
 * Compares the probe a check ran with the variant's promise, using the same pure comparison as `verify`
 * (generator/verify/compare.ts) with the facts `generate` wrote (pkgs/verify-facts.json, facts.ts), prints one line
 * per promise and exits 0 only when every promise holds; exit 2 for unreadable input.
 * `generate` bundles this file to pkgs/verify-compare.mjs (generator/generate/render/checker.ts; git-tracked, so flox and Nix
 * see it, and `generate --check` fails when the committed bundle is not what the sources give).
 */
import { readFileSync } from "node:fs";
import { allHold, checkPromise, type Probe, type PromiseOf } from "./compare.ts";
import { parseCheckerFacts, type CheckerFacts } from "../catalog/lib/checker-facts.ts";

function main(argv: string[]): number {
  if (argv.length !== 3) {
    process.stderr.write("usage: verify-compare.mjs FACTS.json PROMISE.json PROBE.json\n");
    return 2;
  }
  let facts: CheckerFacts;
  let v: PromiseOf;
  let probe: Probe;
  try {
    facts = parseCheckerFacts(readFileSync(argv[0]!, "utf8"));
    v = JSON.parse(readFileSync(argv[1]!, "utf8")) as PromiseOf;
    probe = JSON.parse(readFileSync(argv[2]!, "utf8")) as Probe;
  } catch (e) {
    process.stderr.write(`verify-compare: ${(e as Error).message}\n`);
    return 2;
  }
  const checks = checkPromise(v, probe, facts);
  for (const c of checks)
    process.stdout.write(`${c.ok === true ? "✓" : c.ok === false ? "✗" : "–"} ${c.promise}: ${c.ok === true ? c.found : `expected ${c.expected}, found ${c.found}`}\n`);
  const ok = allHold(checks);
  process.stdout.write(`${v.name}: ${ok ? "every promise holds" : "a promise does not hold"}\n`);
  return ok ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
