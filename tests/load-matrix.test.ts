// matrix/load-matrix.ts importMatrixModule on a matrix that imports another local file: compiled on every run (the
// other file is not in the cache key), so an edit to it is seen at once, and the run's own compiled file is removed
// once imported (runs never pile files up in the cache directory). The cache directory (paths.ts cacheDir): what it
// holds is imported, so it is used only when it is this user's own, private and no symbolic link; a cache that cannot
// be written is a warning, never a matrix error. Those are tried for real with the compiled launcher in a private
// mount namespace (as tests/read-only.test.ts does): another user's directory, a symbolic link, a full disk mounted
// over the checkout's node_modules/.cache/variant-matrix, so nothing outside the test sees them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cachedModule, importMatrixModule } from "../generator/matrix/load-matrix.ts";
import { cacheDir, cacheDirFrom, takeCacheWarnings } from "../generator/paths.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";

/** The compiled one-run files (matrix-HASH-PID-TIME.mjs) in the cache directory. */
const oneRunFiles = () => readdirSync(cacheDir()).filter((f) => /^matrix-[0-9a-f]+-\d+-\d+\.mjs$/.test(f));

test("a matrix importing a local file: each import sees the file as it is now and leaves no compiled file behind", async () => {
  const dir = tempDir("vm-load-matrix-");
  writeFileSync(join(dir, "pythons.ts"), `export const PYTHONS = ["3.12"];\n`);
  const matrix = join(dir, "matrix.ts");
  writeFileSync(matrix, `import { PYTHONS } from "./pythons.ts";\nexport default { python: PYTHONS };\n`);
  const before = oneRunFiles();
  const first = (await importMatrixModule(matrix)).default as { python: string[] };
  assert.equal(first.python, ["3.12"]);
  writeFileSync(join(dir, "pythons.ts"), `export const PYTHONS = ["3.13"];\n`);
  const second = (await importMatrixModule(matrix)).default as { python: string[] };
  assert.equal(second.python, ["3.13"], "the imported file's edit is seen");
  assert.equal(oneRunFiles(), before, "no compiled one-run file is left");
});

/** A small matrix: its variants are what `list --json` prints. */
const BODY = { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.9"], gpus: ["90"], isas: ["avx2"], cpuOnly: true, packages: ["pytorch"] };

/**
 * Run `script` (sh) in a private mount namespace, the checkout at $R and its cache directory at $C: as root the mount
 * namespace alone, otherwise a user namespace that maps this user to root. null when neither can be made here.
 */
function inMountNamespace(script: string, env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } | null {
  const full = { ...process.env, ...env, R: ROOT, C: join(ROOT, "node_modules", ".cache", "variant-matrix"), NO_COLOR: "1", COLUMNS: "400" };
  const run = (ns: string[]) => spawnSync("unshare", [...ns, "sh", "-c", `set -e\n${script}`], { encoding: "utf8", env: full });
  const asRoot = process.getuid?.() === 0 ? run(["--mount"]) : null;
  const r = asRoot?.status === 0 ? asRoot : run(["--user", "--map-root-user", "--mount"]);
  return /unshare: /.test(r.stderr) ? null : r;
}

/** A matrix file, its compiled module's cache name, and a planted module of that name that leaves MARKER when it runs. */
function plantFor(work: string): { matrix: string; name: string; planted: string; marker: string } {
  const matrix = writeMatrix(work, BODY);
  const marker = join(work, "planted-ran");
  const planted = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default ${JSON.stringify({ ...BODY, python: ["3.12"] })};\n`;
  return { matrix, name: `matrix-${cachedModule(matrix).hash}.mjs`, planted, marker };
}

test("cacheDirFrom: a directory made 0700; another user's, a symbolic link or one others may write passed over with a warning; the user's own made private", () => {
  const work = tempDir("vm-cache-dir-");
  const mine = join(work, "mine");
  takeCacheWarnings();
  assert.is(cacheDirFrom([mine], "projects"), join(mine, "projects"));
  assert.is(statSync(mine).mode & 0o777, 0o700);
  assert.is(statSync(join(mine, "projects")).mode & 0o777, 0o700);
  const link = join(work, "link");
  symlinkSync(mine, link);
  assert.is(cacheDirFrom([link, join(work, "next")]), join(work, "next"));
  assert.match(takeCacheWarnings().join("\n"), new RegExp(`the cache directory ${link} is a symbolic link \\(to ${mine}\\): not used \\(what it holds would run as you\\)`));
  const open = join(work, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  assert.is(cacheDirFrom([open, mine]), mine);
  assert.match(takeCacheWarnings().join("\n"), /open is writable by others \(mode 777; `chmod 700` it to have it used\): not used/);
  const readable = join(work, "readable");
  mkdirSync(readable, { mode: 0o755 });
  chmodSync(readable, 0o755);
  assert.is(cacheDirFrom([readable]), readable, "the user's own, others may only read: used");
  assert.is(statSync(readable).mode & 0o777, 0o700, "and made private");
  if (process.getuid?.() === 0) {
    const theirs = join(work, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    assert.is(cacheDirFrom([theirs, mine]), mine);
    assert.match(takeCacheWarnings().join("\n"), new RegExp(`${theirs} belongs to uid 65534, not to this user \\(uid 0\\): not used`));
  }
  assert.equal(takeCacheWarnings(), [], "each warning said once");
});

test("another user's cache directory mounted as the checkout's: their planted compiled matrix never runs; the command answers with a warning", () => {
  if (process.getuid?.() !== 0) return console.log("  (skipped: needs root to give a directory to uid 65534)");
  const work = tempDir("vm-cache-theirs-");
  const { matrix, name, planted, marker } = plantFor(work);
  const theirs = join(work, "theirs");
  mkdirSync(theirs, { mode: 0o755 });
  writeFileSync(join(theirs, name), planted);
  chownSync(join(theirs, name), 65534, 65534);
  chownSync(theirs, 65534, 65534);
  const r = inMountNamespace(`mount --bind "$T" "$C"\nnode "$R/bin/variant-matrix.js" list --json --matrix "$M"`, { T: theirs, M: matrix, XDG_CACHE_HOME: join(work, "xdg") });
  if (!r) return console.log("  (skipped: no mount namespace here)");
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(existsSync(marker), "the planted module did not run");
  assert.match(r.stdout, /"python": "3\.13"/);
  assert.not.match(r.stdout, /"python": "3\.12"/);
  assert.match(r.stderr, /warning: the cache directory \S+variant-matrix belongs to uid 65534, not to this user \(uid 0\): not used/);
  assert.ok(readdirSync(join(work, "xdg", "variant-matrix")).includes(name), "compiled into the user's own cache instead");
});

test("a symbolic link as the checkout's cache directory: what it points at is never imported; the command answers with a warning", () => {
  const work = tempDir("vm-cache-link-");
  const { matrix, name, planted, marker } = plantFor(work);
  const shared = join(work, "shared");
  mkdirSync(shared, { mode: 0o700 });
  writeFileSync(join(shared, name), planted);
  const parent = join(work, "dot-cache");
  mkdirSync(parent);
  symlinkSync(shared, join(parent, "variant-matrix"));
  const r = inMountNamespace(`mount --bind "$P" "$(dirname "$C")"\nnode "$R/bin/variant-matrix.js" list --json --matrix "$M"`, { P: parent, M: matrix, XDG_CACHE_HOME: join(work, "xdg") });
  if (!r) return console.log("  (skipped: no mount namespace here)");
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(existsSync(marker), "the module behind the link did not run");
  assert.match(r.stdout, /"python": "3\.13"/);
  assert.match(r.stderr, new RegExp(`warning: the cache directory \\S+variant-matrix is a symbolic link \\(to ${shared}\\): not used`));
});

test("a full disk under the cache: list still answers, with a warning naming ENOSPC, never 'invalid matrix'", () => {
  const work = tempDir("vm-cache-full-");
  const matrix = writeMatrix(work, { ...BODY, python: ["3.12"] });
  const script = [
    `mount -t tmpfs -o size=64k,mode=0700 tmpfs "$C"`,
    `cat /dev/zero > "$C/fill" 2>/dev/null || true`,
    `node "$R/bin/variant-matrix.js" list --json --matrix "$M" > "$T/list.out" 2> "$T/list.err" || echo $? > "$T/list.rc"`,
  ].join("\n");
  const r = inMountNamespace(script, { T: work, M: matrix, XDG_CACHE_HOME: join(work, "xdg") });
  if (!r) return console.log("  (skipped: no mount namespace here)");
  assert.is(r.status, 0, r.stderr);
  const err = readFileSync(join(work, "list.err"), "utf8");
  assert.not.ok(existsSync(join(work, "list.rc")), `list exited 0: ${err}`);
  assert.not.match(err, /invalid matrix/);
  assert.match(err, /warning: cannot write the compiled matrix\.ts to \S+matrix-[0-9a-f]+\.mjs \(ENOSPC\): compiled in memory, and again next run/);
  assert.match(readFileSync(join(work, "list.out"), "utf8"), /"python": "3\.12"/);
});

test.run();
