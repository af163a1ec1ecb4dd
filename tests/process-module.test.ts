// One process module: generator/process.ts is the only file under generator/ that imports node:child_process or zx,
// read with TypeScript's parser (static, dynamic `import()`, `require`, `export … from`); process.ts
// itself stands on node builtins and zx only. And its behaviour with real child processes: output and input, a timeout that
// stops the child, a missing program named in the error, a process group ended whole.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers/cli.ts";
import { cutLine, findExecutable, ProcessStartError, runCommand, runCommandSync, runTool, signalGroup, startInGroup } from "../generator/process.ts";

const GEN = join(ROOT, "generator");
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Every module a source text names: `import … from`, `export … from`, `import x = require()`, `import()`, `require()`. */
function modulesOf(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    if (ts.isExternalModuleReference(n) && ts.isStringLiteral(n.expression)) out.push(n.expression.text);
    if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === "require"))) {
      const arg = n.arguments[0];
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) out.push(arg.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

const spawnsProcesses = (m: string) => /^(node:)?child_process$/.test(m) || /^zx(\/|$)/.test(m);

test("only generator/process.ts imports node:child_process or zx", () => {
  const all = files(GEN);
  assert.ok(all.length > 50, "found generator/");
  const offenders = all.flatMap((f) => {
    const rel = relative(GEN, f);
    const bad = modulesOf(f, readFileSync(f, "utf8")).filter((m) => spawnsProcesses(m) && rel !== "process.ts");
    return bad.map((m) => `${rel} imports ${m}`);
  });
  assert.equal(offenders, []);
  const own = modulesOf("process.ts", readFileSync(join(GEN, "process.ts"), "utf8"));
  assert.ok(own.includes("node:child_process") && own.includes("zx"));
});

test("the reading catches every form of the import (the wrong case fails)", () => {
  const bad = [
    'import { spawnSync } from "node:child_process";',
    'import cp from "child_process";',
    'const { execFile } = await import("node:child_process");',
    "const cp = await import(`child_process`);",
    'const { $ } = await import("zx");',
    'import { $ } from "zx/core";',
    'export { spawn } from "node:child_process";',
    'import cp = require("child_process");',
    'const cp = require("node:child_process");',
  ];
  for (const b of bad) assert.ok(modulesOf("x.ts", b).some(spawnsProcesses), b);
  // A string that only mentions the module is no import.
  assert.not.ok(modulesOf("x.ts", 'const s = "node:child_process"; // import("zx")').some(spawnsProcesses));
});

test("process.ts is a low floor: it imports node builtins and zx only", () => {
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const own = modulesOf("process.ts", readFileSync(join(GEN, "process.ts"), "utf8"));
  assert.equal(own.filter((m) => !builtins.has(m) && m !== "zx"), []);
});

const node = process.execPath;

test("runCommand: stdout, stderr, exit code and input; runCommandSync the same", async () => {
  const script = 'process.stdin.on("data", (d) => process.stdout.write(d)); process.stderr.write("err"); process.on("exit", () => (process.exitCode = 3));';
  const r = await runCommand([node, "-e", script], { input: "hello" });
  assert.equal({ code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr, stopped: r.stopped }, { code: 3, signal: null, stdout: "hello", stderr: "err", stopped: null });
  const s = runCommandSync([node, "-e", script], { input: "hi" });
  assert.equal({ code: s.code, stdout: s.stdout, stderr: s.stderr, stopped: s.stopped }, { code: 3, stdout: "hi", stderr: "err", stopped: null });
  const cwd = mkdtempSync(join(tmpdir(), "vm-proc-"));
  try {
    assert.is((await runCommand([node, "-p", "process.cwd()"], { cwd, env: { ...process.env, X_PROC: "1" } })).stdout.trim(), cwd);
    assert.is(runCommandSync([node, "-p", "process.env.X_PROC"], { env: { ...process.env, X_PROC: "7" } }).stdout.trim(), "7");
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test("a timeout stops the child with SIGTERM and says so (async and sync)", async () => {
  const t0 = Date.now();
  const r = await runCommand([node, "-e", "setTimeout(() => {}, 30000)"], { timeoutMs: 300 });
  assert.ok(Date.now() - t0 < 10_000, "stopped long before the child's own 30 s");
  assert.is(r.code, null);
  assert.is(r.signal, "SIGTERM");
  assert.match(r.stopped ?? "", /ran past its limit of 300 ms and was stopped with SIGTERM/);
  const s = runCommandSync([node, "-e", "setTimeout(() => {}, 30000)"], { timeoutMs: 300 });
  assert.is(s.signal, "SIGTERM");
  assert.match(s.stopped ?? "", /ran past its limit of 300 ms/);
});

test("more output than maxBuffer stops the child and says so (runCommandSync)", () => {
  const r = runCommandSync([node, "-e", 'process.stdout.write("x".repeat(1 << 20)); setTimeout(() => {}, 30000)'], { maxBuffer: 1024 });
  assert.match(r.stopped ?? "", /printed more than 1024 bytes/);
  assert.is(r.signal, "SIGTERM", "ended by this module, not by itself");
});

test("runCommand with `tail` keeps a bounded tail however much the child prints: the last lines, a long line cut with its length said", async () => {
  // 100 MB of stdout in short lines, then one 30,000,000-character line on stderr (a Python that prints without end).
  const script = "yes 0123456789 | head -c 99999999; echo last; head -c 30000000 /dev/zero | tr '\\0' x >&2; printf '\\nafter\\n' >&2";
  const r = await runCommand(["sh", "-c", script], { tail: { stdout: { lines: 3, lineChars: 1000 }, stderr: { lines: 2, lineChars: 50 } } });
  assert.is(r.code, 0);
  // What is kept: 3 lines of stdout, 2 of stderr, whatever came before.
  assert.equal(r.stdout, "0123456789\n0123456789\nlast\n");
  assert.equal(r.stderr.split("\n"), [`${"x".repeat(50)}… (30,000,000 characters, cut)`, "after", ""]);
  assert.ok(r.stdout.length + r.stderr.length < 200, `kept ${r.stdout.length + r.stderr.length} characters`);
  // A partial last line (no newline) is kept too; without `tail` everything is kept, as before.
  assert.is((await runCommand(["sh", "-c", "printf 'a\\nbcdef'"], { tail: { stdout: { lines: 5, lineChars: 3 } } })).stdout, "a\nbcd… (5 characters, cut)");
  assert.is((await runCommand(["sh", "-c", "printf 'a\\nbcdef'"])).stdout, "a\nbcdef");
  // A line cut before is cut again with the length it said (a message quoting a kept line).
  assert.is(cutLine(cutLine("x".repeat(5000), 100), 10), `${"x".repeat(10)}… (5,000 characters, cut)`);
  assert.is(cutLine("short", 10), "short");
});

test("a missing program: ProcessStartError naming it (ENOENT); runTool resolves exit 127 instead", async () => {
  const argv = ["variant-matrix-no-such-program", "--x"];
  const err = await runCommand(argv).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, ProcessStartError);
  assert.is((err as ProcessStartError).code, "ENOENT");
  assert.match((err as ProcessStartError).message, /^cannot run variant-matrix-no-such-program: spawn variant-matrix-no-such-program ENOENT$/);
  assert.throws(() => runCommandSync(argv), (e: unknown) => e instanceof ProcessStartError && e.code === "ENOENT" && /cannot run variant-matrix-no-such-program/.test(e.message));
  const t = await runTool(argv);
  assert.is(t.code, 127);
  assert.match(t.stderr, /cannot run variant-matrix-no-such-program: .*ENOENT/);
  const g = await startInGroup({ argv, cwd: ROOT, env: process.env }, 1).exit;
  assert.equal(g, { code: null, spawnError: "cannot run variant-matrix-no-such-program: spawn variant-matrix-no-such-program ENOENT" });
});

/** Whether `pid` is a live process (not a zombie). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

test("startInGroup writes to the descriptor; signalGroup ends the process and the helpers it started", async () => {
  const dir = mkdtempSync(join(tmpdir(), "vm-proc-"));
  const log = join(dir, "log");
  const fd = openSync(log, "a");
  try {
    // A shell that starts a helper in the background, prints its pid, and waits: what nix-build does with its own.
    const p = startInGroup({ argv: ["sh", "-c", "sleep 30 & echo $!; echo started >&2; wait"], cwd: dir, env: process.env }, fd);
    assert.ok(p.pid !== undefined);
    for (let i = 0; i < 100 && !/started/.test(readFileSync(log, "utf8")); i++) await new Promise((r) => setTimeout(r, 50));
    const helper = Number(readFileSync(log, "utf8").split("\n")[0]);
    assert.ok(Number.isInteger(helper) && alive(helper), "the helper runs");
    assert.ok(signalGroup(p.pid, "SIGTERM"));
    const exit = await p.exit;
    assert.is(exit.code, null, "ended by the signal");
    for (let i = 0; i < 100 && alive(helper); i++) await new Promise((r) => setTimeout(r, 20));
    assert.not.ok(alive(helper), "the helper in the group ended too");
    assert.not.ok(signalGroup(undefined, "SIGTERM"));
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("findExecutable: a program on the PATH given, null when none", async () => {
  assert.is(await findExecutable("node", `/nonexistent:${join(process.execPath, "..")}`), process.execPath);
  assert.is(await findExecutable("node", "/nonexistent"), null);
  assert.is(await findExecutable(process.execPath, ""), process.execPath);
  assert.is(await findExecutable("variant-matrix-no-such-program"), null);
});


test("runCommand starts the program itself: a user's ~/.bashrc never runs, even where bash would read it (the wrong case: zx's `$`)", async () => {
  // Debian's (and upstream) bash reads ~/.bashrc for `bash -c` when its stdin is a socket and SHLVL is unset or 0 (a
  // parent that is not a shell: cron, systemd, an IDE). zx's `$` is such a bash: the wrong case shows the trap is real.
  const home = mkdtempSync(join(tmpdir(), "vm-proc-home-"));
  try {
    const marker = join(home, "bashrc-ran");
    writeFileSync(join(home, ".bashrc"), `echo from-bashrc; touch ${JSON.stringify(marker)}\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SHLVL: "0" };
    delete env.BASH_ENV;
    const r = await runCommand(["printf", "%s", "out"], { env });
    assert.equal({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "out" });
    assert.not.ok(existsSync(marker), "runCommand ran no ~/.bashrc");
    const { $ } = await import("zx");
    const z = await $({ env, quiet: true, nothrow: true })`printf %s out`;
    assert.ok(existsSync(marker) && z.stdout.startsWith("from-bashrc"), `through zx's bash, ~/.bashrc ran (stdout: ${JSON.stringify(z.stdout)})`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();
