/**
 * A team cache serves what the plan says (issue 63): signatures, with the real Nix 2.8.
 *
 * - cache-signatures.ts against Nix itself: its base-32 is `nix hash to-base32`'s, a signature `nix copy
 *   ?secret-key=` wrote verifies with Ed25519 over the fingerprint, and one changed byte of the path's data or a key of
 *   another name does not; a secret key file's public half is `nix key convert-secret-to-public`'s; an unsigned copy
 *   in a team cache is named unless `?trusted=1`, a signed copy elsewhere or require-sigs = false accepts it; publish's
 *   key comes from --secret-key-file, the URL or matrix.ts, and one matrix.ts does not give consumers is refused.
 * - End to end: a STAND-IN environment whose output refers to its three dependencies (4 paths, as a user measured) is
 *   built in this machine's store; one dependency goes to a file:// cache unsigned (`publish --to` without a key: it
 *   says so), then `nix copy --to file://…?secret-key=` of the environment signs the other three and leaves that one
 *   unsigned (Nix does not rewrite a narinfo it finds). The cache is served over HTTP (python3 -m http.server, killed
 *   by its pid), and a SECOND store (a chroot store, `store = DIR` in NIX_CONFIG, require-sigs, the key trusted):
 *   Nix's dry run alone says 4 to fetch; install's plan (and build --dry-run's) says 1 to build, naming the unsigned
 *   one, and the real install says so before it builds, then builds exactly that one (each builder leaves a marker)
 *   and fetches the other three.
 *   `publish` with the key (matrix.ts `caches` secretKeyFile) re-signs it in place and says so per path; every
 *   narinfo of the cache then carries a signature by the key (`nix store verify` agrees), a publish again says
 *   "already signed" for each, and in a THIRD store the plan is 0 to build and install fetches all 4: no builder runs.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { checkSignatures, narHashBase32, nixBase32, publicKeys, queryCache, readSigningKey, untrustedFetches, untrustedWhy, withoutStoreUrlParam, withStoreUrlParam } from "../generator/driver/cache-signatures.ts";
import { signingKeyFor } from "../generator/driver/publish.ts";
import { nixAnswerLine } from "../generator/driver/ask-nix.ts";
import { InputError } from "../generator/errors.ts";
import { catalog } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { makeHost } from "./helpers/host-model.ts";
import { newSalt } from "./helpers/driver.ts";
import { markedBuildDir, runNix } from "./helpers/nix.ts";

const CUDA = cudaCacheSubstituter(catalog);
const NAME = "torch-env-python313-cuda12_8-sm90-avx512bf16";
const BASE = { releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512bf16"], cpuOnly: false };
const recorded = ["--cpuinfo", join(ROOT, "tests/fixtures/hosts/spr-h100/cpuinfo"), "--nvidia-smi", join(ROOT, "tests/fixtures/hosts/spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];
const nix = (args: string[], input?: string) =>
  execFileSync("nix", ["--extra-experimental-features", "nix-command", ...args], { encoding: "utf8", input, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], env: { ...process.env, NIX_CONFIG: "substituters =" } }).trim();
const re = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** A secret key file and its public key (`nix key generate-secret`, `convert-secret-to-public`). */
function makeKey(dir: string, name: string): { sk: string; pk: string } {
  const sk = join(dir, `${name}.sk`);
  writeFileSync(sk, nix(["key", "generate-secret", "--key-name", name]));
  return { sk, pk: nix(["key", "convert-secret-to-public"], readFileSync(sk, "utf8")) };
}

/** Two tiny derivations, `top` referring to `dep`, built in this machine's store: their output paths. */
function buildPair(dir: string): { top: string; dep: string } {
  const salt = newSalt();
  const file = join(dir, "pair.nix");
  writeFileSync(
    file,
    `let dep = derivation { name = "dep-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; args = [ "-c" "echo dep > $out" ]; };\n` +
      `in derivation { name = "top-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; inherit dep; args = [ "-c" "echo $dep > $out" ]; }\n`,
  );
  const top = runNix("nix-build", [file, "--no-out-link"], { env: { NIX_CONFIG: "substituters =" } }).trim();
  return { top, dep: runNix("nix-store", ["--query", "--references", top]).trim() };
}

test("cache-signatures: Nix's base-32, a signature nix copy wrote verifies, a changed path or another key's name does not", async () => {
  const dir = tempDir("vm-sigs-");
  const { sk, pk } = makeKey(dir, "sigs-test-1");
  assert.is(readSigningKey(sk, "--secret-key-file").publicKey, pk, "the public half of the secret key is Nix's");
  const { top, dep } = buildPair(dir);
  const sri = nix(["path-info", "--json", top]).match(/"narHash":"([^"]+)"/)![1]!;
  assert.is(narHashBase32(sri), `sha256:${nix(["hash", "to-base32", sri])}`);
  const hex = createHash("sha256").update("variant-matrix").digest("hex");
  assert.is(nixBase32(Buffer.from(hex, "hex")), nix(["hash", "to-base32", "--type", "sha256", hex]));
  const cache = join(dir, "cache");
  nix(["copy", "--to", `file://${cache}?secret-key=${sk}`, top]);
  const held = await queryCache(`file://${cache}`, [top, dep, "/nix/store/00000000000000000000000000000000-absent"]);
  assert.ok(!("error" in held), JSON.stringify(held));
  if ("error" in held) return;
  assert.is(held.get("/nix/store/00000000000000000000000000000000-absent"), null, "absent: null");
  const info = held.get(top)!;
  assert.equal(info.references, [dep]);
  const keys = publicKeys([pk]);
  assert.equal(checkSignatures(info, keys).valid, ["sigs-test-1"]);
  assert.is(untrustedWhy(info, keys), null);
  assert.match(untrustedWhy({ ...info, narSize: info.narSize + 1 }, keys)!, /signature by sigs-test-1 does not verify/);
  assert.match(untrustedWhy({ ...info, references: [] }, keys)!, /does not verify/, "the references are signed too");
  assert.match(untrustedWhy(info, publicKeys([makeKey(dir, "other-1").pk]))!, /signed by sigs-test-1 only, a key this host does not trust/);
  assert.is(untrustedWhy({ ...info, signatures: [] }, keys), "unsigned");
  // untrustedFetches: an unsigned copy is named with where and why, its deriver given; ?trusted=1 (as Nix takes it),
  // a signed copy in another team cache, or require-sigs = false accept it; a path no team cache holds is Nix's answer.
  const bare = join(dir, "bare");
  nix(["copy", "--to", `file://${bare}`, top]);
  const policy = (requireSigs: boolean) => async () => ({ requireSigs, trustedKeys: [pk] });
  const asked = [top, dep, "/nix/store/00000000000000000000000000000000-absent"];
  const none = await untrustedFetches(asked, [{ url: `file://${bare}`, publicKey: pk }], [], policy(true));
  assert.equal(none.map((u) => [u.path, u.where]).sort(), [[dep, `unsigned in file://${bare}`], [top, `unsigned in file://${bare}`]].sort());
  assert.match(none.find((u) => u.path === top)!.deriver!, /^\/nix\/store\/[0-9a-z]{32}-top-\S+\.drv$/);
  assert.equal(await untrustedFetches(asked, [{ url: `file://${bare}?trusted=1`, publicKey: pk }], [], policy(true)), []);
  // …and the plan's Nix line names ?trusted=1 as what turned the checks off (a URL without it: nothing said).
  const answer = { asked: true as const, toBuild: 0, toFetch: 2, answered: 1, of: 1, unreachable: [] as string[], untrusted: [], seconds: 0.1 };
  assert.match(
    nixAnswerLine({ ...answer, fromCaches: [{ url: `file://${bare}?trusted=1`, paths: 2 }] }, "m"),
    `; ?trusted=1 in file://${bare}?trusted=1 turns off Nix's signature checks for it: its paths are fetched signed or not`,
  );
  assert.not.match(nixAnswerLine({ ...answer, fromCaches: [{ url: `file://${bare}`, paths: 2 }] }, "m"), /trusted=1/);
  assert.equal(await untrustedFetches(asked, [{ url: `file://${bare}`, publicKey: pk }, { url: `file://${cache}`, publicKey: pk }], [], policy(true)), []);
  assert.equal(await untrustedFetches(asked, [{ url: `file://${bare}`, publicKey: pk }], [], policy(false)), []);
  // publish's key must be the one matrix.ts gives the cache's consumers (exit 2 otherwise), and is read from a file only.
  const other = makeKey(dir, "other-2");
  const caches = [{ url: `file://${cache}/`, publicKey: pk, secretKeyFile: "sigs-test-1.sk" }];
  assert.is(signingKeyFor(`file://${cache}`, undefined, caches, dir).signing!.name, "sigs-test-1", "matrix.ts secretKeyFile, relative to matrix.ts");
  assert.is(signingKeyFor(`file://${cache}?secret-key=${other.sk}`, undefined, [], dir).signing!.from, "the store URL's secret-key=");
  assert.throws(
    () => signingKeyFor(`file://${cache}`, other.sk, caches, dir),
    (e: Error) => e instanceof InputError && e.message.includes(`signs as ${other.pk}, but matrix.ts \`caches\` gives consumers of file://${cache} the key ${pk}`),
  );
  // The key reaches nix copy as the URL's secret-key=, the user's other parameters kept as written.
  assert.is(withStoreUrlParam("s3://b?region=eu&endpoint=https://x.example/y", "secret-key", "/k/team.sk"), "s3://b?region=eu&endpoint=https://x.example/y&secret-key=/k/team.sk");
  assert.is(withStoreUrlParam("file:///c?secret-key=/old.sk&trusted=1", "secret-key", "/k/team.sk"), "file:///c?trusted=1&secret-key=/k/team.sk");
  assert.is(withoutStoreUrlParam("file:///c?secret-key=/old.sk", "secret-key"), "file:///c");
  // A Nix secret key file is checked, its contents never shown.
  writeFileSync(join(dir, "bad.sk"), "sigs-test-1:c2hvcnQ=\n");
  assert.throws(() => readSigningKey(join(dir, "bad.sk"), "--secret-key-file"), (e: Error) => /not a Nix secret key/.test(e.message) && !e.message.includes("c2hvcnQ"));
});

/** A free TCP port on 127.0.0.1 (bound and released). */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** `python3 -m http.server` serving `dir` on 127.0.0.1:`port`, once it answers nix-cache-info. */
async function serve(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", dir], { stdio: "ignore" });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/nix-cache-info`)).ok) return child;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`http.server on ${port} did not answer`);
}

/**
 * A --pkgs-dir: each dependency a tiny derivation, and NAME a STAND-IN environment whose output refers to all of them
 * (its closure: 4 paths). Each builder touches MARKER/built-<its name> (outside the store: the sandbox is off in this
 * machine's store, and the second stores' sandbox is given MARKER), so a test sees what was built where.
 */
/** A STAND-IN static check of `name` (a Nix expression; nothing is probed): $out holds probe.json and report.txt. */
function standInCheck(name: string, salt: string): string {
  const script = `mkdir -p $out && echo '{}' > $out/probe.json && echo '${name}: every promise holds (stand-in check)' > $out/report.txt`;
  return `derivation { name = "${name}-check-static-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" ${JSON.stringify(script)} ]; }`;
}

function standIn(deps: readonly string[], marker: string): string {
  const pkgs = tempDir("vm-signed-pkgs-");
  const salt = newSalt();
  for (const d of deps)
    writeFileSync(join(pkgs, `${d}.nix`), `derivation { name = "${d}-stand-in-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" "touch ${marker}/built-${d}; echo ${d} > $out" ]; } // { tests.static = ${standInCheck(d, salt)}; }\n`);
  const probe = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/probe.json");
  writeFileSync(
    join(pkgs, `${NAME}.nix`),
    `derivation {\n  name = "${NAME}-stand-in-${salt}";\n  system = builtins.currentSystem;\n  builder = "/bin/sh";\n  PATH = "/usr/bin:/bin";\n` +
      `  deps = [ ${deps.map((d) => `(import ${join(pkgs, `${d}.nix`)})`).join(" ")} ];\n  probe = builtins.readFile ${JSON.stringify(probe)};\n` +
      `  args = [ "-c" "touch ${marker}/built-${NAME}; mkdir -p $out/bin && echo $deps > $out/deps && printf '#!/bin/sh\\\\ncat <<\\\\EOF\\\\n%s\\\\nEOF\\\\n' \\"$probe\\" > $out/bin/python3 && chmod +x $out/bin/python3" ];\n} // { tests.static = ${standInCheck(NAME, salt)}; }\n`,
  );
  return pkgs;
}

/** The markers the stand-in builders left (their names, sorted), and none left after. */
function takeMarkers(marker: string): string[] {
  const built = readdirSync(marker).sort();
  for (const f of built) rmSync(join(marker, f));
  return built;
}

/**
 * A consumer host: a STAND-IN `nix show-config` (the public CUDA cache configured, for doctor's check; require-sigs;
 * the team's key trusted), and the real Nix tools on a store of its own (`store = DIR`, a chroot store; its sandbox
 * given /bin, /usr, /lib and the marker directory), with a fresh HOME (so a fresh narinfo disk cache).
 */
function consumer(dir: string, label: string, o: { pk: string; marker: string; matrix: string; pkgs: string; features: string }) {
  const h = makeHost({
    recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, realNixTools: true,
    nixConf: { "system-features": o.features, substituters: CUDA.url, "require-sigs": "true", "trusted-public-keys": `${CUDA.publicKey} ${o.pk}` },
  });
  const store = join(dir, `store-${label}`);
  const nixConfig = [`store = ${store}`, "substituters =", "require-sigs = true", `trusted-public-keys = ${o.pk}`, `sandbox-paths = /bin /usr /lib /lib64 ${o.marker}`].join("\n");
  const env = { ...h.env, NIX_CONFIG: nixConfig };
  const link = join(dir, `torch-env-${label}`);
  const args = ["install", "--dir", link, "--matrix", o.matrix, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", o.pkgs, "--logs-dir", join(dir, `logs-${label}`), "--plain", ...recorded];
  return { env, args, store, link, nixConfig };
}

test("a signed team cache over HTTP, read by a second store with require-sigs: an unsigned dependency is planned and built, publish re-signs it, then install fetches all 4 paths", async () => {
  const { dir, marker } = markedBuildDir("vm-signed-");
  const cache = join(dir, "cache");
  const { sk, pk } = makeKey(dir, "team-signed-1");
  const port = await freePort();
  const http = `http://127.0.0.1:${port}`;
  // The consumers' matrix reads the cache over HTTP; the publishing machine's writes its directory, with the key's file.
  const mUse = writeMatrix(join(dir), { ...BASE, caches: [{ url: http, publicKey: pk }] });
  mkdirSync(join(dir, "pub"));
  writeFileSync(join(dir, "pub", "team.sk"), readFileSync(sk));
  const mPub = writeMatrix(join(dir, "pub"), { ...BASE, caches: [{ url: `file://${cache}`, publicKey: pk, secretKeyFile: "team.sk" }] });
  const variant = projectFromMatrix(BASE as never).variants.find((v) => v.name === NAME)!;
  assert.is(variant.dependsOn.length, 3);
  const pkgs = standIn(variant.dependsOn, marker);
  const results = join(dir, "results");
  mkdirSync(results);
  const offline = { NIX_CONFIG: "substituters =" };
  for (const n of [...variant.dependsOn, NAME]) runNix("nix-build", [join(pkgs, `${n}.nix`), "-o", join(results, `result-${n}`)], { env: offline });
  assert.equal(takeMarkers(marker), [...variant.dependsOn, NAME].map((n) => `built-${n}`).sort(), "each builder leaves its marker when it builds");
  const out = readlinkSync(join(results, `result-${NAME}`));
  const closure = runNix("nix-store", ["--query", "--requisites", out]).trim().split("\n");
  assert.is(closure.length, 4, closure.join("\n"));
  const [unsignedName] = variant.dependsOn;
  const unsigned = readlinkSync(join(results, `result-${unsignedName}`));

  // One dependency published without a key: copied, and said so (no key, none named for this URL).
  // The stand-ins carry no static check: published --allow-unproven, each with its unproven marker (tests/proof.test.ts).
  const unproven = ["--pkgs-dir", pkgs, "--allow-unproven"];
  const raw = await runMain(["publish", unsignedName!, "--matrix", mUse, "--to", `file://${cache}`, "--out-dir", results, ...unproven, "--json"], { env: offline });
  assert.is(raw.status, 0, raw.stdout + raw.stderr);
  const rawReport = (JSON.parse(raw.stdout) as { report: { role: string; paths: unknown[] }[] }).report;
  assert.equal(rawReport.map((r) => r.role), ["variant", "unproven"]);
  assert.equal(rawReport[0]!.paths, [{ path: unsigned, status: "copied", trusted: null, detail: "no signature" }]);
  assert.match(raw.stderr, `publish: 2 of 2 path(s) in file://${cache} carry no signature, and no key was given`);
  // The rest with nix copy's own ?secret-key=: Nix signs what it writes and leaves the narinfo it found unsigned.
  nix(["copy", "--to", `file://${cache}?secret-key=${sk}`, out]);
  const narinfo = (p: string) => readFileSync(join(cache, `${p.slice("/nix/store/".length, "/nix/store/".length + 32)}.narinfo`), "utf8");
  assert.not.match(narinfo(unsigned), /^Sig:/m, "nix copy did not rewrite the unsigned narinfo");
  assert.match(narinfo(out), /^Sig: team-signed-1:/m);

  const server = await serve(cache, port);
  try {
    const setup = { pk, marker, matrix: mUse, pkgs, features: variant.requiredSystemFeatures.join(" ") };
    const before = consumer(dir, "before", setup);
    // Nix's dry run alone, in the second store: all 4 to fetch (it does not look at signatures).
    const drv = runNix("nix-instantiate", [join(pkgs, `${NAME}.nix`)], { env: { NIX_CONFIG: before.nixConfig } }).trim();
    const dryNix = execFileSync("sh", ["-c", `nix-store --realise --dry-run "$1" --option substituters "$2" 2>&1`, "sh", drv, http], { encoding: "utf8", env: { ...process.env, NIX_CONFIG: before.nixConfig } });
    assert.match(dryNix, /these 4 paths will be fetched/);
    // The plan: the unsigned one to build, named, the other three to fetch.
    // (The 4 stand-in static checks are built here too, the proofs of what install builds: 5 to build.)
    const unsignedLine = new RegExp(`asked Nix \\(nix-store --realise --dry-run, [\\d.]+ s\\): 5 to build \\(1 unsigned in ${re(http)}: ${unsignedName}-stand-in-\\S+; Nix builds what it cannot verify\\), 3 to fetch from ${re(http)}`);
    const plan = await runMain([...before.args, "--dry-run"], { env: before.env });
    assert.is(plan.status, 0, plan.stdout + plan.stderr);
    assert.match(plan.stdout.replace(/\s+/g, " "), unsignedLine, plan.stdout);
    // The headline counts what Nix does: torch (unsigned) to build, the three variants on it fetched.
    assert.match(plan.stdout, /^plan: 1 of 4 variant\(s\) to build, 3 to fetch;/m, plan.stdout);
    assert.match(plan.stdout.replace(/\s+/g, " "), /wait \S+ until the last variant is ready: pytorch \S+ on 1 core, static check 2 × 2m00s/);
    // build --dry-run plans the same.
    const buildPlan = await runMain(["build", "--dry-run", NAME, "--matrix", mUse, "--pkgs-dir", pkgs, "--backend", "nix", "--plain"], { env: before.env });
    assert.is(buildPlan.status, 0, buildPlan.stdout + buildPlan.stderr);
    assert.match(buildPlan.stdout.replace(/\s+/g, " "), unsignedLine);
    assert.equal(takeMarkers(marker), [], "a dry run builds nothing");
    // The real install says so before it builds, and then Nix builds exactly that one and fetches the rest.
    const built = await runMain(before.args, { env: before.env });
    assert.ok(built.status === 0 || built.status === 1, built.stdout + built.stderr);
    assert.match(built.stderr.replace(/\s+/g, " "), unsignedLine);
    assert.equal(takeMarkers(marker), [`built-${unsignedName}`], "the unsigned dependency was built, the signed paths fetched");
    assert.is(readlinkSync(before.link), out);

    // publish with the key of matrix.ts caches (secretKeyFile, relative to it): re-signs the one, the rest already signed.
    const pub = await runMain(["publish", NAME, "--matrix", mPub, "--out-dir", results, ...unproven, "--json"], { env: offline });
    assert.is(pub.status, 0, pub.stdout + pub.stderr);
    const report = JSON.parse(pub.stdout) as { report: { name: string; role: string; paths: { path: string; status: string; trusted: boolean }[] }[] };
    // The 4 unproven markers, one per variant: the unsigned dependency's was copied unsigned above, and is re-signed too.
    const markers = report.report.filter((r) => r.role === "unproven").flatMap((r) => r.paths);
    assert.is(markers.length, 4);
    assert.ok(markers.every((p) => p.trusted && p.status === (p.path === rawReport[1]!.paths.map((x) => (x as { path: string }).path)[0] ? "re-signed" : "copied")), JSON.stringify(markers));
    const paths = report.report.filter((r) => r.role === "variant").flatMap((r) => r.paths);
    assert.equal(paths.map((p) => p.path).sort(), [...closure].sort(), "every path of the closure, each once");
    assert.equal(paths.filter((p) => p.status === "re-signed").map((p) => p.path), [unsigned]);
    assert.equal(paths.filter((p) => p.status !== "re-signed").map((p) => p.status), ["already signed", "already signed", "already signed"]);
    assert.ok(paths.every((p) => p.trusted));
    // Every narinfo of the cache is signed by the key: read as files, and as Nix verifies them.
    const infos = readdirSync(cache).filter((f) => f.endsWith(".narinfo"));
    assert.is(infos.length, 8, "4 paths of the closure, 4 unproven markers");
    for (const f of infos) assert.match(readFileSync(join(cache, f), "utf8"), /^Sig: team-signed-1:/m, f);
    nix(["store", "verify", "--store", `file://${cache}`, "--no-contents", "--sigs-needed", "1", "--option", "trusted-public-keys", pk, ...closure]);
    // Published again: nothing to copy or sign, each path said so.
    const again = await runMain(["publish", NAME, "--matrix", mPub, "--out-dir", results, ...unproven], { env: offline });
    assert.is(again.status, 0, again.stdout + again.stderr);
    assert.is(again.stdout.split("\n").filter((l) => /^ {2}already signed +\/nix\/store\/\S+ {2}signatures: team-signed-1$/.test(l)).length, 8, again.stdout);

    // A third store: the plan is 0 to build, and install fetches all 4 paths (no builder runs).
    const after = consumer(dir, "after", setup);
    const plan2 = await runMain([...after.args, "--dry-run"], { env: after.env });
    assert.is(plan2.status, 0, plan2.stdout + plan2.stderr);
    assert.match(plan2.stdout.replace(/\s+/g, " "), new RegExp(`: 0 to build, 4 to fetch from ${re(http)}`));
    // The headline above it says the same: no "1 of 1 to build" over Nix's "0 to build".
    assert.match(plan2.stdout, /^plan: 0 of 4 variant\(s\) to build, 4 to fetch;/m, plan2.stdout);
    assert.match(plan2.stdout.replace(/\s+/g, " "), /wait 0\.0s until the last variant is ready: nothing to build/);
    const real = await runMain(after.args, { env: after.env });
    assert.ok(real.status === 0 || real.status === 1, real.stdout + real.stderr);
    assert.match(real.stdout.replace(/\s+/g, " "), new RegExp(`${NAME} is fetchable from a substituter \\(${re(out)}\\): nothing to build`));
    assert.is(readlinkSync(after.link), out);
    for (const p of closure) runNix("nix-store", ["--check-validity", p], { env: { NIX_CONFIG: after.nixConfig } });
    assert.ok(existsSync(join(after.store, out)), "fetched into the third store");
    assert.equal(takeMarkers(marker), [], "fetched, not built: no builder ran");
  } finally {
    server.kill("SIGTERM");
  }
});

test.run();
