// The comments of a source file, for the tests that read what comments say (layout, comment-names).
import { readFileSync } from "node:fs";
import ts from "typescript";

/**
 * The comments of a file: a TypeScript or JavaScript file's comment ranges (by its syntax tree, so `//` inside a
 * string is not one); elsewhere (Nix, Python, nunjucks) what follows a `#` on a line.
 */
export function commentsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  if (!/\.(ts|mjs|js)$/.test(file)) return text.split("\n").flatMap((l) => (l.includes("#") ? [l.slice(l.indexOf("#"))] : []));
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const seen = new Map<number, string>();
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(sf);
  take(ts.getLeadingCommentRanges(text, sf.endOfFileToken.pos));
  return [...seen.values()];
}
