/**
 * install never fails late and leaves one GC root (generator/install/install-target.ts), with the real nix-build,
 * offline, on the stand-in environment of tests/helpers/install-stand-in.ts:
 * - a variant already in the store is linked at once into a new --dir: no build, no run of the build driver;
 * - the only GC roots of the output are the DIRs install made (no `result-NAME` beside DIR): deleting DIR uninstalls;
 * - a DIR on a read-only filesystem (a real read-only bind mount), on a full one (a real tmpfs with no inode left), a
 *   file, a user's link or an unrelated GC root at DIR stop install with exit 2 before anything is built (no log
 *   directory made), and what was at DIR is unchanged;
 * - build with a fresh --out-dir gives a cached variant its result link.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { catalog as catalogForCaches } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
const CUDA_CACHE_SUBSTITUTER = cudaCacheSubstituter(catalogForCaches);
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { cliArgv, ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { latestReport } from "./helpers/driver.ts";
import { NAME, standInEnvironment } from "./helpers/install-stand-in.ts";
import { runNix } from "./helpers/nix.ts";

const variant = projectFromMatrix(matrix).variants.find((v) => v.name === NAME)!;
const CACHE = {
  substituters: `https://cache.nixos.org/ ${CUDA_CACHE_SUBSTITUTER.url}`,
  "trusted-public-keys": `cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY= ${CUDA_CACHE_SUBSTITUTER.publicKey}`,
};
const recorded = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];

/** A NixOS host model (no nixglhost route: DIR is the environment itself) and the install command for `dir`. */
function setup(pkgs: string) {
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, realNixTools: true, nixConf: { "system-features": variant.requiredSystemFeatures.join(" "), ...CACHE } });
  const logs = join(h.dir, "logs");
  const args = (dir: string) => ["install", NAME, "--dir", dir, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", pkgs, "--logs-dir", logs, "--plain", ...recorded];
  return { h, logs, args, env: { ...h.env, NIXGLHOST_STAND_IN_ROOT: h.root } };
}

/** The GC roots Nix lists for `out` (`nix-store --query --roots`), as the links' paths. */
function roots(out: string): string[] {
  return runNix("nix-store", ["--query", "--roots", out])
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" -> ")[0]!);
}

/** Run `f` with `dir` a real mount of `how` (mount(8)), unmounted after. */
async function mounted<T>(dir: string, how: string[][], f: () => Promise<T>): Promise<T> {
  for (const a of how) execFileSync("mount", a, { stdio: "pipe" });
  try {
    return await f();
  } finally {
    execFileSync("umount", [dir], { stdio: "pipe" });
  }
}

test("install of a variant already in the store into a new --dir: linked at once (no build driver); DIR is its only GC root, deleting DIR uninstalls", async () => {
  const pkgs = standInEnvironment();
  const { h, logs, args, env } = setup(pkgs);
  const first = join(h.dir, "first");
  const r1 = await runMain(args(first), { env });
  assert.ok(r1.status === 0 || r1.status === 1, r1.stdout + r1.stderr);
  const out = realpathSync(first);
  assert.is(latestReport(logs).variants.find((v) => v.name === NAME)?.status, "built");
  // One root, the one the user sees: no result-NAME beside DIR, nor anywhere else.
  assert.equal(roots(out), [first]);
  assert.equal(readdirSync(h.dir).filter((f) => f.startsWith("result-")), []);
  const runs = readdirSync(logs).length;

  const second = join(h.dir, "elsewhere", "env");
  const r2 = await runMain(args(second), { env });
  assert.is(r2.status, r1.status, r2.stdout + r2.stderr);
  assert.match(r2.stdout.replace(/\s+/g, " "), `${NAME} is in the store (${out}): nothing to build`);
  assert.not.match(r2.stdout + r2.stderr, /nothing to link/);
  assert.is(readdirSync(logs).length, runs, "the build driver did not run");
  assert.is(realpathSync(second), out);
  assert.equal(roots(out).sort(), [first, second].sort());

  // Deleting DIR uninstalls: no root is left.
  rmSync(first);
  rmSync(second);
  assert.equal(roots(out), []);
});

test("install stops before any build when DIR cannot take the link: read-only filesystem, full filesystem, a file, a user's link, an unrelated GC root", async () => {
  const pkgs = standInEnvironment();
  const { h, logs, args, env } = setup(pkgs);
  const stopped = async (dir: string, why: RegExp) => {
    const r = await runMain(args(dir), { env });
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, why);
    assert.match(r.stderr, /nothing was built/);
    assert.is(existsSync(logs), false, "no build started");
  };
  // A real read-only bind mount.
  const ro = join(h.dir, "ro");
  mkdirSync(ro);
  await mounted(ro, [["--bind", ro, ro], ["-o", "remount,bind,ro", ro]], () => stopped(join(ro, "torch-env"), /--dir \S+ro\/torch-env: \S+ro is on a read-only filesystem/));
  // A real tmpfs with no inode left (a full filesystem: not even a link fits); DIR's parent missing on it, too.
  const full = join(h.dir, "full");
  mkdirSync(full);
  await mounted(full, [["-t", "tmpfs", "-o", "size=1m,nr_inodes=8", "tmpfs", full]], async () => {
    for (let i = 0; ; i++)
      try {
        writeFileSync(join(full, `f${i}`), "");
      } catch {
        break;
      }
    await stopped(join(full, "sub", "torch-env"), /filesystem is full/);
  });
  // A file, a user's link to their own directory, and an unrelated GC root (a link into the store to something else).
  const file = join(h.dir, "file");
  writeFileSync(file, "mine\n");
  await stopped(file, /--dir \S+ exists and is not a link install made/);
  const mine = join(h.dir, "mine");
  symlinkSync(h.dir, mine);
  await stopped(mine, /is a link to \S+, not into the Nix store, not an earlier install of this variant/);
  const other = runNix("nix-build", ["-E", `derivation { name = "unrelated-${Date.now()}"; system = builtins.currentSystem; builder = "/bin/sh"; args = [ "-c" "echo > $out" ]; }`, "-o", join(h.dir, "gcroot")]).trim();
  await stopped(join(h.dir, "gcroot"), /is a link to \/nix\/store\/\S+-unrelated-\d+, a GC root of something else, not an earlier install of this variant/);
  assert.is(readlinkSync(join(h.dir, "gcroot")), other, "the unrelated GC root is unchanged");
  assert.is(readlinkSync(mine), h.dir);
  assert.ok(lstatSync(file).isFile());
});

test("build with a fresh --out-dir gives a variant already in the store its result link", async () => {
  const pkgs = standInEnvironment();
  const dep = variant.dependsOn[0]!;
  const features = projectFromMatrix(matrix).variants.find((v) => v.name === dep)!.requiredSystemFeatures.join(" ");
  const dir = tempDir("vm-outdir-");
  const build = (outDir: string) =>
    runMain(["build", dep, "--backend", "nix", "--pkgs-dir", pkgs, "--out-dir", outDir, "--logs-dir", join(dir, "logs"), "--plain", "--nix-option", "substituters=", "--nix-option", `system-features=${features}`]);
  const a = await build(join(dir, "a"));
  assert.is(a.status, 0, a.stdout + a.stderr);
  const out = readlinkSync(join(dir, "a", `result-${dep}`));
  const b = await build(join(dir, "b"));
  assert.is(b.status, 0, b.stdout + b.stderr);
  assert.is(latestReport(join(dir, "logs")).variants.find((v) => v.name === dep)?.status, "cached");
  assert.is(readlinkSync(join(dir, "b", `result-${dep}`)), out);
  assert.ok(roots(out).includes(join(dir, "b", `result-${dep}`)), "the link is a GC root");
});

test("install interrupted after its build (SIGTERM while verify's probe runs): the probe ended, no temporary GC root left, one line says where it stopped; exit 143", async () => {
  const pkgs = standInEnvironment();
  // The environment's python3 (the probe's interpreter) writes its pid, then hangs.
  const started = join(tempDir("vm-install-sigterm-"), "probe.pid");
  writeFileSync(join(dirname(pkgs), "python3"), `#!/bin/sh\necho $$ > ${started}\nexec sleep 300\n`);
  const { h, args, env } = setup(pkgs);
  const dir = join(h.dir, "torch-env");
  const tmp = tempDir("vm-install-tmp-");
  // The real CLI, a process of its own: its temporary result links go under TMPDIR.
  const cli = spawn(process.execPath, cliArgv(args(dir)), { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", COLUMNS: "400", ...env, TMPDIR: tmp } });
  let stdout = "";
  let stderr = "";
  cli.stdout.on("data", (d) => (stdout += d));
  cli.stderr.on("data", (d) => (stderr += d));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => cli.on("close", (code, signal) => res({ code, signal })));
  const t0 = Date.now();
  while (!existsSync(started) || readFileSync(started, "utf8").trim() === "") {
    assert.ok(Date.now() - t0 < 300_000, `the probe never started:\n${stdout}\n${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const probe = Number(readFileSync(started, "utf8").trim());
  assert.ok(lstatSync(dir).isSymbolicLink(), "linked before verify");
  cli.kill("SIGTERM");
  const end = await closed;
  assert.equal(end, { code: 143, signal: null }, stderr);
  // Said in one line, the last (the build driver's progress lines come before it; nothing of the ended probe's):
  // what it was doing, what it ended and removed, what is left at DIR and how to go on.
  const lines = stderr.trim().split("\n").filter((l) => l.startsWith("variant-matrix: error:"));
  assert.is(lines.length, 1, stderr);
  assert.is(stderr.trim().split("\n").at(-1), lines[0]);
  const out = realpathSync(dir);
  assert.match(
    lines[0]!,
    `variant-matrix: error: install interrupted (SIGTERM) while verifying ${NAME} through ${dir}/bin/python3; it stopped there: ended the 1 process(es) it had started, removed its temporary result links (${tmp}/variant-matrix-install-`,
  );
  assert.match(lines[0]!, `. ${dir} stays linked (a GC root of ${out}) but is not verified: run \`npx variant-matrix verify ${NAME} --python ${dir}\`, or remove ${dir} to uninstall`);
  // The probe is ended; no temporary directory and no GC root but DIR is left.
  let alive = true;
  for (let i = 0; i < 50 && alive; i++) {
    try {
      process.kill(probe, 0);
      await new Promise((r) => setTimeout(r, 100));
    } catch {
      alive = false;
    }
  }
  assert.not.ok(alive, `the probe (pid ${probe}) still runs`);
  assert.equal(readdirSync(tmp).filter((f) => f.startsWith("variant-matrix-install-")), []);
  assert.equal(roots(out), [dir]);
});

test("install interrupted while the build driver prepares its build (SIGTERM during its evaluation): its Nix ended, no temporary directory left, one line says where it stopped", async () => {
  const pkgs = standInEnvironment();
  const { h, args, env } = setup(pkgs);
  const dir = join(h.dir, "torch-env");
  const tmp = tempDir("vm-install-tmp-");
  // nix-instantiate: install's own question first (the real one), then the build driver's evaluation hangs.
  const calls = join(h.dir, "nix-instantiate.calls");
  const hung = join(h.dir, "nix-instantiate.pid");
  writeFileSync(
    join(h.bin, "nix-instantiate"),
    `#!/bin/sh\necho "$*" >> "${calls}"\n[ "$(wc -l < "${calls}")" -gt 1 ] && { echo $$ > "${hung}"; exec sleep 300; }\nexec /usr/bin/nix-instantiate "$@"\n`,
    { mode: 0o755 },
  );
  const cli = spawn(process.execPath, cliArgv(args(dir)), { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", COLUMNS: "400", ...env, TMPDIR: tmp } });
  let stderr = "";
  cli.stderr.on("data", (d) => (stderr += d));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => cli.on("close", (code, signal) => res({ code, signal })));
  const t0 = Date.now();
  while (!existsSync(hung) || readFileSync(hung, "utf8").trim() === "") {
    assert.ok(Date.now() - t0 < 300_000, `the build driver never evaluated:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const pid = Number(readFileSync(hung, "utf8").trim());
  assert.is(readdirSync(tmp).filter((f) => f.startsWith("variant-matrix-install-")).length, 1, "its result directory, made before the build");
  cli.kill("SIGTERM");
  // Ended by the signal, as without a handler (a shell reports 143), after it said where it stopped.
  assert.equal(await closed, { code: null, signal: "SIGTERM" }, stderr);
  const lines = stderr.trim().split("\n").filter((l) => l.startsWith("variant-matrix: error:"));
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, `install interrupted (SIGTERM) while the build driver prepared the build of ${NAME}; it stopped there: ended the 1 process(es) it had started, removed its temporary result links (${tmp}/variant-matrix-install-`);
  assert.match(lines[0]!, `. Nothing is linked at ${dir}: run install again`);
  let alive = true;
  for (let i = 0; i < 50 && alive; i++) {
    try {
      process.kill(pid, 0);
      await new Promise((r) => setTimeout(r, 100));
    } catch {
      alive = false;
    }
  }
  assert.not.ok(alive, `the build driver's nix-instantiate (pid ${pid}) still runs`);
  assert.equal(readdirSync(tmp).filter((f) => f.startsWith("variant-matrix-install-")), []);
  assert.not.ok(existsSync(dir));
});

test.run();
