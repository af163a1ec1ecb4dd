/**
 * `variant-matrix list`: the package variants (or the dropped combinations) of the matrix, as text or JSON.
 */
import type { CommandModule } from "yargs";
import { resolve } from "node:path";
import { checkFilterValues, FILTER_OPTION, matchFilters, parseFilters } from "../filters.ts";
import { REPO_ROOT } from "../paths.ts";
import { matrixOption, project, UsageError, variantJson, warnUntracked } from "./shared.ts";

export const listCommand: CommandModule<{}, { json: boolean; excluded: boolean; filter?: string[]; matrix?: string }> = {
  command: "list",
  describe: "list package variants (or, with --excluded, dropped combinations and their reasons)",
  builder: (y) =>
    y
      .option("json", { type: "boolean", default: false, describe: "print JSON (the list --json contract)" })
      .option("excluded", { type: "boolean", default: false, describe: "list dropped combinations with reasons" })
      .option("filter", FILTER_OPTION)
      .options(matrixOption),
  handler: async (argv) => {
    const filters = parseFilters(argv.filter);
    const p = await project(argv.matrix);
    if (argv.excluded) {
      const ex = p.excluded.filter((e) =>
        matchFilters({ ...e, package: e.package, system: p.catalog.isas.find((i) => i.key === e.isa)!.system }, filters),
      );
      if (argv.json) console.log(JSON.stringify(ex.map((e) => ({ name: e.name, reasons: e.reasons })), null, 2));
      else for (const e of ex) console.log(`${e.name}\n${e.reasons.map((r) => `  - ${r}`).join("\n")}`);
      return;
    }
    checkFilterValues(filters, p.variants);
    const vs = p.variants.filter((v) => matchFilters(v, filters));
    if (argv.json) console.log(JSON.stringify(vs.map(variantJson), null, 2));
    else {
      const w = Math.max(0, ...vs.map((v) => v.name.length));
      for (const v of vs)
        console.log(
          `${v.name.padEnd(w)}  ${v.system.padEnd(13)}  ${(v.cudaCapabilities.join(",") || "cpu").padEnd(5)}${v.binaryCompat ? " (binary-compatible)" : ""}`,
        );
      console.error(`${vs.length} of ${p.variants.length} package variants`);
    }
  },
};

