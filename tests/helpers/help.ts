/** Reading yargs help texts (tests/surface.test.ts): the option and positional entries and whether each is described. */
/** The option and positional entries of a yargs help text: [name, the rest of its first line and continuation]. */
export function entries(help: string): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  let section = "";
  let cur: { name: string; text: string } | null = null;
  for (const line of help.split("\n")) {
    if (/^(Options|Positionals):$/.test(line)) {
      section = line;
      continue;
    }
    if (/^\S/.test(line) || line.trim() === "") {
      if (/^\S/.test(line)) section = /^(Options|Positionals):$/.test(line) ? line : "";
      cur = null;
      continue;
    }
    if (!section) continue;
    const m = /^\s{2}(?:-\w, )?\s*(--[\w-]+|[a-z][\w-]*)(\s.*|)$/.exec(line);
    // An entry starts at a name two to six spaces in; deeper lines continue the description.
    if (m && /^\s{2,6}\S/.test(line)) {
      cur = { name: m[1]!, text: m[2] ?? "" };
      out.push(cur);
    } else if (cur) cur.text += ` ${line.trim()}`;
  }
  return out;
}

/** True when an entry's text holds a description besides yargs' [type] [default] annotations. */
export const described = (text: string) => text.replace(/\[[^\]]*\]/g, "").replace(/\(default: [^)]*\)$/, "").trim() !== "";

