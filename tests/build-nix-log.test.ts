/**
 * Nix's structured log (driver/nix-log.ts): `--log-format internal-json` read as data. Recorded from real nix-build
 * 2.8 runs (tests/fixtures/nix-log: the same derivations built once with the human log and once with the structured
 * one), the human text it renders is Nix's own human log byte for byte; the failure names the derivation whose builder
 * failed and its last lines (not the dependency summary Nix prints last); the origin tells a local build from a
 * substitution. Then a real nix-build here, run the way job.ts runs it, answers the same.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { failureText, isVariantPath, NixLog } from "../generator/driver/nix-log.ts";
import { newSalt } from "./helpers/driver.ts";
import { ROOT } from "./helpers/cli.ts";

const DIR = join(ROOT, "tests/fixtures/nix-log");
const lines = (f: string) => readFileSync(join(DIR, f), "utf8").replace(/\n$/, "").split("\n");

/** Feed every line of a recorded structured log; the human text it renders. */
function render(file: string): { log: NixLog; human: string[] } {
  const log = new NixLog();
  const human = lines(file).map((l) => log.line(l)).filter((x): x is string => x !== null);
  return { log, human };
}

test("recorded failing nix-build: the human text is Nix's own human log; the failure is the builder that failed, with its last lines", () => {
  const { log, human } = render("fail.jsonl");
  assert.ok(log.structured);
  assert.equal(human, lines("fail.human"));
  // Nix's last error is the dependency summary of vm-log-top; the builder that failed is vm-log-bad's.
  const f = log.failure()!;
  assert.match(f.drvPath!, /^\/nix\/store\/[a-z0-9]{32}-vm-log-bad-fixture7505-1\.0\.drv$/);
  assert.equal(f.lastLines.slice(1), ["compiling 1 of 2", "nvcc fatal: stand-in failure"]);
  assert.match(f.lastLines[0]!, /^uses \/nix\/store\/[a-z0-9]{32}-vm-log-dep-fixture7505$/);
  assert.is(failureText(f), "error: builder for 'vm-log-bad-fixture7505-1.0.drv' failed with exit code 3; last output: nvcc fatal: stand-in failure");
  // The dependency that built is no failure of its own; its lines stay with it.
  const dep = log.buildsStarted().find((b) => isVariantPath(b.drvPath, "vm-log-dep-fixture7505"))!;
  assert.equal(dep.tail, ["building dep", "dep to stderr"]);
  assert.equal(log.origin("vm-log-dep-fixture7505"), { origin: "built", machine: "local" });
  // The wrong reading fails: the last error alone names the derivation that never started.
  assert.match(lines("fail.human").at(-1)!, /dependencies of derivation '.*vm-log-top/);
});

test("recorded substitution: the human text is Nix's own; the origin is the substituter, not a build", () => {
  const { log, human } = render("substitute.jsonl");
  assert.equal(human, lines("substitute.human"));
  assert.equal(log.origin("vm-ok-fixture3715"), { origin: "substituted", machine: "file:///tmp/portable-nix/cache" });
  assert.is(log.failure(), null);
  assert.equal(log.origin("vm-ok-fixture37"), { origin: "present", machine: null }, "a name that only starts the same is not the variant");
});

test("plain lines pass through, broken records too; a remote build names its machine; a huge line keeps a bounded tail", () => {
  const log = new NixLog();
  assert.is(log.line("ssh: connect to host big port 22: Connection refused"), "ssh: connect to host big port 22: Connection refused");
  assert.is(log.line('@nix {"action":"msg"'), '@nix {"action":"msg"', "a cut record is kept as it is");
  assert.not.ok(log.structured);
  const drv = "/nix/store/7fl810qxj70c41adxcc7vvky0cdq6hsg-pytorch-python313-cpu-avx2-2.12.0.drv";
  // The shape of a remote build (nix-fast-build's recorded lix-fail.jsonl; Nix writes the same fields).
  assert.is(
    log.line(`@nix {"action":"start","fields":["${drv}","ssh-ng://nix@big",1,1],"id":7,"level":3,"parent":0,"text":"building '${drv}' on 'ssh-ng://nix@big'","type":105}`),
    `building '${drv}' on 'ssh-ng://nix@big'...`,
  );
  for (let i = 0; i < 50; i++) log.line(`@nix {"action":"result","fields":["line ${i} ${"x".repeat(5000)}"],"id":7,"type":101}`);
  const b = log.buildsStarted()[0]!;
  assert.is(b.tail.length, 10);
  assert.ok(b.tail.every((l) => l.length <= 1001), "each kept line cut");
  assert.match(b.tail.at(-1)!, /^line 49 /);
  assert.equal(log.origin("pytorch-python313-cpu-avx2"), { origin: "built", machine: "ssh-ng://nix@big" });
  assert.equal(log.origin("pytorch-python313-cpu"), { origin: "present", machine: null });
  // Progress records print nothing in the human log.
  assert.is(log.line('@nix {"action":"result","fields":[0,1,0,0],"id":8,"type":105}'), null);
  assert.is(log.line('@nix {"action":"stop","id":7}'), null);
});

test("a real nix-build here (Nix 2.8, the project's floor) writes the records nix-log.ts reads: the failing builder, its lines", () => {
  // Fresh derivations (a salt of this run), so they are built, never found in the store.
  const env = { ...process.env, SALT: `t${newSalt()}` };
  const r = spawnSync("nix-build", [join(DIR, "fail.nix"), "-A", "top", "--no-out-link", "--option", "substituters", "", "--log-format", "internal-json"], { env, encoding: "utf8" });
  assert.is(r.status, 100, r.stderr);
  const log = new NixLog();
  const human = r.stderr.replace(/\n$/, "").split("\n").map((l) => log.line(l)).filter((x) => x !== null);
  assert.ok(log.structured, "nix-build wrote @nix records");
  assert.ok(human.every((l) => !l.startsWith("@nix ")), "no record left in the human text");
  const f = log.failure()!;
  assert.match(f.drvPath!, new RegExp(`-vm-log-bad-${env.SALT}-1\\.0\\.drv$`));
  assert.equal(f.lastLines.slice(1), ["compiling 1 of 2", "nvcc fatal: stand-in failure"]);
  assert.equal(log.origin(`vm-log-dep-${env.SALT}`), { origin: "built", machine: "local" });
  assert.is(log.origin(`vm-log-top-${env.SALT}`).origin, "present", "the derivation that never started was not built");
});

test.run();
