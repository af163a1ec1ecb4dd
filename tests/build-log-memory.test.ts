/**
 * The build driver keeps bounded memory whatever a build prints: a real offline nix-build whose stand-in builder
 * prints 32 MiB of log raises the driver's peak RSS by less than the log (bench/build-log.ts driverPeakRss, the
 * benchmark's own run at a small size; the benchmark prints the figure for 1 GiB), the run succeeds and the report
 * still reads where the output came from. On the Nix backend what bounds it is driver/nix-log.ts: Nix's structured
 * log is read as it streams and only a build's last lines are kept (a NixLog that keeps every line raises the peak
 * by 56 MiB here, and the test fails). A flox attempt's log is scanned line by line after it ends (driver/job.ts
 * LogFile.scanLines, never read whole), tested directly: every line, in order, across chunk boundaries and a
 * multi-byte character split by one, a long line cut, the last line without a newline.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { driverPeakRss } from "../bench/build-log.ts";
import { LogFile } from "../generator/driver/job.ts";
import { tempDir } from "./helpers/cli.ts";

const MiB = 1024 * 1024;

test("a 32 MiB build log raises the driver's peak RSS by less than the log; the build succeeds", () => {
  const small = driverPeakRss(MiB);
  const large = driverPeakRss(32 * MiB);
  assert.is(large.status, 0);
  // Reading the log whole costs at least the log twice over (its bytes and its string: 64 MiB and more); scanning costs
  // a 1 MiB buffer. Two runs of the same driver differ by up to about 17 MiB of peak (its heap's growth steps: 1 MiB
  // and 24 MiB logs, 3 runs each, and 96 MiB, 2026-11-28), under the 32 MiB bound.
  assert.ok(large.peakRss - small.peakRss < 32 * MiB, `peak RSS ${small.peakRss / MiB} MiB with a 1 MiB log, ${large.peakRss / MiB} MiB with a 32 MiB log`);
});

test("LogFile.scanLines: every line in order across 1 MiB chunks, a split multi-byte character kept, a long line cut, the last line without newline", () => {
  const file = join(tempDir("vm-scan-"), "x.log");
  const head = "skipped\n";
  // "é" is two bytes; the filler puts it across the first chunk boundary (1 MiB after where the scan starts).
  const filler = "a".repeat(MiB - 1);
  const lines = [filler + "é", "building '/nix/store/x.drv'", "b".repeat(3 * MiB), "last"];
  writeFileSync(file, head + lines.join("\n"));
  const log = new LogFile(file);
  const seen: string[] = [];
  log.scanLines(Buffer.byteLength(head), (l) => seen.push(l), 2 * MiB);
  log.close();
  // (compared with ok, not is: a failure would print megabytes)
  assert.equal(seen.map((l) => l.length), [MiB, lines[1]!.length, 2 * MiB, 4]);
  assert.ok(seen[0] === filler + "é", "the split character is whole");
  assert.is(seen[1], lines[1]);
  assert.ok(seen[2] === "b".repeat(2 * MiB), "the long line is cut to maxLine");
  assert.is(seen[3], "last");
});

test.run();
