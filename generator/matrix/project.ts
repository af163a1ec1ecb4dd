/**
 * Load and validate the user's matrix, and expand it: the one entry point the CLI commands share.
 * I/O is limited to importing the matrix module; everything after is pure.
 */
import { PACKAGES } from "../catalog/lib/packages.ts";
import { TORCH_PACKAGE } from "../catalog/lib/packages.ts";
import { dirname, resolve } from "node:path";
import { existsSync } from "node:fs";
import { REPO_ROOT } from "../paths.ts";
import { InputError } from "../errors.ts";
import { parseCombination } from "./naming.ts";
import type { ZodError } from "zod";
import type * as z from "zod";
import { clip, shown, unknownKeysMessage } from "./suggest.ts";
import { catalog as defaultCatalog } from "../catalog/index.ts";
import { nixpkgsTarballUrl, preferredPin } from "../catalog/lib/torch.ts";
import { expand } from "./expand.ts";
import { makeMatrixSchema, reservedNameMessage, SAME_AT, type Excluded, type Matrix, type MatrixInput, type Variant } from "./schema.ts";
import type { Catalog } from "../catalog/schema.ts";

/** The repository root (the directory holding package.json and matrix.ts); see paths.ts. */
export { REPO_ROOT };

/**
 * A matrix that cannot be used: `issues` lists each field path with what is wrong and the allowed values (all of
 * them); the message shows them as formatIssues does (cut to a readable length).
 */
export class MatrixError extends InputError {
  constructor(
    readonly file: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(`${file}: invalid matrix\n${formatIssues(issues)}`);
  }
}

/** At most this many lines of issues in a MatrixError's message; the rest are counted. */
export const MAX_ISSUE_LINES = 30;
/** At most this many fields shown per message that repeats (200,000 duplicate Pythons are one message). */
export const MAX_SAME_ISSUE = 3;
/** At most this many characters of one issue's message (the longest lists of allowed values fit). */
export const MAX_ISSUE_CHARS = 2000;

/**
 * The lines of a MatrixError: `  PATH: MESSAGE` per issue, with issues of the same message grouped (the first
 * MAX_SAME_ISSUE shown, then "… and N more fields with this message: PATH, …"), at most MAX_ISSUE_LINES lines (then a
 * count of what is left), each message cut to MAX_ISSUE_CHARS and each path segment to 40 characters.
 */
export function formatIssues(issues: readonly { path: string; message: string }[]): string {
  const groups = new Map<string, string[]>();
  for (const i of issues) {
    const g = groups.get(i.message);
    if (g) g.push(i.path);
    else groups.set(i.message, [i.path]);
  }
  const path = (p: string) => (p ? p.split(".").map((seg) => clip(seg, 40)).join(".") : "(root)");
  const lines: string[] = [];
  let shownIssues = 0;
  for (const [message, paths] of groups) {
    if (lines.length >= MAX_ISSUE_LINES) break;
    // A message may hold lines of its own (the compiler's code frame): kept, other control characters escaped.
    const text = clip(message, MAX_ISSUE_CHARS, false);
    for (const p of paths.slice(0, MAX_SAME_ISSUE)) lines.push(`  ${path(p)}: ${text}`);
    shownIssues += Math.min(paths.length, MAX_SAME_ISSUE);
    if (paths.length > MAX_SAME_ISSUE) {
      const rest = paths.length - MAX_SAME_ISSUE;
      const named = paths.slice(MAX_SAME_ISSUE, MAX_SAME_ISSUE + 3).map(path);
      lines.push(`  … and ${rest} more field(s) with this message: ${named.join(", ")}${rest > 3 ? ", …" : ""}`);
      shownIssues += rest;
    }
  }
  if (shownIssues < issues.length) lines.push(`  … and ${issues.length - shownIssues} more issue(s)`);
  return lines.join("\n");
}

/** A loaded project: the validated matrix, the catalog, and its expansion. */
export interface Project {
  root: string;
  matrixFile: string;
  matrix: Matrix;
  catalog: Catalog;
  variants: Variant[];
  excluded: Excluded[];
}

/**
 * The keys the object schema at `path` of `schema` declares, or null when `path` does not lead to an object schema
 * (through arrays, records, optional and default wrappers). zod's unrecognized-key issue names only the unknown keys.
 */
function declaredKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] | null {
  type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; innerType?: z.ZodType };
  const unwrap = (t: z.ZodType | undefined): Def | null => {
    let def = t ? (t.def as Def) : null;
    while (def && def.innerType && ["optional", "default", "nullable", "prefault", "readonly", "catch"].includes(def.type)) def = def.innerType.def as Def;
    return def;
  };
  let def = unwrap(schema);
  for (const seg of path) {
    if (!def) return null;
    const next = def.type === "object" ? def.shape?.[String(seg)] : def.type === "array" ? def.element : def.type === "record" ? def.valueType : undefined;
    def = unwrap(next);
  }
  return def?.type === "object" && def.shape ? Object.keys(def.shape) : null;
}

/**
 * One `{ path, message }` per field zod found wrong, in zod's order; an issue that stands for several indices of one
 * array (schema.ts SAME_AT) becomes one per index, all sharing its message. `extend` may add to a message, given
 * the issue's path (once per zod issue, however many indices it stands for).
 */
function zodIssues(err: ZodError, schema: z.ZodType, extend: (path: readonly PropertyKey[], message: string) => string = (_, m) => m): MatrixIssue[] {
  return err.issues.flatMap((i) => {
    const path = i.path.map(String).join(".");
    let message = i.message;
    if (i.code === "unrecognized_keys") {
      const allowed = declaredKeys(schema, i.path);
      if (allowed) message = unknownKeysMessage(i.keys, allowed);
    }
    // A record key that fails its own check: zod says "Invalid key in record"; its own messages say why.
    if (i.code === "invalid_key" && i.issues.length) message = i.issues.map((x) => x.message).join("; ");
    message = extend(i.path, message);
    const at = i.code === "custom" ? (i.params?.[SAME_AT] as number[] | undefined) : undefined;
    if (!at) return [{ path, message }];
    const parent = i.path.slice(0, -1).map(String).join(".");
    return at.map((n) => ({ path: parent ? `${parent}.${n}` : String(n), message }));
  });
}

/** What a thrown value says, for a message; never throws (a Proxy or getter may throw again when read). */
function thrownText(e: unknown): string {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : shown(e);
  } catch {
    return "(a value that cannot be read)";
  }
}

/**
 * Issues of names zod drops before any check sees them: an own `__proto__` key of `environments` (what
 * `JSON.parse('{"__proto__": …}')` makes) would vanish from the parsed matrix without a word.
 */
function droppedKeyIssues(input: unknown): { path: string; message: string }[] {
  const env = typeof input === "object" && input !== null ? (input as { environments?: unknown }).environments : undefined;
  if (typeof env !== "object" || env === null) return [];
  return Object.prototype.hasOwnProperty.call(env, "__proto__") ? [{ path: "environments.__proto__", message: reservedNameMessage("__proto__") }] : [];
}

/** One problem of a matrix: the field path (`releases.0.nixpkgs`) and what is wrong with it. */
type MatrixIssue = { path: string; message: string };

/**
 * Parse `input` with the catalog's schema; a key dropped by the shape (droppedKeyIssues) or a schema error throws,
 * an error on an axis or one of its entries listing what the axis accepts.
 * @throws MatrixError naming every bad field, also when reading the input throws.
 */
function parseMatrix(input: unknown, catalog: Catalog, file: string): Matrix {
  const schema = makeMatrixSchema(catalog);
  let parsed: ReturnType<typeof schema.safeParse>;
  let dropped: MatrixIssue[];
  // Reading the matrix runs the user's code when it has getters or is a Proxy: what that throws is a load error of
  // the file (exit 2), not a crash of the CLI.
  try {
    dropped = droppedKeyIssues(input);
    parsed = schema.safeParse(input);
  } catch (e) {
    throw new MatrixError(file, [{ path: "", message: `cannot load: reading the matrix threw ${thrownText(e)}` }]);
  }
  if (dropped.length) throw new MatrixError(file, [...dropped, ...(parsed.success ? [] : zodIssues(parsed.error, schema))]);
  if (parsed.success) return parsed.data;
  // Type errors ("expected string, received number") also list what the field accepts.
  const allowed: Record<string, string[]> = {
    python: catalog.python.map((x) => x.version),
    cuda: catalog.cuda.map((x) => x.version),
    gpus: catalog.gpus.map((x) => `"${x.sm}"`),
    isas: catalog.isas.map((x) => x.key),
    releases: catalog.torch.map((t) => `{ torch: "${t.version}" }`),
    packages: [...PACKAGES],
  };
  // Only for the axis itself or one of its entries (`python`, `python.0`, `releases.0`): a field inside an entry
  // (`releases.0.sha256`) has allowed values of its own, if any.
  const issues = zodIssues(parsed.error, schema, (path, message) => {
    const axis = path.length <= 2 && Object.hasOwn(allowed, String(path[0])) ? allowed[String(path[0])]! : undefined;
    return axis && !/allowed (values|keys)/.test(message) ? `${message}; allowed values: ${axis.join(", ")}` : message;
  });
  throw new MatrixError(file, issues);
}

/**
 * Resolve each release's pin (left out: the catalog's preferred pin) and hash in place, and the issues: a pin that
 * carries another release, a hash that differs from the catalog's, a pin without any hash.
 */
function resolveReleasePins(m: Matrix, catalog: Catalog): MatrixIssue[] {
  const issues: MatrixIssue[] = [];
  m.releases.forEach((r, i) => {
    // Left out: the catalog's preferred pin for the release (none: expand drops every combination with that reason).
    if (r.nixpkgs === undefined) r.nixpkgs = preferredPin(catalog, r.torch)?.rev;
    if (r.nixpkgs === undefined) return;
    const pin = catalog.nixpkgs.find((p) => p.rev === r.nixpkgs)!;
    if (pin.torch !== r.torch) {
      const carriers = catalog.nixpkgs.filter((p) => p.torch === r.torch).map((p) => p.rev);
      issues.push({
        path: `releases.${i}.nixpkgs`,
        message: `nixpkgs ${r.nixpkgs} carries PyTorch ${pin.torch}, not ${r.torch}; allowed values: ${carriers.join(", ") || "(no known pin carries it)"}`,
      });
      return;
    }
    // Every generated file fetches nixpkgs by content (nixpkgs torch brokenConditions): a pin without a hash stops here.
    if (r.sha256 !== undefined && pin.sha256 !== null && r.sha256 !== pin.sha256)
      issues.push({
        path: `releases.${i}.sha256`,
        message: `"${r.sha256}" differs from the catalog's sha256 of nixpkgs ${pin.rev}, ${pin.sha256} (${pin.sha256Source}); remove it or fix the catalog`,
      });
    else if (r.sha256 === undefined && pin.sha256 === null)
      issues.push({
        path: `releases.${i}.sha256`,
        message:
          `nixpkgs ${pin.rev} (PyTorch ${r.torch}) has no known tarball hash, and no generated file may fetch nixpkgs ` +
          `without one. Run \`nix-prefetch-url --unpack ${nixpkgsTarballUrl(pin.rev)}\` and set releases[${i}].sha256 ` +
          `to the hash it prints` +
          (preferredPin(catalog, r.torch)?.sha256 ? `, or use the hashed pin ${preferredPin(catalog, r.torch)!.rev}` : ""),
      });
    else r.sha256 ??= pin.sha256!;
  });
  return issues;
}

/**
 * A Python or CUDA version that no release's pin has a package set for could only ever be dropped: an issue naming
 * the pins and what they have. (One that some pins have is legitimate in a multi-release matrix; BUILD_MATRIX.md
 * gives the reason for each drop.) Reads the pins resolveReleasePins set.
 */
function unservedAxisIssues(m: Matrix, catalog: Catalog): MatrixIssue[] {
  const issues: MatrixIssue[] = [];
  const usedPins = [...new Set(m.releases.map((r) => r.nixpkgs).filter((r): r is string => r !== undefined))].map(
    (rev) => catalog.nixpkgs.find((p) => p.rev === rev)!,
  );
  if (!usedPins.length) return issues;
  const has = (field: "python" | "cuda") =>
    usedPins.map((p) => `${p.rev.slice(0, 7)} has ${p[field].join(", ")}`).join("; ");
  m.python.forEach((v, i) => {
    if (!usedPins.some((p) => p.python.includes(v)))
      issues.push({ path: `python.${i}`, message: `no nixpkgs pin of the matrix has python${v.replace(".", "")}Packages (${has("python")})` });
  });
  m.cuda.forEach((v, i) => {
    if (!usedPins.some((p) => p.cuda.includes(v)))
      issues.push({ path: `cuda.${i}`, message: `no nixpkgs pin of the matrix has cudaPackages_${v.replace(".", "_")} (${has("cuda")})` });
  });
  return issues;
}

/** `only`: each combination must be one the axes produce (else it could never appear); an issue per one that is not. */
function onlyIssues(m: Matrix): MatrixIssue[] {
  const issues: MatrixIssue[] = [];
  m.only?.forEach((c, i) => {
    const p = parseCombination(c)!; // the schema checked the form
    const missing: string[] = [];
    if (!m.python.includes(p.python)) missing.push(`python ${p.python}`);
    if (p.cuda !== null && !m.cuda.includes(p.cuda)) missing.push(`cuda ${p.cuda}`);
    if (p.sm !== null && !m.gpus.includes(p.sm)) missing.push(`gpus ${p.sm}`);
    if (p.cuda === null && !m.cpuOnly) missing.push("cpuOnly true");
    if (!m.isas.includes(p.isa)) missing.push(`isas ${p.isa}`);
    if (missing.length)
      issues.push({ path: `only.${i}`, message: `"${c}" is not a combination of the axes: the matrix lacks ${missing.join(", ")}` });
  });
  return issues;
}

/** Packages on torch and environments need pytorch in `packages`: an issue for each that lacks it. */
function torchNeededIssues(m: Matrix): MatrixIssue[] {
  const issues: MatrixIssue[] = [];
  const onPytorch = m.packages.filter((p) => p !== TORCH_PACKAGE);
  if (onPytorch.length && !m.packages.includes(TORCH_PACKAGE))
    issues.push({
      path: "packages",
      message: `${onPytorch.join(", ")} ${onPytorch.length > 1 ? "are" : "is"} built against its pytorch variant, so packages must include "${TORCH_PACKAGE}"; allowed values: ${PACKAGES.join(", ")}`,
    });
  if (Object.keys(m.environments).length && !m.packages.includes(TORCH_PACKAGE))
    issues.push({
      path: "environments",
      message: `an environment holds its combination's pytorch variant, so packages must include "${TORCH_PACKAGE}"`,
    });
  return issues;
}

/**
 * Validate a matrix object against the catalog (zod schema plus cross-field rules: the pin of each release must
 * carry that release; every other package needs pytorch in `packages`).
 * @throws MatrixError naming every bad field with the allowed values.
 */
export function validateMatrix(input: unknown, catalog: Catalog = defaultCatalog, file = "matrix.ts"): Matrix {
  const m = parseMatrix(input, catalog, file);
  const issues = resolveReleasePins(m, catalog);
  if (issues.length === 0) issues.push(...unservedAxisIssues(m, catalog));
  issues.push(...onlyIssues(m), ...torchNeededIssues(m));
  if (issues.length) throw new MatrixError(file, issues);
  return m;
}

/**
 * Import a matrix module (default export, or named export `matrix`). The value comes back boxed (`{ matrix }`): an
 * async function's result is looked up for `then`, which would run a Proxy's trap or a getter outside any check.
 * @throws MatrixError when the file is missing, fails to load, or exports no object.
 */
export async function importMatrix(file: string): Promise<{ matrix: unknown }> {
  if (!existsSync(file)) throw new MatrixError(file, [{ path: "", message: "file not found" }]);
  let mod: Record<string, unknown>;
  try {
    const { importMatrixModule } = await import("./load-matrix.ts");
    mod = await importMatrixModule(file);
  } catch (e) {
    // esbuild's BuildFailure carries each compile error with its location: show file:line:column, the message and
    // the offending line, as a compiler does. Anything else (an error thrown while the module runs): its message.
    const errors = (e as { errors?: { text: string; location?: { file: string; line: number; column: number; lineText: string } | null }[] }).errors;
    const lines = errors?.length
      ? errors.map((x) =>
          x.location
            ? `${resolve(x.location.file)}:${x.location.line}:${x.location.column + 1}: ${x.text}\n      ${x.location.lineText.trim()}`
            : x.text,
        )
      : [clip(thrownText(e).split("\n")[0]!, MAX_ISSUE_CHARS)];
    throw new MatrixError(file, [{ path: "", message: `cannot load: ${lines.join("\n    ")}` }]);
  }
  const m = mod.default ?? mod.matrix;
  if (typeof m !== "object" || m === null)
    throw new MatrixError(file, [{ path: "", message: "must `export default defineMatrix({...})`" }]);
  return { matrix: m };
}

/**
 * Load `matrix.ts` (or `opts.matrixFile`), validate it and expand it.
 * @throws MatrixError for a missing, unloadable or invalid matrix.
 */
export async function loadProject(opts: { matrixFile?: string; root?: string; catalog?: Catalog } = {}): Promise<Project> {
  const root = opts.root ?? REPO_ROOT;
  const matrixFile = resolve(root, opts.matrixFile ?? "matrix.ts");
  // The built-in catalog plus the user's local pins and releases beside the matrix (`pin add`, generator/catalog/local.ts).
  const cat = opts.catalog ?? (await catalogBesideMatrix(matrixFile));
  return projectOf((await importMatrix(matrixFile)).matrix, { root, matrixFile, catalog: cat });
}

/** The built-in catalog with the local catalog of the matrix's directory (catalog/local.ts). @throws LocalCatalogError */
async function catalogBesideMatrix(matrixFile: string): Promise<Catalog> {
  return (await import("../catalog/local.ts")).withLocalCatalog(defaultCatalog, dirname(matrixFile));
}

/**
 * The Project of a matrix value already imported from `o.matrixFile` (what loadProject does after the import; the
 * project cache, project-cache.ts, keys the value it imported and hands it here): `o.catalog`, else the built-in one
 * with the local catalog beside the matrix; the matrix validated and expanded.
 * @throws MatrixError for an invalid matrix; LocalCatalogError for an invalid local catalog
 */
export async function projectOf(input: unknown, o: { root: string; matrixFile: string; catalog?: Catalog }): Promise<Project> {
  const cat = o.catalog ?? (await catalogBesideMatrix(o.matrixFile));
  const matrix = validateMatrix(input, cat, o.matrixFile);
  const { variants, excluded } = expand(matrix, cat);
  return { root: o.root, matrixFile: o.matrixFile, matrix, catalog: cat, variants, excluded };
}

/** Project from an in-memory matrix (tests, benchmarks). @throws MatrixError */
export function projectFromMatrix(input: MatrixInput | unknown, catalog: Catalog = defaultCatalog, root = REPO_ROOT): Project {
  const matrix = validateMatrix(input, catalog);
  const { variants, excluded } = expand(matrix, catalog);
  return { root, matrixFile: resolve(root, "matrix.ts"), matrix, catalog, variants, excluded };
}
