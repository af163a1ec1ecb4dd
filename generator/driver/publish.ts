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
import { existsSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors.ts";
import { runTool } from "../process.ts";

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
