/**
 * What a matrix yields, judged before anything is written (pure): a matrix whose every combination is dropped, and
 * the packages it asks for that get no variant. `generate` refuses the first (exit 2, nothing written) and names
 * the second in its summary; the reasons are expand.ts's own (Excluded.reasons).
 */
import type { Excluded, Matrix, Variant } from "./schema.ts";

/** A requested package that yields no variant, with the first reason of its first dropped combination. */
interface PackageWithoutVariant {
  package: string;
  /** Why, in words: expand's reason, or that no combination of the matrix includes it. */
  reason: string;
  /** How many of its combinations were dropped. */
  dropped: number;
}

/**
 * The packages of `matrix.packages` with no variant among `variants`, in the matrix's order, each with the first
 * reason expand gave for its first dropped combination.
 */
export function packagesWithoutVariant(matrix: Pick<Matrix, "packages">, variants: readonly Variant[], excluded: readonly Excluded[]): PackageWithoutVariant[] {
  const built = new Set(variants.map((v) => v.package));
  return matrix.packages
    .filter((p) => !built.has(p))
    .map((p) => {
      const ex = excluded.filter((e) => e.package === p);
      return { package: p, dropped: ex.length, reason: ex[0]?.reasons[0] ?? "no combination of the matrix includes it" };
    });
}

/**
 * The message for a matrix that yields no package variant: how many combinations were dropped and the reasons
 * that dropped them, most frequent first (at most `max`, each with its count), or null when some variant exists.
 */
export function noVariantMessage(variants: readonly Variant[], excluded: readonly Excluded[], matrixFile: string, max = 3): string | null {
  if (variants.length) return null;
  if (!excluded.length)
    return `${matrixFile} yields no package variant and no combination at all (an axis is empty?); nothing was written`;
  const count = new Map<string, number>();
  for (const e of excluded) for (const r of new Set(e.reasons)) count.set(r, (count.get(r) ?? 0) + 1);
  const top = [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const lines = top.slice(0, max).map(([r, n]) => `  - ${r} (drops ${n} of ${excluded.length})`);
  const more = top.length > max ? `\n  … and ${top.length - max} more reason(s): \`variant-matrix list --excluded\` lists them all` : "";
  return (
    `${matrixFile} yields no package variant: all ${excluded.length} of its combinations are dropped, so nothing was written. ` +
    `What dropped them:\n${lines.join("\n")}${more}`
  );
}

/** Dropped combinations that share their packages and reasons: one group of `list --excluded`. */
interface ExcludedGroup {
  /** Combination names without package ("python313-cuda12_8-sm110-avx2"; with the release tag when names carry one). */
  combinations: string[];
  /** The packages dropped at each of them, in the matrix's order. */
  packages: string[];
  /** Indices into `reasons` of groupExcluded's answer. */
  reasons: number[];
}

/**
 * `list --excluded` grouped (pure): each dropped combination once with the packages it drops, combinations that
 * drop the same packages for the same reasons together, and each distinct reason once (groups cite it by index).
 * Order: first appearance in `excluded` (expand's order).
 */
export function groupExcluded(excluded: readonly Excluded[]): { reasons: string[]; groups: ExcludedGroup[] } {
  const reasons: string[] = [];
  const idx = (r: string) => {
    const i = reasons.indexOf(r);
    if (i >= 0) return i;
    reasons.push(r);
    return reasons.length - 1;
  };
  // Per combination (and reason set): the packages dropped there.
  const byCombo = new Map<string, { combination: string; packages: string[]; reasons: number[] }>();
  for (const e of excluded) {
    const combination = e.name.slice(e.name.indexOf("-python") + 1);
    const tag = /^(?:[a-z-]*?[a-z])(\d*)-python/.exec(e.name)?.[1] ?? "";
    const rs = e.reasons.map(idx);
    const key = `${tag}|${combination}|${rs.join(",")}`;
    const c = byCombo.get(key) ?? { combination: tag ? `${combination} (release ${tag})` : combination, packages: [], reasons: rs };
    if (!c.packages.includes(e.package)) c.packages.push(e.package);
    byCombo.set(key, c);
  }
  const groups = new Map<string, ExcludedGroup>();
  for (const c of byCombo.values()) {
    const key = `${c.packages.join(",")}|${c.reasons.join(",")}`;
    const g = groups.get(key) ?? { combinations: [], packages: c.packages, reasons: c.reasons };
    g.combinations.push(c.combination);
    groups.set(key, g);
  }
  return { reasons, groups: [...groups.values()] };
}

/**
 * Generated variant files that were renamed rather than dropped (pure): a removed `.flox/pkgs/NAME.nix` whose name,
 * with a release tag added to its package, is among the written files. That happens when a matrix goes from one
 * PyTorch release to several, so every name gains its release ("pytorch-…" becomes "pytorch212-…").
 * @returns [old, new] file pairs
 */
export function renamedFiles(removed: readonly string[], written: readonly string[]): [string, string][] {
  const byUntagged = new Map<string, string>();
  for (const w of written) {
    const m = /^(\.flox\/pkgs\/[a-z-]*?[a-z])(\d+)(-python.*)$/.exec(w);
    if (m) byUntagged.set(m[1]! + m[3]!, w);
  }
  return removed.flatMap((r) => (byUntagged.has(r) ? [[r, byUntagged.get(r)!] as [string, string]] : []));
}
