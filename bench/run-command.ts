/**
 * Benchmark: one short command (`nix-store --version`, what Nix's store questions cost before their work), run to
 * completion and collected, side by side in one run, interleaved:
 *   before   zx's `$` (what generator/process.ts runCommand used until 2026-11-28): `bash -c "set -euo pipefail;
 *            nix-store --version"`, its stdin on a socket;
 *   now      runCommand: Node's spawn of nix-store itself, no shell.
 * Each under SHLVL=1 (the parent is a shell: CI, a terminal) and SHLVL=0 (it is not: cron, systemd, an IDE, a Python
 * wrapper), where bash reads ~/.bashrc (bash's shell.c, run_startup_files): what that costs depends on the user's
 * ~/.bashrc (pyenv or conda init: seconds), so the SHLVL=0 line is this machine's figure, not a constant.
 * Both answers must be the same text. Prints medians (ms) and the ratio.
 * Run: `npx tsx bench/run-command.ts`, or through bench/index.ts.
 */
import { pathToFileURL } from "node:url";
import { $ } from "zx";
import { runCommand } from "../generator/process.ts";
import { median } from "./timing.ts";

const ARGV = ["nix-store", "--version"];
const RUNS = 15;

/** Milliseconds since `t0`. */
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Run the benchmark; returns the medians (ms) for each SHLVL. */
export async function main() {
  const out: Record<string, { before: number; now: number }> = {};
  for (const shlvl of ["1", "0"]) {
    const env = { ...process.env, SHLVL: shlvl };
    const before: number[] = [];
    const now: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      let t0 = process.hrtime.bigint();
      const a = await $({ nothrow: true, quiet: true, env })`${ARGV}`;
      const ta = ms(t0);
      t0 = process.hrtime.bigint();
      const b = await runCommand(ARGV, { env });
      const tb = ms(t0);
      if (!a.stdout.endsWith(b.stdout) || b.code !== 0) throw new Error(`the answers differ: ${JSON.stringify(a.stdout)} vs ${JSON.stringify(b.stdout)}`);
      if (i === 0) continue; // warm-up
      before.push(ta);
      now.push(tb);
    }
    out[shlvl] = { before: median(before), now: median(now) };
    const r = out[shlvl];
    console.log(`runCommand(${ARGV.join(" ")}), SHLVL=${shlvl}, median of ${RUNS}: zx $ (bash -c) ${r.before.toFixed(0)} ms, spawn ${r.now.toFixed(0)} ms: ${(r.before / r.now).toFixed(1)}×`);
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
