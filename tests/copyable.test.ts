/**
 * Everything a user copies is whole (issue 55): a command wrapped at 80 columns is the same command once its shell
 * continuations are joined, an option stays beside its value, a quoted value is never split; detect's lines name the
 * matrix that gave the answer (`--matrix`), and its next steps are install (and doctor) of the pick, each on a line of
 * its own, for an environment of the matrix (llm-env) and a CPU-only pick.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { shellWord, wrapCommand } from "../generator/text.ts";
import { HOSTS, makeHost } from "./helpers/host-model.ts";
import { runMain } from "./helpers/main.ts";
import { placeless, tempDir, writeMatrix } from "./helpers/cli.ts";

/** The commands in `text`: each line starting `npx ` or `NIX_CONFIG=` with its ` \` continuations joined. */
function commands(text: string): string[] {
  const out: string[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*(npx |NIX_CONFIG=)/.test(lines[i]!)) continue;
    let c = lines[i]!.trim();
    while (c.endsWith(" \\")) c = `${c.slice(0, -2)} ${lines[++i]!.trim()}`;
    out.push(c);
  }
  return out;
}

test("wrapCommand: joined again it is the same command; --option VALUE on one line; a quoted value whole", () => {
  const cmd = "NIX_CONFIG='extra-substituters = s3://bucket/with/a/long/path' npx variant-matrix install torch-env-python313-cuda12_8-sm90-avx512 --cpuinfo tests/fixtures/hosts/dgx-spark/cpuinfo --matrix /tmp/x/matrix.ts";
  for (const width of [40, 60, 80, 120]) {
    const w = wrapCommand(cmd, width, "  ");
    assert.equal(commands(w), [cmd], w);
    const lines = w.split("\n");
    // The pair fits a line from 60 columns on (at 40 it cannot: each word alone).
    if (width >= 60) assert.ok(lines.some((l) => l.includes("--cpuinfo tests/fixtures/hosts/dgx-spark/cpuinfo")), w);
    assert.ok(lines.some((l) => l.includes("NIX_CONFIG='extra-substituters = s3://bucket/with/a/long/path'")), w);
    for (const l of lines) assert.ok((l.match(/'/g)?.length ?? 0) % 2 === 0, `a line cut inside quotes: ${l}`);
  }
});

test("detect with --matrix at 80 columns: install and doctor of the pick name that matrix, each whole on its own line (an environment; a CPU-only pick)", async () => {
  const dir = tempDir("vm-copyable-");
  const m = writeMatrix(dir, {
    releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
    python: ["3.13"], cuda: ["12.8"], gpus: ["90"], isas: ["avx512", "avx2"], cpuOnly: true, environments: { llm: ["transformers"] },
  });
  // This machine (modelled under --host-root: a Sapphire Rapids + H100 host, the same answer on every machine), llm-env.
  const h = makeHost({ recorded: "spr-h100", nvidiaSmi: true });
  const here = await runMain(["detect", "--package", "llm-env", "--matrix", m, "--host-root", h.root], { columns: 80, env: h.env });
  const hereCmds = commands(here.stdout);
  const pick = /^npx variant-matrix install (llm-env-\S+) --matrix /.exec(hereCmds.find((c) => c.startsWith("npx variant-matrix install ")) ?? "")?.[1];
  assert.ok(pick, here.stdout + here.stderr);
  assert.ok(hereCmds.includes(`npx variant-matrix install ${pick} --matrix ${shellWord(m)}`), hereCmds.join("\n"));
  assert.ok(hereCmds.includes(`npx variant-matrix doctor ${pick} --matrix ${shellWord(m)}`), hereCmds.join("\n"));
  assert.match(here.stdout, /links \.\/llm-env/);
  // A recorded CPU-only host: the pick is CPU-only, promised no GPU check; its plan here with the same recording.
  const cpuinfo = join(HOSTS, "epyc-nogpu/cpuinfo");
  const smi = join(HOSTS, "epyc-nogpu/nvidia-smi.txt");
  const cpu = await runMain(["detect", "--package", "llm-env", "--matrix", m, "--cpuinfo", cpuinfo, "--nvidia-smi", smi], { columns: 80 });
  assert.is(cpu.status, 0, cpu.stderr);
  const name = "llm-env-python313-cpu-avx2";
  const cmds = commands(cpu.stdout);
  assert.ok(cmds.includes(`npx variant-matrix install ${name} --matrix ${shellWord(m)}`), cmds.join("\n"));
  assert.ok(cmds.some((c) => c.startsWith(`npx variant-matrix install --dry-run ${name} `) && c.includes(`--cpuinfo ${shellWord(cpuinfo)} --nvidia-smi ${shellWord(smi)} --matrix ${shellWord(m)}`)), cmds.join("\n"));
  assert.match(cpu.stdout.replace(/\s+/g, " "), `links ./llm-env and verifies ${name} (CPU-only: no GPU check)`);
  assert.not.match(cpu.stdout, /on the GPU/);
  // Every line fits 80 columns but a word that cannot be cut, the paths of the checkout and the temporary directory
  // (the recordings, the matrix) counted as short ones: where the repository is cloned is no part of the promise.
  for (const l of cpu.stdout.split("\n")) assert.ok(placeless(l).length <= 80 || !placeless(l).trim().includes(" "), l);
});

test.run();
