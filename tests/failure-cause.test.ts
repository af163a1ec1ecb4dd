/**
 * Each evaluation failure names its real cause (generator/driver/eval-first.ts failureCause): with no network, a
 * file that fetches a tarball fails on the download and `build` says so, not "fix matrix.ts"; a --pkgs-dir file of the
 * user's own that does not evaluate (or has no `tests` for --verify) is named as the user's; the generated files' own
 * refusals stay matrix.ts's. Real nix-instantiate through the build driver (this machine has no network), and the
 * pure classification of Nix's messages.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { evaluationFailureText, failureCause, type EvaluationFailure } from "../generator/driver/eval-first.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const variant = projectFromMatrix(matrix).variants.find((v) => v.package === "pytorch" && v.cuda === null && v.system === "x86_64-linux")!;

/** `build NAME --pkgs-dir DIR` of one file holding `body`, with the features its variant requires declared. */
function buildOwn(body: string, extra: string[] = []) {
  // In-process (runMain): the build's errors and exit status are main's; no process boundary matters here.
  const dir = tempDir("vm-cause-");
  const pkgs = join(dir, "pkgs");
  mkdirSync(pkgs);
  writeFileSync(join(pkgs, `${variant.name}.nix`), body);
  return runMain([
    // The own files here carry no checks (--no-verify): what these tests hold is whose failure it is.
    "build", variant.name, "--no-verify", "--backend", "nix", "--pkgs-dir", pkgs, "--out-dir", dir, "--logs-dir", join(dir, "logs"), "--plain",
    "--nix-option", "substituters=", "--nix-option", "connect-timeout=1", "--nix-option", `system-features=${variant.requiredSystemFeatures.join(" ")}`, ...extra,
  ]);
}

test("no network: a download that fails is named as the network's, with no advice to edit matrix.ts", async () => {
  const r = await buildOwn(`import (builtins.fetchTarball "https://github.com/NixOS/nixpkgs/archive/2c423e03bbafcff28bfadc6781a4a8257f205cb5.tar.gz") { }\n`);
  assert.is(r.status, 2, r.stdout + r.stderr);
  const flat = r.stderr.replace(/\s+/g, " ");
  assert.match(flat, /unable to download 'https:\/\/github\.com\/NixOS\/nixpkgs\/archive\/2c423e0/);
  assert.match(flat, /Nix could not download what the files fetch \(the pinned nixpkgs\): nothing in matrix\.ts is wrong; connect this machine to the network/);
  assert.not.match(flat, /fix matrix\.ts/);
});

test("a --pkgs-dir file of the user's own that does not evaluate is named as theirs, not matrix.ts's", async () => {
  const r = await buildOwn(`throw "my own derivation is unfinished"\n`);
  assert.is(r.status, 2, r.stdout + r.stderr);
  const flat = r.stderr.replace(/\s+/g, " ");
  assert.match(flat, /my own derivation is unfinished/);
  assert.match(flat, /the failing files are your own \(--pkgs-dir\): fix them there/);
  assert.not.match(flat, /fix matrix\.ts/);
});

test("failureCause: Nix's download errors are the network's; the generated files' refusals the matrix's; else the user's own file under --pkgs-dir", () => {
  assert.is(failureCause("unable to download 'https://x/y.tar.gz': Couldn't resolve host name (6)", false), "network");
  assert.is(failureCause("unable to download 'https://x/y.tar.gz': Timeout was reached (28)", true), "network");
  assert.is(failureCause("hash mismatch in file downloaded from 'https://x/y.tar.gz'", false), "matrix");
  assert.is(failureCause("llm-env-…: nixpkgs 2c423e0 has no python313Packages.peftt (an extra of this environment …)", true), "matrix");
  assert.is(failureCause("attribute 'tests' missing", true), "file");
  assert.is(failureCause("attribute 'tests' missing", false), "matrix");
  const f = (cause: EvaluationFailure["cause"], name: string): EvaluationFailure => ({ name, nixpkgs: null, attribute: null, message: `m ${name}`, hint: null, cause });
  const text = evaluationFailureText([f("network", "a"), f("matrix", "b")], 2, 200);
  assert.match(text, /connect this machine to the network/);
  assert.match(text, /fix matrix\.ts \(or its pin\)/);
  assert.not.match(text, /your own/);
});

test.run();
