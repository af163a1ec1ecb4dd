#!/usr/bin/env node
// Launcher: registers tsx's loader in this process and runs the TypeScript CLI, so `npx variant-matrix` works
// without a build step and signals (SIGINT/SIGTERM during `build`) reach the CLI directly.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../generator/cli.ts");
await main(process.argv.slice(2));
