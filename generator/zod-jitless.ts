/**
 * zod configured once for how this CLI parses: each schema here parses one value per process (the catalog, the
 * matrix, local-catalog.json, a pin's facts), so zod 4's JIT, which compiles a fast parser with `new Function` for
 * each object schema on its first parse, costs more than it saves: building those parsers was a third to a half of
 * zod's parse time in CPU profiles of `list --json` and `explain` (bench/startup.ts measures the commands).
 * zod reads `jitless` when a schema is built, so every module that builds schemas imports this one first
 * (`import "../zod-jitless.ts";` before its `import * as z from "zod"`): its body runs before theirs. A side-effect
 * import, so that esbuild still keeps only the parts of zod the schemas use.
 */
import { config } from "zod";

config({ jitless: true });
