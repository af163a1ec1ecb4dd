// The `variant-matrix` command runs compiled JavaScript (dist/<hash>/, bundled by bin/build-dist.mjs), which must
// agree with the TypeScript sources the other tests run, and must never be older than those sources: the bundle is
// named by a hash of what it was built from, and the launcher compiles the tree's code when that bundle is missing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runSources } from "./helpers/cli.ts";
// @ts-expect-error: plain JavaScript module without types (it runs before anything is compiled)
import { compiledEntry, currentHash, sourcesHash } from "../bin/build-dist.mjs";

const BIN = join(ROOT, "bin/variant-matrix.js");
const bin = (args: string[], root = ROOT) =>
  spawnSync(process.execPath, [join(root, "bin/variant-matrix.js"), ...args], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", COLUMNS: "400" } });

test("the launcher and every npm script run the bundle of the current sources, not tsx and not a fixed dist/cli.js", () => {
  const launcher = readFileSync(BIN, "utf8");
  assert.match(launcher, /ensureDist/);
  assert.not.match(launcher, /tsx/);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.match(pkg.scripts.prepare, /node bin\/build-dist\.mjs/);
  for (const s of ["generate", "build:variants", "cli"]) {
    assert.match(pkg.scripts[s], /bin\/variant-matrix\.js/, s);
    assert.not.match(pkg.scripts[s], /dist\//, s);
  }
  // After one run of the launcher the bundle of these exact sources exists.
  assert.is(bin(["--version"]).status, 0);
  assert.ok(existsSync(compiledEntry()), `dist/${sourcesHash()}/cli.js`);
  // The launcher's cheap answer (metadata first) is the hash of the contents.
  assert.is(currentHash(), sourcesHash());
});

test("the compiled CLI answers like the sources: list --json, explain, a bad matrix value", () => {
  const compiled = bin(["list", "--json"]);
  const sources = runSources(["list", "--json"]);
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

test("a generator source edited after the bundle was built: the next command runs the edited code", () => {
  // A copy of the project (sources, launcher, lock file; the dependencies linked), so the real tree is not touched.
  const work = mkdtempSync(join(tmpdir(), "vm-stale-dist-"));
  try {
    for (const f of ["generator", "bin", "package.json", "package-lock.json", "matrix.ts"]) cpSync(join(ROOT, f), join(work, f), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(work, "node_modules"));
    const first = bin(["--help"], work);
    assert.is(first.status, 0, first.stderr);
    assert.match(first.stdout, /Exit status: 0 ok/);
    const built = readdirSync(join(work, "dist"));
    // Edit the sources as a `git pull` would, without `npm ci`.
    const cli = join(work, "generator/cli.ts");
    writeFileSync(cli, readFileSync(cli, "utf8").replace("Exit status: 0 ok;", "Exit status (edited): 0 ok;"));
    const second = bin(["--help"], work);
    assert.is(second.status, 0, second.stderr);
    assert.match(second.stdout, /Exit status \(edited\): 0 ok/, "the launcher ran the old bundle");
    assert.match(second.stderr, /generator\/ changed since dist\/ was built: compiling it/);
    assert.ok(readdirSync(join(work, "dist")).length > built.length, "a bundle of its own for the new sources");
    // Unchanged sources: no rebuild, nothing said.
    const third = bin(["--version"], work);
    assert.is(third.stderr, "");
    // The launcher's fast path (bin/build-dist.mjs currentHash): once the files have settled, a start remembers their
    // metadata's hash; an edit of the same size whose mtime is set back (touch -r, a restore) still moves the
    // ctime, so the next start hashes the contents again and runs the edited code.
    const T = Math.floor(Date.now() / 1000) - 60; // a whole second, which utimes sets back exactly
    utimesSync(cli, T, T);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2_200);
    assert.is(bin(["--version"], work).stderr, "");
    const remembered = readdirSync(join(work, "dist/.by-metadata")).map((m) => readFileSync(join(work, "dist/.by-metadata", m), "utf8"));
    assert.ok(remembered.some((h) => existsSync(join(work, "dist", h, "cli.js"))), `a remembered hash names a bundle: ${remembered}`);
    const before = statSync(cli);
    writeFileSync(cli, readFileSync(cli, "utf8").replace("Exit status (edited): 0 ok;", "Exit status (EDITED): 0 ok;"));
    utimesSync(cli, T, T);
    assert.is(statSync(cli).size, before.size);
    assert.is(statSync(cli).mtimeMs, before.mtimeMs);
    const fifth = bin(["--help"], work);
    assert.match(fifth.stdout, /Exit status \(EDITED\): 0 ok/, "same size, same mtime: the edit is still seen");
    // A source that does not compile: one error line, exit 2, never the old bundle.
    writeFileSync(cli, readFileSync(cli, "utf8") + "\nconst broken = ;\n");
    const fourth = bin(["--version"], work);
    assert.is(fourth.status, 2);
    assert.match(fourth.stderr, /^variant-matrix: error: cannot compile generator\/ into dist\//m);
    assert.is(fourth.stdout, "");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test("a read-only dist/ with sources newer than its bundle: one line says dist/ is not writable and where, exit 2 (not esbuild's error for each file)", () => {
  const work = mkdtempSync(join(tmpdir(), "vm-ro-dist-"));
  const dist = join(work, "dist");
  try {
    for (const f of ["generator", "bin", "package.json", "package-lock.json", "matrix.ts"]) cpSync(join(ROOT, f), join(work, f), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(work, "node_modules"));
    // dist/ on a real read-only filesystem: bind-mounted read-only over itself, empty (no bundle of these sources).
    mkdirSync(dist);
    for (const a of [["--bind", dist, dist], ["-o", "remount,bind,ro", dist]]) {
      const m = spawnSync("mount", a, { encoding: "utf8" });
      assert.is(m.status, 0, `this test mounts (needs root with CAP_SYS_ADMIN): ${m.stderr}`);
    }
    const r = bin(["--version"], work);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.is(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n"), [
      `variant-matrix: error: ${dist} is not writable (on a read-only filesystem: EROFS), and generator/ changed since its bundle was built, so the CLI ` +
        "cannot be compiled there; make it writable, or run `npm run prepare` where the checkout can be written",
    ]);
    assert.not.match(r.stderr, /fix the error|esbuild/);
  } finally {
    spawnSync("umount", ["-l", dist]);
    rmSync(work, { recursive: true, force: true });
  }
});

test.run();
