/** The catalog's axes: every value it knows on each axis of a matrix. */
import type { Catalog } from "../schema.ts";

/**
 * The one widening helper: every value the catalog knows on each axis of a matrix, in catalog order
 * ({ python: ["3.10", …], cuda: ["12.6", …], gpus: ["70", …], isas: ["avx2", …] }). explain's widened matrix, fleet's
 * candidates and the tests' widest matrix all take their axes from here (each then keeps what it needs).
 */
export function catalogAxes(cat: Catalog): { python: string[]; cuda: string[]; gpus: string[]; isas: string[] } {
  return {
    python: cat.python.map((x) => x.version),
    cuda: cat.cuda.map((x) => x.version),
    gpus: cat.gpus.map((x) => x.sm),
    isas: cat.isas.map((x) => x.key),
  };
}
