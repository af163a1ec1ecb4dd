/**
 * `publish`: carry built variants to the machines that need them. Two roads:
 * - a Nix binary cache: `nix copy --to URI` of each variant's built closure (driver/job.ts pushClosure, the one code
 *   path `build --copy-to` uses; sign with the store URI's `secret-key=` parameter or nix.conf `secret-key-files`);
 * - a Flox catalog: `flox publish -o ORG NAME`, one package per call, pytorch before what is built on it, each on a
 *   host of its own system (flox records the system it ran on: flox/flox providers/publish.rs).
 *
 * flox's preconditions, read in its source (flox/flox 6536dac commands/publish.rs, providers/publish.rs) and checked
 * here first so that nothing half-publishes: no untracked or uncommitted file under `.flox/` (and our `pkgs/`, which
 * the wrappers import), the branch has an upstream and the revision is pushed (flox builds the pushed revision in a
 * sandbox), the environment is locked (`.flox/env/manifest.lock` committed), the user is logged in (`flox auth
 * status`). A variant that is not built is not built here: `--to` refuses it with the command that builds it
 * (`flox publish` builds from the pushed revision itself).
 */
import { closeSync, existsSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ERROR_PREFIX, InputError, UsageError } from "../errors.ts";
import { runTool } from "../process.ts";
import { shellWord, wrap, wrapCommand } from "../text.ts";

/** One of flox publish's preconditions and its verdict. */
interface Precondition {
  check: string;
  ok: boolean;
  /** What is wrong (files, commits), or what was found. */
  detail: string;
}

/**
 * Check flox publish's preconditions in the project at `root` (a git work tree): clean `.flox/` and `pkgs/`, an
 * upstream with this revision pushed, a committed `manifest.lock`, and `flox auth status` succeeding.
 * @param env the environment `flox` and `git` run with (PATH)
 */
export async function floxPublishPreconditions(root: string, env: NodeJS.ProcessEnv = process.env): Promise<Precondition[]> {
  const git = (...args: string[]) => runTool(["git", "-C", root, ...args], { env }).catch(() => ({ code: 127, stdout: "", stderr: "git could not run" }));
  const out: Precondition[] = [];
  const status = await git("status", "--porcelain", "--untracked-files=all", "--", ".flox", "pkgs");
  const dirty = status.code === 0 ? status.stdout.split("\n").filter(Boolean).map((l) => l.slice(3)) : [];
  out.push(
    status.code !== 0
      ? { check: "tracked and committed", ok: false, detail: `not a git work tree: ${status.stderr.trim().split("\n")[0]}` }
      : { check: "tracked and committed", ok: dirty.length === 0, detail: dirty.length ? `uncommitted or untracked under .flox/ or pkgs/: ${dirty.join(", ")}` : "no change under .flox/ or pkgs/" },
  );
  const upstream = await git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}");
  if (upstream.code !== 0) out.push({ check: "pushed", ok: false, detail: "the branch has no upstream (git push -u REMOTE BRANCH)" });
  else {
    const ahead = await git("rev-list", "--count", "@{u}..HEAD");
    const n = Number(ahead.stdout.trim());
    out.push({ check: "pushed", ok: ahead.code === 0 && n === 0, detail: ahead.code !== 0 ? ahead.stderr.trim() : n === 0 ? `HEAD is on ${upstream.stdout.trim()}` : `${n} commit(s) not pushed to ${upstream.stdout.trim()}` });
  }
  const lock = ".flox/env/manifest.lock";
  const tracked = await git("ls-files", "--error-unmatch", lock);
  out.push({ check: "locked", ok: existsSync(join(root, lock)) && tracked.code === 0, detail: tracked.code === 0 ? `${lock} committed` : `${lock} is missing or not tracked (npm run generate writes it)` });
  const auth = await runTool(["flox", "auth", "status"], { env }).catch(() => ({ code: 127, stdout: "", stderr: "flox is not on PATH" }));
  out.push({ check: "logged in", ok: auth.code === 0, detail: auth.code === 0 ? (auth.stdout || auth.stderr).trim().split("\n")[0] ?? "" : `flox auth status: ${(auth.stderr || auth.stdout).trim().split("\n")[0] || `exit ${auth.code}`} (flox auth login)` });
  return out;
}

/**
 * A Flox organisation (or user) name as `publish --org` and `fleet --org` take it: letters, digits, `-`, `_` and
 * `.`, starting and ending with a letter or digit, at most 64 characters. It becomes `flox publish -o ORG` and the
 * `pkg-path = "ORG/NAME"` of the manifests fleet writes: a `/`, a space, a quote or a newline in it would name another
 * package or, in a file, break out of its string or comment.
 */
const FLOX_ORG_RE = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$/;

/**
 * Refuse an organisation name FLOX_ORG_RE does not match.
 * @param option the option it came from, for the message ("--org")
 * @throws InputError (exit 2) naming the value (as JSON, so that a newline shows) and what is allowed
 */
export function checkFloxOrg(org: string, option = "--org"): void {
  if (!FLOX_ORG_RE.test(org))
    throw new InputError(`${option} ${JSON.stringify(org)}: not an organisation name (letters, digits, "-", "_" and ".", starting and ending with a letter or digit, at most 64)`);
}

/** One step of a publish plan. */
interface PublishStep {
  name: string;
  system: string;
  /** "publish": run `argv`; "skip": not on this host's system (run `argv` on a host of `system`). */
  action: "publish" | "skip";
  argv: string[];
  reason: string | null;
}

/**
 * The flox publish plan (pure): `flox publish -o ORG NAME` per variant in build order (`order`: pytorch first), on
 * this host's system only; the others are skipped with the command to run on a host of theirs.
 */
export function floxPublishPlan(order: readonly { name: string; system: string }[], org: string, hostSystem: string): PublishStep[] {
  return order.map((t) => {
    const argv = ["flox", "publish", "-o", org, t.name];
    return t.system === hostSystem
      ? { name: t.name, system: t.system, action: "publish", argv, reason: null }
      : { name: t.name, system: t.system, action: "skip", argv, reason: `built for ${t.system}; flox publishes for the system it runs on (this host is ${hostSystem}): run \`${argv.join(" ")}\` on a ${t.system} host` };
  });
}

/** What happened to one step of a flox publish run. */
export interface PublishOutcome {
  name: string;
  status: "published" | "failed" | "skipped";
  /** ORG/NAME when published, flox's last line of stderr (or the exit code) when failed, why when skipped. */
  detail: string;
}

/**
 * Run a flox publish plan in the project at `root`, in its order: each "publish" step's `flox publish` (through
 * process.ts runTool), a "skip" step is reported as skipped, and a variant built on one that failed is skipped
 * rather than published. Prints nothing.
 * @param dependsOn name → the names it is built on (the build targets' `dependsOn`)
 * @returns one outcome per step, in the plan's order
 */
export async function runFloxPublish(steps: readonly PublishStep[], org: string, root: string, dependsOn: (name: string) => readonly string[]): Promise<PublishOutcome[]> {
  const report: PublishOutcome[] = [];
  for (const s of steps) {
    if (s.action === "skip") {
      report.push({ name: s.name, status: "skipped", detail: s.reason! });
      continue;
    }
    // What is built on a variant is not published after its own failure.
    const dep = dependsOn(s.name).find((d) => report.some((r) => r.name === d && r.status === "failed"));
    if (dep) {
      report.push({ name: s.name, status: "skipped", detail: `${dep} failed` });
      continue;
    }
    const r = await runTool(s.argv, { cwd: root });
    report.push({ name: s.name, status: r.code === 0 ? "published" : "failed", detail: r.code === 0 ? `${org}/${s.name}` : (r.stderr.trim().split("\n").at(-1) ?? `exit ${r.code}`) });
  }
  return report;
}

/** What planPublish is given: publish's options as the command parsed them. */
export interface PlanPublishOptions {
  names?: readonly string[];
  filters?: readonly string[];
  /** `--org ORG`: a Flox catalog. */
  org?: string;
  /** `--to URI`: a Nix binary cache. Neither: the matrix's first cache (announced through `onNote`). */
  to?: string;
  /** The project root (absolute). */
  root: string;
  /** The matrix file (absolute), or undefined for ROOT/matrix.ts. */
  matrixFile?: string;
  /** `--to`: where the build's result-NAME links are (absolute; default the root), and `--out-dir` as the user typed it. */
  outDir?: { path: string; typed: string };
  /** `--nix-option` pairs for nix copy. */
  nixOptions: (readonly [string, string])[];
  /** Each note as planning meets it (a line without its newline): stderr in the CLI. */
  onNote: (line: string) => void;
}

/** A variant's built output for `--to`: the store path its result link points to. */
interface BuiltOutput {
  name: string;
  out: string;
}

/**
 * `--to`: the selected variants with no result link yet, the build that makes them (its words, `npx variant-matrix
 * build NAMES [--out-dir DIR]`) and the result links their copies will read once built.
 */
export interface NotBuilt {
  names: string[];
  /** The directory whose result-NAME links are read (absolute). */
  outDir: string;
  /** The build command's words, shell-quoted when shown (text.ts shellWord). */
  build: string[];
  /** name → its result link, the path `nix copy` takes once the variant is built. */
  links: { name: string; link: string }[];
}

/**
 * What planPublish decided. `org`: flox publish's plan with its checks (the host's flox; flox's preconditions, null
 * when a blocking flox check leaves nothing to ask); `to`: each selected variant's built output, in build order.
 */
export type PublishPlan =
  | {
      road: "org";
      org: string;
      root: string;
      /** This machine's Nix system. */
      host: string;
      steps: PublishStep[];
      preflight: import("../preflight/checks.ts").CheckResult[];
      preconditions: Precondition[] | null;
      /** name → the names it is built on. */
      dependsOn: Map<string, readonly string[]>;
    }
  | { road: "to"; to: string; outs: BuiltOutput[]; notBuilt: NotBuilt | null; nixOptions: (readonly [string, string])[] };

/**
 * Plan `publish`: the road (--org, --to, or the matrix's first cache), the selection in build order, then for --org
 * the organisation name, the generated files flox will build (generated-state.ts, the one freshness comparison),
 * flox itself and its preconditions; for --to each variant's result link. Prints nothing (notes go to `onNote`);
 * a failed flox check or precondition, or (--to) a variant not built yet, is in the plan (assertPublishable refuses
 * it after the command shows it; a --to dry run shows the build to run first instead).
 * @throws UsageError (exit 2) for both --org and --to, neither and no cache in the matrix, a bad selection;
 *   InputError for a bad organisation name or stale generated files
 */
export async function planPublish(o: PlanPublishOptions): Promise<PublishPlan> {
  const [{ loadProject }, { orderTargets, selectCurrent }, { targetsFromVariants }] = await Promise.all([
    import("../matrix/project.ts"),
    import("./build.ts"),
    import("./targets.ts"),
  ]);
  if (o.org && o.to)
    throw new UsageError("--org and --to exclude each other: publish to a Flox catalog (--org ORG) or to a Nix binary cache (--to STORE_URI), one per run");
  const p = await loadProject({ root: o.root, matrixFile: o.matrixFile });
  // Without --org or --to: the matrix's first team cache (matrix.ts `caches`), said so.
  const to = o.org ? undefined : (o.to ?? (await defaultCacheTarget(p.matrix.caches, o.onNote)));
  let sel;
  try {
    // The generated files are compared later, and only for --org: --to copies what a build made.
    sel = selectCurrent(targetsFromVariants(p.variants, o.root), { names: o.names, filters: o.filters });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const byName = new Map(sel.targets.map((t) => [t.name, t]));
  const ordered = orderTargets(sel.targets).order.map((n) => byName.get(n)!);
  if (!o.org) return { road: "to", to: to!, ...builtOutputs(ordered, o), nixOptions: o.nixOptions };
  // The organisation name first: it becomes flox publish's -o argument (a bad one is refused before anything else).
  checkFloxOrg(o.org);
  // flox publish builds the .flox/pkgs files the last generate wrote: they must say what was just expanded.
  (await import("../generate/generated-state.ts")).assertGeneratedCurrent(p, o.root, "publish", sel.targets);
  const [{ hostSystem }, { checkHost, hostContext }] = await Promise.all([import("./backend.ts"), import("./build.ts")]);
  const host = hostSystem();
  // flox itself first (preflight/checks.ts, as doctor and build check it): without it nothing below can answer.
  const preflight = checkHost(hostContext("publish", [], { backend: "flox", pinnedNixpkgs: false, hostSystem: host, org: o.org }), ["flox"]);
  const blocked = preflight.some((r) => r.status === "fail" && r.blocking);
  return {
    road: "org",
    org: o.org,
    root: o.root,
    host,
    steps: floxPublishPlan(ordered, o.org, host),
    preflight,
    preconditions: blocked ? null : await floxPublishPreconditions(o.root),
    dependsOn: new Map(ordered.map((t) => [t.name, t.dependsOn])),
  };
}

/**
 * publish's target when neither --org nor --to is given: the first cache of matrix.ts `caches`, announced on `note`.
 * @throws UsageError when the matrix names none
 */
async function defaultCacheTarget(caches: readonly { url: string }[], note: (line: string) => void): Promise<string> {
  const { redactCredentials } = await import("../redact.ts");
  const first = caches[0];
  if (!first)
    throw new UsageError("publish needs one of --org ORG (a Flox catalog) or --to STORE_URI (a Nix binary cache), or a cache named in matrix.ts `caches` (the first is the default)");
  note(`publish: to ${redactCredentials(first.url)}, the first cache of matrix.ts \`caches\` (--to names another)`);
  return first.url;
}

/**
 * `--to`: each variant's store path, read off its result link in the out directory, and those with no link yet (the
 * plan holds them; assertPublishable refuses them but in a dry run, which shows the build to run first).
 */
function builtOutputs(ordered: readonly { name: string }[], o: PlanPublishOptions): { outs: BuiltOutput[]; notBuilt: NotBuilt | null } {
  const outDir = o.outDir?.path ?? o.root;
  const outs = ordered.map((t) => {
    try {
      return { name: t.name, out: readlinkSync(join(outDir, `result-${t.name}`)) };
    } catch {
      return { name: t.name, out: null };
    }
  });
  const missing = outs.filter((x) => x.out === null).map((x) => x.name);
  const notBuilt: NotBuilt | null = missing.length
    ? {
        names: missing,
        outDir,
        build: ["npx", "variant-matrix", "build", ...missing, ...(o.outDir ? ["--out-dir", o.outDir.typed] : [])],
        links: missing.map((name) => ({ name, link: join(outDir, `result-${name}`) })),
      }
    : null;
  return { outs: outs.filter((x): x is BuiltOutput => x.out !== null), notBuilt };
}

/**
 * The refusal of a publish whose variants are not all built: how many, where their links were looked for, and the
 * build to run first, wrapped to `width` (the first line leaves room for the error prefix cli.ts puts in front; the
 * command through text.ts wrapCommand). Pure.
 */
function notBuiltMessage(n: NotBuilt, width: number): string {
  const text =
    `not built (no result link in ${n.outDir}): ${n.names.length === 1 ? n.names[0] : `${n.names.length} variants`}; ` +
    "build first, then publish (publish --dry-run shows the whole plan):";
  const command = n.build.map(shellWord).join(" ");
  const pad = " ".repeat([...ERROR_PREFIX].length);
  // The first line after the prefix, then the rest under a two-space hang, each at the full width.
  const first = wrap(text, width, { indent: pad }).split("\n")[0]!.slice(pad.length);
  const rest = text.slice(first.length).trim();
  return [first, ...(rest ? [wrap(rest, width, { indent: "  " })] : []), wrapCommand(command, width, "  $ ")].join("\n");
}

/**
 * Refuse a plan that cannot run: a blocking flox check (preflight/checks.ts refuseOnBlocking), a failed precondition,
 * (--to) a variant not built yet, unless `dryRun` (a dry run shows the build to run first).
 * @throws PreflightError or InputError (exit 2), its lines wrapped to `width`
 */
export async function assertPublishable(plan: PublishPlan, width: number, dryRun = false): Promise<void> {
  if (plan.road === "to" && plan.notBuilt && !dryRun) throw new UsageError(notBuiltMessage(plan.notBuilt, width));
  if (plan.road !== "org") return;
  if (plan.preconditions === null) (await import("../preflight/checks.ts")).refuseOnBlocking(plan.preflight, width);
  const failed = (plan.preconditions ?? []).filter((c) => !c.ok);
  if (failed.length) throw new UsageError(`flox publish cannot run here: ${failed.map((c) => `${c.check}: ${c.detail}`).join("; ")}`);
}

/** What one `nix copy` of a `--to` run did. */
export interface CopyOutcome {
  name: string;
  outPath: string;
  status: "copied" | "failed";
  /** The store URI (credentials redacted) when copied; why, when failed. */
  detail: string;
}

/** What runPublish did: flox publish's outcomes (--org), or each copy with the log kept when one failed (--to). */
export type PublishRun =
  | { road: "org"; report: PublishOutcome[]; exitCode: number }
  | { road: "to"; to: string; log: string | null; report: CopyOutcome[]; exitCode: number };

/**
 * Run a plan (assertPublishable first): `flox publish` per step of this host's system (runFloxPublish), or `nix copy`
 * of each built closure (a closure shared with an earlier one is skipped by Nix), nix copy's output to a private log
 * kept only when a copy failed. Prints nothing. @returns the outcomes and the exit code (1 when one failed)
 */
export async function runPublish(plan: PublishPlan): Promise<PublishRun> {
  if (plan.road === "org") {
    const report = await runFloxPublish(plan.steps, plan.org, plan.root, (name) => plan.dependsOn.get(name) ?? []);
    return { road: "org", report, exitCode: report.some((r) => r.status === "failed") ? 1 : 0 };
  }
  const [{ pushClosure }, { openLogFile, privateTempDir }, { redactCredentials }] = await Promise.all([import("./run.ts"), import("../output-file.ts"), import("../redact.ts")]);
  // nix copy's output, in a fresh private directory (a fixed name in /tmp could be someone else's file or link).
  const logDir = privateTempDir("variant-matrix-publish-");
  const log = join(logDir, "publish.log");
  const fd = openLogFile(log, { exclusive: true });
  const shown = redactCredentials(plan.to);
  const report: CopyOutcome[] = [];
  try {
    for (const o of plan.outs) {
      const err = await pushClosure(o.out, plan.to, fd, plan.nixOptions);
      report.push({ name: o.name, outPath: o.out, status: err ? "failed" : "copied", detail: err ?? shown });
    }
  } finally {
    closeSync(fd);
  }
  const failed = report.some((r) => r.status === "failed");
  if (!failed) rmSync(logDir, { recursive: true, force: true });
  return { road: "to", to: shown, log: failed ? log : null, report, exitCode: failed ? 1 : 0 };
}
