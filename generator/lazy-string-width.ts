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
 * Printable ASCII plus the narrow, single-column characters the CLI's prose uses (Latin-1 and Latin Extended letters
 * and signs such as ×, general punctuation such as – — … •, arrows such as → ←, mathematical operators such as ≤ ≥,
 * box drawing, the check marks ✓ ✔ ✕ ✖ ✗ ✘ of doctor's help) and the no-break space U+00A0 that keeps a command whole
 * in explain's text: string-width 8 gives each of them width 1 alone and beside others (tests/cli-startup.test.ts checks
 * every code point of these ranges against it), so such a string's width is its code point count. Left out: the
 * soft hyphen U+00AD and the bidirectional controls U+202A–U+202E (width 0). NARROW_RANGES: the ranges beyond ASCII,
 * which the test checks code point by code point and NARROW is built from.
 */
export const NARROW_RANGES: readonly (readonly [number, number])[] = [
  [0xa0, 0xac],
  [0xae, 0x2ff],
  [0x2010, 0x2029],
  [0x202f, 0x205e],
  [0x2190, 0x22ff],
  [0x2500, 0x257f],
  [0x2713, 0x2718],
];
const hex = (c: number) => `\\u{${c.toString(16)}}`;
const NARROW = new RegExp(`^[\\u0020-\\u007E${NARROW_RANGES.map(([a, b]) => `${hex(a)}-${hex(b)}`).join("")}]*$`, "u");

/**
 * True when stringWidth answers `input` without loading string-width's Unicode tables (printable ASCII, or NARROW's
 * characters with ambiguous characters narrow, string-width's default): the test that --help and explain's output
 * never need them reads this.
 */
export function widthWithoutTables(input: string): boolean {
  return PRINTABLE_ASCII.test(input) || NARROW.test(input);
}

/**
 * string-width's default export: the display width of `input` in terminal columns. Printable ASCII is answered as
 * string-width 8 answers it before any Unicode work (its `if (/^[\u0020-\u007E]*$/.test(string)) return
 * string.length`; such a string holds no ANSI escape, which starts with \x1B or \x9B); anything else loads the real
 * module on first use. yargs measures every line of a command's help on every run (yargs' command.js
 * `cacheHelpMessage`), all ASCII, so a run that prints no help never loads it.
 */
export default function stringWidth(input: string, options?: Parameters<StringWidth>[1]): number {
  if (typeof input === "string" && PRINTABLE_ASCII.test(input)) return input.length;
  // Narrow non-ASCII prose (wrap-ansi measures each word of detect's and explain's output): no Unicode tables needed.
  if (typeof input === "string" && options?.ambiguousIsNarrow !== false && NARROW.test(input)) return input.length;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  real ??= (require("../node_modules/string-width/index.js") as { default: StringWidth }).default;
  return real(input, options);
}
