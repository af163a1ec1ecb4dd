// Start-up. The bundle's string-width stand-in (generator/lazy-string-width.ts, aliased in
// package.json's `prepare`) answers exactly what string-width answers, and the compiled CLI prints the same help as
// the TypeScript sources (which use the real string-width); the figures themselves are measured by `npm run bench`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
// @ts-expect-error: plain JavaScript module without types (it runs before anything is compiled)
import { compiledEntry } from "../bin/build-dist.mjs";
import realStringWidth from "string-width";
import lazyStringWidth, { NARROW_RANGES, widthWithoutTables } from "../generator/lazy-string-width.ts";
import { ROOT, runSources } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

test("the lazy string-width gives string-width's answer for ASCII, ANSI, CJK, emoji, combining marks and non-strings", () => {
  const samples = ["", "plain ASCII text", " ~", "\u001b[31mred\u001b[39m", "\u009b31m", "tab\there", "≤ 3× floor", "日本語", "👩‍👩‍👧", "e\u0301", "1\u20e3", "\u0000"];
  for (const s of samples) assert.is(lazyStringWidth(s), realStringWidth(s), JSON.stringify(s));
  for (const s of samples) assert.is(lazyStringWidth(s, { ambiguousIsNarrow: false }), realStringWidth(s, { ambiguousIsNarrow: false }), JSON.stringify(s));
  assert.is(lazyStringWidth(42 as unknown as string), realStringWidth(42 as unknown as string));
});

test("its narrow fast path answers as string-width for every code point it covers, alone, paired and in words", () => {
  let n = 0;
  for (const [a, b] of NARROW_RANGES)
    for (let c = a; c <= b; c++) {
      const ch = String.fromCodePoint(c);
      for (const s of [ch, ch + ch, `ab${ch}c`, `≤ ${ch} 3×`]) assert.is(lazyStringWidth(s), realStringWidth(s), `U+${c.toString(16)} in ${JSON.stringify(s)}`);
      n++;
    }
  assert.ok(n > 1000, `${n} code points checked`);
  // Outside it, or with ambiguousIsNarrow: false, the real module answers (wide and zero-width characters differ).
  for (const s of ["\u00ad", "a\u202eb", "日本", "→", "×"]) assert.is(lazyStringWidth(s, { ambiguousIsNarrow: false }), realStringWidth(s, { ambiguousIsNarrow: false }), JSON.stringify(s));
});

test("--help, explain and list print only text the fast path measures: string-width's tables stay unloaded", async () => {
  // wrap-ansi and yargs measure words and lines of this text; each is a part of a printed line, and the fast path's
  // character class holds every part of a line it holds. (doctor's ✗ and explain's no-break space once loaded the
  // tables: about a third of --help's time.)
  for (const args of [["--help"], ["explain", "torchaudio-python313-cuda12_9-sm121-armv9"], ["list"]]) {
    const r = await runMain(args, { columns: 80 });
    assert.is(r.status, 0, r.stderr);
    // text.ts wrap() measures a `code span` with its spaces as no-break spaces (U+00A0), which it prints as spaces.
    const slow = r.stdout.split("\n").filter((l) => !widthWithoutTables(l) || !widthWithoutTables(l.replaceAll(" ", "\u00a0")));
    assert.equal(slow, [], `${args.join(" ")}: lines that would load string-width's tables`);
  }
  // The wrong case: wide and zero-width text is not answered without them.
  for (const s of ["日本語", "a\u00adb", "👩‍👩‍👧"]) assert.not.ok(widthWithoutTables(s), s);
});

test("the compiled CLI uses it lazily and prints the same help as the sources", () => {
  // The launcher compiles the current sources into dist/<hash>/ when needed (bin/build-dist.mjs).
  assert.is(spawnSync(process.execPath, [join(ROOT, "bin/variant-matrix.js"), "--version"]).status, 0);
  const dist = dirname(compiledEntry());
  assert.ok(existsSync(join(dist, "cli.js")));
  const chunks = readdirSync(dist).map((f) => readFileSync(join(dist, f), "utf8"));
  const withEmoji = chunks.filter((c) => c.includes('new RegExp("^\\\\p{RGI_Emoji}$", "v")'));
  assert.is(withEmoji.length, 1, "string-width is bundled once");
  assert.match(withEmoji[0]!, /var init_string_width = __esm\(\{/, "behind a lazy initialiser");
  // wrap-ansi 10 (text.ts) builds an Intl.Segmenter when it loads: behind a lazy initialiser too (generator/lazy-wrap-ansi.ts),
  // while cliui's own wrap-ansi (yargs' help) is untouched.
  const wrapAnsi = chunks.filter((c) => c.includes("// node_modules/wrap-ansi/index.js"));
  assert.is(wrapAnsi.length, 1, "wrap-ansi 10 is bundled once");
  assert.match(wrapAnsi[0]!, /var init_wrap_ansi = __esm\(\{/, "behind a lazy initialiser");
  assert.ok(chunks.some((c) => c.includes("// node_modules/cliui/node_modules/wrap-ansi/index.js")), "cliui keeps its own");
  for (const args of [["--help"], ["build", "--help"], ["ci", "--help"]]) {
    const compiled = spawnSync(process.execPath, [join(ROOT, "bin/variant-matrix.js"), ...args], { encoding: "utf8", env: { ...process.env, COLUMNS: "100" } });
    const sources = runSources(args, { env: { COLUMNS: "100" } });
    assert.is(compiled.status, 0, compiled.stderr);
    assert.is(compiled.stdout, sources.stdout, args.join(" "));
  }
});


/** Every chunk the compiled `cli.js` loads before any handler runs: its static imports, followed (dynamic ones are not). */
function startupChunks(dist: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (file: string) => {
    if (out.has(file)) return;
    const text = readFileSync(join(dist, file), "utf8");
    out.set(file, text);
    for (const m of text.matchAll(/^(?:import\s+(?:[^'"();]*?\s+from\s+)?|\}\s*from\s+)"\.\/([^"]+)"/gm)) visit(m[1]!);
  };
  visit("cli.js");
  return out;
}

test("start-up loads neither zod nor the catalog: a command loads them in its handler", () => {
  assert.is(spawnSync(process.execPath, [join(ROOT, "bin/variant-matrix.js"), "--version"]).status, 0);
  const dist = dirname(compiledEntry());
  const chunks = startupChunks(dist);
  assert.ok(chunks.size > 3, `followed cli.js's imports (${chunks.size} files)`);
  const heavy = [...chunks].filter(([, text]) => /node_modules\/zod\/|^\/\/ generator\/catalog\/index\.ts$/m.test(text)).map(([f]) => f);
  assert.equal(heavy, []);
  // The wrong case fails: a handler's chunk that does load zod (the catalog) is found by the same reading.
  const all = readdirSync(dist).filter((f) => f.endsWith(".js"));
  assert.ok(all.some((f) => /node_modules\/zod\//.test(readFileSync(join(dist, f), "utf8"))), "zod is in the bundle, in a chunk loaded later");
});

/** The places of `text` where zod is imported for its values, and where zod-jitless.ts is: offsets, -1 when absent. */
function zodImports(text: string): { zod: number; jitless: number } {
  return { zod: text.search(/^import (?!type\b)[^;]*from "zod";/m), jitless: text.search(/^import "\.\.?\/(?:\.\.\/)*zod-jitless\.ts";/m) };
}

test("zod parses without its JIT: every generator/ module that imports zod's values imports zod-jitless.ts first", async () => {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
  const late = walk(join(ROOT, "generator"))
    .filter((f) => !f.endsWith("/zod-jitless.ts"))
    .map((f) => [f, zodImports(readFileSync(f, "utf8"))] as const)
    .filter(([, i]) => i.zod >= 0 && !(i.jitless >= 0 && i.jitless < i.zod))
    .map(([f]) => f);
  assert.equal(late, []);
  // The reading sees the wrong order, and a type-only import needs none.
  const wrong = zodImports('import * as z from "zod";\nimport "../zod-jitless.ts";\n');
  assert.ok(wrong.jitless > wrong.zod);
  assert.is(zodImports('import type * as z from "zod";\n').zod, -1);
  // And the setting holds once a schema module is loaded.
  await import("../generator/catalog/schema.ts");
  const { config } = await import("zod");
  assert.is(config().jitless, true);
});

test("a command's run renders no help text: yargs' help cache stays empty, and --help still prints the command's help", async () => {
  // Imported as main is (helpers/main.ts): one copy of the modules the commands import.
  const { commandLine, yargsUsage } = await import("../generator/cli.ts");
  const { RUN_KEY } = await import("../generator/commands/shared.ts");
  let out = "";
  const io = { out: (s: string) => void (out += s), err: () => {}, columns: 80, isTTY: false };
  const run = { io, exitCode: 0, exitNow: () => assert.unreachable("exitNow") };
  const parser = commandLine(["list", "--json"], io);
  await parser.parseAsync(["list", "--json"], { [RUN_KEY]: run });
  assert.is(run.exitCode, 0);
  assert.ok(Array.isArray(JSON.parse(out)), "list --json ran");
  assert.is(yargsUsage(parser).hasCachedHelpMessage(), false);
  // The wrong case: a yargs parser left as it comes renders and keeps the help of the command it ran.
  const { default: yargs } = await import("yargs");
  const plain = yargs(["x"]).command("x", "a command", () => {}, () => {});
  await plain.parseAsync();
  assert.is(yargsUsage(plain).hasCachedHelpMessage(), true);
  // Asked for, the help is rendered as before.
  const help = await runMain(["build", "--help"], { env: { COLUMNS: "80" } });
  assert.is(help.status, 0);
  assert.match(help.stdout, /--dry-run/);
});

test.run();
