/**
 * A matrix edited but not regenerated stops `detect` and `install` as it stops `build` (issue 55): before, detect
 * recommended a variant whose file did not exist (exit 0), and install checked the host against a file that was not
 * there ("the files built are your own (--pkgs-dir)" with no --pkgs-dir) before the build refused. A project of its
 * own (a matrix generated into a temporary directory, as `generate --matrix M --out DIR` makes one): fresh, both
 * commands answer; after the edit both exit 2 naming `npm run generate`, nothing printed on stdout, nothing linked.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HOSTS } from "./helpers/host-model.ts";
import { runMain } from "./helpers/main.ts";
import { tempDir, writeMatrix } from "./helpers/cli.ts";

const PIN = { torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" };
const BODY = { releases: [PIN], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512"], cpuOnly: true, policy: { cudaCapabilitiesScope: "torch" } };
const H100 = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt")];

async function project() {
  const dir = tempDir("vm-stale-");
  const matrix = writeMatrix(dir, BODY);
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  return { dir, matrix };
}

const STALE = /the generated files do not say what \S*matrix\.ts gives now \(\S*matrix\.ts changed since the last generate\)/;

test("detect: a fresh project answers; matrix.ts edited (a Python added: the pick's file does not exist) exits 2 naming npm run generate", async () => {
  const { dir, matrix } = await project();
  const fresh = await runMain(["detect", "--json", "--matrix", matrix, ...H100]);
  assert.is(fresh.status, 0, fresh.stderr);
  assert.is(JSON.parse(fresh.stdout).variants[0], "torch-env-python313-cuda12_8-sm90-avx512");
  // 3.14 is newer: detect would pick torch-env-python314-…, which the last generate never wrote.
  writeMatrix(dir, { ...BODY, python: ["3.14", "3.13"] });
  for (const args of [["detect"], ["detect", "--json"], ["detect", "--package", "pytorch"]]) {
    const r = await runMain([...args, "--matrix", matrix, ...H100]);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.is(r.stdout, "", args.join(" "));
    assert.match(r.stderr, STALE);
    assert.match(r.stderr, /pkgs\/variants\.nix/);
    assert.match(r.stderr, /Run `npm run generate` first/);
  }
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  const after = await runMain(["detect", "--json", "--matrix", matrix, ...H100]);
  assert.is(after.status, 0, after.stderr);
  assert.ok(existsSync(join(dir, ".flox/pkgs", `${JSON.parse(after.stdout).variants[0]}.nix`)), "the pick's file exists");
});

test("detect: a variant file deleted by hand (the shared data unchanged) is named as missing, not recommended", async () => {
  const { dir, matrix } = await project();
  rmSync(join(dir, ".flox/pkgs/torch-env-python313-cuda12_8-sm90-avx512.nix"));
  const r = await runMain(["detect", "--matrix", matrix, ...H100]);
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /\.flox\/pkgs\/torch-env-python313-cuda12_8-sm90-avx512\.nix is missing: .*Run `npm run generate` first/);
});

test("install (and --dry-run): matrix.ts edited stops before the checks, exit 2; no check of a file that is not there, nothing linked", async () => {
  const { dir, matrix } = await project();
  const at = join(dir, "torch-env");
  const args = ["install", "--dry-run", "--dir", at, "--backend", "nix", "--logs-dir", join(dir, "logs"), "--matrix", matrix, ...H100];
  const fresh = await runMain(args);
  assert.is(fresh.status, 0, fresh.stderr);
  assert.match(fresh.stdout, /^install torch-env-python313-cuda12_8-sm90-avx512 /);
  writeMatrix(dir, { ...BODY, python: ["3.14", "3.13"] });
  for (const a of [args, args.filter((x) => x !== "--dry-run"), [...args.filter((x) => x !== "--dry-run"), "torch-env-python313-cuda12_8-sm90-avx512"]]) {
    const r = await runMain(a);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.is(r.stdout, "");
    assert.match(r.stderr, STALE);
    assert.match(r.stderr, /so `install` would hand Nix the parameters of the last generate/);
    assert.not.match(r.stderr, /--pkgs-dir|Nix version/);
  }
  assert.not.ok(existsSync(at));
  assert.not.ok(existsSync(join(dir, "logs")));
});

test("doctor: matrix.ts edited stops it as it stops detect and install, exit 2 naming npm run generate; fresh, it checks", async () => {
  const { dir, matrix } = await project();
  const args = ["doctor", "--backend", "nix", "--matrix", matrix, ...H100];
  const fresh = await runMain(args);
  assert.ok(fresh.status === 0 || fresh.status === 1, fresh.stderr);
  assert.match(fresh.stdout, /^doctor: torch-env-python313-cuda12_8-sm90-avx512 /);
  writeMatrix(dir, { ...BODY, python: ["3.14", "3.13"] });
  for (const a of [args, [...args, "--json"], [...args, "torch-env-python313-cuda12_8-sm90-avx512"]]) {
    const r = await runMain(a);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.is(r.stdout, "");
    assert.match(r.stderr, /^variant-matrix: error: doctor: /);
    assert.match(r.stderr, STALE);
    assert.match(r.stderr, /Run `npm run generate` first/);
  }
});

test.run();
