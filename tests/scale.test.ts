/**
 * Plans at any scale (issue 64): asking Nix keeps no argument list that grows with the variants and keeps its one
 * deadline. Stand-in Nix tools on PATH (shell scripts that record their argument counts, or hang) under the real
 * planner, in-process (commands/build-main.ts buildMain for matrices of thousands of variants, as bench/dry-run.ts
 * makes them; tests/helpers/main.ts runMain for install and build); the dry run's wait line stays within three lines
 * of 80 columns at 10,000 variants.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildMain } from "../generator/commands/build-main.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { PER_CALL } from "../generator/driver/store.ts";
import matrix from "../matrix.ts";
import { tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { makeHost } from "./helpers/host-model.ts";

/** The shared error every stand-in instantiation gives (no file named in it: the pinned nixpkgs offline). */
const OFFLINE = "error: unable to download 'https://github.com/NixOS/nixpkgs/archive/0000.tar.gz': Couldn't resolve host name (6)";

/** A bin directory of stand-in nix-instantiate and nix-store that append their argument count to `log`, one call a line. */
function countingNix(dir: string): { bin: string; log: string } {
  const bin = join(dir, "bin");
  const log = join(dir, "calls.log");
  mkdirSync(bin);
  const version = (tool: string) => `[ "$1" = --version ] && { echo "${tool} (Nix) 2.8.0"; exit 0; }`;
  writeFileSync(join(bin, "nix-instantiate"), `#!/bin/sh\n${version("nix-instantiate")}\nn=0; for a; do case "$a" in *.nix) n=$((n+1));; esac; done\necho "nix-instantiate $# $n" >> "${log}"\necho "${OFFLINE}" >&2\nexit 1\n`, { mode: 0o755 });
  writeFileSync(join(bin, "nix-store"), `#!/bin/sh\n${version("nix-store")}\necho "nix-store $#" >> "${log}"\nexit 0\n`, { mode: 0o755 });
  return { bin, log };
}

/** The repository's matrix with `envs` named environments (each adds one variant per kept combination). */
const variantsWith = (envs: number) => projectFromMatrix({ ...matrix, environments: Object.fromEntries(Array.from({ length: envs }, (_, i) => [`scale${i}`, ["einops"]])) }).variants;

/**
 * `build --dry-run --backend nix` of `envs` environments with Nix asked (the default limit), over a --pkgs-dir of
 * empty files, the counting stand-ins first on PATH: the variant count, the stand-ins' calls (tool and argc), stdout.
 */
// verify: false below: these dry runs hold how the plan asks Nix about the variants (their files are empty: no checks).
async function countedDryRun(envs: number) {
  const dir = tempDir("vm-scale-");
  const { bin, log } = countingNix(dir);
  const variants = variantsWith(envs);
  const pkgs = join(dir, "pkgs");
  mkdirSync(pkgs);
  for (const v of variants) writeFileSync(join(pkgs, `${v.name}.nix`), "");
  let out = "";
  const io = { out: (s: string) => void (out += s), err: (s: string) => void (out += s), columns: 80 };
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    const code = await buildMain({ dryRun: true, verify: false, backend: "nix", variants, pkgsDir: pkgs, outDir: join(dir, "out"), logsDir: join(dir, "logs") }, io);
    assert.is(code, 0, out.slice(-2000));
  } finally {
    process.env.PATH = path;
  }
  const calls = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => ({ tool: l.split(" ")[0]!, argc: Number(l.split(" ")[1]), files: Number(l.split(" ")[2] ?? 0) })) : [];
  return { variants: variants.length, calls, out };
}

test("asking Nix is linear: at about 1,000 and 10,000 variants the argument lists stay bounded and the calls per variant do not grow; the wait line fits three lines", async () => {
  const small = await countedDryRun(2);
  const large = await countedDryRun(60);
  assert.ok(small.variants >= 900 && small.variants <= 1200, `${small.variants} variants`);
  assert.ok(large.variants >= 9500, `${large.variants} variants`);
  for (const r of [small, large]) {
    const inst = r.calls.filter((c) => c.tool === "nix-instantiate");
    // Nix was asked for every file (one error shared by all: the model stands, said so).
    assert.ok(inst.length > 0, "nix-instantiate was asked");
    assert.match(r.out.replace(/\s+/g, " "), /Nix not asked because no selected file evaluates here/, r.out.slice(0, 3000));
    // No argument list grows with the variants (store.ts PER_CALL): the one call before had every file as an argument.
    const most = Math.max(...r.calls.map((c) => c.argc));
    assert.ok(most <= PER_CALL.items + 10, `${r.variants} variants: an argument list of ${most}`);
  }
  // The calls per variant do not grow with the plan (a chunk of files a call, and the shared error asked once).
  const per = (r: typeof small) => r.calls.length / r.variants;
  assert.ok(per(large) <= per(small) * 1.25, `calls per variant: ${per(small).toFixed(4)} at ${small.variants}, ${per(large).toFixed(4)} at ${large.variants}`);
  // Every file was given to nix-instantiate once in a chunk (the first and last of the chunks asked before the shared
  // error was known, at most the chunks started at once, again).
  const CHUNKS = 2;
  const files = (r: typeof small) => r.calls.reduce((a, c) => a + c.files, 0);
  for (const r of [small, large]) assert.ok(files(r) >= r.variants && files(r) <= r.variants + 2 * CHUNKS, `${files(r)} files asked for ${r.variants}`);

  // The headline: "wait … until the last variant is ready: …" summarised by kind, at most three lines of 80 columns.
  const lines = large.out.split("\n");
  const at = lines.findIndex((l) => /^ {2}wait \S+ until the last variant is ready/.test(l));
  assert.ok(at >= 0, large.out.slice(0, 2000));
  // Its wrapped lines hang by four spaces; the next line ("    (N more dependency builds …)", "  estimates") is not it.
  const headline = [lines[at]!];
  for (let i = at + 1; i < lines.length && /^ {4}[^ (]/.test(lines[i]!); i++) headline.push(lines[i]!);
  assert.ok(headline.length <= 3, headline.join("\n"));
  for (const l of headline) assert.ok([...l].length <= 80, l);
  const flat = headline.join(" ").replace(/\s+/g, " ");
  assert.match(flat, /pytorch \d+ × /);
  assert.match(flat, /--verbose lists the chain/, headline.join("\n"));
});

/**
 * Stand-ins that answer: nix-instantiate writes a derivation file per .nix file (under `dir`) and prints its path;
 * nix-store says every path is invalid, and its dry run answers at once for a CPU variant and hangs for the others.
 */
function halfAnsweringNix(dir: string): string {
  const bin = join(dir, "bin");
  const drvs = join(dir, "drvs");
  mkdirSync(bin);
  mkdirSync(drvs);
  writeFileSync(
    join(bin, "nix-instantiate"),
    `#!/bin/sh\n[ "$1" = --version ] && { echo "nix-instantiate (Nix) 2.8.0"; exit 0; }\n` +
      `for a; do case "$a" in *.nix) n=$(basename "$a" .nix); d="${drvs}/00000000000000000000000000000000-$n.drv"; ` +
      `printf 'Derive([("out","/nix/store/11111111111111111111111111111111-%s","","")],[],[],"x86_64-linux","/bin/sh",[],[])' "$n" > "$d"; echo "$d";; esac; done\n`,
    { mode: 0o755 },
  );
  writeFileSync(
    join(bin, "nix-store"),
    `#!/bin/sh\n[ "$1" = --version ] && { echo "nix-store (Nix) 2.8.0"; exit 0; }\n` +
      `case " $* " in *" --check-validity "*) for a; do case "$a" in /*) echo "$a";; esac; done; exit 0;; esac\n` +
      `for a; do d="$a"; done\ncase "$d" in *-cpu-*) printf 'these 1 derivations will be built:\\n  %s\\n' "$d" >&2; exit 0;; esac\nexec sleep 300\n`,
    { mode: 0o755 },
  );
  return bin;
}

test("past the deadline the dry run's plan is Nix's answer for what it answered and the model for the rest, and says so", async () => {
  const dir = tempDir("vm-scale-late-");
  const bin = halfAnsweringNix(dir);
  const all = projectFromMatrix(matrix).variants.filter((v) => v.package === "pytorch" && v.system === "x86_64-linux");
  const variants = [...all.filter((v) => v.cuda === null).slice(0, 3), ...all.filter((v) => v.cuda !== null).slice(0, 3)];
  const pkgs = join(dir, "pkgs");
  mkdirSync(pkgs);
  for (const v of variants) writeFileSync(join(pkgs, `${v.name}.nix`), "");
  let out = "";
  const io = { out: (s: string) => void (out += s), err: (s: string) => void (out += s), columns: 400 };
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  const t0 = Date.now();
  try {
    const code = await buildMain({ dryRun: true, verify: false, backend: "nix", variants, pkgsDir: pkgs, outDir: join(dir, "out"), logsDir: join(dir, "logs"), askNixTimeout: 3 }, io);
    assert.is(code, 0, out);
  } finally {
    process.env.PATH = path;
  }
  assert.ok(Date.now() - t0 < 30_000, `${Date.now() - t0} ms`);
  const flat = out.replace(/\s+/g, " ");
  assert.match(flat, /asked Nix \(nix-store --realise --dry-run, \d+\.\d s, answered for 3 of 6 variants, 3 not answered by the limit \(--ask-nix-timeout; nix-store ran past its limit of \d+ ms and was stopped with SIGTERM\): the model for those\): 3 to build/);
});

/** A host model whose checks pass, with nix-instantiate and nix-store that answer --version and hang otherwise. */
function hangingHost(variant: { name: string; requiredSystemFeatures: readonly string[] }) {
  const h = makeHost({ recorded: "spr-h100", nixos: true, realNixTools: true, nixConf: { "system-features": variant.requiredSystemFeatures.join(" "), substituters: "" } });
  const pids = join(h.dir, "pids");
  for (const tool of ["nix-instantiate", "nix-store"])
    writeFileSync(join(h.bin, tool), `#!/bin/sh\n[ "$1" = --version ] && { echo "${tool} (Nix) 2.8.0"; exit 0; }\necho "${tool} $$" >> "${pids}"\nexec sleep 300\n`, { mode: 0o755 });
  const pkgs = join(h.dir, "pkgs");
  mkdirSync(pkgs);
  writeFileSync(join(pkgs, `${variant.name}.nix`), `derivation { name = "x"; system = builtins.currentSystem; builder = "/bin/sh"; }\n`);
  return { ...h, pids, pkgs };
}

/** Whether process `pid` is still running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const cpuVariant = projectFromMatrix(matrix).variants.find((v) => v.package === "pytorch" && v.cuda === null && v.system === "x86_64-linux")!;
const recorded = ["--cpuinfo", "tests/fixtures/hosts/spr-h100/cpuinfo", "--nvidia-smi", "tests/fixtures/hosts/spr-h100/nvidia-smi.txt", "--machine", "x86_64"];

for (const command of ["install", "build"] as const)
  test(`a hanging nix-instantiate ends a real ${command} at its deadline (--ask-nix-timeout 2), with what was waited for; nothing built, no Nix left running`, async () => {
    const h = hangingHost(cpuVariant);
    const argv =
      command === "install"
        ? ["install", cpuVariant.name, "--dir", join(h.dir, "env"), "--host-root", h.root, "--backend", "nix", "--pkgs-dir", h.pkgs, "--logs-dir", join(h.dir, "logs"), "--plain", "--ask-nix-timeout", "2", ...recorded]
        : ["build", cpuVariant.name, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", h.pkgs, "--out-dir", join(h.dir, "out"), "--logs-dir", join(h.dir, "logs"), "--plain", "--ask-nix-timeout", "2"];
    const t0 = Date.now();
    const r = await runMain(argv, { env: h.env, columns: 80 });
    const seconds = (Date.now() - t0) / 1000;
    assert.is(r.status, 2, r.stdout + r.stderr);
    // At the deadline, not at the stand-in's 300 s (the planning before it takes a few seconds on a loaded machine).
    assert.ok(seconds < 30, `${seconds} s`);
    const flat = r.stderr.replace(/\s+/g, " ");
    assert.match(flat, /Nix did not answer within 2 s \(--ask-nix-timeout 2\): nix-instantiate ran past its limit of \d+ ms and was stopped with SIGTERM/);
    assert.match(flat, command === "install" ? /nothing was built or linked/ : /nothing was built/);
    assert.not.ok(existsSync(join(h.dir, "env")));
    // The hanging stand-ins were started, and none is left running.
    const started = readFileSync(h.pids, "utf8").trim().split("\n").map((l) => Number(l.split(" ")[1]));
    assert.ok(started.length >= 1);
    await new Promise((res) => setTimeout(res, 200));
    for (const pid of started) assert.not.ok(alive(pid), `stand-in ${pid} still running`);
  });

test("--ask-nix-timeout above Node's timer limit (about 24.8 days) is refused with the limit, not run with a 1 ms timer", async () => {
  const r = await runMain(["build", "--dry-run", cpuVariant.name, "--backend", "nix", "--ask-nix-timeout", "3000000"], { columns: 200 });
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /--ask-nix-timeout must be a number of seconds from 0 \(0: do not ask Nix\) to 2147483 \(about 24\.8 days/);
  const ok = await runMain(["build", "--dry-run", cpuVariant.name, "--backend", "nix", "--ask-nix-timeout", "2147483"], { columns: 200 });
  assert.is(ok.status, 0, ok.stderr);
  assert.not.match(ok.stdout + ok.stderr, /ran past its limit of 1 ms/);
});

test.run();
