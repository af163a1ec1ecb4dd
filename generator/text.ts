/**
 * Human output that fits a terminal: every command's prose goes through `wrap` (wrap-ansi, a well-kept library that
 * knows ANSI escapes and wide characters) so that no line is longer than the width and no sentence is cut off. A
 * single token longer than the width (a variant name, a path, a URL) stays whole on its own line. Pure: the width
 * is handed in; `terminalWidth` (commands/shared.ts) reads it from the terminal.
 */
import wrapAnsi from "wrap-ansi";

/** Options of `wrap`: `indent` starts the first line, `hang` every following line (default: `indent`). */
interface WrapOptions {
  /** Prefix of the first line, counted in the width (e.g. "  ✓ "). */
  indent?: string;
  /** Prefix of every continuation line (default: as many spaces as `indent` is wide). */
  hang?: string;
}

/**
 * `text` wrapped to `width` columns (each of its own lines wrapped apart, blank lines kept), never breaking a word:
 * a token wider than the line stays whole. Returns the wrapped text without a trailing newline.
 * @param width columns, at least 20 (smaller values are raised to 20)
 */
export function wrap(text: string, width: number, options: WrapOptions = {}): string {
  const indent = options.indent ?? "";
  const hang = options.hang ?? " ".repeat([...indent].length);
  const inner = Math.max(20, width) - Math.max([...indent].length, [...hang].length);
  return text
    .split("\n")
    .map((line) => {
      if (line.trim() === "") return "";
      // A `code span` (a command, a nix.conf line) that fits on a line is one unit to copy: its spaces are not
      // break points. A longer one is broken at its spaces like the prose around it.
      const kept = line.replace(/`[^`\n]+`/g, (span) => ([...span].length <= inner ? span.replace(/ /g, NBSP) : span));
      const parts = wrapAnsi(kept, Math.max(10, inner), { hard: false, trim: true, wordWrap: true }).split("\n");
      return parts.map((p, i) => (i === 0 ? indent : hang) + p.replaceAll(NBSP, " ")).join("\n");
    })
    .join("\n");
}

/** A nix.conf setting as printed to be pasted: its name at the start of the line, " = ", a value. */
const NIX_CONF_LINE = /^[a-z][\w-]* = \S/;

/** The stand-in for a space inside a code span while wrap-ansi breaks the line (it breaks at " " only). */
const NBSP = "\u00a0";

/**
 * A nix.conf setting fitted to `width` columns without changing what Nix reads: `extra-NAME = a b c` that does not
 * fit becomes several `extra-NAME = …` lines (each appends to the setting, as nix.conf's `extra-` prefix does), so
 * every line can be copied as it is. A setting without the `extra-` prefix stays one line. Pure; returns the lines.
 * @param indent prefix of each line, counted in the width
 */
export function settingLines(setting: string, width: number, indent = ""): string[] {
  const m = /^(extra-[\w-]+) = (.*)$/.exec(setting);
  if (!m || [...indent].length + setting.length <= width) return [indent + setting];
  const name = m[1]!;
  const values = m[2]!;
  const lines: string[] = [];
  let cur: string[] = [];
  const line = (vs: string[]) => `${indent}${name} = ${vs.join(" ")}`;
  for (const v of values.split(/\s+/).filter(Boolean)) {
    if (cur.length && line([...cur, v]).length > width) {
      lines.push(line(cur));
      cur = [];
    }
    cur.push(v);
  }
  if (cur.length) lines.push(line(cur));
  return lines;
}

/**
 * A command's words as the units wrapCommand breaks between: a single-quoted string whole, `--option value` (an option
 * word followed by a word that is not one) joined by a space when the pair is at most `room` characters, every other
 * word alone.
 */
function commandUnits(split: readonly string[], room: number): string[] {
  // A single-quoted word holding spaces (`NIX_CONFIG='extra-substituters = URL'`) is one word: a break inside the quotes
  // would put the continuation's backslash and newline into the value.
  const words: string[] = [];
  let open: string | null = null;
  for (const w of split) {
    open = open === null ? w : `${open} ${w}`;
    if ((open.match(/'/g)?.length ?? 0) % 2 === 0) {
      words.push(open);
      open = null;
    }
  }
  if (open !== null) words.push(open);
  const units: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const next = words[i + 1];
    if (/^--?[A-Za-z]/.test(w) && next !== undefined && !next.startsWith("-") && [...w].length + 1 + [...next].length <= room) {
      units.push(`${w} ${next}`);
      i++;
    } else units.push(w);
  }
  return units;
}

/**
 * A shell command line fitted to `width` columns without changing what it runs: broken only at spaces between
 * words, each broken line ending in ` \` (a shell line continuation), continuation lines indented by `hang`. A
 * word wider than the line stays whole, and an option stays beside its value where the pair fits a line. Pure;
 * returns the lines joined by newlines, without a trailing newline.
 * @param indent prefix of the first line (e.g. "  $ "), counted in the width
 * @param hang prefix of every continuation line (default: `indent`'s width plus two spaces)
 */
export function wrapCommand(command: string, width: number, indent = "", hang?: string): string {
  const cont = hang ?? " ".repeat([...indent].length + 2);
  const max = Math.max(20, width);
  // An option and its value (`--cpuinfo FILE`) stay on one line when they fit one; else each word is placed alone.
  const words = commandUnits(command.split(" ").filter((w) => w !== ""), max - [...cont].length - 2);
  const lines: string[] = [];
  let line = indent;
  let empty = true;
  for (const w of words) {
    // Room for the word and, should another follow, the " \" continuation.
    if (!empty && [...line].length + 1 + [...w].length + 2 > max) {
      lines.push(`${line} \\`);
      line = cont + w;
    } else line = empty ? line + w : `${line} ${w}`;
    empty = false;
  }
  lines.push(line);
  return lines.join("\n");
}

/**
 * Every line of `text` wrapped to `width` (its own leading spaces kept as its indent; continuation lines hang
 * under the text after a leading "- ", "✓ ", "✗ ", "! " or "→ " mark), shell lines starting "$ " through wrapCommand.
 * A line that already fits is kept as it is (text wrapped before keeps its own layout), and so is a nix.conf setting
 * at the start of a line (`name = value`, as preflight/checks.ts nixConfBlock prints it): cut inside its value it would
 * be an empty setting and an invalid line once pasted. An indented `extra-NAME = …` line is split by settingLines
 * (several `extra-NAME` lines under the same indent, each one whole). Blank lines are kept. Pure.
 */
export function wrapLines(text: string, width: number): string {
  return text
    .split("\n")
    .map((line) => {
      if (NIX_CONF_LINE.test(line)) return line;
      // An indented `extra-NAME = …` setting (shown for copying) splits into several `extra-` lines, never mid-value.
      const setting = /^(\s+)(extra-[\w-]+ = \S.*)$/.exec(line);
      if (setting) return settingLines(setting[2]!.trimEnd(), width, setting[1]!).join("\n");
      const m = /^(\s*)((?:[-✓✗–!→•*] |\$ |\d+\. )?)(.*)$/u.exec(line)!;
      const lead = m[1]!;
      const mark = m[2]!;
      const rest = m[3]!;
      if (rest.trim() === "") return line.trimEnd();
      if ([...line].length <= width) return line; // a line that fits (perhaps wrapped before) is left as it is
      if (mark === "$ ") return wrapCommand(rest, width, lead + mark, lead + "    ");
      return wrap(rest, width, { indent: lead + mark, hang: " ".repeat([...(lead + mark)].length + (mark ? 0 : 2)) });
    })
    .join("\n");
}

/** `word` quoted for a POSIX shell when it needs it (single quotes; a quote inside as '\''). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A command line a user copies: `npx variant-matrix WORDS…`, each word shell-quoted, with the host options that
 * produced the answer (`--cpuinfo`, `--nvidia-smi`, `--machine`) and `--matrix` when they were given, so the next
 * command reads the same host and matrix.
 */
export function copyableCommand(words: readonly string[], from: { cpuinfo?: string; "nvidia-smi"?: string; machine?: string; matrix?: string } = {}): string {
  const flags = (["cpuinfo", "nvidia-smi", "machine", "matrix"] as const).flatMap((k) => (from[k] !== undefined ? [`--${k}`, from[k]!] : []));
  return ["npx", "variant-matrix", ...words, ...flags].map(shellWord).join(" ");
}
