/**
 * Dotted version strings (CUDA "12.8", Python "3.13", PyTorch "2.9.1", drivers "570.124.06"), pure: one comparison
 * and one major.minor for all of generator/.
 */

const DOTTED = /^\d+(\.\d+)*$/;

/** True when `v` is dotted digits ("12", "3.13", "570.124.06"): what compareVersions accepts. */
export function isDottedVersion(v: string): boolean {
  return DOTTED.test(v);
}

/**
 * Compare dotted numeric versions component by component ("570.26" < "570.124.06", "12.8" < "12.10"; missing
 * components count as 0). Used for CUDA, Python and driver versions alike.
 * @returns negative when a < b, 0 when equal, positive when a > b.
 * @throws Error when either is not dotted digits.
 */
export function compareVersions(a: string, b: string): number {
  if (!isDottedVersion(a) || !isDottedVersion(b)) throw new Error(`compareVersions: not a dotted numeric version: "${a}" / "${b}"`);
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The major.minor of a version: its first two dot-separated parts ("2.9.1" → "2.9", "3.13.5" → "3.13", "12.8" →
 * "12.8", "12" → "12"). Any string is taken as it is (a local suffix stays on the part it follows: "2.9+cu128" →
 * "2.9+cu128"); never throws.
 */
export function majorMinor(version: string): string {
  return version.split(".").slice(0, 2).join(".");
}
