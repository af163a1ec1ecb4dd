// A pin's facts read by evaluating a nixpkgs (pkgs/inspect-pin.nix) with the real Nix, `pin check` against
// the catalog, `pin add` into the local catalog, and the version message of a nixpkgs newer than this Nix can read.
// Every nixpkgs here is the stand-in (tests/fixtures/stand-in-nixpkgs, NOT nixpkgs) of one catalog pin, laid out as a
// nixpkgs checkout directory (default.nix, .git-revision) or a tarball served from a file:// URL.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { packageOnTorch, releaseOf } from "../generator/catalog/lib/packages.ts";
import { compareVersions } from "../generator/versions.ts";
import { bundledDeviceCode } from "../generator/catalog/device-code.ts";
import { comparePin, PinFactsSchema, type PinFacts } from "../generator/pin/facts.ts";
import { SHA256_RE, type NixpkgsPin } from "../generator/catalog/schema.ts";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { standInCheckout } from "./helpers/nix.ts";

const checkouts = new Map(catalog.nixpkgs.map((p) => [p.rev, standInCheckout(p.rev)]));
const givenAll = [...checkouts].flatMap(([rev, dir]) => ["--nixpkgs", `${rev}=${dir}`]);

async function inspectJson(dir: string): Promise<{ rev: string; facts: PinFacts }> {
  const r = await runMain(["pin", "inspect", dir, "--json"]);
  assert.is(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { rev: string; facts: unknown };
  return { rev: j.rev, facts: PinFactsSchema.parse(j.facts) };
}

test("pin inspect PATH --json reads every per-pin fact the catalog holds, each with its Nix expression (every stand-in era)", async () => {
  for (const pin of catalog.nixpkgs) {
    const { rev, facts } = await inspectJson(checkouts.get(pin.rev)!);
    assert.is(rev, pin.rev, "the revision from .git-revision");
    const sets = new Map(facts.pythonSets.map((s) => [s.version, s]));
    for (const v of pin.python) {
      const s = sets.get(v);
      assert.ok(s, `${pin.rev}: python${v} set`);
      assert.is(s!.torch.value, pin.torch, `${pin.rev} python ${v} torch`);
      assert.is(s!.torchaudio.value, pin.torchaudio, `${pin.rev} python ${v} torchaudio`);
      assert.is(s!.torch.expr, `(import <nixpkgs> { config = { allowUnfree = true; allowAliases = false; }; }).${s!.set}.torch.version`);
      if (pin.torchcodec === null) assert.is(s!.torchcodec.value, null, `${pin.rev}: no torchcodec`);
    }
    assert.equal(facts.cudaSets.map((s) => s.version), pin.cuda, `${pin.rev}: CUDA sets`);
    for (const s of facts.cudaSets) {
      assert.is(s.torchBroken.value, s.version in pin.brokenCuda, `${pin.rev}: torch broken with CUDA ${s.version}`);
      assert.match(s.torchBroken.expr, new RegExp(`cudaPackages = final\\.${s.set}; .*\\.torch\\.meta\\.broken$`));
      assert.equal(s.defaultCapabilities.value, catalog.cuda.find((c) => c.version === s.version)!.nixpkgsDefaultCapabilities);
    }
    if (pin.defaultPython) assert.is(facts.defaultPython.value, pin.defaultPython);
    if (pin.defaultCuda) assert.is(facts.defaultCuda.value, pin.defaultCuda);
    assert.equal(facts.builderArgsMissing.value, [], `${pin.rev}: torch takes cudaSupport and gpuTargets`);
    assert.ok(facts.torchFormals.value!.includes("gpuTargets"));
    for (const lib of bundledDeviceCode)
      assert.is(facts.staticLinks[lib.origin].value, lib.linkedAt === "every pin" || lib.linkedAt.includes(pin.rev), `${pin.rev}: ${lib.origin}`);
    const ta = releaseOf(packageOnTorch(catalog, "torchaudio"), pin.torchaudio)!;
    assert.is(facts.torchaudioDependencies.value!.includes("torchcodec"), (ta.nixpkgsDependencies ?? []).includes("torchcodec"), `${pin.rev}: torchaudio → torchcodec`);
    assert.ok(facts.torchaudioDependencies.value!.includes("torch"));
  }
});

test("pin inspect (text) names each fact with the expression it came from", async () => {
  const p = catalog.nixpkgs.find((x) => x.torch === "2.13.0")!;
  const r = await runMain(["pin", "inspect", checkouts.get(p.rev)!]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /python313Packages torch\s+2\.13\.0\n\s+← \(import <nixpkgs> .*\)\.python313Packages\.torch\.version/);
  assert.match(r.stdout, /cudaPackages_13_0 torch broken\s+false\n\s+← .*meta\.broken/);
  assert.match(r.stdout, /torch links NVSHMEM statically\s+true/);
});

test("pin check exits 0 against a faithful stand-in of every catalog pin", async () => {
  const r = await runMain(["pin", "check", "--no-fetch", ...givenAll]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  for (const p of catalog.nixpkgs) assert.match(r.stdout, new RegExp(`✓ ${p.rev.slice(0, 7)} \\(torch ${p.torch.replace(/\./g, "\\.")}.*: \\d+ facts agree`));
  assert.not.match(r.stdout, /✗/);
});

test("pin check --also: the user's nixpkgs beside the pins; a torch newer than the catalog knows names pin add, a known one does not, and neither fails the check", async () => {
  const newest = [...catalog.torch].map((t) => t.version).sort(compareVersions).at(-1)!;
  const [maj, min] = newest.split(".").map(Number);
  const next = `${maj}.${min! + 1}.0`;
  const pin = catalog.nixpkgs.find((p) => p.rev.startsWith("2c423e0"))!;
  const ahead = standInCheckout(pin.rev, { torch: next }, { gitRevision: "d".repeat(40) });
  const known = standInCheckout(pin.rev, {}, { gitRevision: "c".repeat(40) });
  const r = await runMain(["pin", "check", "--no-fetch", "--nixpkgs", `${pin.rev}=${checkouts.get(pin.rev)!}`, "--also", ahead, "--also", known]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.ok(
    r.stdout.includes(`note: nixpkgs ${"d".repeat(40)} (--also): torch ${next}, newer than every release the catalog knows (newest ${newest}): \`variant-matrix pin add ${ahead}\` brings it in`),
    r.stdout,
  );
  assert.ok(r.stdout.includes(`✓ nixpkgs ${"c".repeat(40)} (--also): torch ${pin.torch}, a release the catalog knows`), r.stdout);
  const j = await runMain(["pin", "check", "--no-fetch", "--json", "--also", ahead]);
  assert.is(j.status, 0, j.stderr);
  const beside = (JSON.parse(j.stdout) as { status: string; newerTorch?: { torch: string } }[]).filter((x) => x.status === "beside");
  assert.is(beside.length, 1);
  assert.is(beside[0]!.newerTorch!.torch, next);
  // A revision to fetch with fetching off: said, exit 2.
  const off = await runMain(["pin", "check", "--no-fetch", "--also", "e".repeat(40)]);
  assert.is(off.status, 2, off.stdout + off.stderr);
  assert.match(off.stderr, /fetching a revision is off/);
});

test("pin check exits 1 and names the fact when the nixpkgs disagrees with the catalog (one fact changed each time)", async () => {
  const newest = catalog.nixpkgs.find((p) => p.rev.startsWith("2c423e0"))!;
  const cases: { overrides: Record<string, unknown>; fact: RegExp }[] = [
    // torch 2.12's brokenConditions refusing CUDA 13, as 2.9.1's did
    { overrides: { cudaMajors: ["11", "12"] }, fact: /catalog says CUDA 13\.0 accepted for torch 2\.12\.0 at 2c423e0; your nixpkgs says refused \(.*cudaPackages_13_0.*meta\.broken\)/ },
    { overrides: { torch: "2.12.1" }, fact: /torch\[3\.13\]: catalog says 2\.12\.0 at 2c423e0; your nixpkgs says 2\.12\.1/ },
    { overrides: { python: ["3.13", "3.14"] }, fact: /python\[3\.12\]: catalog says python312Packages at 2c423e0; your nixpkgs says absent/ },
    { overrides: { defaultCuda: "12.8" }, fact: /defaultCuda: catalog says 12\.9 at 2c423e0; your nixpkgs says 12\.8/ },
    { overrides: { nvshmem: false }, fact: /catalog says torch links NVSHMEM statically at 2c423e0; your nixpkgs says it does not/ },
    // python313Packages no longer recurseIntoAttrs: the NixOS-CUDA Hydra would not build its triton
    { overrides: { recursedPython: ["3.14"] }, fact: /recursedPython: catalog says 3\.13, 3\.14 at 2c423e0; your nixpkgs says 3\.14 \(.*recurseForDerivations/ },
  ];
  for (const c of cases) {
    const changed = standInCheckout(newest.rev, c.overrides);
    const others = catalog.nixpkgs.filter((p) => p.rev !== newest.rev).flatMap((p) => ["--nixpkgs", `${p.rev}=${checkouts.get(p.rev)!}`]);
    const r = await runMain(["pin", "check", "--no-fetch", "--nixpkgs", `${newest.rev}=${changed}`, ...others]);
    assert.is(r.status, 1, `${JSON.stringify(c.overrides)}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /✗ 2c423e0 \(torch 2\.12\.0.*\): \d+ of \d+ facts differ/);
    assert.match(r.stdout, c.fact, r.stdout);
    for (const p of catalog.nixpkgs.filter((x) => x.rev !== newest.rev)) assert.match(r.stdout, new RegExp(`✓ ${p.rev.slice(0, 7)}`));
  }
});

test("pin check --json: one entry per catalog pin; pins not given and not fetched are said, not failed", async () => {
  const one = catalog.nixpkgs[catalog.nixpkgs.length - 1]!;
  const r = await runMain(["pin", "check", "--no-fetch", "--json", "--nixpkgs", `${one.rev}=${checkouts.get(one.rev)!}`]);
  assert.is(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { rev: string; status: string; differences?: unknown[] }[];
  assert.equal(j.map((x) => x.rev), catalog.nixpkgs.map((p) => p.rev));
  assert.equal(j.filter((x) => x.status === "checked").map((x) => x.rev), [one.rev]);
  assert.equal(j.find((x) => x.rev === one.rev)!.differences, []);
  const none = await runMain(["pin", "check", "--no-fetch"]);
  assert.is(none.status, 2);
  assert.match(none.stderr, /no pin of the catalog could be read/);
});

test("comparePin: a catalog that disagrees with the facts yields exactly that difference (pure)", async () => {
  const pin = catalog.nixpkgs.find((p) => p.torch === "2.13.0")!;
  const { facts } = await inspectJson(checkouts.get(pin.rev)!);
  assert.equal(comparePin(pin, facts, catalog).differences, []);
  const wrong: NixpkgsPin = { ...pin, brokenCuda: { "13.0": "a wrong claim" } };
  const d = comparePin(wrong, facts, catalog).differences;
  assert.equal(d.map((x) => x.fact), ["brokenCuda[13.0]"]);
  assert.match(d[0]!.message, /catalog says CUDA 13\.0 refused for torch 2\.13\.0 at c043004; your nixpkgs says accepted/);
});

test("a nixpkgs that needs a newer Nix: a plain message naming both versions, nothing evaluated (lib/minver.nix as in nixpkgs)", async () => {
  const dir = join(tempDir("vm-pin-"), "nixpkgs");
  mkdirSync(join(dir, "lib"), { recursive: true });
  // nixpkgs' own files (lib/minver.nix at 40cc908; the root default.nix's check of the 2018-2025 era).
  writeFileSync(join(dir, "lib", "minver.nix"), '# Expose the minimum required version for evaluating Nixpkgs\n"2.18.0"\n');
  writeFileSync(
    join(dir, "default.nix"),
    "let requiredVersion = import ./lib/minver.nix; in\n" +
      "if ! builtins ? nixVersion || builtins.compareVersions requiredVersion builtins.nixVersion == 1 then\n" +
      "  abort ''This version of Nixpkgs requires Nix >= ${requiredVersion}, please upgrade''\nelse throw \"(real nixpkgs would be imported here)\"\n",
  );
  const nixVersion = execFileSync("nix-instantiate", ["--version"], { encoding: "utf8" }).match(/(\d+\.\d+(\.\d+)?)/)![1]!;
  const r = await runMain(["pin", "inspect", dir]);
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, new RegExp(`needs Nix >= 2\\.18\\.0 \\(its lib/minver\\.nix\\), and the Nix on PATH is ${nixVersion.replace(/\./g, "\\.")}`));
  assert.match(r.stderr, /put a Nix >= 2\.18\.0 first on PATH/);
  assert.not.match(r.stderr, /please upgrade/, "our message, before Nix's abort");

  // nixpkgs since NixOS/nixpkgs#433057 (August 2025): lib/minfeatures.nix, as in nixpkgs at 18d54ee, evaluated by this Nix.
  writeFileSync(
    join(dir, "lib", "minfeatures.nix"),
    `let
  features = [
    { description = "the \`nixVersion\` builtin"; condition = builtins ? nixVersion; }
    { description = "\`builtins.nixVersion\` reports at least 2.18"; condition = builtins ? nixVersion && builtins.compareVersions "2.18" builtins.nixVersion != 1; }
  ];
  evaluated = builtins.partition ({ condition, ... }: condition) features;
in
{ all = features; supported = evaluated.right; missing = evaluated.wrong; }
`,
  );
  writeFileSync(join(dir, "lib", "minver.nix"), '"2.0"\n');
  const f = await runMain(["pin", "inspect", dir]);
  assert.is(f.status, 2, f.stdout + f.stderr);
  assert.match(f.stderr, new RegExp(`needs a Nix with features the Nix on PATH \\(${nixVersion.replace(/\./g, "\\.")}\\) lacks \\(its lib/minfeatures\\.nix\\): \`builtins\.nixVersion\` reports at least 2\.18`));
});

test("pin add REV (fetched from a file:// tarball) of a torch 2.14.0 / CUDA 13.2 / Python 3.14 nixpkgs: complete variants whose explain shows the release facts, built-in catalog untouched", async () => {
  const work = tempDir("vm-pin-add-");
  const base = catalog.nixpkgs.find((p) => p.torch === "2.13.0")!;
  const rev = "1a2b3c4d5e6f708192a3b4c5d6e7f80912345678";
  // A nixpkgs of the era after the catalog's newest pin: torch 2.14.0 with torchvision 0.29.0 and torchcodec 0.16.0
  // (nixpkgs master: torch source/src.nix at 0d64e2a, torchcodec at 0873ea5), cudaPackages_13_2, python314Packages;
  // served as a tarball (no network).
  standInCheckout(
    base.rev,
    { torch: "2.14.0", torchvision: "0.29.0", torchcodec: "0.16.0", cuda: ["12.9", "13.0", "13.2"], python: ["3.13", "3.14"] },
    { gitRevision: null, dir: join(work, "src", "nixpkgs-2.14") },
  );
  const tarball = join(work, "nixpkgs.tar.gz");
  execFileSync("tar", ["-czf", tarball, "-C", join(work, "src"), "nixpkgs-2.14"]);
  const project = join(work, "project");
  mkdirSync(project);
  const matrix = { releases: [{ torch: "2.14.0", nixpkgs: rev }], python: ["3.14"], cuda: ["13.2"], gpus: ["121"], isas: ["armv9"], cpuOnly: false };
  const m = writeMatrix(project, matrix);
  const before = await runMain(["generate", "--matrix", m, "--out", project]);
  assert.is(before.status, 2, "no pin carries 2.14.0 before pin add");
  assert.match(before.stderr, /releases\.0\.nixpkgs|1a2b3c4/);

  const r = await runMain(["pin", "add", rev, "--url", `file://${tarball}`, "--date", "2026-11-01", "--channel", "nixos-unstable", "--matrix", m]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /added nixpkgs 1a2b3c4.* \(torch 2\.14\.0, torchaudio 2\.11\.0; Python 3\.13, 3\.14; CUDA 12\.9, 13\.0, 13\.2\)/);
  const local = JSON.parse(readFileSync(join(project, "local-catalog.json"), "utf8")) as { nixpkgs: NixpkgsPin[]; torch?: { version: string }[] };
  const pin = local.nixpkgs[0]!;
  assert.is(pin.rev, rev);
  assert.match(pin.sha256!, SHA256_RE);
  // The same hash Nix's own fetchTarball checks: evaluating it with that sha256 succeeds (and a wrong one fails).
  const fetch = (sha: string) =>
    execFileSync("nix-instantiate", ["--eval", "-E", `builtins.fetchTarball { url = "file://${tarball}"; sha256 = "${sha}"; }`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  assert.match(fetch(pin.sha256!), /\/nix\/store\//);
  assert.throws(() => fetch(`sha256-${"A".repeat(43)}=`));
  assert.equal(pin.inferred, {});
  assert.is(pin.date, "2026-11-01");
  assert.equal([pin.torch, pin.torchvision, pin.torchcodec, pin.cuda, pin.python], ["2.14.0", "0.29.0", "0.16.0", ["12.9", "13.0", "13.2"], ["3.13", "3.14"]]);
  // The release's facts come from the built-in catalog (sourced), not from the evaluation: nothing to add locally.
  assert.equal(local.torch ?? [], []);
  assert.ok(catalog.torch.some((t) => t.version === "2.14.0"));
  assert.not.ok(catalog.nixpkgs.some((p) => p.rev === rev), "the built-in catalog is untouched");

  const g = await runMain(["generate", "--matrix", m, "--out", project]);
  assert.is(g.status, 0, g.stderr);
  const files = readdirSync(join(project, ".flox/pkgs")).sort();
  assert.equal(files, [
    "pytorch-python314-cuda13_2-sm121-armv9.nix",
    "torch-env-python314-cuda13_2-sm121-armv9.nix",
    "torchaudio-python314-cuda13_2-sm121-armv9.nix",
    "torchvision-python314-cuda13_2-sm121-armv9.nix",
  ]);
  const data = readFileSync(join(project, "pkgs/variants.nix"), "utf8");
  assert.ok(data.includes(`nixpkgsRev = "${rev}";`) && data.includes(`nixpkgsSha256 = "${pin.sha256}";`));
  const list = await runMain(["list", "--json", "--matrix", m]);
  const variants = JSON.parse(list.stdout) as { name: string; torchVersion: string; version: string; cudaCapabilities: string[] }[];
  assert.equal(variants.map((v) => [v.torchVersion, v.version]), [["2.14.0", "2.14.0"], ["2.14.0", "2.11.0"], ["2.14.0", "0.29.0"], ["2.14.0", "2.14.0"]]);
  assert.equal(variants[0]!.cudaCapabilities, ["12.1"], "SM121 native on CUDA 13.2");

  // explain: torch 2.14.0, torchvision 0.29.0, torchcodec 0.16.0 and what is known of its arch entries, with sources.
  const e = await runMain(["explain", "pytorch-python314-cuda13_2-sm121-armv9", "--json", "--matrix", m]);
  assert.is(e.status, 0, e.stderr);
  const x = JSON.parse(e.stdout) as { torchVersion: string; onTorchVersions: Record<string, string>; releaseFacts: { release: string; archList: string } };
  assert.is(x.torchVersion, "2.14.0");
  assert.is(x.onTorchVersions.torchvision, "0.29.0");
  assert.match(x.releaseFacts.release, /PyTorch 2\.14\.0 \(released 2026-09-02\) pairs torchvision 0\.29\.0 and torchcodec 0\.16\.0; Python 3\.10–3\.15; PyTorch's own CUDA builds 12\.6, 13\.0, 13\.2/);
  assert.match(x.releaseFacts.release, /PyTorchKR\/pytorch\.kr#119/);
  assert.match(x.releaseFacts.archList, /not read for torch 2\.14/);
  const text = await runMain(["explain", "pytorch-python314-cuda13_2-sm121-armv9", "--matrix", m]);
  assert.match(text.stdout.replace(/\s+/g, " "), /release PyTorch 2\.14\.0 \(released 2026-09-02\) pairs torchvision 0\.29\.0 and torchcodec 0\.16\.0/);

  // Adding it again is refused and changes nothing.
  const again = await runMain(["pin", "add", rev, "--url", `file://${tarball}`, "--matrix", m]);
  assert.is(again.status, 2);
  assert.match(again.stderr, new RegExp(`nixpkgs ${rev} is already in \\S*local-catalog\\.json: nothing to add \\(nothing written\\)`), again.stderr);
  assert.equal((JSON.parse(readFileSync(join(project, "local-catalog.json"), "utf8")) as { nixpkgs: unknown[] }).nixpkgs.length, 1);
});

test("pin add refuses a pin the built-in catalog has, and a checkout without a revision or a hash; a bad local catalog stops generate", async () => {
  const project = tempDir("vm-pin-add-");
  const m = writeMatrix(project, { python: ["3.13"], cuda: ["12.9"], gpus: ["121"], isas: ["armv9"], cpuOnly: false });
  const builtIn = catalog.nixpkgs.find((p) => p.torch === "2.13.0")!;
  const dup = await runMain(["pin", "add", checkouts.get(builtIn.rev)!, "--sha256", builtIn.sha256!, "--matrix", m]);
  assert.is(dup.status, 2);
  assert.match(dup.stderr, /nixpkgs c043004d1c6985732bcc1cbc5a9c9aecbbb4e0f0 is already a pin of the built-in catalog: nothing to add \(nothing written/, dup.stderr);
  assert.not.match(dup.stderr, /local-catalog\.json/, "names no local-catalog.json, which does not exist");
  // Given as a revision, it is said before any download: the --url no one can fetch is never asked.
  const byRev = await runMain(["pin", "add", builtIn.rev, "--url", "file:///nonexistent/nixpkgs.tar.gz", "--matrix", m]);
  assert.is(byRev.status, 2);
  assert.match(byRev.stderr, new RegExp(`nixpkgs ${builtIn.rev} is already a pin of the built-in catalog: nothing to add`), byRev.stderr);
  assert.not.match(byRev.stderr, /nonexistent|download|unable to/, "nothing was fetched");
  const noRev = await runMain(["pin", "add", standInCheckout(builtIn.rev, {}, { gitRevision: null }), "--matrix", m]);
  assert.is(noRev.status, 2);
  assert.match(noRev.stderr, /which revision is it\? Pass --rev REV/);
  const noHash = await runMain(["pin", "add", checkouts.get(builtIn.rev)!, "--matrix", m]);
  assert.is(noHash.status, 2);
  assert.match(noHash.stderr, /needs the tarball's sha256; pass --sha256/);
  assert.not.ok(existsSync(join(project, "local-catalog.json")), "nothing written");

  writeFileSync(join(project, "local-catalog.json"), JSON.stringify({ nixpkgs: [{ ...builtIn, rev: "f".repeat(40), sha256: "nope" }] }));
  const g = await runMain(["generate", "--matrix", m, "--out", project]);
  assert.is(g.status, 2);
  assert.match(g.stderr, /local-catalog\.json: invalid local catalog\n\s+nixpkgs\.0\.sha256: expected an SRI sha256/);
  assert.not.ok(existsSync(join(project, ".flox")), "no file written");
});

test("pin add refuses a --date that is no calendar day and a --channel with a newline, escape or space: exit 2, the option and its form, nothing fetched or written", async () => {
  const work = tempDir("vm-pin-add-fields-");
  const base = catalog.nixpkgs.find((p) => p.torch === "2.13.0")!;
  const rev = "2b3c4d5e6f708192a3b4c5d6e7f8091234567890";
  standInCheckout(base.rev, { torch: "2.14.0", torchvision: "0.29.0", torchcodec: "0.16.0" }, { gitRevision: null, dir: join(work, "src", "nixpkgs") });
  const tarball = join(work, "nixpkgs.tar.gz");
  execFileSync("tar", ["-czf", tarball, "-C", join(work, "src"), "nixpkgs"]);
  const project = join(work, "project");
  mkdirSync(project);
  const m = writeMatrix(project, { python: ["3.13"], cuda: ["12.9"], gpus: ["121"], isas: ["armv9"], cpuOnly: false });
  const add = (...more: string[]) => runMain(["pin", "add", rev, "--url", `file://${tarball}`, "--matrix", m, ...more]);
  for (const [args, said] of [
    [["--date", "2026-13-45"], /--date "2026-13-45": expected a calendar date YYYY-MM-DD, such as 2026-11-01 \(nothing written\)/],
    [["--date", "2026-02-29"], /--date "2026-02-29": expected a calendar date YYYY-MM-DD/],
    [["--date", "2026-1-5"], /--date "2026-1-5": expected a calendar date YYYY-MM-DD/],
    [["--channel", "nixos-unstable\n## injected"], /--channel "nixos-unstable\\u000a## injected": expected a channel name of letters, digits, '\.', '-' and '_', such as nixos-unstable, nixos-25\.11 or nixpkgs-unstable \(nothing written\)/],
    [["--channel", "nixos-\u001b[31munstable"], /--channel "nixos-\\u001b\[31munstable": expected a channel name/],
    [["--channel", "nixos unstable"], /--channel "nixos unstable": expected a channel name/],
  ] as const) {
    const r = await add(...args);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, said);
    assert.not.ok(existsSync(join(project, "local-catalog.json")), `${args.join(" ")}: nothing written`);
  }
  // The forms it takes: a leap day of a leap year and the channels of nixpkgs' own names, written as given.
  const ok = await add("--date", "2028-02-29", "--channel", "nixos-25.11");
  assert.is(ok.status, 0, ok.stderr);
  const pin = (JSON.parse(readFileSync(join(project, "local-catalog.json"), "utf8")) as { nixpkgs: NixpkgsPin[] }).nixpkgs[0]!;
  assert.equal([pin.date, pin.channel], ["2028-02-29", "nixos-25.11"]);
  // A hand-edited local-catalog.json is held to the same forms when it is read.
  writeFileSync(join(project, "local-catalog.json"), JSON.stringify({ nixpkgs: [{ ...pin, date: "2026-13-45", channel: "a\u001bb" }] }));
  const g = await runMain(["list", "--matrix", m]);
  assert.is(g.status, 2);
  assert.match(g.stderr, /nixpkgs\.0\.date: expected a calendar date YYYY-MM-DD/, g.stderr);
  assert.match(g.stderr, /nixpkgs\.0\.channel: expected a channel name/, g.stderr);
});

test.run();
