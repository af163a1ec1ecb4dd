/**
 * Text from files, recordings and the command line, made safe to show on a terminal: every control character is
 * written as a `\uXXXX` escape (ESC as `\u001b`), so another machine's recorded `nvidia-smi` output, a host file, a
 * `detect --json` file or an argument cannot move the cursor, recolour, retitle the window or hide text (ECMA-48
 * control functions start with C0 ESC or a C1 code). Unicode's bidirectional overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069, "Trojan Source", CVE-2021-42574) are escaped too: they reorder what is shown. The escape is JSON's
 * (and JavaScript's): JSON output passed through stays valid JSON meaning the same (JSON.stringify leaves DEL, C1
 * and the bidi controls raw inside strings, and escapes the C0 ones itself). No imports.
 */

// C0 controls but tab and newline, DEL, C1 controls, the bidi embeddings/overrides and isolates.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** One character as its `\uXXXX` escape. */
function escapeChar(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every control character escaped (see the file header); tabs and newlines stay unless `oneLine`.
 * @param oneLine also escape tab, newline and carriage return (a value shown within one line: a name, a field)
 * @returns the text unchanged when it holds none
 */
export function terminalSafe(text: string, oneLine = false): string {
  return text.replace(oneLine ? UNSAFE_IN_LINE : UNSAFE, escapeChar);
}
