/**
 * Ask before you estimate: what Nix itself says a selection needs (I/O, child processes through store.ts), within a
 * time limit, instead of the cache model. `build --dry-run` and `install` (its dry run and its plan) ask by default
 * when Nix is on the host: every selected file is instantiated (`nix-instantiate`), built outputs are looked up
 * (`nix-store --check-validity`), and for the rest `nix-store --realise --dry-run DRV` says what would be built and
 * what fetched, against the configured substituters plus the matrix's team caches (team-cache.ts cacheNixOptions).
 * For each team cache, the same question with that cache as the only substituter says which paths it serves.
 *
 * When Nix is not on PATH, a file does not evaluate here (offline: the pinned nixpkgs cannot be fetched), or the
 * answer takes longer than the limit, the result says so and the cache model stands (`NixAnswer.asked` false, with
 * why). The answer is plan data (dry-run.ts `nixAnswer`), rendered as one line by dry-run-text.ts.
 *
 * At any scale: the files go to `nix-instantiate` and the paths to `nix-store` in chunks (store.ts PER_CALL), so no
 * argument list grows with the plan; every call runs under the one deadline and none starts after it. Past the
 * deadline the answer is Nix's for the variants it answered for and names how many it was not heard for
 * (`NixAnswer.late`): the model stands for those. A real build or install asks under a deadline too (evalLimit) and
 * ends there with what was waited for (NixDeadlineError).
 */
import { dryRealise, pastDeadline, askCached, storeName, until, type CachedAnswer, type DryRealise, type NixOptions } from "./store.ts";
import { runTool } from "../process.ts";
import { InputError } from "../errors.ts";
import { redactCredentials } from "../redact.ts";
import type { TeamCache } from "../matrix/team-cache.ts";
import { trustedStoreUrl } from "./cache-signatures.ts";

export { ASK_NIX_TIMEOUT_S } from "../constants.ts";

/**
 * Seconds a real build's (or install's) evaluation and questions to Nix before its first build may take when
 * `--ask-nix-timeout` is not given: the first evaluation of a pin downloads its nixpkgs (tens of MB), so the dry run's
 * 20 s would refuse good builds; a Nix that hangs (a silent substituter) still ends.
 */
export const EVAL_TIMEOUT_S = 600;

/**
 * The limit of a real build's questions to Nix before it builds, in seconds, and the words that name it: `given`
 * (`--ask-nix-timeout`) when above 0, else EVAL_TIMEOUT_S.
 */
export function evalLimit(given: number | undefined): { seconds: number; words: string } {
  return given !== undefined && given > 0
    ? { seconds: given, words: `--ask-nix-timeout ${given}` }
    : { seconds: EVAL_TIMEOUT_S, words: `the evaluation's limit of ${EVAL_TIMEOUT_S} s; --ask-nix-timeout sets it` };
}

/**
 * Nix was not heard by the deadline of a real build or install (exit 2, nothing built): `waited` says what was waited
 * for (process.ts CommandResult.stopped: "nix-instantiate ran past its limit of 2000 ms and was stopped with SIGTERM").
 */
export class NixDeadlineError extends InputError {
  override name = "NixDeadlineError";
  /**
   * @param waited what was waited for, one line
   * @param limit the limit's seconds and words (evalLimit)
   * @param what the command's words for what it did not do ("nothing was built")
   */
  constructor(waited: string, limit: { seconds: number; words: string }, what = "nothing was built") {
    super(
      `Nix did not answer within ${limit.seconds} s (${limit.words}): ${waited}; ${what}. ` +
        "A substituter or the network that does not answer, or a Nix daemon that is busy, holds Nix: ask it by hand " +
        "(nix-instantiate FILE) to see, or give a longer --ask-nix-timeout",
    );
  }
}

/** What one question to Nix gave, or why the model was used instead. */
export type NixAnswer =
  | {
      asked: true;
      /** Derivations Nix would build, across the selection, each once. */
      toBuild: number;
      /** Store paths Nix would fetch from a substituter, each once. */
      toFetch: number;
      /** Per team cache, how many of those paths it serves (its URL redacted: redact.ts). */
      fromCaches: { url: string; paths: number }[];
      /** Selected variants Nix answered for, of all selected (their checks not counted); the rest did not evaluate here. */
      answered: number;
      of: number;
      /** The selected variants' checks (targets with `check`) that did not evaluate here, and why the first did not; absent when none. */
      checksNotEvaluated?: { count: number; why: string };
      /** Substituters Nix could not reach (their paths count as to build). */
      unreachable: string[];
      /**
       * Paths Nix's dry run lists as to fetch that the team caches holding them hold without a signature this host
       * trusts (require-sigs): counted in `toBuild`, not `toFetch`, as Nix's real run builds them (store.ts
       * dryRealise). `where`: "unsigned in URL" (redacted) or another reason.
       */
      untrusted: { path: string; where: string }[];
      /** How long the answer took, in seconds. */
      seconds: number;
      /**
       * Selected variants Nix was not heard for by the deadline (`--ask-nix-timeout`): their calls were stopped at it
       * or not started after it, and the model stands for them; `why` says what was waited for. Absent when none.
       */
      late?: { variants: number; why: string };
    }
  | { asked: false; why: string };

/** What askNix gives the plan besides the answer: what is built already, and Nix's answer per variant. */
export interface AskedNix {
  answer: NixAnswer;
  /** Per name, whether its outputs are valid (store.ts askCached, instantiated); null when Nix was not asked. */
  cached: Map<string, CachedAnswer> | null;
  /** Per name not built yet, Nix's dry run; null when Nix was not asked. */
  store: Map<string, DryRealise | { error: string }> | null;
}

/** How askNix asks: where, with which options and caches, within how long, and what is known built already. */
export interface NixQuestion {
  /** Where instantiation's result links go (store.ts askCached). */
  outDir: string;
  /** `--option` pairs of this run, the team caches' included. */
  nixOptions: NixOptions;
  /** The team's caches, for the per-cache count. */
  caches: readonly TeamCache[];
  /** The time limit in seconds (0: do not ask). */
  timeoutS: number;
  /** What is built, when the caller already instantiated every target (a build, not a dry run). */
  answered?: Map<string, CachedAnswer>;
  /** The caller's deadline (epoch ms), when earlier than `timeoutS` from now: a build's one deadline. */
  deadline?: number;
}

/**
 * Ask Nix about `targets` within `q.timeoutS` seconds (see the module comment): every call runs under the one
 * deadline (store.ts until: stopped when it comes, none started after it, Node's timer limit respected), and no
 * argument list grows with the targets (store.ts chunks). Past the deadline the answer is Nix's for the variants it
 * answered for and says how many it was not heard for (`late`): the model stands for those.
 * @returns the answer, or `asked: false` with why (Nix missing, nothing evaluates here, nothing answered in time)
 */
export async function askNix(targets: readonly { name: string; file: string; check?: { of: string; kind: "static" | "gpuCheck" } }[], q: NixQuestion): Promise<AskedNix> {
  const { outDir, nixOptions, caches, timeoutS, answered } = q;
  const none = (why: string): AskedNix => ({ answer: { asked: false, why }, cached: null, store: null });
  if (timeoutS <= 0) return none("--ask-nix-timeout 0");
  if (targets.length === 0) return none("nothing is selected");
  const t0 = Date.now();
  const deadline = Math.min(t0 + timeoutS * 1000, q.deadline ?? Infinity);
  const limitWords = `within ${timeoutS} s (--ask-nix-timeout)`;
  const version = await runTool(["nix-store", "--version"], until(deadline));
  if (version.stopped) return none(`Nix did not answer ${limitWords}: ${version.stopped}`);
  if (version.code !== 0) return none(version.code === 127 ? "Nix is not on PATH (nix-store)" : `nix-store --version failed: ${version.stderr.trim().split("\n")[0] ?? ""}`);
  // One download attempt (Nix's default is 5, with back-off: about 5 s per unreachable URL): offline, the answer
  // "not here" comes at once and the model stands; the build itself keeps the user's setting.
  const quick: NixOptions = [...nixOptions, ["download-attempts", "1"]];
  const cached = answered ?? (await askCached(targets, outDir, quick, { deadline }));
  const lateAnswers = targets.filter((t) => cached.get(t.name)?.late !== undefined);
  const evaluated = targets.filter((t) => cached.get(t.name)?.drvPath);
  if (evaluated.length === 0)
    return lateAnswers.length
      ? none(`Nix did not answer ${limitWords}: ${cached.get(lateAnswers[0]!.name)!.late}`)
      : none(`no selected file evaluates here (${cached.get(targets[0]!.name)?.note ?? "nix-instantiate gave no derivation"})`);
  const open = evaluated.filter((t) => !cached.get(t.name)!.cached);
  const drvs = open.map((t) => cached.get(t.name)!.drvPath!);
  const replies = await dryRealise(drvs, quick, deadline, caches);
  const failed = replies.findIndex((r) => "error" in r && !r.late);
  if (failed >= 0) return none(`Nix could not answer for ${open[failed]!.name}: ${(replies[failed] as { error: string }).error}`);
  const store = new Map<string, DryRealise | { error: string }>();
  open.forEach((t, i) => {
    const r = replies[i]!;
    if (!("error" in r)) store.set(t.name, r);
  });
  const lateReplies = open.filter((t) => !store.has(t.name));
  const ok = [...store.values()].filter((r): r is DryRealise => !("error" in r));
  if (ok.length === 0 && open.length > 0) return none(`Nix did not answer ${limitWords}: ${(replies[0] as { error: string }).error}`);
  const toBuild = new Set(ok.flatMap((r) => r.toBuild));
  const toFetch = new Set(ok.flatMap((r) => r.toFetch));
  const answeredDrvs = open.filter((t) => store.has(t.name)).map((t) => cached.get(t.name)!.drvPath!);
  const fromCaches = pastDeadline(deadline) ? [] : await perCache(answeredDrvs, toFetch, quick, caches, deadline);
  const lateCount = lateAnswers.length + lateReplies.length;
  // The headline counts variants; a check that does not evaluate (a hand-written file without tests.static) is said apart.
  const isVariant = (t: (typeof targets)[number]) => t.check === undefined;
  const checksOut = targets.filter((t) => !isVariant(t) && !cached.get(t.name)?.drvPath && !cached.get(t.name)?.late);
  const checksNotEvaluated = checksOut.length ? { count: checksOut.length, why: cached.get(checksOut[0]!.name)?.note ?? "nix-instantiate gave no derivation" } : null;
  const lateWhy = lateAnswers.length ? cached.get(lateAnswers[0]!.name)!.late! : lateReplies.length ? (replies[open.indexOf(lateReplies[0]!)] as { error: string }).error : "";
  return {
    answer: {
      asked: true,
      toBuild: toBuild.size,
      toFetch: toFetch.size,
      fromCaches,
      answered: evaluated.filter(isVariant).length - lateReplies.filter(isVariant).length,
      of: targets.filter(isVariant).length,
      ...(checksNotEvaluated ? { checksNotEvaluated } : {}),
      unreachable: [...new Set(ok.flatMap((r) => r.unreachable))].map(redactCredentials),
      untrusted: [...new Map(ok.flatMap((r) => r.untrusted ?? []).map((u) => [u.path, { path: u.path, where: u.where }])).values()],
      seconds: (Date.now() - t0) / 1000,
      ...(lateCount ? { late: { variants: lateCount, why: lateWhy } } : {}),
    },
    // Only what Nix answered: a late answer says nothing of what is built (the result links' word stands).
    cached: new Map([...cached].filter(([, c]) => c.late === undefined)),
    store,
  };
}

/**
 * For each team cache, how many of `toFetch` it serves: the same dry run with that cache as the only substituter
 * (`--option substituters URL`, its key trusted). A Nix daemon ignores a substituter a user not in `trusted-users` passes
 * unless its URL is in the daemon's `trusted-substituters` (Nix manual, nix.conf `trusted-substituters`); such caches
 * then count 0 here (the total stays Nix's answer).
 */
async function perCache(drvs: readonly string[], toFetch: ReadonlySet<string>, nixOptions: NixOptions, caches: readonly TeamCache[], deadline: number) {
  const out: { url: string; paths: number }[] = [];
  if (toFetch.size === 0 || drvs.length === 0) return caches.map((c) => ({ url: redactCredentials(c.url), paths: 0 }));
  for (const c of caches) {
    const only: NixOptions = [...nixOptions, ["substituters", c.url], ["trusted-public-keys", c.publicKey]];
    const replies = await dryRealise(drvs, only, deadline);
    const served = new Set(replies.flatMap((r) => ("error" in r ? [] : r.toFetch)).filter((p) => toFetch.has(p)));
    out.push({ url: redactCredentials(c.url), paths: served.size });
  }
  return out;
}

/**
 * The answer as one line of the plan: "asked Nix (…): 0 to build, 1 to fetch from file:///…" or "modelled: …, Nix
 * not asked because …" (`model` says what the model counted). Paths a team cache holds without a trusted signature
 * are named after the count to build: "3 to build (3 unsigned in file:///…: a, b, c)".
 */
export function nixAnswerLine(a: NixAnswer, model: string): string {
  if (!a.asked) return `modelled: ${model}; Nix not asked because ${a.why}`;
  const cached = a.fromCaches.filter((c) => c.paths > 0);
  const rest = a.toFetch - cached.reduce((n, c) => n + c.paths, 0);
  const from = [...cached.map((c) => `${c.paths} from ${c.url}`), ...(rest > 0 ? [`${rest} from the host's substituters`] : [])];
  const where = a.toFetch === 0 || (a.late && a.fromCaches.length === 0) ? "" : cached.length === 1 && rest <= 0 ? ` from ${cached[0]!.url}` : ` (${from.join(", ")})`;
  const late = a.late ? `, ${a.late.variants} not answered by the limit (--ask-nix-timeout; ${a.late.why}): the model for those` : "";
  const evaluate = a.answered + (a.late?.variants ?? 0) < a.of ? `, ${a.answered} of ${a.of} variants evaluate here` : a.late ? `, answered for ${a.answered} of ${a.of} variants` : "";
  const checks = a.checksNotEvaluated ? `, the checks of ${a.checksNotEvaluated.count} do not evaluate here (${a.checksNotEvaluated.why})` : "";
  return (
    `asked Nix (nix-store --realise --dry-run, ${a.seconds.toFixed(1)} s${evaluate}${late}${checks}): ` +
    `${a.toBuild} to build${untrustedNote(a.untrusted ?? [])}, ${a.toFetch} to fetch${where}` +
    (a.unreachable.length ? `; unreachable: ${a.unreachable.join(", ")} (their paths count as to build)` : "") +
    trustedNote(a.fromCaches.map((c) => c.url))
  );
}

/**
 * "; ?trusted=1 in URL turns off Nix's signature checks for it: its paths are fetched signed or not" for each team
 * cache whose URL says `trusted=` true (Nix's store URL parameter: the store is trusted, require-sigs does not apply to
 * it; cache-signatures.ts trustedStoreUrl, "true", "yes" or "1"); "" for none.
 */
export function trustedNote(urls: readonly string[]): string {
  const trusted = urls.filter(trustedStoreUrl);
  if (!trusted.length) return "";
  return `; ?trusted=1 in ${trusted.join(", ")} turns off Nix's signature checks for ${trusted.length === 1 ? "it" : "them"}: ${trusted.length === 1 ? "its" : "their"} paths are fetched signed or not`;
}

/**
 * " (3 unsigned in file:///srv/cache: a, b, c)" for the paths a team cache holds without a trusted signature, grouped
 * by where and why, their store names (store.ts storeName), at most 4 per group; "" for none.
 */
function untrustedNote(untrusted: readonly { path: string; where: string }[]): string {
  if (untrusted.length === 0) return "";
  const groups = new Map<string, string[]>();
  for (const u of untrusted) groups.set(u.where, [...(groups.get(u.where) ?? []), storeName(u.path)]);
  const parts = [...groups].map(([where, names]) => `${names.length} ${where}: ${names.slice(0, 4).join(", ")}${names.length > 4 ? ` and ${names.length - 4} more` : ""}`);
  return ` (${parts.join("; ")}; Nix builds what it cannot verify)`;
}
