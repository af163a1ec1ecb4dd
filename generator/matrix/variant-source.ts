/**
 * Where a command gets the generated variants (detect, verify); tests hand in their own source instead of the
 * real matrix. A module of its own so commands share it without importing each other.
 */
import type { Excluded, Variant } from "./schema.ts";
import type { Catalog } from "../catalog/schema.ts";
import type { TeamCache } from "./team-cache.ts";
import type { Project } from "./project.ts";

/**
 * Where detect gets the generated matrix (and the team's caches, matrix.ts `caches`); tests replace it to avoid
 * depending on the real matrix. `project`: the loaded project when the variants come from a matrix file (the real
 * source), so a command can compare the generated files with it; a test's own variants have none.
 */
export type VariantSource = (
  matrixFile?: string,
) => Promise<{ catalog: Catalog; variants: Variant[]; excluded?: Excluded[]; caches?: TeamCache[]; project?: Project }>;

/** Default variant source: `loadProject()` of generator/matrix/project.ts (imported lazily so parse errors stay cheap). */
export const loadVariants: VariantSource = async (matrixFile) => {
  const { loadProject } = await import("./project.ts");
  const p = await loadProject(matrixFile ? { matrixFile } : {});
  return { catalog: p.catalog, variants: p.variants, excluded: p.excluded, caches: p.matrix.caches, project: p };
};

