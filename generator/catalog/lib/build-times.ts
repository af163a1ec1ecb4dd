/**
 * The rules over the catalog's build times (`Catalog.buildSeconds`, catalog/binary-cache.ts BUILD_SECONDS; each
 * package's `buildSeconds`, catalog/packages.ts): what the build plan's model (generator/model/plan.ts) and the fleet
 * cost model take for a package when no earlier report knows it. local-catalog.json extends neither (it adds
 * releases, not packages), so the model reads the built-in catalog's (catalog/lib/built-in.ts `builtInCatalog`: it
 * runs where zod is not loaded, such as detect's wait from the project cache).
 */
import type { Catalog } from "../schema.ts";
import { ENV_PACKAGE, TORCH_PACKAGE } from "./packages.ts";

/** What the build-time rules read of a catalog. */
export type BuildTimes = Pick<Catalog, "buildSeconds" | "packagesOnTorch">;

/** A duration in seconds with where it comes from. */
export interface SourcedSeconds {
  seconds: number;
  source: string;
}

/**
 * The default build time of each package the catalog names, by package: torch's CUDA figure for `pytorch` (one
 * capability, at its cores), each package built on torch its row's `buildSeconds`, the environment's for `torch-env`.
 */
export function defaultBuildTable(cat: BuildTimes): Record<string, SourcedSeconds> {
  const { torchCuda, environment } = cat.buildSeconds;
  return {
    [TORCH_PACKAGE]: { seconds: torchCuda.seconds, source: torchCuda.source },
    ...Object.fromEntries(cat.packagesOnTorch.map((p) => [p.name, p.buildSeconds])),
    [ENV_PACKAGE]: environment,
  };
}
