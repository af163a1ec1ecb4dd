/**
 * Human output that fits a terminal: every command's prose goes through `wrap` (wrap-ansi, a well-kept library that
 * knows ANSI escapes and wide characters) so that no line is longer than the width and no sentence is cut off. A
 * single token longer than the width (a variant name, a path, a URL) stays whole on its own line. Pure: the width
 * is handed in; `terminalWidth` (commands/shared.ts) reads it from the terminal.
 */
import wrapAnsi from "wrap-ansi";

/** Options of `wrap`: `indent` starts the first line, `hang` every following line (default: `indent`). */
export interface WrapOptions {
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
      const parts = wrapAnsi(line, Math.max(10, inner), { hard: false, trim: true, wordWrap: true }).split("\n");
      return parts.map((p, i) => (i === 0 ? indent : hang) + p).join("\n");
    })
    .join("\n");
}
