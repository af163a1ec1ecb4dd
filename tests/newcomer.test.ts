// What a newcomer hit, each with a test that would have caught it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { catalog } from "../generator/catalog/index.ts";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { widestMatrix } from "./helpers/matrices.ts";

const small = { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx2"], cpuOnly: false };

test("a syntax error in matrix.ts shows file:line:column, the compiler's message and the line; nothing is written", async () => {
  const dir = tempDir();
  const file = join(dir, "matrix.ts");
  writeFileSync(
    file,
    `import { defineMatrix } from ${JSON.stringify(join(ROOT, "generator/matrix/schema.ts"))};\nexport default defineMatrix({\n  releases: [{ torch: "2.12.0" }],\n  python: ["3.13"\n  cuda: ["12.8"],\n});\n`,
  );
  const r = await runMain(["generate", "--matrix", file, "--out", dir]);
  assert.is(r.status, 2);
  assert.ok(r.stderr.includes(`${file}:5:3: Expected "]" but found "cuda"`), r.stderr);
  assert.match(r.stderr, /\n\s+cuda: \["12\.8"\],/);
  assert.equal(readdirSync(dir), ["matrix.ts"]);
});

test("a value the catalog knows but no pin of the matrix has is an error naming the pin and what it has", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, { ...small, cuda: ["12.6", "12.8"], python: ["3.11", "3.13"] });
  const r = await runMain(["generate", "--matrix", m, "--out", dir]);
  assert.is(r.status, 2, r.stdout);
  // What the pin has comes from the catalog (its CUDA sets grow as nixpkgs adds them).
  const pin = catalog.nixpkgs.find((p) => p.rev.startsWith("2c423e0"))!;
  assert.ok(!pin.cuda.includes("12.6"));
  assert.match(r.stderr, new RegExp(`cuda\\.0: no nixpkgs pin of the matrix has cudaPackages_12_6 \\(2c423e0 has ${pin.cuda.join(", ").replace(/\./g, "\\.")}\\)`));
  assert.match(r.stderr, /python\.0: no nixpkgs pin of the matrix has python311Packages \(2c423e0 has 3\.12, 3\.13, 3\.14\)/);
  assert.equal(readdirSync(dir), ["matrix.ts"]);
  // A value one of several pins has is fine (its drops are documented).
  const ok = writeMatrix(tempDir(), { ...small, releases: [{ torch: "2.12.0" }, { torch: "2.9.1" }], cuda: ["12.8", "13.0"] });
  assert.is((await runMain(["list", "--matrix", ok])).status, 0);
});

test("matrix.ts may set every policy the schema accepts, and it typechecks (MatrixInput is derived from the schema)", async () => {
  const dir = tempDir();
  const m = writeMatrix(dir, { ...widestMatrix(), policy: { binaryCompat: "drop", cudaCapabilitiesScope: "packageSet", requiredSystemFeatures: ["big-parallel", "cuda"] } });
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const out = execFileSync(process.execPath, [tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--allowImportingTsExtensions", "--skipLibCheck", "--types", "node", m], { cwd: ROOT, encoding: "utf8" });
  assert.is(out.trim(), "");
  assert.is((await runMain(["list", "--matrix", m])).status, 0);
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

test("user-facing text carries no internal references (seed documents, DESIGN.md rules)", async () => {
  const texts: [string, string][] = [
    ["README.md", readFileSync(join(ROOT, "README.md"), "utf8")],
    ["BUILD_MATRIX.md", readFileSync(join(ROOT, "BUILD_MATRIX.md"), "utf8")],
    ...readdirSync(join(ROOT, "docs/matrix")).map((f) => [f, readFileSync(join(ROOT, "docs/matrix", f), "utf8")] as [string, string]),
    ["ARCHITECTURE.md", readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8")],
    // Every guide under docs/ (the README's topics moved there: matrix, packages, building, verify, ship, fleet, …).
    ...readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => [f, readFileSync(join(ROOT, "docs", f), "utf8")] as [string, string]),
  ];
  const m = writeMatrix(tempDir(), widestMatrix());
  texts.push(["list --json (widest)", (await runMain(["list", "--json", "--matrix", m])).stdout]);
  texts.push(["list --excluded (widest)", (await runMain(["list", "--excluded", "--matrix", m])).stdout]);
  texts.push(["build --dry-run", (await runMain(["build", "--dry-run", "--filter", "sm=90", "--backend", "nix"])).stdout]);
  for (const [where, t] of texts) {
    assert.not.match(t, /\bseed 0\d\d\b/i, `${where} cites a seed document`);
    assert.not.match(t, /DESIGN\.md rule/, `${where} cites DESIGN.md`);
  }
});

test("build --dry-run needs no network: offline, Nix's failed answer falls back to the model, said so; --ask-nix-timeout 0 evaluates nothing", async () => {
  const dir = tempDir();
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const marker = join(dir, "instantiated");
  // A nix-instantiate that records being called to evaluate (a generated file would fetch its pinned nixpkgs) and
  // fails as an offline Nix does; it answers `--version` (the preflight's Nix version check) as Nix does.
  writeFileSync(
    join(bin, "nix-instantiate"),
    `#!/bin/sh\n[ "$1" = --version ] && { echo "nix-instantiate (Nix) 2.24.9"; exit 0; }\necho "$@" >> ${JSON.stringify(marker)}\necho "error: offline" >&2\nexit 1\n`,
  );
  chmodSync(join(bin, "nix-instantiate"), 0o755);
  const env = { PATH: `${bin}:${process.env.PATH}` };
  const args = ["build", "--dry-run", "--filter", "sm=90", "--filter", "isa=avx2", "--backend", "nix", "--logs-dir", join(dir, "logs")];
  // A PATH of its own, for these calls (runMain sets it and puts it back).
  const never = await runMain([...args, "--ask-nix-timeout", "0"], { env });
  assert.is(never.status, 0, never.stderr);
  assert.match(never.stdout, /to build/);
  assert.not.ok(existsSync(marker), "nix-instantiate was not run with --ask-nix-timeout 0");
  assert.match(never.stdout, /Nix not asked because --ask-nix-timeout 0/);
  // By default it asks; offline the answer is "does not evaluate here" and the plan says the model stands.
  const asked = await runMain(args, { env });
  assert.is(asked.status, 0, asked.stderr);
  assert.ok(existsSync(marker), "Nix was asked");
  assert.match(asked.stdout, /to build/);
  assert.match(asked.stdout, /modelled: .*Nix not asked because no selected file evaluates here/);
  // --verbose gives Nix's own error.
  assert.match((await runMain([...args, "--verbose"], { env })).stdout, /no selected file evaluates here \(.*offline/);
  const p = await runMain([...args, "--ask-store"], { env });
  assert.is(p.status, 0, p.stderr);
  assert.match(p.stdout, /not instantiated here: error: offline/);
});

test("fleet: for hosts nothing serves, advice names only changes that help, and --write-matrix writes nothing generate would reject", async () => {
  const dir = tempDir();
  const out = join(dir, "m.ts");
  const hosts = ["newer-gpu", "h100-old-driver"].map((h) => join(ROOT, "tests/fixtures/hosts", h));
  const r = await runMain(["fleet", ...hosts, "--write-matrix", out]);
  assert.is(r.status, 1);
  assert.not.ok(existsSync(out), "nothing written");
  assert.match(r.stderr, /--write-matrix: no variant serves any of these hosts, so there is no matrix to write; nothing written/);
  assert.not.match(r.stdout, /to serve it: add "/, "no matrix.ts edit is advised: fleet already considers every catalog GPU and ISA");
  assert.match(r.stdout, /to serve it: upgrade the NVIDIA driver to ≥ 570\.26/);
  // When something is served, the written matrix is one generate accepts.
  const ok = await runMain(["fleet", join(ROOT, "tests/fixtures/hosts/thor"), "--write-matrix", out]);
  assert.is(ok.status, 0, ok.stderr);
  assert.is((await runMain(["list", "--matrix", out])).status, 0);
});

test.run();
