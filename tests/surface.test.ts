// One surface. Every command's help (and each pin action's) describes every option with one name per
// concept; every error carries the one prefix on stderr with the documented exit code; --version is package.json's;
// and with COLUMNS=80 the human output of detect, explain, build --dry-run, list --excluded and fleet on the recorded
// hosts (tests/fixtures/hosts) fits 80 columns, except a line holding a single unbreakable token. No output depends on
// this machine's CPU: build reads a recorded cpuinfo under --host-root.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { capacityOf } from "../generator/model/concurrency.ts";
import { runMain } from "./helpers/main.ts";
import { wrap, wrapCommand, wrapLines } from "../generator/text.ts";
import { formatChecks } from "../generator/preflight/checks.ts";
import { systemFeaturesLine } from "../generator/system-features.ts";
import { parseCpuinfo } from "../generator/host/read-host.ts";
import { isaFit } from "../generator/matrix/compat.ts";
import { gccarchFeature } from "../generator/catalog/lib/machines.ts";
import { isas } from "../generator/catalog/cpu-isas.ts";
import { dryRunText } from "../generator/driver/dry-run-text.ts";
import { described, entries } from "./helpers/help.ts";

const HOSTS = join(ROOT, "tests/fixtures/hosts");
const RECORDED = readdirSync(HOSTS).filter((h) => h !== "bad" && statSync(join(HOSTS, h)).isDirectory());
/** Every command the root help lists (a command added later is walked too). */
let COMMANDS: string[] = [];
test.before(async () => {
  COMMANDS = [...(await runMain(["--help"])).stdout.matchAll(/^ {2}variant-matrix ([a-z-]+)/gm)].map((m) => m[1]!);
});
const PIN_ACTIONS = ["inspect", "check", "add", "cache"];

test("every command's help and each pin action's help describe every option and positional; names are consistent", async () => {
  const names = new Map<string, string[]>();
  for (const c of ["generate", "list", "explain", "build", "detect", "eval", "ci", "fleet", "verify", "pin", "publish"])
    assert.ok(COMMANDS.includes(c), `the root help lists ${c}`);
  const helps: [string, string][] = [["(root)", (await runMain(["--help"])).stdout]];
  for (const c of COMMANDS) helps.push([c, (await runMain([c, "--help"])).stdout]);
  for (const a of PIN_ACTIONS) helps.push([`pin ${a}`, (await runMain(["pin", a, "--help"])).stdout]);
  for (const [cmd, help] of helps) {
    assert.ok(help.length > 0, `${cmd} --help prints help`);
    // No variant name split across lines (yargs breaks a word wider than its column).
    for (const tok of help.match(/[a-z0-9]+-python\S*/g) ?? [])
      assert.match(tok.replace(/[),.]+$/, ""), /-python\d+-(?:cuda\d+_\d+-sm\d+|cpu)-[a-z0-9_]+$/, `${cmd}: a whole variant name`);
    for (const m of help.matchAll(/(\S*)ython\d+-/g)) assert.match(m[1]!, /[a-z]-p$/, `${cmd}: a name split across lines at "${m[0]}"`);
    const es = entries(help);
    assert.ok(es.length >= 2, `${cmd}: found its options (${es.length})`);
    for (const e of es) {
      assert.ok(described(e.text), `${cmd}: ${e.name} has no description: "${e.text.trim()}"`);
      if (e.name.startsWith("--")) names.set(e.name, [...(names.get(e.name) ?? []), cmd]);
    }
  }
  const all = [...names.keys()];
  // Two concepts, not one: generate --check compares the generated files; ci github --checks writes the nightly
  // workflow of pin check and eval.
  const distinct = new Set(["--check"]);
  for (const n of all) {
    assert.match(n, /^--[a-z0-9]+(-[a-z0-9]+)*$/, `${n} is kebab-case`);
    // One name per concept: no option shown both as NAME and NAMEs (the old spelling stays as a hidden alias).
    if (!distinct.has(n)) assert.not.ok(all.includes(`${n}s`), `${n} and ${n}s both shown (${names.get(n)} / ${names.get(`${n}s`)})`);
  }
  assert.ok(names.get("--substituter")?.includes("build"), "build takes --substituter");
  // The wrong case fails: a help with an undescribed option is caught by the same reading.
  assert.not.ok(entries("Options:\n      --json  [boolean] [default: false]\n").every((e) => described(e.text)));
  // Each pin action has its own help: add takes --sha256, inspect does not.
  const pinHelp = Object.fromEntries(helps.filter(([c]) => c.startsWith("pin ")));
  assert.match(pinHelp["pin add"]!, /--sha256/);
  assert.not.match(pinHelp["pin inspect"]!, /--sha256/);
  // The old spelling still works (hidden): --substituters reaches the build as before.
  const old = await runMain(["build", "--dry-run", "--backend", "nix", "--substituters", "file:///nowhere", "--json", "pytorch-python313-cpu-avx2"]);
  assert.is(old.status, 0, old.stderr);
});

test("--version prints package.json's version; errors of every command carry one prefix on stderr with exit 2", async () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const v = await runMain(["--version"]);
  assert.is(v.status, 0);
  assert.is(v.stdout.trim(), pkg.version);
  const cases: string[][] = [
    ["explain", "hello"],
    ["build", "hello"],
    ["build", "--dry-run", "--filter", "sm=121", "--filter", "isa=avx2"],
    ["detect", "--cpuinfo", join(HOSTS, "bad")],
    ["detect", "--package", "nope"],
    ["verify", "--probe", join(HOSTS, "nope.json")],
    ["list", "--filter", "sm=95"],
    ["fleet", join(HOSTS, "nope")],
    ["pin", "add", "/nonexistent"],
    ["ci", "hydra"],
    ["eval", "hello"],
    ["publish", "--org", "acme", "hello"],
    ["nonsense"],
  ];
  const runs = new Map<string, Awaited<ReturnType<typeof runMain>>>();
  for (const args of cases) {
    const r = await runMain(args);
    runs.set(args.join(" "), r);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /^variant-matrix: error: \S/, `${args.join(" ")}: ${r.stderr}`);
    assert.not.match(r.stderr, /\n\s+at /, `${args.join(" ")}: no stack trace`);
  }
  // A selection that matches nothing builds nothing and names the selection.
  const none = runs.get("build --dry-run --filter sm=121 --filter isa=avx2")!;
  assert.match(none.stderr, /no variant matches.*sm=121.*isa=avx2/s);
  // detect --cpuinfo DIR reads the directory as fleet does (not EISDIR), and recommends torch-env by default.
  const dir = await runMain(["detect", "--cpuinfo", join(HOSTS, "dgx-spark"), "--machine", "aarch64"]);
  assert.is(dir.status, 0, dir.stderr);
  assert.match(dir.stdout, /Recommended torch-env for GPU 0 \(NVIDIA GB10, sm121\): torch-env-python313-cuda13_0-sm121-armv9/);
});

/** Lines over `max` columns that are more than one unbreakable token (with its indent, a list mark, a trailing " \"). */
function overflow(text: string, max = 80): string[] {
  return text
    .split("\n")
    .filter((l) => [...l].length > max)
    .filter((l) => {
      const core = l.trim().replace(/^(?:[-✓✗–!→] |\$ |\[\d+\] |\d+\. )/u, "").replace(/ \\$/, "");
      return /\s/.test(core);
    });
}

test("COLUMNS=80: detect, explain, build --dry-run, list --excluded and fleet on the recorded hosts fit 80 columns", async () => {
  const env = { COLUMNS: "80" };
  const outputs: [string, string][] = [];
  for (const h of RECORDED) {
    const r = await runMain(["detect", "--cpuinfo", join(HOSTS, h)], { env });
    assert.ok(r.status === 0 || r.status === 1, `${h}: ${r.stderr}`);
    outputs.push([`detect ${h}`, r.stdout + r.stderr]);
  }
  for (const n of ["torchaudio-python313-cuda12_8-sm121-armv9", "torch-env-python313-cuda13_0-sm110-armv9", "pytorch-python313-cpu-avx512bf16"]) {
    const r = await runMain(["explain", n], { env });
    assert.is(r.status, 0, r.stderr);
    outputs.push([`explain ${n}`, r.stdout]);
  }
  for (const n of ["torchvision-python313-cuda12_8-sm110-avx512bf16", "pytorch-python313-cuda12_8-sm95-avx2", "hello"])
    outputs.push([`explain ${n}`, (await runMain(["explain", n], { env })).stderr]);
  // build reads this machine's files (its preflight, the nix.conf line of what its CPU runs) under --host-root: a
  // root holding the recorded spr-h100's cpuinfo (AVX-512 BF16, the widest line), not this machine's CPU.
  const root = tempDir("vm-surface-root-");
  mkdirSync(join(root, "proc"));
  copyFileSync(join(HOSTS, "spr-h100/cpuinfo"), join(root, "proc/cpuinfo"));
  const dry = await runMain(["build", "--dry-run", "--backend", "nix", "--host-root", root, "--filter", "sm=121", "--filter", "sm=90", "--filter", "cuda=12.8"], { env });
  assert.is(dry.status, 0, dry.stderr);
  outputs.push(["build --dry-run", dry.stdout]);
  // The recorded CPU's features reach the copyable nix.conf lines, whole, split over several extra- lines (--verbose
  // prints them whatever this machine's nix.conf declares: no builder here takes the aarch64-linux variants).
  const verbose = await runMain(["build", "--dry-run", "--verbose", "--backend", "nix", "--host-root", root, "--filter", "sm=121", "--filter", "sm=90", "--filter", "cuda=12.8"], { env });
  assert.is(verbose.status, 0, verbose.stderr);
  outputs.push(["build --dry-run --verbose", verbose.stdout]);
  const extra = verbose.stdout.split("\n").filter((l) => /^\s*extra-system-features = /.test(l)).flatMap((l) => l.replace(/^\s*extra-system-features = /, "").split(" "));
  assert.ok(extra.includes("gccarch-cooperlake") && extra.includes("gccarch-cascadelake"), verbose.stdout);
  const list = await runMain(["list"], { env });
  // (Node's own warning when npm sets FORCE_COLOR beside NO_COLOR is not ours.)
  outputs.push(["list", list.stdout + list.stderr.replace(/^\(node:\d+\) Warning: .*\n?/gm, "")]);
  assert.match(list.stdout, /^pytorch-python313-cuda12_8-sm103-avx2 +x86_64-linux +10\.0 \*$/m, "binary-compatible rows marked");
  const ex = await runMain(["list", "--excluded"], { env });
  assert.is(ex.status, 0, ex.stderr);
  outputs.push(["list --excluded", ex.stdout]);
  const fleet = await runMain(["fleet", ...RECORDED.map((h) => join(HOSTS, h))], { env });
  outputs.push(["fleet", fleet.stdout]);
  outputs.push(["fleet --verbose", (await runMain(["fleet", ...RECORDED.map((h) => join(HOSTS, h)), "--verbose"], { env })).stdout]);
  for (const [what, text] of outputs) {
    assert.ok(text.trim().length > 0, `${what} printed something`);
    assert.equal(overflow(text), [], `${what}: lines over 80 columns`);
    // No output names a folder outside the repository.
    assert.not.match(text, /\.\.\/shared|shared\/(seeds|facts)/, `${what} names ../shared`);
  }
  // The wrong case fails: the same outputs on a 400-column terminal have lines the check catches.
  assert.ok(overflow((await runMain(["list", "--excluded", "--verbose"])).stdout).length > 0);
  // list --excluded gives each reason once.
  const reasons = ex.stdout.split("\n").filter((l) => /^ {2}\[\d+\] (?!\(as above\))/.test(l)).map((l) => l.replace(/^ {2}\[\d+\] /, ""));
  assert.equal(reasons.length, new Set(reasons).size);
  // fleet's extra builds are told apart; its model sources are in --verbose only.
  const builds = fleet.stdout.split("\n").filter((l) => /^ {2}builds /.test(l));
  assert.equal(builds.length, new Set(builds).size, builds.join("\n"));
  assert.not.match(fleet.stdout, /Build times vary/);
});

test("COLUMNS=80 on an AVX-512 BF16 host (recorded spr-h100): the nix.conf system-features line splits into whole extra- lines", () => {
  // What build's preflight and its dry run print for the machine they run on, fed the recorded host instead of this
  // machine's /proc/cpuinfo: the test holds on every CPU.
  const cpu = parseCpuinfo(readFileSync(join(HOSTS, "spr-h100/cpuinfo"), "utf8"));
  const features = isaFit({ system: "x86_64-linux", cpu }, { isas }).runnable.map(gccarchFeature);
  assert.ok(features.includes("gccarch-cooperlake"), features.join(" "));
  const setting = systemFeaturesLine(features);
  assert.ok(setting.length > 80, `the setting itself is wider than 80 columns (${setting.length}), so the case is real`);
  const check = formatChecks(
    [{ id: "system-features", title: "system features", blocking: true, status: "fail", detail: "d", fix: "f", conf: { file: "/etc/nix/nix.conf", lines: [setting] } }],
    80,
  );
  const dry = dryRunText({
    d: { rows: [], cached: 0, toBuild: 0, estimatedMakespanS: 0, wait: { seconds: 0, parts: [], offCacheS: 0, offCache: [], unknown: [] }, cudaClosures: { shared: [], own: [] } } as never,
    backend: "nix", rule: { jobs: 1, explanation: "x" }, coresPerBuild: null, capped: new Map(), fromHistory: false, askedStore: false, preflight: "",
    capacity: capacityOf({ cpus: 2, memBytes: null }),
    needs: { groups: [{ system: "x86_64-linux", features: ["gccarch-cooperlake"], variants: ["v"], takenBy: [] }], local: [], localBuilds: true, hostLine: setting },
  });
  for (const [what, text] of [["preflight", check], ["build --dry-run", wrapLines(dry, 80)]] as const) {
    assert.equal(overflow(text), [], `${what}: lines over 80 columns`);
    // Pasted, the extra- lines add up to the whole setting: every feature once, none cut.
    const lines = text.split("\n").filter((l) => /^\s*extra-system-features = /.test(l));
    assert.ok(lines.length >= 2, `${what}: split into several lines:\n${text}`);
    assert.equal(lines.flatMap((l) => l.replace(/^\s*extra-system-features = /, "").split(" ")), features, what);
  }
  // The wrong case fails: the setting as one line is caught by the same reading.
  assert.ok(overflow(`    ${setting}`).length > 0);
});

test("text.ts: wrap never breaks a word; wrapCommand breaks a command only at spaces with shell continuations", () => {
  const long = "x".repeat(90);
  assert.is(wrap(`a ${long} b`, 80), `a\n${long}\nb`);
  const cmd = `nix-env -if .flox/pkgs/${"n".repeat(60)}.nix --option extra-substituters https://cache.example.org`;
  const w = wrapCommand(cmd, 80, "  $ ");
  assert.ok(w.split("\n").every((l) => [...l].length <= 80 || !/\s/.test(l.trim().replace(/ \\$/, ""))), w);
  assert.is(w.replace(/ \\\n\s+/g, " ").replace(/^ {2}\$ /, ""), cmd, "the same command once the continuations are joined");
  assert.is(wrapLines("  - short", 80), "  - short");
});

test.run();
