/**
 * The options of `fleet` and its host ids: imported by the command (yargs) and by run.ts, which do
 * not import each other.
 */
import { basename, resolve } from "node:path";
import type { PackageName } from "../catalog/lib/packages.ts";

/** What fleet decides by (plan.ts planFleet): the choices of `fleet`'s options that shape the plan. */
export interface FleetArgs {
  /** PyTorch release (default: the matrix's first release). */
  torch?: string;
  /** Python version (default: the newest of the matrix's). */
  python?: string;
  /** CUDA versions to choose from (default: the matrix's). */
  cuda?: string[];
  /** The package every host needs (a package of the catalog's table, or a named environment `NAME-env`). */
  package: PackageName;
  /** Build machines for the makespan estimate (≥ 1). */
  builders: number;
  /** Logs directory of earlier builds whose report.json files fit the cost model (`--logs-dir`). */
  reports?: string;
}


/** Host id shown in the report: the file or directory name. */
export function hostId(path: string): string {
  return basename(resolve(path)).replace(/\.json$/, "");
}
