/**
 * `variant-matrix list`: the package variants (or the dropped combinations) of the matrix, as text or JSON.
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { listedExcluded, listedVariants } from "../matrix/filters.ts";
import { printer, project, runOf, terminalWidth, variantJson } from "./shared.ts";
import { matrixOption, outputOptions, selectionOptions, type OptionTypes } from "./options.ts";
import { wrap } from "../text.ts";
import { groupExcluded } from "../matrix/matrix-yield.ts";
import type { Excluded } from "../matrix/schema.ts";

/** The options of `list` (yargs), the shared groups defined once in options.ts. */
const listOptions = {
  json: { ...outputOptions.json, describe: "print JSON (the list --json contract)" },
  excluded: { type: "boolean", default: false, describe: "list dropped combinations with reasons, grouped by combination, each reason once" },
  verbose: { type: "boolean", default: false, describe: "with --excluded: every dropped package variant by name with all its reasons" },
  ...selectionOptions,
  ...matrixOption,
} as const;

/** The yargs command module `list`; generator/cli.ts registers it. */
export const listCommand: CommandModule<object, OptionTypes<typeof listOptions>> = {
  command: "list",
  describe: "list package variants (or, with --excluded, dropped combinations and their reasons)",
  builder: (y: Argv<object>) => y.options(listOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof listOptions>>) => {
    const { io } = runOf(argv);
    const print = printer(io);
    const w = terminalWidth(io);
    const p = await project(argv.matrix);
    if (argv.excluded) {
      const ex = listedExcluded(p.excluded, argv.filter, p.catalog.isas);
      if (argv.json) print.out(JSON.stringify(ex.map((e) => ({ name: e.name, reasons: e.reasons })), null, 2));
      else if (argv.verbose)
        for (const e of ex) print.out(`${e.name}\n${e.reasons.map((r) => wrap(r, w, { indent: "  - ", hang: "    " })).join("\n")}`);
      else print.out(formatExcluded(ex, w));
      print.err(`${ex.length} dropped package variant(s)${argv.verbose || argv.json ? "" : " (--verbose: one name per line)"}`);
      return;
    }
    const vs = listedVariants(p.variants, argv.filter);
    if (argv.json) print.out(JSON.stringify(vs.map(variantJson), null, 2));
    else {
      // reduce, not Math.max(...names): a spread of every name overflows the stack past about 100,000 variants.
      const nw = vs.reduce((most, v) => Math.max(most, v.name.length), 0);
      // One row per variant: name, system, the capabilities nvcc compiles; "*" marks binary-compatible code.
      for (const v of vs) print.out(`${v.name.padEnd(nw)}  ${v.system.padEnd(13)}  ${v.cudaCapabilities.join(",") || "cpu"}${v.binaryCompat ? " *" : ""}`.trimEnd());
      print.err(`${vs.length} of ${p.variants.length} package variants`);
      if (vs.some((v) => v.binaryCompat))
        print.err(
          wrap(
            "* binary-compatible: compiled for a lower capability of the same major, which runs on this GPU (`variant-matrix explain NAME` says why)",
            w,
            { hang: "  " },
          ),
        );
    }
  },
};


/**
 * The dropped combinations for the terminal (wrapped to `width`): each distinct reason once, numbered where it is
 * first given; each group of combinations that drop the same packages for the same reasons once, with its packages.
 */
export function formatExcluded(ex: readonly Excluded[], width: number): string {
  const { reasons, groups } = groupExcluded(ex);
  const given = new Set<number>();
  const out: string[] = [];
  for (const g of groups) {
    out.push(wrap(g.combinations.join(", "), width, { hang: "  " }));
    out.push(wrap(`drops: ${g.packages.join(", ")}`, width, { indent: "  ", hang: "    " }));
    for (const r of g.reasons) {
      if (given.has(r)) out.push(`  [${r + 1}] (as above)`);
      else out.push(wrap(reasons[r]!, width, { indent: `  [${r + 1}] `, hang: "      " }));
      given.add(r);
    }
  }
  return out.join("\n");
}
