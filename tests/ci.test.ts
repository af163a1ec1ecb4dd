// Issue 10 (6): CI exports. The GitHub workflow is checked with GitHub's own workflow parser
// (@actions/workflow-parser) and by its job graph; the Hydra spec by its fields and the jobset's expression.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { GITHUB_MATRIX_LIMIT, githubWorkflowYaml, planJobs } from "../generator/ci.ts";
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

/** Checks the job graph: every variant once, ≤ 256 per matrix, torchaudio jobs need the job of their pytorch. */
function checkGraph(yamlText: string, variants: readonly Variant[]) {
  const wf = parseYaml(yamlText) as { jobs: Record<string, { needs?: string[]; "runs-on": string | string[]; strategy: { matrix: { variant: string[] } } }> };
  const jobOf = new Map<string, string>();
  for (const [id, j] of Object.entries(wf.jobs)) {
    const vs = j.strategy.matrix.variant;
    assert.ok(vs.length >= 1 && vs.length <= GITHUB_MATRIX_LIMIT, `${id}: ${vs.length} matrix entries`);
    for (const v of vs) {
      assert.not.ok(jobOf.has(v), `${v} appears twice`);
      jobOf.set(v, id);
    }
  }
  assert.is(jobOf.size, variants.length, "every variant has a job");
  for (const v of variants) {
    const job = wf.jobs[jobOf.get(v.name)!]!;
    const label = Array.isArray(job["runs-on"]) ? job["runs-on"].join(",") : job["runs-on"];
    assert.ok(v.system === "aarch64-linux" ? /arm/.test(label) : !/arm/.test(label), `${v.name} runs on ${label}`);
    if (v.package === "torchaudio") assert.ok(job.needs?.includes(jobOf.get(v.dependsOn[0]!)!), `${v.name} needs its pytorch's job`);
    else assert.is(job.needs, undefined, `${v.name}: a pytorch job needs nothing`);
  }
  return wf;
}

test("github workflow for the widest catalog matrix: valid for GitHub's parser, ≤ 256 per matrix, pytorch → torchaudio", async () => {
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

test("planJobs splits at the limit and keeps each torchaudio with the job of its pytorch", () => {
  const jobs = planJobs(wide, 7);
  for (const j of jobs) assert.ok(j.variants.length <= 7);
  const jobOf = new Map(jobs.flatMap((j) => j.variants.map((v) => [v, j] as const)));
  for (const v of wide.filter((x) => x.package === "torchaudio")) assert.equal(jobOf.get(v.name)!.needs, [jobOf.get(v.dependsOn[0]!)!.id]);
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

test.run();
