/**
 * A remote builder that accepts the connection and never speaks: the build driver gives ssh a connect timeout
 * (NIX_SSHOPTS ConnectTimeout, which OpenSSH applies to the banner exchange too), so the run ends instead of hanging,
 * and the failure names the builder that did not answer. A real local TCP port that accepts and stays silent, real
 * ssh and nix-build, the tiny stand-in derivations of tests/fixtures/build-pkgs; the port is closed after.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer, type Socket } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers/cli.ts";
import { BUILD_MATRIX, FIXTURES, latestReport, newSalt, runDriver } from "./helpers/driver.ts";
import { withSshTimeouts } from "../generator/driver/backend.ts";

test("withSshTimeouts adds ConnectTimeout and keep-alives to NIX_SSHOPTS, and keeps a ConnectTimeout the user set", () => {
  assert.is(withSshTimeouts({}, 7).NIX_SSHOPTS, "-o ConnectTimeout=7 -o ServerAliveInterval=30 -o ServerAliveCountMax=4");
  assert.is(withSshTimeouts({ NIX_SSHOPTS: "-F cfg" }, 7).NIX_SSHOPTS, "-F cfg -o ConnectTimeout=7 -o ServerAliveInterval=30 -o ServerAliveCountMax=4");
  assert.is(withSshTimeouts({ NIX_SSHOPTS: "-o ConnectTimeout=99" }, 7).NIX_SSHOPTS, "-o ConnectTimeout=99");
});

test("a builder port that accepts and never answers: the run ends in seconds and its failure names the builder", async () => {
  const sockets: Socket[] = [];
  const server = createServer((s) => void sockets.push(s)); // accept, never write
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  const port = (server.address() as { port: number }).port;
  try {
    const dir = tempDir("vm-silent-");
    const cfg = join(dir, "ssh_config");
    writeFileSync(cfg, `Host vmsilent\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  BatchMode yes\n`);
    const machines = join(dir, "machines");
    writeFileSync(machines, "ssh://vmsilent x86_64-linux - 1 1\n");
    const started = Date.now();
    const r = await runDriver(
      [
        "pytorch-python313-cpu-avx2", "--no-verify", "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--backend", "nix", "--plain",
        "--out-dir", join(dir, "out"), "--logs-dir", join(dir, "logs"), "--max-jobs", "0", "--builders", `@${machines}`,
        "--nix-option", "substituters=", "--connect-timeout", "2",
      ],
      { ...process.env, NIX_SSHOPTS: `-F ${cfg}`, VM_BUILD_TEST_SALT: newSalt(), VM_BUILD_TEST_SLEEP: "0" },
    );
    // Without ConnectTimeout, ssh waits for the banner without end; with --connect-timeout 2 the run ends after the
    // driver's own start-up, which a loaded 2-core machine stretches to tens of seconds: a bound far from both.
    assert.ok(Date.now() - started < 150_000, `the run did not hang on the silent builder (${Date.now() - started} ms)`);
    assert.is(r.code, 1, r.stderr);
    assert.ok(sockets.length > 0, "ssh did connect to the silent port");
    const v = latestReport(join(dir, "logs")).variants[0]!;
    assert.is(v.status, "failed");
    assert.match(v.reason ?? "", /^exit code 1: remote builder ssh:\/\/vmsilent did not answer \(Connection timed out during banner exchange\)/, JSON.stringify(v));
    assert.match(r.stdout + r.stderr, /remote builder ssh:\/\/vmsilent did not answer/);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((res) => server.close(res));
  }
});

test("an ssh_config that ssh refuses is named as such, not as a builder that did not answer", async () => {
  const dir = tempDir("vm-sshcfg-");
  const cfg = join(dir, "ssh_config");
  writeFileSync(cfg, `Host vmbadcfg\n  HostName 127.0.0.1\n  NoSuchOption yes\n`);
  const machines = join(dir, "machines");
  writeFileSync(machines, "ssh://vmbadcfg x86_64-linux - 1 1\n");
  const r = await runDriver(
    [
      "pytorch-python313-cpu-avx2", "--no-verify", "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--backend", "nix", "--plain",
      "--out-dir", join(dir, "out"), "--logs-dir", join(dir, "logs"), "--max-jobs", "0", "--builders", `@${machines}`,
      "--nix-option", "substituters=", "--connect-timeout", "2",
    ],
    { ...process.env, NIX_SSHOPTS: `-F ${cfg}`, VM_BUILD_TEST_SALT: newSalt(), VM_BUILD_TEST_SLEEP: "0" },
  );
  assert.is(r.code, 1, r.stderr);
  const v = latestReport(join(dir, "logs")).variants[0]!;
  assert.is(v.status, "failed");
  assert.match(v.reason ?? "", /ssh could not read its configuration for remote builder ssh:\/\/vmbadcfg \(.*(Bad configuration option|bad configuration options)/i, JSON.stringify(v));
  assert.not.match(v.reason ?? "", /did not answer/);
});

test.run();
