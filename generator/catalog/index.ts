/**
 * The catalog's two values, validated: `catalog`, every fact the generator knows, each with a `source`, every table
 * under one schema (`CatalogSchema`, generator/catalog/schema.ts), which a user's local-catalog.json extends
 * (catalog/local.ts); and `machines`, the facts of the machines and CI runners (MachineFactsSchema), which nothing
 * extends. Both are parsed here, when this module loads, from the values catalog/lib/built-in.ts (`builtInCatalog`)
 * and catalog/lib/machines.ts (`builtInMachines`) assemble from the rows. Code outside generator/catalog/ reads these
 * values (or a catalog/lib rule), never a table of a data module; where zod must not load (start-up, explain's and
 * detect's path from the project cache, the preflight checks) it reads the built-in values unparsed, which
 * tests/catalog-tables.test.ts holds equal to these.
 * @throws Error (zod) at import time when a catalog file breaks its schema.
 */
import { CatalogSchema, MachineFactsSchema, type Catalog, type MachineFacts, type OnTorchRelease } from "./schema.ts";
import { builtInCatalog } from "./lib/built-in.ts";
import { builtInMachines } from "./lib/machines.ts";
import { packageOnTorch, releaseOf, releaseServes } from "./lib/packages.ts";

/**
 * Checks the pairings of a parsed catalog, through the generic table of packages built on torch: every PyTorch
 * release names a torchaudio release of the table that serves it (`releaseServes`), and so does every pin.
 * @throws Error naming the release or pin and the torchaudio's served range.
 */
export function checkPairings(cat: Catalog): Catalog {
  const audio = packageOnTorch(cat, "torchaudio");
  const served = (ta: string, t: string, where: string) => {
    const rel: OnTorchRelease | undefined = releaseOf(audio, ta);
    if (!rel) throw new Error(`catalog: ${where} names torchaudio ${ta}, which is not a release of the torchaudio row of the package table (catalog/packages.ts)`);
    if (!releaseServes(rel, t))
      throw new Error(
        `catalog: ${where} pairs torchaudio ${ta} with torch ${t}, but torchaudio ${ta} serves torch >= ${rel.servesTorch.min}` +
          (rel.servesTorch.below ? ` and < ${rel.servesTorch.below}` : ""),
      );
  };
  for (const t of cat.torch) served(t.torchaudio, t.version, `PyTorch ${t.version}`);
  for (const p of cat.nixpkgs) served(p.torchaudio, p.torch, `nixpkgs ${p.rev.slice(0, 7)}`);
  return cat;
}

/** The built-in catalog: every table of generator/catalog/, parsed by CatalogSchema and its pairings checked. */
export const catalog: Catalog = checkPairings(CatalogSchema.parse(builtInCatalog));

/**
 * The catalog's second value: the machines and tools the project runs on and the CI runners its workflows are written
 * for (catalog/machines.ts, catalog/ci-runners.ts), parsed by MachineFactsSchema. No local-catalog.json extends it.
 */
export const machines: MachineFacts = MachineFactsSchema.parse(builtInMachines);
