/**
 * Benchmark: eval's coupling proof, asking Nix's database for the references of every evaluated .drv (and the whole
 * closure of every environment's), side by side in one run on the default matrix, generated into a temporary tree
 * and instantiated against the stand-in nixpkgs:
 *   before   one `nix-store --query --references DRV` per .drv and one `--requisites` per environment .drv (what
 *            eval ran before: a process each);
 *   now      driver/store.ts storeReferences and storeClosures (`nix-store --dump-db` and one `--requisites` for
 *            all, batched).
 * Both answers must agree path for path. Prints the processes started, seconds and the ratio.
 * Run: `npx tsx bench/eval-proof.ts`, or through bench/index.ts.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import { renderAll } from "../generator/generate/render/index.ts";
import { syncFiles } from "../generator/generate/write.ts";
import { storeClosures, storeReferences } from "../generator/driver/store.ts";
import matrix from "../matrix.ts";

const ROOT = resolve(import.meta.dirname, "..");
const BY_REV = `import ${join(ROOT, "tests/fixtures/stand-in-nixpkgs/by-rev.nix")}`;

function nixStore(args: string[]): string[] {
  const r = spawnSync("nix-store", args, { encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`nix-store ${args.join(" ").slice(0, 200)} failed: ${r.stderr}`);
  return r.stdout.split("\n").filter(Boolean);
}

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;
const same = (a: string[] | undefined, b: string[]) => !!a && a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

/** Run the benchmark; returns both times in seconds and the number of .drv files asked about. */
export async function main() {
  const dir = mkdtempSync(join(tmpdir(), "vm-bench-proof-"));
  try {
    const p = projectFromMatrix(matrix, undefined, dir);
    await syncFiles(dir, renderAll(p));
    cpSync(join(ROOT, "pkgs"), join(dir, "pkgs"), { recursive: true, filter: (src) => !src.endsWith("variants.nix") });
    const inst = spawnSync("nix-instantiate", ["release.nix", "-A", "all", "--arg", "nixpkgs", BY_REV], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 });
    if (inst.status !== 0) throw new Error(`nix-instantiate release.nix failed: ${inst.stderr.slice(-2000)}`);
    const drvs = [...new Set(inst.stdout.split("\n").filter((l) => l.endsWith(".drv")))];
    // The environments: buildEnv names their derivation pythonX.Y-X.Y-env.
    const envs = drvs.filter((d) => /-env\.drv$/.test(d));

    let t0 = process.hrtime.bigint();
    const beforeRefs = new Map(drvs.map((d) => [d, nixStore(["--query", "--references", d])]));
    const beforeClosures = new Map(envs.map((d) => [d, nixStore(["--query", "--requisites", d])]));
    const before = seconds(t0);
    t0 = process.hrtime.bigint();
    const refs = await storeReferences(drvs);
    const closures = await storeClosures(envs);
    const now = seconds(t0);

    const wrong = [...drvs.filter((d) => !same(refs.get(d), beforeRefs.get(d)!)), ...envs.filter((d) => !same(closures.get(d), beforeClosures.get(d)!))];
    if (wrong.length) throw new Error(`the answers differ for ${wrong.length} path(s), e.g. ${wrong[0]}`);
    console.log(`eval's coupling proof, default matrix: references of ${drvs.length} .drv files, closures of ${envs.length} environments (answers agree)`);
    console.log(`  before: ${drvs.length + envs.length} nix-store processes, ${before.toFixed(2)} s`);
    console.log(`  now:    ${Math.ceil(drvs.length / 1000) + 1 + Math.ceil(envs.length / 1000)}+ nix-store processes, ${now.toFixed(2)} s`);
    console.log(`  ratio before/now: ${(before / now).toFixed(1)}×`);
    return { before, now, drvs: drvs.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) await main();
