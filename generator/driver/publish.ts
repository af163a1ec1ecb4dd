/**
 * `publish`: carry built variants to the machines that need them. Two roads:
 * - a Nix binary cache: `nix copy --to URI` of each variant's built closure (driver/job.ts pushClosure, the one code
 *   path `build --copy-to` uses), every path of it signed with the team's key when one is named (`--secret-key-file`,
 *   the URI's `secret-key=`, or matrix.ts `caches` `secretKeyFile`), and each path's narinfo in the cache checked
 *   afterwards (publishToCache below). Only what is proven goes: a variant whose static check's output is
 *   not valid in this store (driver/proof.ts judgeProofs) is refused unless `--allow-unproven`, which copies the
 *   variant with its unproven marker (proof.ts unprovenMarker) instead; a proven variant is copied with its proof (the
 *   check's output and its closure), signed and checked back like the rest;
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
import { closeSync, existsSync, readlinkSync, rmSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ERROR_PREFIX, InputError, UsageError } from "../errors.ts";
import { runTool, stopRunningCommands } from "../process.ts";
import { redactCredentials } from "../redact.ts";
import { shellWord, wrap, wrapCommand } from "../text.ts";
import { addUnprovenMarker, judgeProofs, unprovenMarker, type VariantProof } from "./proof.ts";
import {
  checkSignatures,
  publicKeys,
  queryCache,
  readSigningKey,
  storeUrlBase,
  storeUrlParams,
  withStoreUrlParam,
  withoutStoreUrlParam,
  type CachedPath,
  type SigningKey,
} from "./cache-signatures.ts";

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
  /** `--to`: `--secret-key-file FILE` (absolute), the key every published path is signed with. */
  secretKeyFile?: string;
  /** `--to`: take each variant's file (whose `tests.static` is its proof) from DIR/NAME.nix (absolute), as `build --pkgs-dir`. */
  pkgsDir?: string;
  /** `--to`: publish a variant whose static check has not passed here, with its unproven marker (proof.ts). */
  allowUnproven?: boolean;
  /** Each note as planning meets it (a line without its newline): stderr in the CLI. */
  onNote: (line: string) => void;
}

/** A variant's built output for `--to`: the store path its result link points to, and its `.nix` file (absolute). */
interface BuiltOutput {
  name: string;
  out: string;
  file: string;
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
  | {
      road: "to";
      to: string;
      outs: BuiltOutput[];
      /** The selected variants without a result link (publish --dry-run shows them; the real run refuses). */
      notBuilt: NotBuilt | null;
      nixOptions: (readonly [string, string])[];
      /** The key every path is signed with (signingKeyFor), or null: nothing is signed, and publish says so per path. */
      signing: SigningKey | null;
      /** The public keys consumers trust for this cache: matrix.ts `caches` `publicKey` of the entry with its URL. */
      consumerKeys: string[];
      /** Each built variant's proof, in `outs`' order (proof.ts judgeProofs). */
      proofs: VariantProof[];
      /** `--allow-unproven`: the unproven ones go too, each with its marker. */
      allowUnproven: boolean;
    };

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
  const toProblem = o.to === undefined ? null : (await import("../matrix/team-cache.ts")).storeUriProblem(o.to);
  if (toProblem) throw new UsageError(`--to ${JSON.stringify(o.to)}: ${toProblem} (nothing copied)`);
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
  if (!o.org) {
    const matrixDir = dirname(o.matrixFile ?? join(o.root, "matrix.ts"));
    const built = builtOutputs(ordered, o);
    const proofs = await judgeProofs(built.outs, o.nixOptions);
    const signing = signingKeyFor(to!, o.secretKeyFile, p.matrix.caches, matrixDir);
    return { road: "to", to: to!, ...built, nixOptions: o.nixOptions, ...signing, proofs, allowUnproven: !!o.allowUnproven };
  }
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
 * The key `publish --to URL` signs with, and the keys its consumers trust. The key: `--secret-key-file FILE`, else the
 * URL's `secret-key=FILE` parameter, else `secretKeyFile` of the matrix.ts `caches` entry with this URL (relative to
 * the matrix file's directory); none: null. The consumers' keys: `publicKey` of that entry.
 * @throws InputError (exit 2) for a key file that cannot be read or is not a Nix secret key; UsageError when the key
 *   is not the one matrix.ts gives consumers for this cache (they would accept none of its signatures)
 */
export function signingKeyFor(
  url: string,
  secretKeyFile: string | undefined,
  caches: readonly { url: string; publicKey: string; secretKeyFile?: string }[],
  matrixDir: string,
): { signing: SigningKey | null; consumerKeys: string[] } {
  const entries = caches.filter((c) => storeUrlBase(c.url) === storeUrlBase(url));
  const consumerKeys = [...new Set(entries.map((c) => c.publicKey))];
  const inUrl = storeUrlParams(url).get("secret-key");
  const inMatrix = entries.find((c) => c.secretKeyFile)?.secretKeyFile;
  const signing = secretKeyFile
    ? readSigningKey(secretKeyFile, "--secret-key-file")
    : inUrl
      ? readSigningKey(inUrl, "the store URL's secret-key=")
      : inMatrix
        ? readSigningKey(resolve(matrixDir, inMatrix), "matrix.ts caches secretKeyFile")
        : null;
  if (signing && consumerKeys.length && !consumerKeys.includes(signing.publicKey))
    throw new UsageError(
      `${signing.from} ${signing.file} signs as ${signing.publicKey}, but matrix.ts \`caches\` gives consumers of ${redactCredentials(storeUrlBase(url))} the key ` +
        `${consumerKeys.join(" and ")}: they would accept none of its signatures (use that key's secret file, or change the cache's publicKey)`,
    );
  return { signing, consumerKeys };
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
function builtOutputs(ordered: readonly { name: string; file: string }[], o: PlanPublishOptions): { outs: BuiltOutput[]; notBuilt: NotBuilt | null } {
  const outDir = o.outDir?.path ?? o.root;
  const outs = ordered.map((t) => {
    const file = o.pkgsDir ? join(o.pkgsDir, `${t.name}.nix`) : t.file;
    try {
      return { name: t.name, out: readlinkSync(join(outDir, `result-${t.name}`)), file };
    } catch {
      return { name: t.name, out: null, file };
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
 * The refusal of a publish whose variants are not all proven: each with why, and the two ways on (build the check,
 * or `--allow-unproven`), wrapped to `width`. Pure.
 */
function unprovenMessage(unproven: readonly Extract<VariantProof, { state: "unproven" }>[], width: number): string {
  const pad = " ".repeat([...ERROR_PREFIX].length);
  const head = wrap(
    `${unproven.length} variant(s) not proven, so nothing was copied: a variant is published with its proof, the output of its static check (tests.static), which must have passed in this store:`,
    width,
    { indent: pad },
  ).slice(pad.length);
  const each = unproven.map((u) => wrap(`${u.name}: ${u.why}`, width, { indent: "  ", hang: "    " }));
  const fix = wrap(
    `Build them (build proves each variant by default), then publish again; or publish them unproven with --allow-unproven (the cache then says "unproven" for each, and install says so). The build:`,
    width,
    { indent: "  ", hang: "  " },
  );
  const build = wrapCommand(["npx", "variant-matrix", "build", ...unproven.map((u) => u.name)].map(shellWord).join(" "), width, "  $ ");
  return [head, ...each, fix, build].join("\n");
}

/**
 * Refuse a plan that cannot run: a blocking flox check (preflight/checks.ts refuseOnBlocking), a failed precondition,
 * (--to) a variant not built yet, unless `dryRun` (a dry run shows the build to run first), or (--to) a variant not
 * proven without `--allow-unproven`, unless `dryRun` (a dry run says which are proven).
 * @throws PreflightError or InputError (exit 2), its lines wrapped to `width`
 */
export async function assertPublishable(plan: PublishPlan, width: number, dryRun = false): Promise<void> {
  if (plan.road === "to" && plan.notBuilt && !dryRun) throw new UsageError(notBuiltMessage(plan.notBuilt, width));
  if (plan.road === "to" && !dryRun && !plan.allowUnproven) {
    const unproven = plan.proofs.filter((p): p is Extract<VariantProof, { state: "unproven" }> => p.state === "unproven");
    if (unproven.length) throw new UsageError(unprovenMessage(unproven, width));
  }
  if (plan.road !== "org") return;
  if (plan.preconditions === null) (await import("../preflight/checks.ts")).refuseOnBlocking(plan.preflight, width);
  const failed = (plan.preconditions ?? []).filter((c) => !c.ok);
  if (failed.length) throw new UsageError(`flox publish cannot run here: ${failed.map((c) => `${c.check}: ${c.detail}`).join("; ")}`);
}

/**
 * What publish did to one store path of a closure, read back from the cache afterwards: "copied" (not in the cache
 * before), "re-signed" (there without the key's signature: signed in place), "already signed" (there with it),
 * "already there" (no key given: left as it was), "failed" (the copy failed, or the cache still lacks the signature).
 */
export interface PathOutcome {
  path: string;
  status: "copied" | "re-signed" | "already signed" | "already there" | "failed";
  /**
   * Whether the cache's narinfo carries a signature that verifies with a key its consumers trust (the signing key;
   * else matrix.ts `caches` publicKey for this URL); null when no key is known to judge by.
   */
  trusted: boolean | null;
  /** The signatures' key names, or why it failed. */
  detail: string;
}

/** What one `nix copy` of a `--to` run did, and what happened to each path of its closure not listed before. */
export interface CopyOutcome {
  name: string;
  /** What was copied of the variant `name`: its output, its proof, or its unproven marker (proof.ts). */
  role: CopyRole;
  outPath: string;
  /** "interrupted": a signal stopped publish before this copy ended (what the cache holds of it is unknown). */
  status: "copied" | "failed" | "interrupted";
  /** The store URI (credentials redacted) when copied; why, when failed or interrupted. */
  detail: string;
  /** The paths of its closure that no earlier variant of the run listed, in Nix's order (--requisites). */
  paths: PathOutcome[];
}

/**
 * What runPublish did: flox publish's outcomes (--org), or each copy with the log kept when one failed, and warnings
 * (paths left unsigned by the consumers' key) (--to).
 */
export type PublishRun =
  | { road: "org"; report: PublishOutcome[]; exitCode: number }
  | { road: "to"; to: string; log: string | null; report: CopyOutcome[]; warnings: string[]; exitCode: number };

/**
 * Run a plan (assertPublishable first): `flox publish` per step of this host's system (runFloxPublish), or for --to
 * publishToCache. Prints nothing. @returns the outcomes and the exit code (1 when one failed)
 */
export async function runPublish(plan: PublishPlan): Promise<PublishRun> {
  if (plan.road === "org") {
    const report = await runFloxPublish(plan.steps, plan.org, plan.root, (name) => plan.dependsOn.get(name) ?? []);
    return { road: "org", report, exitCode: report.some((r) => r.status === "failed") ? 1 : 0 };
  }
  return publishToCache(plan);
}

/** What a copy of a `--to` run carries for a variant: its output, its proof, or the marker that it has none. */
export type CopyRole = "variant" | "proof" | "unproven";

/**
 * The copies of a `--to` run, in build order: each variant's output, then its proof when proven, or (--allow-unproven)
 * its unproven marker. Pure.
 */
export function copiesOf(plan: Extract<PublishPlan, { road: "to" }>): { name: string; role: CopyRole; out: string }[] {
  return plan.outs.flatMap((o) => {
    const p = plan.proofs.find((x) => x.name === o.name);
    const extra =
      p?.state === "proven"
        ? [{ name: o.name, role: "proof" as const, out: p.path }]
        : plan.allowUnproven
          ? [{ name: o.name, role: "unproven" as const, out: unprovenMarker(o.name, o.out).path }]
          : [];
    return [{ name: o.name, role: "variant" as const, out: o.out }, ...extra];
  });
}

/** Store URL schemes of binary caches, whose narinfo `nix copy` signs with the URL's `secret-key=` (BinaryCacheStore). */
const BINARY_CACHE_SCHEMES = ["file", "http", "https", "s3"];

/**
 * `publish --to`: each variant's closure (`nix-store --query --requisites`) into the cache, every path signed when
 * the plan has a key, and what the cache holds afterwards judged path by path (PathOutcome):
 * 1. what the cache holds of every path before (cache-signatures.ts queryCache, its narinfo read again);
 * 2. `nix copy --to URL?secret-key=FILE OUT` per variant (a binary cache signs each path it writes; for an ssh store
 *    the closure is signed in this store first, `nix store sign -r --key-file FILE OUT`, and the copy carries it);
 *    `nix copy` skips a path the cache holds, signed or not (Nix 2.8: "copying 0 paths", the narinfo unchanged), so
 * 3. the paths the cache held without the key's signature are signed in place: `nix store sign --store URL
 *    --key-file FILE PATH…` rewrites their narinfo (Nix's BinaryCacheStore::addSignatures);
 * 4. the cache is read again, and each path's signatures verified (Ed25519 over Nix's fingerprint).
 * nix copy's output goes to a private log, kept only when something failed. Without a key nothing is signed, and a
 * path the consumers' key (matrix.ts) has not signed is counted in a warning.
 */
async function publishToCache(plan: Extract<PublishPlan, { road: "to" }>): Promise<PublishRun> {
  const [{ pushClosure }, { openLogFile, privateTempDir }] = await Promise.all([import("./run.ts"), import("../output-file.ts")]);
  // nix copy's output, in a fresh private directory (a fixed name in /tmp could be someone else's file or link).
  const logDir = privateTempDir("variant-matrix-publish-");
  const log = join(logDir, "publish.log");
  const fd = openLogFile(log, { exclusive: true });
  const shown = redactCredentials(plan.to);
  const report: CopyOutcome[] = [];
  const copies = copiesOf(plan);
  // Each unproven marker is made in this store first (a text file: proof.ts addUnprovenMarker), then copied like the rest.
  const markerErr = new Map<string, string | null>();
  for (const c of copies.filter((x) => x.role === "unproven")) {
    const o = plan.outs.find((x) => x.name === c.name)!;
    markerErr.set(c.out, await addUnprovenMarker(unprovenMarker(o.name, o.out), plan.nixOptions));
  }
  const closures = await Promise.all(copies.map((o) => closureOf(o.out)));
  const all = [...new Set(closures.flat())];
  const ctx = { plan, fd };
  let states: CacheStates;
  const stop = onInterrupt();
  try {
    const before = await readCache(plan, all);
    for (const [i, o] of copies.entries()) {
      const made = markerErr.get(o.out);
      const err = stop.signal
        ? null
        : made
          ? `the unproven marker was not made: ${made}`
          : ((await signLocally(ctx, o.out)) ?? (await pushClosure(o.out, copyUrl(plan), fd, plan.nixOptions)));
      // A signal to the process group ends the copy and reaches this process too, in either order: let it land.
      if (err && !stop.signal) await new Promise((r) => setTimeout(r, 250));
      // A copy the signal stopped, or not started after it, is said so: what the cache holds of it is unknown.
      if (stop.signal) report.push({ name: o.name, role: o.role, outPath: o.out, status: "interrupted", detail: `not copied: publish was interrupted (${stop.signal})`, paths: [] });
      else report.push({ name: o.name, role: o.role, outPath: o.out, status: err ? "failed" : "copied", detail: err ?? shown, paths: [] });
      if (err || stop.signal) closures[i] = [];
    }
    if (stop.signal) return interruptedRun(plan, report, log, stop.signal);
    const resignErr = await resignInCache(ctx, before);
    states = { before, after: await readCache(plan, all), resignErr };
    if (stop.signal) return interruptedRun(plan, report, log, stop.signal);
  } finally {
    stop.end();
    closeSync(fd);
  }
  const seen = new Set<string>();
  for (const [i, r] of report.entries()) {
    r.paths = closures[i]!.filter((p) => !seen.has(p)).map((p) => pathOutcome(p, states, plan));
    for (const p of closures[i]!) seen.add(p);
  }
  const failed = report.some((r) => r.status === "failed" || r.paths.some((p) => p.status === "failed"));
  if (!failed) rmSync(logDir, { recursive: true, force: true });
  return { road: "to", to: shown, log: failed ? log : null, report, warnings: unsignedWarnings(plan, report), exitCode: failed ? 1 : 0 };
}

/**
 * Catch SIGINT and SIGTERM while publish copies: the first ends the running `nix copy` (process.ts
 * stopRunningCommands) and no further copy starts; `signal` says which came. `end` removes the handlers.
 */
function onInterrupt(): { signal: NodeJS.Signals | null; end: () => void } {
  const state = { signal: null as NodeJS.Signals | null, end: () => {} };
  const on = (sig: NodeJS.Signals) => {
    if (state.signal) return;
    state.signal = sig;
    void stopRunningCommands(sig);
  };
  process.on("SIGINT", on);
  process.on("SIGTERM", on);
  state.end = () => {
    process.off("SIGINT", on);
    process.off("SIGTERM", on);
  };
  return state;
}

/**
 * The run a signal stopped: the copies as far as they went, the log kept, exit 130 (SIGINT) or 143 (SIGTERM), and a
 * warning that says what the cache may now hold. Nix writes a path's narinfo after its contents, so a cache holds a
 * path whole or not at all; but a variant may be there without its proof (install then says it has none).
 */
function interruptedRun(plan: Extract<PublishPlan, { road: "to" }>, report: CopyOutcome[], log: string, signal: NodeJS.Signals): PublishRun {
  const done = report.filter((r) => r.status === "copied").length;
  const warning =
    `publish: interrupted (${signal}) after ${done} of ${report.length} copies: ${redactCredentials(storeUrlBase(plan.to))} may hold a variant without its ` +
    "proof or unproven mark (install then says it has no proof, and verify reads everything); run the same publish again to finish";
  return { road: "to", to: redactCredentials(plan.to), log, report, warnings: [warning], exitCode: signal === "SIGINT" ? 130 : 143 };
}

/** The runtime closure of a store path (`nix-store --query --requisites`), or [] when Nix cannot say. */
async function closureOf(out: string): Promise<string[]> {
  const r = await runTool(["nix-store", "--query", "--requisites", out]);
  return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}

/** What the cache held before and holds after, path by path (null: absent; `{ error }`: the cache could not be read). */
interface CacheStates {
  before: Map<string, CachedPath | null> | { error: string };
  after: Map<string, CachedPath | null> | { error: string };
  /** Why signing in place failed, or null. */
  resignErr: string | null;
}

/** The cache's narinfo of `paths`, read again (not Nix's cached answer): cache-signatures.ts queryCache. */
async function readCache(plan: Extract<PublishPlan, { road: "to" }>, paths: readonly string[]) {
  return queryCache(storeUrlOnly(plan.to), paths, plan.nixOptions, { fresh: true });
}

/** The URL without `secret-key=` (a store that only reads needs no key). */
function storeUrlOnly(url: string): string {
  return withoutStoreUrlParam(url, "secret-key");
}

/** Whether `url` is a binary cache (BINARY_CACHE_SCHEMES). */
function isBinaryCache(url: string): boolean {
  return BINARY_CACHE_SCHEMES.includes(url.slice(0, Math.max(0, url.indexOf("://"))));
}

/** The URL nix copy writes to: with the plan's key as `secret-key=` for a binary cache. */
function copyUrl(plan: Extract<PublishPlan, { road: "to" }>): string {
  if (!plan.signing || !isBinaryCache(plan.to)) return plan.to;
  return withStoreUrlParam(storeUrlOnly(plan.to), "secret-key", plan.signing.file);
}

/** A Nix command of publish, its output to the log. @returns null when it exited 0, else why (redacted) */
async function logged(fd: number, argv: readonly string[]): Promise<string | null> {
  writeSync(fd, redactCredentials(`=== ${argv.join(" ")} ===\n`));
  const r = await runTool(argv);
  writeSync(fd, redactCredentials(r.stdout + r.stderr));
  if (r.code === 0) return null;
  return redactCredentials(`${argv.slice(0, 5).join(" ")}: exit code ${r.code}: ${(r.stderr.split("\n").filter((l) => l.trim()).at(-1) ?? "").trim()}`);
}

/** For a store that is not a binary cache (ssh://), sign the closure in this store before the copy carries it. */
async function signLocally(ctx: { plan: Extract<PublishPlan, { road: "to" }>; fd: number }, out: string): Promise<string | null> {
  const { plan, fd } = ctx;
  if (!plan.signing || isBinaryCache(plan.to)) return null;
  return logged(fd, ["nix", "--extra-experimental-features", "nix-command", "store", "sign", "-r", "--key-file", plan.signing.file, out]);
}

/** Sign in place the paths the cache held before without the key's signature. @returns why it failed, or null */
async function resignInCache(ctx: { plan: Extract<PublishPlan, { road: "to" }>; fd: number }, before: CacheStates["before"]): Promise<string | null> {
  const { plan, fd } = ctx;
  if (!plan.signing || "error" in before) return null;
  const key = publicKeys([plan.signing.publicKey]);
  const unsigned = [...before.values()].filter((i): i is CachedPath => i !== null && checkSignatures(i, key).valid.length === 0).map((i) => i.path);
  if (unsigned.length === 0) return null;
  const opts = plan.nixOptions.flatMap(([k, v]) => ["--option", k, v]);
  return logged(fd, ["nix", "--extra-experimental-features", "nix-command", "store", "sign", ...opts, "--store", storeUrlOnly(plan.to), "--key-file", plan.signing.file, ...unsigned]);
}

/**
 * What happened to `path` (PathOutcome), from the cache's narinfo before and after: with a key, the key's signature
 * must verify afterwards (else "failed"); without one, whether a key the consumers trust has signed it.
 */
function pathOutcome(path: string, s: CacheStates, plan: Extract<PublishPlan, { road: "to" }>): PathOutcome {
  if ("error" in s.after) return { path, status: "failed", trusted: null, detail: `the cache could not be read back: ${s.after.error}` };
  const was = "error" in s.before ? undefined : s.before.get(path);
  const now = s.after.get(path) ?? null;
  if (!now) return { path, status: "failed", trusted: null, detail: "not in the cache after the copy" };
  const judgeBy = plan.signing ? [plan.signing.publicKey] : plan.consumerKeys;
  const keys = publicKeys(judgeBy);
  const v = checkSignatures(now, keys);
  const names = [...v.valid, ...v.broken.map((n) => `${n} (does not verify)`), ...v.others];
  const signed = names.length ? `signatures: ${names.join(", ")}` : "no signature";
  const trusted = judgeBy.length ? v.valid.length > 0 : null;
  if (!plan.signing) return { path, status: was ? "already there" : "copied", trusted, detail: signed };
  const hadKey = was ? checkSignatures(was, keys).valid.length > 0 : false;
  if (!trusted) return { path, status: "failed", trusted, detail: `the cache's narinfo lacks a valid signature by ${plan.signing.name} (${signed})${s.resignErr ? `: ${s.resignErr}` : ""}` };
  if (!was) return { path, status: "copied", trusted, detail: signed };
  return { path, status: hadKey ? "already signed" : "re-signed", trusted, detail: signed };
}

/**
 * Without a key: a warning when paths in the cache carry no signature its consumers trust (matrix.ts `caches`
 * publicKey), or no signature at all where matrix.ts names no key for the cache. [] otherwise.
 */
function unsignedWarnings(plan: Extract<PublishPlan, { road: "to" }>, report: readonly CopyOutcome[]): string[] {
  if (plan.signing) return [];
  const paths = report.flatMap((r) => r.paths);
  const where = redactCredentials(storeUrlBase(plan.to));
  const fix = "publish again with --secret-key-file FILE (or matrix.ts `caches` secretKeyFile): it signs every path of the closure and re-signs what the cache holds unsigned";
  if (plan.consumerKeys.length) {
    const bad = paths.filter((p) => p.trusted === false);
    if (bad.length === 0) return [];
    const keyNames = plan.consumerKeys.map((k) => k.split(":")[0]).join(" or ");
    return [`publish: ${bad.length} of ${paths.length} path(s) in ${where} carry no signature by ${keyNames} (the key matrix.ts \`caches\` gives its consumers): a Nix with require-sigs (the default) builds them instead of fetching; ${fix}`];
  }
  const bare = paths.filter((p) => p.detail === "no signature");
  if (bare.length === 0) return [];
  return [`publish: ${bare.length} of ${paths.length} path(s) in ${where} carry no signature, and no key was given (matrix.ts \`caches\` names none for this URL): a Nix with require-sigs (the default) builds them instead of fetching; ${fix}`];
}
