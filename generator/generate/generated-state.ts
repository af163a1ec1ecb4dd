/**
 * Whether the generated files a build reads still say what matrix.ts gives now. `build`, `eval` and `publish` plan
 * from the variants they expand from matrix.ts (and the catalog, and local-catalog.json), while `nix-build`,
 * `flox build` and nix-eval-jobs read `pkgs/variants.nix`, `release.nix` and the `.flox/pkgs` wrappers written by
 * the last `generate`. Where the two differ the plan would show one thing and the build build another, so these
 * commands stop first (exit 2) and name the fix. The comparison is by content (the same render `generate` writes),
 * so it holds whatever changed: the matrix, the local catalog, the generator, or a hand edit of a generated file.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { InputError } from "../errors.ts";
import { isGenerated } from "./write.ts";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import type { Project } from "../matrix/project.ts";
import { renderRelease, renderVariant, renderVariantsData } from "./render/index.ts";

/** Thrown when the generated files differ from what the matrix gives now (exit 2: run `npm run generate`). */
class StaleGeneratedError extends InputError {}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};

/**
 * The generated files under `root` that builds of `selected` read and that differ from what `p` renders now:
 * `pkgs/variants.nix`, `release.nix` and each selected variant's wrapper (`v.file`). Repo-relative, in that order.
 * A wrapper without the generated header is the user's own derivation (flox builds any `.flox/pkgs` file; tests put
 * stand-ins there) and is not compared; the shared data files are compared when they exist or a generated wrapper
 * needs them.
 * @param selected names of the variants about to be built or evaluated (default: all)
 */
function staleGenerated(p: Project, root: string, selected: readonly { name: string }[] = p.variants): string[] {
  const byName = new Map(p.variants.map((v) => [v.name, v]));
  const stale: string[] = [];
  let generatedWrapper = false;
  for (const s of selected) {
    const v = byName.get(s.name);
    if (!v) continue;
    const disk = readOrNull(join(root, v.file));
    if (disk === null || !isGenerated(disk)) continue;
    generatedWrapper = true;
    if (disk !== renderVariant(v)) stale.push(v.file);
  }
  const shared: string[] = [];
  for (const [rel, render] of [
    ["pkgs/variants.nix", () => renderVariantsData(p)],
    ["release.nix", () => renderRelease(p)],
  ] as const) {
    const disk = readOrNull(join(root, rel));
    if ((disk === null && generatedWrapper) || (disk !== null && isGenerated(disk) && disk !== render())) shared.push(rel);
  }
  return [...shared, ...stale];
}

/**
 * Stop when the generated files that `command` would hand to Nix differ from what the matrix gives now.
 * @param command the command's name as the user typed it ("build", "eval", "publish"), for the message
 * @throws StaleGeneratedError naming what changed since the last generate (the matrix, local-catalog.json, or
 *   else the generator or its catalog), up to five differing files, and the fix
 */
export function assertGeneratedCurrent(p: Project, root: string, command: string, selected?: readonly { name: string }[]): void {
  const stale = staleGenerated(p, root, selected);
  if (stale.length === 0) return;
  const data = mtime(join(root, "pkgs/variants.nix"));
  const shown = (f: string) => relative(process.cwd(), f) || f;
  const local = join(dirname(p.matrixFile), LOCAL_CATALOG_FILE);
  const why =
    data === 0
      ? "they were never generated here"
      : mtime(p.matrixFile) > data
        ? `${shown(p.matrixFile)} changed since the last generate`
        : mtime(local) > data
          ? `${shown(local)} changed since the last generate`
          : "the generator, its catalog or a generated file changed since the last generate";
  const files = stale.slice(0, 5).join(", ") + (stale.length > 5 ? ` and ${stale.length - 5} more` : "");
  throw new StaleGeneratedError(
    `the generated files do not say what ${shown(p.matrixFile)} gives now (${why}): ${files} ${stale.length === 1 ? "differs" : "differ"}, so \`${command}\` ` +
      `would hand Nix the parameters of the last generate, not the ones it shows. Run \`npm run generate\` first ` +
      `(\`npx variant-matrix generate\` outside npm); nothing was done.`,
  );
}
