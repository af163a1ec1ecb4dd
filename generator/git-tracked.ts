/**
 * Which generated files git does not track: `flox build` evaluates a store copy of the tracked files only, so a
 * generated file left untracked is one flox does not see (`generate` warns about them).
 */

/**
 * The files among `files` (paths relative to `root`) under .flox/ or pkgs/ that git does not track in `root`
 * (`git ls-files -z -- .flox pkgs`).
 * @returns those files in the order given; null when `root` is not a git checkout or git cannot be run
 */
export async function untrackedGenerated(root: string, files: readonly string[]): Promise<string[] | null> {
  // node:child_process rather than zx here, on purpose: `generate` runs on every edit of matrix.ts and loading zx
  // costs about 15 ms of its start-up for one short, argument-array git call (bench/cli.ts).
  const { execFile } = await import("node:child_process");
  const out = await new Promise<string | null>((res) =>
    execFile("git", ["ls-files", "-z", "--", ".flox", "pkgs"], { cwd: root, maxBuffer: 64 << 20 }, (err, stdout) => res(err ? null : stdout)),
  );
  if (out === null) return null;
  const tracked = new Set(out.split("\0").filter(Boolean));
  return files.filter((f) => (f.startsWith(".flox/") || f.startsWith("pkgs/")) && !tracked.has(f));
}
