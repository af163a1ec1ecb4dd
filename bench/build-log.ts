/**
 * The build driver's memory against a build's log size: a stand-in builder (a real offline nix-build of a derivation
 * named like a variant) prints BYTES of compiler-like lines, and the driver (`variant-matrix build`, a child process)
 * records its own peak resident set (`process.resourceUsage().maxRSS`, read at its exit through a `--import`ed probe).
 *
 * Two runs side by side: a 1 MiB log and a BENCH_LOG_MIB log (default 1024: 1 GiB). Printed: each peak RSS and their
 * ratio (a driver that streams its logs keeps it near 1; one that reads the log whole grows with it, and past about
 * 512 MiB stops with "Cannot create a string longer than …").
 *
 * Run: `npx tsx bench/build-log.ts` (about a minute per GiB of log), or through bench/index.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";

const ROOT = resolve(import.meta.dirname, "..");

/** One run's result. */
export interface LogRun {
  /** Bytes the builder printed. */
  bytes: number;
  /** The driver's peak resident set, bytes. */
  peakRss: number;
  /** The driver's exit status. */
  status: number | null;
  seconds: number;
}

/**
 * Build one stand-in variant whose builder prints `bytes` of log, with the real driver as a child process.
 * @returns the driver's peak RSS and exit status
 */
export function driverPeakRss(bytes: number): LogRun {
  const variant = projectFromMatrix(matrix).variants.find((v) => v.package === "pytorch" && v.cuda === null && v.system === "x86_64-linux")!;
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-log-"));
  try {
    const pkgs = join(dir, "pkgs");
    mkdirSync(pkgs);
    const salt = `0${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    // A name Nix prints as `building '/nix/store/…-NAME-0SALT.drv'`, which the report's origin is read from.
    writeFileSync(
      join(pkgs, `${variant.name}.nix`),
      `derivation { name = "${variant.name}-${salt}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin";\n` +
        `  args = [ "-c" "yes '[ 42%] Building CXX object caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/native/cpu/kernels.cpp.o' | head -c ${bytes} >&2; echo > $out" ]; }\n`,
    );
    const probe = join(dir, "probe.mjs");
    const rss = join(dir, "rss");
    writeFileSync(probe, `import { appendFileSync } from "node:fs";\nprocess.on("exit", () => appendFileSync(${JSON.stringify(rss)}, process.pid + " " + process.resourceUsage().maxRSS * 1024 + "\\n"));\n`);
    const t0 = Date.now();
    const r = spawnSync(
      process.execPath,
      [
        "--import",
        pathToFileURL(probe).href,
        // The compiled launcher users run (dist/<hash>/, built first if generator/ changed), not tsx: the driver's
        // memory is the bundle's, and a start costs 0.3 s instead of 2-3 s.
        join(ROOT, "bin/variant-matrix.js"),
        "build",
        variant.name,
        // The stand-in carries no static check: the driver's memory is what is measured, not a proof.
        "--no-verify",
        "--backend",
        "nix",
        "--pkgs-dir",
        pkgs,
        "--out-dir",
        dir,
        "--logs-dir",
        join(dir, "logs"),
        "--plain",
        "--nix-option",
        "substituters=",
        "--nix-option",
        "keep-build-log=false",
        "--nix-option",
        `system-features=${variant.requiredSystemFeatures.join(" ")}`,
      ],
      { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
    );
    const seconds = (Date.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`the driver exited ${r.status}: ${r.stderr.slice(-2000)}`);
    // The first line is the driver's own process (the CLI starts no other node process).
    const peakRss = Number(readFileSync(rss, "utf8").split("\n")[0]!.split(" ")[1]);
    return { bytes, peakRss, status: r.status, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const MiB = 1024 * 1024;

/** Both runs and their ratio, printed. */
export async function main(): Promise<void> {
  const big = Number(process.env.BENCH_LOG_MIB ?? 1024);
  const small = driverPeakRss(MiB);
  const large = driverPeakRss(big * MiB);
  const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
  console.log("build driver memory against a build's log (stand-in builder, real nix-build, offline)");
  console.log(`  log ${mib(small.bytes)}: driver peak RSS ${mib(small.peakRss)} (${small.seconds.toFixed(1)} s)`);
  console.log(`  log ${mib(large.bytes)}: driver peak RSS ${mib(large.peakRss)} (${large.seconds.toFixed(1)} s)`);
  console.log(`  ratio of peak RSS, ${mib(large.bytes)} log to ${mib(small.bytes)} log: ${(large.peakRss / small.peakRss).toFixed(2)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename))
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
