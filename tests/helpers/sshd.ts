/**
 * A real OpenSSH server on 127.0.0.1 for the remote-build tests: host and client keys made for the test, a free
 * port, an ssh config `Host` entry Nix reads through NIX_SSHOPTS="-F FILE", and a Nix machines file whose remote
 * side builds into its own chroot store (a remote build into the client's own store waits forever on the output
 * locks) through a `remote-program` wrapper that lets builds see /bin, /lib and /usr.
 * The server is stopped (by its own pid) when the test process exits.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { tempDir } from "./cli.ts";

/** A running test sshd. */
export interface TestSshd {
  dir: string;
  port: number;
  /** The ssh `Host` alias ("vmtest"). */
  host: string;
  /** Environment for Nix: NIX_SSHOPTS pointing at the ssh config. */
  env: Record<string, string>;
  /** Nix machines file: `ssh://vmtest?remote-store=…&remote-program=… SYSTEM - 2 1 big-parallel`. */
  machinesFile: string;
  /** The remote side's chroot store root (its /nix/store is ROOT/nix/store). */
  remoteRoot: string;
  stop(): void;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const SSHD = "/usr/sbin/sshd";

/** True when Debian's openssh-server is installed (.ci/run installs it). */
export function hasSshd(): boolean {
  return existsSync(SSHD);
}

/**
 * Start sshd for `system` builds. @throws Error when sshd cannot start or a login fails.
 */
export async function startSshd(system: string): Promise<TestSshd> {
  const dir = tempDir("vm-sshd-");
  chmodSync(dir, 0o755);
  const port = await freePort();
  for (const k of ["host_key", "client_key"]) execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, k)]);
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_key.pub")));
  writeFileSync(
    join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      `PidFile ${join(dir, "sshd.pid")}`,
      "",
    ].join("\n"),
  );
  const host = "vmtest";
  const sshConfig = join(dir, "ssh_config");
  writeFileSync(
    sshConfig,
    [
      `Host ${host}`,
      "  HostName 127.0.0.1",
      `  Port ${port}`,
      "  User root",
      `  IdentityFile ${join(dir, "client_key")}`,
      "  IdentitiesOnly yes",
      "  StrictHostKeyChecking no",
      "  UserKnownHostsFile /dev/null",
      "  LogLevel ERROR",
      "",
    ].join("\n"),
  );
  const wrapper = join(dir, "remote-nix-store");
  writeFileSync(wrapper, `#!/bin/sh\nexec nix-store --option extra-sandbox-paths "/bin /lib /lib64 /usr" "$@"\n`);
  chmodSync(wrapper, 0o755);
  const remoteRoot = join(dir, "remote-root");
  mkdirSync(remoteRoot);
  const machinesFile = join(dir, "machines");
  writeFileSync(machinesFile, `ssh://${host}?remote-store=local?root=${remoteRoot}&remote-program=${wrapper} ${system} - 2 1 big-parallel\n`);
  mkdirSync("/run/sshd", { recursive: true }); // sshd's privilege separation directory
  const started = spawnSync(SSHD, ["-f", join(dir, "sshd_config"), "-E", join(dir, "sshd.log")], { encoding: "utf8" });
  if (started.status !== 0) throw new Error(`sshd did not start: ${started.stderr}`);
  const pidFile = join(dir, "sshd.pid");
  const stop = () => {
    try {
      process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGTERM");
    } catch {
      /* already stopped */
    }
  };
  process.on("exit", stop);
  for (let i = 0; i < 50 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
  // A loaded machine can take seconds to answer a login: up to three tries of 60 s each, then the cause.
  let login = spawnSync("ssh", ["-F", sshConfig, host, "echo", "ok"], { encoding: "utf8", timeout: 60_000 });
  for (let i = 1; i < 3 && login.stdout?.trim() !== "ok"; i++) login = spawnSync("ssh", ["-F", sshConfig, host, "echo", "ok"], { encoding: "utf8", timeout: 60_000 });
  if (login.stdout?.trim() !== "ok") {
    stop();
    const how = login.error ? String(login.error) : `exit ${login.status}${login.signal ? `, signal ${login.signal}` : ""}`;
    throw new Error(`ssh login to the test sshd failed (${how}; stdout ${JSON.stringify(login.stdout)}): ${login.stderr}\n${readFileSync(join(dir, "sshd.log"), "utf8")}`);
  }
  return { dir, port, host, env: { NIX_SSHOPTS: `-F ${sshConfig}` }, machinesFile, remoteRoot, stop };
}
