// What the CLI says about a matrix.ts it cannot use, and about output it cannot write: a throwing getter or Proxy is
// "cannot load" (exit 2), unknown keys name the allowed keys and the nearest, a field's message lists only its own
// allowed values, long values and repeated issues are cut with a count, names every object already has are refused,
// and a full disk under stdout is one line with exit 1. Each case runs the CLI's main in-process on a matrix in a temporary
// directory; the full disk runs the compiled launcher as a child process (its stdout is the file).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliArgv, ROOT, tempDir, type CliRun } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { formatIssues, MAX_ISSUE_LINES } from "../generator/matrix/project.ts";
import { clip, shown, unknownKeysMessage } from "../generator/matrix/suggest.ts";

const BASE = `releases: [{ torch: "2.9.1" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx2"], cpuOnly: true`;

/** `variant-matrix list --matrix FILE` (in-process through main) on a matrix.ts whose module text is `source`. */
function listWith(source: string): Promise<CliRun> {
  const file = join(tempDir("vm-matrix-msg-"), "matrix.ts");
  writeFileSync(file, source);
  return runMain(["list", "--matrix", file]);
}

/** An invalid matrix: exit 2, the common prefix on the first line, no stack trace. */
function invalid(r: CliRun, what: string): string {
  assert.is(r.status, 2, `${what}: ${r.stderr}`);
  assert.match(r.stderr, /^variant-matrix: error: .*matrix\.ts: invalid matrix\n/, what);
  assert.not.match(r.stderr, /\n\s+at /, `${what}: no stack trace`);
  return r.stderr;
}

test("a getter or a Proxy that throws while the matrix is read: exit 2, cannot load, no stack", async () => {
  const getter = await listWith(
    `const m: any = { ${BASE} };\nObject.defineProperty(m, "python", { enumerable: true, get() { throw new Error("boom from a getter"); } });\nexport default m;\n`,
  );
  assert.match(invalid(getter, "getter"), /\(root\): cannot load: reading the matrix threw Error: boom from a getter/);
  // A Proxy: its `then` is read when the module's value is handed on, its other traps when zod reads it.
  const proxy = await listWith(`export default new Proxy({}, { get() { throw new Error("proxy says no"); }, ownKeys() { throw new Error("no keys"); } });\n`);
  assert.match(invalid(proxy, "proxy"), /cannot load: reading the matrix threw Error: (proxy says no|no keys)/);
  const keysOnly = await listWith(`export default new Proxy({ ${BASE} }, { ownKeys() { throw new Error("no keys"); } });\n`);
  assert.match(invalid(keysOnly, "ownKeys trap"), /cannot load: reading the matrix threw Error: no keys/);
});

test("unknown keys name the allowed keys and the nearest; a malformed sha256 lists no PyTorch releases", async () => {
  const err = invalid(
    await listWith(
      `export default { releases: [{ torch: "2.9.1", nixpgks: "x", sha256: "nope" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], gpu: [], ` +
        `isas: ["avx2"], cpuOnly: true, policy: { binaryCompt: "serve" } };\n`,
    ),
    "unknown keys",
  );
  assert.match(err, /\n {2}\(root\): unknown key "gpu"; allowed keys: releases, python, cuda, gpus, isas, cpuOnly, packages, environments, only, policy, caches; closest to "gpu": gpus\n/);
  assert.match(err, /\n {2}policy: unknown key "binaryCompt"; allowed keys: binaryCompat, cudaCapabilitiesScope, requiredSystemFeatures; closest to "binaryCompt": binaryCompat\n/);
  assert.match(err, /\n {2}releases\.0: unknown key "nixpgks"; allowed keys: torch, nixpkgs, sha256; closest to "nixpgks": nixpkgs\n/);
  const sha = err.split("\n").find((l) => l.startsWith("  releases.0.sha256: "));
  assert.ok(sha, err);
  assert.not.match(sha!, /torch:|allowed values/, "the sha256 line lists no releases");
  // The whole release entry of the wrong type still lists the releases it may name.
  assert.match(invalid(await listWith(`export default { ${BASE.replace(`[{ torch: "2.9.1" }]`, `[42]`)} };\n`), "release entry"), /releases\.0: .*allowed values: \{ torch: "2\.8\.0" \}/);
});

test("a 2 MB value is cut, and 200,000 duplicate Pythons are three lines and a count", async () => {
  const big = invalid(await listWith(`export default { ${BASE.replace(`python: ["3.13"]`, `python: ["3.13".repeat(500000)]`)} };\n`), "2 MB value");
  assert.ok(big.length < 2000, `${big.length} characters of stderr`);
  assert.match(big, /python\.0: unknown Python version "3\.133\.13.*… \(2000002 characters\); allowed values: 3\.11/);
  const dup = invalid(await listWith(`export default { ${BASE.replace(`python: ["3.13"]`, `python: Array(200000).fill("3.13")`)} };\n`), "duplicates");
  assert.ok(dup.length < 2000, `${dup.length} characters of stderr`);
  assert.equal(dup.match(/: duplicate Python version "3\.13"/g)?.length, 3);
  assert.match(dup, /… and 199996 more field\(s\) with this message: python\.4, python\.5, python\.6, …/);
});

test("a 100 kB name or filter value on the command line is cut too, not echoed whole", async () => {
  const long = "x".repeat(100_000);
  for (const args of [["build", "--dry-run", long], ["explain", long], ["list", "--filter", `sm=${long}`], ["list", "--filter", long]]) {
    const r = await runMain(args);
    assert.is(r.status, 2, r.stderr.slice(0, 500));
    assert.ok(r.stderr.length < 3000, `${args[0]} ${args[1]}: ${r.stderr.length} characters of stderr`);
    assert.match(r.stderr, /… \(10000\d characters\)/, `${args[0]} ${args[1]} says how long the value was`);
  }
});

test("__proto__ and other names every object has are refused as environment names, not dropped", async () => {
  const err = invalid(
    await listWith(`export default { ${BASE}, packages: ["pytorch"], environments: JSON.parse('{"__proto__": ["transformers"], "constructor": ["numpy"]}') };\n`),
    "__proto__",
  );
  assert.match(err, /environments\.__proto__: name "__proto__" is reserved/);
  assert.match(err, /environments\.constructor: name "constructor" is reserved/);
});

test("list --json > /dev/full: one error line and exit 1, no ENOSPC stack trace", () => {
  assert.ok(existsSync("/dev/full"), "this test needs Linux's /dev/full");
  const fd = openSync("/dev/full", "w");
  try {
    const r = spawnSync(process.execPath, cliArgv(["list", "--json"]), {
      cwd: ROOT,
      stdio: ["ignore", fd, "pipe"],
      encoding: "utf8",
    });
    assert.is(r.status, 1, r.stderr);
    assert.equal(r.stderr.trimEnd().split("\n"), ["variant-matrix: error: cannot write the output: ENOSPC: no space left on device, write"]);
  } finally {
    closeSync(fd);
  }
});

test("formatIssues, clip, shown and unknownKeysMessage: cut with counts, never throw", () => {
  const many = Array.from({ length: 100 }, (_, i) => ({ path: `only.${i}`, message: `bad ${i}` }));
  const lines = formatIssues(many).split("\n");
  assert.is(lines.length, MAX_ISSUE_LINES + 1);
  assert.is(lines.at(-1), `  … and ${100 - MAX_ISSUE_LINES} more issue(s)`);
  assert.is(clip("abc", 5), "abc");
  assert.is(clip("abcdefgh", 3), "abc… (8 characters)");
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.is(shown(cyclic), "(object)");
  assert.is(shown(new Proxy({}, { get() { throw new Error("x"); }, ownKeys() { throw new Error("x"); } })), "(object)");
  assert.is(unknownKeysMessage(["a", "b", "c", "d", "e", "f", "g"], ["xyz"]), `unknown keys "a", "b", "c", "d", "e" and 2 more; allowed keys: xyz`);
});

test.run();
