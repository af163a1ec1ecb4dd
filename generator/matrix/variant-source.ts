/**
 * Where a command gets the generated variants (detect, verify); tests hand in their own source instead of the
 * real matrix. A module of its own so commands share it without importing each other.
 */
import type { Excluded, Variant } from "./schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { TeamCache } from "./team-cache.ts";

/** Where detect gets the generated matrix (and the team's caches, matrix.ts `caches`); tests replace it to avoid depending on the real matrix. */
export type VariantSource = (matrixFile?: string) => Promise<{ catalog: Catalog; variants: Variant[]; excluded?: Excluded[]; caches?: TeamCache[] }>;

/** Default variant source: `loadProject()` of generator/matrix/project.ts (imported lazily so parse errors stay cheap). */
export const loadVariants: VariantSource = async (matrixFile) => {
  const { loadProject } = await import("./project.ts");
  const p = await loadProject(matrixFile ? { matrixFile } : {});
  return { catalog: p.catalog, variants: p.variants, excluded: p.excluded, caches: p.matrix.caches };
};

