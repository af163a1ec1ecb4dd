// Issue 10 (6): CI exports. The GitHub workflow is checked with GitHub's own workflow parser
// (@actions/workflow-parser) and by its job graph; the Hydra spec by its fields and the jobset's expression.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { cachedCheckScript, GITHUB_MATRIX_LIMIT, githubWorkflowYaml, planJobs } from "../generator/ci.ts";
import { projectFromMatrix } from "../generator/project.ts";
import type { Variant } from "../generator/schema.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { ROOT, runCli, tempDir } from "./helpers/cli.ts";

const wide = projectFromMatrix(widestMatrix()).variants;

async function validate(yamlText: string) {
  // ESM-only package (its exports have an "import" condition only), so it is imported dynamically.
  const { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } = await import("@actions/workflow-parser");
  const parsed = parseWorkflow({ name: "build-variants.yml", content: yamlText }, new NoOperationTraceWriter());
  const errors = parsed.context.errors.getErrors().map((e: { message: string }) => e.message);
  assert.equal(errors, [], "GitHub's workflow parser reports no error");
  const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
  assert.equal(template.errors ?? [], [], "conversion errors");
  return template;
}

/**
 * Checks the job graph: every variant once, ≤ 256 entries per matrix, no job needs another; each torchaudio is in
 * the matrix entry of its own pytorch (built after it on the same runner), so a failed pytorch skips only it.
 */
function checkGraph(yamlText: string, variants: readonly Variant[]) {
  type Job = { needs?: string[]; "runs-on": string | string[]; strategy: { matrix: { include: { variant: string; dependents: string }[] } }; steps: { name?: string; if?: string; run?: string }[] };
  const wf = parseYaml(yamlText) as { jobs: Record<string, Job> };
  const entryOf = new Map<string, { job: string; pytorch: string }>();
  for (const [id, j] of Object.entries(wf.jobs)) {
    assert.is(j.needs, undefined, `${id}: no job waits for a whole matrix`);
    const entries = j.strategy.matrix.include;
    assert.ok(entries.length >= 1 && entries.length <= GITHUB_MATRIX_LIMIT, `${id}: ${entries.length} matrix entries`);
    for (const e of entries)
      for (const v of [e.variant, ...e.dependents.split(" ").filter(Boolean)]) {
        assert.not.ok(entryOf.has(v), `${v} appears twice`);
        entryOf.set(v, { job: id, pytorch: e.variant });
      }
    const names = j.steps.map((s) => s.name ?? "");
    assert.ok(names.indexOf("Build the variants built on it") > names.indexOf("Build ${{ matrix.variant }}"), "dependents after pytorch");
    // Within an entry, the environment comes after the packages it holds.
    for (const e of entries) {
      const ds = e.dependents.split(" ").filter(Boolean);
      const env = ds.findIndex((d) => d.startsWith("torch-env"));
      if (env >= 0) assert.ok(ds.slice(0, env).some((d) => d.startsWith("torchvision")) && ds.slice(0, env).some((d) => d.startsWith("torchaudio")), `${e.variant}: ${ds}`);
    }
  }
  assert.is(entryOf.size, variants.length, "every variant has a job");
  for (const v of variants) {
    const e = entryOf.get(v.name)!;
    const job = wf.jobs[e.job]!;
    const label = Array.isArray(job["runs-on"]) ? job["runs-on"].join(",") : job["runs-on"];
    assert.ok(v.system === "aarch64-linux" ? /arm/.test(label) : !/arm/.test(label), `${v.name} runs on ${label}`);
    assert.is(e.pytorch, v.dependsOn[0] ?? v.name, `${v.name}: in its own pytorch's entry`);
  }
  return wf;
}

test("github workflow for the widest catalog matrix: valid for GitHub's parser, ≤ 256 per matrix, one pytorch failure skips only its own torchaudio", async () => {
  assert.ok(wide.length > 2 * GITHUB_MATRIX_LIMIT, `a matrix that needs splitting (${wide.length} variants)`);
  const text = githubWorkflowYaml(wide);
  const template = await validate(text);
  const wf = checkGraph(text, wide);
  assert.ok(Object.keys(wf.jobs).length > 4, "split into several jobs");
  assert.ok(template.jobs.length === Object.keys(wf.jobs).length);
  assert.match(text, /nix-build release\.nix -A "\$\{\{ matrix\.variant \}\}"/);
  assert.match(text, /nix --extra-experimental-features nix-command copy --to "\$NIX_CACHE_URI"/);
  assert.match(text, /secrets\.NIX_CACHE_URI/);
  // The check can fail: GitHub's parser rejects a misspelled key.
  const { NoOperationTraceWriter, parseWorkflow } = await import("@actions/workflow-parser");
  const broken = parseWorkflow({ name: "x.yml", content: text.replace("runs-on:", "runs-onn:") }, new NoOperationTraceWriter());
  assert.ok(broken.context.errors.getErrors().length > 0, "a misspelled key is an error");
});

test("planJobs splits at the limit and keeps each torchaudio in the matrix entry of its pytorch", () => {
  const jobs = planJobs(wide, 7);
  for (const j of jobs) assert.ok(j.entries.length <= 7);
  const entryOf = new Map(jobs.flatMap((j) => j.entries.flatMap((e) => [e.variant, ...e.dependents.split(" ").filter(Boolean)].map((n) => [n, e.variant] as const))));
  for (const v of wide.filter((x) => x.package === "torchaudio")) assert.is(entryOf.get(v.name), v.dependsOn[0]);
  assert.throws(() => planJobs(wide.filter((v) => v.package === "torchaudio")), /is not in the selection/);
});

test("ci github CLI: --runs-on labels, --filter keeps the pytorch of each torchaudio, -o writes the file", async () => {
  const out = join(tempDir("vm-ci-"), ".github/workflows/build-variants.yml");
  const r = runCli(["ci", "github", "--filter", "package=torchaudio", "--filter", "sm=121", "--runs-on", "aarch64-linux=self-hosted,arm64,gpu", "-o", out]);
  assert.is(r.status, 0, r.stderr);
  const text = readFileSync(out, "utf8");
  await validate(text);
  const wf = parseYaml(text) as { jobs: Record<string, { "runs-on": string[] }> };
  for (const j of Object.values(wf.jobs)) assert.equal(j["runs-on"], ["self-hosted", "arm64", "gpu"]);
  const bad = runCli(["ci", "github", "--runs-on", "nonsense"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--runs-on "nonsense": expected SYSTEM=LABEL/);
});

test("ci hydra: a declarative jobset spec evaluating release.nix from the repository", () => {
  const r = runCli(["ci", "hydra", "--repo", "https://example.org/variants.git", "--branch", "main"]);
  assert.is(r.status, 0, r.stderr);
  const spec = JSON.parse(r.stdout);
  const js = spec.variants;
  assert.is(js.nixexprinput, "src");
  assert.is(js.nixexprpath, "release.nix");
  assert.equal(js.inputs.src, { type: "git", value: "https://example.org/variants.git main", emailresponsible: false });
  assert.ok(readFileSync(join(ROOT, "release.nix"), "utf8").includes("{ nixpkgs ? null }:"), "release.nix takes no required argument");
  assert.is(runCli(["ci", "hydra"]).status, 2);
});

test("github: the first step skips a variant the store or a substituter already holds (its shell, run for real)", () => {
  const text = githubWorkflowYaml(wide);
  const wf = parseYaml(text) as { jobs: Record<string, { steps: { id?: string; name?: string; if?: string; run?: string }[] }> };
  for (const j of Object.values(wf.jobs)) {
    const ids = j.steps.map((s) => s.id ?? s.name ?? "");
    assert.ok(ids.indexOf("cached") < ids.indexOf("Build ${{ matrix.variant }}"), "the check comes first");
    assert.match(j.steps.find((s) => s.name === "Build ${{ matrix.variant }}")!.if!, /steps\.cached\.outputs\.hit != 'true'/);
    assert.match(j.steps.find((s) => s.name === "Build the variants built on it")!.run!, /the binary cache already holds it"; continue/);
  }
  // The script against a real Nix store: a derivation not built yet → hit=false; once valid → hit=true.
  const dir = tempDir("vm-ci-");
  writeFileSync(join(dir, "release.nix"), `{ x = derivation { name = "vm-ci-check"; salt = "${process.pid}-${Date.now()}"; system = builtins.currentSystem; builder = "/bin/sh"; args = [ "-c" "echo > $out" ]; }; }\n`);
  const hit = () => {
    const out = join(dir, `out-${Math.random()}`);
    writeFileSync(out, "");
    execFileSync("bash", ["-euo", "pipefail", "-c", cachedCheckScript("x")], { cwd: dir, env: { ...process.env, GITHUB_OUTPUT: out, NIX_CONFIG: "substituters =" }, stdio: ["ignore", "pipe", "pipe"] });
    return readFileSync(out, "utf8").trim();
  };
  assert.is(hit(), "hit=false");
  execFileSync("nix-build", [join(dir, "release.nix"), "-A", "x", "--no-out-link", "--option", "substituters", ""], { stdio: "ignore" });
  assert.is(hit(), "hit=true");
});

test.run();
