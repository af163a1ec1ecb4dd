// install pays the nixglhost route's first start itself (generator/preflight/nixglhost-cache.ts): a real child
// process stands in for nixglhost, copying a file into $XDG_CACHE_HOME/nix-gl-host as nix-gl-host copies the driver.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers/cli.ts";
import { firstStartThroughNixglhost, formatBytes, nixglhostCacheDir } from "../generator/preflight/nixglhost-cache.ts";

/** A stand-in nixglhost: caches `bytes` of "driver" under its cache directory, then runs the program (or fails). */
function standIn(dir: string, bytes: number, exit = 0): string {
  const p = join(dir, "nixglhost");
  writeFileSync(
    p,
    `#!/bin/sh\n# STAND-IN nixglhost (tests only)\nd="\${XDG_CACHE_HOME:-$HOME/.cache}/nix-gl-host/abc/cuda"\nmkdir -p "$d"\nhead -c ${bytes} /dev/zero > "$d/libcuda.so.1"\n[ ${exit} -eq 0 ] || { echo "no driver found" >&2; exit ${exit}; }\nexec "$@"\n`,
  );
  chmodSync(p, 0o755);
  return p;
}

test("install's first start through nixglhost: it is run once, and the line says how long and how much was cached where", async () => {
  const dir = tempDir("vm-nixglhost-");
  const env = { ...process.env, XDG_CACHE_HOME: join(dir, "cache") };
  const lines: string[] = [];
  const r = await firstStartThroughNixglhost({ dir, throughNixglhost: true, nixglhost: standIn(dir, 2_500_000) }, (l) => lines.push(l), env);
  assert.ok(r);
  assert.is(r!.code, 0);
  assert.is(r!.cacheDir, join(dir, "cache", "nix-gl-host"));
  assert.is(r!.cachedBytes, 2_500_000);
  assert.is(lines.length, 1);
  assert.match(lines[0]!, /^the first start through nix-gl-host took \d+\.\d s and cached 2\.5 MB of the host driver's libraries in /);
  assert.ok(lines[0]!.includes(join(dir, "cache", "nix-gl-host")), lines[0]);
});

test("an environment with wrapped Pythons is started through DIR/bin/python3; no route, no start", async () => {
  const dir = tempDir("vm-nixglhost-");
  mkdirSync(join(dir, "bin"));
  standIn(dir, 1000);
  writeFileSync(join(dir, "bin/python3"), `#!/bin/sh\nexec ${JSON.stringify(join(dir, "nixglhost"))} true\n`);
  chmodSync(join(dir, "bin/python3"), 0o755);
  const env = { ...process.env, XDG_CACHE_HOME: join(dir, "cache") };
  const lines: string[] = [];
  const r = await firstStartThroughNixglhost({ dir, throughNixglhost: true }, (l) => lines.push(l), env);
  assert.is(r!.cachedBytes, 1000);
  assert.is(await firstStartThroughNixglhost({ dir, throughNixglhost: false }, (l) => lines.push(l), env), null);
  assert.is(lines.length, 1);
});

test("a first start that fails is said, with nixglhost's last line, and not thrown", async () => {
  const dir = tempDir("vm-nixglhost-");
  const lines: string[] = [];
  const r = await firstStartThroughNixglhost({ dir, throughNixglhost: true, nixglhost: standIn(dir, 10, 3) }, (l) => lines.push(l), { ...process.env, XDG_CACHE_HOME: join(dir, "c") });
  assert.is(r!.code, 3);
  assert.match(lines[0]!, /failed after \d+\.\d s: exit 3: no driver found/);
});

test("the cache directory and sizes as nix-gl-host and du --si name them", () => {
  assert.is(nixglhostCacheDir({ XDG_CACHE_HOME: "/x" }), "/x/nix-gl-host");
  assert.is(nixglhostCacheDir({ HOME: "/home/u" }), "/home/u/.cache/nix-gl-host");
  assert.is(formatBytes(5_700_000_000), "5.7 GB");
  assert.is(formatBytes(840_000_000), "840 MB");
  assert.is(formatBytes(999), "999 B");
});

test.run();
