/**
 * ARCHITECTURE.md's layout is the tree: its Layout block names every source file of generator/, pkgs/ and bin/ (and
 * nothing that is not there), so a newcomer who reads it knows every file and where a new one goes. And the page
 * stays short enough to read at one sitting (at most 150 lines).
 *
 * The block's form: one entry per line, two spaces of indent per directory level, the name first (a directory ends
 * in "/"), then its description after two or more spaces; lines indented to the description column or deeper
 * continue the entry above. A directory of generator/, pkgs/ or bin/ whose description holds ": " lists its own files
 * before it, by base name (`matrix/  load-matrix schema expand: what the stage does`; `probe` names probe.py); its
 * other directories are entries of their own below it. An entry whose description says "(optional)" or
 * "(not committed)" may be absent.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/cli.ts";

/** Lines indented this far or deeper continue the entry above. */
const DESCRIPTION_COLUMN = 20;
/** The trees whose every source file the layout names. */
const ROOTS = ["generator", "pkgs", "bin"];
/** ARCHITECTURE.md's length limit (issue: short enough to be read, every statement held by a test). */
const MAX_LINES = 150;

interface Entry {
  path: string;
  mayBeAbsent: boolean;
  line: number;
  isDir: boolean;
  description: string;
  /** For a directory of ROOTS that lists its files: the base names before ": ". */
  baseNames: string[];
}

const underRoots = (path: string) => ROOTS.some((r) => path === r || path.startsWith(`${r}/`));

/** The Layout block of `markdown`, read into entries (see the form above). */
function layoutEntries(markdown: string): Entry[] {
  const start = markdown.indexOf("\n## Layout\n");
  assert.ok(start >= 0, "ARCHITECTURE.md has a ## Layout section");
  const open = markdown.indexOf("```\n", start) + 4;
  const block = markdown.slice(open, markdown.indexOf("\n```", open)).split("\n");
  const firstLine = markdown.slice(0, open).split("\n").length;
  const stack: string[] = [];
  const out: Entry[] = [];
  block.forEach((l, i) => {
    if (l.trim() === "") return;
    if (/^ */.exec(l)![0].length >= DESCRIPTION_COLUMN) {
      assert.ok(out.length > 0, `ARCHITECTURE.md:${firstLine + i}: a continuation line under no entry`);
      out[out.length - 1]!.description += ` ${l.trim()}`;
      return;
    }
    const m = /^( *)(\S+)(?: {2,}(.*))?$/.exec(l);
    assert.ok(m, `ARCHITECTURE.md:${firstLine + i}: an entry is a name, then two or more spaces and its description`);
    const indent = m![1]!.length;
    assert.is(indent % 2, 0, `ARCHITECTURE.md:${firstLine + i}: an entry's indent is two spaces per level`);
    const depth = indent / 2;
    assert.ok(depth <= stack.length, `ARCHITECTURE.md:${firstLine + i}: indented below no directory`);
    stack.length = depth;
    const name = m![2]!;
    const path = [...stack, name.replace(/\/$/, "")].join("/");
    out.push({ path, mayBeAbsent: false, line: firstLine + i, isDir: name.endsWith("/"), description: m![3] ?? "", baseNames: [] });
    if (name.endsWith("/")) stack.push(name.replace(/\/$/, ""));
  });
  for (const e of out) {
    e.mayBeAbsent = /\((optional|not committed)\)/.test(e.description);
    const colon = e.description.indexOf(": ");
    if (!e.isDir || !underRoots(e.path) || colon < 0) continue;
    e.baseNames = e.description.slice(0, colon).trim().split(/\s+/);
    const bad = e.baseNames.filter((n) => !/^[a-z0-9][a-z0-9._-]*$/.test(n));
    assert.equal(bad, [], `ARCHITECTURE.md:${e.line}: ${e.path}/ lists its files by base name before ": " (lower case, no spaces)`);
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(join(ROOT, p)).isDirectory()) return sourceFiles(p);
    return /\.(ts|py|nix|mjs|js|json)$/.test(n) ? [p] : [];
  });
}

/** The files of directory `dir` (repository-relative) that base name `name` names: NAME itself, or NAME.EXT. */
function filesNamed(dir: string, name: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir))
    .filter((f) => (f === name || f.replace(/\.[^.]+$/, "") === name) && statSync(join(ROOT, dir, f)).isFile())
    .map((f) => `${dir}/${f}`);
}

const architecture = () => readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");

test("ARCHITECTURE.md's layout names every source file of generator/, pkgs/ and bin/, and only files that exist", () => {
  const entries = layoutEntries(architecture());
  const named = new Set(entries.map((e) => e.path));
  const notInTree = entries.filter((e) => !e.mayBeAbsent && !existsSync(join(ROOT, e.path))).map((e) => `ARCHITECTURE.md:${e.line} ${e.path}`);
  for (const e of entries)
    for (const n of e.baseNames) {
      const files = filesNamed(e.path, n);
      if (files.length === 0) notInTree.push(`ARCHITECTURE.md:${e.line} ${e.path}/${n}`);
      for (const f of files) named.add(f);
    }
  assert.ok(entries.some((e) => e.baseNames.length > 0), "the layout lists some directory's files by base name");
  const missingFromDoc = ROOTS.flatMap(sourceFiles).filter((f) => !named.has(f));
  assert.equal(missingFromDoc, [], "files of the tree the layout does not name");
  assert.equal(notInTree, [], "entries of the layout that are not in the tree");
});

test(`ARCHITECTURE.md is at most ${MAX_LINES} lines`, () => {
  const lines = architecture().trimEnd().split("\n").length;
  assert.ok(lines <= MAX_LINES, `ARCHITECTURE.md has ${lines} lines`);
});

test("no source folder is named build/, dist/ or out/ (tools treat those names as output)", () => {
  const dirs = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [join(dir, e.name), ...dirs(join(dir, e.name))] : []));
  const bad = [...ROOTS, "tests", "bench"].flatMap(dirs).filter((d) => /(^|\/)(build|dist|out)$/.test(d));
  assert.equal(bad, []);
});

test("the layout reader: nesting by indent, continuation lines joined, file lists by base name, optional entries marked", () => {
  const md =
    "x\n\n## Layout\n\n```\n" +
    "generator/          cli errors: the entry\n" +
    "  matrix/           expand naming\n" +
    "                    filters: the stage\n" +
    "  b.ts              file, words: not a list\n" +
    "docs/               one page: per topic\n" +
    "e.json              (optional) top\n" +
    "```\n";
  const entries = layoutEntries(md);
  assert.equal(
    entries.map((e) => [e.path, e.mayBeAbsent, e.baseNames]),
    [
      ["generator", false, ["cli", "errors"]],
      ["generator/matrix", false, ["expand", "naming", "filters"]],
      ["generator/b.ts", false, []],
      ["docs", false, []],
      ["e.json", true, []],
    ],
  );
  // A base name that is no file of its directory is found; a list in prose words is refused.
  assert.equal(filesNamed("generator/verify", "probe"), ["generator/verify/probe.py"]);
  assert.equal(filesNamed("generator/matrix", "expnd"), []);
  // (uvu's assert.throws passes an assertion's own error on, so the refusal is caught here.)
  let refusal = "";
  try {
    layoutEntries(md.replace("cli errors: the entry", "The entry, with cli: the rest"));
  } catch (e) {
    refusal = (e as Error).message;
  }
  assert.match(refusal, /generator\/ lists its files by base name/);
});

test.run();
