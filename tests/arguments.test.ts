// One argument configuration for every command (generator/commands/arguments.ts, wrapped around each module by
// cli.ts): names after `--` are names or refused, an option that takes a value needs one, numbers are checked, and a
// parse error is one `variant-matrix: error:` line with exit 2, never a yargs stack trace. Each case runs the real CLI
// (main, in-process: tests/helpers/main.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import yargs, { type Argv, type CommandModule } from "yargs";
import { ROOT, tempDir, type CliRun } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import {
  checkNumbers, lastValueWins, NUMBER_RULES, positionalsOf, singleValuedOptions, takeWordsAfterDashDash, withArgumentRules,
} from "../generator/commands/arguments.ts";
import { pinActions } from "../generator/commands/pin.ts";

const A = "pytorch-python313-cpu-avx2";
const HOST = join(ROOT, "tests/fixtures/hosts/dgx-spark");

/** The run failed as bad input: exit 2, exactly one line on stderr, the common prefix, no stack trace. */
function usageFailure(r: CliRun, what: string, message: RegExp): void {
  assert.is(r.status, 2, `${what}: ${r.stdout}${r.stderr}`);
  const lines = r.stderr.trimEnd().split("\n");
  assert.is(lines.length, 1, `${what}: one line, got ${r.stderr}`);
  assert.match(lines[0]!, /^variant-matrix: error: \S/, what);
  assert.match(lines[0]!, message, what);
  assert.not.match(r.stderr, /YError|\n\s+at /, `${what}: no stack trace`);
}

test("build -- NAME selects that one variant; build --dry-run -- nosuchname is an unknown name", async () => {
  const one = await runMain(["build", "--dry-run", "--json", "--backend", "nix", "--", A]);
  assert.is(one.status, 0, one.stderr);
  const plan = JSON.parse(one.stdout) as { toBuild: number; variants: { name: string }[] };
  // The variant, and its static check after it (built by default).
  assert.equal(plan.variants.map((v) => v.name), [A, `check-static-${A}`]);
  assert.is(plan.toBuild, 2);
  usageFailure(await runMain(["build", "--dry-run", "--backend", "nix", "--", "nosuchname"]), "build -- nosuchname", /unknown variant "nosuchname"/);
  // Names before and after `--` are one list.
  const two = await runMain(["build", "--dry-run", "--json", "--backend", "nix", A, "--", "torchaudio-python313-cpu-avx2"]);
  assert.is(two.status, 0, two.stderr);
  const variants = (JSON.parse(two.stdout) as { variants: { name: string; check: unknown }[] }).variants.filter((v) => v.check === null);
  assert.equal(variants.map((v) => v.name).sort(), [A, "torchaudio-python313-cpu-avx2"]);
});

test("words after -- that a command cannot take are refused, naming them", async () => {
  usageFailure(await runMain(["list", "--", "foo"]), "list -- foo", /unexpected argument after `--`: "foo" \(list takes no names\)/);
  usageFailure(await runMain(["pin", "check", "--", "x", "y"]), "pin check -- x y", /unexpected arguments after `--`: "x", "y" \(pin check takes no names\)/);
  // A required positional is read before `--` only: the message says so.
  usageFailure(await runMain(["explain", "--", A]), "explain -- NAME", /write them before it/);
  // doctor's optional NAME after `--` is its NAME (an unknown one here), with the common prefix.
  usageFailure(await runMain(["doctor", "--", "nosuch"]), "doctor -- nosuch", /^variant-matrix: error: doctor: unknown variant "nosuch"/);
});

test("an option that takes a value needs one: bare, at the end or before another option, exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["list", "--json", "--filter"], "--filter"],
    [["build", "--dry-run", "--filter"], "--filter"],
    [["eval", "--filter"], "--filter"],
    [["build", "--dry-run", "--logs-dir"], "--logs-dir"],
    [["build", "--dry-run", "--report"], "--report"],
    [["build", "--dry-run", "--jobs"], "--jobs"],
    [["build", "--dry-run", "-j"], "-j"],
    [["build", "--dry-run", "--out-dir"], "--out-dir"],
    [["build", "--report", "--dry-run"], "--report"],
    [["build", "--dry-run", "--report="], "--report"],
    [["build", "--dry-run", "--kill-grace="], "--kill-grace"],
    [["build", "--dry-run", "--report", ""], "--report"],
    [["detect", "--cpuinfo"], "--cpuinfo"],
    [["pin", "add", "/x", "--rev"], "--rev"],
  ];
  for (const [args, opt] of cases)
    usageFailure(await runMain(args), args.join(" "), new RegExp(`error: ${opt.replace(/-/g, "\\-")} needs a value`));
});

test("numbers are checked: --kill-grace -5, --jobs 0 / 1.5 / abc, --retries -1 are refused", async () => {
  usageFailure(await runMain(["build", "--dry-run", "--kill-grace", "-5"]), "--kill-grace -5", /--kill-grace must be a number ≥ 0, got -5/);
  usageFailure(await runMain(["build", "--dry-run", "--jobs", "0"]), "--jobs 0", /--jobs must be an integer ≥ 1, got 0/);
  usageFailure(await runMain(["build", "--dry-run", "--jobs", "1.5"]), "--jobs 1.5", /--jobs must be an integer ≥ 1, got 1\.5/);
  usageFailure(await runMain(["eval", "--jobs", "abc"]), "eval --jobs abc", /--jobs must be an integer ≥ 1, got not a number/);
  usageFailure(await runMain(["build", "--dry-run", "--retries", "-1"]), "--retries -1", /--retries must be an integer ≥ 0/);
  // The same rules accept what is in range (a fraction of a second is a grace period; 0 retries is the default).
  checkNumbers({ "kill-grace": 2.5, jobs: 3, retries: 0, "max-jobs": 0 }, ["kill-grace", "jobs", "retries", "max-jobs"]);
  assert.throws(() => checkNumbers({ builders: 0 }, ["builders"]), /--builders must be an integer ≥ 1/);
});

test("a value outside an option's choices and an unknown option are one line each", async () => {
  usageFailure(await runMain(["build", "--backend", "x", "--package", "y"]), "--backend x", /--backend: "x" is not one of "auto", "flox", "nix"; --package: "y" is not one of "pytorch"/);
  usageFailure(await runMain(["list", "--bogus"]), "list --bogus", /Unknown argument: bogus/);
});

test("fleet --write-matrix stays usable bare (it prints the matrix); publish --org with --to says they exclude each other", async () => {
  const bare = await runMain(["fleet", HOST, "--write-matrix"]);
  assert.is(bare.status, 0, bare.stderr);
  assert.match(bare.stdout, /defineMatrix\(/);
  usageFailure(await runMain(["publish", "--org", "a", "--to", "b"]), "publish --org a --to b", /--org and --to exclude each other/);
  usageFailure(await runMain(["publish"]), "publish", /needs one of --org/);
});

test("positionalsOf and takeWordsAfterDashDash: variadic takes all, optional ones one each, the rest is refused", () => {
  assert.equal(positionalsOf("build [names..]"), [{ name: "names", variadic: true, required: false }]);
  assert.equal(positionalsOf("ci <engine>"), [{ name: "engine", variadic: false, required: true }]);
  const b = { _: ["build", "x", "y"], names: ["a"] };
  takeWordsAfterDashDash(b, "build [names..]", 1);
  assert.equal([b._, b.names], [["build"], ["a", "x", "y"]]);
  const d: { _: string[]; name?: string } = { _: ["doctor", "n"] };
  takeWordsAfterDashDash(d, "doctor [name]", 1);
  assert.is(d.name, "n");
  assert.throws(() => takeWordsAfterDashDash({ _: ["doctor", "n", "m"] }, "doctor [name]", 1), /unexpected argument after `--`: "m" \(doctor takes NAME once\)/);
});

/** Every command module generator/commands/ exports (found by shape, not listed here), pin's actions each on its own. */
async function everyCommand(): Promise<{ words: string[]; module: CommandModule }[]> {
  const found: { words: string[]; module: CommandModule }[] = [];
  for (const f of readdirSync(join(ROOT, "generator/commands")).filter((x) => x.endsWith(".ts")).sort()) {
    const mod = (await import(join(ROOT, "generator/commands", f))) as Record<string, unknown>;
    for (const v of Object.values(mod)) {
      const m = v as CommandModule;
      if (!m || typeof m !== "object" || typeof m.command !== "string" || typeof m.handler !== "function") continue;
      if (m.command.startsWith("pin ")) continue;
      found.push({ words: [m.command.split(" ")[0]!], module: m });
    }
  }
  for (const a of pinActions(() => {})) found.push({ words: ["pin", (a.command as string).split(" ")[0]!], module: a as unknown as CommandModule });
  return found;
}

interface OptionsView {
  string: string[];
  number: string[];
  boolean: string[];
  choices: Record<string, (string | number)[]>;
  alias: Record<string, string[]>;
}

/** Two values of option `k` as words: the first and the last given (distinct, each valid on its own). */
function twoValues(o: OptionsView, k: string): [string[], string[], unknown] {
  const flag = `--${k}`;
  const choices = o.choices[k];
  if (choices && choices.length > 1) return [[flag, String(choices[0])], [flag, String(choices.at(-1))], choices.at(-1)];
  if (o.boolean.includes(k)) return [[flag], [`--no-${k}`], false];
  if (o.number.includes(k)) {
    const min = (NUMBER_RULES[k] ?? { min: 0 }).min;
    return [[flag, String(min + 1)], [flag, String(min + 2)], min + 2];
  }
  return [[flag, "first-value"], [flag, "last-value"], "last-value"];
}

test("every single-valued option of every command, given twice, reaches the handler as its last value (not an array)", async () => {
  const commands = await everyCommand();
  assert.ok(commands.length >= 16, `commands found: ${commands.map((c) => c.words.join(" ")).join(", ")}`);
  let checked = 0;
  for (const { words, module } of commands) {
    const built = (typeof module.builder === "function" ? module.builder(yargs([]) as Argv) : yargs([])) as Argv;
    const o = (built as Argv & { getOptions(): OptionsView }).getOptions();
    const positionals = positionalsOf(module.command as string);
    const required = positionals.filter((p) => p.required).map((p) => String(o.choices[p.name]?.[0] ?? "x"));
    for (const k of singleValuedOptions(built).filter((x) => !positionals.some((p) => p.name === x))) {
      const [first, last, want] = twoValues(o, k);
      let got: Record<string, unknown> | undefined;
      const wrapped = withArgumentRules({ ...module, handler: (a: Record<string, unknown>) => void (got = a) } as CommandModule, { depth: words.length });
      const parent = words.length === 1 ? wrapped : { command: `${words[0]} <action>`, describe: "", builder: (y: Argv) => y.command(wrapped), handler: () => {} };
      const args = [...words, ...required, ...first, ...last];
      yargs(args).command(parent as CommandModule).strict().fail((msg, err) => { throw err ?? new Error(msg); }).parseSync();
      const what = args.join(" ");
      assert.ok(got, `${what}: the handler ran`);
      assert.equal(got![k], want, `${what}: --${k} is its last value`);
      const camel = k.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      assert.equal(got![camel], want, `${what}: ${camel} too`);
      for (const alias of o.alias[k] ?? []) assert.equal(got![alias], want, `${what}: alias -${alias} too`);
      checked++;
    }
  }
  // Every command's options were tried (a sanity bound, not a count to keep in step: there are about 90).
  assert.ok(checked > 50, `options checked: ${checked}`);
});

test("lastValueWins keeps repeatable options whole and takes the last of a single-valued one, its aliases and camelCase", () => {
  const a: Record<string, unknown> = { out: ["a", "b"], o: ["a", "b"], "logs-dir": ["x", "y"], logsDir: ["x", "y"], filter: ["p", "q"] };
  lastValueWins(a, ["out", "logs-dir"], { out: ["o"] });
  assert.equal(a, { out: "b", o: "b", "logs-dir": "y", logsDir: "y", filter: ["p", "q"] });
});

test("the real CLI: --backend nix --backend flox plans with flox; --logs-dir and --matrix twice take the last; -o twice too", async () => {
  const dir = tempDir("vm-twice-");
  const r = await runMain(["build", "--dry-run", "--json", "--backend", "nix", "--backend", "flox", "--logs-dir", join(dir, "a"), "--logs-dir", join(dir, "b"), A]);
  assert.is(r.status, 0, r.stderr);
  assert.is((JSON.parse(r.stdout) as { backend: unknown }).backend, "flox");
  // A value outside the choices counts only when it is the last one given.
  const bogusFirst = await runMain(["build", "--dry-run", "--json", "--backend", "bogus", "--backend", "nix", A]);
  assert.is(bogusFirst.status, 0, bogusFirst.stderr);
  usageFailure(await runMain(["build", "--dry-run", "--backend", "nix", "--backend", "bogus", A]), "--backend bogus last", /--backend: "bogus" is not one of/);
  const list = await runMain(["list", "--json", "--matrix", join(dir, "nonexistent.ts"), "--matrix", join(ROOT, "matrix.ts")]);
  assert.is(list.status, 0, list.stderr);
  const out = join(dir, "wf.yml");
  const ci = await runMain(["ci", "github", "-o", join(dir, "first.yml"), "-o", out]);
  assert.is(ci.status, 0, ci.stderr);
  assert.match(readFileSync(out, "utf8"), /jobs:/);
  assert.not.match(ci.stderr, /TypeError/);
});

test("messages of number options: --kill-grace 1e400 is too large (not null), --jobs \"\" and -j \"\" need a value (not 0)", async () => {
  usageFailure(await runMain(["build", "--dry-run", "--kill-grace", "1e400"]), "--kill-grace 1e400", /--kill-grace must be a number ≥ 0, got a number too large to hold/);
  usageFailure(await runMain(["build", "--dry-run", "--jobs", ""]), "--jobs \"\"", /error: --jobs needs a value/);
  usageFailure(await runMain(["build", "--dry-run", "-j", ""]), "-j \"\"", /error: --jobs needs a value/);
  usageFailure(await runMain(["eval", "--jobs", ""]), "eval --jobs \"\"", /error: --jobs needs a value/);
});

test.run();
