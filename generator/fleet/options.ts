/**
 * The options of `fleet`, its usage error and host ids: imported by the command (yargs) and by run.ts, which do
 * not import each other.
 */
import { basename, resolve } from "node:path";
import type { PackageName } from "../constants.ts";
import { InputError } from "../errors.ts";

/** Bad input for fleet (exit 2). */
export class FleetUsageError extends InputError {}

export interface FleetArgs {
  hosts: string[];
  torch?: string;
  python?: string;
  cuda?: string[];
  package: PackageName;
  builders: number;
  reports?: string;
  json: boolean;
  /** Say why each extra build is needed and the cost model's sources. */
  verbose?: boolean;
  writeMatrix?: string;
  /** Directory to write one flox manifest per group of hosts sharing a variant (needs org). */
  writeManifest?: string;
  /** Flox organisation the variants are published to (`publish --org`). */
  org?: string;
  matrix?: string;
}


/** Host id shown in the report: the file or directory name. */
export function hostId(path: string): string {
  return basename(resolve(path)).replace(/\.json$/, "");
}
