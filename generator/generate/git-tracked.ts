/**
 * Which generated files git does not track: `flox build` evaluates a store copy of the tracked files only, so a
 * generated file left untracked is one flox does not see (`generate` warns about them).
 */
import { runCommand } from "../process.ts";

/**
 * The files among `files` (paths relative to `root`) under .flox/ or pkgs/ that git does not track in `root`
 * (`git ls-files -z -- .flox pkgs`).
 * @returns those files in the order given; null when `root` is not a git checkout or git cannot be run
 */
export async function untrackedGenerated(root: string, files: readonly string[]): Promise<string[] | null> {
  // process.ts stands on node builtins only, so `generate` (run on every edit of matrix.ts) loads nothing more for this
  // one short git call; zx cost it about 15 ms of start-up (bench/cli.ts).
  const r = await runCommand(["git", "ls-files", "-z", "--", ".flox", "pkgs"], { cwd: root }).catch(() => null);
  if (r === null || r.code !== 0 || r.stopped !== null) return null;
  const tracked = new Set(r.stdout.split("\0").filter(Boolean));
  return files.filter((f) => (f.startsWith(".flox/") || f.startsWith("pkgs/")) && !tracked.has(f));
}
