#!/usr/bin/env node
// Launcher: runs the compiled CLI (dist/, written by `npm ci` / `npm install` through the `prepare` script), so no
// TypeScript is compiled at run time. In a checkout where dist/ has not been built yet, it says how to build it.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write("variant-matrix: dist/ is missing; run `npm run prepare` (npm ci runs it) to compile the CLI\n");
  process.exit(2);
}
const { main } = await import(compiled.href);
await main(process.argv.slice(2));
