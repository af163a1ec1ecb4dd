/**
 * A read-only checkout (a `:ro` container mount, a CI cache, the Nix store) runs every command that only reads:
 * the caches (the matrix compile cache, the precompiled templates, generate's lock) fall back to the per-user cache
 * directory ($XDG_CACHE_HOME/variant-matrix). The checkout is made read-only for real: the repository is bind-mounted
 * read-only over itself in a private mount namespace (`unshare --mount`, in a user namespace when this user is not
 * root), so nothing outside the test sees it and nothing is left to clean up when the namespace's process ends.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { userCacheDir } from "../generator/paths.ts";

const HOST = "tests/fixtures/hosts/dgx-spark";

/** Run `script` (sh) with ROOT mounted read-only over itself in a private mount namespace. */
function inReadOnlyCheckout(script: string, env: NodeJS.ProcessEnv): { status: number | null; stderr: string } {
  const mountRo = `mount --bind "$R" "$R" && mount -o remount,bind,ro "$R" && cd "$R" && ${script}`;
  const run = (ns: string[]) => spawnSync("unshare", [...ns, "sh", "-c", mountRo], { encoding: "utf8", env: { ...env, R: ROOT } });
  // As root the mount namespace alone allows the mount; otherwise a user namespace maps this user to root in it.
  const asRoot = process.getuid?.() === 0 ? run(["--mount"]) : null;
  return asRoot?.status === 0 ? asRoot : run(["--user", "--map-root-user", "--mount"]);
}

test("a read-only checkout: list, explain, build --dry-run, detect, fleet, ci and generate --check run; the caches go to $XDG_CACHE_HOME", () => {
  const work = tempDir("vm-ro-");
  const xdg = join(work, "xdg");
  // A matrix the compile cache has never seen (so it must be compiled and cached somewhere writable).
  const m = writeMatrix(work, { releases: [{ torch: "2.12.0" }], python: ["3.13"], cuda: ["12.9"], gpus: ["90"], isas: ["avx2", "armv9"], cpuOnly: true, environments: { ro: ["numpy"] } });
  const commands: Record<string, string> = {
    list: `list --json --matrix ${m}`,
    explain: "explain pytorch-python313-cpu-avx2",
    dryRun: "build --dry-run --json --backend nix pytorch-python313-cpu-avx2",
    detect: `detect --cpuinfo ${HOST} --json`,
    fleet: `fleet ${HOST}`,
    ci: "ci github",
    check: "generate --check",
  };
  const script = [
    // The checkout really is read-only here.
    `if touch "$R/.ro-probe" 2>/dev/null; then echo writable > "$T/probe"; else echo read-only > "$T/probe"; fi`,
    // The compiled launcher users run (its bundle, dist/<hash>/, is built before the checkout turns read-only:
    // helpers/cli.ts builds it when loaded), not tsx: a start of 0.3 s instead of 2-3 s, and the same caches.
    ...Object.entries(commands).map(([k, c]) => `node bin/variant-matrix.js ${c} > "$T/${k}.out" 2> "$T/${k}.err"; echo $? > "$T/${k}.rc"`),
  ].join("\n");
  const r = inReadOnlyCheckout(script, { ...process.env, T: work, XDG_CACHE_HOME: xdg, NO_COLOR: "1", COLUMNS: "400" });
  assert.is(r.status, 0, `the namespace ran: ${r.stderr}`);
  assert.is(readFileSync(join(work, "probe"), "utf8").trim(), "read-only", "the checkout was mounted read-only");
  for (const k of Object.keys(commands)) {
    const err = readFileSync(join(work, `${k}.err`), "utf8");
    assert.is(readFileSync(join(work, `${k}.rc`), "utf8").trim(), "0", `${commands[k]}: ${err}`);
    assert.not.match(err, /EROFS|read-only file system/i, commands[k]);
  }
  assert.match(readFileSync(join(work, "list.out"), "utf8"), /"name": "ro-env-python313-cpu-avx2"/);
  assert.match(readFileSync(join(work, "check.out"), "utf8"), /up to date/);
  const cache = userCacheDir({ XDG_CACHE_HOME: xdg });
  assert.is(cache, join(xdg, "variant-matrix"));
  assert.ok(readdirSync(cache).some((f) => /^matrix-[0-9a-f]+\.mjs$/.test(f)), `the matrix was compiled into ${cache}`);
});

test("userCacheDir: $XDG_CACHE_HOME when absolute, else ~/.cache (XDG Base Directory)", () => {
  assert.is(userCacheDir({ XDG_CACHE_HOME: "/x/cache", HOME: "/home/u" }), "/x/cache/variant-matrix");
  assert.is(userCacheDir({ XDG_CACHE_HOME: "relative", HOME: "/home/u" }), "/home/u/.cache/variant-matrix");
  assert.is(userCacheDir({ HOME: "/home/u" }), "/home/u/.cache/variant-matrix");
});

test.run();
