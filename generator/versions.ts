/**
 * Compare dotted numeric versions component by component ("570.26" < "570.124.06", "12.8" < "12.10"; missing
 * components count as 0). Used for CUDA, Python and driver versions alike.
 * @returns negative when a < b, 0 when equal, positive when a > b.
 * @throws Error when either is not dotted digits.
 */
export function compareVersions(a: string, b: string): number {
  const re = /^\d+(\.\d+)*$/;
  if (!re.test(a) || !re.test(b)) throw new Error(`compareVersions: not a dotted numeric version: "${a}" / "${b}"`);
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
