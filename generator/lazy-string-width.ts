/**
 * Bundle-time stand-in for the npm package `string-width` (esbuild `--alias:string-width=…` in package.json's
 * `prepare`): the same function, loaded on its first call instead of at start-up.
 *
 * Why: yargs 18 imports string-width 8 at start-up (yargs/lib/platform-shims/esm.mjs), and string-width 8 builds
 * `new RegExp("^\\p{RGI_Emoji}$", "v")` and three other Unicode-property RegExps at module load, which costs about
 * 25 ms of every command's start-up on Node 20 (cpu profile of `list --json`, bench/cli.ts) although only `--help`
 * and the live build status measure text width. A `require` of an ES module inside an esbuild bundle becomes a lazy
 * initialiser, so the real module (bundled all the same, by its file path, which the alias does not match) runs
 * only when a width is first asked for. Outside the bundle (tsx, tests) this file is not used.
 */
type StringWidth = (input: string, options?: { ambiguousIsNarrow?: boolean; countAnsiEscapeCodes?: boolean }) => number;

let real: StringWidth | undefined;

/** Printable ASCII only: string-width 8's own first test, whose answer is the string's length. */
const PRINTABLE_ASCII = /^[\u0020-\u007E]*$/;

/**
 * string-width's default export: the display width of `input` in terminal columns. Printable ASCII is answered as
 * string-width 8 answers it before any Unicode work (its `if (/^[\u0020-\u007E]*$/.test(string)) return
 * string.length`; such a string holds no ANSI escape, which starts with \x1B or \x9B); anything else loads the real
 * module on first use. yargs measures every line of a command's help on every run (yargs' command.js
 * `cacheHelpMessage`), all ASCII, so a run that prints no help never loads it.
 */
export default function stringWidth(input: string, options?: Parameters<StringWidth>[1]): number {
  if (typeof input === "string" && PRINTABLE_ASCII.test(input)) return input.length;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  real ??= (require("../node_modules/string-width/index.js") as { default: StringWidth }).default;
  return real(input, options);
}
