/**
 * The team's cache as a first-class place (generator/matrix/team-cache.ts, driver/ask-nix.ts):
 * - matrix.ts `caches`: a malformed URL or key stops generate with exit 2, the field path and the allowed form, and no
 *   file written; a good one reaches flake.nix's nixConfig (Nix parses it) and BUILD_MATRIX.md's nix.conf block;
 * - the team-cache check offers the whole nix.conf lines when the host's Nix lacks them, passes when it has them, and
 *   never prints a cache's password;
 * - with the real Nix 2.8 and the real /nix/store (as the other install tests): a STAND-IN environment is built (its
 *   builder leaves a marker file outside the store), signed with a key of `nix-store --generate-binary-cache-key`,
 *   published by `publish` without --to (the matrix's first cache, a file:// binary cache; it warns that the 3 paths the
 *   environment is built on carry no signature by the matrix's key), deleted from the store;
 *   `install --dry-run` then says "asked Nix …: 0 to build, 1 to fetch from file://…", and the real `install` fetches it:
 *   the same store path comes back and the builder's marker stays absent (nothing was built).
 * Substituters: NIX_CONFIG `substituters =` leaves the matrix's cache the only one (offline, as every test here).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { catalog as catalogForCaches } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
const CUDA_CACHE_SUBSTITUTER = cudaCacheSubstituter(catalogForCaches);
import { isCacheUrl, isPublicKey, missingTeamCaches } from "../generator/matrix/team-cache.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { newSalt } from "./helpers/driver.ts";
import { markedBuildDir, nixParse, runNix } from "./helpers/nix.ts";

const NAME = "torch-env-python313-cuda12_8-sm90-avx512bf16";
const KEY = "team-cache-1:wbOY7fQhhcLWtZ2Hhpkxh4atgI8hzszpE4KDmlwYT+E=";
const BASE = { releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512bf16"], cpuOnly: false };
const recorded = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];
const nixCmd = (...a: string[]) => execFileSync("nix", ["--extra-experimental-features", "nix-command", ...a], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

test("the forms: a store URL of a known scheme, a key name:base64 of 32 bytes", () => {
  for (const u of ["https://cache.example.org", "file:///srv/nix-cache", "s3://bucket?region=eu-west-1", "ssh://nix@host"]) assert.ok(isCacheUrl(u), u);
  for (const u of ["cache.example.org", "ftp://x", "https://", "https://a b", ""]) assert.not.ok(isCacheUrl(u), u);
  assert.ok(isPublicKey(KEY));
  assert.ok(isPublicKey(CUDA_CACHE_SUBSTITUTER.publicKey), "the catalog's own key has the form");
  for (const k of ["team-cache-1", "team-cache-1:abc=", `:${KEY.split(":")[1]}`, KEY.replace("=", "")]) assert.not.ok(isPublicKey(k), k);
});

test("generate refuses a malformed cache URL or key: exit 2, the field path and the allowed form, no file written", async () => {
  const dir = tempDir("vm-team-cache-bad-");
  for (const [caches, path, form] of [
    [[{ url: "cache.example.org", publicKey: KEY }], "caches.0.url", /expected a store URL such as https:\/\/cache\.example\.org.*\(got "cache\.example\.org"\)/],
    [[{ url: "https://cache.example.org", publicKey: "team-cache-1" }], "caches.0.publicKey", /expected name:base64 as `nix-store --generate-binary-cache-key NAME SECRET PUBLIC`/],
  ] as const) {
    const out = join(dir, path);
    const r = await runMain(["generate", "--matrix", writeMatrix(dir, { ...BASE, caches }), "--out", out]);
    assert.is(r.status, 2, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(`${path}:`), r.stderr);
    assert.match(r.stderr, form);
    assert.is(existsSync(out) && readdirSync(out).length > 0, false, "nothing written");
  }
});

test("generate refuses a cache URL or key that a nix.conf line cannot hold whole (#, escapes, invisible characters) or Nix would read otherwise (file:// %20): the field, why and the form, no file written", async () => {
  const dir = tempDir("vm-team-cache-chars-");
  const name = KEY.split(":")[0]!;
  const b64 = KEY.split(":")[1]!;
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ url: "https://cache.example.org/#team" }, "caches.0.url", /it holds '#', which starts a comment in nix\.conf and cuts the line there: expected a store URL such as/],
    [{ url: "https://cache.example.org/\u001b[31mred" }, "caches.0.url", /it holds a control character: expected a store URL .*\(got "https:\/\/cache\.example\.org\/\\u001b\[31mred"\)/],
    [{ url: "https://cache.example.org/\u202eevil" }, "caches.0.url", /it holds a control character/],
    [{ url: "https://cache.example.org/a\u00a0b" }, "caches.0.url", /it holds whitespace/],
    [{ url: "https://cache.example.org/{x}" }, "caches.0.url", /it holds "\{", which a URL writes percent-escaped/],
    [{ url: "file:///srv/nix%20cache" }, "caches.0.url", /Nix reads a file:\/\/ path as written, without decoding percent-escapes \(%20 stays %20\): name the directory as it is on disk: expected a store URL .*a file:\/\/ path as it is on disk, without percent-escapes/],
    [{ publicKey: `team#1:${b64}` }, "caches.0.publicKey", /it holds '#', which starts a comment in nix\.conf and cuts the line there: expected name:base64/],
    [{ publicKey: `te\u001bam:${b64}` }, "caches.0.publicKey", /it holds a control character: expected name:base64/],
    [{ publicKey: `team"1:${b64}` }, "caches.0.publicKey", /its name "team\\"1" holds a character other than letters, digits and \. _ - \+ @ ~/],
  ];
  for (const [override, path, said] of cases) {
    const out = join(dir, `out-${cases.findIndex((c) => c[0] === override)}`);
    const r = await runMain(["generate", "--matrix", writeMatrix(dir, { ...BASE, caches: [{ url: "https://cache.example.org", publicKey: KEY, ...override }] }), "--out", out]);
    assert.is(r.status, 2, `${JSON.stringify(override)}: ${r.stdout}${r.stderr}`);
    assert.ok(r.stderr.includes(`${path}:`), r.stderr);
    assert.match(r.stderr, said);
    assert.not.match(r.stderr, /\u001b|\u202e/, "no raw escape in the message");
    assert.is(existsSync(out) && readdirSync(out).length > 0, false, "nothing written");
  }
  // What nix.conf holds whole passes: a file:// path as it is on disk, a query, user info, a key name with @ and +.
  for (const c of [{ url: "file:///srv/nix-cache+team", publicKey: KEY }, { url: "https://ci@cache.example.org/?priority=30", publicKey: `ci+team@example.org-2:${b64}` }]) {
    const out = join(dir, "good");
    const r = await runMain(["generate", "--matrix", writeMatrix(dir, { ...BASE, caches: [c] }), "--out", out]);
    assert.is(r.status, 0, r.stderr);
    assert.ok(readFileSync(join(out, "BUILD_MATRIX.md"), "utf8").split("\n").some((l) => l.startsWith(`extra-trusted-public-keys = ${c.publicKey} `)), name);
  }
});

test("publish --to: a URI with an escape, whitespace or '#', or a file:// path with %20, is refused before anything; --dry-run --to prints no password or token (text and JSON)", async () => {
  const dir = tempDir("vm-team-cache-publish-");
  const m = writeMatrix(dir, BASE);
  for (const [to, said] of [
    ["file:///tmp/nix%20cache", /--to "file:\/\/\/tmp\/nix%20cache": Nix reads a file:\/\/ path as written, without decoding percent-escapes/],
    ["file:///tmp/ca\u001b]0;x\u0007che", /--to "file:\/\/\/tmp\/ca\\u001b\]0;x\\u0007che": it holds a control character \(nothing copied\)/],
    ["s3://bucket #x", /it holds whitespace/],
  ] as const) {
    const r = await runMain(["publish", "--dry-run", "--to", to, "--matrix", m, "--out-dir", dir]);
    assert.is(r.status, 2, `${to}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, said);
    assert.is(r.stdout, "");
  }
  const secret = "https://alice:pa55word@cache.example.org/?token=t0k3n&priority=30";
  for (const json of [false, true]) {
    const r = await runMain(["publish", "--dry-run", "--to", secret, "--matrix", m, "--out-dir", dir, ...(json ? ["--json"] : [])]);
    assert.is(r.status, 0, r.stderr);
    assert.not.match(r.stdout + r.stderr, /pa55word|t0k3n/);
    assert.match(r.stdout, /https:\/\/alice:REDACTED@cache\.example\.org\/\?token=REDACTED&priority=30/);
  }
});

test("generate writes the caches into flake.nix's nixConfig (Nix parses it) and BUILD_MATRIX.md's nix.conf block", async () => {
  const dir = tempDir("vm-team-cache-gen-");
  const out = join(dir, "out");
  const url = "https://cache.example.org";
  const r = await runMain(["generate", "--matrix", writeMatrix(dir, { ...BASE, caches: [{ url, publicKey: KEY }] }), "--out", out]);
  assert.is(r.status, 0, r.stderr);
  const flake = readFileSync(join(out, "flake.nix"), "utf8");
  assert.match(flake, new RegExp(`nixConfig = \\{\\n\\s+extra-substituters = \\[\\n\\s+"${url.replace(/[./]/g, "\\$&")}"\\n\\s+\\];\\n\\s+extra-trusted-public-keys = \\[\\n\\s+"${KEY.replace(/[+/.]/g, "\\$&")}"`));
  nixParse(join(out, "flake.nix"));
  const lines = readFileSync(join(out, "BUILD_MATRIX.md"), "utf8").split("\n");
  // Whole lines, the team's cache first, then the public CUDA cache that builds for x86_64-linux (the catalog's one copy).
  assert.ok(lines.includes(`extra-substituters = ${url} ${CUDA_CACHE_SUBSTITUTER.url}`), lines.filter((l) => l.startsWith("extra-")).join("\n"));
  assert.ok(lines.some((l) => l.startsWith(`extra-trusted-public-keys = ${KEY} ${CUDA_CACHE_SUBSTITUTER.publicKey}`)));
  // Without caches: no nixConfig at all.
  const plain = join(dir, "plain");
  assert.is((await runMain(["generate", "--matrix", writeMatrix(join(dir), BASE), "--out", plain])).status, 0);
  assert.not.match(readFileSync(join(plain, "flake.nix"), "utf8"), /nixConfig/);
});

test("missingTeamCaches: the lines of what is missing only, redacted; none when Nix has both", () => {
  const c = { url: "https://ci:s3cret@cache.example.org", publicKey: KEY };
  const m = missingTeamCaches([c], ["https://cache.nixos.org/"], [KEY]);
  assert.equal(m.lines, ["extra-substituters = https://ci:REDACTED@cache.example.org"]);
  assert.not.match(m.what, /s3cret/);
  assert.equal(missingTeamCaches([c], ["https://ci:s3cret@cache.example.org/"], [KEY]).lines, [], "a trailing slash is the same substituter");
  assert.equal(missingTeamCaches([c], [c.url], []).lines, [`extra-trusted-public-keys = ${KEY}`]);
});

/**
 * A --pkgs-dir holding NAME.nix: a STAND-IN environment whose bin/python3 prints the H100 probe and whose builder
 * touches MARKER/built (outside the store: the sandbox is off here, as in /etc/nix/nix.conf), and a tiny derivation
 * for each variant it is built on.
 */
function standIn(variant: { dependsOn: string[] }, marker: string): string {
  const pkgs = tempDir("vm-team-cache-pkgs-");
  const probe = join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/probe.json");
  writeFileSync(
    join(pkgs, `${NAME}.nix`),
    `derivation {\n  name = "${NAME}-stand-in-${newSalt()}";\n  system = builtins.currentSystem;\n  builder = "/bin/sh";\n  PATH = "/usr/bin:/bin";\n` +
      `  probe = builtins.readFile ${JSON.stringify(probe)};\n` +
      `  args = [ "-c" "touch ${marker}/built; mkdir -p $out/bin && printf '#!/bin/sh\\\\ncat <<\\\\EOF\\\\n%s\\\\nEOF\\\\n' \\"$probe\\" > $out/bin/python3 && chmod +x $out/bin/python3" ];\n}\n`,
  );
  for (const dep of variant.dependsOn)
    writeFileSync(join(pkgs, `${dep}.nix`), `derivation { name = "${dep}-stand-in-${newSalt()}"; system = builtins.currentSystem; builder = "/bin/sh"; args = [ "-c" "echo > $out" ]; }\n`);
  return pkgs;
}

test("a file:// team cache with real Nix: publish (no --to) fills it, install --dry-run says 0 to build, 1 to fetch from it, install fetches instead of building", async () => {
  const { dir, marker } = markedBuildDir("vm-team-cache-");
  const cache = join(dir, "cache");
  runNix("nix-store", ["--generate-binary-cache-key", "team-cache-test-1", join(dir, "sk"), join(dir, "pk")]);
  const publicKey = readFileSync(join(dir, "pk"), "utf8").trim();
  const m = writeMatrix(dir, { ...BASE, caches: [{ url: `file://${cache}`, publicKey }] });
  const variant = projectFromMatrix({ ...BASE, caches: [{ url: `file://${cache}`, publicKey }] } as never).variants.find((v) => v.name === NAME)!;
  const pkgs = standIn(variant, marker);
  const results = join(dir, "results");
  mkdirSync(results);
  // Build everything once, the way a team's first machine (or CI) does, and sign the environment.
  const envConfig = { NIX_CONFIG: "substituters =" };
  for (const n of [...variant.dependsOn, NAME]) runNix("nix-build", [join(pkgs, `${n}.nix`), "-o", join(results, `result-${n}`)], { env: envConfig });
  assert.ok(existsSync(join(marker, "built")), "the builder leaves its marker when it builds");
  rmSync(join(marker, "built"));
  const out = realpathSync(join(results, `result-${NAME}`));
  nixCmd("store", "sign", "--key-file", join(dir, "sk"), out);
  // The stand-ins carry no static check: published --allow-unproven, each variant with its unproven marker (unsigned).
  const pub = await runMain(["publish", NAME, "--matrix", m, "--out-dir", results, "--pkgs-dir", pkgs, "--allow-unproven", "--json"], { env: envConfig });
  assert.is(pub.status, 0, pub.stdout + pub.stderr);
  assert.match(pub.stderr, `publish: to file://${cache}, the first cache of matrix.ts`);
  // Only the environment was signed (nix store sign without -r, as the old docs said): publish says the rest is not.
  assert.match(pub.stderr, /publish: 7 of 8 path\(s\) in file:\/\/\S+ carry no signature by team-cache-test-1 \(the key matrix\.ts `caches` gives its consumers\): a Nix with require-sigs \(the default\) builds them instead of fetching/);
  const paths = (JSON.parse(pub.stdout) as { report: { role: string; paths: { path: string; trusted: boolean }[] }[] }).report.flatMap((r) => r.paths);
  assert.equal(paths.filter((p) => p.trusted).map((p) => p.path), [out]);
  assert.ok(existsSync(join(cache, `${out.slice("/nix/store/".length, "/nix/store/".length + 32)}.narinfo`)), "in the cache");
  // Gone from this store: only the environment (what it is built on stays, as on a machine that has the pin's torch).
  rmSync(join(results, `result-${NAME}`));
  runNix("nix-store", ["--delete", out]);
  assert.is(existsSync(out), false);

  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, realNixTools: true, nixConf: { "system-features": variant.requiredSystemFeatures.join(" "), substituters: "https://cache.nixos.org/ " + CUDA_CACHE_SUBSTITUTER.url, "trusted-public-keys": CUDA_CACHE_SUBSTITUTER.publicKey } });
  const env = { ...h.env, ...envConfig };
  const args = ["install", "--dir", join(dir, "torch-env"), "--matrix", m, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", pkgs, "--logs-dir", join(dir, "logs"), "--plain", ...recorded];
  const dry = await runMain([...args, "--dry-run"], { env });
  assert.is(dry.status, 0, dry.stdout + dry.stderr);
  const flat = dry.stdout.replace(/\s+/g, " ");
  assert.match(flat, new RegExp(`asked Nix \\(nix-store --realise --dry-run, [\\d.]+ s\\): 0 to build, 1 to fetch from file://${cache.replace(/[/.]/g, "\\$&")}`), flat);
  // The host's nix.conf lacks the team cache: offered as whole lines, not required.
  assert.match(flat, /– team binary cache: the substituter file:\/\/\S+ is not in this host's Nix configuration/);
  assert.ok(dry.stdout.split("\n").includes(`extra-substituters = file://${cache}`), dry.stdout);
  assert.ok(dry.stdout.split("\n").includes(`extra-trusted-public-keys = ${publicKey}`), dry.stdout);
  assert.is(existsSync(out), false, "a dry run fetches nothing");

  const real = await runMain(args, { env });
  assert.ok(real.status === 0 || real.status === 1, real.stdout + real.stderr);
  // Fetchable (the team's cache asked too): DIR is linked at once, no build driver (issue 55).
  assert.match(real.stdout.replace(/\s+/g, " "), new RegExp(`${NAME} is fetchable from a substituter \\(${out.replace(/[/.]/g, "\\$&")}\\): nothing to build`));
  assert.is(realpathSync(join(dir, "torch-env")), out, "the same store path, back from the cache");
  assert.is(existsSync(join(marker, "built")), false, "fetched, not built: the builder never ran");
  rmSync(join(dir, "torch-env"));
  for (const n of variant.dependsOn) rmSync(join(results, `result-${n}`));
  for (const n of readdirSync(dir).filter((f) => f.startsWith("result-"))) rmSync(join(dir, n));
  execFileSync("nix-store", ["--delete", out], { stdio: "ignore" });
});

test("the team-cache check passes when the host's Nix has the cache and its key", async () => {
  const dir = tempDir("vm-team-cache-doctor-");
  const url = "https://cache.example.org";
  const m = writeMatrix(dir, { ...BASE, caches: [{ url, publicKey: KEY }] });
  const variant = projectFromMatrix({ ...BASE } as never).variants.find((v) => v.name === NAME)!;
  const conf = (subs: string, keys: string) => ({ "system-features": variant.requiredSystemFeatures.join(" "), substituters: subs, "trusted-public-keys": keys });
  const run = (nixConf: Record<string, string>, json = true) => {
    const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, nix: "2.24.9", nixConf });
    return runMain(["doctor", "--matrix", m, "--host-root", h.root, "--backend", "nix", ...(json ? ["--json"] : []), ...recorded], { env: { ...h.env, COLUMNS: "80" } });
  };
  const check = (r: { stdout: string }) => (JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.find((c) => c.id === "team-cache")!;
  const has = check(await run(conf(`${CUDA_CACHE_SUBSTITUTER.url} ${url}/`, `${CUDA_CACHE_SUBSTITUTER.publicKey} ${KEY}`)));
  assert.is(has.status, "ok", has.detail);
  // The cache's credentials are not printed when the check passes either.
  const withPassword = "https://ci:s3cret@cache.example.org";
  const m2 = writeMatrix(tempDir("vm-team-cache-doctor-"), { ...BASE, caches: [{ url: withPassword, publicKey: KEY }] });
  const h2 = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, nixos: true, nix: "2.24.9", nixConf: conf(`${CUDA_CACHE_SUBSTITUTER.url} ${withPassword}`, `${CUDA_CACHE_SUBSTITUTER.publicKey} ${KEY}`) });
  for (const json of [true, false]) {
    const r = await runMain(["doctor", "--matrix", m2, "--host-root", h2.root, "--backend", "nix", ...(json ? ["--json"] : []), ...recorded], { env: { ...h2.env, COLUMNS: "80" } });
    assert.not.match(r.stdout + r.stderr, /s3cret/);
    if (json) assert.equal([check(r).status, check(r).detail.startsWith("https://ci:REDACTED@cache.example.org with its key")], ["ok", true], check(r).detail);
  }
  const lacks = check(await run(conf(CUDA_CACHE_SUBSTITUTER.url, `${CUDA_CACHE_SUBSTITUTER.publicKey} ${KEY}`)));
  assert.is(lacks.status, "skip");
  assert.match(lacks.detail, `the substituter ${url} is not in this host's Nix configuration`);
  // At 80 columns the block's lines stay whole (a cut setting is an invalid nix.conf line).
  const text = (await run(conf(CUDA_CACHE_SUBSTITUTER.url, CUDA_CACHE_SUBSTITUTER.publicKey), false)).stdout.split("\n");
  assert.ok(text.includes(`extra-substituters = ${url}`), text.join("\n"));
  assert.ok(text.includes(`extra-trusted-public-keys = ${KEY}`), text.join("\n"));
});

test.run();
