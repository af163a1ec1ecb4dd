/**
 * generate's lock (generator/generate/output-lock.ts) cannot strand a user: a lock whose pid now belongs to another process
 * (a generate was killed and its pid reused) is taken over at once; a lock held by a live generate names its file
 * and how to clear it; `--out` through a symbolic link takes the same lock as the directory. Real files, a real
 * other process (`sleep`), and a real `generate` child process.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { lockFileOf, lockOutput, LockedError, processStart, readLockOwner } from "../generator/generate/output-lock.ts";

test("the lock records pid, start time and token; a live pid of another start time is not its owner (taken over at once)", async () => {
  const out = tempDir("vm-lock-reuse-");
  const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const file = lockFileOf(out);
    const start = processStart(sleeper.pid!);
    assert.ok(start && /^\d+$/.test(start), `start time of a live process: ${start}`);
    // The pid is alive but was started at another time than the lock says: another process now has the pid.
    writeFileSync(file, JSON.stringify({ pid: sleeper.pid, start: String(Number(start) + 12345), token: "old" }));
    // A lock that took the live pid for its owner would wait until the sleeper ends (60 s); taken over at once is far
    // below that, with a margin a loaded machine meets.
    const t0 = Date.now();
    const release = await lockOutput(out, { waitMs: 90_000 });
    assert.ok(Date.now() - t0 < 30_000, `taken over without waiting (${Date.now() - t0} ms)`);
    const mine = readLockOwner(file)!;
    assert.equal([mine.pid, mine.start], [process.pid, processStart(process.pid)]);
    assert.match(mine.token, /^[0-9a-f]{16}$/);
    release();
    assert.not.ok(existsSync(file), "released");
  } finally {
    sleeper.kill();
  }
});

test("a lock held by a live owner: the wait ends in LockedError naming the lock file and `rm FILE`", async () => {
  const out = tempDir("vm-lock-held-");
  const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const file = lockFileOf(out);
    writeFileSync(file, JSON.stringify({ pid: sleeper.pid, start: processStart(sleeper.pid!), token: "x" }));
    let waited: string | undefined;
    await lockOutput(out, { waitMs: 300, onWait: (_pid, f) => (waited = f) }).then(
      () => assert.unreachable("the lock of a live owner was taken"),
      (e: Error) => {
        assert.instance(e, LockedError);
        assert.match(e.message, new RegExp(`another generate \\(pid ${sleeper.pid}\\)`));
        assert.ok(e.message.includes(`The lock is ${file}`), e.message);
        assert.ok(e.message.includes(`\`rm ${file}\``), e.message);
      },
    );
    assert.is(waited, file, "the wait names the lock file");
    assert.ok(existsSync(file), "a live owner's lock is left alone");
  } finally {
    sleeper.kill();
  }
});

test("--out through a symbolic link is the same lock as the directory (keyed by the real path)", async () => {
  const dir = tempDir("vm-lock-alias-");
  const real = join(dir, "tree");
  mkdirSync(real);
  symlinkSync(real, join(dir, "alias"));
  assert.is(lockFileOf(join(dir, "alias")), lockFileOf(real));
  // A directory that does not exist yet, below the alias, too.
  assert.is(lockFileOf(join(dir, "alias", "new")), lockFileOf(join(real, "new")));
  const release = await lockOutput(real);
  try {
    await lockOutput(join(dir, "alias"), { waitMs: 200 }).then(
      () => assert.unreachable("the alias took a second lock"),
      (e: Error) => assert.instance(e, LockedError),
    );
  } finally {
    release();
  }
});

test("the real CLI: generate with a stale lock of a reused pid runs at once (no 2-minute wait)", () => {
  const out = tempDir("vm-lock-cli-");
  const m = writeMatrix(out, { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.9"], gpus: ["90"], isas: ["avx2"], cpuOnly: false });
  // This test process is alive; the lock says it started at another time, as a reused pid would.
  writeFileSync(lockFileOf(out), JSON.stringify({ pid: process.pid, start: "1", token: "stale" }));
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "generator/cli.ts"), "generate", "--matrix", m, "--out", out], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stderr, /waiting/);
  assert.ok(Date.now() - t0 < 60_000, "no wait for the stale lock");
  assert.ok(existsSync(join(out, "BUILD_MATRIX.md")));
  assert.not.ok(existsSync(lockFileOf(out)), "released after");
  assert.not.ok(readFileSync(join(out, "BUILD_MATRIX.md"), "utf8").length === 0);
});

test.run();
