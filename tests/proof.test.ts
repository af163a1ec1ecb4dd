/**
 * Publish only what is proven, with its proof; install reads the proof it fetched (issue 66; driver/proof.ts,
 * driver/publish.ts, install/install.ts), with the real Nix 2.8 and the real /nix/store:
 *
 * - the unproven marker's store path, computed without Nix (proof.ts textStorePath), is the one Nix gives
 *   `builtins.toFile` of the same name and text, and the one publish makes;
 * - end to end, on a STAND-IN environment whose file carries a STAND-IN static check (`tests.static`, shaped like
 *   pkgs/checks.nix's: it runs the environment's python3 with `--cuobjdump=PATH` and writes probe.json, report.txt and
 *   builder.json). The stand-in python3 is no interpreter: it prints a recorded probe (H100, PyPI torch 2.11) and runs
 *   the cuobjdump it is asked for (`--cuobjdump=PATH`, or `cuobjdump` on PATH for a bare `--cuobjdump`, as probe.py
 *   does), so a `cuobjdump` first on PATH that counts its runs tells whether install's verify read device code:
 *   1. before its check is built, `publish --to file://…` refuses the variant: exit 2, the reason and --allow-unproven
 *      named, the cache left untouched (no nix-cache-info);
 *   2. the check built, publish with a key copies the variant and its proof, each path signed (Nix's own `nix store
 *      verify` agrees for the proof) and `--dry-run` calls it proven;
 *   3. everything deleted from this store, `install` (a second store state: only the file:// cache to substitute
 *      from, require-sigs, the key trusted) fetches the variant and its proof, prints the proof's summary (its path,
 *      builder, cuobjdump and the report's lines) and runs no cuobjdump;
 *   4. a second stand-in variant, published with --allow-unproven: its marker is in the cache, signed, and install
 *      says it was published unproven (and verify reads its device code); copied into another cache without the
 *      marker, install says there is no proof instead.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addUnprovenMarker, textStorePath, unprovenMarker } from "../generator/driver/proof.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { catalog } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
import { BIN, ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { newSalt } from "./helpers/driver.ts";
import { markedBuildDir, runNix } from "./helpers/nix.ts";

const NAME = "torch-env-python313-cuda12_8-sm90-avx512bf16";
const BASE = { releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512bf16"], cpuOnly: false };
const recorded = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];
const PROBE = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/probe.json");
const nix = (args: string[], input?: string) =>
  execFileSync("nix", ["--extra-experimental-features", "nix-command", ...args], { encoding: "utf8", input, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], env: { ...process.env, NIX_CONFIG: "substituters =" } }).trim();
const offline = { NIX_CONFIG: "substituters =" };
const flat = (t: string) => t.replace(/ \\\n\s*/g, " ").replace(/\s+/g, " ");
const CUDA = cudaCacheSubstituter(catalog);
/** Every line of `text` fits 80 columns, or ends in a store path (one word no wrap can cut) after at most one word. */
const fits80 = (text: string) => {
  for (const l of text.split("\n")) assert.ok([...l].length <= 80 || /^\s*(\S+\s+)?\S*\/nix\/store\/\S+$/.test(l), `over 80 columns: ${l}`);
};

test("the unproven marker's path is Nix's: builtins.toFile of its name and text gives it, and publish's addUnprovenMarker makes exactly it", async () => {
  for (const [name, text] of [
    ["variant-matrix-unproven-x", "hello\n"],
    ["a-b.c_d", ""],
    ["variant-matrix-unproven-torch-env", '{"quote":"\\"","dollar":"${x}"}\n'],
  ] as const) {
    const expr = `builtins.toFile ${JSON.stringify(name)} ${JSON.stringify(text).replace(/\$/g, "\\$")}`;
    const byNix = runNix("nix-instantiate", ["--eval", "-E", expr]).trim().replace(/^"|"$/g, "");
    assert.is(textStorePath(name, text), byNix, name);
  }
  // The marker names one build: another output path, another marker.
  const out = `/nix/store/${"0".repeat(32)}-${NAME}-stand-in`;
  const m = unprovenMarker(NAME, out);
  assert.is(m.path, unprovenMarker(NAME, out).path);
  assert.is.not(m.path, unprovenMarker(NAME, out.replace(/0/, "1")).path);
  assert.ok(m.path.endsWith(`-variant-matrix-unproven-${NAME}`));
  assert.is(await addUnprovenMarker(m), null);
  assert.is(readFileSync(m.path, "utf8"), m.text);
  assert.match(m.text, out);
});

/** A secret key file and its public key (`nix key generate-secret`, `convert-secret-to-public`). */
function makeKey(dir: string, name: string): { sk: string; pk: string } {
  const sk = join(dir, `${name}.sk`);
  writeFileSync(sk, nix(["key", "generate-secret", "--key-name", name]));
  return { sk, pk: nix(["key", "convert-secret-to-public"], readFileSync(sk, "utf8")) };
}

/**
 * A --pkgs-dir of STAND-INs: each dependency a tiny derivation; NAME an environment whose bin/python3 is the stand-in
 * probe (the module comment), and whose file's `tests.static` is a stand-in check of it, run with a stand-in cuobjdump
 * of its own (a script that exits 0). Each builder touches MARKER/built-<what> (the sandbox is off in this store).
 */
function standIn(deps: readonly string[], marker: string): string {
  const pkgs = tempDir("vm-proof-pkgs-");
  chmodSync(pkgs, 0o755);
  const salt = newSalt();
  const drv = (name: string, script: string) => `derivation { name = "${name}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" ${JSON.stringify(script)} ]; }`;
  for (const d of deps)
    writeFileSync(
      join(pkgs, `${d}.nix`),
      `{ ... }: (${drv(`${d}-stand-in-${salt}`, `echo ${d} > $out`)}) // { tests.static = ${drv(`${d}-check-static-stand-in-${salt}`, `mkdir $out; echo '${d}: every promise holds' > $out/report.txt`)}; }\n`,
    );
  writeFileSync(
    join(pkgs, "python3"),
    [
      "#!/usr/bin/python3",
      "# STAND-IN python3 (tests/proof.test.ts): not an interpreter. Prints the recorded probe beside it, and runs the",
      "# cuobjdump it is asked for, as probe.py does: --cuobjdump=PATH, or `cuobjdump` on PATH for a bare --cuobjdump.",
      "import json, os, shutil, subprocess, sys",
      "probe = json.load(open(os.path.join(os.path.dirname(os.path.realpath(__file__)), '..', 'probe.json')))",
      "tool = None",
      "for a in sys.argv[1:]:",
      "    if a == '--cuobjdump':",
      "        tool = shutil.which('cuobjdump') or ''",
      "    elif a.startswith('--cuobjdump='):",
      "        tool = a.split('=', 1)[1]",
      "if tool:",
      "    subprocess.run([tool, '--list-elf', 'libtorch_cuda.so'], capture_output=True)",
      "# Its libraries, as probe.py's `libraries` names them (resolved path, size): the recorded ones, their sizes modelled.",
      "probe['libraries'] = {p: {'real': p, 'bytes': 1000 + len(p)} for p in sorted((probe.get('cuobjdump') or {}).get('libs') or {})}",
      "probe['cuobjdump'] = dict(probe.get('cuobjdump') or {}, tool=tool or None) if tool is not None else None",
      "print(json.dumps(probe))",
      "",
    ].join("\n"),
  );
  writeFileSync(join(pkgs, "cuobjdump"), "#!/bin/sh\n# STAND-IN cuobjdump of the stand-in check: reads nothing.\nexit 0\n");
  writeFileSync(
    join(pkgs, "check.sh"),
    [
      "# STAND-IN static check (tests/proof.test.ts), shaped like pkgs/checks.nix's: probe, report, builder.",
      "mkdir -p $out",
      'printf \'{"system":"%s","hostname":"%s","kernel":"%s","cpu":"stand-in"}\\n\' "$system" "$(uname -n)" "$(uname -r)" > $out/builder.json',
      "$env/bin/python3 probe.py --cuobjdump=$cuobjdump > $out/probe.json",
      "touch $marker/built-check-$name",
      "if [ -e $marker/fail ]; then echo '✗ torch version: expected 2.12.0, found 2.11.0'; exit 1; fi",
      "printf '✓ torch version: 2.12.0\\n✓ CUDA: 12.8\\n✓ device code: sm_90 SASS in every library\\n%s: every promise holds\\n' \"$variant\" > $out/report.txt",
      "",
    ].join("\n"),
  );
  const env =
    `derivation {\n    name = "${NAME}-stand-in-${salt}";\n    system = builtins.currentSystem;\n    builder = "/bin/sh";\n    PATH = "/usr/bin:/bin";\n` +
    `    python3 = ./python3;\n    probe = ${PROBE};\n` +
    `    args = [ "-c" "touch ${marker}/built-${NAME}; mkdir -p $out/bin && cp $probe $out/probe.json && cp $python3 $out/bin/python3 && chmod +x $out/bin/python3" ];\n  }`;
  const cuobjdump = `derivation { name = "cuobjdump-stand-in-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; src = ./cuobjdump; args = [ "-c" "cp $src $out && chmod +x $out" ]; }`;
  writeFileSync(
    join(pkgs, `${NAME}.nix`),
    `{ ... }:\nlet\n  env = ${env};\n  cuobjdump = ${cuobjdump};\nin\nenv // {\n  tests.static = derivation {\n    name = "${NAME}-check-static-stand-in-${salt}";\n` +
      `    system = builtins.currentSystem;\n    builder = "/bin/sh";\n    PATH = "/usr/bin:/bin";\n    variant = "${NAME}";\n    marker = "${marker}";\n` +
      `    inherit env cuobjdump;\n    args = [ "-e" ./check.sh ];\n  };\n}\n`,
  );
  return pkgs;
}

/** A `cuobjdump` first on PATH that counts its runs in DIR/cuobjdump-calls (one line each). */
function countingCuobjdump(dir: string): { bin: string; calls: () => string[] } {
  const bin = join(dir, "counting-bin");
  mkdirSync(bin);
  const log = join(dir, "cuobjdump-calls");
  writeFileSync(join(bin, "cuobjdump"), `#!/bin/sh\necho "cuobjdump $*" >> ${log}\nexit 0\n`);
  chmodSync(join(bin, "cuobjdump"), 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []) };
}

/** Build each variant of `names` (result-NAME) and, unless `checks` is false for it, its check (proof-NAME) into `results`. */
function buildAll(pkgs: string, results: string, names: readonly string[]): Map<string, string> {
  const outs = new Map<string, string>();
  for (const n of names) outs.set(n, runNix("nix-build", [join(pkgs, `${n}.nix`), "-o", join(results, `result-${n}`)], { env: offline }).trim());
  return outs;
}

/** Build the static check of each of `names` (proof-NAME in `results`): @returns name → the proof's store path */
function buildChecks(pkgs: string, results: string, names: readonly string[]): Map<string, string> {
  return new Map(names.map((n) => [n, runNix("nix-build", [join(pkgs, `${n}.nix`), "-A", "tests.static", "-o", join(results, `proof-${n}`)], { env: offline }).trim()]));
}

/** The install of NAME from `pkgs` on a modelled H100 host, the team's cache (matrix `m`) the one substituter. */
async function installFromCache(dir: string, label: string, o: { m: string; pkgs: string; pk: string; countBin: string; features: string }) {
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, realNixTools: true, nixConf: { "system-features": o.features, substituters: CUDA.url, "require-sigs": "true", "trusted-public-keys": `${CUDA.publicKey} ${o.pk}` } });
  const env = { ...h.env, PATH: `${o.countBin}:${h.env.PATH}`, NIX_CONFIG: `substituters =\nrequire-sigs = true\ntrusted-public-keys = ${o.pk}` };
  const link = join(dir, `torch-env-${label}`);
  const args = ["install", NAME, "--dir", link, "--matrix", o.m, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", o.pkgs, "--logs-dir", join(dir, `logs-${label}`), "--plain", ...recorded];
  return { r: await runMain(args, { env: { ...(env as Record<string, string>), COLUMNS: "80" } }), link };
}

/** Remove GC roots (links) and delete store paths from this store, what refers to them first. */
function forget(links: readonly string[], paths: readonly string[]): void {
  for (const l of links) rmSync(l, { force: true });
  execFileSync("nix-store", ["--delete", ...paths], { stdio: "ignore" });
  for (const p of paths) assert.is(existsSync(p), false, `${p} deleted`);
}

/**
 * A team's first machine: a project whose matrix names a file:// cache with a fresh key (`keyName`), the STAND-IN
 * variants built into `results` with their dependencies, and the dependencies' static checks built (NAME's not).
 */
function publishedSetUp(prefix: string, keyName: string) {
  const { dir, marker } = markedBuildDir(prefix);
  const cache = join(dir, "cache");
  const { sk, pk } = makeKey(dir, keyName);
  const caches = [{ url: `file://${cache}`, publicKey: pk }];
  const m = writeMatrix(dir, { ...BASE, caches });
  const variant = projectFromMatrix({ ...BASE, caches } as never).variants.find((v) => v.name === NAME)!;
  const pkgs = standIn(variant.dependsOn, marker);
  const results = join(dir, "results");
  mkdirSync(results);
  const out = buildAll(pkgs, results, [...variant.dependsOn, NAME]).get(NAME)!;
  buildChecks(pkgs, results, variant.dependsOn);
  return { dir, marker, cache, sk, pk, m, variant, pkgs, results, out };
}

test("publish refuses an unproven variant (exit 2, why, --allow-unproven; cache untouched); a proven one goes with its proof, signed; install fetches both, prints the proof's summary and runs no cuobjdump", async () => {
  const { dir, marker, cache, sk, pk, m, variant, pkgs, results, out } = publishedSetUp("vm-proof-", "proof-test-1");
  const publish = (...more: string[]) => runMain(["publish", NAME, "--matrix", m, "--to", `file://${cache}`, "--out-dir", results, "--pkgs-dir", pkgs, "--secret-key-file", sk, ...more], { env: { ...offline, COLUMNS: "80" } });

  // 1. Built, its check not: refused, nothing copied.
  const refused = await publish();
  assert.is(refused.status, 2, refused.stdout + refused.stderr);
  assert.match(flat(refused.stderr), `1 variant(s) not proven, so nothing was copied`);
  assert.match(flat(refused.stderr), new RegExp(`${NAME}: its static check has not passed here \\(/nix/store/\\S+-${NAME}-check-static-stand-in-\\S+ is not in the store`));
  assert.match(flat(refused.stderr), /publish them unproven with --allow-unproven/);
  // At 80 columns: the checks' build on a line of its own, to copy; every line fits.
  assert.match(refused.stderr, /^ {2}\$ npx variant-matrix build /m);
  assert.ok(flat(refused.stderr).includes(`$ npx variant-matrix build ${NAME}`), refused.stderr);
  fits80(refused.stderr);
  assert.is(existsSync(join(cache, "nix-cache-info")), false, "the cache is untouched");
  // The dry run says which is which: the three it is built on proven (their stand-in checks built), NAME not.
  const dryUnproven = await publish("--dry-run");
  assert.is(dryUnproven.status, 0, dryUnproven.stderr);
  for (const d of variant.dependsOn) assert.match(flat(dryUnproven.stdout), new RegExp(`proven ${d}: its proof /nix/store/\\S+-${d}-check-static-stand-in-\\S+ goes with it`));
  assert.match(flat(dryUnproven.stdout), `unproven ${NAME}: its static check has not passed here`);
  assert.match(flat(dryUnproven.stdout), "(publish refuses it: --allow-unproven publishes it with a mark that says so)");
  fits80(dryUnproven.stdout);
  // Its check failing (the same derivation: MARKER/fail read at build time) leaves no proof: still refused.
  writeFileSync(join(marker, "fail"), "");
  assert.throws(() => runNix("nix-build", [join(pkgs, `${NAME}.nix`), "-A", "tests.static", "--no-out-link"], { env: offline }), /torch version: expected 2\.12\.0/);
  // (Its builder's mark too: the next build may run as another build user, who may not touch that file.)
  for (const f of readdirSync(marker)) rmSync(join(marker, f));
  assert.is((await publish()).status, 2);

  // 2. The check built (its out is the proof): the dry run says proven, publish copies the variant and the proof, signed.
  const proof = runNix("nix-build", [join(pkgs, `${NAME}.nix`), "-A", "tests.static", "-o", join(results, `proof-${NAME}`)], { env: offline }).trim();
  const dry = await publish("--dry-run");
  assert.is(dry.status, 0, dry.stderr);
  assert.match(flat(dry.stdout), `proven ${NAME}: its proof ${proof} goes with it`);
  assert.ok(flat(dry.stdout).includes(`$ nix copy --to file://${cache} ${proof}`), dry.stdout);
  const pub = await publish("--json");
  assert.is(pub.status, 0, pub.stdout + pub.stderr);
  const all = (JSON.parse(pub.stdout) as { report: { name: string; role: string; outPath: string; status: string; paths: { path: string; status: string; trusted: boolean }[] }[] }).report;
  // What NAME is built on first, each with its proof; then NAME and its proof.
  assert.equal(all.map((r) => [r.name, r.role]), [...variant.dependsOn, NAME].flatMap((n) => [[n, "variant"], [n, "proof"]]));
  const report = all.filter((r) => r.name === NAME);
  assert.equal(report.map((r) => [r.role, r.outPath, r.status]), [["variant", out, "copied"], ["proof", proof, "copied"]]);
  const paths = report.flatMap((r) => r.paths);
  assert.ok(paths.some((p) => p.path === proof) && paths.every((p) => p.trusted && p.status === "copied"), JSON.stringify(paths));
  nix(["store", "verify", "--store", `file://${cache}`, "--no-contents", "--sigs-needed", "1", "--option", "trusted-public-keys", pk, out, proof]);
  const proofInfo = readFileSync(join(cache, `${proof.slice("/nix/store/".length, "/nix/store/".length + 32)}.narinfo`), "utf8");
  assert.match(proofInfo, /^Sig: proof-test-1:/m);

  // 3. Gone from this store; install fetches the variant and its proof, shows it, and verify reads no device code.
  forget([join(results, `result-${NAME}`), join(results, `proof-${NAME}`)], [proof, out]);
  for (const f of readdirSync(marker)) rmSync(join(marker, f));
  const count = countingCuobjdump(dir);
  const { r, link } = await installFromCache(dir, "proven", { m, pkgs, pk, countBin: count.bin, features: variant.requiredSystemFeatures.join(" ") });
  assert.ok(r.status === 0 || r.status === 1, r.stdout + r.stderr);
  const text = flat(r.stdout);
  assert.match(text, `${NAME} is fetchable from a substituter (${out}): nothing to build`);
  assert.match(text, `proof of ${NAME}: ${proof} (fetched from a substituter; its static check ran on host `);
  assert.match(text, /, x86_64-linux, kernel \S+, stand-in; device code read by \/nix\/store\/\S+-cuobjdump-stand-in-\S+\); verify runs only what needs this host:/);
  assert.match(r.stdout, /^ {2}✓ device code: sm_90 SASS in every library$/m);
  assert.match(r.stdout, new RegExp(`^  ${NAME}: every promise holds$`, "m"));
  assert.equal(readdirSync(marker), [], "fetched, not built: neither the variant's builder nor its check's ran");
  assert.ok(existsSync(proof), "the proof is in the store");
  assert.is(realpathSync(link), out);
  assert.equal(count.calls(), [], "install's verify ran no cuobjdump: the proof holds the device code");
  // At 80 columns the proof's path is printed once (its summary), and verify's use of it refers to it.
  assert.is(r.stdout.split(proof).length - 1, 1, r.stdout);
  assert.match(r.stdout, /^device code judged from that proof: cuobjdump did not run here$/m);
  forget([link], [proof, out]);
});

test("publish --allow-unproven marks the variant unproven in the cache (signed), and install says so; without the mark install says there is no proof", async () => {
  const { dir, marker, cache, sk, pk, m, variant, pkgs, results, out } = publishedSetUp("vm-proof-unproven-", "proof-test-2");
  const mark = unprovenMarker(NAME, out).path;
  const pub = await runMain(["publish", NAME, "--matrix", m, "--to", `file://${cache}`, "--out-dir", results, "--pkgs-dir", pkgs, "--secret-key-file", sk, "--allow-unproven"], { env: { ...offline, COLUMNS: "80" } });
  assert.is(pub.status, 0, pub.stdout + pub.stderr);
  // At 80 columns each copy's line is laid out under its head: the status and what was copied, then its path.
  assert.match(pub.stdout, new RegExp(`^copied  ${NAME}\\n {8}${out}\\n {8}file://`, "m"));
  assert.match(pub.stdout, new RegExp(`^copied  ${NAME} unproven \\(its marker\\)\\n {8}${mark}\\n`, "m"));
  fits80(pub.stdout);
  nix(["store", "verify", "--store", `file://${cache}`, "--no-contents", "--sigs-needed", "1", "--option", "trusted-public-keys", pk, out, mark]);
  // Another cache holds the variant without any mark (copied by hand, signed).
  const bare = join(dir, "bare");
  nix(["copy", "--to", `file://${bare}?secret-key=${sk}`, out]);
  forget([join(results, `result-${NAME}`)], [mark, out]);

  const count = countingCuobjdump(dir);
  const features = variant.requiredSystemFeatures.join(" ");
  const a = await installFromCache(dir, "unproven", { m, pkgs, pk, countBin: count.bin, features });
  assert.ok(a.r.status === 0 || a.r.status === 1, a.r.stdout + a.r.stderr);
  assert.match(flat(a.r.stdout), `${NAME} was published unproven (publish --allow-unproven: its cache holds the mark ${mark}, no proof): verify checks everything here, cuobjdump included`);
  assert.ok(count.calls().length > 0, "verify read the device code itself");
  forget([a.link], [mark, out]);

  const mBare = writeMatrix(join(dir, "results"), { ...BASE, caches: [{ url: `file://${bare}`, publicKey: pk }] });
  const b = await installFromCache(dir, "bare", { m: mBare, pkgs, pk, countBin: count.bin, features });
  assert.ok(b.r.status === 0 || b.r.status === 1, b.r.stdout + b.r.stderr);
  assert.match(flat(b.r.stdout), `no proof of ${NAME}: no substituter holds its proof `);
  assert.match(flat(b.r.stdout), "or a mark that it was published unproven; verify checks everything here, cuobjdump included");
  assert.not.match(b.r.stdout, /published unproven \(/);
  forget([b.link], [out]);
});

test("publish refuses a variant whose result link is another build than its file gives now (its check proves that one): exit 2, why; built again, it goes", async () => {
  const { dir, marker } = markedBuildDir("vm-proof-stale-");
  const cache = join(dir, "cache");
  const m = writeMatrix(dir, { ...BASE, caches: [] });
  const variant = projectFromMatrix({ ...BASE, caches: [] } as never).variants.find((v) => v.name === NAME)!;
  const pkgs = standIn(variant.dependsOn, marker);
  const results = join(dir, "results");
  mkdirSync(results);
  const old = buildAll(pkgs, results, [...variant.dependsOn, NAME]).get(NAME)!;
  // The file changes after the build (another environment: its name), and only the check is built anew.
  const file = join(pkgs, `${NAME}.nix`);
  writeFileSync(file, readFileSync(file, "utf8").replace(`"${NAME}-stand-in-`, `"${NAME}-changed-stand-in-`));
  const proof = buildChecks(pkgs, results, [...variant.dependsOn, NAME]).get(NAME)!;
  const publish = () => runMain(["publish", NAME, "--matrix", m, "--to", `file://${cache}`, "--out-dir", results, "--pkgs-dir", pkgs], { env: { ...offline, COLUMNS: "80" } });
  const r = await publish();
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(flat(r.stderr), `${NAME}: its result link is another build (${old}) than its file gives now (/nix/store/`);
  assert.match(flat(r.stderr), `-${NAME}-changed-stand-in-`);
  assert.match(flat(r.stderr), `and its static check proves that one: build ${NAME} again`);
  assert.is(existsSync(join(cache, "nix-cache-info")), false, "nothing copied");
  fits80(r.stderr);
  // Built again from the file as it is: its result link is the build the proof is of, and it goes.
  const now = buildAll(pkgs, results, [NAME]).get(NAME)!;
  const ok = await publish();
  assert.is(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(flat(ok.stdout), `copied ${NAME} ${now} file://`);
  assert.match(flat(ok.stdout), `copied ${NAME}'s proof ${proof} file://`);
});

for (const [signal, to, exit] of [["SIGINT", "its process group", 130], ["SIGTERM", "its process alone", 143]] as const)
test(`publish --to interrupted (${signal} to ${to}) while it copies a proof: exit ${exit}, the copy ended, what was and was not copied said; the same publish again finishes`, async () => {
  const { dir, marker } = markedBuildDir("vm-proof-interrupt-");
  const cache = join(dir, "cache");
  const { sk, pk } = makeKey(dir, `proof-test-3-${signal}`);
  const caches = [{ url: `file://${cache}`, publicKey: pk }];
  const m = writeMatrix(dir, { ...BASE, caches });
  const variant = projectFromMatrix({ ...BASE, caches } as never).variants.find((v) => v.name === NAME)!;
  const pkgs = standIn(variant.dependsOn, marker);
  const results = join(dir, "results");
  mkdirSync(results);
  const out = buildAll(pkgs, results, [...variant.dependsOn, NAME]).get(NAME)!;
  const proof = buildChecks(pkgs, results, [...variant.dependsOn, NAME]).get(NAME)!;
  // A `nix` first on PATH: the real one, but the copy of NAME's proof (the run's last) hangs until a signal ends it.
  const bin = join(dir, "nix-bin");
  mkdirSync(bin);
  const log = join(dir, "nix-calls");
  const realNix = execFileSync("sh", ["-c", "command -v nix"], { encoding: "utf8" }).trim();
  writeFileSync(join(bin, "nix"), `#!/bin/sh\ncase "$*" in *" copy "*${proof}*) echo "hang $$" >> ${log}; exec sleep 600;; esac\nexec ${realNix} "$@"\n`);
  chmodSync(join(bin, "nix"), 0o755);
  const args = ["publish", NAME, "--matrix", m, "--to", `file://${cache}`, "--out-dir", results, "--pkgs-dir", pkgs, "--secret-key-file", sk];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, detached: true, env: { ...process.env, ...offline, PATH: `${bin}:${process.env.PATH}`, COLUMNS: "80", NO_COLOR: "1" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const closed = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  const started = Date.now();
  while (!(existsSync(log) && readFileSync(log, "utf8").includes("hang"))) {
    assert.ok(Date.now() - started < 300_000, `the proof's copy started: ${stdout}${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const hung = Number(/hang (\d+)/.exec(readFileSync(log, "utf8"))![1]);
  // To the group, the hung copy gets the signal too; to publish alone, publish must end it.
  process.kill(to === "its process group" ? -child.pid! : child.pid!, signal);
  const code = await closed;
  // The hung copy must have been ended (ended here if not, so that a failing run leaves no process behind).
  const alive = (() => {
    try {
      process.kill(hung, 0);
      return true;
    } catch {
      return false;
    }
  })();
  if (alive) process.kill(hung, "SIGKILL");
  assert.is(alive, false, "the hung nix copy was ended");
  assert.is(code, exit, stdout + stderr);
  assert.match(flat(stderr), `publish: interrupted (${signal}) after 7 of 8 copies: file://${cache} may hold a variant without its proof or unproven mark`);
  assert.match(flat(stderr), "run the same publish again to finish");
  assert.match(flat(stdout), `interrupted ${NAME}'s proof ${proof} not copied: publish was interrupted (${signal})`);
  fits80(stdout);
  fits80(stderr);
  const narinfo = (p: string) => join(cache, `${p.slice("/nix/store/".length, "/nix/store/".length + 32)}.narinfo`);
  assert.ok(existsSync(narinfo(out)), "the variant was copied before the signal");
  assert.is(existsSync(narinfo(proof)), false, "its proof was not");
  // The same publish again: the rest is copied, the proof beside its variant.
  const again = await runMain(args, { env: offline });
  assert.is(again.status, 0, again.stdout + again.stderr);
  assert.ok(existsSync(narinfo(proof)), "the proof is in the cache");
});

test.run();
