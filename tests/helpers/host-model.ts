/**
 * Modelled hosts for the preflight, doctor and install tests: a fake host root (etc/NIXOS, run/opengl-driver/lib,
 * dev/nvidia0, proc/cpuinfo of a recorded host, the GPU driver's directory with ld.so.conf naming it) and STAND-IN
 * executables on PATH (nix, nix-instantiate, flox, nvidia-smi, ldconfig, df) that print what the real ones print.
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "./cli.ts";

export const HOSTS = join(ROOT, "tests/fixtures/hosts");
export const STAND_IN_FLOX = join(ROOT, "tests/fixtures/stand-in-flox");

/** What a modelled host has. */
export interface HostModel {
  /** nix-instantiate --version; null: no Nix. */
  nix?: string | null;
  /**
   * Only `nix show-config` is a stand-in (the modelled nix.conf); nix-instantiate, nix-build and nix-store are the
   * real ones on PATH, for tests that build.
   */
  realNixTools?: boolean;
  /** nix.conf as `nix show-config` prints it. */
  nixConf?: Record<string, string>;
  /** nix-command enabled in the user's config. */
  nixCommand?: boolean;
  /** flox --version; null: no flox. */
  flox?: string | null;
  floxLoggedIn?: boolean;
  /** Recorded host directory (cpuinfo, nvidia-smi.txt); its GPUs answer nvidia-smi. */
  recorded?: string;
  nvidiaSmi?: boolean;
  devNvidia?: boolean;
  nixos?: boolean;
  /**
   * `ldconfig -p` lists libcuda.so.1 at this path (and the file exists under the root), with libnvidia-ml.so.1 and
   * libnvidia-ptxjitcompiler.so.1 beside it as a GPU driver installs them (unless libcudaAlone).
   */
  hostLibcuda?: string | null;
  /** The GPU driver's directory holds libcuda.so.1 and nothing else of NVIDIA's. */
  libcudaAlone?: boolean;
  /** Free KiB `df -Pk` reports. */
  freeKib?: number;
}

export const sh = (file: string, body: string) => {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
};

/** A fake root and a bin directory of stand-ins for `m`; returns the host for runChecks and the env for the CLI. */
export function makeHost(m: HostModel) {
  const dir = tempDir("vm-doctor-");
  const root = join(dir, "root");
  const bin = join(dir, "bin");
  mkdirSync(join(root, "nix/store"), { recursive: true });
  mkdirSync(join(root, "proc"), { recursive: true });
  mkdirSync(bin);
  if (m.recorded) copyFileSync(join(HOSTS, m.recorded, "cpuinfo"), join(root, "proc/cpuinfo"));
  if (m.nixos) {
    mkdirSync(join(root, "etc"), { recursive: true });
    writeFileSync(join(root, "etc/NIXOS"), "");
    mkdirSync(join(root, "run/opengl-driver/lib"), { recursive: true });
    writeFileSync(join(root, "run/opengl-driver/lib/libcuda.so.1"), "stand-in libcuda\n");
  }
  if (m.devNvidia) {
    mkdirSync(join(root, "dev"), { recursive: true });
    writeFileSync(join(root, "dev/nvidia0"), "");
  }
  if (m.nix !== null) {
    const conf = Object.entries({ "system-features": "benchmark big-parallel kvm nixos-test", substituters: "https://cache.nixos.org/", "trusted-public-keys": "cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY=", ...m.nixConf })
      .map(([k, v]) => `${k} = ${v}`)
      .join("\n");
    writeFileSync(join(dir, "nix.conf"), conf + "\n");
    // STAND-IN nix-instantiate: the version line Nix prints.
    if (!m.realNixTools) sh(join(bin, "nix-instantiate"), `[ "$1" = --version ] && { echo "nix-instantiate (Nix) ${m.nix ?? "2.24.9"}"; exit 0; }; exit 64`);
    // STAND-IN nix: `show-config` prints the modelled nix.conf (DIR/nix.conf) as Nix does, each setting once with an
    // `extra-NAME = V` line appended to NAME's value (Nix manual, "nix.conf": extra- settings add to the setting), so
    // a test can paste doctor's blocks into that file; without nix-command Nix refuses with its own message.
    const showConfig = `awk 'index($0, " = ") == 0 { next } { k = substr($0, 1, index($0, " = ") - 1); v = substr($0, index($0, " = ") + 3); if (k ~ /^extra-/) { k = substr(k, 7); if (k in s) v = s[k] " " v } if (!(k in s)) o[++n] = k; s[k] = v } END { for (i = 1; i <= n; i++) print o[i] " = " s[o[i]] }' "${join(dir, "nix.conf")}"`;
    sh(
      join(bin, "nix"),
      `case " $* " in *" nix-command "*) ;; *) ${m.nixCommand ? ":" : `echo "error: experimental Nix feature 'nix-command' is disabled; use '--extra-experimental-features nix-command' to override" >&2; exit 1`};; esac
case " $* " in *" show-config "*) ${showConfig};; *) ${m.realNixTools ? 'exec /usr/bin/env PATH=/usr/bin:/bin nix "$@"' : "exit 64"};; esac`,
    );
  }
  if (m.flox !== undefined && m.flox !== null) {
    // STAND-IN flox (tests/fixtures/stand-in-flox) with the modelled version and login.
    sh(join(bin, "flox"), `STAND_IN_FLOX_VERSION=${m.flox} STAND_IN_FLOX_LOGGED_IN=${m.floxLoggedIn ? 1 : 0} exec "${join(STAND_IN_FLOX, "flox")}" "$@"`);
  }
  if (m.nvidiaSmi && m.recorded) {
    // STAND-IN nvidia-smi: the recorded `--query-gpu=compute_cap,name,driver_version` answer (other queries: its columns 2-3).
    const rec = join(HOSTS, m.recorded, "nvidia-smi.txt");
    sh(join(bin, "nvidia-smi"), `case "$*" in *compute_cap*) cat "${rec}";; *) cut -d, -f2- "${rec}" | sed 's/^ //';; esac`);
  }
  if (m.hostLibcuda !== undefined) {
    // STAND-IN ldconfig -p: glibc's format ("\tNAME (libc6,ARCH) => PATH").
    const lines = ["\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6"];
    if (m.hostLibcuda) {
      const libDir = join(m.hostLibcuda, "..");
      lines.push(`\tlibcuda.so.1 (libc6,x86-64) => ${m.hostLibcuda}`);
      mkdirSync(join(root, libDir), { recursive: true });
      writeFileSync(join(root, m.hostLibcuda), "stand-in libcuda\n");
      if (!m.libcudaAlone)
        for (const lib of ["libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1"]) {
          lines.push(`\t${lib} (libc6,x86-64) => ${libDir}/${lib}`);
          writeFileSync(join(root, libDir, lib), `stand-in ${lib}\n`);
        }
      // As Debian and Ubuntu ship it: ld.so.conf includes ld.so.conf.d/*.conf, one of which names the directory.
      mkdirSync(join(root, "etc/ld.so.conf.d"), { recursive: true });
      writeFileSync(join(root, "etc/ld.so.conf"), "include /etc/ld.so.conf.d/*.conf\n");
      writeFileSync(join(root, "etc/ld.so.conf.d/x86_64-linux-gnu.conf"), `# Multiarch support\n${libDir}\n`);
    }
    // -p and --print-cache (flox's 0800_cuda.sh asks `ldconfig --print-cache -C /etc/ld.so.cache`).
    sh(join(bin, "ldconfig"), `case "$1" in -p|--print-cache) ;; *) exit 64;; esac; echo "${lines.length} libs found in cache \\\`/etc/ld.so.cache'"; printf '%b\\n' ${lines.map((l) => `'${l}'`).join(" ")}`);
  }
  // STAND-IN df -Pk: POSIX format, the modelled free KiB.
  sh(join(bin, "df"), `echo "Filesystem 1024-blocks Used Available Capacity Mounted on"; echo "/dev/stand-in 200000000 1 ${m.freeKib ?? 100_000_000} 1% /"`);
  const env = { PATH: `${bin}:/usr/bin:/bin`, NIX_PATH: "", HOME: dir } as NodeJS.ProcessEnv;
  return { root, bin, dir, env, host: { root, env } };
}
