/**
 * install names a failure's real cause (issue 55): its evaluation failing on a download without network is the
 * network's ("nothing in matrix.ts is wrong"), a --pkgs-dir file of the user's own that does not evaluate is theirs;
 * neither is told to "fix matrix.ts". Real nix-instantiate (this machine has no network) through install's own path
 * (its output probe, which stops install before the build driver evaluates the file again), on a NixOS host model
 * whose checks pass; nothing is built or linked, and no log directory is made.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { runCli, tempDir } from "./helpers/cli.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";

const variant = projectFromMatrix(matrix).variants.find((v) => v.package === "pytorch" && v.cuda === null && v.system === "x86_64-linux")!;
const recorded = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];

/** install of `variant` from a --pkgs-dir holding one file of `body`. */
function installOwn(body: string) {
  const h = makeHost({ recorded: "spr-h100", nixos: true, realNixTools: true, nixConf: { "system-features": variant.requiredSystemFeatures.join(" "), substituters: "" } });
  const pkgs = join(h.dir, "pkgs");
  mkdirSync(pkgs);
  writeFileSync(join(pkgs, `${variant.name}.nix`), body);
  const dir = join(h.dir, "pytorch");
  const logs = join(h.dir, "logs");
  // The real nix-instantiate, each run counted: install evaluates the file once (its output probe) and stops there.
  const evaluations = join(h.dir, "nix-instantiate.runs");
  writeFileSync(join(h.bin, "nix-instantiate"), `#!/bin/sh\necho "$*" >> "${evaluations}"\nexec /usr/bin/nix-instantiate "$@"\n`, { mode: 0o755 });
  const r = runCli(["install", variant.name, "--dir", dir, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", pkgs, "--logs-dir", logs, "--plain", "--ask-nix-timeout", "0", ...recorded], {
    env: h.env,
  });
  const runs = existsSync(evaluations) ? readFileSync(evaluations, "utf8").trim().split("\n") : [];
  return { r, dir, logs, evaluations: runs.filter((l) => l.endsWith(`${variant.name}.nix`)).length };
}

test("install without network: the download that fails is named as the network's, not matrix.ts's; nothing linked", () => {
  const { r, dir, evaluations } = installOwn(`import (builtins.fetchTarball "https://github.com/NixOS/nixpkgs/archive/2c423e03bbafcff28bfadc6781a4a8257f205cb5.tar.gz") { }\n`);
  assert.is(r.status, 2, r.stdout + r.stderr);
  const flat = r.stderr.replace(/\s+/g, " ");
  assert.match(flat, /unable to download 'https:\/\/github\.com\/NixOS\/nixpkgs\/archive\/2c423e0/);
  assert.match(flat, /Nix could not download what the files fetch \(the pinned nixpkgs\): nothing in matrix\.ts is wrong/);
  assert.not.match(flat, /fix matrix\.ts/);
  assert.not.ok(existsSync(dir));
  // Said after one evaluation (offline, each waits out Nix's download attempts), not again by the build driver.
  assert.is(evaluations, 1);
});

test("install of a --pkgs-dir file that does not evaluate (no `tests` either): the user's own file is named, not matrix.ts", () => {
  const { r, dir, evaluations } = installOwn(`throw "my own derivation is unfinished"\n`);
  assert.is(r.status, 2, r.stdout + r.stderr);
  const flat = r.stderr.replace(/\s+/g, " ");
  assert.match(flat, /my own derivation is unfinished/);
  assert.match(flat, /the failing files are your own \(--pkgs-dir\): fix them there/);
  assert.not.match(flat, /fix matrix\.ts/);
  assert.not.ok(existsSync(dir));
  assert.is(evaluations, 1);
});

test.run();
