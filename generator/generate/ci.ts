/**
 * CI exports (pure): a GitHub Actions workflow that builds every variant, a scheduled workflow that checks the catalog
 * against the real nixpkgs, and a Hydra declarative jobset spec pointing at release.nix. The CLI
 * (`variant-matrix ci github|hydra`) writes what these return.
 *
 * GitHub Actions facts relied on (docs.github.com, "Using a matrix for your jobs" and "jobs.<job_id>.needs"):
 * a job's matrix may generate at most 256 jobs per workflow run, and `needs` waits for EVERY job a matrix
 * generated, so one failed pytorch build would skip every dependent job that needs its matrix. Instead each matrix
 * entry is one pytorch variant and the variants built on it (torchaudio, torchvision, … of the catalog's table, then
 * the environment of them), built in that order on one runner: a failed pytorch skips only its own dependents, and
 * their builds reuse the torch just built.
 *
 * Runners (catalog/ci-runners.ts GITHUB_LIMITS, GITHUB_HOSTED_RUNNERS): a job on a GitHub-hosted runner (standard or larger) is stopped at
 * 6 hours whatever `timeout-minutes` says, on 14 GB of disk and 4 CPUs; a self-hosted runner's job may run 5 days. A
 * CUDA torch build needs about 20 GB of disk and hours, so every job lands on self-hosted labels by default; with
 * `hostedCpu`, CPU-only entries whose ISA the hosted runner's CPU is known to run go to GitHub-hosted labels.
 */
import { Document, isScalar, type YAMLMap } from "yaml";
import { variantRunsOn } from "../matrix/compat.ts";
import { InputError } from "../errors.ts";
import { catalog as builtInCatalog, machines } from "../catalog/index.ts";
import { cudaCacheSubstituter } from "../catalog/lib/binary-cache.ts";

/** The CI runners' facts of the catalog's second value (catalog/ci-runners.ts through catalog/index.ts `machines`). */
const { limits: GITHUB_LIMITS, hostedRunners: GITHUB_HOSTED_RUNNERS, matrixLimit: GITHUB_MATRIX_LIMIT, selfHostedLabels: DEFAULT_SELF_HOSTED_LABELS, selfHostedNeeds: SELF_HOSTED_NEEDS } =
  machines.github;
import type { Variant } from "../matrix/schema.ts";
import type { Catalog } from "../catalog/schema.ts";

/** `timeout-minutes` the build workflow writes: what GitHub allows, never more. */
const JOB_TIMEOUT_MINUTES = { hosted: GITHUB_LIMITS.hostedJobMinutes, selfHosted: 4320 } as const;

/**
 * The runner label of a gccarch feature: the feature with every character outside letters, digits, `.`, `_` and `-`
 * turned into `-` (`gccarch-armv9-a+i8mm` → `gccarch-armv9-a-i8mm`), a conservative spelling for a runner label; the
 * job's Nix still declares the feature itself.
 */
export const runnerLabel = (feature: string) => feature.replace(/[^A-Za-z0-9._-]/g, "-");

/** True when a `runs-on` label list names a self-hosted runner (every self-hosted runner carries `self-hosted`). */
export const isSelfHosted = (labels: readonly string[]) => labels.some((l) => l.toLowerCase() === "self-hosted");

/** A `ci github` request that cannot be met (a CUDA build on a GitHub-hosted label, …): exit 2 with the reason. */
class CiError extends InputError {}

/** Options of the GitHub workflow. */
interface GithubOptions {
  /** Self-hosted runs-on labels by system; systems not listed use DEFAULT_SELF_HOSTED_LABELS. */
  runsOn?: Record<string, string[]>;
  /**
   * Put CPU-only entries whose ISA the standard GitHub-hosted runner of their system runs on that runner (its labels,
   * `timeout-minutes` 360, a step that frees disk); every other entry stays self-hosted. Needs `isas`.
   */
  hostedCpu?: boolean;
  /** The catalog's ISAs (their /proc/cpuinfo features), for `hostedCpu`. */
  isas?: Catalog["isas"];
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
interface JobEntry {
  variant: string;
  dependents: string;
}

/** Where a job runs: a self-hosted runner, or GitHub's standard hosted runner of its system. */
type Placement = "self-hosted" | "hosted";

/** One generated job: id, system, placement, ISA feature, its matrix entries, and every variant name it builds. */
interface JobPlan {
  id: string;
  system: string;
  placement: Placement;
  /** The gccarch system feature its variants require (their ISA's): a runner label, and declared to the job's Nix. */
  feature: string | null;
  entries: JobEntry[];
  variants: string[];
}

/**
 * The job graph: per system, placement and ISA feature (a variant's `gccarch-…`: one runner label per ISA level), one
 * matrix entry per pytorch variant with the variants built on it (every
 * variant whose `dependsOn` starts with that pytorch: the packages on torch, then the environment, which also needs
 * them), in chunks of ≤ limit entries per job. No job needs another.
 * @param placeOf where the entry of a pytorch variant runs (default: every one self-hosted)
 * @throws Error when a variant depends on one that is not among the variants.
 */
export function planJobs(
  variants: readonly Variant[],
  limit: number = GITHUB_MATRIX_LIMIT,
  placeOf: (pytorch: Variant) => Placement = () => "self-hosted",
): JobPlan[] {
  if (limit < 1 || limit > GITHUB_MATRIX_LIMIT) throw new Error(`matrix limit must be 1..${GITHUB_MATRIX_LIMIT}`);
  const names = new Set(variants.map((v) => v.name));
  for (const v of variants)
    for (const d of v.dependsOn) if (!names.has(d)) throw new Error(`${v.name}: ${d}, which it is built against, is not in the selection`);
  // Within an entry, a variant comes after everything it depends on (the environment after its members).
  const rank = (v: Variant) => v.dependsOn.length;
  const jobs: JobPlan[] = [];
  const systems = [...new Set(variants.map((v) => v.system))].sort();
  const featureOf = (v: Variant) => v.requiredSystemFeatures.find((f) => f.startsWith("gccarch-")) ?? null;
  for (const system of systems)
    for (const placement of ["hosted", "self-hosted"] as const)
      for (const feature of [...new Set(variants.filter((v) => v.system === system).map(featureOf))].sort()) {
      const entries = variants
        .filter((v) => v.system === system && v.dependsOn.length === 0 && placeOf(v) === placement && featureOf(v) === feature)
        .map((pt) => ({ pt, tas: variants.filter((v) => v.dependsOn[0] === pt.name).sort((a, b) => rank(a) - rank(b)) }));
      chunk(entries, limit).forEach((c, i) =>
        jobs.push({
          id: `variants-${slug(system)}-${placement}${feature ? `-${slug(feature.slice("gccarch-".length))}` : ""}-${i + 1}`,
          system,
          placement,
          feature,
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

/**
 * The shell of the first step on a GitHub-hosted runner: make room for a torch build on its 14 GB disk by removing
 * preinstalled toolchains the build never uses (the directories jlumbroso/free-disk-space removes: .NET, the Android
 * SDK, GHC, CodeQL), printing the free space before and after. Not measured here: the log says what it freed.
 */
export const FREE_DISK_SCRIPT = [
  "df -h /",
  "sudo rm -rf /usr/share/dotnet /usr/local/lib/android /opt/ghc /usr/local/.ghcup /opt/hostedtoolcache/CodeQL",
  "df -h /",
].join("\n");

/**
 * The steps every job runs: install Nix, skip a variant the cache holds, build its matrix entry from release.nix, push.
 * The job's Nix declares the job's ISA feature (`gccarch-…`): its variants require it, and its runner (chosen by
 * that label, or a hosted runner whose CPU was checked) runs their code; without it Nix refuses to build them.
 */
function steps(placement: Placement, feature: string | null) {
  return [
    ...(placement === "hosted" ? [{ name: "Free disk space on the GitHub-hosted runner", run: FREE_DISK_SCRIPT }] : []),
    { uses: "actions/checkout@v4" },
    {
      uses: "cachix/install-nix-action@v31",
      with: {
        extra_nix_config: [
          "extra-substituters = ${{ vars.NIX_SUBSTITUTER }}",
          "extra-trusted-public-keys = ${{ vars.NIX_PUBLIC_KEY }}",
          `system-features = big-parallel benchmark nixos-test${feature ? ` ${feature}` : ""}`,
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

/** The standard GitHub-hosted runner of `system`, or undefined. */
const hostedRunnerOf = (system: string) => GITHUB_HOSTED_RUNNERS.find((r) => r.system === system);

/**
 * Where the matrix entry of pytorch variant `pt` runs: hosted only with `hostedCpu`, for a CPU-only variant whose ISA
 * the hosted runner of its system runs (compat.ts's runs-on rule over the runner's CPU features); else self-hosted.
 */
function placementOf(pt: Variant, o: Pick<GithubOptions, "hostedCpu" | "isas">): Placement {
  if (!o.hostedCpu || pt.cuda !== null) return "self-hosted";
  const runner = hostedRunnerOf(pt.system);
  if (!runner || !o.isas) return "self-hosted";
  return variantRunsOn(pt, { system: runner.system, cpu: { features: runner.cpuFeatures } }, null, { isas: o.isas, cuda: [] }) ? "hosted" : "self-hosted";
}

/** Why a job of `j` needs a self-hosted runner, in words (CUDA torch builds, or CPU-only ones not placed on hosted). */
function whySelfHosted(j: JobPlan, variants: readonly Variant[], o: GithubOptions): string {
  const pts = j.entries.map((e) => variants.find((v) => v.name === e.variant)!);
  const cuda = pts.filter((v) => v.cuda !== null);
  const runner = hostedRunnerOf(j.system);
  const limit =
    `a GitHub-hosted runner stops a job at ${GITHUB_LIMITS.hostedJobMinutes / 60} hours and has ${runner?.diskGB ?? 14} GB of disk ` +
    "and 4 CPUs, while a CUDA torch build needs about 20 GB of disk and hours (barstoolbluz/build-pytorch BUILD_MATRIX.md)";
  if (cuda.length) return `its ${cuda.length} CUDA torch build(s) (e.g. ${cuda[0]!.name}) cannot run on GitHub-hosted labels: ${limit}`;
  const isas = [...new Set(pts.map((v) => v.isa))];
  if (o.hostedCpu)
    return (
      `its CPU-only torch builds are for ${isas.join(", ")}, whose code the GitHub-hosted ${j.system} runner is not known to run ` +
      `(it runs while the variant builds; the runner's CPU features: ${runner?.cpuFeatures.join(" ") ?? "unknown"})`
    );
  return `its CPU-only torch builds (${isas.join(", ")}) go to self-hosted runners unless --hosted-cpu is given (not measured on a 4-CPU hosted runner)`;
}

/**
 * The workflow as an object and a comment per job (YAML comes from `githubWorkflowYaml`). Triggered by hand and on
 * pushes that change what is built; each job is a matrix over variant names.
 * @throws CiError when --runs-on gives a system's self-hosted jobs labels without `self-hosted` (GitHub-hosted ones).
 */
function githubWorkflowPlan(variants: readonly Variant[], o: GithubOptions = {}) {
  const runsOn = { ...DEFAULT_SELF_HOSTED_LABELS, ...o.runsOn };
  const jobs: Record<string, unknown> = {};
  const comments: Record<string, string> = {};
  for (const j of planJobs(variants, o.limit, (pt) => placementOf(pt, o))) {
    let labels: string[];
    if (j.placement === "hosted") {
      labels = hostedRunnerOf(j.system)!.labels;
      comments[j.id] =
        ` GitHub-hosted: CPU-only variants whose ISA this runner's CPU runs; timeout-minutes ${JOB_TIMEOUT_MINUTES.hosted} is GitHub's\n` +
        ` cap for hosted jobs (${GITHUB_LIMITS.hostedJobMinutes / 60} h); the first step frees disk (${hostedRunnerOf(j.system)!.diskGB} GB SSD).`;
    } else {
      const given = runsOn[j.system];
      if (!given?.length) throw new CiError(`no runs-on labels for ${j.system}; give --runs-on ${j.system}=self-hosted,LABEL...`);
      if (!isSelfHosted(given)) {
        const example = (DEFAULT_SELF_HOSTED_LABELS[j.system] ?? ["self-hosted"]).join(",");
        throw new CiError(
          `--runs-on ${j.system}=${given.join(",")}: these labels name no self-hosted runner (every self-hosted runner carries ` +
            `'self-hosted'; others are GitHub-hosted, larger runners included), and the ${j.system} job ${j.id} needs one: ` +
            `${whySelfHosted(j, variants, o)}. Name a self-hosted runner's labels, e.g. --runs-on ${j.system}=${example},big-parallel` +
            (variants.some((v) => v.system === j.system && v.cuda === null) && !o.hostedCpu ? `; --hosted-cpu puts CPU-only variants that fit on GitHub-hosted runners` : ""),
        );
      }
      // One label per ISA level: the runner declares it because its CPU runs that code (docs/building.md, "Each
      // variant on a builder that can run it").
      const label = j.feature ? runnerLabel(j.feature) : null;
      labels = label && !given.includes(label) ? [...given, label] : given;
      comments[j.id] = ` Needs ${SELF_HOSTED_NEEDS}.\n Why not GitHub-hosted: ${whySelfHosted(j, variants, o)}.`;
    }
    jobs[j.id] = {
      name: `${j.system} \${{ matrix.variant }}`,
      "runs-on": labels.length === 1 ? labels[0] : labels,
      "timeout-minutes": j.placement === "hosted" ? JOB_TIMEOUT_MINUTES.hosted : JOB_TIMEOUT_MINUTES.selfHosted,
      env: { NIX_CACHE_URI: "${{ secrets.NIX_CACHE_URI }}" },
      strategy: { "fail-fast": false, matrix: { include: j.entries } },
      steps: steps(j.placement, j.feature),
    };
  }
  const workflow = {
    name: o.name ?? "build variants",
    on: {
      workflow_dispatch: {},
      push: { paths: ["pkgs/**", ".flox/pkgs/**", "release.nix"] },
    },
    jobs,
  };
  return { workflow, comments };
}

/** YAML of `value` with `comments[key]` written above each key of its `jobs` map. */
function yamlWithJobComments(value: unknown, comments: Record<string, string>): string {
  const doc = new Document(value);
  const jobs = doc.get("jobs", true) as YAMLMap | undefined;
  for (const pair of jobs?.items ?? []) if (isScalar(pair.key) && comments[String(pair.key.value)]) pair.key.commentBefore = comments[String(pair.key.value)];
  return doc.toString({ lineWidth: 0 });
}

/** The workflow YAML, with a generated header and, above each job, what runner it needs and why. */
export function githubWorkflowYaml(variants: readonly Variant[], o: GithubOptions = {}): string {
  const head =
    "# generated by variant-matrix (`variant-matrix ci github`): one matrix entry per pytorch variant, then the\n" +
    "# variants built on it (a failed pytorch skips only its own dependents), built with Nix from\n" +
    "# release.nix and pushed to the binary cache in the secret NIX_CACHE_URI (any store URI `nix copy --to` takes).\n" +
    "# Repository variables NIX_SUBSTITUTER / NIX_PUBLIC_KEY make later jobs substitute what earlier ones pushed.\n" +
    `# Torch builds run on self-hosted runners (labels from --runs-on SYSTEM=LABELS): a GitHub-hosted job stops at\n` +
    `# ${GITHUB_LIMITS.hostedJobMinutes} minutes on a 14 GB disk; self-hosted jobs get timeout-minutes ${JOB_TIMEOUT_MINUTES.selfHosted} (GitHub's cap: ${GITHUB_LIMITS.selfHostedJobMinutes}).\n`;
  const { workflow, comments } = githubWorkflowPlan(variants, o);
  return head + yamlWithJobComments(workflow, comments);
}

/** The oldest Nix that evaluates nixpkgs of August 2025 and later, every catalog pin (nixpkgs lib/minver.nix since NixOS/nixpkgs#428076; catalog/machines.ts NIX_MIN). */
const NIX_MIN_VERSION: string = machines.nixMin.version;

/**
 * Shell that fails unless `nix --version` is at least `min` (sort -V orders versions: 2.8 < 2.18). Prints the version.
 */
export function nixVersionCheckScript(min: string = NIX_MIN_VERSION): string {
  return [
    'v=$(nix --version | grep -oE \'[0-9]+\\.[0-9]+(\\.[0-9]+)?\' | head -n 1)',
    'echo "Nix $v"',
    `if [ "$(printf '%s\\n%s\\n' "${min}" "$v" | sort -V | head -n 1)" != "${min}" ]; then`,
    `  echo "Nix $v is older than ${min}, the oldest that evaluates nixpkgs of August 2025 and later (lib/minver.nix)" >&2`,
    "  exit 1",
    "fi",
  ].join("\n");
}

/** The CLI as the checks workflow runs it: the compiled one from `npm ci`, in the checkout. */
const CLI = "node bin/variant-matrix.js";

/**
 * Shell of the nightly pin check: every catalog pin fetched and read with the runner's Nix, compared with the
 * catalog (`pin check --json`, exit 1 on a difference) into pin-check.json. `extra` is appended to the command
 * (tests: `--no-fetch --nixpkgs REV=PATH...` with the stand-in).
 */
export function pinCheckScript(extra = ""): string {
  return `${CLI} pin check --json${extra ? ` ${extra}` : ""} > pin-check.json`;
}

/**
 * Shell of the nightly evaluation: every variant of the matrix through release.nix against its real pin (`eval
 * --json`, exit 1 on an evaluation error or a package not built on its pytorch) into eval.jsonl.
 */
export function evalCheckScript(extra = ""): string {
  return `${CLI} eval --json${extra ? ` ${extra}` : ""} > eval.jsonl`;
}

/** The head of nixos-unstable as the runner reads it (a 40-hex revision): the nixpkgs users move to first. */
export const NIXOS_UNSTABLE_HEAD = '"$(git ls-remote https://github.com/NixOS/nixpkgs refs/heads/nixos-unstable | cut -f1)"';

/**
 * Shell of the nightly look past the catalog: `pin inspect` of `source` (default: the head of nixos-unstable; tests: a
 * stand-in checkout) into newest-nixpkgs.json, and a GitHub warning annotation (`::warning title=…::…`, shown on the
 * run's summary; the job does not fail) when it carries a torch newer than every release the catalog knows, naming
 * `pin add` of that revision (pin/facts.ts torchNewerThanCatalog). Exit 1 only when the inspection itself fails.
 */
export function newerTorchScript(source = NIXOS_UNSTABLE_HEAD): string {
  const warn =
    'const j = JSON.parse(require("fs").readFileSync("newest-nixpkgs.json", "utf8")); const t = j.newerTorch; ' +
    "if (t) process.stdout.write(`::warning title=a torch the catalog does not know::nixpkgs ${j.rev} carries torch ${t.torch}, newer than the newest the catalog knows (${t.newest}): run variant-matrix pin add ${j.rev}\\n`); " +
    'else process.stdout.write(`nixpkgs ${j.rev}: no torch newer than the catalog knows\\n`);';
  // The node program goes between single quotes: it holds none.
  if (warn.includes("'")) throw new Error("newerTorchScript: a single quote in the node program");
  return [`src=${source}`, `${CLI} pin inspect "$src" --json > newest-nixpkgs.json`, `node -e '${warn}'`].join("\n");
}

/** The NixOS-CUDA binary cache and its signing key (nixos-cuda/infra README, c2b55a1; the catalog's publicCudaCaches, catalog/binary-cache.ts). */
const NIXOS_CUDA_CACHE = cudaCacheSubstituter(builtInCatalog);

/**
 * Shell of the nightly cache check: at every catalog pin, torch's NCCL, NVSHMEM, MAGMA and triton for each Python set
 * with the default and another CUDA set, asked of cache.nixos-cuda.org and compared with the cache model (`pin cache
 * --json`, exit 1 where they disagree) into cache-check.json.
 */
export function pinCacheScript(extra = ""): string {
  return `${CLI} pin cache --json${extra ? ` ${extra}` : ""} > cache-check.json`;
}

/** Options of the checks workflow. */
interface ChecksOptions {
  name?: string;
  /** cron of the nightly run (UTC). */
  cron?: string;
}

/**
 * The scheduled workflow (nightly and on demand) that checks the catalog against the real nixpkgs on a GitHub-hosted
 * runner (x86_64-linux, the system the NixOS-CUDA Hydra builds for): install Nix (≥ 2.18, checked), `generate
 * --check`, `pin check` over every catalog pin (fetching each revision), `eval` over every variant of the matrix
 * through release.nix with the real pins, `pin cache` (the cache model against cache.nixos-cuda.org), `pin inspect`
 * of nixos-unstable's head (a warning when its torch is newer than the catalog's), and upload the JSON results. Any difference or error fails the job; every check runs and every result is uploaded either way.
 */
export function checksWorkflow(o: ChecksOptions = {}) {
  return {
    name: o.name ?? "check the catalog against nixpkgs",
    on: { schedule: [{ cron: o.cron ?? "17 3 * * *" }], workflow_dispatch: {} },
    jobs: {
      "catalog-against-nixpkgs": {
        "runs-on": hostedRunnerOf("x86_64-linux")!.labels[0],
        // Evaluation only, no builds: well inside the hosted cap.
        "timeout-minutes": Math.min(180, GITHUB_LIMITS.hostedJobMinutes),
        steps: [
          { uses: "actions/checkout@v4" },
          { uses: "actions/setup-node@v4", with: { "node-version": 20 } },
          { run: "npm ci --no-audit --no-fund" },
          {
            uses: "cachix/install-nix-action@v31",
            with: { extra_nix_config: `experimental-features = nix-command\nextra-trusted-public-keys = ${NIXOS_CUDA_CACHE.publicKey}\n` },
          },
          { name: `Nix is at least ${NIX_MIN_VERSION}`, run: nixVersionCheckScript() },
          { name: "Generated files match matrix.ts", run: "npm run --silent generate -- --check" },
          { name: "pin check: every catalog pin against its nixpkgs", id: "pins", run: pinCheckScript() },
          { name: "eval: every variant through release.nix with the real pins", id: "eval", if: "${{ !cancelled() }}", run: evalCheckScript() },
          { name: `pin cache: the cache model against ${NIXOS_CUDA_CACHE.url}`, id: "cache", if: "${{ !cancelled() }}", run: pinCacheScript() },
          { name: "nixos-unstable: a torch newer than the catalog knows (a warning naming pin add)", id: "newest", if: "${{ !cancelled() }}", run: newerTorchScript() },
          {
            name: "Upload the results",
            if: "${{ !cancelled() }}",
            uses: "actions/upload-artifact@v4",
            with: { name: "catalog-checks", path: "pin-check.json\neval.jsonl\ncache-check.json\nnewest-nixpkgs.json\n", "if-no-files-found": "warn" },
          },
        ],
      },
    },
  };
}

/** The checks workflow YAML, with a generated header. */
export function checksWorkflowYaml(o: ChecksOptions = {}): string {
  const head =
    "# generated by variant-matrix (`variant-matrix ci github --checks`): nightly and on demand, the catalog against the\n" +
    "# real nixpkgs: `pin check` fetches every catalog pin and reads its facts with a Nix >= 2.18, `eval` evaluates every\n" +
    "# variant of matrix.ts through release.nix with its real pin, `pin cache` asks cache.nixos-cuda.org what the cache\n" +
    "# model says it holds; any difference fails the run; the head of nixos-unstable is inspected, with a warning when it\n" +
    "# carries a torch newer than the catalog knows (`pin add` is the way in); the JSON of each is uploaded.\n";
  return head + new Document(checksWorkflow(o)).toString({ lineWidth: 0 });
}

/** Options of the Hydra jobset spec. */
interface HydraOptions {
  /** Git URL of this repository as Hydra fetches it. */
  repo: string;
  branch: string;
  /** Jobset name. */
  name?: string;
}

/**
 * Why `branch` is not a git branch name, by `git check-ref-format --branch`'s rules (git-check-ref-format(1)): no
 * whitespace, control character, `~ ^ : ? * [ \`, `..`, `@{` or `//`; no component starting with `.` or ending with
 * `.lock`; not starting with `-` or `/`, not ending with `/` or `.`; not `@`.
 * @returns the reason, or null for a valid name
 */
export function branchNameProblem(branch: string): string | null {
  if (branch === "") return "it is empty";
  if (/[\s\u0000-\u001f\u007f]/.test(branch)) return "it holds whitespace or a control character";
  const bad = /[~^:?*[\\]/.exec(branch);
  if (bad) return `it holds ${JSON.stringify(bad[0])}`;
  for (const seq of ["..", "@{", "//"]) if (branch.includes(seq)) return `it holds ${JSON.stringify(seq)}`;
  if (branch === "@") return "it is \"@\"";
  if (branch.startsWith("-")) return "it starts with \"-\"";
  if (branch.startsWith("/") || branch.endsWith("/") || branch.endsWith(".")) return "it starts or ends with \"/\", or ends with \".\"";
  if (branch.split("/").some((c) => c.startsWith(".") || c.endsWith(".lock"))) return "a component starts with \".\" or ends with \".lock\"";
  return null;
}

/**
 * A Hydra declarative jobset spec (the `spec.json` a declarative project points at): one jobset evaluating
 * release.nix from this repository. Hydra's own nixexprinput/nixexprpath/inputs fields (hydra manual,
 * "Declarative projects").
 *
 * The git input's value is `URL BRANCH`, which Hydra splits at whitespace (a third word is its deep-clone flag): the
 * URL and the branch are checked here, so that neither adds a field.
 * @throws InputError (exit 2) for a URL with whitespace or a control character, or a branch branchNameProblem refuses
 */
export function hydraSpec(o: HydraOptions) {
  if (o.repo === "" || /[\s\u0000-\u001f\u007f]/.test(o.repo))
    throw new InputError(`--repo ${JSON.stringify(o.repo)}: a git URL, without whitespace or control characters (Hydra splits its input at whitespace)`);
  const problem = branchNameProblem(o.branch);
  if (problem) throw new InputError(`--branch ${JSON.stringify(o.branch)}: not a git branch name: ${problem}`);
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
