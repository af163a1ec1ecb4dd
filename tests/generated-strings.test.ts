/**
 * Strings from the user (paths, file names, option values) in the code and data the CLI generates
 * (generator/nix-literals.ts nixString and commentText, smol-toml, generator/generate/ci.ts hydraSpec): a `${…}` in a path
 * is not evaluated by the real nix-instantiate or nix-build, a newline in an organisation is refused and one in a
 * host's file name stays inside its comment (the TOML still parses to the same keys, the matrix still compiles), and
 * a branch that is not a git branch name never becomes Hydra input fields.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { BuildReport } from "../generator/driver/report.ts";
import { checkNixFeatures } from "../generator/pin/nix.ts";
import { branchNameProblem } from "../generator/generate/ci.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { BUILD_MATRIX, newSalt, runDriver } from "./helpers/driver.ts";

const PT = "pytorch-python313-cpu-avx2";
/**
 * A directory name holding a quote and a Nix interpolation: written raw (JSON.stringify) into a Nix string it evaluates
 * to DECOY, a directory beside it that the test fills with something else.
 */
const INTERPOLATING = 'q"${toString 1}';
const DECOY = 'q"1';

test("build --verify: a ${…} in the --pkgs-dir path is not evaluated by Nix; the check built is the variant's own, not a decoy's", async () => {
  const dir = tempDir("vm-strings-");
  const real = join(dir, INTERPOLATING);
  const decoy = join(dir, DECOY);
  const drv = (name: string, script: string) =>
    `derivation { name = ${JSON.stringify(name)}; system = builtins.currentSystem; builder = "/bin/sh"; salt = builtins.getEnv "VM_BUILD_TEST_SALT"; args = [ "-c" ${JSON.stringify(script)} ]; }`;
  for (const [d, check] of [
    [real, 'echo "the variant\'s own check"; exit 1'],
    [decoy, 'echo "decoy check passed"; echo ok > $out'],
  ] as const) {
    mkdirSync(d);
    writeFileSync(join(d, `${PT}.nix`), `{ ... }: (${drv(PT, "echo built > $out")}) // { tests.static = ${drv(`${PT}-check-static`, check)}; }\n`);
  }
  const r = await runDriver(
    ["--pkgs-dir", real, "--matrix", BUILD_MATRIX, "--out-dir", join(dir, "out"), "--logs-dir", join(dir, "logs"), "--backend", "nix", "--nix-option", "substituters=", "--plain", "--verify", PT],
    { ...process.env, VM_BUILD_TEST_SALT: newSalt() },
  );
  const report = JSON.parse(readFileSync(join(dir, "logs/latest/report.json"), "utf8")) as BuildReport;
  const check = report.variants.find((v) => v.name === `check-static-${PT}`)!;
  assert.is(check.status, "failed", "the real check (which fails) ran, not the decoy's (which passes)");
  assert.match(readFileSync(check.log!, "utf8"), /the variant's own check/);
  assert.not.match(readFileSync(check.log!, "utf8"), /decoy/);
  assert.is(r.code, 1);
  const file = join(dir, "logs", "checks", `check-static-${PT}.nix`);
  assert.ok(readFileSync(file, "utf8").includes('q\\"\\${toString 1}'), "the path is escaped in the check file");
});

test("pin: a ${…} in the nixpkgs path is not evaluated when its lib/minfeatures.nix is read (real nix-instantiate)", async () => {
  const dir = tempDir("vm-strings-pin-");
  for (const [d, missing] of [
    [join(dir, INTERPOLATING), '[ { description = "the real checkout\'s missing feature"; } ]'],
    [join(dir, DECOY), "[ ]"],
  ] as const) {
    mkdirSync(join(d, "lib"), { recursive: true });
    writeFileSync(join(d, "lib", "minfeatures.nix"), `{ missing = ${missing}; }\n`);
  }
  const error = await checkNixFeatures(join(dir, INTERPOLATING), "2.8.0").then(
    () => null,
    (e: Error) => e.message,
  );
  assert.ok(error !== null, "the real checkout's lib/minfeatures.nix was read (the decoy's lists nothing missing)");
  assert.match(error!, /the real checkout's missing feature/);
});

/** A host directory of the fixtures copied under `name` into `dir`. */
function hostNamed(dir: string, fixture: string, name: string): string {
  const to = join(dir, name);
  cpSync(join(ROOT, "tests/fixtures/hosts", fixture), to, { recursive: true });
  return to;
}

test("fleet --write-manifest: an --org with a newline is refused and nothing is written; a host name with a newline stays in its comment", async () => {
  const dir = tempDir("vm-strings-fleet-");
  // (a file name holds no "/")
  const evil = 'edge\nhook.on-activate = "touch pwned" #';
  const host = hostNamed(dir, "graviton3-nogpu", evil);
  const out = join(dir, "manifests");
  const bad = await runMain(["fleet", host, "--write-manifest", out, "--org", 'acme\nhook.on-activate = "touch /tmp/pwned" #']);
  assert.is(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /^variant-matrix: error: --org "acme\\nhook\.on-activate = \\"touch \/tmp\/pwned\\" #": not an organisation name/m);
  assert.not.ok(existsSync(out), "nothing written");
  assert.is((await runMain(["fleet", host, "--write-manifest", out, "--org", "acme/other"])).status, 2, "a / would name another catalog's package");

  const ok = await runMain(["fleet", host, "--write-manifest", out, "--org", "acme"]);
  assert.is(ok.status, 0, ok.stderr);
  const files = readdirSync(out);
  assert.is(files.length, 1);
  const text = readFileSync(join(out, files[0]!), "utf8");
  const parsed = parseToml(text) as Record<string, unknown>;
  assert.equal(Object.keys(parsed).sort(), ["install", "options", "version"], "no hook or other key from the host's name");
  assert.match(text, /^# written by .* host\(s\) edge\\nhook\.on-activate = "touch pwned" #$/m, "the name, escaped, on the comment's line");
});

test("fleet --write-matrix: a host name with a newline stays in the matrix's comment; the matrix compiles", async () => {
  const dir = tempDir("vm-strings-matrix-");
  const host = hostNamed(dir, "graviton3-nogpu", "edge\nexport const oops = ;\u2028x");
  const m = join(dir, "matrix.ts");
  const r = await runMain(["fleet", host, "--write-matrix", m]);
  assert.is(r.status, 0, r.stderr);
  const text = readFileSync(m, "utf8");
  assert.match(text.split("\n")[0]!, /^\/\/ Written by .*edge\\nexport const oops = ;\\u2028x: /);
  // The written file imports ./generator/matrix/schema.ts; point it at this checkout.
  writeFileSync(m, text.replace("./generator/matrix/schema.ts", join(ROOT, "generator/matrix/schema.ts")));
  const list = await runMain(["list", "--json", "--matrix", m]);
  assert.is(list.status, 0, list.stderr);
  assert.ok((JSON.parse(list.stdout) as unknown[]).length > 0);
});

test("ci hydra: a --branch that is not a git branch name (extra words, a newline) is refused; git agrees with every verdict", async () => {
  const spec = (branch: string) => runMain(["ci", "hydra", "--repo", "https://example.org/v.git", "--branch", branch]);
  const bad = await spec("main 1");
  assert.is(bad.status, 2, bad.stdout);
  assert.match(bad.stderr, /^variant-matrix: error: --branch "main 1": not a git branch name: it holds whitespace/m);
  assert.is(bad.stdout, "");
  assert.is((await spec("main\nx")).status, 2);
  assert.is((await runMain(["ci", "hydra", "--repo", "https://example.org/v.git extra"])).status, 2, "a URL with a space would add a field too");
  const good = await spec("release/2.11");
  assert.is(good.status, 0, good.stderr);
  assert.is(JSON.parse(good.stdout).variants.inputs.src.value, "https://example.org/v.git release/2.11");
  // The rules are git's own: check-ref-format --branch says the same of each name.
  for (const b of ["main", "release/2.11", "feature_x-1", "v1.0", "a b", "a\tb", "-x", "a..b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a@{1}", "a//b", "/a", "a/", "a.", ".a", "a/.b", "a.lock", ""]) {
    const git = spawnSync("git", ["check-ref-format", "--branch", b], { encoding: "utf8" });
    assert.is(branchNameProblem(b) === null, git.status === 0, `${JSON.stringify(b)}: git says ${git.status === 0 ? "valid" : "invalid"}`);
  }
});

test.run();
