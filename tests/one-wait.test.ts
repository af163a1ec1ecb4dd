/**
 * One wait for one pick (issue: "One wait, every core on the critical path"): detect, `install --dry-run` and
 * `build --dry-run` print the same figure for the same pick on the same host, from the one schedule the build driver
 * runs (model/concurrency.ts startBuilds); the driver starts each build with the `--cores` that schedule modelled;
 * earlier builds far shorter than the model's floor (a test's stand-ins) are no history, for build and fleet alike.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMain } from "./helpers/main.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { capacityOf, startBuilds } from "../generator/model/concurrency.ts";
import { historyFloor, makePlan, simulate, TORCH_BUILD_MODEL } from "../generator/model/plan.ts";
import { durationsFromReports } from "../generator/driver/report.ts";
import { readSamples } from "../generator/fleet/cost.ts";

const HOSTS = join(ROOT, "tests/fixtures/hosts");
const GiB = 2 ** 30;

/** Every recorded host with a GPU list (fleet's and detect's fixtures). */
const recorded = readdirSync(HOSTS, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== "bad" && existsSync(join(HOSTS, d.name, "nvidia-smi.txt")))
  .map((d) => d.name);

/** The wait figure of detect's pick ("about 3h08m") and of a plan's headline ("wait 3h08m until …"). */
const detectWait = (text: string) => /wait \(model: [^)]*(?:\([^)]*\)[^)]*)*\): about (\S+?),/.exec(text.replace(/\s+/g, " "))?.[1];
const planWait = (text: string) => /wait (\S+) until the last variant is ready/.exec(text.replace(/\s+/g, " "))?.[1];

test("every recorded host: detect and install --dry-run print one wait for the pick (the recording's CPUs, --mem)", async () => {
  let judged = 0;
  for (const h of recorded) {
    const host = ["--cpuinfo", join(HOSTS, h, "cpuinfo"), "--nvidia-smi", join(HOSTS, h, "nvidia-smi.txt"), "--mem", "128"];
    const d = await runMain(["detect", ...host]);
    const pick = /npx variant-matrix install (torch-env-\S+)/.exec(d.stdout)?.[1];
    if (d.status !== 0 || !pick) continue; // a host nothing fits (the old driver, the hypothetical GPU): no pick
    const i = await runMain(["install", "--dry-run", pick, "--backend", "nix", "--ask-nix-timeout", "0", ...host]);
    assert.is(i.status, 0, `${h}: ${i.stderr}`);
    const [dw, iw] = [detectWait(d.stdout), planWait(i.stdout)];
    assert.ok(dw && iw, `${h}: both print a wait\n${d.stdout}\n${i.stdout}`);
    assert.is(iw, dw, `${h}: ${pick}: detect says ${dw}, install --dry-run ${iw}`);
    // Both name the host's slots: its CPUs and the --mem given, not this machine's.
    const cpus = readFileSync(join(HOSTS, h, "cpuinfo"), "utf8").match(/^processor\s*:/gm)!.length;
    assert.match(d.stdout.replace(/\s+/g, " "), `${cpus} CPUs, 128.0 GiB`);
    assert.match(i.stdout.replace(/\s+/g, " "), `its ${cpus} CPUs and its memory (128.0 GiB, --mem)`);
    judged++;
  }
  assert.ok(judged >= 7, `${judged} recorded hosts judged`);
});

test("this machine: detect, install --dry-run and build --dry-run of the pick print one wait", async () => {
  const d = await runMain(["detect"]);
  const pick = /npx variant-matrix install (torch-env-\S+)/.exec(d.stdout)?.[1];
  assert.ok(pick, d.stdout + d.stderr);
  const i = await runMain(["install", "--dry-run", pick!, "--backend", "nix", "--ask-nix-timeout", "0"]);
  const b = await runMain(["build", "--dry-run", pick!, "--backend", "nix", "--ask-nix-timeout", "0"]);
  assert.is(i.status, 0, i.stderr);
  assert.is(b.status, 0, b.stderr);
  const figures = [detectWait(d.stdout), planWait(i.stdout), planWait(b.stdout)];
  assert.ok(figures.every(Boolean), figures.join(" "));
  assert.equal(new Set(figures).size, 1, `detect, install, build: ${figures.join(", ")}`);
});

test("the schedule gives torch every slot: the default pick on a 16-core, 128 GiB host waits about 3h11m (3h08m of builds, then the proofs), not 5h46m", async () => {
  const r = await runMain(["install", "--dry-run", "torch-env-python313-cuda12_9-sm90-avx512bf16", "--backend", "nix", "--ask-nix-timeout", "0",
    "--cpuinfo", join(HOSTS, "h100-driver580/cpuinfo"), "--nvidia-smi", join(HOSTS, "h100-driver580/nvidia-smi.txt"), "--mem", "128"]);
  assert.is(r.status, 0, r.stderr);
  const flat = r.stdout.replace(/\s+/g, " ");
  // torch alone: 16 cores (the model: 1.75 h at 24 cores → 2h37m at 16); then torchaudio and torchvision share the 16
  // with torch's static check; then the members' checks, and the environment's check after them (2 min each: the
  // environment's own 1 min build runs beside its members' checks).
  assert.match(flat, /wait 3h1\dm until the last variant is ready: pytorch 2h37m on 16 cores, torch(audio|vision) 30m00s on 7 cores, static check 2 × 2m00s/);
  assert.match(flat, /pytorch-python313-cuda12_9-sm90-avx512bf16 est 2h37m, to build \(16 cores\)/);
  assert.match(flat, /torchaudio-python313-cuda12_9-sm90-avx512bf16 est 30m00s, to build \(7 cores\)/);
  assert.match(flat, /then each variant's static check, its proof \(result-NAME-proof\): 4, 2m00s each/);
});

test("startBuilds: ready alone takes every free slot; equals share; a memory-heavy package gets fewer cores; --cores fixes them", () => {
  const cap = capacityOf({ cpus: 16, memBytes: 128 * GiB });
  const b = (name: string, weight: number, pkg = "pytorch") => ({ name, package: pkg, weight });
  assert.equal(startBuilds([b("torch", 9000)], { count: 0, slotsUsed: 0 }, cap), [{ name: "torch", cores: 16, slots: 16 }]);
  assert.equal(startBuilds([b("a", 100, "torchaudio"), b("v", 100, "torchvision")], { count: 0, slotsUsed: 0 }, cap).map((x) => x.cores), [8, 8]);
  // The long one gets most; every build at least one slot; all free slots are handed out.
  const mixed = startBuilds([b("torch", 9000), b("env", 60, "torch-env")], { count: 0, slotsUsed: 0 }, cap);
  assert.equal(mixed.map((x) => x.slots), [15, 1]);
  assert.equal(startBuilds([b("x", 1)], { count: 1, slotsUsed: 16 }, cap), [], "no free slot");
  // flash-attn's ~9 GiB per compile process: 16 slots hold floor(16 × 4 / 9) = 7 of its compile processes.
  const heavy = capacityOf({ cpus: 16, memBytes: 128 * GiB }, { gibPerJob: new Map([["flash-attn", 9]]) });
  assert.equal(startBuilds([b("fa", 100, "flash-attn")], { count: 0, slotsUsed: 0 }, heavy), [{ name: "fa", cores: 7, slots: 16 }]);
  // --cores 8: two at once, 8 each, whatever is ready.
  const fixed = capacityOf({ cpus: 16, memBytes: 128 * GiB }, { cores: 8 });
  assert.equal(startBuilds([b("torch", 9000)], { count: 0, slotsUsed: 0 }, fixed), [{ name: "torch", cores: 8, slots: 8 }]);
  assert.is(startBuilds([b("a", 1), b("v", 1), b("w", 1)], { count: 0, slotsUsed: 0 }, fixed).length, 2);
  // Memory bounds the slots: 16 CPUs and 32 GiB hold 8 compile processes.
  assert.is(capacityOf({ cpus: 16, memBytes: 32 * GiB }).slots, 8);
});

test("the driver starts each build with the --cores the simulated schedule gives it (stand-in nix-build, real processes)", async () => {
  const { runBuilds } = await import("../generator/driver/run.ts");
  const dir = tempDir("vm-one-wait-");
  const bin = join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "out"));
  // A stand-in nix-build: records its argv, sleeps a moment, and makes its out link point somewhere real.
  writeFileSync(
    join(bin, "nix-build"),
    `#!/bin/sh\nout=""; prev=""\nfor a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done\n` +
      `echo "$@" >> "${dir}/argv"\nsleep 0.3\nln -sfn "${dir}" "$out"\n`,
  );
  chmodSync(join(bin, "nix-build"), 0o755);
  const target = (name: string, pkg: string, dependsOn: string[] = []) => ({
    name, package: pkg, dependsOn, file: join(dir, `${name}.nix`), system: "x86_64-linux" as const, python: "3.13", cuda: "12.9",
    cudaCapabilities: ["9.0"], sm: "90", isa: "avx2", torchVersion: "2.12.0", cudaCapabilitiesForPackageSet: false, nixpkgsKey: "k",
  });
  const targets = [
    target("pytorch-x", "pytorch"),
    target("torchaudio-x", "torchaudio", ["pytorch-x"]),
    target("torchvision-x", "torchvision", ["pytorch-x"]),
    target("torch-env-x", "torch-env", ["pytorch-x", "torchaudio-x", "torchvision-x"]),
  ];
  const cap = capacityOf({ cpus: 16, memBytes: 128 * GiB });
  const plan = makePlan(targets, new Map(), { cores: cap.slots });
  const modelled = new Map(simulate(plan, cap).slots.map((s) => [s.name, s.cores]));
  const res = await runBuilds({
    plan, why: new Map(), jobs: 1, capacity: cap, retries: 0, failFast: false, cached: new Map(), logsRoot: join(dir, "logs"), runId: "r1",
    status: { event() {}, close() {} }, killGraceMs: 1000, handleSignals: false,
    backend: { backend: "nix", root: dir, outDir: join(dir, "out"), cores: 8 },
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  assert.is(res.report.exitCode, 0, JSON.stringify(res.report.variants.map((v) => [v.name, v.status, v.reason])));
  // What each real process was started with, read from its own argv.
  const started = new Map(
    readFileSync(join(dir, "argv"), "utf8").trim().split("\n").map((l) => {
      const w = l.split(" ");
      const name = /result-(\S+)$/.exec(w[w.indexOf("-o") + 1]!)![1]!;
      return [name, Number(w[w.indexOf("--cores") + 1])] as const;
    }),
  );
  assert.equal(Object.fromEntries(started), Object.fromEntries(modelled), "the driver's --cores are the simulated schedule's");
  assert.equal(Object.fromEntries(started), { "pytorch-x": 16, "torchaudio-x": 8, "torchvision-x": 8, "torch-env-x": 16 });
  // The report's command is the one that ran.
  for (const v of res.report.variants) assert.is(v.command[v.command.indexOf("--cores") + 1], String(started.get(v.name)));
});

test("history: a build far shorter than the model's floor (a stand-in) is no history, for build's estimates and fleet's samples", async () => {
  const dir = tempDir("vm-history-");
  const run = (id: string, variants: object[]) => {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(join(dir, id, "report.json"), JSON.stringify({ runId: id, startedAt: "2026-11-29T00:00:00Z", finishedAt: "2026-11-29T01:00:00Z", backend: "nix", variants }));
  };
  const v = (name: string, pkg: string, durationS: number) => ({ name, package: pkg, status: "built", durationS, origin: "built" });
  const torch = "pytorch-python313-cuda12_9-sm90-avx512bf16";
  const audio = "torchaudio-python313-cuda12_9-sm90-avx512bf16";
  run("2026-11-29T00-00-00Z-a", [v(torch, "pytorch", 5.2), v(audio, "torchaudio", 3.1)]);
  assert.equal([...durationsFromReports(dir)], [], "5-second stand-ins are not builds of torch and torchaudio");
  assert.equal(readSamples(dir), [], "fleet fits on nothing");
  assert.ok(historyFloor("pytorch") === TORCH_BUILD_MODEL.cpuSeconds * 0.1 && historyFloor("pytorch") > 5.2);
  // A real build (hours) is history for both.
  run("2026-11-29T01-00-00Z-b", [v(torch, "pytorch", 2.5 * 3600)]);
  assert.equal([...durationsFromReports(dir)], [[torch, 2.5 * 3600]]);
  assert.equal(readSamples(dir).map((s) => [s.name, s.seconds]), [[torch, 2.5 * 3600]]);
});

test("fleet: its waits and its cost price torch with the one model on one builder; stand-in reports change neither", async () => {
  const dir = tempDir("vm-fleet-history-");
  const logs = join(dir, "logs");
  // A stand-in's report: torch "built" in 5 s (tests/fixtures/build-pkgs builds look like this).
  mkdirSync(join(logs, "2026-11-29T00-00-00Z-a"), { recursive: true });
  const torch = "pytorch-python313-cuda12_9-sm90-avx512bf16";
  writeFileSync(join(logs, "2026-11-29T00-00-00Z-a", "report.json"), JSON.stringify({ runId: "a", variants: [{ name: torch, package: "pytorch", status: "built", durationS: 5, origin: "built" }] }));
  const args = ["fleet", join(HOSTS, "h100-driver580"), "--json"];
  const [withStandIns, without] = [await runMain([...args, "--logs-dir", logs]), await runMain([...args, "--logs-dir", join(dir, "none")])];
  assert.is(withStandIns.status, 0, withStandIns.stderr);
  const [a, b] = [JSON.parse(withStandIns.stdout), JSON.parse(without.stdout)];
  assert.is(a.cost.samples, 0, "a 5-second torch is no sample");
  assert.equal(a.cost, b.cost);
  assert.equal(a.waits, b.waits);
  // The torch part of the chosen variant's wait is the build the cost model prices: the same seconds.
  const { predict, fit } = await import("../generator/fleet/cost.ts");
  const { loadProject } = await import("../generator/matrix/project.ts");
  const p = await loadProject();
  const [name, w] = Object.entries(a.waits as Record<string, { parts: { what: string; seconds: number; cores: number }[] }>)[0]!;
  const env = p.variants.find((v) => v.name === name)!;
  const pt = p.variants.find((v) => v.name === env.dependsOn.find((d) => d.startsWith("pytorch-")))!;
  const part = w.parts.find((x) => x.what === "pytorch")!;
  assert.is(part.seconds, predict(fit([]), pt, part.cores).seconds, "one estimate of torch on the builder's slots");
});

test.run();
