/**
 * ARCHITECTURE.md's layout is the tree: its Layout block names every source file of generator/, pkgs/ and bin/ (and
 * nothing that is not there), so a newcomer who reads it knows every file and where a new one goes.
 *
 * The block's form: one entry per line, two spaces of indent per directory level, the name first (a directory ends
 * in "/"), then its description after two or more spaces; lines indented to the description column or deeper
 * continue the entry above. An entry whose description says "(optional)" or "(not committed)" may be absent.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/cli.ts";

/** Entries deeper than this column are continuation lines. */
const DESCRIPTION_COLUMN = 24;

interface Entry {
  path: string;
  mayBeAbsent: boolean;
  line: number;
}

function layoutEntries(markdown: string): Entry[] {
  const start = markdown.indexOf("\n## Layout\n");
  const open = markdown.indexOf("```\n", start) + 4;
  const block = markdown.slice(open, markdown.indexOf("\n```", open)).split("\n");
  const firstLine = markdown.slice(0, open).split("\n").length;
  const stack: string[] = [];
  const out: Entry[] = [];
  block.forEach((l, i) => {
    const m = /^( *)(\S+)(?: {2,}(.*))?$/.exec(l);
    const indent = m ? m[1]!.length : Infinity;
    if (!m || indent >= DESCRIPTION_COLUMN) return;
    assert.is(indent % 2, 0, `ARCHITECTURE.md:${firstLine + i}: an entry's indent is two spaces per level`);
    const depth = indent / 2;
    assert.ok(depth <= stack.length, `ARCHITECTURE.md:${firstLine + i}: indented below no directory`);
    stack.length = depth;
    const name = m[2]!;
    const path = [...stack, name.replace(/\/$/, "")].join("/");
    out.push({ path, mayBeAbsent: /\((optional|not committed)\)/.test(m[3] ?? ""), line: firstLine + i });
    if (name.endsWith("/")) stack.push(name.replace(/\/$/, ""));
  });
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(join(ROOT, p)).isDirectory()) return sourceFiles(p);
    return /\.(ts|py|nix|mjs|js|json)$/.test(n) ? [p] : [];
  });
}

test("ARCHITECTURE.md's layout names every source file of generator/, pkgs/ and bin/, and only files that exist", () => {
  const entries = layoutEntries(readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8"));
  const named = new Set(entries.map((e) => e.path));
  const missingFromDoc = ["generator", "pkgs", "bin"].flatMap(sourceFiles).filter((f) => !named.has(f));
  assert.equal(missingFromDoc, [], "files of the tree the layout does not name");
  const notInTree = entries.filter((e) => !e.mayBeAbsent && !existsSync(join(ROOT, e.path))).map((e) => `ARCHITECTURE.md:${e.line} ${e.path}`);
  assert.equal(notInTree, [], "entries of the layout that are not in the tree");
});

test("the layout reader: nesting by indent, continuation lines skipped, optional entries marked", () => {
  const md = "x\n\n## Layout\n\n```\na/                      dir\n  b.ts                  file\n                        more words naming c.ts\n  c/                    sub\n    d.ts                deep\ne.json                  (optional) top\n```\n";
  assert.equal(
    layoutEntries(md).map((e) => [e.path, e.mayBeAbsent]),
    [["a", false], ["a/b.ts", false], ["a/c", false], ["a/c/d.ts", false], ["e.json", true]],
  );
});

test.run();
