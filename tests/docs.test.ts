// Docs a newcomer can follow. The README is short and has a table of contents; its sentences are short;
// no doc points outside the repository; every relative link resolves; and every count of variants a doc states is
// the count `list` (or the library, for matrices other than matrix.ts) really gives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { ROOT, runCli } from "./helpers/cli.ts";
import { relativeLinks, sentences, sentenceStats, withoutCode, wordCount } from "./helpers/prose.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { nixpkgsInstanceKey } from "../generator/matrix/expand.ts";
import type { MatrixInput } from "../generator/matrix/schema.ts";
import matrix from "../matrix.ts";


/** Every Markdown page users read: README.md, ARCHITECTURE.md and docs/** (repository-relative paths). */
function userDocs(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((n) => {
      const p = join(dir, n);
      return statSync(join(ROOT, p)).isDirectory() ? walk(p) : p.endsWith(".md") ? [p] : [];
    });
  return ["README.md", "ARCHITECTURE.md", ...walk("docs")];
}
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");
/** The text of a page without its fenced code blocks. */
const prose = (t: string) => t.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");

/** GitHub's anchor for a heading: lower case, punctuation and symbols dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
    .replace(/\s/g, "-");
}
const anchorsOf = (t: string) => new Set([...prose(t).matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));

test("prose helpers: sentences split after a full stop, not after e.g.; code is one word; slugs as GitHub makes them", () => {
  const s = sentences("One two three, e.g. four. Five `a b c` six!\n\n- an item\n\n```\nnot. prose. here.\n```\n| a. | b. |");
  assert.equal(s, ["One two three, e.g\u2024 four.", "Five code six!", "an item"]);
  assert.equal(s.map(wordCount), [5, 3, 2]);
  assert.is(slug("What a ✗ means"), "what-a--means");
  assert.is(slug("Build many: `variant-matrix build`"), "build-many-variant-matrix-build");
  assert.equal(relativeLinks("[a](docs/x.md#y) [b](https://e.org) [c](#z) `[d](no.md)`"), ["docs/x.md"]);
});

test("README: at most 200 lines, the two commands first, a ## table of contents whose entries are its sections", () => {
  const readme = read("README.md");
  const lines = readme.split("\n");
  assert.ok(lines.length <= 200, `README has ${lines.length} lines`);
  assert.match(lines[0]!, /^# variant-matrix$/);
  const firstCode = /```sh\n([\s\S]*?)```/.exec(readme)![1]!.trim().split("\n");
  assert.match(firstCode[0]!, /^npm ci && npm run generate\b/);
  assert.match(firstCode[1]!, /^npm test\b/);
  const headings = [...prose(readme).matchAll(/^(#{1,6})\s+(.+)$/gm)];
  assert.is(headings[1]![1], "##", "the first section heading is ## under the # title");
  const toc = /^## Contents\n\n((?:- \[[^\]]+\]\(#[^)]+\)\n)+)/m.exec(readme);
  assert.ok(toc, "a table of contents right after a ## Contents heading");
  const entries = [...toc![1]!.matchAll(/\(#([^)]+)\)/g)].map((m) => m[1]!);
  const sections = headings.filter((h) => h[1] === "##" && h[2] !== "Contents").map((h) => slug(h[2]!));
  assert.equal(entries, sections, "the table of contents lists every ## section, in order");
});

test("README: sentences a reader can follow (≤ 30 words on average, none of 60 or more)", () => {
  const stats = sentenceStats(read("README.md"));
  assert.ok(stats.count >= 40, `${stats.count} sentences`);
  assert.ok(stats.mean <= 30, `mean ${stats.mean.toFixed(1)} words`);
  assert.ok(stats.max < 60, `longest ${stats.max} words: ${stats.longest}`);
  // The same measure on the README this replaced (git show f3ea6e7:README.md): mean 31.4, longest 89, so the bound
  // is one a wordy README fails.
  assert.not.ok(sentenceStats(`${"word ".repeat(61)}end.`).max < 60);
});

test("no doc points outside the repository (../shared, a shared folder, an absolute /work path)", () => {
  for (const f of userDocs()) {
    const t = read(f);
    assert.not.match(t, /\.\.\/shared|shared folder|\/work\//, `${f} names a path outside the repository`);
    // Every ../ path, in a link or in text, stays inside the repository.
    for (const m of t.matchAll(/(?:\.\.\/)+[\w.-]*/g)) {
      const target = resolve(ROOT, dirname(f), m[0]);
      assert.ok(target === resolve(ROOT) || target.startsWith(resolve(ROOT) + sep), `${f}: ${m[0]} leaves the repository`);
    }
    assert.not.match(t, /You have what we lack|our own developers/i, `${f} speaks to the project's developers`);
  }
  // A wrong case: from the repository root, ../shared resolves outside it.
  assert.not.ok(resolve(ROOT, "../shared").startsWith(resolve(ROOT) + sep));
});

test("every relative link of README, ARCHITECTURE.md and docs/ resolves to a file, and its #anchor to a heading", () => {
  const missing: string[] = [];
  for (const f of userDocs()) {
    const t = read(f);
    for (const m of withoutCode(t).matchAll(/\]\(([^)\s]+)\)/g)) {
      const [path, anchor] = m[1]!.split("#") as [string, string | undefined];
      if (/^[a-z][a-z0-9+.-]*:/i.test(path)) continue; // a URL
      const target = path === "" ? f : relative(ROOT, resolve(ROOT, dirname(f), path));
      if (!existsSync(join(ROOT, target))) {
        missing.push(`${f}: ${m[1]} (no ${target})`);
        continue;
      }
      if (anchor && target.endsWith(".md") && !anchorsOf(read(target)).has(anchor)) missing.push(`${f}: ${m[1]} (no heading #${anchor} in ${target})`);
    }
  }
  assert.equal(missing, []);
});

test("the README's quick start: install (dry run first), then the same by hand: detect, doctor, the environment with its host-driver Pythons, verify", () => {
  const readme = read("README.md");
  const start = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("## Edit the matrix"));
  const env = "torch-env-python313-cuda13_0-sm121-armv9";
  const order = [
    "npm ci && npm run generate",
    "npx variant-matrix install --dry-run",
    "npx variant-matrix install ",
    "./torch-env/bin/python3 -c",
    "On a DGX Spark",
    env,
    "On an Ubuntu server with H100s",
    "torch-env-python313-cuda12_8-sm90-avx512bf16",
    "npx variant-matrix detect",
    `npx variant-matrix doctor ${env}`,
    `nix-build .flox/pkgs/${env}.nix -A withHostDriver -o torch-env`,
    `npx variant-matrix verify ${env} --python torch-env`,
  ];
  const at = order.map((c) => start.indexOf(c, 0));
  assert.ok(at.every((i) => i >= 0), `every step is there: ${order.filter((_, i) => at[i]! < 0).join("; ")}`);
  assert.equal([...at].sort((a, b) => a - b), at, "in this order");
  // The picks it names are the ones detect makes for the recorded hosts.
  for (const [host, machine, name] of [["dgx-spark", "aarch64", env], ["spr-h100", "x86_64", "torch-env-python313-cuda12_8-sm90-avx512bf16"]]) {
    const dir = join(ROOT, "tests/fixtures/hosts", host!);
    const r = runCli(["detect", "--json", "--cpuinfo", join(dir, "cpuinfo"), "--nvidia-smi", join(dir, "nvidia-smi.txt"), "--machine", machine!]);
    assert.is(r.status, 0, r.stderr);
    assert.is((JSON.parse(r.stdout) as { variants: string[] }).variants[0], name, host);
  }
  assert.match(start, /Nix ≥ 2\.18/);
  assert.match(start, /official Nix installer/);
  assert.match(start, /flox activate/);
  assert.match(start, /NixOS/);
  // `nix shell`/`nix run`/`nix build` need the nix-command feature, which a default Nix lacks: only with it named.
  for (const m of readme.matchAll(/\bnix (shell|run|build|develop|profile)\b/g))
    assert.ok(readme.includes("extra-experimental-features") || readme.includes("nix-command"), `README uses \`nix ${m[1]}\` without enabling nix-command`);
});

// ---- counts a doc states ----

interface Listed {
  name: string;
  package: string;
  sm: string | null;
}
const listed = JSON.parse(runCli(["list", "--json"]).stdout) as Listed[];
const count = (pred: (v: Listed) => boolean) => listed.filter(pred).length;
const variantsOf = (m: MatrixInput, cat?: Parameters<typeof projectFromMatrix>[1]) => projectFromMatrix(m, cat).variants;
const keysOf = (m: MatrixInput) => new Set(variantsOf(m).map(nixpkgsInstanceKey)).size;
const num = (s: string) => Number(s.replace(/,/g, ""));

/**
 * Each count a doc states, with the number it must equal: the pattern's groups, in order, against `expected()`.
 * The default matrix's figures come from `list --json`; other matrices' from the library.
 */
const CLAIMS: { file: string; pattern: RegExp; expected: () => number[] }[] = [
  { file: "docs/building.md", pattern: /The (\d+) SM110 \(Thor\) variants/, expected: () => [count((v) => v.sm === "110")] },
  {
    file: "docs/building.md",
    pattern: /The default matrix has ([\d,]+) variants \(([\d,]+) each of pytorch, torchaudio, torchvision and torch-env\)/,
    expected: () => {
      const per = ["pytorch", "torchaudio", "torchvision", "torch-env"].map((p) => count((v) => v.package === p));
      assert.is(new Set(per).size, 1, `the four packages have as many variants each: ${per.join(", ")}`);
      return [listed.length, per[0]!];
    },
  },
  { file: "docs/building.md", pattern: /The widest catalog matrix has ([\d,]+) variants/, expected: () => [variantsOf(widestMatrix()).length] },
  {
    file: "docs/building.md",
    pattern: /the default matrix's ([\d,]+) torchvision builds account for [\d.]+ h and its ([\d,]+) environments/,
    expected: () => [count((v) => v.package === "torchvision"), count((v) => v.package === "torch-env")],
  },
  {
    file: "docs/building.md",
    pattern: /The default matrix then needs ([\d,]+) nixpkgs instances instead of ([\d,]+)/,
    expected: () => {
      const m = matrix as MatrixInput;
      return [keysOf({ ...m, policy: { ...m.policy, cudaCapabilitiesScope: "torch" } }), keysOf({ ...m, policy: { ...m.policy, cudaCapabilitiesScope: "packageSet" } })];
    },
  },
  {
    file: "docs/scale-out.md",
    pattern: /\| default \(matrix\.ts\) \| ([\d,]+) \| ([\d,]+) \|/,
    expected: () => [listed.length, keysOf(matrix as MatrixInput)],
  },
];

test("every count of variants a doc states equals what list (or the library) gives", () => {
  for (const c of CLAIMS) {
    const m = c.pattern.exec(read(c.file));
    assert.ok(m, `${c.file} states ${c.pattern}`);
    assert.equal(m!.slice(1).map(num), c.expected(), `${c.file}: ${m![0]}`);
  }
});

test("no doc states a count of variants that no claim above checks", () => {
  // "<number> [up to three words] variants" in prose and tables (command transcripts in code blocks are output, not
  // claims); each must lie inside a text a CLAIMS pattern matched.
  const unchecked: string[] = [];
  for (const f of userDocs().filter((f) => !f.startsWith("docs/matrix/") && !f.startsWith("docs/research/"))) {
    const t = prose(read(f));
    const covered = CLAIMS.filter((c) => c.file === f).flatMap((c) => {
      const m = c.pattern.exec(t);
      return m ? [[m.index, m.index + m[0].length] as const] : [];
    });
    for (const m of t.matchAll(/(?<![\w.])\d[\d,]*(?!\.\d)(?: [\w()-]+){0,3} variants\b/g))
      if (!covered.some(([a, b]) => m.index! >= a && m.index! < b)) unchecked.push(`${f}: "${m[0]}"`);
  }
  assert.equal(unchecked, [], "add a CLAIMS entry for each (or reword it without a count)");
  // A wrong count fails: the SM110 claim against a count one off.
  const wrong = read("docs/building.md").replace(/The (\d+) SM110/, (_, n) => `The ${Number(n) + 1} SM110`);
  assert.is.not(num(CLAIMS[0]!.pattern.exec(wrong)![1]!), CLAIMS[0]!.expected()[0]);
});

test.run();
