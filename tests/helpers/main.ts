/**
 * Run the CLI in this test process: `main(argv, io)` of generator/cli.ts with an Io that records what it writes, the
 * same answer as tests/helpers/cli.ts runCli (exit status, stdout, stderr) without starting Node and tsx (about 2 s a
 * call). In-process runs share this process's module state, working directory (the repository root, as runCli's
 * default) and environment: use runMain only where a test would pass runCli no `cwd` and no environment beyond
 * COLUMNS and NO_COLOR, and runCli where a process matters (signals, the launcher, an environment of its own).
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
  /** The width human output wraps to (the Io's columns); default 400, as runCli's COLUMNS. */
  columns?: number;
  /**
   * runCli's `env`, as far as an in-process run can honour it: COLUMNS (the width, as `columns`) and NO_COLOR
   * (a recording Io is no terminal, so there is no colour to turn off). Any other variable throws: that test needs runCli.
   */
  env?: Record<string, string | undefined>;
}

/**
 * Run `variant-matrix ARGS...` in-process from the repository root and capture what it writes. A command that throws
 * past main (a bug: no exit status of errors.ts) is status 1 with the error's stack on stderr, as Node ends a process.
 * @throws Error for an `env` variable other than COLUMNS and NO_COLOR
 */
export async function runMain(args: string[], opts: MainOptions = {}): Promise<CliRun> {
  const other = Object.keys(opts.env ?? {}).filter((k) => k !== "COLUMNS" && k !== "NO_COLOR");
  if (other.length) throw new Error(`runMain: ${other.join(", ")} would have to change this process's environment; use runCli`);
  // As processIo reads $COLUMNS: a whole number > 0, else (stdout no terminal) 80.
  const fromEnv = opts.env?.COLUMNS === undefined ? 400 : Number(opts.env.COLUMNS);
  const columns = opts.columns ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80);
  let stdout = "";
  let stderr = "";
  const io = { out: (s: string) => void (stdout += s), err: (s: string) => void (stderr += s), columns, isTTY: false };
  try {
    const status = await (await loadMain())(args, io);
    return { status, stdout, stderr };
  } catch (e) {
    return { status: 1, stdout, stderr: stderr + String((e as Error)?.stack ?? e) + "\n" };
  }
}
