/**
 * Bundle-time stand-in for the npm package `wrap-ansi` as generator/ imports it (text.ts), wired by a plugin in
 * bin/build-dist.mjs `bundle()`: the same function, loaded on its first call instead of at start-up.
 *
 * Why: wrap-ansi 10 builds `new Intl.Segmenter()` when its module loads, which loads ICU's segmentation data: about
 * 20 ms of every command's start-up on Node 20 (bench/startup.ts; a cpu profile of `list --json` puts it in the
 * chunk that holds text.ts), although `--help` (yargs wraps with cliui's own copy) and `list --json` print no prose.
 * A `require` inside an esbuild bundle becomes a lazy initialiser (as for lazy-string-width.ts), so the real module,
 * bundled by its file path (which the plugin does not match), runs only when text is first wrapped. Outside the
 * bundle (tsx, tests) this file is not used.
 */
import type { Options } from "wrap-ansi";

type WrapAnsi = (input: string, columns: number, options?: Options) => string;

let real: WrapAnsi | undefined;

/** wrap-ansi's default export: `input` wrapped to `columns` (its own answer: this only loads it on first use). */
export default function wrapAnsi(input: string, columns: number, options?: Options): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  real ??= (require("../node_modules/wrap-ansi/index.js") as { default: WrapAnsi }).default;
  return real(input, columns, options);
}
