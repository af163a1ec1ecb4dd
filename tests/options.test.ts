// Every repeatable option takes one value per occurrence, so names written after it stay names.
// Each command's own yargs module parses the words (its handler replaced by one that records what it got), and
// `build --dry-run` runs for real with names after `--nix-option` and `--filter`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import yargs, { type CommandModule } from "yargs";
import { buildCommand } from "../generator/commands/build.ts";
import { ciCommand } from "../generator/commands/ci.ts";
import { evalCommand } from "../generator/commands/eval.ts";
import { fleetCommand } from "../generator/commands/fleet.ts";
import { listCommand } from "../generator/commands/list.ts";
import { makePinCommand } from "../generator/commands/pin.ts";
import { ROOT, runCli } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

/** Parse `args` with one command module whose handler only records its argv; a yargs failure is thrown. */
function parse(cmd: CommandModule<any, any>, args: string[]): Record<string, unknown> {
  let got: Record<string, unknown> | null = null;
  yargs(args)
    .command({ ...cmd, handler: (a: Record<string, unknown>) => void (got = a) } as CommandModule)
    .strict()
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseSync();
  if (!got) throw new Error(`${args.join(" ")}: the command did not run`);
  return got;
}

const A = "pytorch-python313-cpu-avx2";
const B = "torchaudio-python313-cpu-avx2";

test("build: names before, after and between repeatable options stay names", () => {
  for (const args of [
    ["build", "--nix-option", "substituters=file:///c", A, B],
    ["build", A, B, "--nix-option", "substituters=file:///c"],
    ["build", A, "--nix-option", "substituters=file:///c", B],
    ["build", "--filter", "isa=avx2", "--nix-option", "substituters=file:///c", A, B],
  ]) {
    const a = parse(buildCommand, args);
    assert.equal(a.names, [A, B], args.join(" "));
    assert.equal(a.nixOption, ["substituters=file:///c"], args.join(" "));
  }
  const f = parse(buildCommand, ["build", "--filter", "isa=avx2", "--filter", "cuda=none", A]);
  assert.equal(f.filter, ["isa=avx2", "cuda=none"]);
  assert.equal(f.names, [A]);
  // The wrong case fails: a bare repeatable option at the end is an error, not an empty list.
  assert.throws(() => parse(buildCommand, ["build", A, "--filter"]), /Not enough arguments following: filter/);
});

test("eval, fleet, ci and pin: a repeatable option before the positionals leaves them alone", () => {
  const e = parse(evalCommand, ["eval", "--filter", "sm=121", "--nix-option", "substituters=", A, B]);
  assert.equal([e.names, e.filter, e.nixOption], [[A, B], ["sm=121"], ["substituters="]]);
  const fl = parse(fleetCommand, ["fleet", "--cuda", "12.8", "--cuda", "12.9", "hosts/a", "hosts/b"]);
  assert.equal([fl.hosts, fl.cuda], [["hosts/a", "hosts/b"], ["12.8", "12.9"]]);
  const c = parse(ciCommand, ["ci", "--filter", "sm=121", "--runs-on", "x86_64-linux=self-hosted,x64", "github"]);
  assert.equal([c.engine, c.filter, c.runsOn], ["github", ["sm=121"], ["x86_64-linux=self-hosted,x64"]]);
  // pin's actions are subcommands (each with its own help): the recorder stands in for their shared runner.
  let pinGot: Record<string, unknown> | null = null;
  yargs(["pin", "--nixpkgs", "abc=/src/nixpkgs", "check"])
    .command(makePinCommand((a) => void (pinGot = a as unknown as Record<string, unknown>)) as CommandModule)
    .strict()
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseSync();
  const p = pinGot as unknown as Record<string, unknown>;
  assert.equal([p.action, p.nixpkgs], ["check", ["abc=/src/nixpkgs"]]);
  const l = parse(listCommand, ["list", "--filter", "isa=armv9", "--json"]);
  assert.equal([l.filter, l.json], [["isa=armv9"], true]);
  // A word after a one-value option is not an option value: list takes no names, so strict parsing refuses it.
  assert.throws(() => parse(listCommand, ["list", "--filter", "isa=armv9", A]), /Unknown argument/);
});

test("the real CLI: build --dry-run with names after --nix-option and after --filter plans exactly those names", async () => {
  for (const args of [
    ["build", "--dry-run", "--json", "--nix-option", "substituters=file:///c", A, B],
    ["build", "--dry-run", "--json", A, B, "--nix-option", "substituters=file:///c"],
    ["build", "--dry-run", "--json", "--filter", "isa=avx2", A, B],
  ]) {
    const r = await runMain(args);
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    const plan = JSON.parse(r.stdout) as { order?: string[]; nodes?: { name: string }[] } & Record<string, unknown>;
    const text = JSON.stringify(plan);
    assert.ok(text.includes(A) && text.includes(B), `${args.join(" ")} plans both names`);
    assert.not.ok(text.includes("torchvision-python313-cpu-avx2"), "and nothing it was not asked for");
  }
});

test("every array option of generator/commands/ is REPEATABLE (one value per occurrence)", () => {
  const dir = join(ROOT, "generator/commands");
  for (const f of readdirSync(dir)) {
    const text = readFileSync(join(dir, f), "utf8");
    for (const line of text.split("\n"))
      if (/array:\s*true/.test(line)) assert.match(line, /\.positional\(/, `${f}: an array option that is not REPEATABLE: ${line.trim()}`);
  }
  assert.match(readFileSync(join(ROOT, "generator/matrix/filters.ts"), "utf8"), /\.\.\.REPEATABLE/, "--filter is REPEATABLE");
});

test.run();
