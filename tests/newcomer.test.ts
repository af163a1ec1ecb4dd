// Issue 18: what a newcomer hit, each with a test that would have caught it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runCli, tempDir, writeMatrix } from "./helpers/cli.ts";
import { widestMatrix } from "./helpers/matrices.ts";

const small = { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx2"], cpuOnly: false };

test("a syntax error in matrix.ts shows file:line:column, the compiler's message and the line; nothing is written", () => {
  const dir = tempDir();
  const file = join(dir, "matrix.ts");
  writeFileSync(
    file,
    `import { defineMatrix } from ${JSON.stringify(join(ROOT, "generator/schema.ts"))};\nexport default defineMatrix({\n  releases: [{ torch: "2.12.0" }],\n  python: ["3.13"\n  cuda: ["12.8"],\n});\n`,
  );
  const r = runCli(["generate", "--matrix", file, "--out", dir]);
  assert.is(r.status, 2);
  assert.ok(r.stderr.includes(`${file}:5:3: Expected "]" but found "cuda"`), r.stderr);
  assert.match(r.stderr, /\n\s+cuda: \["12\.8"\],/);
  assert.equal(readdirSync(dir), ["matrix.ts"]);
});

test("a value the catalog knows but no pin of the matrix has is an error naming the pin and what it has", () => {
  const dir = tempDir();
  const m = writeMatrix(dir, { ...small, cuda: ["12.6", "12.8"], python: ["3.11", "3.13"] });
  const r = runCli(["generate", "--matrix", m, "--out", dir]);
  assert.is(r.status, 2, r.stdout);
  assert.match(r.stderr, /cuda\.0: no nixpkgs pin of the matrix has cudaPackages_12_6 \(2c423e0 has 12\.8, 12\.9, 13\.0\)/);
  assert.match(r.stderr, /python\.0: no nixpkgs pin of the matrix has python311Packages \(2c423e0 has 3\.12, 3\.13, 3\.14\)/);
  assert.equal(readdirSync(dir), ["matrix.ts"]);
  // A value one of several pins has is fine (its drops are documented).
  const ok = writeMatrix(tempDir(), { ...small, releases: [{ torch: "2.12.0" }, { torch: "2.9.1" }], cuda: ["12.8", "13.0"] });
  assert.is(runCli(["list", "--matrix", ok]).status, 0);
});

test("matrix.ts may set every policy the schema accepts, and it typechecks (MatrixInput is derived from the schema)", () => {
  const dir = tempDir();
  const m = writeMatrix(dir, { ...widestMatrix(), policy: { binaryCompat: "drop", cudaCapabilitiesScope: "packageSet", requiredSystemFeatures: ["big-parallel", "cuda"] } });
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const out = execFileSync(process.execPath, [tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--allowImportingTsExtensions", "--skipLibCheck", "--types", "node", m], { cwd: ROOT, encoding: "utf8" });
  assert.is(out.trim(), "");
  assert.is(runCli(["list", "--matrix", m]).status, 0);
});

test("README: the prerequisites the tests need are named (every package .ci/run installs), and `ci hydra --repo`", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const ci = readFileSync(join(ROOT, ".ci/run"), "utf8");
  const pkgs = [...ci.matchAll(/apt_install ([^\n|]+)/g)].flatMap((m) => m[1]!.trim().split(/\s+/)).filter((p) => /^[a-z0-9.+-]+$/.test(p) && p !== '"$@"');
  assert.ok(pkgs.length >= 4, pkgs.join(" "));
  for (const p of pkgs) assert.ok(readme.includes(p), `README names ${p}`);
  const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
  assert.ok(readme.includes(`Node ${engines.replace(">=", "≥ ")}`), `README names Node ${engines}`);
  assert.match(readme, /ci hydra --repo/);
  assert.is(readme.split("\n").slice(0, 6).filter((l) => /npm ci && npm run generate|npm test/.test(l)).length, 2, "the two first commands");
});

test("user-facing text carries no internal references (seed documents, DESIGN.md rules)", () => {
  const texts: [string, string][] = [
    ["README.md", readFileSync(join(ROOT, "README.md"), "utf8")],
    ["BUILD_MATRIX.md", readFileSync(join(ROOT, "BUILD_MATRIX.md"), "utf8")],
    ...readdirSync(join(ROOT, "docs/matrix")).map((f) => [f, readFileSync(join(ROOT, "docs/matrix", f), "utf8")] as [string, string]),
    ...["building.md", "fleet.md", "scale-out.md"].map((f) => [f, readFileSync(join(ROOT, "docs", f), "utf8")] as [string, string]),
  ];
  const m = writeMatrix(tempDir(), widestMatrix());
  texts.push(["list --json (widest)", runCli(["list", "--json", "--matrix", m]).stdout]);
  texts.push(["list --excluded (widest)", runCli(["list", "--excluded", "--matrix", m]).stdout]);
  texts.push(["build --dry-run", runCli(["build", "--dry-run", "--filter", "sm=90", "--backend", "nix"]).stdout]);
  for (const [where, t] of texts) {
    assert.not.match(t, /\bseed 0\d\d\b/, `${where} cites a seed document`);
    assert.not.match(t, /DESIGN\.md rule/, `${where} cites DESIGN.md`);
  }
});

test.run();
