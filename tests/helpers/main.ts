/**
 * Run the CLI in this test process: `main(argv, io)` of generator/cli.ts with an Io that records what it writes, the
 * same answer as tests/helpers/cli.ts runCli (exit status, stdout, stderr) without starting a process (the compiled
 * launcher takes 0.3–1 s a start). In-process runs share this process's module state; use runCli where a process
 * matters: signals, an exit by kill, the launcher itself, an environment variable the product reads once when a
 * module loads.
 *
 * `cwd` and `env` are honoured for the one call: runMain changes this process's working directory and the variables
 * named, awaits main, and puts both back (also when main throws). uvu runs a file's tests one after another, so no
 * other test sees them; two runMain calls with a `cwd` or an `env` in flight at once are refused (they would see each
 * other's), and a child process the command started sees them as a runCli child would.
 */
import type { CliRun } from "./cli.ts";

/**
 * main, imported as an ES module (uvu loads test files as CommonJS through tsx, while main's commands import their
 * modules with `import()`: a static import here would load errors.ts twice, and an InputError of one copy would not be
 * an instance of the other's, so its exit status would be lost).
 */
const loadMain = () => import("../../generator/cli.ts").then((m) => m.main);

/** What runMain takes besides the arguments. */
export interface MainOptions {
  /** The width human output wraps to (the Io's columns); default: $COLUMNS of `env`, else 400, as runCli's COLUMNS. */
  columns?: number;
  /** The working directory for this call (relative paths the command reads resolve from it), as runCli's `cwd`. */
  cwd?: string;
  /**
   * runCli's `env`: variables set (undefined: unset) on top of this process's environment for this call. COLUMNS is
   * the Io's width; NO_COLOR needs nothing (a recording Io is no terminal, so there is no colour to turn off).
   */
  env?: Record<string, string | undefined>;
}

/** True while a runMain call with a `cwd` or an `env` of its own is in flight. */
let scoped = false;

/**
 * Set `env`'s variables and chdir to `cwd`; returns what puts both back.
 * @throws Error when another call's scope is still in flight
 */
function enterScope(cwd: string | undefined, env: Record<string, string | undefined>): () => void {
  if (scoped) throw new Error("runMain: another call with a cwd or an env is still running; await it first");
  scoped = true;
  const before = new Map(Object.keys(env).map((k) => [k, process.env[k]] as const));
  const set = (k: string, v: string | undefined) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
  for (const [k, v] of Object.entries(env)) set(k, v);
  const dir = process.cwd();
  if (cwd !== undefined) process.chdir(cwd);
  return () => {
    process.chdir(dir);
    for (const [k, v] of before) set(k, v);
    scoped = false;
  };
}

/**
 * Run `variant-matrix ARGS...` in-process (from the repository root unless `cwd`) and capture what it writes. A
 * command that throws past main (a bug: no exit status of errors.ts) is status 1 with the error's stack on stderr, as
 * Node ends a process.
 * @throws Error when another runMain with a `cwd` or an `env` is still in flight
 */
export async function runMain(args: string[], opts: MainOptions = {}): Promise<CliRun> {
  // As runCli's child and processIo: $COLUMNS when a whole number > 0, else (stdout no terminal) 80.
  const fromEnv = opts.env?.COLUMNS === undefined ? 400 : Number(opts.env.COLUMNS);
  const columns = opts.columns ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80);
  const env = Object.fromEntries(Object.entries(opts.env ?? {}).filter(([k]) => k !== "COLUMNS" && k !== "NO_COLOR"));
  const leave = opts.cwd !== undefined || Object.keys(env).length ? enterScope(opts.cwd, env) : () => {};
  let stdout = "";
  let stderr = "";
  const io = { out: (s: string) => void (stdout += s), err: (s: string) => void (stderr += s), columns, isTTY: false };
  try {
    const status = await (await loadMain())(args, io);
    return { status, stdout, stderr };
  } catch (e) {
    return { status: 1, stdout, stderr: stderr + String((e as Error)?.stack ?? e) + "\n" };
  } finally {
    leave();
  }
}
