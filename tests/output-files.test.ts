/**
 * The files the CLI writes (generator/output-file.ts, generator/redact.ts), against real files, a real FIFO,
 * /dev/null, real nix-build (stand-in derivations of tests/fixtures/build-pkgs) and real `nix copy`, the CLI's main
 * run in-process (Nix as its child processes): `--report` writes through a symbolic link, a FIFO and /dev/null and leaves each what it was, and refuses a
 * directory before building; a `logs/latest` directory is warned about and kept; credentials in a substituter URL
 * stay out of report.json and the log headers; logs are owner-only; `publish --to` logs into a fresh private
 * directory, never a fixed name in the temp directory.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { BuildReport } from "../generator/driver/report.ts";
import { ensurePrivateDir, outputMode, writeOutputFile } from "../generator/output-file.ts";
import { redactCredentials, redactDeep } from "../generator/redact.ts";
import { tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { BUILD_MATRIX, FIXTURES, newSalt } from "./helpers/driver.ts";
import { STAND_IN_BUILDER_FEATURES } from "./helpers/nix.ts";

const PT = "pytorch-python313-cpu-avx2";
const TOKEN = "s3cr3t-T0KEN";

/** A fresh directory and salt; builds of the stand-in PT go to DIR/out, logs to DIR/logs. */
function ctx() {
  const dir = tempDir("vm-output-files-");
  chmodSync(dir, 0o755);
  return { dir, env: { VM_BUILD_TEST_SALT: newSalt() } };
}

/**
 * `build ARGS PT` of the stand-in fixtures through the CLI's main in-process (nix-build runs as its real child
 * process), declaring the ISA's system feature as tests/helpers/driver.ts runDriver does.
 */
async function build(c: ReturnType<typeof ctx>, args: string[]) {
  const r = await runMain(
    ["build", "--no-verify", "--nix-option", `extra-system-features=${STAND_IN_BUILDER_FEATURES[2]}`, "--pkgs-dir", FIXTURES, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"),
      "--logs-dir", join(c.dir, "logs"), "--backend", "nix", "--nix-option", "substituters=", "--plain", ...args, PT],
    { env: c.env },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("--report through a symbolic link: the link stays, its target holds the report; a logs/latest directory is warned about and kept", async () => {
  const c = ctx();
  const target = join(c.dir, "kept", "report.json");
  mkdirSync(join(c.dir, "kept"));
  writeFileSync(target, "old\n");
  const link = join(c.dir, "report-link.json");
  symlinkSync(target, link);
  mkdirSync(join(c.dir, "logs", "latest"), { recursive: true });
  writeFileSync(join(c.dir, "logs", "latest", "mine.txt"), "not the driver's\n");
  const r = await build(c, ["--report", link]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(lstatSync(link).isSymbolicLink(), "the link is still a link");
  assert.is(readlinkSync(link), target);
  const viaLink = JSON.parse(readFileSync(target, "utf8")) as BuildReport;
  assert.is(viaLink.variants.find((v) => v.name === PT)!.status, "built");

  // logs/latest is somebody's directory: kept as it was, and the run says so.
  assert.ok(lstatSync(join(c.dir, "logs", "latest")).isDirectory());
  assert.equal(readdirSync(join(c.dir, "logs", "latest")), ["mine.txt"]);
  assert.match(r.stderr, /warning: .*latest is a directory, not a link: not pointed at/);
});

test("a token in --substituter (user info, ?token=) and --nix-option access-tokens are redacted in report.json, --report, the log header and what is printed; logs are owner-only", async () => {
  const c = ctx();
  const copy = join(c.dir, "report-copy.json");
  // An unreachable cache with credentials in its URL (connection refused at once: Nix warns and builds).
  const r = await build(c, [
    "--report", copy, "--substituter", `http://ci-user:${TOKEN}@127.0.0.1:9/?token=${TOKEN}&priority=40`,
    "--nix-option", `access-tokens=github.com=${TOKEN}`,
  ]);
  assert.is(r.code, 0, r.stderr);
  const runDir = readdirSync(join(c.dir, "logs")).find((d) => d !== "latest")!;
  const reportText = readFileSync(join(c.dir, "logs", runDir, "report.json"), "utf8");
  assert.not.ok(reportText.includes(TOKEN), "no token in report.json");
  assert.not.ok(readFileSync(copy, "utf8").includes(TOKEN), "no token in --report");
  assert.not.ok(r.stdout.includes(TOKEN) || r.stderr.includes(TOKEN), "nor in what the run printed");
  const pt = (JSON.parse(reportText) as BuildReport).variants.find((v) => v.name === PT)!;
  assert.ok(pt.command.includes("http://ci-user:REDACTED@127.0.0.1:9/?token=REDACTED&priority=40"), pt.command.join(" "));
  assert.ok(pt.command.includes("github.com=REDACTED"), pt.command.join(" "));
  const log = readFileSync(pt.log!, "utf8");
  const headers = log.split("\n").filter((l) => l.startsWith("==="));
  assert.ok(headers.some((h) => h.includes("ci-user:REDACTED@127.0.0.1:9")), headers.join("\n"));
  assert.not.ok(headers.some((h) => h.includes(TOKEN)), "no token in a log header");
  assert.ok(headers.some((h) => h.includes("?token=REDACTED&priority=40") && h.includes("github.com=REDACTED")), headers.join("\n"));
  // What Nix itself printed reaches the log unfiltered (the builder writes to it directly): owner-only.
  assert.is(statSync(pt.log!).mode & 0o777, 0o600);
});

test("--report FIFO and --report /dev/null are written through and stay what they were; a directory is refused before anything is built", async () => {
  const c = ctx();
  const fifo = join(c.dir, "report.fifo");
  execFileSync("mkfifo", [fifo]);
  const reader = spawn("cat", [fifo]);
  let read = "";
  reader.stdout.on("data", (d) => (read += d));
  const readerDone = new Promise<boolean>((res) => reader.on("close", () => res(true)));
  const r = await build(c, ["--report", fifo]);
  assert.is(r.code, 0, r.stderr);
  // A report renamed over the FIFO would leave its reader waiting for ever: give it 10 s.
  const done = await Promise.race([readerDone, new Promise<boolean>((res) => setTimeout(() => res(false), 10_000).unref())]);
  if (!done) reader.kill();
  assert.ok(done, "the reader of the FIFO got the report and its end");
  assert.is((JSON.parse(read) as BuildReport).variants.find((v) => v.name === PT)!.status, "built");
  assert.ok(lstatSync(fifo).isFIFO(), "still a FIFO");

  const devNull = lstatSync("/dev/null");
  const n = await build(c, ["--report", "/dev/null"]);
  assert.is(n.code, 0, n.stderr);
  const after = lstatSync("/dev/null");
  assert.ok(after.isCharacterDevice(), "/dev/null is still a device");
  assert.is(after.rdev, devNull.rdev);
  assert.is(after.ino, devNull.ino, "the same node, not a new file");

  const runsBefore = readdirSync(join(c.dir, "logs")).sort();
  mkdirSync(join(c.dir, "a-dir"));
  const refused = await build(c, ["--report", join(c.dir, "a-dir"), "--force"]);
  assert.is(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /^variant-matrix: error: cannot write .*a-dir: it is a directory; name a file$/m);
  assert.equal(readdirSync(join(c.dir, "logs")).sort(), runsBefore, "the refused run built nothing and left no run directory");
  assert.ok(lstatSync(join(c.dir, "a-dir")).isDirectory());
});

test("writeOutputFile: replaces a regular file atomically keeping its mode, refuses a link to nothing, a directory and a block device", async () => {
  const dir = tempDir("vm-output-unit-");
  const f = join(dir, "out.txt");
  writeFileSync(f, "old");
  chmodSync(f, 0o640);
  await writeOutputFile(f, "new");
  assert.is(readFileSync(f, "utf8"), "new");
  assert.is(statSync(f).mode & 0o777, 0o640, "the file keeps its mode");
  assert.equal(readdirSync(dir), ["out.txt"], "no temporary file left beside it");
  const dangling = join(dir, "dangling");
  symlinkSync(join(dir, "nowhere", "x"), dangling);
  const error = await writeOutputFile(dangling, "x").then(
    () => null,
    (e: Error) => e.message,
  );
  assert.match(error ?? "(written)", /a symbolic link to nothing/);
  assert.not.ok(existsSync(join(dir, "nowhere")), "nothing created where the link points");
  const block = readdirSync("/dev").map((n) => join("/dev", n)).find((p) => {
    try {
      return lstatSync(p).isBlockDevice();
    } catch {
      return false;
    }
  });
  if (block) assert.throws(() => outputMode(block), /it is a block device/);
  assert.throws(() => outputMode(dir), /it is a directory/);
  assert.is(outputMode(join(dir, "new.json")), "create");
  assert.is(outputMode("/dev/null"), "through");
});

test("ensurePrivateDir: a fixed per-user directory in a shared place is used only when it is this user's and closed to others", () => {
  const base = tempDir("vm-private-");
  const fresh = join(base, "fresh");
  ensurePrivateDir(fresh);
  assert.is(statSync(fresh).mode & 0o777, 0o700);
  const open = join(base, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  assert.throws(() => ensurePrivateDir(open), /writable by others \(mode 777\)/);
  const theirs = join(base, "theirs");
  mkdirSync(theirs, { mode: 0o700 });
  if (process.getuid?.() === 0) {
    chownSync(theirs, 65534, 65534);
    assert.throws(() => ensurePrivateDir(theirs), /belongs to uid 65534/);
  }
});

test("build --dry-run prints no credential: a substituter's user:password@ and ?token=, access-tokens (text and --json)", async () => {
  const args = ["build", "--dry-run", "--backend", "nix", "--substituter", `https://ci-user:${TOKEN}@cache.example/?token=${TOKEN}`, "--nix-option", `access-tokens=github.com=${TOKEN} gitlab.com=${TOKEN}`, PT];
  for (const json of [false, true]) {
    const r = await runMain(json ? [...args, "--json"] : args);
    assert.is(r.status, 0, r.stderr);
    assert.not.ok((r.stdout + r.stderr).includes(TOKEN), `${json ? "--json" : "text"}: ${r.stdout}`);
    assert.match(r.stdout, /ci-user:REDACTED@cache\.example/);
    assert.match(r.stdout, /github\.com=REDACTED/);
  }
});

test("redactCredentials: each kind of credential (URL user info and query, access-tokens in every form, NIX_CONFIG, netrc)", () => {
  const T = "tok123";
  const cases: [string, string][] = [
    [`https://u:${T}@h/x`, "https://u:REDACTED@h/x"],
    [`https://h/cache?token=${T}&priority=40&trusted=1`, "https://h/cache?token=REDACTED&priority=40&trusted=1"],
    [`s3://bucket?region=eu-west-1&secret=${T}`, "s3://bucket?region=eu-west-1&secret=REDACTED"],
    [`--nix-option access-tokens=github.com=${T}`, "--nix-option access-tokens=github.com=REDACTED"],
    [`--option access-tokens github.com=${T} gitlab.com=${T} --option cores 4`, "--option access-tokens github.com=REDACTED gitlab.com=REDACTED --option cores 4"],
    [`["--option","access-tokens","github.com=${T}"]`, `["--option","access-tokens","github.com=REDACTED"]`],
    // NIX_CONFIG holds nix.conf lines.
    [`NIX_CONFIG="extra-access-tokens = github.com=${T}\nsubstituters = https://c/?sig=${T}"`, `NIX_CONFIG="extra-access-tokens = github.com=REDACTED\nsubstituters = https://c/?sig=REDACTED"`],
    // netrc (the file netrc-file names): one entry per line, or all on one line.
    [`machine cache.example login ci password ${T}\ndefault login anon password ${T}`, "machine cache.example login ci password REDACTED\ndefault login anon password REDACTED"],
  ];
  for (const [given, want] of cases) {
    assert.is(redactCredentials(given), want, given);
    assert.not.ok(redactCredentials(given).includes(T));
  }
  assert.equal(redactDeep(["--option", "access-tokens", `github.com=${T}`]), ["--option", "access-tokens", "github.com=REDACTED"]);
});

test("redactCredentials: passwords and bare http tokens go, user names of other schemes stay", () => {
  assert.is(redactCredentials("https://u:p@ss@host/x https://TOKEN@h ssh://nix@builder s3://b?region=x"), "https://u:REDACTED@host/x https://REDACTED@h ssh://nix@builder s3://b?region=x");
  assert.is(redactCredentials(`["--option","substituters","https://a:b@c"]`), `["--option","substituters","https://a:REDACTED@c"]`);
  assert.is(redactCredentials("user@example.org wrote"), "user@example.org wrote");
});

test("publish --to: nix copy's log is in a fresh private directory (none left after success, kept and named after a failure), never a fixed name in the temp directory; a token in the URI is redacted", async () => {
  const c = ctx();
  const b = await build(c, []);
  assert.is(b.code, 0, b.stderr);
  const tmp = tempDir("vm-publish-tmp-");
  const env = { TMPDIR: tmp };
  const cache = tempDir("vm-publish-cache-");
  const ok = await runMain(["publish", PT, "--to", `file://${cache}`, "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--pkgs-dir", FIXTURES, "--allow-unproven", "--json"], { env });
  assert.is(ok.status, 0, ok.stderr);
  assert.is((JSON.parse(ok.stdout) as { log: string | null }).log, null);
  assert.equal(readdirSync(tmp).filter((f) => f.startsWith("variant-matrix-publish")), [], "nothing left in the temp directory");

  const bad = await runMain(
    ["publish", PT, "--to", `http://ci-user:${TOKEN}@127.0.0.1:9`, "--nix-option", "connect-timeout=1", "--nix-option", "download-attempts=1", "--matrix", BUILD_MATRIX, "--out-dir", join(c.dir, "out"), "--pkgs-dir", FIXTURES, "--allow-unproven", "--json"],
    { env },
  );
  assert.is(bad.status, 1, bad.stderr);
  assert.not.ok(bad.stdout.includes(TOKEN) || bad.stderr.includes(TOKEN), "no token printed");
  const out = JSON.parse(bad.stdout) as { to: string; log: string };
  assert.is(out.to, "http://ci-user:REDACTED@127.0.0.1:9");
  const made = readdirSync(tmp).filter((f) => f.startsWith("variant-matrix-publish"));
  assert.is(made.length, 1);
  assert.match(made[0]!, /^variant-matrix-publish-[A-Za-z0-9]{6}$/, "a mkdtemp directory, not a .log file with the pid");
  assert.is(out.log, join(tmp, made[0]!, "publish.log"));
  assert.is(statSync(join(tmp, made[0]!)).mode & 0o777, 0o700);
  assert.is(statSync(out.log).mode & 0o777, 0o600);
  const log = readFileSync(out.log, "utf8");
  assert.match(log, /=== nix copy --to http:\/\/ci-user:REDACTED@127\.0\.0\.1:9 /);
  assert.not.ok(log.includes(TOKEN), "nix copy's own output is redacted too (it passes through publish)");
});

test.run();
