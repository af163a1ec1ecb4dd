/**
 * Signals reach the build driver however it was started: through `npm run build:variants` (npm forwards SIGINT and
 * SIGTERM to its script's process, and the script execs node, so no `sh -c` stands between them and swallows the
 * signal), the build driver ends its builds and writes a report that says interrupted. Real npm, real nix-build of the
 * tiny stand-in derivations of tests/fixtures/build-pkgs.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/cli.ts";
import { BUILD_MATRIX, buildTestContext, FIXTURES, latestReport } from "./helpers/driver.ts";
import { STAND_IN_BUILDER_FEATURES } from "./helpers/nix.ts";

const PT_ARM = "pytorch-python313-cuda12_8-sm121-armv9";
const PT_CPU = "pytorch-python313-cpu-avx2";

for (const signal of ["SIGTERM", "SIGINT"] as const)
  test(`${signal} to npm's pid of \`npm run build:variants\`: the build driver stops its builds and reports interrupted`, async () => {
    const { dir, salt, env } = buildTestContext("vm-signal-test-", { VM_BUILD_TEST_SLEEP: "600", NO_COLOR: "1", COLUMNS: "400" });
    const logs = join(dir, "logs");
    const args = [
      "run", "--silent", "build:variants", "--",
      // The stand-ins carry no static checks: the driver's stop is what is tested, not a proof.
      PT_ARM, PT_CPU, "--no-verify", "--backend", "nix", "--jobs", "2", "--plain",
      "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--out-dir", join(dir, "out"), "--logs-dir", logs,
      "--nix-option", "substituters=", "--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`,
    ];
    const npm = spawn("npm", args, {
      cwd: ROOT,
      env,
    });
    let stderr = "";
    npm.stderr.on("data", (d) => (stderr += d));
    const closed = new Promise<number | null>((res) => npm.on("close", (code) => res(code)));
    const started = Date.now();
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      const run = join(logs, "latest");
      const busy = existsSync(run) ? readdirSync(run).filter((f) => f.endsWith(".log") && /building .*\(salt/.test(readFileSync(join(run, f), "utf8"))) : [];
      if (busy.length === 2) break;
      // A loaded 2-core machine takes over a minute to start npm and the driver (start-up, evaluation, preflight).
      assert.ok(Date.now() - started < 300_000, `builds started: ${stderr}`);
    }
    // Builds of 600 s: an exit within 300 s of the signal shows they were stopped, with a margin a loaded machine meets.
    const killed = Date.now();
    npm.kill(signal);
    const code = await closed;
    assert.ok(Date.now() - killed < 300_000, `did not wait for the 600 s builds (exited ${Date.now() - killed} ms after ${signal})`);
    assert.ok(code !== 0, `npm exited ${code}`);
    // The build driver (npm's child) wrote its report before it exited.
    for (let i = 0; i < 50 && !(existsSync(join(logs, "latest/report.json")) && latestReport(logs).finishedAt); i++) await new Promise((r) => setTimeout(r, 100));
    const rep = latestReport(logs);
    assert.is(rep.interrupted, true, JSON.stringify(rep).slice(0, 400));
    for (const v of rep.variants) assert.match(v.reason ?? "", new RegExp(`interrupted \\(${signal}\\)`), v.name);
    // Nothing of this run is left: no builder with this salt, no build driver.
    await new Promise((r) => setTimeout(r, 500));
    const ps = spawnSync("ps", ["-eww", "-o", "args"], { encoding: "utf8" }).stdout;
    assert.not.match(ps, new RegExp(`salt ${salt}`), "builders ended");
    assert.not.match(ps, new RegExp(logs.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), "driver ended");
  });

test.run();
