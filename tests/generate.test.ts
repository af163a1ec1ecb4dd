import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { parse as parseToml } from "smol-toml";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
import { FLOX_MIN_VERSION } from "../generator/catalog/machines.ts";
import matrix from "../matrix.ts";

// The catalog has no tarball hash for PIN28/PIN29: matrix.ts must give one. These tests never fetch it.
const USER_SHA256 = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const PIN28 = "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3";
const small = {
  releases: [{ torch: "2.8.0", nixpkgs: PIN28, sha256: USER_SHA256 }],
  python: ["3.13"],
  cuda: ["12.8"],
  gpus: ["90", "110", "121"],
  isas: ["avx2", "armv9"],
  cpuOnly: true,
};

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), rel ? `${rel}/${e.name}` : e.name);
      else out.push(rel ? `${rel}/${e.name}` : e.name);
    }
  };
  if (existsSync(dir)) walk(dir, "");
  return out.sort();
}

test("generate writes every file, then a second run writes nothing and says so", async () => {
  const out = tempDir();
  const m = writeMatrix(out, small);
  const first = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(first.status, 0, first.stderr);
  const files = listFiles(out).filter((f) => f !== "matrix.ts");
  const expected = [...renderAll(projectFromMatrix(small)).keys()].sort();
  assert.equal(files, expected);
  assert.ok(files.includes(".flox/pkgs/torchaudio-python313-cuda12_8-sm121-armv9.nix"));
  assert.not.ok(files.some((f) => f.includes("sm110")), "sm110 must be dropped on CUDA 12.8");
  const before = new Map(files.map((f) => [f, [readFileSync(join(out, f), "utf8"), statSync(join(out, f)).mtimeMs] as const]));
  const second = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(second.status, 0);
  assert.match(second.stdout, /nothing to write/);
  for (const f of files) {
    assert.is(readFileSync(join(out, f), "utf8"), before.get(f)![0], f);
    assert.is(statSync(join(out, f)).mtimeMs, before.get(f)![1], `${f} was rewritten`);
  }
  assert.not.ok(listFiles(out).some((f) => f.includes(".tmp-")), "no temporary files left");
});

test("--check changes nothing and exits 1 naming the files that differ", async () => {
  const out = tempDir();
  const m = writeMatrix(out, small);
  const fresh = await runMain(["generate", "--check", "--matrix", m, "--out", out]);
  assert.is(fresh.status, 1);
  assert.match(fresh.stderr, /differs: \.flox\/pkgs\/pytorch-python313-cuda12_8-sm90-avx2\.nix/);
  assert.equal(listFiles(out), ["matrix.ts"], "check wrote nothing");
  assert.is((await runMain(["generate", "--matrix", m, "--out", out])).status, 0);
  assert.is((await runMain(["generate", "--check", "--matrix", m, "--out", out])).status, 0);
  const f = join(out, "BUILD_MATRIX.md");
  writeFileSync(f, readFileSync(f, "utf8") + "edited by hand\n");
  const drift = await runMain(["generate", "--check", "--matrix", m, "--out", out]);
  assert.is(drift.status, 1);
  assert.match(drift.stderr, /differs: BUILD_MATRIX\.md/);
  assert.match(readFileSync(f, "utf8"), /edited by hand/, "check did not repair the file");
});

test("stale generated files are removed; hand-written files in .flox/pkgs are kept", async () => {
  const out = tempDir();
  const m = writeMatrix(out, small);
  assert.is((await runMain(["generate", "--matrix", m, "--out", out])).status, 0);
  const pkgs = join(out, ".flox", "pkgs");
  const old = "torchaudio-python313-cuda12_8-sm90-armv9.nix";
  assert.ok(existsSync(join(pkgs, old)));
  writeFileSync(join(pkgs, "my-own-package.nix"), "# hand-written\n{ hello }: hello\n");
  const narrowed = writeMatrix(out, { ...small, gpus: ["121"] });
  const check = await runMain(["generate", "--check", "--matrix", narrowed, "--out", out]);
  assert.is(check.status, 1);
  assert.match(check.stderr, new RegExp(`stale: \\.flox/pkgs/${old.replace(/\./g, "\\.")}`));
  const r = await runMain(["generate", "--matrix", narrowed, "--out", out]);
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(existsSync(join(pkgs, old)), "stale generated file removed");
  assert.ok(existsSync(join(pkgs, "my-own-package.nix")), "hand-written file kept");
  assert.ok(existsSync(join(pkgs, "pytorch-python313-cuda12_8-sm121-armv9.nix")));
});

const badCases: [string, Record<string, unknown>, RegExp][] = [
  ["unknown SM", { gpus: ["90", "95"] }, /gpus\.1: unknown GPU SM "95"; allowed values: .*; closest: 90, 75\n/],
  ["unknown ISA", { isas: ["avx2", "neon"] }, /isas\.1: unknown CPU ISA "neon"; allowed values: avx2, /],
  ["unknown CUDA", { cuda: ["12.5"] }, /cuda\.0: unknown CUDA version "12\.5"; allowed values: /],
  ["unknown ISA named in the error", { isas: ["avx2", "avx512", "armv9", "armv8_2", "avx512bf16", "armv99"] }, /isas\.5: unknown CPU ISA "armv99"; allowed values: /],
  ["unknown Python", { python: ["3.9"] }, /python\.0: unknown Python version "3\.9"; allowed values: /],
  ["empty axis", { isas: [] }, /isas: must list at least one CPU ISA; allowed values: /],
  ["duplicate", { gpus: ["90", "90"] }, /gpus\.1: duplicate GPU SM "90"/],
  ["number for a string", { gpus: [90] }, /gpus\.0: .*expected string.*; allowed values: .*"121"/],
  ["missing axis", { cuda: undefined }, /cuda: .*; allowed values: .*12\.8/],
];
for (const [what, patch, re] of badCases)
  test(`bad matrix.ts (${what}): exit 2, field path and allowed values, no file written`, async () => {
    const out = tempDir();
    const m = writeMatrix(out, { ...small, ...patch });
    const r = await runMain(["generate", "--matrix", m, "--out", out]);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, re);
    assert.equal(listFiles(out), ["matrix.ts"]);
  });

test("a matrix whose every combination is dropped: exit 2 with why (no silent, destructive generate), no file written", async () => {
  const out = tempDir();
  const m = writeMatrix(out, { ...small, releases: [{ torch: "2.10.0" }] });
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 2, r.stdout);
  assert.match(r.stderr, /No nixpkgs revision in the catalog carries PyTorch 2\.10\.0/);
  assert.equal(listFiles(out), ["matrix.ts"]);
});

test("a matrix.ts that does not load: exit 2, no file written", async () => {
  const out = tempDir();
  const m = join(out, "matrix.ts");
  writeFileSync(m, "export default {{ broken");
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 2);
  assert.match(r.stderr, /cannot load/);
  assert.equal(listFiles(out), ["matrix.ts"]);
});

test("the committed generated files are what the default matrix renders: one file per package (pytorch, torchaudio, torchvision, the environment) and BUILD_MATRIX.md", () => {
  // One copy: the repository's own committed files are the expected output (no second, golden copy that could
  // disagree with them); `npm run generate` updates both the files and what this test expects.
  const files = renderAll(projectFromMatrix(matrix));
  const committed = [
    ".flox/pkgs/pytorch-python313-cuda12_8-sm121-armv9.nix",
    ".flox/pkgs/torchaudio-python313-cuda12_8-sm121-armv9.nix",
    ".flox/pkgs/torchvision-python313-cuda12_8-sm121-armv9.nix",
    ".flox/pkgs/torch-env-python313-cuda12_8-sm121-armv9.nix",
    "BUILD_MATRIX.md",
  ];
  for (const rel of committed) {
    const content = files.get(rel);
    assert.ok(content, `${rel} not generated`);
    assert.fixture(content!, readFileSync(join(ROOT, rel), "utf8"));
  }
});

test("generated Nix files say they are generated and from what", () => {
  const files = renderAll(projectFromMatrix(matrix));
  for (const [rel, content] of files)
    if (rel.endsWith(".nix"))
      assert.ok(content.startsWith("# generated by variant-matrix from matrix.ts: edit matrix.ts and run `npm run generate`\n"), rel);
});

test(".flox/env/manifest.toml asks for no newer flox than it needs; the committed manifest.lock is current for it", () => {
  const text = readFileSync(join(ROOT, ".flox/env/manifest.toml"), "utf8");
  // (plain objects: smol-toml builds them without a prototype)
  const manifest = JSON.parse(JSON.stringify(parseToml(text))) as Record<string, any>;
  // flox/flox cli/flox-manifest: `version = 1` is read by every flox since 1.0.4 and by the newest; a schema-version
  // is refused by any flox older than it. The manifest uses only options.systems, which `version = 1` has.
  assert.is(manifest.version, 1);
  assert.is(manifest["schema-version"], undefined);
  assert.equal(Object.keys(manifest).sort(), ["options", "version"], "no [install]: nothing for flox's catalog to lock");
  const systems = [...new Set(projectFromMatrix(matrix).variants.map((v) => v.system))].sort();
  assert.equal(manifest.options, { systems });
  // The lock as flox writes it; flox relocks (through its catalog service) unless lock.manifest equals the parsed manifest.
  const lockText = readFileSync(join(ROOT, ".flox/env/manifest.lock"), "utf8");
  const lock = JSON.parse(lockText);
  assert.equal(lock, { "lockfile-version": 1, manifest, packages: [] });
  assert.is(lockText, JSON.stringify(lock, null, 2) + "\n");
  const tracked = execFileSync("git", ["ls-files", ".flox/env/manifest.lock"], { cwd: ROOT, encoding: "utf8" });
  assert.is(tracked.trim(), ".flox/env/manifest.lock", "the lock is committed");
  // The wrong case: a matrix for aarch64 only gets its own systems in both files, so the repository's lock is not its lock.
  const armOnly = renderAll(projectFromMatrix({ ...small, isas: ["armv9"] }));
  const armManifest = JSON.parse(JSON.stringify(parseToml(armOnly.get(".flox/env/manifest.toml")!))) as Record<string, any>;
  assert.equal(armManifest.options.systems, ["aarch64-linux"]);
  assert.equal(JSON.parse(armOnly.get(".flox/env/manifest.lock")!).manifest, armManifest);
  assert.not.equal(JSON.parse(armOnly.get(".flox/env/manifest.lock")!), lock);
  // The README's minimum flox version is the one the generator documents.
  assert.ok(readFileSync(join(ROOT, "README.md"), "utf8").includes(`flox ≥ ${FLOX_MIN_VERSION}`), "README states the minimum flox");
});

test(".flox is a flox path environment as `flox init` leaves it: env.json, .gitignore, env/manifest.toml, all tracked", () => {
  // flox's layout (flox docs "What is a Flox environment?": a path environment is self-contained in .flox; flox's
  // own error for a .flox without env.json: "Failed to read environment metadata … verify that .flox/env.json is
  // committed"; flox init writes env.json { name, version: 1 } and .flox/.gitignore for run/ cache/ lib/ log/).
  const env = JSON.parse(readFileSync(join(ROOT, ".flox/env.json"), "utf8"));
  assert.equal(Object.keys(env).sort(), ["name", "version"]);
  assert.is(typeof env.name, "string");
  assert.ok(env.name.length > 0);
  assert.is(env.version, 1);
  const ignore = readFileSync(join(ROOT, ".flox/.gitignore"), "utf8").split("\n").filter((l) => l && !l.startsWith("#"));
  assert.equal(ignore, ["run/", "cache/", "lib/", "log/", "!env/"]);
  const tracked = execFileSync("git", ["ls-files", ".flox/env.json", ".flox/.gitignore", ".flox/env/manifest.toml"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  assert.equal(tracked.trim().split("\n").sort(), [".flox/.gitignore", ".flox/env.json", ".flox/env/manifest.toml"]);
  // Generated like everything else: a fresh tree gets them too.
  const files = renderAll(projectFromMatrix({ ...small }));
  assert.ok(files.has(".flox/env.json") && files.has(".flox/.gitignore"));
});

test("list --json follows the contract", async () => {
  const r = await runMain(["list", "--json", "--filter", "sm=121", "--filter", "package=torchaudio"]);
  assert.is(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout);
  assert.ok(rows.length >= 1);
  const keys = ["name", "package", "version", "torchVersion", "python", "cuda", "sm", "isa", "system", "cudaCapabilities", "cflags", "nixpkgs", "dependsOn", "file", "notes"];
  for (const row of rows) {
    assert.equal(Object.keys(row).sort(), [...keys].sort());
    assert.is(row.package, "torchaudio");
    assert.is(row.sm, "121");
    assert.is(row.system, "aarch64-linux");
    assert.ok(existsSync(join(ROOT, row.file)), `${row.file} is committed`);
    assert.equal(row.dependsOn, [row.name.replace(/^torchaudio/, "pytorch")]);
  }
  const ex = JSON.parse((await runMain(["list", "--excluded", "--json"])).stdout);
  assert.ok(ex.some((e: { name: string; reasons: string[] }) => e.name === "pytorch-python313-cuda12_8-sm110-armv9" && e.reasons.length > 0));
  assert.equal(Object.keys(ex[0]).sort(), ["name", "reasons"]);
  const noSuchIsa = await runMain(["list", "--filter", "isa=avx3"]);
  assert.is(noSuchIsa.status, 2);
  assert.match(noSuchIsa.stderr, /isa=avx3 matches no variant of this matrix; values of isa here: armv8_2, armv9, avx2.*; closest: avx2/);
  // Numbers sort as numbers (75 before 100), with the closest values.
  const sm95 = await runMain(["list", "--filter", "sm=95"]);
  assert.is(sm95.status, 2);
  assert.match(sm95.stderr, /values of sm here: 75, 80, 86, 89, 90, 100, 103, 110, 120, 121, none; closest: 90, 75/);
  const badOut = await runMain(["generate", "--out", "/proc/version/x"]);
  assert.is(badOut.status, 2);
  assert.not.match(badOut.stderr, /    at /, "no stack trace");
  const badFilter = await runMain(["list", "--filter", "gpu=121"]);
  assert.is(badFilter.status, 2);
  assert.match(badFilter.stderr, /allowed keys: package, python, cuda, sm, isa, system/);
});

test("explain: a variant's parameters; a dropped name's reasons and nearest names", async () => {
  const ok = await runMain(["explain", "torchaudio-python313-cuda12_8-sm121-armv9"]);
  assert.is(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /TORCH_CUDA_ARCH_LIST\s+12\.0/);
  assert.match(ok.stdout, /binary compatibility/i);
  // A name that is no variant of the matrix is bad input for explain: exit 2, the why on stderr, nothing on stdout.
  const dropped = await runMain(["explain", "pytorch-python313-cuda12_8-sm110-armv9"]);
  assert.is(dropped.status, 2);
  assert.is(dropped.stdout, "");
  assert.match(dropped.stderr, /^variant-matrix: error: pytorch-python313-cuda12_8-sm110-armv9: dropped/);
  assert.match(dropped.stderr, /13\.0/);
  assert.match(dropped.stderr, /nearest names that exist:\n  pytorch-python313-/);
  const outside = await runMain(["explain", "pytorch-python313-cuda12_8-sm70-avx2"]);
  assert.is(outside.status, 2);
  assert.match(outside.stderr, /add "70" to gpus/);
  assert.match(outside.stderr, /as pytorch-python313-cuda12_8-sm70-avx2\)/, "named as this matrix would name it (no release tag)");
  const nonsense = await runMain(["explain", "torch-cuda-whatever"]);
  assert.is(nonsense.status, 2);
  assert.match(nonsense.stderr, /naming rule/);
  // An unknown value is named with the allowed values, in numeric order, and the closest ones.
  const sm95 = await runMain(["explain", "pytorch-python313-cuda12_8-sm95-avx2"]);
  assert.is(sm95.status, 2);
  assert.match(sm95.stderr, /SM95 is not a GPU of the catalog; SMs here: 70, 72, 75, 80, .*closest: 90, 75\./s);
  const typo = await runMain(["explain", "torchaudoi-python313-cpu-avx2"]);
  assert.match(typo.stderr, /"torchaudoi" is not a package of the catalog; .*closest: torchaudio/s);
  // explain cites the matrix's own pin (2c423e0), not another pin of the catalog.
  const py311 = await runMain(["explain", "torchaudio-python311-cuda12_8-sm90-avx512"]);
  assert.match(py311.stderr, /nixpkgs 2c423e0 has no python311Packages/);
  assert.not.match(py311.stderr, /0182a36/);
  // A suggestion that adds a second release says it renames every variant.
  const other = await runMain(["explain", "pytorch29-python313-cuda12_8-sm90-avx2"]);
  assert.match(other.stderr, /to releases \(this renames every existing variant/);
});

test("a matrix that yields no variant: exit 2 naming what dropped everything, and no file changes (git status clean)", async () => {
  const out = tempDir("vm-empty-");
  execFileSync("git", ["init", "-q", out]);
  const good = writeMatrix(tempDir("vm-empty-m-"), { ...small, gpus: ["90"] });
  assert.is((await runMain(["generate", "--matrix", good, "--out", out])).status, 0);
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A"], { cwd: out });
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "generated"], { cwd: out });
  // SM110 (Thor) on CUDA 12.8 only, no CPU-only variants: every combination is dropped.
  const empty = writeMatrix(tempDir("vm-empty-m-"), { ...small, gpus: ["110"], cpuOnly: false });
  for (const args of [["generate"], ["generate", "--check"]]) {
    const r = await runMain([...args, "--matrix", empty, "--out", out]);
    assert.is(r.status, 2, args.join(" "));
    assert.is(r.stdout, "");
    assert.match(r.stderr, /^variant-matrix: error: .*matrix\.ts yields no package variant: all \d+ of its combinations are dropped, so nothing was written/);
    assert.match(r.stderr, /sm_110/, "names the reason that dropped them");
    assert.is(execFileSync("git", ["status", "--porcelain"], { cwd: out, encoding: "utf8" }), "", "no file changed");
  }
  // The right case passes: the same matrix with CPU-only variants generates.
  const cpu = writeMatrix(tempDir("vm-empty-m-"), { ...small, gpus: ["110"], cpuOnly: true });
  assert.is((await runMain(["generate", "--matrix", cpu, "--out", out])).status, 0);
});

test("generate names a requested package that yields no variant, with its first reason", async () => {
  const out = tempDir("vm-nopkg-");
  const m = writeMatrix(out, { ...small, gpus: ["90"], packages: ["pytorch", "bitsandbytes"] });
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /note: no variant of bitsandbytes \(asked for in packages; \d+ combination\(s\)\s+dropped\): \S/);
  assert.not.match(r.stdout, /no variant of pytorch/);
});

test("generate says when a second release renames the variants (not a silent '… stale removed')", async () => {
  const out = tempDir("vm-rename-");
  const one = { ...small, gpus: ["90"], isas: ["avx2"], cpuOnly: false };
  assert.is((await runMain(["generate", "--matrix", writeMatrix(tempDir("vm-rename-m-"), one), "--out", out])).status, 0);
  const r = await runMain(["generate", "--matrix", writeMatrix(tempDir("vm-rename-m-"), { ...one, releases: [...one.releases, { torch: "2.12.0" }] }), "--out", out]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /note: \d+ variant file\(s\) renamed, not dropped: with more than one PyTorch release each name carries its release \(e\.g\. \.flox\/pkgs\/pytorch-python313-cuda12_8-sm90-avx2\.nix is now \.flox\/pkgs\/pytorch28-python313-cuda12_8-sm90-avx2\.nix\)/);
  // The wrong case: a generate that only adds a GPU renames nothing and says nothing of it.
  const more = await runMain(["generate", "--matrix", writeMatrix(tempDir("vm-rename-m-"), { ...one, releases: [...one.releases, { torch: "2.12.0" }], gpus: ["90", "80"] }), "--out", out]);
  assert.not.match(more.stdout, /renamed/);
});

test("generate warns when generated files are not git-tracked (flox build sees tracked files only)", async () => {
  const out = tempDir();
  execFileSync("git", ["init", "-q", out]);
  const m = writeMatrix(out, { ...small, gpus: ["121"] });
  const r = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(r.status, 0);
  assert.match(r.stderr, /not git-tracked.*git add \.flox pkgs/);
  execFileSync("git", ["add", ".flox", "pkgs"], { cwd: out });
  writeFileSync(join(out, "BUILD_MATRIX.md"), "");
  const again = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(again.status, 0);
  assert.not.match(again.stderr, /not git-tracked/);
});

test("the committed generated files match matrix.ts", async () => {
  const r = await runMain(["generate", "--check"]);
  assert.is(r.status, 0, r.stderr);
});

test.run();
