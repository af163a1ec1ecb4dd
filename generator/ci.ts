/**
 * CI exports (pure): a GitHub Actions workflow that builds every variant, and a Hydra declarative jobset spec
 * pointing at release.nix. The CLI (`variant-matrix ci github|hydra`) writes what these return.
 *
 * GitHub Actions facts relied on (docs.github.com, "Using a matrix for your jobs" and "jobs.<job_id>.needs"):
 * a job's matrix may generate at most 256 jobs per workflow run, and `needs` waits for EVERY job a matrix
 * generated, so one failed pytorch build would skip every dependent job that needs its matrix. Instead each matrix
 * entry is one pytorch variant and the variants built on it (torchaudio, torchvision, … of the catalog's table, then
 * the environment of them), built in that order on one runner: a failed pytorch skips only its own dependents, and
 * their builds reuse the torch just built.
 */
import { stringify as yamlStringify } from "yaml";
import type { Variant } from "./schema.ts";

/** GitHub's limit on the jobs one matrix may generate. */
export const GITHUB_MATRIX_LIMIT = 256;

/** Default `runs-on` labels by Nix system (GitHub-hosted runners; override with --runs-on SYSTEM=LABEL[,LABEL]). */
export const DEFAULT_RUNS_ON: Record<string, string[]> = {
  "x86_64-linux": ["ubuntu-24.04"],
  "aarch64-linux": ["ubuntu-24.04-arm"],
};

/** Options of the GitHub workflow. */
export interface GithubOptions {
  /** runs-on labels by system; systems not listed use DEFAULT_RUNS_ON. */
  runsOn?: Record<string, string[]>;
  /** Workflow name. */
  name?: string;
  /** Chunk size (≤ 256; smaller in tests). */
  limit?: number;
}

function chunk<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");

/** One matrix entry: a pytorch variant and the variants built on it, in build order (space-separated). */
export interface JobEntry {
  variant: string;
  dependents: string;
}

/** One generated job: id, system, its matrix entries, and every variant name it builds. */
export interface JobPlan {
  id: string;
  system: string;
  entries: JobEntry[];
  variants: string[];
}

/**
 * The job graph: per system, one matrix entry per pytorch variant with the variants built on it (every variant
 * whose `dependsOn` starts with that pytorch: the packages on torch, then the environment, which also needs them), in
 * chunks of ≤ limit entries per job. No job needs another.
 * @throws Error when a variant depends on one that is not among the variants.
 */
export function planJobs(variants: readonly Variant[], limit = GITHUB_MATRIX_LIMIT): JobPlan[] {
  if (limit < 1 || limit > GITHUB_MATRIX_LIMIT) throw new Error(`matrix limit must be 1..${GITHUB_MATRIX_LIMIT}`);
  const names = new Set(variants.map((v) => v.name));
  for (const v of variants)
    for (const d of v.dependsOn) if (!names.has(d)) throw new Error(`${v.name}: ${d}, which it is built against, is not in the selection`);
  // Within an entry, a variant comes after everything it depends on (the environment after its members).
  const rank = (v: Variant) => v.dependsOn.length;
  const jobs: JobPlan[] = [];
  const systems = [...new Set(variants.map((v) => v.system))].sort();
  for (const system of systems) {
    const entries = variants
      .filter((v) => v.system === system && v.dependsOn.length === 0)
      .map((pt) => ({ pt, tas: variants.filter((v) => v.dependsOn[0] === pt.name).sort((a, b) => rank(a) - rank(b)) }));
    chunk(entries, limit).forEach((c, i) =>
      jobs.push({
        id: `variants-${slug(system)}-${i + 1}`,
        system,
        entries: c.map((e) => ({ variant: e.pt.name, dependents: e.tas.map((t) => t.name).join(" ") })),
        variants: c.flatMap((e) => [e.pt.name, ...e.tas.map((t) => t.name)]),
      }),
    );
  }
  return jobs;
}

/**
 * Shell test: would realising "$drv" build "$drv" itself (Nix's dry-run list names it)? The list is read whole
 * first: under GitHub's `bash -eo pipefail`, `grep -q` ending a pipe early would fail nix-store with SIGPIPE.
 */
const WOULD_BUILD_DRV = 'grep -qxF "  $drv" <<<"$(nix-store --realise --dry-run "$drv" 2>&1)"';

/**
 * The shell of the first step after installing Nix: is `ATTR` of release.nix already in the store or a substituter
 * (its own derivation is not among what `nix-store --realise --dry-run` would build)? Writes `hit=true|false` to
 * $GITHUB_OUTPUT; the build and push steps run only on `hit != 'true'` (nix-fast-build's --skip-cached).
 */
export function cachedCheckScript(attr: string): string {
  return [
    `drv=$(nix-instantiate release.nix -A "${attr}")`,
    `if ${WOULD_BUILD_DRV}; then hit=false; else hit=true; fi`,
    'echo "hit=$hit" >> "$GITHUB_OUTPUT"',
    'if [ "$hit" = true ]; then echo "the binary cache already holds it: nothing to build"; fi',
  ].join("\n");
}

/** The steps every job runs: install Nix, skip a variant the cache holds, build its matrix entry from release.nix, push. */
function steps() {
  return [
    { uses: "actions/checkout@v4" },
    {
      uses: "cachix/install-nix-action@v31",
      with: {
        extra_nix_config: [
          "extra-substituters = ${{ vars.NIX_SUBSTITUTER }}",
          "extra-trusted-public-keys = ${{ vars.NIX_PUBLIC_KEY }}",
          "system-features = big-parallel benchmark nixos-test",
          "",
        ].join("\n"),
      },
    },
    {
      name: "Skip ${{ matrix.variant }} if the binary cache holds it",
      id: "cached",
      run: cachedCheckScript("${{ matrix.variant }}"),
    },
    {
      name: "Build ${{ matrix.variant }}",
      if: "${{ steps.cached.outputs.hit != 'true' }}",
      run: 'nix-build release.nix -A "${{ matrix.variant }}" -o result',
    },
    {
      name: "Push the closure to the binary cache",
      if: "${{ env.NIX_CACHE_URI != '' && steps.cached.outputs.hit != 'true' }}",
      run: 'nix --extra-experimental-features nix-command copy --to "$NIX_CACHE_URI" ./result',
    },
    {
      // Runs only when the pytorch build above succeeded: a failure skips this entry's dependents, no other.
      name: "Build the variants built on it",
      if: "${{ matrix.dependents != '' }}",
      run: [
        "for v in ${{ matrix.dependents }}; do",
        '  drv=$(nix-instantiate release.nix -A "$v")',
        `  if ! ${WOULD_BUILD_DRV}; then echo "$v: the binary cache already holds it"; continue; fi`,
        '  nix-build release.nix -A "$v" -o "result-$v"',
        '  if [ -n "$NIX_CACHE_URI" ]; then nix --extra-experimental-features nix-command copy --to "$NIX_CACHE_URI" "./result-$v"; fi',
        "done",
      ].join("\n"),
    },
  ];
}

/**
 * The workflow as an object (YAML comes from `githubWorkflowYaml`). Triggered by hand and on pushes that change
 * what is built; each job is a matrix over variant names.
 */
export function githubWorkflow(variants: readonly Variant[], o: GithubOptions = {}) {
  const runsOn = { ...DEFAULT_RUNS_ON, ...o.runsOn };
  const jobs: Record<string, unknown> = {};
  for (const j of planJobs(variants, o.limit)) {
    const labels = runsOn[j.system];
    if (!labels?.length) throw new Error(`no runs-on labels for ${j.system}; give --runs-on ${j.system}=LABEL`);
    jobs[j.id] = {
      name: `${j.system} \${{ matrix.variant }}`,
      "runs-on": labels.length === 1 ? labels[0] : labels,
      "timeout-minutes": 4320,
      env: { NIX_CACHE_URI: "${{ secrets.NIX_CACHE_URI }}" },
      strategy: { "fail-fast": false, matrix: { include: j.entries } },
      steps: steps(),
    };
  }
  return {
    name: o.name ?? "build variants",
    on: {
      workflow_dispatch: {},
      push: { paths: ["pkgs/**", ".flox/pkgs/**", "release.nix"] },
    },
    jobs,
  };
}

/** The workflow YAML, with a generated header. */
export function githubWorkflowYaml(variants: readonly Variant[], o: GithubOptions = {}): string {
  const head =
    "# generated by variant-matrix (`variant-matrix ci github`): one matrix entry per pytorch variant, then the\n" +
    "# variants built on it (a failed pytorch skips only its own dependents), built with Nix from\n" +
    "# release.nix and pushed to the binary cache in the secret NIX_CACHE_URI (any store URI `nix copy --to` takes).\n" +
    "# Repository variables NIX_SUBSTITUTER / NIX_PUBLIC_KEY make later jobs substitute what earlier ones pushed.\n";
  return head + yamlStringify(githubWorkflow(variants, o), { lineWidth: 0 });
}

/** Options of the Hydra jobset spec. */
export interface HydraOptions {
  /** Git URL of this repository as Hydra fetches it. */
  repo: string;
  branch: string;
  /** Jobset name. */
  name?: string;
}

/**
 * A Hydra declarative jobset spec (the `spec.json` a declarative project points at): one jobset evaluating
 * release.nix from this repository. Hydra's own nixexprinput/nixexprpath/inputs fields (hydra manual,
 * "Declarative projects").
 */
export function hydraSpec(o: HydraOptions) {
  return {
    [o.name ?? "variants"]: {
      enabled: 1,
      hidden: false,
      description: "every package variant of matrix.ts (release.nix)",
      nixexprinput: "src",
      nixexprpath: "release.nix",
      checkinterval: 3600,
      schedulingshares: 100,
      enableemail: false,
      emailoverride: "",
      keepnr: 3,
      inputs: {
        src: { type: "git", value: `${o.repo} ${o.branch}`, emailresponsible: false },
      },
    },
  };
}
