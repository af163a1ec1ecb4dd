/**
 * One answer to "are the generated files current?" (generator/generate/freshness.ts): `generate`, `generate --check`
 * and build's refusal compare by content, the stamp of the last generate a pure cache keyed by content in front of the
 * render. An edit that keeps a file's size and modification time is still caught by all three, they name the same
 * files, and the refusal says why (the matrix changed, or a generated file was edited by hand). In-process (runMain),
 * real files.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { compareGenerated, expectedFromRender, expectedFromStamp, lastGenerate } from "../generator/generate/freshness.ts";
import { inputKeys } from "../generator/generate/stamp.ts";
import { loadProject } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
// @ts-expect-error: plain JavaScript module without types (it runs before anything is compiled)
import { sourcesHash } from "../bin/build-dist.mjs";
import { GENERATED_MARK } from "../generator/nix-literals.ts";

const PIN = { torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" };
const BODY = { releases: [PIN], python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512"], cpuOnly: false, policy: { cudaCapabilitiesScope: "torch" } };
const NAME = "pytorch-python313-cuda12_8-sm90-avx512";
const WRAPPER = `.flox/pkgs/${NAME}.nix`;

async function generated() {
  const dir = tempDir("vm-fresh-");
  const matrix = writeMatrix(dir, BODY);
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  return { dir, matrix, build: () => runMain(["build", NAME, "--dry-run", "--matrix", matrix, "--root", dir]), check: () => runMain(["generate", "--check", "--matrix", matrix, "--out", dir]) };
}

/**
 * Replace `from` by `to` (the same length) in `file`, then put its modification time back: same size, same mtime
 * (the time set to a whole second first, which utimes restores exactly).
 */
function editKeepingStat(file: string, from: string, to: string): void {
  assert.is(Buffer.byteLength(from), Buffer.byteLength(to));
  const t = Math.floor(statSync(file).mtimeMs / 1000) - 5;
  utimesSync(file, t, t);
  const before = statSync(file);
  const text = readFileSync(file, "utf8");
  assert.ok(text.includes(from), `${from} in ${file}`);
  writeFileSync(file, text.replace(from, to));
  utimesSync(file, t, t);
  const after = statSync(file);
  assert.is(after.size, before.size);
  assert.is(after.mtimeMs, before.mtimeMs);
}

test("an edit that keeps size and mtime: check, build and generate all catch it, name the same file and call it an edit by hand", async () => {
  const { dir, matrix, build, check } = await generated();
  assert.is((await check()).status, 0, "current right after generate");
  const file = join(dir, WRAPPER);
  const original = readFileSync(file, "utf8");
  editKeepingStat(file, `"${NAME}"`, `"${NAME.replace("avx512", "avx2xx")}"`);

  const c = await check();
  assert.is(c.status, 1, c.stdout);
  assert.match(c.stderr, new RegExp(`a generated file was edited by hand: ${WRAPPER.replace(/\./g, "\\.")}`));
  const checked = [...c.stderr.matchAll(/^ {2}differs: (\S+)$/gm)].map((m) => m[1]);
  assert.equal(checked, [WRAPPER]);

  const b = await build();
  assert.is(b.status, 2, b.stdout);
  assert.match(b.stderr, new RegExp(`\\(a generated file was edited by hand: ${WRAPPER.replace(/\./g, "\\.")}\\): ${WRAPPER.replace(/\./g, "\\.")} differs,`));

  // generate is not fooled by the unchanged size and time: it rewrites the file.
  const g = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  assert.is(g.status, 0, g.stderr);
  assert.match(g.stdout, new RegExp(`wrote: ${WRAPPER.replace(/\./g, "\\.")}`));
  assert.is(readFileSync(file, "utf8"), original);
  assert.is((await build()).status, 0);
});

test("the shared data edited keeping size and mtime, and the matrix edited: check and build name the same files and the same cause", async () => {
  const { dir, matrix, build, check } = await generated();
  editKeepingStat(join(dir, "pkgs/variants.nix"), "sm90", "sm91");
  const c = await check();
  const b = await build();
  assert.is(c.status, 1);
  assert.is(b.status, 2);
  assert.match(c.stderr, /a generated file was edited by hand: pkgs\/variants\.nix/);
  assert.match(b.stderr, /\(a generated file was edited by hand: pkgs\/variants\.nix\): pkgs\/variants\.nix differs/);

  assert.is((await runMain(["generate", "--matrix", matrix, "--out", dir])).status, 0);
  writeMatrix(dir, { ...BODY, policy: { cudaCapabilitiesScope: "packageSet" } });
  const c2 = await check();
  const b2 = await build();
  assert.is(c2.status, 1);
  assert.is(b2.status, 2);
  assert.match(c2.stderr, /matrix\.ts changed since the last generate\)/);
  assert.match(b2.stderr, /matrix\.ts changed since the last generate\): pkgs\/variants\.nix differs/);
  assert.not.match(b2.stderr, /edited by hand/);
  // Every file build names is one check names too.
  const named = b2.stderr.match(/\): (.*) differs?,/)![1]!.split(", ");
  for (const f of named) assert.match(c2.stderr, new RegExp(`differs: ${f.replace(/\./g, "\\.")}\\n`), f);
});

test("the stamp is a pure cache: with the same inputs it gives the comparison a render gives, edits and all", async () => {
  const { dir, matrix } = await generated();
  editKeepingStat(join(dir, "BUILD_MATRIX.md"), "sm90", "sm91");
  writeFileSync(join(dir, ".flox/pkgs/old-variant.nix"), `# ${GENERATED_MARK}\n{ }: { }\n`);
  const last = lastGenerate(dir, matrix);
  const byStamp = expectedFromStamp(last);
  assert.ok(byStamp, "the stamp of the same inputs stands in for the render");
  const byRender = expectedFromRender(renderAll(await loadProject({ matrixFile: matrix })));
  const a = compareGenerated(dir, byStamp!, last);
  const b = compareGenerated(dir, byRender, last);
  assert.is(a.from, "stamp");
  assert.is(b.from, "render");
  assert.equal(a.differences, b.differences);
  assert.equal(a.differences.map((d) => [d.file, d.kind]), [["BUILD_MATRIX.md", "differs"], [".flox/pkgs/old-variant.nix", "stale"]]);
  assert.is(a.differences[0]!.cause, "edited");
  // Another matrix text: the stamp no longer stands in.
  writeMatrix(dir, { ...BODY, gpus: ["90", "89"] });
  assert.is(expectedFromStamp(lastGenerate(dir, matrix)), null);
});

test("the generator's key is the bundle's name (bin/build-dist.mjs sourcesHash): a stamp of the compiled CLI serves tsx and back", async () => {
  const dir = tempDir("vm-fresh-");
  assert.is(inputKeys(writeMatrix(dir, BODY)).generator, sourcesHash());
});

test.run();
