/**
 * "Did you mean peft?" for a named environment's extras (matrix.ts `environments`), pure.
 *
 * An extra is any attribute of the pin's Python set, so an attribute the catalog does not know (EXTRAS of
 * catalog/extras.ts) is not an error: nixpkgs carries thousands. But one within a small edit distance of an extra the
 * catalog knows is most likely a typo of it, and a typo is found only when Nix evaluates the environment (the pin's
 * Python set lacks the attribute), so `generate`, `explain` and `build` say it as soon as they read the matrix.
 *
 * Kept apart from catalog/extras.ts so the checker bundle (pkgs/verify-compare.mjs, which imports extras.ts) does not
 * carry the suggestion code.
 */
import { closestValues } from "./suggest.ts";
import type { Catalog } from "../catalog/schema.ts";

/** An extra of a named environment that the catalog does not know, close to extras it does. */
interface ExtraHint {
  /** The environment's name in matrix.ts ("llm"). */
  environment: string;
  /** The extra as written ("peftt"). */
  extra: string;
  /** The catalog's extras closest to it, nearest first (["peft"]); never empty. */
  closest: string[];
}

/**
 * The catalog extras (`cat.extras` attributes) close to `attr` by edit distance (suggest.ts closestValues: within half the
 * longer name), nearest first, at most 3; [] when `attr` is itself a catalog extra or nothing is close.
 */
export function closeCatalogExtras(cat: Pick<Catalog, "extras">, attr: string): string[] {
  const known = cat.extras.map((e) => e.attr);
  if (known.includes(attr)) return [];
  return closestValues(attr, known);
}

/**
 * The hints for every environment of a matrix: one per extra the catalog does not know but that is close to one it
 * does, in the matrix's order.
 * @param environments matrix.ts `environments` (environment name → extras)
 */
export function extraHints(cat: Pick<Catalog, "extras">, environments: Readonly<Record<string, readonly string[]>>): ExtraHint[] {
  const out: ExtraHint[] = [];
  for (const [environment, extras] of Object.entries(environments))
    for (const extra of extras) {
      const closest = closeCatalogExtras(cat, extra);
      if (closest.length) out.push({ environment, extra, closest });
    }
  return out;
}

/** "did you mean peft?" / "did you mean peft or einops?" for a non-empty list of names. */
export function didYouMean(closest: readonly string[]): string {
  const names = closest.length > 1 ? `${closest.slice(0, -1).join(", ")} or ${closest.at(-1)}` : (closest[0] ?? "");
  return `did you mean ${names}?`;
}

/**
 * One sentence for a hint, as `generate` prints it after `warning: `: the environment, the extra, the catalog's close
 * extras and what the typo would cost (the environment's evaluation stops on an attribute its pin lacks).
 */
export function extraHintText(h: ExtraHint): string {
  return (
    `environments.${h.environment}: "${h.extra}" is not an extra the catalog knows (generator/catalog/extras.ts); ` +
    `${didYouMean(h.closest)} An attribute the pin's Python set lacks stops the evaluation of every ${h.environment}-env ` +
    `variant (\`build\` evaluates every variant before it builds any).`
  );
}
