// matrix/load-matrix.ts importMatrixModule on a matrix that imports another local file: compiled on every run (the
// other file is not in the cache key), so an edit to it is seen at once, and the run's own compiled file is removed
// once imported (runs never pile files up in the cache directory).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importMatrixModule } from "../generator/matrix/load-matrix.ts";
import { cacheDir } from "../generator/paths.ts";
import { tempDir } from "./helpers/cli.ts";

/** The compiled one-run files (matrix-HASH-PID-TIME.mjs) in the cache directory. */
const oneRunFiles = () => readdirSync(cacheDir()).filter((f) => /^matrix-[0-9a-f]+-\d+-\d+\.mjs$/.test(f));

test("a matrix importing a local file: each import sees the file as it is now and leaves no compiled file behind", async () => {
  const dir = tempDir("vm-load-matrix-");
  writeFileSync(join(dir, "pythons.ts"), `export const PYTHONS = ["3.12"];\n`);
  const matrix = join(dir, "matrix.ts");
  writeFileSync(matrix, `import { PYTHONS } from "./pythons.ts";\nexport default { python: PYTHONS };\n`);
  const before = oneRunFiles();
  const first = (await importMatrixModule(matrix)).default as { python: string[] };
  assert.equal(first.python, ["3.12"]);
  writeFileSync(join(dir, "pythons.ts"), `export const PYTHONS = ["3.13"];\n`);
  const second = (await importMatrixModule(matrix)).default as { python: string[] };
  assert.equal(second.python, ["3.13"], "the imported file's edit is seen");
  assert.equal(oneRunFiles(), before, "no compiled one-run file is left");
});

test.run();
