/**
 * Running the build driver as a child process (`node bin/variant-matrix.js build …`, the real CLI) against the
 * tiny stand-in derivations of tests/fixtures/build-pkgs, selected from the variants of
 * tests/fixtures/build-matrix.ts; shared by tests/build.test.ts and tests/scale-out.test.ts.
 */
import { STAND_IN_BUILDER_FEATURES } from "./nix.ts";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BuildReport } from "../../generator/driver/report.ts";
import { cliArgv, ROOT, tempDir } from "./cli.ts";

export const FIXTURES = join(ROOT, "tests/fixtures/build-pkgs");
export const BUILD_MATRIX = join(ROOT, "tests/fixtures/build-matrix.ts");

/** What a build driver run printed and how it ended. */
export interface DriverResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `build ARGS…` (no colour) with `env`; `onSpawn` gets the child's pid (to signal it). */
export function runDriver(args: string[], env: NodeJS.ProcessEnv, onSpawn?: (pid: number) => void): Promise<DriverResult> {
  // The toy derivations require no system feature, but their variants do (the ISA's gccarch-…), and `build` refuses
  // to start where this machine declares none of them: declare them for these stand-in builds, which run no ISA code
  // (tests/isa-features.test.ts covers the refusal itself).
  const features = ["--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`];
  return new Promise((res) => {
    const child = spawn(process.execPath, cliArgv(["build", ...features, ...args]), { cwd: ROOT, env: { COLUMNS: "400", ...env, NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    onSpawn?.(child.pid!);
    child.on("close", (code) => res({ code, stdout, stderr }));
  });
}

/** The report of the newest run under `logsDir`. */
export function latestReport(logsDir: string): BuildReport {
  return JSON.parse(readFileSync(join(logsDir, "latest/report.json"), "utf8"));
}

/** A unique salt for the fixture derivations, so built and cached are deterministic per test. */
export const newSalt = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** A build test's own directory, salt and environment. */
export interface BuildTestContext {
  dir: string;
  salt: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A fresh temp directory (`prefix…`, readable by the nixbld users), a new salt and the environment of the stand-in
 * derivations: VM_BUILD_TEST_SALT, and VM_BUILD_TEST_STATE, a state directory the flaky fixture writes as a nixbld
 * user. `extraEnv` is added last.
 */
export function buildTestContext(prefix: string, extraEnv: NodeJS.ProcessEnv = {}): BuildTestContext {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o755);
  const salt = newSalt();
  const state = join(dir, "state");
  mkdirSync(state);
  chmodSync(state, 0o777);
  return { dir, salt, env: { ...process.env, VM_BUILD_TEST_SALT: salt, VM_BUILD_TEST_STATE: state, ...extraEnv } };
}
