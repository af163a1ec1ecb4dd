/**
 * `variant-matrix eval`: evaluate a selection of variants to drvPaths through `release.nix`, in parallel, and prove
 * from the derivations themselves that every variant built on torch (torchaudio, torchvision, the environment) is
 * built against exactly its pytorch variant.
 *
 * Engines: `nix-eval-jobs` when it is on PATH (it evaluates release.nix with N workers and prints one JSON object
 * per job); otherwise bounded parallel `nix-instantiate`: the selected attributes are split into N chunks, each
 * evaluated by one `nix-instantiate --eval --strict --json --read-write-mode` process (so the variants of a chunk
 * share their nixpkgs instances, pkgs/matrix.nix), and a variant whose evaluation fails is evaluated alone with
 * `nix-instantiate release.nix -A NAME` to report Nix's own error message.
 *
 * Coupling proof: for each variant with a pytorch (`dependsOn[0]`) that was evaluated, the references of its .drv in
 * Nix's database (its input derivations and sources, what `nix-store --query --references` prints) must contain the
 * pytorch variant's .drv; an environment's whole .drv closure (`--requisites`) must hold no other torch. Nix is asked
 * once for all variants (store.ts storeReferences and storeClosures: `nix-store --dump-db`), not once per variant.
 */
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import { findExecutable, runTool } from "../process.ts";
import { storeClosures, storeReferences } from "./store.ts";
import { nixString } from "../nix-literals.ts";
import type { Variant } from "../matrix/schema.ts";

/** One evaluated variant, as printed by `eval --json` (one JSON object per line). */
export interface EvalResult {
  /** Variant name. */
  name: string;
  /** Attribute path in release.nix (equal to the name). */
  attribute: string;
  /** Nix system of the derivation ("aarch64-linux"), null when evaluation failed. */
  system: string | null;
  /** The .drv store path, null when evaluation failed. */
  drvPath: string | null;
  /** Output name → store path ({ out: "/nix/store/…" }), {} when evaluation failed. */
  outputs: Record<string, string>;
  /** Nix's error message, or null. */
  error: string | null;
  /**
   * A variant built on another (a package on torch, an environment): its pytorch variant and whether that
   * variant's .drv is among this .drv's references (null when the pytorch variant was not evaluated or failed).
   */
  coupling?: { pytorch: string; pytorchDrvPath: string | null; ok: boolean | null; otherTorches?: string[] };
}

/** What `eval` needs to run. */
interface EvalOptions {
  /** Project root holding release.nix. */
  root: string;
  /** Variants to evaluate (pytorch variants of selected torchaudio ones are added for the proof). */
  variants: readonly Variant[];
  /** Parallel evaluators (chunks or nix-eval-jobs workers), ≥ 1. */
  jobs: number;
  /** A Nix expression handed to release.nix as `nixpkgs` (`--arg nixpkgs EXPR`), or undefined for the pins. */
  nixpkgsExpr?: string;
  /** "auto" picks nix-eval-jobs when on PATH. */
  engine?: "auto" | "nix-eval-jobs" | "nix-instantiate";
  /** Called with each result as soon as it is known. */
  onResult?: (r: EvalResult) => void;
}

/** Summary of an evaluation. */
interface EvalSummary {
  engine: "nix-eval-jobs" | "nix-instantiate";
  evaluated: number;
  errors: number;
  pairs: number;
  coupled: number;
  uncoupled: number;
  seconds: number;
}


/**
 * The torch derivations among store paths: nixpkgs' torch (`python3.13-torch-2.12.0.drv`, buildPythonPackage's name
 * "python" + version + "-" + pname + "-" + version) and the matrix's pytorch variants (`pytorch-python313-…-2.12.0.drv`,
 * `pytorch29-…`; pkgs/variant-attrs.nix names them after the variant).
 */
export function torchDrvs(paths: readonly string[]): string[] {
  return paths.filter((p) => /^\/nix\/store\/[0-9a-z]{32}-(python3\.\d+-torch-\d[^/]*|pytorch\d*-python\d+-[^/]+)\.drv$/.test(p));
}

/** Split `xs` into at most `n` chunks of near-equal size, keeping order. */
function chunks<T>(xs: readonly T[], n: number): T[][] {
  const k = Math.max(1, Math.min(n, xs.length));
  const out: T[][] = Array.from({ length: k }, () => []);
  const size = Math.ceil(xs.length / k);
  xs.forEach((x, i) => out[Math.floor(i / size)]!.push(x));
  return out.filter((c) => c.length > 0);
}

/** The Nix expression that evaluates `names` of release.nix to { name, drvPath, system, outputs } or a failure. */
function chunkExpr(root: string, names: readonly string[], nixpkgsExpr?: string): string {
  const arg = nixpkgsExpr ? `{ nixpkgs = ${nixpkgsExpr}; }` : "{ }";
  return `
    let
      release = import ${nixString(`${root}/release.nix`)} ${arg};
      one = name:
        let
          d = release.\${name};
          t = builtins.tryEval (builtins.seq d.drvPath {
            inherit name;
            inherit (d) drvPath system;
            outputs = builtins.listToAttrs (map (o: { name = o; value = d.\${o}.outPath; }) (d.outputs or [ "out" ]));
          });
        in if t.success then t.value else { inherit name; failed = true; };
    in map one [ ${names.map(nixString).join(" ")} ]`;
}

function nixArgs(nixpkgsExpr?: string): string[] {
  return nixpkgsExpr ? ["--arg", "nixpkgs", nixpkgsExpr] : [];
}

/** Last meaningful lines of Nix's stderr (the error itself, not the trace chatter). */
function nixError(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l.trim() && !/^trace: |^warning: /.test(l));
  const i = lines.findIndex((l) => l.startsWith("error"));
  return (i >= 0 ? lines.slice(i, i + 6) : lines.slice(-6)).join("\n").trim() || "evaluation failed";
}

async function evalChunk(root: string, names: string[], nixpkgsExpr?: string): Promise<EvalResult[]> {
  // --read-write-mode: write the .drv files, so drvPaths exist in the store for nix-store and builds.
  const p = await runTool(["nix-instantiate", "--eval", "--strict", "--json", "--read-write-mode", ...nixArgs(nixpkgsExpr), "-E", chunkExpr(root, names, nixpkgsExpr)], { cwd: root });
  if (p.code !== 0) {
    // An error tryEval cannot catch (e.g. a missing attribute) sinks the whole chunk: evaluate one by one.
    if (names.length > 1) return (await Promise.all(names.map((n) => evalChunk(root, [n], nixpkgsExpr)))).flat();
    return [failed(names[0]!, nixError(p.stderr))];
  }
  const rows = JSON.parse(p.stdout) as ({ name: string; failed: true } | { name: string; drvPath: string; system: string; outputs: Record<string, string> })[];
  const out: EvalResult[] = [];
  for (const r of rows) {
    if ("failed" in r) {
      const alone = await runTool(["nix-instantiate", "release.nix", "-A", r.name, ...nixArgs(nixpkgsExpr)], { cwd: root });
      out.push(failed(r.name, alone.code === 0 ? "evaluation failed (tryEval)" : nixError(alone.stderr)));
    } else out.push({ name: r.name, attribute: r.name, system: r.system, drvPath: r.drvPath, outputs: r.outputs, error: null });
  }
  return out;
}

function failed(name: string, error: string): EvalResult {
  return { name, attribute: name, system: null, drvPath: null, outputs: {}, error };
}

async function evalWithNixEvalJobs(o: EvalOptions, wanted: Set<string>): Promise<EvalResult[]> {
  const p = await runTool(["nix-eval-jobs", "--workers", String(o.jobs), ...nixArgs(o.nixpkgsExpr), "release.nix"], { cwd: o.root });
  const out: EvalResult[] = [];
  for (const line of p.stdout.split("\n")) {
    if (!line.trim()) continue;
    const j = JSON.parse(line) as { attr: string; drvPath?: string; system?: string; outputs?: Record<string, string>; error?: string };
    if (!wanted.has(j.attr)) continue;
    out.push({
      name: j.attr,
      attribute: j.attr,
      system: j.system ?? null,
      drvPath: j.drvPath ?? null,
      outputs: j.outputs ?? {},
      error: j.error ?? null,
    });
  }
  for (const n of wanted) if (!out.some((r) => r.name === n)) out.push(failed(n, nixError(p.stderr) || "not reported by nix-eval-jobs"));
  return out;
}

/**
 * Set `coupling` on the result of every variant built on another (`dependsOn[0]`, its pytorch): whether the pytorch
 * variant's .drv is among its .drv's references, and for an environment also that its whole .drv closure holds no
 * other torch. Two questions to the store for all variants (driver/store.ts storeReferences, storeClosures), not one
 * process per variant. `ok` is null when either .drv is missing (not evaluated or failed), false when Nix did not
 * answer for this .drv.
 */
async function proveCoupling(variants: readonly Variant[], res: Map<string, EvalResult>): Promise<void> {
  const pairs = variants.filter((v) => v.dependsOn.length > 0).map((v) => ({ v, r: res.get(v.name)!, pytorch: v.dependsOn[0]! }));
  const proven = pairs.filter((p) => p.r.drvPath && res.get(p.pytorch)?.drvPath);
  const refs = await storeReferences(proven.map((p) => p.r.drvPath!));
  const closures = await storeClosures(proven.filter((p) => p.v.role === "env").map((p) => p.r.drvPath!));
  for (const { v, r, pytorch } of pairs) {
    const ptDrv = res.get(pytorch)?.drvPath ?? null;
    if (!r.drvPath || !ptDrv) {
      r.coupling = { pytorch, pytorchDrvPath: ptDrv, ok: null };
      continue;
    }
    const referenced = refs.get(r.drvPath)?.includes(ptDrv) ?? false;
    if (v.role !== "env") {
      r.coupling = { pytorch, pytorchDrvPath: ptDrv, ok: referenced };
      continue;
    }
    // An environment holds packages the matrix did not build (torchcodec, named environments' extras): its whole
    // .drv closure must hold no torch but its pytorch variant's (one torch per closure, ARCHITECTURE.md rule 8).
    const closure = closures.get(r.drvPath);
    const otherTorches = closure ? torchDrvs(closure).filter((d) => d !== ptDrv) : [];
    r.coupling = { pytorch, pytorchDrvPath: ptDrv, ok: referenced && closure !== undefined && otherTorches.length === 0, otherTorches };
  }
}

/**
 * Evaluate the selection and prove the pytorch → torchaudio coupling.
 * @returns one result per evaluated variant (selection order) and a summary; never throws for Nix errors (they are
 *   results).
 */
export async function evalVariants(o: EvalOptions): Promise<{ results: EvalResult[]; summary: EvalSummary }> {
  const t0 = Date.now();
  const byName = new Map(o.variants.map((v) => [v.name, v]));
  const names = [...byName.keys()];
  const engine =
    o.engine === "nix-instantiate" || o.engine === "nix-eval-jobs"
      ? o.engine
      : (await findExecutable("nix-eval-jobs"))
        ? "nix-eval-jobs"
        : "nix-instantiate";
  let results: EvalResult[];
  if (engine === "nix-eval-jobs") results = await evalWithNixEvalJobs(o, new Set(names));
  else {
    const limit = pLimit(Math.max(1, o.jobs));
    results = (await Promise.all(chunks(names, o.jobs).map((c) => limit(() => evalChunk(o.root, c, o.nixpkgsExpr))))).flat();
  }
  const res = new Map(results.map((r) => [r.name, r]));
  await proveCoupling([...byName.values()], res);
  const ordered = names.map((n) => res.get(n)!);
  for (const r of ordered) o.onResult?.(r);
  const pairs = ordered.filter((r) => r.coupling);
  return {
    results: ordered,
    summary: {
      engine,
      evaluated: ordered.length,
      errors: ordered.filter((r) => r.error).length,
      pairs: pairs.length,
      coupled: pairs.filter((r) => r.coupling!.ok === true).length,
      uncoupled: pairs.filter((r) => r.coupling!.ok === false).length,
      seconds: (Date.now() - t0) / 1000,
    },
  };
}

/** What planEval is given: eval's options as the command parsed them. */
export interface PlanEvalOptions {
  /** Variant names (default: every variant, after filters). */
  names?: readonly string[];
  /** `--filter K=V` occurrences. */
  filters?: readonly string[];
  /** The matrix file (absolute), or undefined for ROOT/matrix.ts. */
  matrixFile?: string;
  /** The directory holding release.nix (absolute). */
  root: string;
  /** `--jobs`, or undefined for the number of CPUs. */
  jobs?: number;
  nixpkgsExpr?: string;
  engine?: EvalOptions["engine"];
  /** `--ask-store`: then ask Nix what realising each derivation builds and fetches. */
  askStore?: boolean;
  /** `--nix-option` pairs for the store's dry run (commands/shared.ts parseNixOptions). */
  nixOptions?: (readonly [string, string])[];
  /** Columns a refusal's message is wrapped to. */
  width: number;
}

/** What planEval decided: the variants to evaluate and how. */
export interface EvalPlan {
  options: PlanEvalOptions;
  /** The selected variants (closed over dependsOn: the pytorch each one built on torch needs for the proof). */
  variants: Variant[];
  jobs: number;
}

/**
 * Plan `eval`: load the project, select (names, filters; closed over dependsOn), check that release.nix and
 * pkgs/variants.nix say what was just expanded (generated-state.ts, the one freshness comparison) and that this host's
 * Nix can evaluate the catalog's pins (preflight/checks.ts, command "eval"; --nixpkgs hands in the user's own nixpkgs,
 * so no pin is evaluated). Prints nothing.
 * @throws UsageError (exit 2) for a --jobs that is not a whole number ≥ 1; MatrixError, SelectionError, the stale
 *   generated files' error, PreflightError (exit 2)
 */
export async function planEval(o: PlanEvalOptions): Promise<EvalPlan> {
  const [{ loadProject }, { checkHost, hostContext, selectCurrent }, { refuseOnBlocking }, { UsageError }] = await Promise.all([
    import("../matrix/project.ts"),
    import("./build.ts"),
    import("../preflight/checks.ts"),
    import("../errors.ts"),
  ]);
  const p = await loadProject({ matrixFile: o.matrixFile });
  const jobs = o.jobs ?? availableParallelism();
  if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError(`--jobs ${o.jobs}: expected a whole number ≥ 1`);
  const variants = selectCurrent(p.variants, { names: o.names, filters: o.filters }, { project: p, root: o.root, command: "eval" }).targets;
  refuseOnBlocking(checkHost(hostContext("eval", variants, { backend: "nix", pinnedNixpkgs: o.nixpkgsExpr === undefined })), o.width);
  return { options: o, variants, jobs };
}

/** One variant's answer from Nix's dry run (eval --ask-store): what it builds and fetches, by store name, or why not. */
export type StoreRow = { name: string; toBuild: string[]; toFetch: string[] } | { name: string; error: string };

/** What runEval returns: each result, the summary, and with --ask-store Nix's answer (credentials redacted). */
export interface EvalRun {
  results: EvalResult[];
  summary: EvalSummary;
  store: { rows: StoreRow[]; toBuild: string[]; toFetch: string[]; unreachable: string[] } | null;
  /** 1 when a variant did not evaluate or a package on torch is not built against its pytorch, else 0. */
  exitCode: number;
}

/**
 * Run a plan: evaluate (evalVariants; each result to `onResult` as soon as it is known), then with --ask-store ask
 * Nix's dry run for every evaluated derivation. Prints nothing; never throws for Nix's errors (they are results).
 */
export async function runEval(plan: EvalPlan, onResult?: (r: EvalResult) => void): Promise<EvalRun> {
  const o = plan.options;
  const { results, summary } = await evalVariants({ root: o.root, variants: plan.variants, jobs: plan.jobs, nixpkgsExpr: o.nixpkgsExpr, engine: o.engine, onResult });
  const store = o.askStore ? await storeDryRunOf(results, o.nixOptions ?? []) : null;
  return { results, summary, store, exitCode: summary.errors || summary.uncoupled ? 1 : 0 };
}

/** Nix's dry-run answer for every evaluated derivation, and the union across them (each derivation/path once). */
async function storeDryRunOf(results: readonly EvalResult[], nixOptions: (readonly [string, string])[]): Promise<NonNullable<EvalRun["store"]>> {
  const [{ storeDryRun }, { storeName }, { redactDeep }] = await Promise.all([import("./build.ts"), import("./store.ts"), import("../redact.ts")]);
  const ok = results.filter((r) => r.drvPath !== null);
  const byName = await storeDryRun(new Map(ok.map((r) => [r.name, r.drvPath!])), nixOptions);
  const answers = ok.map((r) => byName.get(r.name)!);
  const rows: StoreRow[] = ok.map((r, i) => {
    const a = answers[i]!;
    return "error" in a ? { name: r.name, error: a.error } : { name: r.name, toBuild: a.toBuild.map(storeName), toFetch: a.toFetch.map(storeName) };
  });
  const good = answers.filter((a): a is Exclude<typeof a, { error: string }> => !("error" in a));
  // A substituter's URL (unreachable, or in an error) is printed: credentials redacted (redact.ts).
  return redactDeep({
    rows,
    toBuild: [...new Set(good.flatMap((a) => a.toBuild))].map(storeName),
    toFetch: [...new Set(good.flatMap((a) => a.toFetch))].map(storeName),
    unreachable: [...new Set(good.flatMap((a) => a.unreachable))],
  });
}
