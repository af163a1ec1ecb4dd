/**
 * Whether the generated files a build reads still say what matrix.ts gives now. `build`, `eval` and `publish` plan
 * from the variants they expand from matrix.ts (and the catalog, and local-catalog.json), while `nix-build`,
 * `flox build` and nix-eval-jobs read `pkgs/variants.nix`, `release.nix` and the `.flox/pkgs` wrappers written by
 * the last `generate`. Where the two differ the plan would show one thing and the build build another, so these
 * commands stop first (exit 2) and name the fix. The answer is the one comparison `generate --check` gives
 * (freshness.ts compareGenerated: by content, the stamp in front of a render), for the files this selection reads;
 * the refusal says why they differ (an input changed since the last generate, or a generated file was edited).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { InputError } from "../errors.ts";
import type { Project } from "../matrix/project.ts";
import { renderRelease, renderVariant, renderVariantsData, type FileMap } from "./render/index.ts";
import { GENERATED_MARK } from "../nix-literals.ts";
import { compareGenerated, expectedFromRender, expectedFromStamp, freshnessReason, isGenerated, lastGenerate, type Freshness } from "./freshness.ts";

/** Thrown when the generated files differ from what the matrix gives now (exit 2: run `npm run generate`). */
export class StaleGeneratedError extends InputError {
  constructor(
    message: string,
    /** The comparison's answer: which files differ and why (freshness.ts Freshness). */
    readonly freshness: Freshness,
  ) {
    super(message);
  }
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The shared data files every wrapper reads, with their renders. */
const SHARED: readonly (readonly [string, (p: Project) => string])[] = [
  ["pkgs/variants.nix", renderVariantsData],
  ["release.nix", renderRelease],
];

/**
 * The generated files under `root` that builds of `selected` read, repo-relative: `pkgs/variants.nix`, `release.nix`
 * and each selected variant's wrapper (`v.file`). A wrapper that is missing or lacks the generated header is the
 * user's own derivation (flox builds any `.flox/pkgs` file; tests put stand-ins there) and is not compared; the shared
 * data files are compared when they carry the header, or are missing while a generated wrapper needs them.
 */
function filesRead(p: Project, root: string, selected: readonly { name: string }[]): string[] {
  const byName = new Map(p.variants.map((v) => [v.name, v]));
  const wrappers: string[] = [];
  for (const s of selected) {
    const v = byName.get(s.name);
    const disk = v ? readOrNull(join(root, v.file)) : null;
    if (v && disk !== null && isGenerated(disk)) wrappers.push(v.file);
  }
  const shared = SHARED.map(([rel]) => rel).filter((rel) => {
    const disk = readOrNull(join(root, rel));
    return disk === null ? wrappers.length > 0 : isGenerated(disk);
  });
  return [...shared, ...wrappers];
}

/**
 * The wrappers of `selected` under `root` that are there but lack the generated header (freshness.ts isGenerated):
 * not written by `generate`, so never compared with what the matrix gives (filesRead) and built as they are. The
 * user's own derivation under a variant's name, or a generated one edited past its header. Repo-relative, in order.
 */
export function handWrittenWrappers(p: Project, root: string, selected: readonly { name: string }[]): string[] {
  const byName = new Map(p.variants.map((v) => [v.name, v]));
  return selected.flatMap((s) => {
    const v = byName.get(s.name);
    const disk = v ? readOrNull(join(root, v.file)) : null;
    return v && disk !== null && !isGenerated(disk) ? [v.file] : [];
  });
}

/**
 * The warning `build` gives for handWrittenWrappers' files (null when there are none): what builds is each file as it
 * is, not what the matrix gives for its variant, and how to have either.
 */
export function handWrittenWarning(files: readonly string[]): string | null {
  if (!files.length) return null;
  const shown = files.slice(0, 5).join(", ") + (files.length > 5 ? ` and ${files.length - 5} more` : "");
  const one = files.length === 1;
  return (
    `${shown} ${one ? "has" : "have"} no generated header (\`# ${GENERATED_MARK}\`): not written by \`npm run generate\`, so ` +
    `${one ? "it is" : "they are"} built as ${one ? "it is" : "they are"}, not as the matrix gives ${one ? "its variant" : "their variants"}. ` +
    "`npm run generate` replaces them; keep a derivation of your own in a directory of its own and give it with --pkgs-dir"
  );
}

/**
 * The one comparison (freshness.ts) for the files builds of `selected` read (see filesRead): by the stamp of the last
 * generate when it was taken of the same inputs, else against a render of just those files.
 * @param selected names of the variants about to be built or evaluated (default: all)
 */
export function selectionFreshness(p: Project, root: string, selected: readonly { name: string }[] = p.variants): Freshness {
  const rels = filesRead(p, root, selected);
  const last = lastGenerate(root, p.matrixFile);
  const cached = expectedFromStamp(last, rels);
  if (cached) return compareGenerated(root, cached, last);
  const byFile = new Map(p.variants.map((v) => [v.file, v]));
  const render = (rel: string) => SHARED.find(([r]) => r === rel)?.[1](p) ?? renderVariant(byFile.get(rel)!);
  const files: FileMap = new Map(rels.map((rel) => [rel, render(rel)]));
  return compareGenerated(root, expectedFromRender(files, rels), last);
}

/**
 * Stop when the generated files that `command` would hand to Nix differ from what the matrix gives now.
 * @param command the command's name as the user typed it ("build", "eval", "publish"), for the message
 * @throws StaleGeneratedError naming why they differ (freshness.ts freshnessReason: the matrix, local-catalog.json or
 *   the generator changed since the last generate; a generated file edited by hand), up to five differing files, and
 *   the fix; its `freshness` holds the comparison's answer
 */
export function assertGeneratedCurrent(p: Project, root: string, command: string, selected?: readonly { name: string }[]): void {
  const f = selectionFreshness(p, root, selected);
  if (f.current) return;
  const stale = f.differences.map((d) => d.file);
  const shown = relative(process.cwd(), p.matrixFile) || p.matrixFile;
  const files = stale.slice(0, 5).join(", ") + (stale.length > 5 ? ` and ${stale.length - 5} more` : "");
  throw new StaleGeneratedError(
    `the generated files do not say what ${shown} gives now (${freshnessReason(f, p.matrixFile)}): ${files} ${stale.length === 1 ? "differs" : "differ"}, so \`${command}\` ` +
      `would hand Nix the parameters of the last generate, not the ones it shows. Run \`npm run generate\` first ` +
      `(\`npx variant-matrix generate\` outside npm); nothing was done.`,
    f,
  );
}

/**
 * Stop `command` (detect, install) before it names or builds variants whose generated files do not say what the
 * matrix gives now: the comparison `build` stops on (assertGeneratedCurrent, so that a change of that comparison
 * reaches every command), plus a named variant's file that is missing where the project was
 * generated (a variant the matrix gained since the last generate).
 * @param root where the generated files are (`pkgs/variants.nix`, `.flox/pkgs`); a directory without
 *   `pkgs/variants.nix` was never generated and holds nothing to compare
 * @param names the variants the command names or builds
 * @throws InputError (exit 2) naming what differs and the fix (`npm run generate`)
 */
export function assertGeneratedFor(p: Project, root: string, command: string, names: readonly string[]): void {
  assertGeneratedCurrent(p, root, command, names.map((name) => ({ name })));
  if (!existsSync(join(root, "pkgs/variants.nix"))) return;
  const missing = p.variants.filter((v) => names.includes(v.name) && !existsSync(join(root, v.file))).map((v) => v.file);
  if (missing.length)
    throw new InputError(
      `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing: ${relative(process.cwd(), p.matrixFile) || p.matrixFile} has ` +
        `${missing.length === 1 ? "a variant" : "variants"} the last generate did not write, so \`${command}\` would name a file that is not there. ` +
        "Run `npm run generate` first (`npx variant-matrix generate` outside npm); nothing was done.",
    );
}
