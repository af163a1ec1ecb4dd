/**
 * Reading Markdown as a reader does: the prose sentences of a page, and the relative links it holds.
 * Used by tests/docs.test.ts (sentences a reader can follow, links that resolve).
 */

/**
 * The prose of a Markdown text, one string per block (paragraph or list item), with what is not prose removed:
 * fenced code blocks, table rows, headings, HTML comments and a table of contents' links. Inline code counts as one
 * word (`code`), a link as its text.
 */
export function proseBlocks(markdown: string): string[] {
  const text = markdown.replace(/<!--[\s\S]*?-->/g, "").replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  const blocks: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length) blocks.push(current.join(" "));
    current = [];
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith("|")) {
      flush();
      continue;
    }
    const item = /^(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      flush();
      current.push(item[1]!);
    } else current.push(line);
  }
  flush();
  return blocks
    .filter((b) => !/^\[[^\]]*\]\(#[^)]*\)$/.test(b)) // a table of contents' entry
    .map((b) =>
      b
        .replace(/`[^`]*`/g, "code")
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
        .replace(/\*\*|__/g, ""),
    )
    .filter((b) => /[A-Za-z]/.test(b));
}

/** Abbreviations whose dot ends no sentence. */
const ABBREVIATIONS = /\b(e\.g|i\.e|etc|cf|vs|approx|no)\.(?=\s)/gi;

/**
 * The sentences of a Markdown text: each prose block split after `.`, `!` or `?` followed by a space (abbreviations
 * such as "e.g." excepted); a block that ends without punctuation (a list item) is one sentence.
 */
export function sentences(markdown: string): string[] {
  return proseBlocks(markdown).flatMap((b) =>
    b
      .replace(ABBREVIATIONS, "$1\u2024")
      .split(/(?<=[.!?]["')\]]*)\s+/)
      .map((s) => s.trim())
      .filter((s) => /[A-Za-z]/.test(s)),
  );
}

/** Words of a sentence: whitespace-separated tokens holding a letter or digit (a lone "—" or "=" is not a word). */
export function wordCount(sentence: string): number {
  return sentence.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** Sentence-length figures of a Markdown text: count, mean and maximum words, and the longest sentence. */
export function sentenceStats(markdown: string): { count: number; mean: number; max: number; longest: string } {
  const s = sentences(markdown);
  const counts = s.map(wordCount);
  const max = Math.max(0, ...counts);
  return {
    count: s.length,
    mean: s.length ? counts.reduce((a, b) => a + b, 0) / s.length : 0,
    max,
    longest: s[counts.indexOf(max)] ?? "",
  };
}

/**
 * Relative link targets of a Markdown text (`[text](target)`, without `#anchor`), excluding URLs (`scheme:`), pure
 * anchors and links inside code (fenced blocks or inline).
 */
export function relativeLinks(markdown: string): string[] {
  const text = withoutCode(markdown);
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!.split("#")[0]!)
    .filter((t) => t !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** A Markdown text without its fenced code blocks and inline code spans (neither holds links or headings). */
export function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "code");
}
