/**
 * What `build` shows is what it builds: the plan is expanded from matrix.ts, while Nix reads the last generate's
 * pkgs/variants.nix, release.nix and wrappers. When they differ (matrix.ts edited without `generate`, a generated
 * file edited by hand), `build` (dry run or not), `eval` and `publish --org` (flox builds the files) stop with exit 2 before any work and name
 * `npm run generate`; after it, they go ahead. Real child processes of the CLI, real files.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const PIN = { torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" };
const BODY = { releases: [PIN], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512"], cpuOnly: false, policy: { cudaCapabilitiesScope: "torch" } };
const NAME = "pytorch-python313-cuda12_8-sm90-avx512";

async function project() {
  const dir = tempDir("vm-genstate-");
  const matrix = writeMatrix(dir, BODY);
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  const at = (args: string[]) => runMain([...args, "--matrix", matrix, "--root", dir]);
  return { dir, matrix, at };
}

test("matrix.ts edited without generate: build --dry-run, build, eval and publish exit 2 naming npm run generate; nothing runs", async () => {
  const { dir, matrix, at } = await project();
  const ok = await at(["build", NAME, "--dry-run", "--json"]);
  assert.is(ok.status, 0, ok.stderr);
  assert.is(JSON.parse(ok.stdout).variants[0].name, NAME);
  // The scope changes every variant's parameters; pkgs/variants.nix still says torch scope.
  writeMatrix(dir, { ...BODY, policy: { cudaCapabilitiesScope: "packageSet" } });
  for (const args of [["build", NAME, "--dry-run"], ["build", NAME, "--dry-run", "--json"], ["build", NAME, "--logs-dir", join(dir, "logs")], ["eval", NAME], ["publish", NAME, "--org", "acme"]]) {
    const r = await at(args);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /^variant-matrix: error: the generated files do not say what .*matrix\.ts gives now \(.*matrix\.ts changed since the last generate\): pkgs\/variants\.nix differs/m, args.join(" "));
    assert.match(r.stderr, /Run `npm run generate` first/);
  }
  assert.not.ok(existsSync(join(dir, "logs")), "the build started nothing (no logs)");
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  const after = await at(["build", NAME, "--dry-run", "--json"]);
  assert.is(after.status, 0, after.stderr);
});

test("a generated wrapper edited by hand is named; a hand-written (header-less) file in .flox/pkgs is the user's own", async () => {
  const { dir, at } = await project();
  const file = join(dir, ".flox/pkgs", `${NAME}.nix`);
  const original = readFileSync(file, "utf8");
  writeFileSync(file, original.replace(`package "${NAME}"`, `package "pytorch-python313-cpu-avx512"`));
  const r = await at(["build", NAME, "--dry-run"]);
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`\\(a generated file was edited by hand: \\.flox/pkgs/${NAME}\\.nix\\): \\.flox/pkgs/${NAME}\\.nix differs`));
  // The user's own derivation under the variant's name (no generated header): built as it is.
  writeFileSync(file, "{ ... }: derivation { name = \"mine\"; system = \"x86_64-linux\"; builder = \"/bin/sh\"; }\n");
  const own = await at(["build", NAME, "--dry-run"]);
  assert.is(own.status, 0, own.stderr);
});

test.run();
