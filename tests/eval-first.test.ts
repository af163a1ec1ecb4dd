// Evaluate before building. A matrix whose environment `llm` lists "peftt" (a typo of peft) is generated for one
// catalog pin into a temp tree; the CLI (its main, in-process) builds it against the STAND-IN nixpkgs of that pin
// (tests/fixtures/stand-in-nixpkgs, not nixpkgs: its Python set has peft and einops, no peftt), through a --pkgs-dir
// of one-line files that import each generated wrapper with the stand-in. Real nix-instantiate and nix-build:
// - `build` of the environment stops before any nix-build starts (no result link, no run log of its pytorch), exit 2,
//   naming the variant, the attribute and the pin, with "did you mean peft"; --force too;
// - a selection that evaluates builds as before (the gate is not over-eager);
// - `build --dry-run --ask-store` reports what a build would stop on, builds nothing and exits 0; a plain dry run
//   instantiates nothing and still says "did you mean peft";
// - `generate` and `explain` say "did you mean peft" for peftt, and nothing for an unknown extra close to none;
// - askCached blames an evaluation error on its own file only, whichever file of the batch comes first.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { closeCatalogExtras, extraHints } from "../generator/matrix/extra-hints.ts";
import { evaluationGate, failingAttribute, type EvaluationFailure } from "../generator/driver/eval-first.ts";
import { nixErrorMessage, askCached } from "../generator/driver/store.ts";
import { REPO_ROOT } from "../generator/paths.ts";
import { tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { latestReport, newSalt } from "./helpers/driver.ts";
import { generateForPin } from "./helpers/matrices.ts";
import { currentSystem, importVariant, STAND_IN_BUILDER_FEATURES, standInNixpkgs } from "./helpers/nix.ts";
import type { VariantJson } from "../generator/matrix/schema.ts";

const PIN = catalog.nixpkgs.find((p) => p.rev === "2c423e03bbafcff28bfadc6781a4a8257f205cb5")!;
const ISA = currentSystem() === "aarch64-linux" ? "armv9" : "avx2";
const ENVIRONMENTS = { llm: ["einops", "peftt"] };
/** A directory of `NAME.nix` files, each the generated wrapper of NAME called with the stand-in nixpkgs of the pin. */
function standInPkgsDir(list: VariantJson[]): string {
  const out = path.join(tempDir("vm-evalfirst-pkgs-"), "pkgs");
  mkdirSync(out);
  for (const v of list) writeFileSync(path.join(out, `${v.name}.nix`), `${importVariant(v.file, standInNixpkgs(PIN.rev))}\n`);
  return out;
}

// The generated tree, its variants and the stand-in files: made once for the file, before the first test.
let dir: string;
let list: VariantJson[];
let LLM: VariantJson;
let PYTORCH: VariantJson;
let TORCH_ENV: VariantJson;
let PKGS: string;
test.before(async () => {
  ({ dir, list } = await generateForPin(PIN, ISA, "vm-evalfirst-", { environments: ENVIRONMENTS }));
  const byPackage = (pkg: string) => list.find((v) => v.package === pkg && v.cuda === null)!;
  [LLM, PYTORCH, TORCH_ENV] = [byPackage("llm-env"), byPackage("pytorch"), byPackage("torch-env")];
  PKGS = standInPkgsDir(list);
});

/**
 * `build ARGS` of the generated tree through the stand-in files (the CLI's main in-process; Nix runs as its real
 * child processes), declaring the ISA's system feature as tests/helpers/driver.ts runDriver does; out links and logs in
 * a fresh directory.
 */
async function build(args: string[]) {
  const work = tempDir("vm-evalfirst-run-");
  const r = await runMain(
    // --no-verify: what these tests hold is the variants' evaluation (tests/build-proof.test.ts holds the checks').
    ["build", "--no-verify", "--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`, "--backend", "nix", "--root", dir, "--matrix", path.join(dir, "matrix.ts"),
      "--pkgs-dir", PKGS, "--out-dir", path.join(work, "out"), "--logs-dir", path.join(work, "logs"), "--nix-option", "substituters=", "--plain", ...args],
    { env: { VM_BUILD_TEST_SALT: newSalt() } },
  );
  const ls = (d: string) => (existsSync(path.join(work, d)) ? readdirSync(path.join(work, d)) : []);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, outLinks: ls("out"), logs: ls("logs"), logsDir: path.join(work, "logs") };
}

test("build of an environment with an extra the pin lacks stops before any nix-build: exit 2, naming the variant, the attribute and the pin", async () => {
  for (const force of [[], ["--force"]]) {
    const r = await build([LLM.name, ...force]);
    const how = force.join(" ") || "plain";
    assert.is(r.code, 2, `${how}: ${r.stdout}${r.stderr}`);
    // Its pytorch, torchaudio and torchvision come first in the plan: none of them was built, no run was logged.
    assert.equal(r.outLinks, [], `${how}: no result link (nothing built, ${PYTORCH.name} included)`);
    assert.equal(r.logs, [], `${how}: no run log (no nix-build started)`);
    assert.is(r.stdout, "", `${how}: no summary`);
    assert.match(r.stderr, new RegExp(`^variant-matrix: error: 1 of ${LLM.dependsOn.length + 1} selected variant\\(s\\) do not evaluate; nothing was built`));
    assert.match(r.stderr, `${LLM.name} (nixpkgs ${PIN.rev}), attribute python313Packages.peftt: `);
    assert.match(r.stderr, /did you mean peft\?/);
    assert.not.match(r.stderr, /--show-trace/, "Nix's advice is not part of the message");
  }
});

test("a selection that evaluates builds as before: torch-env and what it holds are built (or already in the store)", async () => {
  const r = await build([TORCH_ENV.name]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.not.match(r.stderr, /do not evaluate/);
  const report = latestReport(r.logsDir);
  assert.equal(
    report.variants.map((v) => [v.name, v.status === "built" || v.status === "cached"]).sort(),
    [...TORCH_ENV.dependsOn, TORCH_ENV.name].map((n) => [n, true]).sort(),
  );
});

test("build --dry-run --ask-store names what a build would stop on (JSON evaluationErrors) and builds nothing; a plain dry run instantiates nothing but says did you mean peft", async () => {
  const asked = await build([LLM.name, "--dry-run", "--ask-store", "--json"]);
  assert.is(asked.code, 0, asked.stderr);
  const plan = JSON.parse(asked.stdout);
  assert.equal(
    plan.evaluationErrors.map((e: EvaluationFailure) => [e.name, e.nixpkgs, e.attribute, e.hint]),
    [[LLM.name, PIN.rev, "python313Packages.peftt", "did you mean peft?"]],
  );
  assert.match(asked.stderr, new RegExp(`^warning: 1 of ${LLM.dependsOn.length + 1} selected variant\\(s\\) do not evaluate; \x60build\x60 would stop before building any:`, "m"));
  assert.equal(asked.outLinks, []);
  const plain = await build([LLM.name, "--dry-run", "--json"]);
  assert.is(plain.code, 0, plain.stderr);
  assert.is(JSON.parse(plain.stdout).evaluationErrors, null, "nothing instantiated: nothing known");
  assert.match(plain.stderr, `warning: extra "peftt" of ${LLM.name} is not one the catalog knows; did you mean peft?`);
});

test("generate and explain say did you mean peft for peftt, and nothing for an extra close to no catalog extra", async () => {
  const out = tempDir("vm-evalfirst-gen-");
  cpSync(path.join(REPO_ROOT, "pkgs"), path.join(out, "pkgs"), { recursive: true });
  const r = await runMain(["generate", "--matrix", path.join(dir, "matrix.ts"), "--out", out]);
  assert.is(r.status, 0, r.stderr);
  const warnings = r.stderr.split("\n").filter((l) => l.startsWith("warning: environments."));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0]!, /^warning: environments\.llm: "peftt" is not an extra the catalog knows .*did you mean peft\?/);
  // explain of the environment says the same beside its extras.
  const e = await runMain(["explain", LLM.name, "--matrix", path.join(dir, "matrix.ts")]);
  assert.is(e.status, 0, e.stderr);
  assert.match(e.stdout, /^note: extra peftt is not one the catalog knows; did you mean peft\?/m);
  assert.not.match(e.stdout, /extra einops is not one/);
  // The pure side: a known extra, and one close to none, give no hint; two close ones are both named.
  assert.equal(extraHints(catalog, { llm: ["peft", "timm", "peftt"], x: ["transformer"] }), [
    { environment: "llm", extra: "peftt", closest: ["peft"] },
    { environment: "x", extra: "transformer", closest: ["transformers"] },
  ]);
  assert.equal(closeCatalogExtras(catalog, "einops"), []);
});

test("askCached: an evaluation error is its own file's, whichever file of the batch fails first", async () => {
  const files = [LLM, PYTORCH].map((v) => ({ name: v.name, file: path.join(PKGS, `${v.name}.nix`) }));
  const answers = await askCached(files, tempDir("vm-evalfirst-ask-"));
  const llm = answers.get(LLM.name)!;
  const pt = answers.get(PYTORCH.name)!;
  assert.is(llm.drvPath, null);
  assert.match(llm.note ?? "", new RegExp(`^error: ${LLM.name}: nixpkgs ${PIN.rev} has no python313Packages\\.peftt`));
  assert.match(pt.drvPath ?? "", /^\/nix\/store\/[0-9a-z]{32}-pytorch-python313-cpu-/, "the file that evaluates has its .drv");
  assert.is(pt.note, undefined);
});

test("Nix's message and the attribute it names, in the error formats of Nix 2.8 and later", () => {
  const old = "error: attribute 'peftt' missing\n\n       at /x/torch-env.nix:44:5:\n\n(use '--show-trace' to show detailed location information)\n";
  assert.is(nixErrorMessage(old, "?"), "error: attribute 'peftt' missing");
  // Later Nix: a bare "error:", the trace, then the message last.
  const later = "error:\n       … while calling the 'throw' builtin\n         at /x/torch-env.nix:44:5:\n\n       error: llm-env-x: nixpkgs abc has no python313Packages.peftt (an extra)\n";
  assert.is(nixErrorMessage(later, "?"), "error: llm-env-x: nixpkgs abc has no python313Packages.peftt (an extra)");
  assert.is(nixErrorMessage("warning: something\n", "fallback"), "fallback");
  assert.is(failingAttribute("llm-env-x: nixpkgs abc has no python313Packages.peftt (an extra of this environment)"), "python313Packages.peftt");
  assert.is(failingAttribute("attribute 'peftt' missing"), "peftt");
  assert.is(failingAttribute("undefined variable 'lib'"), "lib");
  assert.is(failingAttribute("hash mismatch in file downloaded from 'https://x'"), null);
});

test("the gate: the nix backend stops on every failure; flox is not judged by a missing or too old nix-instantiate, nor on files only its callPackage can call", () => {
  const f = (name: string, message: string): EvaluationFailure => ({ name, nixpkgs: null, attribute: null, message, hint: null });
  const typo = f("llm-env-a", "llm-env-a: nixpkgs abc has no python313Packages.peftt");
  const own = f("own-b", "cannot auto-call a function that has an argument without a default value ('stdenv')");
  assert.equal(evaluationGate("nix", true, () => null, [typo, own]).stop, [typo, own]);
  assert.equal(evaluationGate("flox", true, () => "2.24.9", [typo, own]).stop, [typo]);
  assert.equal(evaluationGate("flox", true, () => "2.24.9", [typo, own]).pass, [own]);
  assert.equal(evaluationGate("flox", true, () => null, [typo]).stop, []);
  assert.match(evaluationGate("flox", true, () => "2.8.0", [typo]).why ?? "", /Nix 2\.8\.0 is older than/);
  assert.equal(evaluationGate("flox", false, () => "2.8.0", [typo]).stop, [typo], "own files: this Nix judges them");
});

test.run();
