/**
 * Evaluate before building: `build` instantiates every selected variant (store.ts askCached, the drvPaths `eval`
 * also computes) before the first build starts, and a variant that does not evaluate stops the run with exit 2 before
 * anything is built.
 *
 * Why before: the build driver runs one `nix-build` per variant in dependency order, so an environment whose evaluation
 * fails (an extra its pin's Python set lacks) would fail only after its pytorch, torchaudio and torchvision had built
 * (hours). Evaluation takes seconds and needs nothing built.
 *
 * Why exit 2 (errors.ts EXIT.input, "an unmet precondition"), not 1 ("the work failed"): no build ran; what stops the
 * run is the input (matrix.ts asks for what the pin does not have, or the generated files disagree with Nix), like the
 * host checks that refuse a build before it starts (preflight PreflightError). `eval`, whose work is the evaluation,
 * exits 1 for the same error.
 *
 * Pure: works on the store's answers already given.
 */
import { closeCatalogExtras, didYouMean } from "../matrix/extra-hints.ts";
import type { Catalog } from "../catalog/schema.ts";
import { ERROR_PREFIX, InputError } from "../errors.ts";
import { builtInMachines } from "../catalog/lib/machines.ts";
import { wrap } from "../text.ts";
import { compareVersions } from "../versions.ts";
import type { CachedAnswer } from "./store.ts";
import type { BuildTarget } from "./targets.ts";

/** A selected variant that does not evaluate. */
export interface EvaluationFailure {
  /** Variant (or check) name. */
  name: string;
  /** The nixpkgs revision of its pin (40 hex digits), null when the target carries none. */
  nixpkgs: string | null;
  /** The attribute Nix names as missing or failing ("python313Packages.peftt", "peftt"), null when it names none. */
  attribute: string | null;
  /** Nix's error message, one line, without its leading "error: ". */
  message: string;
  /** For an environment's extra close to one the catalog knows: "did you mean peft?"; else null. */
  hint: string | null;
  /**
   * What the failure is about (failureCause): `network` (Nix could not download what the file fetches, e.g. the pinned
   * nixpkgs: nothing in the matrix is wrong), `file` (the user's own file, `--pkgs-dir`), or `matrix` (the generated
   * files: matrix.ts or its pin asks for what the pin does not have). Absent in older callers' data: `matrix`.
   */
  cause?: FailureCause;
}

/** What an evaluation failure is about (EvaluationFailure.cause). */
export type FailureCause = "network" | "file" | "matrix";

/**
 * Nix's words for a download that did not happen (libstore/filetransfer.cc: "unable to download 'URL': …" with curl's
 * reason, e.g. "Couldn't resolve host name (6)", "Timeout was reached (28)"; Nix ≥ 2.19's fetchers the same; a
 * network-less sandbox's "Could not resolve host"). A hash mismatch is not among them: the download worked and the
 * pin's hash is wrong (a matrix problem).
 */
const NETWORK = /unable to download '|Couldn't resolve host|Could not resolve host|Couldn't connect to server|Failed to connect|Timeout was reached|Connection refused|Network is unreachable|SSL connect error/i;

/**
 * The cause of one evaluation failure: `network` for Nix's download errors (NETWORK), else `file` when the variant's
 * file is the user's own (`--pkgs-dir`) and the error is not one the generated files throw, else `matrix`.
 * @param message Nix's message (one line)
 * @param ownFiles the targets' files come from `--pkgs-dir`
 */
export function failureCause(message: string, ownFiles: boolean): FailureCause {
  if (NETWORK.test(message)) return "network";
  // A --pkgs-dir file may import a generated wrapper: the generated files' own refusals ("… has no SET.ATTR",
  // pkgs/torch-env.nix and friends) are the matrix's, whoever's file imported them.
  return ownFiles && !/\bhas no [A-Za-z_]/.test(message) ? "file" : "matrix";
}

/** The fix printed after evaluation failures of each cause, in this order. */
const FIXES: Record<FailureCause, string> = {
  network:
    "Nix could not download what the files fetch (the pinned nixpkgs): nothing in matrix.ts is wrong; connect this machine to the network " +
    "(or give it a substituter or a proxy that serves it), then build again",
  file: "the failing files are your own (--pkgs-dir): fix them there (a variant's static check, built by default, reads the file's `tests` attribute: give it one, or build with --no-verify), then build again",
  matrix:
    "fix matrix.ts (or its pin), run `npm run generate`, then build again; `variant-matrix eval --filter …` evaluates a selection without building",
};

/**
 * The attribute a Nix error message names: the generated files' own `… has no SET.ATTR` (pkgs/torch-env.nix,
 * python-set.nix, nixpkgs.nix, overlay.nix), Nix's `attribute 'ATTR' missing`, or `undefined variable 'NAME'`.
 * @returns the attribute path as the message writes it, or null
 */
export function failingAttribute(message: string): string | null {
  const hasNo = /\bhas no ([A-Za-z_][\w'.-]*[\w'])/.exec(message);
  if (hasNo) return hasNo[1]!;
  const missing = /attribute '([^']+)' missing/.exec(message) ?? /undefined variable '([^']+)'/.exec(message);
  return missing ? missing[1]! : null;
}

/**
 * The selected targets that will be built and did not evaluate: instantiation failed (its answer has no drvPath and a
 * note) and the target is not already built (`cached`: a valid `result-NAME` link counts when Nix cannot evaluate
 * here, unless --force, which passes an empty map). Selection order.
 * @param targets the selection, as `build` plans it
 * @param answers store.ts askCached's answers (instantiated)
 * @param cached what the run treats as built (`answers`, or empty with --force)
 * @param ownFiles the targets' files are the user's own (`--pkgs-dir`): a failure that is no download's is theirs
 */
export function evaluationFailures(
  cat: Pick<Catalog, "extras">,
  targets: readonly Pick<BuildTarget, "name" | "nixpkgs" | "extras">[],
  answers: ReadonlyMap<string, CachedAnswer>,
  cached: ReadonlyMap<string, CachedAnswer>,
  ownFiles = false,
): EvaluationFailure[] {
  const out: EvaluationFailure[] = [];
  for (const t of targets) {
    const p = answers.get(t.name);
    if (!p || p.drvPath !== null || !p.note || cached.get(t.name)?.cached) continue;
    const message = p.note.replace(/^error:\s*/, "");
    const attribute = failingAttribute(message);
    // An extra of this environment that is a likely typo of a catalog extra, when Nix names it as what failed.
    const last = attribute?.split(".").at(-1);
    const typo = last !== undefined && t.extras?.includes(last) ? closeCatalogExtras(cat, last) : [];
    out.push({ name: t.name, nixpkgs: t.nixpkgs ?? null, attribute, message, hint: typo.length ? didYouMean(typo) : null, cause: failureCause(message, ownFiles) });
  }
  return out;
}

/**
 * The error `build` stops with: how many of the selected variants do not evaluate, then per failure (failures with the
 * same message, a shared cause such as a pin that cannot be fetched, are listed once with their names) the variant,
 * the pin, the attribute and Nix's message, then the fix of each cause present (failureCause: the network, the user's
 * own files, matrix.ts). At most 10 groups, then how many more.
 * @param selected how many targets were selected
 * @param width terminal columns the lines are wrapped to
 * @param dryRun say what a build would do (`build --dry-run --ask-store`) instead of what this one did
 */
export function evaluationFailureText(failures: readonly EvaluationFailure[], selected: number, width: number, dryRun = false): string {
  const groups = new Map<string, EvaluationFailure[]>();
  for (const f of failures) groups.set(f.message, [...(groups.get(f.message) ?? []), f]);
  const shown = [...groups.values()].slice(0, 10);
  const head = `${failures.length} of ${selected} selected variant(s) do not evaluate; ${dryRun ? "`build` would stop before building any" : "nothing was built (`build` evaluates every variant before it builds any)"}:`;
  // The first line follows the prefix it is printed after: "warning: " (dry run) or the CLI's error prefix.
  const lines = [wrap(head, width - (dryRun ? "warning: " : ERROR_PREFIX).length, { hang: "  " })];
  for (const g of shown) {
    const f = g[0]!;
    const names = g.length > 3 ? `${g.slice(0, 3).map((x) => x.name).join(", ")} and ${g.length - 3} more` : g.map((x) => x.name).join(", ");
    const pins = [...new Set(g.map((x) => x.nixpkgs ?? "no pin"))].join(", ");
    const where = `${names} (nixpkgs ${pins})${f.attribute !== null ? `, attribute ${f.attribute}` : ""}`;
    lines.push(wrap(`${where}: ${f.message}`, width, { indent: "  ", hang: "    " }));
    if (f.hint) lines.push(wrap(`${f.hint} (an extra the catalog knows; generator/catalog/extras.ts)`, width, { indent: "    ", hang: "      " }));
  }
  if (groups.size > shown.length) lines.push(`  … and ${groups.size - shown.length} more error(s)`);
  // One fix per cause present, each naming what to change: the network, the user's own files, or matrix.ts.
  const causes = new Set(failures.map((f) => f.cause ?? "matrix"));
  for (const c of ["network", "file", "matrix"] as const) if (causes.has(c)) lines.push(wrap(FIXES[c], width));
  return lines.join("\n");
}

/** Which evaluation failures stop the run (evaluationGate). */
interface EvaluationGate {
  /** The failures that stop the run (exit 2, nothing built). */
  stop: EvaluationFailure[];
  /** The failures this machine's nix-instantiate cannot judge for the backend: they are built, and fail there if they must. */
  pass: EvaluationFailure[];
  /** Why `pass` is not judged here, null when it is empty. */
  why: string | null;
}

/**
 * Which failures stop the run. With the nix backend nix-build evaluates with this very Nix and the same file: all of
 * them. flox evaluates with its own Nix and calls each file with callPackage, so for the flox backend a missing
 * nix-instantiate, or one older than the catalog's pins need (catalog/machines.ts NIX_MIN, when a generated file is built), judges
 * nothing, and a file whose arguments only callPackage fills ("cannot auto-call a function …") is not judged either.
 * @param nixVersion this PATH's Nix version ("2.8.0"), null when there is no nix-instantiate; asked only for flox
 */
export function evaluationGate(
  backend: "flox" | "nix",
  pinnedNixpkgs: boolean,
  nixVersion: () => string | null,
  failures: readonly EvaluationFailure[],
): EvaluationGate {
  if (backend !== "flox" || failures.length === 0) return { stop: [...failures], pass: [], why: null };
  const have = nixVersion();
  if (have === null) return { stop: [], pass: [...failures], why: "flox evaluates with its own Nix and this PATH has no nix-instantiate" };
  if (pinnedNixpkgs && compareVersions(have, builtInMachines.nixMin.version) < 0)
    return { stop: [], pass: [...failures], why: `flox evaluates with its own Nix and this PATH's Nix ${have} is older than the ${builtInMachines.nixMin.version} the pins need` };
  const autoCall = (f: EvaluationFailure) => /cannot auto-call a function that has an argument without a default value/.test(f.message);
  const pass = failures.filter(autoCall);
  return {
    stop: failures.filter((f) => !autoCall(f)),
    pass,
    why: pass.length ? "flox calls each .flox/pkgs file with callPackage, which fills arguments nix-instantiate cannot" : null,
  };
}

/** `build` refused to start: a selected variant does not evaluate (exit 2, EXIT.input; the module comment says why). */
export class EvaluationError extends InputError {
  override name = "EvaluationError";
  /**
   * @param failures what did not evaluate (non-empty)
   * @param selected how many targets were selected
   * @param width terminal columns for the message
   */
  constructor(
    readonly failures: readonly EvaluationFailure[],
    selected: number,
    width: number,
  ) {
    super(evaluationFailureText(failures, selected, width));
  }
}
