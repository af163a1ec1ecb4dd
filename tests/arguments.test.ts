// One argument configuration for every command (generator/commands/arguments.ts, wrapped around each module by
// cli.ts): names after `--` are names or refused, an option that takes a value needs one, numbers are checked, and a
// parse error is one `variant-matrix: error:` line with exit 2, never a yargs stack trace. Each case runs the real CLI
// (main, in-process: tests/helpers/main.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { ROOT, type CliRun } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { checkNumbers, positionalsOf, takeWordsAfterDashDash } from "../generator/commands/arguments.ts";

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
  assert.equal(plan.variants.map((v) => v.name), [A]);
  assert.is(plan.toBuild, 1);
  usageFailure(await runMain(["build", "--dry-run", "--backend", "nix", "--", "nosuchname"]), "build -- nosuchname", /unknown variant "nosuchname"/);
  // Names before and after `--` are one list.
  const two = await runMain(["build", "--dry-run", "--json", "--backend", "nix", A, "--", "torchaudio-python313-cpu-avx2"]);
  assert.is(two.status, 0, two.stderr);
  assert.equal((JSON.parse(two.stdout) as { variants: { name: string }[] }).variants.map((v) => v.name).sort(), [A, "torchaudio-python313-cpu-avx2"]);
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

test.run();
