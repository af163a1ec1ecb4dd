// The generated flake. The repository's flake.lock pins equal the catalog's (revision and narHash) and
// flake.nix's inputs; then, with the real Nix 2.8 here (flakes enabled per command) on a toy matrix copied into a temp
// git repository (a flake's evaluation copies the git-tracked tree) and its nixpkgs input overridden with the stand-in
// (tests/fixtures/stand-in-nixpkgs, a `path:` input):
// - `nix flake show --json` lists packages, devShells, overlays, checks and hydraJobs for every variant/environment;
// - `nix build .#NAME` builds a toy variant, the same derivation as its .flox/pkgs wrapper;
// - an overlay applied to the stand-in nixpkgs gives its python313Packages.torch the variant's capabilities, ISA flags,
//   CUDA set and system features, builds torchaudio and a user's peft on it, and leaves python312Packages alone;
//   a package-set-scope variant's overlay refuses a nixpkgs config without its capabilities;
// - a devShell holds the environment and nix-gl-host.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cpSync, mkdirSync, readFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { sha256ToSri } from "../generator/generate/render/index.ts";
import { tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";
import { REPO_ROOT, STAND_IN_BUILDER_FEATURES, STAND_IN_NIXPKGS, currentSystem, nixInstantiate, nixStr, runNix } from "./helpers/nix.ts";

const FLAKES = ["--extra-experimental-features", "nix-command flakes"];
const PIN = "2c423e03bbafcff28bfadc6781a4a8257f205cb5";
const SYSTEM = currentSystem();
const ISA = SYSTEM === "aarch64-linux" ? "armv9" : "avx2";

interface Lock {
  nodes: Record<string, { flake?: boolean; locked?: { narHash: string; rev: string; owner: string; repo: string; type: string }; inputs?: Record<string, string> }>;
  root: string;
  version: number;
}

test("flake.lock: every pin of the matrix locked to the catalog's narHash; flake.nix's inputs are exactly those pins", async () => {
  const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, "flake.lock"), "utf8")) as Lock;
  const flake = readFileSync(path.join(REPO_ROOT, "flake.nix"), "utf8");
  assert.is(lock.version, 7);
  const inputs = Object.keys(lock.nodes[lock.root]!.inputs!);
  assert.ok(inputs.length >= 1);
  for (const input of inputs) {
    const node = lock.nodes[input]!;
    const pin = catalog.nixpkgs.find((p) => p.rev === node.locked!.rev);
    assert.ok(pin, `${input}: ${node.locked!.rev} is a catalog pin`);
    assert.is(node.locked!.narHash, sha256ToSri(pin!.sha256!), `${input}: narHash is the catalog's sha256 of ${pin!.rev}`);
    assert.equal([node.locked!.owner, node.locked!.repo, node.locked!.type, node.flake], ["NixOS", "nixpkgs", "github", false]);
    assert.match(flake, new RegExp(`${input} = \\{\\s+url = "github:NixOS/nixpkgs/${pin!.rev}";\\s+flake = false;`), `${input} in flake.nix`);
    assert.match(flake, new RegExp(`"${pin!.rev}" = inputs\\.${input};`));
  }
  assert.is((flake.match(/url = "github:NixOS\/nixpkgs\//g) ?? []).length, inputs.length, "no input in flake.nix that the lock lacks");
  // The matrix's pins: every variant's nixpkgs revision is an input.
  const revs = new Set(JSON.parse((await runMain(["list", "--json"])).stdout).map((v: { nixpkgs: string }) => v.nixpkgs));
  assert.equal([...revs].sort(), inputs.map((i) => lock.nodes[i]!.locked!.rev).sort());
});

test("sha256ToSri: Nix base32 and SRI name the same hash (nix-hash agrees)", async () => {
  const sri = "sha256-dt4WdcvsA8/RCe+VZZwqU0X+XMM3wBbGCWA0/sFWzGo=";
  const b32 = runNix("nix-hash", ["--type", "sha256", "--to-base32", sri]).trim();
  assert.is(sha256ToSri(b32), sri);
  assert.is(sha256ToSri(sri), sri);
  assert.throws(() => sha256ToSri("md5-abc"), /not a sha256/);
});

/** A toy matrix as a git repository with the generated flake; its stand-in nixpkgs as a path input. */
async function toyFlake(): Promise<{ dir: string; standIn: string; nix: (args: string[]) => string; list: { name: string; package: string; cuda: string | null; role?: string; file: string }[] }> {
  const root = tempDir("vm-flake-");
  const dir = path.join(root, "repo");
  mkdirSync(path.join(dir, "generator", "verify"), { recursive: true });
  cpSync(path.join(REPO_ROOT, "pkgs"), path.join(dir, "pkgs"), { recursive: true });
  cpSync(path.join(REPO_ROOT, "generator/verify/probe.py"), path.join(dir, "generator/verify/probe.py"));
  const standIn = path.join(root, "stand-in-nixpkgs");
  cpSync(STAND_IN_NIXPKGS, standIn, { recursive: true });
  const matrix = writeMatrix(dir, {
    releases: [{ torch: "2.12.0", nixpkgs: PIN }],
    python: ["3.13"],
    cuda: ["13.0"],
    gpus: ["90"],
    isas: [ISA],
    cpuOnly: true,
    environments: { llm: ["peft", "einops"] },
  });
  const gen = await runMain(["generate", "--matrix", matrix, "--out", dir]);
  if (gen.status !== 0) throw new Error(gen.stderr);
  const list = JSON.parse((await runMain(["list", "--json", "--matrix", matrix])).stdout);
  const git = (...a: string[]) => execFileSync("git", ["-c", "user.email=t@example.org", "-c", "user.name=test", ...a], { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "toy");
  const nix = (args: string[]) =>
    runNix("nix", [...FLAKES, ...args, "--no-write-lock-file", "--override-input", `nixpkgs-${PIN.slice(0, 7)}`, `path:${standIn}`], { timeout: 300_000 });
  return { dir, standIn, nix: (a) => nix([...a.slice(0, -1), `${dir}${a.at(-1)}`]), list };
}

/** The toy flake, made once per file when a test first needs it (no test changes it). */
let made: ReturnType<typeof toyFlake> | undefined;
const toyFlakeOnce = () => (made ??= toyFlake());

test("nix flake show lists packages, checks and hydraJobs per variant, devShells per environment, overlays per pytorch variant", async () => {
  const toy = await toyFlakeOnce();
  const show = JSON.parse(toy.nix(["flake", "show", "--json", ""])) as Record<string, Record<string, Record<string, { type?: string; name?: string }>>>;
  const names = toy.list.map((v) => v.name).sort();
  assert.equal(Object.keys(show.packages![SYSTEM]!).sort(), names);
  assert.equal(Object.keys(show.checks![SYSTEM]!).sort(), names);
  assert.equal(Object.keys(show.devShells![SYSTEM]!).sort(), toy.list.filter((v) => /-env-/.test(v.name)).map((v) => v.name).sort());
  assert.ok(Object.keys(show.devShells![SYSTEM]!).some((n) => n.startsWith("llm-env-")), "the named environment has a devShell");
  assert.equal(Object.keys(show.overlays!).sort(), toy.list.filter((v) => v.package === "pytorch").map((v) => v.name).sort());
  for (const o of Object.values(show.overlays!)) assert.is((o as { type?: string }).type, "nixpkgs-overlay");
  assert.ok(Object.keys(show.hydraJobs!).includes("static"));
  for (const n of names) assert.ok(show.hydraJobs![n], `hydraJobs.${n}`);
});

test("nix build .#<toy variant> builds against the stand-in; the flake's derivation is the .flox/pkgs wrapper's", async () => {
  const toy = await toyFlakeOnce();
  const cpu = toy.list.find((v) => v.package === "pytorch" && v.cuda === null)!;
  const built = JSON.parse(toy.nix(["build", "--no-link", "--json", "--option", "substituters", "", ...STAND_IN_BUILDER_FEATURES, `#${cpu.name}`])) as { drvPath: string; outputs: { out: string } }[];
  assert.is(built.length, 1);
  assert.match(readFileSync(built[0]!.outputs.out, "utf8"), /NIX_CFLAGS_COMPILE=.*-march=/);
  const [wrapperDrv] = nixInstantiate(`import ${nixStr(path.join(toy.dir, cpu.file))} { variantMatrixNixpkgs = ${nixStr(toy.standIn)}; }`, [], { expr: true });
  assert.is(built[0]!.drvPath, wrapperDrv, "flake and flox wrapper: one derivation");
});

test("an overlay gives the stand-in nixpkgs' python313Packages.torch the variant's capabilities, ISA flags and CUDA set; packages on it follow", async () => {
  const toy = await toyFlakeOnce();
  const pt = toy.list.find((v) => v.package === "pytorch" && v.cuda !== null)!;
  const r = JSON.parse(
    toy.nix([
      "eval", "--json", "--impure",
      "--apply",
      `ov: let p = import ${toy.standIn} { system = "${SYSTEM}"; config = { allowUnfree = true; }; overlays = [ ov ]; }; t = p.python313Packages.torch; in {
         inherit (t) name cudaSupport requiredSystemFeatures; flags = t.NIX_CFLAGS_COMPILE; gpuTargets = t.standIn.overrideArgs.gpuTargets;
         cudaSet = t.standIn.cudaPackages; audioOnIt = p.python313Packages.torchaudio.standIn.overrideArgs.torchDrvPath == t.drvPath;
         audioArch = p.python313Packages.torchaudio.TORCH_CUDA_ARCH_LIST; peftOnIt = p.python313Packages.peft.standIn.torchDrvPath == t.drvPath;
         other = p.python312Packages.torch.standIn.overrideArgs.gpuTargets; }`,
      `#overlays.${pt.name}`,
    ]),
  );
  assert.is(r.name, `${pt.name}-2.12.0`);
  assert.equal(r.gpuTargets, ["9.0"]);
  assert.is(r.cudaSupport, true);
  assert.is(r.cudaSet, "cudaPackages_13_0");
  assert.match(r.flags, ISA === "avx2" ? /-march=x86-64-v3/ : /-march=armv9/);
  assert.ok(r.requiredSystemFeatures.some((f: string) => f.startsWith("gccarch-")), "the ISA's builder feature");
  assert.is(r.audioOnIt, true, "torchaudio of the set is the variant's, on its torch");
  assert.is(r.audioArch, "9.0");
  assert.is(r.peftOnIt, true, "a user's package taking torch is built on the variant's torch");
  assert.equal(r.other, [], "python312Packages keeps its own torch");
});

test("a package-set-scope variant's overlay refuses a nixpkgs config without its capabilities, and takes one with them", async () => {
  const toy = await toyFlakeOnce();
  // The overlay is pkgs/overlay.nix: evaluate it directly for a variant whose capabilities go to the whole CUDA set.
  const v = `{ name = "pytorch-python313-cuda13_0-sm90-${ISA}"; role = "torch"; python = "3.13"; pythonPackageSet = "python313Packages"; cuda = "13.0";
    cudaPackageSet = "cudaPackages_13_0"; cudaCapabilities = [ "9.0" ]; cudaCapabilitiesForPackageSet = true; version = "2.12.0"; torchVersion = "2.12.0";
    cflags = [ ]; requiredSystemFeatures = [ ]; description = "x"; nixpkgsRev = "${PIN}"; }`;
  const expr = (config: string) =>
    `let p = import ${nixStr(toy.standIn)} { config = { allowUnfree = true; ${config} }; overlays = [ (import ${nixStr(path.join(REPO_ROOT, "pkgs/overlay.nix"))} { variant = ${v}; }) ]; }; in p.python313Packages.torch.standIn.overrideArgs.gpuTargets`;
  const bad = spawnSync("nix-instantiate", ["--eval", "--strict", "-E", expr("")], { encoding: "utf8" });
  assert.is.not(bad.status, 0);
  assert.match(bad.stderr, /import nixpkgs with config\.cudaCapabilities = \[ "9\.0" \] and config\.cudaForwardCompat = false/);
  const good = spawnSync("nix-instantiate", ["--eval", "--strict", "-E", expr(`cudaCapabilities = [ "9.0" ]; cudaForwardCompat = false;`)], { encoding: "utf8" });
  assert.is(good.status, 0, good.stderr);
  assert.match(good.stdout, /\[ "9\.0" \]/);
});

test("a devShell holds the environment and nix-gl-host, with a one-line hint for non-NixOS hosts", async () => {
  const toy = await toyFlakeOnce();
  const env = toy.list.find((v) => v.name.startsWith("llm-env-") && v.cuda !== null)!;
  const r = JSON.parse(
    toy.nix(["eval", "--json", "--apply", "s: { inherit (s) standInShellPackages shellHook; }", `#devShells.${SYSTEM}.${env.name}`]),
  ) as { standInShellPackages: string[]; shellHook: string };
  assert.equal(r.standInShellPackages.length, 2);
  assert.ok(r.standInShellPackages.some((n) => n.startsWith("nix-gl-host")), r.standInShellPackages.join(" "));
  assert.match(r.shellHook, /nixglhost python3/);
  assert.is(r.shellHook.trim().split("\n").length, 1);
});

test.run();
