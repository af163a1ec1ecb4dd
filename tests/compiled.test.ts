// Issue 11: the `variant-matrix` command runs compiled JavaScript (dist/, built by `npm ci` through the
// `prepare` script), which must agree with the TypeScript sources the other tests run.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runCli } from "./helpers/cli.ts";

const BIN = join(ROOT, "bin/variant-matrix.js");
const bin = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });

test("dist/ is built (npm ci runs prepare) and the launcher uses it, not tsx", () => {
  assert.ok(existsSync(join(ROOT, "dist/cli.js")), "dist/cli.js missing: run `npm run prepare`");
  const launcher = readFileSync(BIN, "utf8");
  assert.match(launcher, /dist\/cli\.js/);
  assert.not.match(launcher, /tsx/);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.match(pkg.scripts.prepare, /esbuild generator\/cli\.ts --bundle/);
  assert.match(pkg.scripts.generate, /^node dist\/cli\.js generate$/);
});

test("the compiled CLI answers like the sources: list --json, explain, a bad matrix value", () => {
  const compiled = bin(["list", "--json"]);
  const sources = runCli(["list", "--json"]);
  assert.is(compiled.status, 0, compiled.stderr);
  assert.equal(JSON.parse(compiled.stdout), JSON.parse(sources.stdout));
  const ex = bin(["explain", "torchaudio-python313-cuda13_0-sm110-armv9"]);
  assert.is(ex.status, 0, ex.stderr);
  assert.match(ex.stdout, /TORCH_CUDA_ARCH_LIST\s+11\.0/);
  const help = bin(["--help"]);
  assert.is(help.status, 0);
  assert.match(help.stdout, /Commands:[\s\S]*generate[\s\S]*eval[\s\S]*ci/);
});

test("generate through the compiled CLI is a no-op on the committed tree (and --check agrees)", () => {
  const r = bin(["generate", "--check"]);
  assert.is(r.status, 0, r.stderr);
  const g = bin(["generate"]);
  assert.is(g.status, 0, g.stderr);
  assert.match(g.stdout, /nothing to write/);
});

test.run();
