/**
 * Run the real CLI as a child process, the way a user does (the compiled launcher, bin/variant-matrix.js), and capture
 * what it prints. runSources runs the TypeScript sources through tsx instead, for the few tests that compare the two.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: plain JavaScript module without types (it runs before anything is compiled)
import { compiledEntry } from "../../bin/build-dist.mjs";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/**
 * The launcher users run (package.json `bin`): it runs dist/<hash>/, the bundle of the current sources, building it
 * first when generator/ changed (bin/build-dist.mjs; concurrent starts share one bundle). About 0.2 s a start, where
 * `node --import tsx generator/cli.ts` takes 1–3 s.
 */
export const BIN = join(ROOT, "bin", "variant-matrix.js");
const SOURCES = join(ROOT, "generator", "cli.ts");

// The bundle of the current sources is built before the first run (quietly, as `npm run prepare` does), so no run
// of a test file says "compiling" on its stderr, whether the file runs alone or beside others (they share it).
if (!existsSync(compiledEntry())) {
  const built = spawnSync(process.execPath, [join(ROOT, "bin", "build-dist.mjs")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`cannot build dist/: ${built.stderr}`);
}

/** Result of one CLI run: exit status and captured output. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: no colour, a 400-column terminal unless `env` says otherwise. */
function cliEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: "1", COLUMNS: "400", ...env };
}

/** The argv (after `node`) that runs `variant-matrix ARGS…` through the launcher. */
export function cliArgv(args: string[]): string[] {
  return [BIN, ...args];
}

/**
 * Run `variant-matrix ARGS...` synchronously from `cwd` (default: the repo root). Human output wraps to $COLUMNS
 * (commands/shared.ts terminalWidth); tests that check what a line says run as on a 400-column terminal so a
 * sentence stays on one line, and the tests of the width itself pass `env: { COLUMNS: "80" }`.
 */
export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliRun {
  return spawnCli(cliArgv(args), opts);
}

/** runCli through the TypeScript sources (node --import tsx generator/cli.ts): only to compare them with the bundle. */
export function runSources(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliRun {
  return spawnCli(["--import", "tsx", SOURCES, ...args], opts);
}

function spawnCli(argv: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv }): CliRun {
  const r = spawnSync(process.execPath, argv, { cwd: opts.cwd ?? ROOT, encoding: "utf8", env: cliEnv(opts.env), maxBuffer: 256 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const made: string[] = [];
// Every temporary directory a test file made is removed when its process exits (pass or fail).
process.on("exit", () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
// A test run ended by a signal (Ctrl-C, a CI timeout) cleans up too: exiting runs the handler above.
for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(sig === "SIGINT" ? 130 : 143));

/** A fresh temporary directory, removed when the test process exits. */
export function tempDir(prefix = "vm-test-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/** Write a matrix module into `dir` and return its path; `body` is the object literal passed to defineMatrix. */
export function writeMatrix(dir: string, body: unknown): string {
  const file = join(dir, "matrix.ts");
  writeFileSync(
    file,
    `import { defineMatrix } from ${JSON.stringify(join(ROOT, "generator", "matrix", "schema.ts"))};\nexport default defineMatrix(${JSON.stringify(body, null, 2)});\n`,
  );
  return file;
}

/**
 * `text` with the checkout's path written ROOT and the temporary directory's TMP (the longer first: one may hold the
 * other), for a promise about output (a width, a wording) that must hold wherever the repository is cloned.
 */
export function placeless(text: string): string {
  const places = [[ROOT.replace(/\/$/, ""), "ROOT"], [tmpdir(), "TMP"]] as const;
  return [...places].sort((a, b) => b[0].length - a[0].length).reduce((t, [path, name]) => t.replaceAll(path, name), text);
}
