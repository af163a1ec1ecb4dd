#!/usr/bin/env node
// Launcher: runs the compiled CLI (dist/<hash>/cli.js, bundled by esbuild), so no TypeScript is compiled at run
// time. The bundle is named by a hash of the sources it was built from (bin/build-dist.mjs), so after an edit or a
// `git pull` of generator/ without `npm ci` this command compiles the tree's code first (about a second) and never
// runs an older bundle.
import { DistNotWritableError, ensureDist } from "./build-dist.mjs";

let entry;
try {
  entry = await ensureDist({ log: (line) => process.stderr.write(`variant-matrix: ${line}\n`) });
} catch (e) {
  // dist/ cannot be written: that one line, not esbuild's error for each file it would write.
  if (e instanceof DistNotWritableError) {
    process.stderr.write(`variant-matrix: error: ${e.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`variant-matrix: error: cannot compile generator/ into dist/ (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); fix the error, or run \`npm ci\` if esbuild is missing\n`);
  process.exit(2);
}
const { main } = await import(new URL(`file://${entry}`).href);
process.exitCode = await main(process.argv.slice(2));
