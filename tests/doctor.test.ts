/**
 * The preflight checks (generator/preflight/checks.ts) that `doctor`, `build` and `publish` share, each with a
 * ✓ and a ✗ case on modelled hosts: a fake host root (etc/NIXOS, run/opengl-driver/lib, dev/nvidia0, proc/cpuinfo of
 * a recorded host) and STAND-IN executables on PATH (nix, nix-instantiate, flox, nvidia-smi, ldconfig, df) that print
 * what the real ones print; the route to the host's GPU driver outside NixOS (the stand-in nixpkgs' nix-gl-host, built
 * with the real nix-build); `verify` naming the missing GPU driver path; build and publish refusing with exit 2.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { runChecks, type CheckResult, type PreflightContext } from "../generator/preflight/checks.ts";
import { catalog as catalogForCaches } from "../generator/catalog/index.ts";
import { cudaCacheSubstituter } from "../generator/catalog/lib/binary-cache.ts";
const CUDA_CACHE_SUBSTITUTER = cudaCacheSubstituter(catalogForCaches);
import { projectFromMatrix } from "../generator/matrix/project.ts";
import matrix from "../matrix.ts";
import { checkedVariants, nixglhostSearch } from "../generator/preflight/checks.ts";
import { ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { shellWord } from "../generator/text.ts";
import { runMain } from "./helpers/main.ts";
import { HOSTS, makeHost, sh, STAND_IN_FLOX } from "./helpers/host-model.ts";
import { nixPath, runNix } from "./helpers/nix.ts";

const project = projectFromMatrix(matrix);
const variant = (name: string) => {
  const v = project.variants.find((x) => x.name === name);
  if (!v) throw new Error(`no ${name} in the matrix`);
  return v;
};
const CPU = "pytorch-python313-cpu-avx2"; // requires big-parallel gccarch-x86-64-v3
const H100 = "pytorch-python313-cuda12_8-sm90-avx512bf16";
const SPARK_ENV = "torch-env-python313-cuda12_8-sm121-armv9";


const ctx = (over: Partial<PreflightContext> & { names?: string[] }): PreflightContext => ({
  command: "doctor",
  variants: checkedVariants((over.names ?? [CPU]).map(variant), project.variants),
  backend: "nix",
  pinnedNixpkgs: true,
  hostSystem: "x86_64-linux",
  ...over,
});
const check = (results: CheckResult[], id: string) => results.find((r) => r.id === id)!;

test("Nix version: ✓ at 2.18 or later, ✗ below with the official installer as the fix; – when the user's own files are built or flox builds", () => {
  const ok = makeHost({ nix: "2.24.9" });
  assert.is(check(runChecks(ok.host, ctx({})), "nix-version").status, "ok");
  const old = makeHost({ nix: "2.8.0" });
  const r = check(runChecks(old.host, ctx({})), "nix-version");
  assert.is(r.status, "fail");
  assert.match(r.detail, /Nix 2\.8\.0 is older than 2\.18/);
  assert.match(r.fix!, /install Nix >= 2\.18 with the official installer/);
  assert.is(check(runChecks(old.host, ctx({ pinnedNixpkgs: false })), "nix-version").status, "skip");
  assert.is(check(runChecks(old.host, ctx({ backend: "flox" })), "nix-version").status, "skip");
});

test("nix-command: ✓ when the user's config turns it on; – (not ✗) when off, since the documented commands need none", () => {
  assert.is(check(runChecks(makeHost({ nixCommand: true }).host, ctx({})), "nix-command").status, "ok");
  const off = check(runChecks(makeHost({ nixCommand: false }).host, ctx({})), "nix-command");
  assert.is(off.status, "skip");
  assert.equal(off.conf, { file: "~/.config/nix/nix.conf", lines: ["extra-experimental-features = nix-command"] });
  assert.not.match(off.detail, /extra-experimental-features/, "the setting is a line of its own, not inside the sentence");
});

test("system features: ✓ when nix.conf declares the variant's; ✗ with the nix.conf line of what is missing (this CPU runs it)", () => {
  const ok = makeHost({ recorded: "epyc-nogpu", nixConf: { "system-features": "big-parallel gccarch-x86-64-v3" } });
  assert.is(check(runChecks(ok.host, ctx({})), "system-features").status, "ok");
  const missing = makeHost({ recorded: "epyc-nogpu" });
  const r = check(runChecks(missing.host, ctx({})), "system-features");
  assert.is(r.status, "fail");
  assert.match(r.detail, /declares no gccarch-x86-64-v3/);
  assert.equal(r.conf!.lines, ["extra-system-features = gccarch-x86-64-v3"]);
  assert.is(r.conf!.file, "/etc/nix/nix.conf");
  assert.match(r.fix!, /append this line to \/etc\/nix\/nix\.conf, then restart nix-daemon/);
  // A CPU that cannot run the ISA is not told to declare it (EPYC 7763 has no AVX-512).
  const avx512 = check(runChecks(missing.host, ctx({ names: [H100] })), "system-features");
  assert.is(avx512.status, "fail");
  assert.match(avx512.fix!, /this CPU cannot run gccarch-cooperlake/);
  assert.is(check(runChecks(missing.host, ctx({ builders: "ssh://b x86_64-linux" })), "system-features").status, "skip");
});

test("store space: ✓ with room for a CUDA toolkit and torch, ✗ below the sourced floor", () => {
  assert.is(check(runChecks(makeHost({ freeKib: 100_000_000 }).host, ctx({})), "store-space").status, "ok");
  const r = check(runChecks(makeHost({ freeKib: 5_000_000 }).host, ctx({})), "store-space");
  assert.is(r.status, "fail");
  assert.match(r.detail, /5\.1 GB free at \/nix\/store, less than the 14\.0 GB/);
});

test("CUDA cache: ✓ with cache.nixos-cuda.org and its key, ✗ with the two nix.conf lines; on aarch64 (the Hydra builds x86_64 only) cache.flox.dev with its key as a copyable block", async () => {
  const conf = { substituters: `https://cache.nixos.org/ ${CUDA_CACHE_SUBSTITUTER.url}`, "trusted-public-keys": `cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY= ${CUDA_CACHE_SUBSTITUTER.publicKey}` };
  assert.is(check(runChecks(makeHost({ nixConf: conf }).host, ctx({ names: [H100] })), "cuda-cache").status, "ok");
  const r = check(runChecks(makeHost({}).host, ctx({ names: [H100] })), "cuda-cache");
  assert.is(r.status, "fail");
  assert.equal(r.conf!.lines, [`extra-substituters = ${CUDA_CACHE_SUBSTITUTER.url}`, `extra-trusted-public-keys = ${CUDA_CACHE_SUBSTITUTER.publicKey}`]);
  assert.not.match(r.fix!, /extra-/, "the settings are lines of their own, not inside the sentence");
  // aarch64: no cache builds for it; the one that may hold its CUDA packages is offered, with its key, as a block.
  const arm = check(runChecks(makeHost({}).host, ctx({ names: [SPARK_ENV] })), "cuda-cache");
  assert.is(arm.status, "skip", "offered, not required: it only may hold them");
  assert.equal(arm.conf!.lines, ["extra-substituters = https://cache.flox.dev", "extra-trusted-public-keys = flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs="]);
  assert.match(arm.detail, /cache\.flox\.dev \(which may hold them\)/);
  assert.not.match(arm.detail + arm.fix, /nixos-cuda/, "the x86_64-only cache is not offered for aarch64");
  const armConf = { substituters: "https://cache.nixos.org/ https://cache.flox.dev", "trusted-public-keys": "cache.nixos.org-1:6NCHdD59X431o0gWypbMrAURkbJ16ZPMQFGspcDShjY= flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs=" };
  const armOk = check(runChecks(makeHost({ nixConf: armConf }).host, ctx({ names: [SPARK_ENV] })), "cuda-cache");
  assert.is(armOk.status, "ok");
  assert.match(armOk.detail, /may hold them/);
  // Through the CLI at 80 columns: the block's lines whole.
  const h = makeHost({});
  const out = (await runMain(["doctor", SPARK_ENV], { env: { ...h.env, COLUMNS: "80" } })).stdout;
  assert.ok(out.split("\n").includes("extra-trusted-public-keys = flox-cache-public-1:7F4OyH7ZCnFhcze3fJdfyXYLQw/aV7GEed86nQ7IsOs="), out);
  assert.is(check(runChecks(makeHost({}).host, ctx({})), "cuda-cache").status, "skip", "a CPU variant needs no CUDA cache");
});

test("flox: ✓ at 1.5.0 or later; ✗ when absent or older, with the install line; – with the nix backend", () => {
  assert.is(check(runChecks(makeHost({ flox: "1.7.0" }).host, ctx({ backend: "flox" })), "flox").status, "ok");
  const none = check(runChecks(makeHost({ flox: null }).host, ctx({ backend: "flox" })), "flox");
  assert.is(none.status, "fail");
  assert.match(none.detail, /flox is not installed/);
  assert.match(none.fix!, /install flox ≥ 1\.5\.0 .*, or use `--backend nix`$/);
  const old = check(runChecks(makeHost({ flox: "1.4.3" }).host, ctx({ backend: "flox" })), "flox");
  assert.is(old.status, "fail");
  assert.match(old.detail, /flox 1\.4\.3 is older than 1\.5\.0/);
  assert.is(check(runChecks(makeHost({ flox: null }).host, ctx({})), "flox").status, "skip");
});

test("flox auth (publish --org only): ✓ logged in, ✗ not, with `flox auth login`; – when flox is not installed, never `flox auth login` then", () => {
  assert.is(check(runChecks(makeHost({ flox: "1.7.0", floxLoggedIn: true }).host, ctx({ org: "acme" })), "flox-auth").status, "ok");
  const out = check(runChecks(makeHost({ flox: "1.7.0" }).host, ctx({ org: "acme" })), "flox-auth");
  assert.is(out.status, "fail");
  assert.is(out.fix, "flox auth login");
  const none = check(runChecks(makeHost({ flox: null }).host, ctx({ org: "acme" })), "flox-auth");
  assert.is(none.status, "skip");
  assert.not.match(none.detail, /auth login/);
  assert.is(check(runChecks(makeHost({ flox: "1.7.0" }).host, ctx({})), "flox-auth").status, "skip");
});

test("GPU driver: ✓ on NixOS (/run/opengl-driver/lib/libcuda.so.1); on a non-NixOS GPU host ✓ through nixglhost (the route install takes) where the environment carries it, else ✗ naming the path, the host's libcuda and the routes; – without a driver", () => {
  const spark = { recorded: "dgx-spark", nvidiaSmi: true, devNvidia: true };
  const c = ctx({ names: [SPARK_ENV], hostSystem: "aarch64-linux" });
  const nixosOk = check(runChecks(makeHost({ ...spark, nixos: true }).host, c), "gpu-driver");
  assert.is(nixosOk.status, "ok");
  assert.is(nixosOk.route, undefined, "NixOS: loaded directly, no route");
  const dgxos = makeHost({ ...spark, hostLibcuda: "/usr/lib/aarch64-linux-gnu/libcuda.so.1" });
  // The environment carries nixglhost, which finds the driver: nothing is left to fix, the route is said.
  const routed = check(runChecks(dgxos.host, c), "gpu-driver");
  assert.is(routed.status, "ok", routed.detail);
  assert.is(routed.route, "nixglhost");
  assert.is(routed.fix, undefined);
  assert.match(routed.detail, /the host's libcuda\.so\.1 is \/usr\/lib\/aarch64-linux-gnu\/libcuda\.so\.1 \(ldconfig -p\), outside \/run\/opengl-driver\/lib \(not NixOS\): reached through nixglhost/);
  assert.match(routed.detail, new RegExp(`\`nix-build \\.flox/pkgs/${SPARK_ENV}\\.nix -A withHostDriver -o torch-env\``));
  assert.match(routed.detail, /nixglhost takes libcuda from \/usr\/lib\/aarch64-linux-gnu/);
  // A matrix without the environment of this combination: nothing carries nixglhost, so ✗ with the routes.
  const bare = variant(SPARK_ENV.replace("torch-env", "pytorch"));
  const r = check(runChecks(dgxos.host, { ...c, variants: checkedVariants([bare], [bare]) }), "gpu-driver");
  assert.is(r.status, "fail");
  assert.is(r.route, "nixglhost", "install still takes the route (and says the matrix lacks the environment)");
  assert.match(r.detail, /no environment variant of this combination to carry it/);
  assert.match(r.detail, /nvidia-smi sees 1 GPU\(s\)/);
  assert.match(r.detail, /the host's libcuda\.so\.1 is \/usr\/lib\/aarch64-linux-gnu\/libcuda\.so\.1 \(ldconfig -p\)/);
  assert.match(r.detail, /\/run\/opengl-driver\/lib\/libcuda\.so\.1 is missing/);
  assert.match(r.fix!, /-A nixglhost -o result-nixglhost/);
  assert.match(r.fix!, /flox activate/);
  assert.match(r.fix!, /NixOS/);
  // nix-gl-host's rule: it takes the GPU driver's directory (libnvidia-ml beside libcuda), reached through ld.so.conf's include.
  assert.match(r.detail, /nixglhost would take libcuda from \/usr\/lib\/aarch64-linux-gnu/);
  // Inside `flox activate` of flox 1.5 to 1.12.0, which exported _FLOX_ENV_CUDA_DETECTION=1: the fallback says ✓.
  const inFlox = { ...dgxos.host, env: { ...dgxos.env, FLOX_ENV: "/x/.flox/run/env", _FLOX_ENV_CUDA_DETECTION: "1" } };
  assert.is(check(runChecks(inFlox, c), "gpu-driver").status, "ok");
  assert.is(check(runChecks(makeHost({ recorded: "dgx-spark", hostLibcuda: null }).host, c), "gpu-driver").status, "skip");
});

test("GPU driver inside a flox >= 1.12.1 activation (the stand-in activation of tests/fixtures/stand-in-flox): ✓ in dev mode (ld-floxlib serves the ldconfig cache's libcuda), ✗ in run mode or with cuda-detection off, saying so", async () => {
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9" });
  const c = ctx({ names: ["torch-env-python313-cuda12_8-sm90-avx512bf16"] });
  const activate = (mode: string, detection = "1") => {
    const r = spawnSync(join(STAND_IN_FLOX, "activate-env"), [mode, h.root, join(h.bin, "ldconfig"), detection], { encoding: "utf8", env: h.env });
    assert.is(r.status, 0, r.stderr);
    return Object.fromEntries(r.stdout.trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
  };
  const dev = activate("dev");
  // What today's flox leaves: no exported detection variable, LD_AUDIT naming ld-floxlib, the host's libraries listed.
  assert.not.ok("_FLOX_ENV_CUDA_DETECTION" in dev);
  assert.match(dev.LD_AUDIT!, /\/ld-floxlib\.so$/);
  assert.is(dev.LD_FLOXLIB_FILES_PATH, ["libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1"].map((l) => `/usr/lib/x86_64-linux-gnu/${l}`).join(":"));
  const ok = check(runChecks({ root: h.root, env: { ...h.env, ...dev } }, c), "gpu-driver");
  assert.is(ok.status, "ok", ok.detail);
  assert.match(ok.detail, /ld-floxlib \(LD_AUDIT\) serves the host's \/usr\/lib\/x86_64-linux-gnu\/libcuda\.so\.1/);
  assert.is(ok.route, undefined, "flox serves libcuda: no nixglhost route");
  // The CLI, run from inside that activation.
  const cli = await runMain(["doctor", "torch-env-python313-cuda12_8-sm90-avx512bf16", "--machine", "x86_64", "--host-root", h.root, "--backend", "nix", "--json"], { env: { ...h.env, ...dev } });
  assert.is(check(JSON.parse(cli.stdout).checks, "gpu-driver").status, "ok", cli.stdout + cli.stderr);
  // A LD_FLOXLIB_FILES_PATH whose libcuda does not exist on this host serves nothing: the nixglhost route remains
  // (the environment carries it); the variant alone, whose matrix lacks the environment, has no route left (✗).
  const stale = { ...dev, LD_FLOXLIB_FILES_PATH: "/usr/lib/elsewhere/libcuda.so.1" };
  const alone = { ...c, variants: checkedVariants([variant("pytorch-python313-cuda12_8-sm90-avx512bf16")], []) };
  assert.is(check(runChecks({ root: h.root, env: { ...h.env, ...stale } }, c), "gpu-driver").route, "nixglhost");
  assert.is(check(runChecks({ root: h.root, env: { ...h.env, ...stale } }, alone), "gpu-driver").status, "fail");
  // Run mode sets no LD_AUDIT: flox serves nothing, and the line names run mode (✓ through nixglhost, ✗ without it).
  const runEnv = { root: h.root, env: { ...h.env, ...activate("run") } };
  const run = check(runChecks(runEnv, alone), "gpu-driver");
  assert.is(run.status, "fail");
  assert.match(run.detail, /`run` mode \(flox activate -m run\) does no CUDA detection/);
  const runRouted = check(runChecks(runEnv, c), "gpu-driver");
  assert.equal([runRouted.status, runRouted.route], ["ok", "nixglhost"]);
  assert.match(runRouted.detail, /`run` mode \(flox activate -m run\) does no CUDA detection/);
  // cuda-detection off in the manifest: ld-floxlib is there, no libcuda in its list.
  const off = check(runChecks({ root: h.root, env: { ...h.env, ...activate("dev", "0") } }, alone), "gpu-driver");
  assert.is(off.status, "fail");
  assert.match(off.detail, /LD_FLOXLIB_FILES_PATH holds no libcuda\.so\.1: cuda-detection is off/);
});

test("GPU driver outside NixOS, as nix-gl-host searches: LD_LIBRARY_PATH, ld.so.conf includes, /run/opengl-driver/lib and /usr/lib/wsl/lib; a directory with libcuda alone is passed over", () => {
  const c = ctx({ names: ["torch-env-python313-cuda12_8-sm90-avx512bf16"] });
  const alone = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", libcudaAlone: true });
  const r = check(runChecks(alone.host, c), "gpu-driver");
  assert.is(r.status, "fail");
  assert.match(r.detail, /nixglhost would find no driver: \/usr\/lib\/x86_64-linux-gnu holds libcuda but none of its NVIDIA libraries/);
  const searched = nixglhostSearch(alone.host).map((x) => x.dir);
  assert.ok(searched.includes("/usr/lib/x86_64-linux-gnu"), String(searched));
  // /usr/lib/wsl/lib (WSL) with libdxcore beside libcuda: kept; a directory of LD_LIBRARY_PATH comes first.
  const wsl = makeHost({ devNvidia: true, hostLibcuda: null });
  mkdirSync(join(wsl.root, "usr/lib/wsl/lib"), { recursive: true });
  for (const f of ["libcuda.so.1", "libdxcore.so"]) writeFileSync(join(wsl.root, "usr/lib/wsl/lib", f), "");
  mkdirSync(join(wsl.root, "opt/drv"), { recursive: true });
  for (const f of ["libcuda.so.1", "libnvidia-ptxjitcompiler.so.1", "libnvidia-ml.so.1"]) writeFileSync(join(wsl.root, "opt/drv", f), "");
  const found = nixglhostSearch({ root: wsl.root, env: { ...wsl.env, LD_LIBRARY_PATH: "/opt/drv:/does/not/exist" } });
  assert.equal(found.filter((x) => x.kept).map((x) => [x.dir, x.cuda.sort()]), [["/opt/drv", ["libcuda.so.1", "libnvidia-ml.so.1"]], ["/usr/lib/wsl/lib", ["libcuda.so.1"]]]);
  assert.not.ok(found.some((x) => x.dir === "/does/not/exist"));
});

test("doctor (CLI) on the recorded DGX Spark as DGX OS: exit 0 with its system features declared, the GPU driver ✓ through nixglhost at 80 columns; exit 1 where nixglhost finds no driver, with the routes; --json; detect's pick without NAME", async () => {
  const h = makeHost({ recorded: "dgx-spark", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/aarch64-linux-gnu/libcuda.so.1", nix: "2.24.9", nixConf: { "system-features": variant(SPARK_ENV).requiredSystemFeatures.join(" ") } });
  const args = ["doctor", SPARK_ENV, "--machine", "aarch64", "--host-root", h.root, "--backend", "nix"];
  const r = await runMain(args, { env: { ...h.env, COLUMNS: "80" } });
  assert.is(r.status, 0, r.stdout + r.stderr);
  // Every line fits, but a nix.conf setting, which stays whole (pasted cut, it would break nix.conf).
  for (const l of r.stdout.split("\n")) assert.ok([...l].length <= 80 || /^[a-z][\w-]* = \S+/.test(l), `longer than 80: ${l}`);
  assert.match(r.stdout, /✓ Nix version: Nix 2\.24\.9/);
  assert.match(r.stdout, /✓ GPU driver:/);
  assert.not.match(r.stdout, /✗/);
  assert.match(r.stdout.replace(/\s+/g, " "), /reached through nixglhost, which the environment variant carries: `variant-matrix install` takes this route itself \(`nix-build \.flox\/pkgs\/torch-env-python313-cuda12_8-sm121-armv9\.nix -A withHostDriver -o torch-env` links torch-env/);
  assert.match(r.stdout.replace(/\s+/g, " "), /Ready: install it with .*install runs it through nixglhost/);
  const j = await runMain([...args, "--json"], { env: h.env });
  const rep = JSON.parse(j.stdout) as { name: string; checks: CheckResult[]; ok: boolean };
  assert.is(rep.ok, true);
  assert.equal([check(rep.checks, "gpu-driver").status, check(rep.checks, "gpu-driver").route], ["ok", "nixglhost"]);
  // The driver's directory holds libcuda alone: nixglhost passes it over, so the route fails (✗ with the routes, exit 1).
  const alone = makeHost({ recorded: "dgx-spark", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/aarch64-linux-gnu/libcuda.so.1", libcudaAlone: true, nix: "2.24.9", nixConf: { "system-features": variant(SPARK_ENV).requiredSystemFeatures.join(" ") } });
  const failing = await runMain(["doctor", SPARK_ENV, "--machine", "aarch64", "--host-root", alone.root, "--backend", "nix"], { env: { ...alone.env, COLUMNS: "80" } });
  assert.is(failing.status, 1, failing.stdout + failing.stderr);
  assert.match(failing.stdout, /✗ GPU driver:/);
  assert.match(failing.stdout.replace(/\s+/g, " "), /\/run\/opengl-driver\/lib\/libcuda\.so\.1 is missing/);
  assert.match(failing.stdout.replace(/\s+/g, " "), /result-nixglhost\/bin\/nixglhost result-torch-env-python313-cuda12_8-sm121-armv9\/bin\/python3/);
  for (const l of failing.stdout.split("\n")) assert.ok([...l].length <= 80 || /^[a-z][\w-]* = \S+/.test(l), `longer than 80: ${l}`);
  // NixOS: the same host passes.
  const nixos = makeHost({ recorded: "dgx-spark", nvidiaSmi: true, devNvidia: true, nixos: true, nix: "2.24.9", nixConf: { "system-features": variant(SPARK_ENV).requiredSystemFeatures.join(" ") } });
  const ok = await runMain(["doctor", SPARK_ENV, "--machine", "aarch64", "--host-root", nixos.root, "--backend", "nix", "--json"], { env: nixos.env });
  assert.equal(JSON.parse(ok.stdout).checks.filter((c: CheckResult) => c.status === "fail").map((c: CheckResult) => c.id), [], ok.stdout);
  assert.is(ok.status, 0);
  // Without NAME: detect's pick for the recorded host (its cpuinfo under the root, its nvidia-smi on PATH).
  const picked = await runMain(["doctor", "--machine", "aarch64", "--host-root", h.root, "--json"], { env: h.env });
  // detect's pick is the environment (its default package), not a package of it such as torchaudio.
  const detected = await runMain(["detect", "--json", "--cpuinfo", join(HOSTS, "dgx-spark/cpuinfo"), "--nvidia-smi", join(HOSTS, "dgx-spark/nvidia-smi.txt"), "--machine", "aarch64"], { env: h.env });
  const pick = JSON.parse(detected.stdout).variants[0] as string;
  assert.match(pick, /^torch-env-.*-sm121-armv9$/);
  assert.is(JSON.parse(picked.stdout).name, pick);
  assert.is(JSON.parse(picked.stdout).chosenBy, "picked by detect for this host");
  // --package still chooses another package of the same combination.
  const audio = await runMain(["doctor", "--machine", "aarch64", "--host-root", h.root, "--json", "--package", "torchaudio"], { env: h.env });
  assert.match(JSON.parse(audio.stdout).name, /^torchaudio-.*-sm121-armv9$/);
  const bad = await runMain(["doctor", "torch-env-python313-cuda12_8-sm999-armv9"], { env: h.env });
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /unknown variant/);
});

test("nix.conf fixes are blocks that wrapping never splits: at 80 columns and through a pipe, every setting doctor prints is a whole line with its whole value, then the daemon restart", async () => {
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9" });
  const name = "torch-env-python313-cuda12_8-sm90-avx512bf16";
  const want = [
    "extra-experimental-features = nix-command",
    `extra-system-features = ${variant(name).requiredSystemFeatures.filter((f) => f.startsWith("gccarch-")).join(" ")}`,
    `extra-substituters = ${CUDA_CACHE_SUBSTITUTER.url}`,
    `extra-trusted-public-keys = ${CUDA_CACHE_SUBSTITUTER.publicKey}`,
  ];
  // COLUMNS=80, and a pipe with no COLUMNS (the width falls back to 80).
  for (const columns of ["80", ""]) {
    const r = await runMain(["doctor", name, "--machine", "x86_64", "--host-root", h.root, "--backend", "nix"], { env: { ...h.env, COLUMNS: columns } });
    assert.is(r.status, 1, r.stderr);
    const lines = r.stdout.split("\n");
    const settings = lines.filter((l) => /^\s*(extra-)?[a-z][\w-]* =/.test(l));
    assert.equal(settings, want, r.stdout);
    // Nothing of a setting is left in prose or split over lines: no line ends in "=", no key or URL stands alone.
    assert.not.ok(lines.some((l) => / =\s*$/.test(l)), r.stdout);
    assert.is(lines.filter((l) => l.includes(CUDA_CACHE_SUBSTITUTER.publicKey)).length, 1);
    assert.not.match(r.stdout, /`extra-/);
    // Each block appends to /etc/nix/nix.conf and restarts the daemon, which reads the file only when it starts.
    assert.is(lines.filter((l) => l === "sudo tee -a /etc/nix/nix.conf >/dev/null <<'EOF'").length, 2);
    assert.is(lines.filter((l) => l === "sudo systemctl restart nix-daemon").length, 2);
    for (const l of lines) assert.ok([...l].length <= 80 || want.includes(l), `longer than 80: ${l}`);
  }
  // Pasted as printed, the block is a shell script: run with a stand-in sudo and systemctl, it appends exactly the
  // settings to the file (after the file's last line, even one without a newline) and restarts nix-daemon.
  const r = await runMain(["doctor", name, "--machine", "x86_64", "--host-root", h.root, "--backend", "nix"], { env: { ...h.env, COLUMNS: "80" } });
  const blocks = r.stdout.match(/^sudo tee -a [\s\S]*?^sudo systemctl restart nix-daemon$/gm) ?? [];
  assert.is(blocks.length, 2);
  const conf = join(h.dir, "etc-nix.conf");
  writeFileSync(conf, "substituters = https://cache.nixos.org/");
  const bin = join(h.dir, "paste-bin");
  mkdirSync(bin);
  sh(join(bin, "sudo"), 'exec "$@"');
  sh(join(bin, "systemctl"), `echo "$*" >> "${join(h.dir, "restarts")}"`);
  const script = blocks.join("\n").replaceAll("/etc/nix/nix.conf", conf);
  const ran = spawnSync("sh", ["-c", script], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: "utf8" });
  assert.is(ran.status, 0, ran.stderr);
  const written = readFileSync(conf, "utf8").split("\n").filter((l) => l.trim() !== "");
  assert.equal(written, ["substituters = https://cache.nixos.org/", ...want.filter((l) => !l.includes("nix-command"))]);
  assert.equal(readFileSync(join(h.dir, "restarts"), "utf8").trim().split("\n"), ["restart nix-daemon", "restart nix-daemon"]);
});

test("doctor on a non-NixOS H100 host exits 0 once every nix.conf block it prints is pasted (the GPU driver ✓ through nixglhost); a real fixable ✗ (store space) still exits 1", async () => {
  const name = "torch-env-python313-cuda12_8-sm90-avx512bf16";
  const paste = (h: ReturnType<typeof makeHost>, stdout: string) => {
    // Doctor's blocks, run as printed with a stand-in sudo and systemctl, into the nix.conf the stand-in nix reads.
    const blocks = stdout.match(/^sudo tee -a [\s\S]*?^sudo systemctl restart nix-daemon$/gm) ?? [];
    const bin = join(h.dir, "paste-bin");
    mkdirSync(bin, { recursive: true });
    sh(join(bin, "sudo"), 'exec "$@"');
    sh(join(bin, "systemctl"), "true");
    const ran = spawnSync("sh", ["-c", blocks.join("\n").replaceAll("/etc/nix/nix.conf", join(h.dir, "nix.conf"))], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: "utf8" });
    assert.is(ran.status, 0, ran.stderr);
    return blocks.length;
  };
  const doctorOn = (h: ReturnType<typeof makeHost>) => runMain(["doctor", name, "--machine", "x86_64", "--host-root", h.root, "--backend", "nix"], { env: { ...h.env, COLUMNS: "80" } });
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9" });
  const before = await doctorOn(h);
  assert.is(before.status, 1, before.stdout);
  assert.match(before.stdout, /✗ system features/);
  assert.match(before.stdout, /✗ CUDA binary cache/);
  assert.match(before.stdout.replace(/\s+/g, " "), /✓ GPU driver: .*reached through nixglhost/);
  assert.is(paste(h, before.stdout), 2);
  const after = await doctorOn(h);
  assert.is(after.status, 0, after.stdout + after.stderr);
  assert.not.match(after.stdout, /✗/);
  assert.match(after.stdout, /✓ system features/);
  assert.match(after.stdout, /✓ CUDA binary cache/);
  assert.match(after.stdout.replace(/\s+/g, " "), /✓ GPU driver: nvidia-smi sees 8 GPU\(s\) and the host's libcuda\.so\.1 is \/usr\/lib\/x86_64-linux-gnu\/libcuda\.so\.1 \(ldconfig -p\), outside \/run\/opengl-driver\/lib \(not NixOS\): reached through nixglhost/);
  for (const l of after.stdout.split("\n")) assert.ok([...l].length <= 80, `longer than 80: ${l}`);
  // The same host with the same blocks pasted, but a store too small: that ✗ is a fix the user must make, exit 1.
  const small = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", nix: "2.24.9", freeKib: 5_000_000 });
  paste(small, (await doctorOn(small)).stdout);
  const still = await doctorOn(small);
  assert.is(still.status, 1, still.stdout);
  assert.equal(still.stdout.split("\n").filter((l) => l.startsWith("  ✗")).map((l) => l.split(":")[0]), ["  ✗ Nix store space"]);
});

test("the route outside NixOS: the environment's nixglhost (the pin's nix-gl-host, a stand-in here) finds a stand-in libcuda on a fake host root; nothing without it", () => {
  const env = variant(SPARK_ENV.replace("sm121-armv9", "sm90-avx512bf16"));
  const standIn = `(args: import ${nixPath(join(ROOT, "tests/fixtures/stand-in-nixpkgs"))} (args // { standIn = { pin = "${env.nixpkgs}"; nixGlHost = true; }; }))`;
  const dir = tempDir("vm-nixglhost-");
  const out = join(dir, "result-nixglhost");
  // The documented command (docs/gpu-driver.md), with the stand-in nixpkgs handed to the wrapper.
  runNix("nix-build", [join(ROOT, env.file), "-A", "nixglhost", "-o", out, "--option", "substituters", "", "--arg", "variantMatrixNixpkgs", standIn]);
  const h = makeHost({ hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1" });
  const seen = runNix(join(out, "bin/nixglhost"), ["sh", "-c", 'echo "$LD_LIBRARY_PATH"'], { env: { NIXGLHOST_STAND_IN_ROOT: h.root } }).trim();
  assert.is(seen, join(h.root, "usr/lib/x86_64-linux-gnu"));
  const bare = makeHost({});
  assert.is(runNix(join(out, "bin/nixglhost"), ["sh", "-c", 'echo "$LD_LIBRARY_PATH"'], { env: { NIXGLHOST_STAND_IN_ROOT: bare.root } }).trim(), "");
  // nix-gl-host's directory rule: libcuda alone (none of its NVIDIA DSO patterns beside it) is passed over.
  const alone = makeHost({ hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", libcudaAlone: true });
  assert.is(runNix(join(out, "bin/nixglhost"), ["sh", "-c", 'echo "$LD_LIBRARY_PATH"'], { env: { NIXGLHOST_STAND_IN_ROOT: alone.root } }).trim(), "");
  // NixOS's /run/opengl-driver/lib, where the driver's libraries sit together, is searched too.
  const nixos = makeHost({ nixos: true });
  writeFileSync(join(nixos.root, "run/opengl-driver/lib/libnvidia-ptxjitcompiler.so.1"), "");
  assert.is(runNix(join(out, "bin/nixglhost"), ["sh", "-c", 'echo "$LD_LIBRARY_PATH"'], { env: { NIXGLHOST_STAND_IN_ROOT: nixos.root } }).trim(), join(nixos.root, "run/opengl-driver/lib"));
  // A CPU variant has none: it loads no libcuda.
  const cpuEnv = project.variants.find((v) => v.package === "torch-env" && v.cuda === null)!;
  let err = "";
  try {
    runNix("nix-instantiate", ["--eval", "-E", `(import ${nixPath(join(ROOT, cpuEnv.file))} { variantMatrixNixpkgs = ${standIn.replace(env.nixpkgs, cpuEnv.nixpkgs)}; }).nixglhost.drvPath`]);
  } catch (e) {
    err = String((e as Error).message);
  }
  assert.match(err, /is CPU-only: it loads no libcuda/);
  // withHostDriver, what install links at DIR: pkgs/host-driver.nix around this environment and this nixglhost (the
  // stand-in nixpkgs' runCommand records the script; tests/install.test.ts runs it).
  const wrapped = JSON.parse(
    runNix("nix-instantiate", ["--eval", "--strict", "--json", "-E", `let e = import ${nixPath(join(ROOT, env.file))} { variantMatrixNixpkgs = ${standIn}; }; in { name = e.withHostDriver.name; script = e.withHostDriver.standInBuildCommand; env = e.outPath; glhost = e.nixglhost.outPath; }`]),
  ) as { name: string; script: string; env: string; glhost: string };
  assert.match(wrapped.name, /-host-driver$/);
  // A nixpkgs without nix-gl-host (no catalog pin was found to carry one): numtide's at the commit its facts were read
  // at, fetched by hash, bin/nixglhost installed as its own default.nix installs it.
  const own = JSON.parse(
    runNix("nix-instantiate", ["--eval", "--strict", "--json", "-E", `let g = (import ${nixPath(join(ROOT, env.file))} { variantMatrixNixpkgs = ${standIn.replace("nixGlHost = true;", "")}; }).nixglhost; in { inherit (g) pname; src = g.src.standInFetched; main = g.meta.mainProgram; install = g.installPhase; }`]),
  ) as { pname: string; src: Record<string, string>; main: string; install: string };
  assert.equal(own.src, { owner: "numtide", repo: "nix-gl-host", rev: "5269b233f83880a0b433eafe026f0bc0d8f1a4a9", hash: "sha256-QZCKJoypcwgS3tDNSWMjlxEBZtOYPW3eXV24rMzKsac=" });
  assert.is(own.pname, "nix-gl-host");
  assert.is(own.main, "nixglhost");
  assert.match(own.install, /install -D -m0755 src\/nixglhost\.py \$out\/bin\/nixglhost/);
  assert.ok(wrapped.script.includes(`for f in ${wrapped.env}/bin/*; do`), wrapped.script);
  assert.ok(wrapped.script.includes(`"${wrapped.glhost}/bin/nixglhost"`), wrapped.script);
});

test("verify on a recorded non-NixOS GPU host: a Nix-built torch that cannot load libcuda gets the cause and the rerun; --host-driver runs it through nixglhost and the GPU is seen", async () => {
  const dir = tempDir("vm-verify-driver-");
  const matrix = writeMatrix(dir, {
    releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
    python: ["3.13"],
    cuda: ["12.8"],
    gpus: ["90"],
    isas: ["avx512bf16"],
    cpuOnly: false,
  });
  const recorded = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/probe.json"), "utf8"));
  const sees = join(dir, "sees.json");
  const blind = join(dir, "blind.json");
  writeFileSync(sees, JSON.stringify(recorded) + "\n");
  writeFileSync(blind, JSON.stringify({ ...recorded, gpu: { available: false, devices: [], matmul: null } }) + "\n");
  // STAND-IN environment: its python3 runs no Python; it prints the recorded H100 probe with the GPU as a Nix-built
  // torch finds it here: seen only when a directory of LD_LIBRARY_PATH holds libcuda.so.1 (its runpath,
  // /run/opengl-driver/lib, does not exist on this host).
  const envDir = join(dir, "result-torch-env");
  mkdirSync(join(envDir, "bin"), { recursive: true });
  sh(join(envDir, "bin/python3"), `for d in $(echo "\${LD_LIBRARY_PATH:-}" | tr ':' ' '); do [ -e "$d/libcuda.so.1" ] && exec cat "${sees}"; done\nexec cat "${blind}"`);
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true, devNvidia: true, hostLibcuda: "/usr/lib/x86_64-linux-gnu/libcuda.so.1" });
  const name = "pytorch-python313-cuda12_8-sm90-avx512bf16";
  const rec = ["--cpuinfo", join(HOSTS, "spr-h100/cpuinfo"), "--nvidia-smi", join(HOSTS, "spr-h100/nvidia-smi.txt"), "--machine", "x86_64"];
  const base = ["verify", name, "--python", envDir, ...rec, "--matrix", matrix, "--host-root", h.root];
  const r = await runMain(base, { env: { ...h.env, COLUMNS: "80" } });
  assert.is(r.status, 1, r.stderr);
  const flat = r.stdout.replace(/\s+/g, " ");
  assert.match(flat, /✗ a GPU this variant runs on: expected SM90, found torch sees no CUDA device though nvidia-smi lists 8 GPU\(s\): libcuda\.so\.1 is not on the runpath Nix gave torch \(\/run\/opengl-driver\/lib\)/);
  assert.match(flat, /the host has it at \/usr\/lib\/x86_64-linux-gnu\/libcuda\.so\.1 \(ldconfig -p\)/);
  assert.match(flat, new RegExp(`npx variant-matrix verify ${name} --python ${envDir.replace(/[/.]/g, "\\$&")} --host-driver`));
  const json = JSON.parse((await runMain([...base, "--json"], { env: h.env })).stdout);
  assert.ok(json.hostDriver.lines.length >= 2);
  // Through the route: the stand-in nix-gl-host of the variant's pin, on PATH, finds the host's libcuda.
  const standIn = `(args: import ${nixPath(join(ROOT, "tests/fixtures/stand-in-nixpkgs"))} (args // { standIn = { pin = "2c423e03bbafcff28bfadc6781a4a8257f205cb5"; nixGlHost = true; }; }))`;
  const envFile = join(ROOT, ".flox/pkgs/torch-env-python313-cuda12_8-sm90-avx512bf16.nix");
  const out = join(dir, "result-nixglhost");
  runNix("nix-build", ["--option", "substituters", "", "-E", `(import ${nixPath(envFile)} { variantMatrixNixpkgs = ${standIn}; }).nixglhost`, "-o", out]);
  const through = await runMain([...base, "--host-driver", join(out, "bin/nixglhost")], { env: { ...h.env, NIXGLHOST_STAND_IN_ROOT: h.root } });
  assert.match(through.stdout, /✓ GPU NVIDIA H100 80GB HBM3 \(9\.0\) runs this variant's code/);
  assert.not.match(through.stdout, /not on the runpath/);
  // Without a nixglhost: exit 2 saying where to get it.
  const missing = await runMain([...base, "--host-driver", join(dir, "nope/nixglhost")], { env: h.env });
  assert.is(missing.status, 2);
  assert.match(missing.stderr, /--host-driver: put nixglhost on PATH or give its path/);
});

test("build refuses with exit 2 and the fix before any work: Nix older than the pin needs (not with the user's own files), a system feature not declared, the flox backend without flox; --dry-run prints them", async () => {
  const logs = tempDir("vm-preflight-");
  const h = makeHost({ nix: "2.8.0", recorded: "epyc-nogpu" });
  const build = (args: string[], env = h.env) => runMain(["build", CPU, "--logs-dir", logs, "--plain", ...args], { env: { ...env, COLUMNS: "80" } });
  const old = await build(["--backend", "nix", "--out-dir", logs]);
  assert.is(old.status, 2, old.stdout + old.stderr);
  assert.match(old.stderr, /✗ Nix version: Nix 2\.8\.0 is older than 2\.18/);
  assert.match(old.stderr.replace(/\s+/g, " "), /fix: install Nix >= 2\.18 with the official installer/);
  assert.is(existsSync(join(logs, `result-${CPU}`)), false);
  // The dry run shows the same line (and plans).
  const dry = await build(["--backend", "nix", "--dry-run"]);
  assert.is(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /✗ Nix version: Nix 2\.8\.0 is older than 2\.18/);
  // The user's own files (--pkgs-dir): no catalog pin is evaluated, so no Nix version refusal.
  const own = await build(["--backend", "nix", "--dry-run", "--json", "--pkgs-dir", join(ROOT, "tests/fixtures/build-pkgs"), "--matrix", join(ROOT, "tests/fixtures/build-matrix.ts")]);
  assert.is(own.status, 0, own.stderr);
  assert.is(JSON.parse(own.stdout).preflight.find((c: CheckResult) => c.id === "nix-version").status, "skip");
  // A required system feature not declared (this Nix new enough, its own files): refused with the nix.conf line.
  const newer = makeHost({ nix: "2.24.9", recorded: "epyc-nogpu" });
  const feat = await build(["--backend", "nix", "--out-dir", logs, "--pkgs-dir", join(ROOT, "tests/fixtures/build-pkgs"), "--matrix", join(ROOT, "tests/fixtures/build-matrix.ts")], newer.env);
  assert.is(feat.status, 2, feat.stderr);
  assert.match(feat.stderr, /\nextra-system-features = gccarch-x86-64-v3\nEOF\nsudo systemctl restart nix-daemon\n/);
  // The flox backend without flox: refused, and the dry run says so too (it used to say nothing).
  const flox = await build(["--backend", "flox"]);
  assert.is(flox.status, 2);
  assert.match(flox.stderr, /✗ flox: flox is not installed/);
  assert.match(flox.stderr.replace(/\s+/g, " "), /fix: install flox ≥ 1\.5\.0 .*, or use `--backend nix`/);
  const floxDry = await build(["--backend", "flox", "--dry-run"]);
  assert.match(floxDry.stdout, /✗ flox: flox is not installed/);
});

test("one preflight for every command: build lists every failing check at once; eval refuses an old Nix as build does (not with --nixpkgs); flox dry-run advice names only what the command takes", async () => {
  const logs = tempDir("vm-preflight-all-");
  // Nix 2.8 and no gccarch feature declared: one refusal names both, not the first only.
  const h = makeHost({ nix: "2.8.0", recorded: "epyc-nogpu" });
  const both = await runMain(["build", CPU, "--logs-dir", logs, "--plain", "--backend", "nix", "--out-dir", logs], { env: { ...h.env, COLUMNS: "80" } });
  assert.is(both.status, 2, both.stdout + both.stderr);
  assert.match(both.stderr, /✗ Nix version: Nix 2\.8\.0 is older than 2\.18/);
  assert.match(both.stderr, /✗ system features: this machine's Nix declares no gccarch-x86-64-v3/);
  assert.is(existsSync(join(logs, `result-${CPU}`)), false);
  // eval on the same Nix: exit 2 with the same line and fix, before evaluating anything.
  const ev = await runMain(["eval", CPU], { env: { ...h.env, COLUMNS: "80" } });
  assert.is(ev.status, 2, ev.stdout + ev.stderr);
  assert.match(ev.stderr, /✗ Nix version: Nix 2\.8\.0 is older than 2\.18/);
  assert.match(ev.stderr.replace(/\s+/g, " "), /fix: install Nix >= 2\.18 with the official installer/);
  assert.is(ev.stdout, "", "nothing was evaluated");
  // With the user's own nixpkgs (--nixpkgs) no catalog pin is evaluated: no Nix version refusal.
  const own = await runMain(["eval", CPU, "--nixpkgs", "import <nixpkgs>", "--engine", "nix-instantiate"], { env: h.env });
  assert.not.match(own.stderr, /Nix version/);
  // A variant of another system with the flox backend: the dry run's advice takes the nix backend with --builders
  // together, never --builders alone, which this command refuses with flox.
  const other = project.variants.find((v) => v.system !== (process.arch === "arm64" ? "aarch64-linux" : "x86_64-linux") && v.package === "pytorch")!;
  const f = makeHost({ flox: "1.7.0", nix: "2.24.9" });
  const dry = await runMain(["build", other.name, "--backend", "flox", "--dry-run", "--logs-dir", logs], { env: f.env });
  assert.is(dry.status, 0, dry.stderr);
  assert.match(dry.stdout.replace(/\s+/g, " "), /flox builds on this machine only; build it on a \S+ machine, or with `--backend nix --builders`/);
  assert.not.match(dry.stdout.replace(/`--backend nix --builders`/g, ""), /--builders/);
  const refused = await runMain(["build", other.name, "--backend", "flox", "--builders", "ssh://b", "--dry-run", "--logs-dir", logs], { env: f.env });
  assert.is(refused.status, 2, "the option the advice avoids is indeed refused with flox");
});

test("publish --org without flox: exit 2 with the install line, before flox's preconditions (never `flox auth login`); an old flox too", async () => {
  const h = makeHost({});
  const r = await runMain(["publish", CPU, "--org", "acme", "--dry-run"], { env: { ...h.env, COLUMNS: "80" } });
  assert.is(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, /✗ flox: flox is not installed/);
  // publish has no --backend: its way without flox is --to.
  assert.match((r.stdout + r.stderr).replace(/\s+/g, " "), /install flox ≥ 1\.5\.0 .*, or push to a Nix binary cache with `publish --to STORE-URI`/);
  assert.not.match(r.stdout + r.stderr, /--backend/);
  assert.not.match(r.stdout + r.stderr, /flox auth login/);
  const old = await runMain(["publish", CPU, "--org", "acme", "--dry-run"], { env: makeHost({ flox: "1.4.3" }).env });
  assert.is(old.status, 2);
  assert.match(old.stdout + old.stderr, /flox 1\.4\.3 is older than 1\.5\.0/);
});

test("detect ends with the install line to run next, whole on its line, for the right package, DIR and kind of pick", async () => {
  // This machine (modelled: a Sapphire Rapids + H100 host under --host-root, so the answer is the same on every
  // machine): install, and the doctor line that only checks, each `npx variant-matrix …` (COLUMNS=80: never cut).
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true });
  const here = await runMain(["detect", "--package", "pytorch", "--host-root", h.root], { env: { ...h.env, COLUMNS: "80" } });
  assert.match(here.stdout, /GPU 0: .*H100/, "the modelled host's GPU, not this machine's");
  const mine = /\n  (npx variant-matrix install (\S+))\n/.exec(here.stdout);
  assert.ok(mine, here.stdout);
  assert.match(here.stdout, /links \.\/pytorch/);
  assert.match(here.stdout, new RegExp(`this only\\s+checks:\n  npx variant-matrix doctor ${mine![2]}\n`));
  // A recorded GPU host: install runs there; its plan here is install --dry-run with the same recording.
  const cpuinfo = join(HOSTS, "dgx-spark/cpuinfo");
  const smi = join(HOSTS, "dgx-spark/nvidia-smi.txt");
  const r = await runMain(["detect", "--cpuinfo", cpuinfo, "--nvidia-smi", smi]);
  assert.is(r.status, 0, r.stderr);
  const name = /\n *Next, on the recorded host:\n  npx variant-matrix install (torch-env-python313-cuda\d+_\d+-sm121-armv9)\n/.exec(r.stdout)?.[1];
  assert.ok(name, r.stdout);
  assert.match(r.stdout, /links \.\/torch-env, takes the host's GPU-driver route and verifies/);
  // The recordings' paths are the checkout's: however long (the line may go on with ` \` then) and whatever they hold
  // (shell-quoted then), the same command once its continuations are joined.
  const joined = r.stdout.replace(/ \\\n\s*/g, " ");
  assert.ok(joined.includes(`\n  npx variant-matrix install --dry-run ${name} --cpuinfo ${shellWord(cpuinfo)} --nvidia-smi ${shellWord(smi)}\n`), r.stdout);
  // An environment of the matrix and a CPU-only pick: its own DIR, and no GPU promised.
  const cpu = await runMain(["detect", "--cpuinfo", join(HOSTS, "epyc-nogpu/cpuinfo"), "--package", "pytorch"]);
  assert.match(cpu.stdout, /links \.\/pytorch and verifies pytorch-\S+-cpu-\S+ \(CPU-only: no GPU check\)/);
  assert.not.match(cpu.stdout, /on the GPU/);
  assert.match(cpu.stdout, /npx variant-matrix install --dry-run pytorch-\S+ --package pytorch --cpuinfo /);
});

test.run();
