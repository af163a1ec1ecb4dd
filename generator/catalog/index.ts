/**
 * The catalog: every fact the generator knows, each with a `source`. Validated by `CatalogSchema` at load.
 * @throws Error (zod) at import time when a catalog file breaks its schema.
 */
import { CatalogSchema, type Catalog } from "../schema.ts";
import { gpus } from "./gpus.ts";
import { cuda } from "./cuda.ts";
import { isas } from "./cpu-isas.ts";
import { python } from "./python.ts";
import { torch, nixpkgs } from "./torch.ts";

export const catalog: Catalog = CatalogSchema.parse({ gpus, cuda, isas, python, torch, nixpkgs });
