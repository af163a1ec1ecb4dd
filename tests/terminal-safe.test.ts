/**
 * Terminal-safe output (generator/terminal-safe.ts): strings from recordings, host files, `detect --json` files and
 * arguments are shown with their control characters escaped, so another machine's data cannot drive the terminal
 * (retitle it, recolour, clear the screen). A recorded host whose nvidia-smi line holds ESC sequences, read by
 * detect, doctor, install and fleet (text and JSON), and arguments holding ESC, through the real CLI.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runCli, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { terminalSafe } from "../generator/terminal-safe.ts";

const ESC = "\u001b";
const HOSTILE = `NVIDIA GB10${ESC}]0;pwned\u0007${ESC}[31m\u202e`;

/** A recorded DGX Spark whose GPU name carries an OSC title sequence, a colour and a bidi override. */
function hostileHost(): string {
  const dir = join(tempDir("vm-esc-"), "evil");
  mkdirSync(dir);
  copyFileSync(join(ROOT, "tests/fixtures/hosts/dgx-spark/cpuinfo"), join(dir, "cpuinfo"));
  writeFileSync(join(dir, "nvidia-smi.txt"), `12.1, ${HOSTILE}, 580.95.05\n`);
  return dir;
}

test("terminalSafe escapes C0 (but tab and newline), DEL, C1 and bidi controls as \\uXXXX; oneLine escapes newlines too", () => {
  assert.is(terminalSafe(`a${ESC}[31mb\tc\nd\u007f\u009b\u202e`), "a\\u001b[31mb\tc\nd\\u007f\\u009b\\u202e");
  assert.is(terminalSafe("x\ny\r", true), "x\\u000ay\\u000d");
  assert.is(terminalSafe("plain — text ✓"), "plain — text ✓");
  // JSON through it stays JSON with the same meaning.
  const json = JSON.stringify({ n: `a\u007fb\u202e${ESC}` });
  assert.equal(JSON.parse(terminalSafe(json)), JSON.parse(json));
});

// Through the launcher: the escaping of stdout is the process's Io (cli.ts processIo), which an in-process run does not use.
test("an ESC sequence in a recording: detect, doctor, install --dry-run and fleet print it escaped, text and JSON", () => {
  const host = hostileHost();
  const runs: [string, string[]][] = [
    ["detect", ["detect", "--cpuinfo", host]],
    ["detect --json", ["detect", "--cpuinfo", host, "--json"]],
    ["doctor", ["doctor", "--cpuinfo", host]],
    ["install --dry-run", ["install", "--dry-run", "--cpuinfo", host]],
    ["fleet", ["fleet", host]],
    ["fleet --json", ["fleet", host, "--json"]],
  ];
  for (const [what, args] of runs) {
    const r = runCli(args);
    assert.ok(r.status !== null && r.status <= 1, `${what}: ${r.stderr}`);
    const all = r.stdout + r.stderr;
    assert.not.ok(all.includes(ESC) || all.includes("\u0007") || all.includes("\u202e"), `${what}: a raw control character reached the terminal`);
    if (what !== "install --dry-run" && what !== "doctor") assert.ok(all.includes("GB10\\u001b]0;pwned\\u0007"), `${what}: shown escaped: ${all}`);
    if (what.endsWith("--json")) assert.ok(JSON.stringify(JSON.parse(r.stdout)).includes("GB10\\u001b]0;pwned"), `${what}: still JSON, same meaning`);
  }
});

test("an ESC sequence in an argument: every error line shows it escaped (errorLine escapes it, in-process)", async () => {
  const evil = `${ESC}[2J${ESC}]0;pwned\u0007evil`;
  const runs: string[][] = [
    ["explain", evil],
    ["detect", "--package", evil],
    ["build", "--dry-run", evil],
    ["list", "--filter", `isa=${evil}`],
    ["detect", "--cpuinfo", join(tempDir("vm-esc-arg-"), evil)],
    ["build", "--dry-run", "--backend", evil],
  ];
  for (const args of runs) {
    const r = await runMain(args);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.not.ok((r.stdout + r.stderr).includes(ESC), `${JSON.stringify(args)}: raw ESC in ${JSON.stringify(r.stderr)}`);
    assert.match(r.stderr, /\\u001b\[2J/, `${JSON.stringify(args)}: shown escaped`);
  }
});

test.run();
