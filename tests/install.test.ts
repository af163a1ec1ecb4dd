/**
 * `install [NAME]` (generator/commands/install.ts) on modelled hosts (tests/helpers/host-model.ts: a fake root, stand-in
 * nix show-config, nvidia-smi, ldconfig and df):
 * - --dry-run lists the steps, the checks and the build's estimate, and changes nothing;
 * - a ✗ that a nix.conf setting fixes prints the block (whole setting lines) and exits 2 before any work;
 * - with the real nix-build, offline: a STAND-IN environment (its python3 prints a probe recorded on an H100, with the
 *   GPU seen only when libcuda.so.1 is reachable: a directory of LD_LIBRARY_PATH, or its runpath
 *   /run/opengl-driver/lib under the fake root) is built through the driver, linked at DIR as a GC root, run through
 *   the stand-in nixpkgs' nix-gl-host on a non-NixOS root and directly on NixOS; the verify line ends the run; a
 *   second install builds nothing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalog as catalogForCaches } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
const CUDA_CACHE_SUBSTITUTER = cudaCacheSubstituter(catalogForCaches);
import { closingLine } from "../generator/commands/install.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { latestReport } from "./helpers/driver.ts";
import { standInEnvironment } from "./helpers/install-stand-in.ts";
import { runNix } from "./helpers/nix.ts";

const NAME = "torch-env-python313-cuda12_8-sm90-avx512bf16";
const variant = projectFromMatrix(matrix).variants.find((v) => v.name === NAME)!;
const FEATURES = variant.requiredSystemFeatures.join(" ");
const CACHE = {
  substituters: `https://cache.nixos.org/ ${CUDA_CACHE_SUBSTITUTER.url}`,
  "trusted-public-keys": `cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY= ${CUDA_CACHE_SUBSTITUTER.publicKey}`,
};
const H100 = { recorded: "spr-h100", nvidiaSmi: true, devNvidia: true };
const recorded = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];

test("install --dry-run: the steps, every check and the plan with its estimate; nothing linked, nothing built", async () => {
  const h = makeHost({ ...H100, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9", nixConf: { "system-features": FEATURES, ...CACHE } });
  const dir = join(h.dir, "torch-env");
  const r = await runMain(["install", "--dry-run", "--verbose", "--dir", dir, "--host-root", h.root, "--backend", "nix", "--logs-dir", join(h.dir, "logs"), ...recorded], { env: h.env });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const flat = r.stdout.replace(/\s+/g, " ");
  assert.match(flat, `install ${NAME} (picked by detect for this host) at ${dir}`);
  for (const step of ["1. variant:", "2. checks", "3. build through the build driver", `4. link ${dir} to the environment with its Pythons run through nix-gl-host`, `5. the host's GPU driver: ${dir}/bin/python3 and ${dir}/bin/python run through nixglhost`, "6. verify"])
    assert.ok(flat.includes(step), `missing step "${step}":\n${r.stdout}`);
  // The file as the user would type it here (runMain runs in the repository root).
  assert.ok(flat.includes(`nix-build ./${variant.file} -A withHostDriver -o ${dir}`), r.stdout);
  for (const check of ["✓ Nix version", "✓ system features", "✓ CUDA binary cache", "✓ GPU driver"]) assert.ok(r.stdout.includes(check), check);
  assert.match(r.stdout, /wait \S+ until the last variant is ready/);
  assert.match(r.stdout, new RegExp(`\\$ nix-build \\S+/${NAME}\\.nix`));
  assert.is(existsSync(dir), false);
  assert.is(existsSync(join(h.dir, "logs")), false, "a dry run starts no build");
  // Without --dir: ./PACKAGE, a name the user recognises (here from the repository root, where runMain runs).
  const byDefault = await runMain(["install", "--dry-run", "--host-root", h.root, "--backend", "nix", "--logs-dir", join(h.dir, "logs"), ...recorded], { env: h.env });
  assert.is(byDefault.status, 0, byDefault.stderr);
  // Shown as the user would type it here (runMain runs in the repository root).
  assert.match(byDefault.stdout.replace(/\s+/g, " "), `at ./torch-env,`);
  assert.is(existsSync(join(ROOT, "torch-env")), false);
});

test("install --dry-run for detect's pick on every recorded host fits one screen (62 lines at 80 columns); --verbose gives every detail (on the H100 host)", async () => {
  const hosts = readdirSync(HOSTS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(HOSTS, d.name, "cpuinfo")) && existsSync(join(HOSTS, d.name, "nvidia-smi.txt")))
    .map((d) => d.name);
  assert.ok(hosts.includes("h100-driver580") && hosts.length >= 10, hosts.join(", "));
  for (const name of hosts) {
    // A fresh machine with its GPU driver: Nix without the variant's system features or the CUDA cache (both fixes
    // printed in full); the driver reached through nixglhost, which install sets up itself (steps 4-5).
    const gpu = readFileSync(join(HOSTS, name, "nvidia-smi.txt"), "utf8").includes(",");
    const h = makeHost({ recorded: name, nvidiaSmi: true, devNvidia: gpu, nix: "2.24.9", hostLibcuda: gpu ? "/usr/lib/libcuda.so.1" : null });
    const args = ["install", "--dry-run", "--host-root", h.root, "--backend", "nix", "--logs-dir", join(h.dir, "logs"), "--cpuinfo", join(HOSTS, name, "cpuinfo"), "--nvidia-smi", join(HOSTS, name, "nvidia-smi.txt")];
    const r = await runMain(args, { env: { ...h.env, COLUMNS: "80" } });
    // Every recorded host gets a pick (a GPU variant, or the CPU-only fallback where none serves its GPU).
    assert.is(r.status, 0, `${name}: ${r.stderr}`);
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    // 62: the 60 of before, and two for the static checks the build now runs after the variants (their proofs): the
    // wait's chain names them (a third line of it on some hosts), and one line says how many and where each proof goes.
    assert.ok(lines.length <= 62, `${name}: ${lines.length} lines\n${r.stdout}`);
    // Past 80 columns only what must stay whole to paste: a nix.conf setting line (`name = value`), or one word.
    const long = lines.filter((l) => l.length > 80 && l.includes(" ") && !/^[a-z-]+ = /.test(l));
    assert.equal(long, [], `${name}: lines past 80 columns`);
    assert.match(r.stdout, /wait \S+ until the last variant is ready/);
    if (name !== "h100-driver580") continue;
    const verbose = await runMain([...args, "--verbose"], { env: { ...h.env, COLUMNS: "80" } });
    assert.is(verbose.status, 0, verbose.stderr);
    assert.ok(verbose.stdout.split("\n").length > lines.length, `${name}: --verbose says more`);
    assert.match(verbose.stdout, /\$ nix-build/);
  }
});

test("install stops before any work when nix.conf lacks a setting: exit 2, the block of whole setting lines and the restart", async () => {
  const h = makeHost({ ...H100, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9" });
  const dir = join(h.dir, "torch-env");
  const logs = join(h.dir, "logs");
  for (const columns of ["80", ""]) {
    const r = await runMain(["install", NAME, "--dir", dir, "--host-root", h.root, "--backend", "nix", "--logs-dir", logs, ...recorded], { env: { ...h.env, COLUMNS: columns } });
    assert.is(r.status, 2, r.stdout + r.stderr);
    const lines = r.stderr.split("\n");
    assert.ok(lines.includes(`extra-system-features = ${FEATURES.split(" ").filter((f) => f.startsWith("gccarch-")).join(" ")}`), r.stderr);
    assert.ok(lines.includes(`extra-substituters = ${CUDA_CACHE_SUBSTITUTER.url}`), r.stderr);
    assert.ok(lines.includes(`extra-trusted-public-keys = ${CUDA_CACHE_SUBSTITUTER.publicKey}`), r.stderr);
    assert.ok(lines.includes("sudo systemctl restart nix-daemon"), r.stderr);
    assert.not.ok(lines.some((l) => / =\s*$/.test(l)), r.stderr);
    assert.is(existsSync(dir), false);
    assert.is(existsSync(logs), false, "no build started");
  }
});

test("install on a non-NixOS host with a GPU driver: built through the build driver, DIR a GC root, python3 through the environment's nixglhost; the verify line ends the run; a second install builds nothing", async () => {
  const pkgs = standInEnvironment();
  const h = makeHost({ ...H100, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", realNixTools: true, nixConf: { "system-features": FEATURES, ...CACHE } });
  const dir = join(h.dir, "torch-env");
  const logs = join(h.dir, "logs");
  const args = ["install", "--dir", dir, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", pkgs, "--logs-dir", logs, "--plain", ...recorded];
  const env = { ...h.env, NIXGLHOST_STAND_IN_ROOT: h.root };
  const first = await runMain(args, { env });
  assert.ok(first.status === 0 || first.status === 1, first.stdout + first.stderr);
  assert.ok(lstatSync(dir).isSymbolicLink());
  const out = realpathSync(dir);
  assert.match(out, new RegExp(`^/nix/store/[a-z0-9]{32}-${NAME}-stand-in-\\w+-host-driver$`), "DIR is the environment's withHostDriver output");
  // A GC root: Nix lists DIR among the roots of the output.
  assert.match(runNix("nix-store", ["--query", "--roots", out]), new RegExp(dir.replace(/[/.]/g, "\\$&")));
  // DIR/bin/python3 itself reaches the host's libcuda (through the nixglhost it names); pip is the environment's own.
  const python3 = readFileSync(join(dir, "bin/python3"), "utf8");
  assert.match(python3, /^#!\/bin\/sh\nexec \/nix\/store\/\S+-nix-gl-host-stand-in\/bin\/nixglhost \/nix\/store\/\S+\/bin\/python3 "\$@"\n$/);
  assert.match(runNix(join(dir, "bin/python3"), [], { env: { NIXGLHOST_STAND_IN_ROOT: h.root } }), /"available": ?true/);
  assert.match(runNix(join(dir, "bin/python3"), [], { env: { NIXGLHOST_STAND_IN_ROOT: makeHost({}).root } }), /"available": ?false/);
  assert.match(readlinkSync(join(dir, "bin/pip")), /^\/nix\/store\/\S+-stand-in-\w+\/bin\/pip$/);
  assert.is(existsSync(`${dir}-nixglhost`), false, "nothing outside DIR");
  assert.is(latestReport(logs).variants.find((v) => v.name === NAME)?.status, "built");
  // Proven by default: the build driver built the environment's static check; its output is the proof it names.
  const proof = latestReport(logs).variants.find((v) => v.name === NAME)!.proof!;
  assert.match(readFileSync(join(proof, "report.txt"), "utf8"), new RegExp(`^${NAME}: every promise holds`));
  assert.match(first.stdout, new RegExp(`proof of ${NAME}: \\S+-proof -> ${proof}`));
  // What it chose and the checks, before the build's lines; the GPU driver's ✗ is the route taken, not a warning.
  assert.match(first.stdout, new RegExp(`^install ${NAME} \\(picked by detect for this host\\) at `));
  assert.match(first.stdout, /✓ system features: declared: big-parallel gccarch-cooperlake/);
  assert.match(first.stdout, /→ GPU driver: the host's is outside \/run\/opengl-driver\/lib/);
  assert.not.match(first.stderr, /✗ GPU driver/);
  // The last line: the python, what it is, and the promises held on the H100 it reached through nixglhost.
  const last = first.stdout.trim().split("\n").at(-1)!;
  assert.match(last, new RegExp(`^${join(dir, "bin/python3").replace(/[/.]/g, "\\$&")}: ${NAME} \\(torch 2\\.12\\.0, capabilities 9\\.0, ISA avx512bf16\\): \\d+ of \\d+ promises hold on NVIDIA H100 80GB HBM3 \\(9\\.0\\)$`));
  // Again, at 80 columns: nothing is built and the build driver is not run (the output is in the store: DIR is
  // linked at once), verify runs again, and its line stays one line.
  const runId = latestReport(logs).runId;
  const second = await runMain(args, { env: { ...env, COLUMNS: "80" } });
  assert.is(second.status, first.status, second.stderr);
  assert.is(latestReport(logs).runId, runId, "no second run of the build driver");
  assert.match(second.stdout.replace(/\s+/g, " "), `${NAME} is in the store (${realpathSync(join(dir, "bin/pip")).replace(/\/bin\/pip$/, "")}): nothing to build`);
  assert.is(realpathSync(dir), out);
  assert.is(second.stdout.trim().split("\n").at(-1), last);
});

test("install on NixOS: no nixglhost, the environment's python3 loads /run/opengl-driver/lib's libcuda directly", async () => {
  const pkgs = standInEnvironment();
  const h = makeHost({ ...H100, nixos: true, realNixTools: true, nixConf: { "system-features": FEATURES, ...CACHE } });
  const dir = join(h.dir, "torch-env");
  const r = await runMain(["install", NAME, "--dir", dir, "--host-root", h.root, "--backend", "nix", "--pkgs-dir", pkgs, "--logs-dir", join(h.dir, "logs"), "--plain", ...recorded], {
    env: { ...h.env, NIXGLHOST_STAND_IN_ROOT: h.root },
  });
  assert.ok(r.status === 0 || r.status === 1, r.stdout + r.stderr);
  assert.is(existsSync(`${dir}-nixglhost`), false);
  assert.match(r.stdout.trim().split("\n").at(-1)!, /promises hold on NVIDIA H100 80GB HBM3 \(9\.0\)$/);
});

test("install on a host the matrix does not serve: exit 2 with detect's reasons and what to add to matrix.ts, before any check or build", async () => {
  const dir = tempDir("vm-install-unserved-");
  const m = writeMatrix(dir, { releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }], python: ["3.13"], cuda: ["12.8"], gpus: ["121"], isas: ["armv9"], cpuOnly: false });
  const h = makeHost({ ...H100, nix: "2.24.9" });
  const r = await runMain(["install", "--dir", join(dir, "torch-env"), "--matrix", m, "--host-root", h.root, "--logs-dir", join(dir, "logs"), ...recorded], { env: h.env });
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /detect picks no torch-env variant for this host: .*no torch-env variants for x86_64-linux/);
  assert.match(r.stderr, /to serve it: add "avx512bf16" to isas in matrix\.ts/);
  assert.is(existsSync(join(dir, "logs")), false);
});

test("closingLine: held promises and the GPUs they held on; no GPU said so", () => {
  const v = { torchVersion: "2.12.0", cudaCapabilities: ["9.0"], isa: "avx512bf16" };
  const checks = [
    { promise: "torch version", ok: true, expected: "2.12.0", found: "2.12.0" },
    { promise: "GPU NVIDIA H100 (9.0) runs this variant's code", ok: true, expected: "", found: "9.0" },
    { promise: "Python", ok: false, expected: "3.13", found: "3.12" },
  ];
  assert.is(closingLine("/x/bin/python3", { name: NAME, checks }, v), `/x/bin/python3: ${NAME} (torch 2.12.0, capabilities 9.0, ISA avx512bf16): 2 of 3 promises hold on NVIDIA H100 (9.0)`);
  assert.match(closingLine("/x/bin/python3", { name: NAME, checks: checks.filter((c) => !c.promise.startsWith("GPU")) }, { ...v, cudaCapabilities: [] }), /CPU-only.*1 of 2 promises hold, no GPU checked$/);
});

test.run();
