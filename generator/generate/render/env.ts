/**
 * The nunjucks environment: autoescape off (we write Nix and Markdown, not HTML), templates from
 * `render/templates/`, and filters that make values safe for the language they land in.
 */
import nunjucks from "nunjucks";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { replaceFileSync } from "../../output-file.ts";
import { createRequire } from "node:module";
import { join } from "node:path";
import { cacheDir, TEMPLATES_DIR } from "../../paths.ts";

export { GENERATED_HEADER, mdCell, nixString, nixValue } from "../../nix-literals.ts";
import { GENERATED_HEADER, mdCell, nixValue } from "../../nix-literals.ts";

let env: nunjucks.Environment | undefined;

const OPTIONS: nunjucks.ConfigureOptions = { autoescape: false, throwOnUndefined: true, trimBlocks: true, lstripBlocks: true };

/**
 * The templates precompiled to JavaScript (nunjucks.precompile, with the environment's options), cached by the
 * templates' names, sizes and times: parsing and compiling them is most of a render's fixed cost. Null when the
 * cache cannot be written (the file loader then compiles them as usual).
 */
function precompiledLoader(): nunjucks.ILoader | null {
  try {
    const names = readdirSync(TEMPLATES_DIR).filter((f) => f.endsWith(".njk")).sort();
    const h = createHash("sha256").update("v1");
    for (const n of names) {
      const st = statSync(join(TEMPLATES_DIR, n));
      h.update(`\0${n}\0${st.size}\0${st.mtimeMs}`);
    }
    const file = join(cacheDir("templates"), `templates-${h.digest("hex").slice(0, 24)}.cjs`);
    if (!existsSync(file)) {
      const code = nunjucks.precompile(TEMPLATES_DIR, {
        env: new nunjucks.Environment(null, OPTIONS),
        include: ["\\.njk$"],
        // @types/nunjucks types `templates` as one object; nunjucks passes the array of every precompiled template:
        // concat takes either and gives the array.
        wrapper: (templates) =>
          `module.exports = {\n${([] as { name: string; template: string }[])
            .concat(templates)
            .map((t) => `${JSON.stringify(t.name)}: (function() {${t.template}})(),`)
            .join("\n")}\n};\n`,
      });
      replaceFileSync(file, code);
    }
    return new nunjucks.PrecompiledLoader(createRequire(import.meta.url)(file));
  } catch {
    return null;
  }
}

/** The shared environment (created once). */
export function templates(): nunjucks.Environment {
  if (env) return env;
  env = new nunjucks.Environment(precompiledLoader() ?? new nunjucks.FileSystemLoader(TEMPLATES_DIR, { noCache: false }), OPTIONS);
  env.addFilter("nix", nixValue);
  env.addFilter("md", mdCell);
  env.addGlobal("GENERATED_HEADER", GENERATED_HEADER);
  return env;
}
