// Remote builders over Nix's SSH protocol and a binary-cache round trip, for real: a test sshd
// on 127.0.0.1 (tests/helpers/sshd.ts), the build driver as a child process, the tiny fixture derivations of
// tests/fixtures/build-pkgs (stand-ins named like variants; they build in a second).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "./helpers/cli.ts";
import { BUILD_MATRIX, FIXTURES, latestReport, newSalt, runDriver } from "./helpers/driver.ts";
import { hasSshd, startSshd } from "./helpers/sshd.ts";

const PT = "pytorch-python313-cpu-avx2";
const TA = "torchaudio-python313-cpu-avx2";
const SYSTEM = execFileSync("nix-instantiate", ["--eval", "--json", "-E", "builtins.currentSystem"], { encoding: "utf8" }).trim().replace(/"/g, "");

const driver = (dir: string, args: string[], env: Record<string, string>) =>
  runDriver(
    // The fixtures carry no checks (--no-verify): what these tests hold is where builds run.
    ["--no-verify", "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--out-dir", join(dir, "out"), "--logs-dir", join(dir, "logs"), "--plain", "--backend", "nix", ...args],
    { ...process.env, ...env },
  );
const report = (dir: string) => latestReport(join(dir, "logs"));
const salt = newSalt;

test("openssh-server is installed (.ci/run installs it)", () => {
  assert.ok(hasSshd(), "/usr/sbin/sshd not found: apt-get install openssh-server");
});

test("remote builders: --max-jobs 0 --builders @machines builds every variant on the SSH builder; the report and log say where", async () => {
  const sshd = await startSshd(SYSTEM);
  try {
    const dir = tempDir("vm-remote-");
    const env = { ...sshd.env, VM_BUILD_TEST_SALT: salt(), VM_BUILD_TEST_SLEEP: "0" };
    const r = await driver(dir, [TA, "--max-jobs", "0", "--builders", `@${sshd.machinesFile}`, "--nix-option", "substituters="], env);
    assert.is(r.code, 0, r.stdout + r.stderr);
    const rep = report(dir);
    assert.equal(rep.variants.map((v) => v.name), [PT, TA]);
    for (const v of rep.variants) {
      assert.is(v.status, "built", v.name);
      assert.is(v.origin, "built", v.name);
      assert.match(v.machine ?? "", /^ssh:\/\/vmtest\?/, `${v.name} built on the remote machine`);
      assert.ok(v.outPath && existsSync(v.outPath), `${v.name}: output copied back into the local store`);
      assert.ok(existsSync(join(sshd.remoteRoot, "nix/store", basename(v.outPath!))), `${v.name}: built in the remote store`);
      assert.match(readFileSync(v.log!, "utf8"), /building '\/nix\/store\/.*\.drv' on 'ssh:\/\/vmtest/);
      assert.match(readFileSync(v.outPath!, "utf8"), new RegExp(v.name));
    }
    assert.match(r.stderr, /built\s+pytorch-python313-cpu-avx2 in .* on ssh:\/\/vmtest/, "live status names the machine");
    assert.match(r.stdout, /built on ssh:\/\/vmtest/, "summary table names the machine");
  } finally {
    sshd.stop();
  }
});

test("binary cache: --copy-to file:// pushes each closure; a fresh store then substitutes instead of building", async () => {
  const dir = tempDir("vm-cache-");
  const cache = join(dir, "cache");
  const env = { VM_BUILD_TEST_SALT: salt(), VM_BUILD_TEST_SLEEP: "0" };
  const first = await driver(dir, [PT, "--copy-to", `file://${cache}`, "--nix-option", "substituters="], env);
  assert.is(first.code, 0, first.stdout + first.stderr);
  const pushed = report(dir).variants[0]!;
  assert.is(pushed.origin, "built");
  assert.is(pushed.machine, "local");
  assert.is(pushed.copiedTo, `file://${cache}`);
  assert.is(pushed.copyError, null);
  const hash = basename(pushed.outPath!).slice(0, 32);
  assert.ok(readdirSync(cache).includes(`${hash}.narinfo`), "the cache holds the output's narinfo");

  // The same variant into a fresh store that has never seen it: substituted from the cache, not built.
  const fresh = join(dir, "fresh-store");
  const dir2 = tempDir("vm-cache2-");
  const second = await driver(
    dir2,
    [PT, "--nix-option", `store=${fresh}`, "--nix-option", "require-sigs=false", "--substituters", `file://${cache}`],
    env,
  );
  assert.is(second.code, 0, second.stdout + second.stderr);
  const got = report(dir2).variants[0]!;
  assert.is(got.status, "built");
  assert.is(got.origin, "substituted", readFileSync(got.log!, "utf8"));
  assert.is(got.machine, `file://${cache}`);
  assert.ok(existsSync(join(fresh, "nix/store", basename(pushed.outPath!))), "the output is in the fresh store");
  assert.not.match(readFileSync(got.log!, "utf8"), /building '\/nix\/store\/[a-z0-9]{32}-pytorch-python313-cpu-avx2\.drv'/);

  // Run again: already present, reported as such.
  const third = await driver(dir2, [PT, "--nix-option", `store=${fresh}`, "--force", "--nix-option", "require-sigs=false", "--substituters", `file://${cache}`], env);
  assert.is(third.code, 0, third.stderr);
  assert.is(report(dir2).variants[0]!.origin, "present");
});

test.run();
