#!/usr/bin/env node
// Thin launcher: runs the TypeScript CLI through tsx, so `npx variant-matrix` works without a build step.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const tsxCli = require.resolve("tsx/cli");
const r = spawnSync(process.execPath, [tsxCli, join(here, "..", "generator", "cli.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exit(r.status ?? (r.signal ? 130 : 1));
