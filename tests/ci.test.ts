// CI exports. The GitHub workflows are checked with GitHub's own workflow parser
// (@actions/workflow-parser), the build workflow by its job graph and runner placement (no CUDA torch build on a
// GitHub-hosted label; timeouts within GitHub's caps), the checks workflow by running its shell steps against the
// stand-in nixpkgs (NOT nixpkgs) and the real Nix 2.8; the Hydra spec by its fields and the jobset's expression.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import {
  cachedCheckScript,
  checksWorkflowYaml,
  evalCheckScript,
  FREE_DISK_SCRIPT,
  githubWorkflowYaml,
  isSelfHosted,
  nixVersionCheckScript,
  pinCacheScript,
  pinCheckScript,
  newerTorchScript,
  NIXOS_UNSTABLE_HEAD,
  checksWorkflow,
  planJobs,
  runnerLabel,
} from "../generator/generate/ci.ts";
import { catalog } from "../generator/catalog/index.ts";
import { GITHUB_HOSTED_RUNNERS, GITHUB_LIMITS, GITHUB_MATRIX_LIMIT } from "../generator/catalog/ci-runners.ts";
import { compareVersions } from "../generator/versions.ts";
import { nixPath, STAND_IN_NIXPKGS, standInCheckout } from "./helpers/nix.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { Variant } from "../generator/matrix/schema.ts";
import { widestMatrix } from "./helpers/matrices.ts";
import { ROOT, tempDir } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const wide = projectFromMatrix(widestMatrix()).variants;

async function validate(yamlText: string, name = "build-variants.yml") {
  // ESM-only package (its exports have an "import" condition only), so it is imported dynamically.
  const { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } = await import("@actions/workflow-parser");
  const parsed = parseWorkflow({ name, content: yamlText }, new NoOperationTraceWriter());
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
    assert.ok(v.system === "aarch64-linux" ? /arm/i.test(label) : !/arm/i.test(label), `${v.name} runs on ${label}`);
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
  const r = await runMain(["ci", "github", "--filter", "package=torchaudio", "--filter", "sm=121", "--runs-on", "aarch64-linux=self-hosted,arm64,big-parallel", "-o", out]);
  assert.is(r.status, 0, r.stderr);
  const text = readFileSync(out, "utf8");
  await validate(text);
  const wf = parseYaml(text) as { jobs: Record<string, { "runs-on": string[] }> };
  // The given labels, then the job's ISA level (one job per level: armv8_2 and armv9 variants never share a runner).
  assert.equal(Object.values(wf.jobs).map((j) => j["runs-on"]).sort(), [
    ["self-hosted", "arm64", "big-parallel", "gccarch-armv8.2-a-fp16-dotprod"],
    ["self-hosted", "arm64", "big-parallel", "gccarch-armv9-a-i8mm"],
  ]);
  const bad = await runMain(["ci", "github", "--runs-on", "nonsense"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--runs-on "nonsense": expected SYSTEM=LABEL/);
});

test("ci hydra: a declarative jobset spec evaluating release.nix from the repository", async () => {
  const r = await runMain(["ci", "hydra", "--repo", "https://example.org/variants.git", "--branch", "main"]);
  assert.is(r.status, 0, r.stderr);
  const spec = JSON.parse(r.stdout);
  const js = spec.variants;
  assert.is(js.nixexprinput, "src");
  assert.is(js.nixexprpath, "release.nix");
  assert.equal(js.inputs.src, { type: "git", value: "https://example.org/variants.git main", emailresponsible: false });
  assert.ok(readFileSync(join(ROOT, "release.nix"), "utf8").includes("{ nixpkgs ? null }:"), "release.nix takes no required argument");
  assert.is((await runMain(["ci", "hydra"])).status, 2);
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

type WfJob = { "runs-on": string | string[]; "timeout-minutes": number; strategy: { matrix: { include: { variant: string; dependents: string }[] } }; steps: { name?: string; run?: string }[] };
const labelsOf = (j: WfJob) => (Array.isArray(j["runs-on"]) ? j["runs-on"] : [j["runs-on"]]);
const hostedLabels = new Set(GITHUB_HOSTED_RUNNERS.flatMap((r) => r.labels));
const byName = new Map(wide.map((v) => [v.name, v]));

/** Every entry of every job with its job's labels and timeout; checks GitHub's caps on the way. */
function placements(text: string) {
  const wf = parseYaml(text) as { jobs: Record<string, WfJob> };
  const out: { v: Variant; selfHosted: boolean; job: WfJob }[] = [];
  for (const [id, j] of Object.entries(wf.jobs)) {
    const labels = labelsOf(j);
    const self = isSelfHosted(labels);
    if (!self) assert.ok(labels.every((l) => hostedLabels.has(l)), `${id}: ${labels} are GitHub-hosted labels`);
    assert.ok(j["timeout-minutes"] <= (self ? GITHUB_LIMITS.selfHostedJobMinutes : GITHUB_LIMITS.hostedJobMinutes), `${id}: timeout ${j["timeout-minutes"]}`);
    for (const e of j.strategy.matrix.include)
      for (const n of [e.variant, ...e.dependents.split(" ").filter(Boolean)]) out.push({ v: byName.get(n)!, selfHosted: self, job: j });
  }
  return out;
}

test("ci github by default: every torch build on self-hosted labels with timeout ≤ 7200, none on a GitHub-hosted one; each job's runner label and Nix carry its ISA's feature", async () => {
  const text = githubWorkflowYaml(wide, { isas: catalog.isas });
  await validate(text);
  const ps = placements(text);
  assert.is(ps.length, wide.length);
  assert.ok(ps.every((p) => p.selfHosted), "default: self-hosted for all");
  for (const p of ps) {
    const feature = p.v.requiredSystemFeatures.find((f) => f.startsWith("gccarch-"))!;
    assert.ok(labelsOf(p.job).includes(runnerLabel(feature)), `${p.v.name}: runner label ${runnerLabel(feature)}`);
    const nixConf = (p.job.steps as { uses?: string; with?: { extra_nix_config?: string } }[]).find((s) => s.uses?.startsWith("cachix/install-nix-action"))!.with!.extra_nix_config!;
    assert.match(nixConf, new RegExp(`^system-features = big-parallel benchmark nixos-test ${feature.replace(/[.+]/g, "\\$&")}$`, "m"), `${p.v.name}: the job's Nix declares it`);
  }
  assert.ok(ps.some((p) => p.v.cuda !== null));
  assert.match(text, /# Needs a self-hosted runner: ~20 GB of free disk/);
  assert.not.match(text, /Free disk space on the GitHub-hosted runner/);
});

test("ci github --hosted-cpu: CPU-only variants whose ISA the hosted runner runs go there (360 min, free-disk step); CUDA and AVX-512 stay self-hosted", async () => {
  const text = githubWorkflowYaml(wide, { hostedCpu: true, isas: catalog.isas });
  await validate(text);
  const ps = placements(text);
  assert.is(ps.length, wide.length);
  for (const p of ps) {
    if (p.v.cuda !== null) assert.ok(p.selfHosted, `${p.v.name}: CUDA never on a hosted label`);
    else if (p.v.isa.startsWith("avx512")) assert.ok(p.selfHosted, `${p.v.name}: hosted x86_64 runners do not guarantee AVX-512`);
    else assert.not.ok(p.selfHosted, `${p.v.name}: ${p.v.isa} runs on the hosted ${p.v.system} runner`);
    if (!p.selfHosted) {
      assert.is(p.job["timeout-minutes"], 360);
      assert.is(p.job.steps[0]!.run, FREE_DISK_SCRIPT, "the hosted job frees disk first");
    }
  }
  assert.ok(ps.some((p) => !p.selfHosted && p.v.system === "aarch64-linux") && ps.some((p) => !p.selfHosted && p.v.system === "x86_64-linux"));
});

test("ci github CLI: GitHub-hosted labels for CUDA torch builds exit 2 with the reason and an example; self-hosted ones pass", async () => {
  const bad = await runMain(["ci", "github", "--runs-on", "x86_64-linux=ubuntu-24.04"]);
  assert.is(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /name no self-hosted runner/);
  assert.match(bad.stderr, /CUDA torch build\(s\) \(e\.g\. pytorch-python313-cuda/);
  assert.match(bad.stderr, /6 hours/);
  assert.match(bad.stderr, /--runs-on x86_64-linux=self-hosted,linux,X64/);
  // A larger runner's custom label is GitHub-hosted too (no 'self-hosted'): refused the same way.
  assert.is((await runMain(["ci", "github", "--filter", "cuda=12.9", "--runs-on", "aarch64-linux=my-64-core-runner"])).status, 2);
  const ok = await runMain(["ci", "github", "--filter", "cuda=12.9", "--runs-on", "x86_64-linux=self-hosted,X64,big-parallel"]);
  assert.is(ok.status, 0, ok.stderr);
  const wf = parseYaml(ok.stdout) as { jobs: Record<string, WfJob> };
  assert.ok(Object.values(wf.jobs).some((j) => labelsOf(j).join(",") === "self-hosted,X64,big-parallel,gccarch-x86-64-v3"));
});

test("ci github --checks: a valid scheduled workflow that installs Nix ≥ 2.18, runs pin check and eval, uploads both", async () => {
  const r = await runMain(["ci", "github", "--checks"]);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, checksWorkflowYaml());
  await validate(r.stdout, "catalog-checks.yml");
  const wf = parseYaml(r.stdout) as { on: { schedule: { cron: string }[]; workflow_dispatch: unknown }; jobs: Record<string, Omit<WfJob, "steps"> & { steps: { uses?: string; run?: string; if?: string; with?: Record<string, string> }[] }> };
  assert.ok(wf.on.schedule[0]!.cron && "workflow_dispatch" in wf.on);
  const job = Object.values(wf.jobs)[0]!;
  assert.ok(job["timeout-minutes"] <= GITHUB_LIMITS.hostedJobMinutes);
  const runs = job.steps.map((s) => s.run ?? s.uses ?? "");
  const at = (x: string) => runs.findIndex((r) => r.includes(x));
  assert.ok(at("cachix/install-nix-action") < at("sort -V") && at("sort -V") < at("pin check"), "Nix installed and its version checked first");
  assert.is(job.steps[at("pin check")]!.run, pinCheckScript());
  assert.is(job.steps[at(" eval ")]!.run, evalCheckScript());
  assert.is(job.steps[at("pin cache")]!.run, pinCacheScript());
  const upload = job.steps[at("actions/upload-artifact")]!;
  assert.match(upload.with!.path!, /pin-check\.json/);
  assert.match(upload.with!.path!, /eval\.jsonl/);
  assert.match(upload.with!.path!, /cache-check\.json/);
  assert.is(upload.if, "${{ !cancelled() }}", "uploaded after a failed check too");
  assert.is((await runMain(["ci", "hydra", "--checks", "--repo", "x"])).status, 2);
});

/** Run one step's shell as GitHub does (bash -e -o pipefail) in `cwd` with the compiled CLI reachable as bin/. */
function step(script: string, cwd: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], { cwd, encoding: "utf8", env: { ...process.env, ...env } });
}
function workDir(): string {
  const d = tempDir("vm-checks-");
  symlinkSync(join(ROOT, "bin"), join(d, "bin"));
  return d;
}

test("checks workflow steps, run here: the Nix version gate refuses Nix 2.8 and passes 2.24; pin check and eval against the stand-in", () => {
  // The real Nix here is 2.8: refused. A `nix` that says 2.24.9: passes.
  const gate = step(nixVersionCheckScript(), tempDir("vm-checks-"));
  assert.is(gate.status, 1, gate.stdout + gate.stderr);
  assert.match(gate.stderr, /older than 2\.18/);
  const fake = tempDir("vm-fake-nix-");
  writeFileSync(join(fake, "nix"), '#!/bin/sh\necho "nix (Nix) 2.24.9"\n');
  chmodSync(join(fake, "nix"), 0o755);
  assert.is(step(nixVersionCheckScript(), fake, { PATH: `${fake}:${process.env.PATH}` }).status, 0);

  // pin check: every catalog pin given as a stand-in checkout → exit 0, pin-check.json lists each pin as checked.
  const given = catalog.nixpkgs.map((p) => `--nixpkgs ${p.rev}=${standInCheckout(p.rev)}`).join(" ");
  const d = workDir();
  const pins = step(pinCheckScript(`--no-fetch ${given}`), d);
  assert.is(pins.status, 0, pins.stderr);
  const results = JSON.parse(readFileSync(join(d, "pin-check.json"), "utf8")) as { status: string }[];
  assert.is(results.length, catalog.nixpkgs.length);
  assert.ok(results.every((x) => x.status === "checked"));
  // One fact changed in one stand-in: the same step fails, and its JSON says which.
  const one = catalog.nixpkgs[0]!;
  const changedGiven = `--nixpkgs ${one.rev}=${standInCheckout(one.rev, { torch: "0.0.1" })}`;
  const d2 = workDir();
  const bad = step(pinCheckScript(`--no-fetch ${changedGiven}`), d2);
  assert.is(bad.status, 1, bad.stderr);
  assert.match(readFileSync(join(d2, "pin-check.json"), "utf8"), /0\.0\.1/);

  // eval: variants through release.nix with the stand-in → exit 0, one JSON line per variant and a summary.
  const byRev = `import ${nixPath(join(STAND_IN_NIXPKGS, "by-rev.nix"))}`;
  const d3 = workDir();
  const ev = step(evalCheckScript(`--filter sm=121 --filter python=3.13 --nixpkgs '${byRev}'`), d3);
  assert.is(ev.status, 0, ev.stderr);
  const lines = readFileSync(join(d3, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const summary = lines.pop().summary;
  assert.ok(lines.length > 0 && lines.every((l) => l.error === null && /\.drv$/.test(l.drvPath)));
  assert.is(summary.errors, 0);

  // pin cache against an empty file:// cache: the model says the default set's libraries are cached, the cache holds
  // nothing, so the step fails and its JSON says so (tests/cache.test.ts checks a cache the stand-in Hydra filled).
  const empty = tempDir("vm-empty-cache-");
  const newest = catalog.nixpkgs.find((p) => p.rev.startsWith("2c423e0"))!;
  const d4 = workDir();
  const pc = step(pinCacheScript(`--no-fetch --nixpkgs ${newest.rev}=${standInCheckout(newest.rev)} --substituter file://${empty} --nix-option require-sigs=false`), d4);
  assert.is(pc.status, 1, pc.stderr);
  const cacheJson = JSON.parse(readFileSync(join(d4, "cache-check.json"), "utf8")) as { status: string; answers?: { cached: boolean; modelCached: boolean }[] }[];
  const answers = cacheJson.find((x) => x.status === "checked")!.answers!;
  assert.ok(answers.some((a) => a.modelCached && !a.cached), "disagreements are in the JSON");

  // The look past the catalog: a stand-in nixpkgs (its own revision) carrying a torch newer than every catalog release
  // gives the warning annotation naming pin add of that revision; one carrying the catalog's newest gives none.
  const newestTorch = [...catalog.torch].map((t) => t.version).sort(compareVersions).at(-1)!;
  const [maj, min] = newestTorch.split(".").map(Number);
  const next = `${maj}.${min! + 1}.0`;
  const rev = "e".repeat(40);
  const d5 = workDir();
  const ahead = step(newerTorchScript(standInCheckout(newest.rev, { torch: next }, { gitRevision: rev })), d5);
  assert.is(ahead.status, 0, ahead.stderr);
  assert.ok(
    ahead.stdout.split("\n").includes(`::warning title=a torch the catalog does not know::nixpkgs ${rev} carries torch ${next}, newer than the newest the catalog knows (${newestTorch}): run variant-matrix pin add ${rev}`),
    ahead.stdout,
  );
  assert.is(JSON.parse(readFileSync(join(d5, "newest-nixpkgs.json"), "utf8")).newerTorch.torch, next);
  const known = step(newerTorchScript(standInCheckout(newest.rev, { torch: newestTorch }, { gitRevision: rev })), workDir());
  assert.is(known.status, 0, known.stderr);
  assert.not.match(known.stdout, /::warning/);
  assert.match(known.stdout, /no torch newer than the catalog knows/);
  // The workflow runs it on nixos-unstable's head.
  assert.ok(checksWorkflow().jobs["catalog-against-nixpkgs"].steps.some((x) => x.run === newerTorchScript(NIXOS_UNSTABLE_HEAD)));
});

test.run();
