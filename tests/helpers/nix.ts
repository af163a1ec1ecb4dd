/**
 * Small helpers to run the real Nix tools from tests (nix-instantiate, nix-build, nix-store), with arguments as
 * arrays (no shell), from the repository root, offline (`--option substituters ''` for builds).
 *
 * Nix expressions are built from strings here; `nixStr` and `nixPath` quote values so that a file name or a value
 * never becomes Nix syntax.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { tempDir } from "./cli.ts";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { VariantJson } from "../../generator/matrix/schema.ts";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The stand-in nixpkgs of the contract tests (NOT nixpkgs; see its header). */
export const STAND_IN_NIXPKGS = path.join(REPO_ROOT, "tests/fixtures/stand-in-nixpkgs");
/** Hand-written examples of the generated file format, with their `list --json` entries in list.json. */

export interface RunOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Milliseconds before the process is killed (default 120 s). */
  timeout?: number;
}

/** Runs a Nix tool and returns its stdout; on failure throws an Error carrying the command and its stderr. */
export function runNix(tool: string, args: string[], opts: RunOptions = {}): string {
  try {
    return execFileSync(tool, args, {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: opts.timeout ?? 120_000,
      env: { ...process.env, ...opts.env },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; status?: number | null; message: string };
    const stderr = (e.stderr ?? "").trim();
    throw new Error(`${tool} ${args.join(" ")} failed (exit ${e.status ?? "?"}):\n${stderr || e.message}`);
  }
}

/** True when `nix-instantiate` can be run. */
export function hasNix(): boolean {
  try {
    execFileSync("nix-instantiate", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A Nix string literal holding `s` exactly: the generator's own escaping (generator/nix-literals.ts). */
export { nixString as nixStr } from "../../generator/nix-literals.ts";
import { nixString as nixStr } from "../../generator/nix-literals.ts";
import { WRAPPER_NIXPKGS_ARG } from "../../generator/generate/render/index.ts";
import { catalog } from "../../generator/catalog/index.ts";
import { gccarchFeature } from "../../generator/catalog/lib/machines.ts";

/** A Nix path value for a file system path (absolute or relative to the repository root), safe for any name. */
export function nixPath(p: string): string {
  return `(/. + ${nixStr(path.resolve(REPO_ROOT, p))})`;
}

/** Parses a file with `nix-instantiate --parse`; returns the printed AST, throws with Nix's message on a syntax error. */
export function nixParse(file: string): string {
  return runNix("nix-instantiate", ["--parse", path.resolve(REPO_ROOT, file)]);
}

/** Evaluates a Nix expression strictly and returns it decoded from JSON. */
export function nixEvalJson<T = unknown>(expr: string, opts: RunOptions = {}): T {
  return JSON.parse(runNix("nix-instantiate", ["--eval", "--strict", "--json", "-E", expr], opts)) as T;
}

/**
 * Instantiates a file (`nix-instantiate FILE ARGS...`) or, with `{ expr: true }`, an expression, writing the .drv
 * files to the store; returns the .drv paths printed.
 */
export function nixInstantiate(fileOrExpr: string, args: string[] = [], how: { expr?: boolean } = {}): string[] {
  const target = how.expr ? ["-E", fileOrExpr] : [path.resolve(REPO_ROOT, fileOrExpr)];
  return lines(runNix("nix-instantiate", [...target, ...args]));
}

/** Builds an expression offline (no substituters, no out link) with `--cores cores`; returns the output paths. */
export function nixBuild(expr: string, opts: RunOptions & { cores?: number } = {}): string[] {
  const args = ["--no-out-link", "--option", "substituters", "", ...STAND_IN_BUILDER_FEATURES, "-E", expr];
  if (opts.cores !== undefined) args.unshift("--cores", String(opts.cores));
  return lines(runNix("nix-build", args, opts));
}

/** Direct references of a store path (for a .drv: the .drv files and sources it depends on). */
export function nixStoreReferences(storePath: string): string[] {
  return lines(runNix("nix-store", ["--query", "--references", storePath]));
}

/** Deletes store paths if they exist and nothing keeps them alive (errors ignored); lets a test force a rebuild. */
export function nixStoreDelete(storePaths: string[]): void {
  for (const p of storePaths) {
    try {
      execFileSync("nix-store", ["--delete", p], { stdio: "ignore" });
    } catch {
      /* not valid or still alive: the caller checks what it needs */
    }
  }
}

/** `builtins.currentSystem` of this machine, e.g. "x86_64-linux". */
export function currentSystem(): string {
  return nixEvalJson<string>("builtins.currentSystem");
}

/** The `.nix` files directly in a directory (absolute paths, sorted); [] when it does not exist. */
export function nixFilesIn(dir: string): string[] {
  const abs = path.resolve(REPO_ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .filter((f) => f.endsWith(".nix"))
    .sort()
    .map((f) => path.join(abs, f));
}

/** One contract case: a pytorch variant and the torchaudio variant built against it, as `list --json` shows them. */
export interface ContractCase {
  pytorch: VariantJson;
  torchaudio: VariantJson;
  /** Every other variant built against the same pytorch (torchvision, the environment), in list order. */
  others: VariantJson[];
}

/**
 * Pairs the entries of a `list --json` array into contract cases: each torchaudio with the pytorch variant named in
 * its `dependsOn`. Throws when a torchaudio's pytorch is missing from the list.
 */
export function casesFromList(list: VariantJson[]): ContractCase[] {
  const byName = new Map(list.map((v) => [v.name, v]));
  return list
    .filter((v) => v.package === "torchaudio")
    .map((torchaudio) => {
      const ptName = torchaudio.dependsOn.find((d) => byName.get(d)?.package === "pytorch");
      const pytorch = ptName ? byName.get(ptName) : undefined;
      if (!pytorch) throw new Error(`${torchaudio.name}: no pytorch variant among dependsOn ${torchaudio.dependsOn.join(", ")}`);
      const others = list.filter((v) => v.dependsOn[0] === pytorch.name && v.name !== torchaudio.name);
      return { pytorch, torchaudio, others };
    });
}

/**
 * A Nix expression for a nixpkgs function that imports the stand-in nixpkgs imitating the real revision `pin` (one
 * of tests/fixtures/stand-in-nixpkgs/pins.nix: its versions, package sets and torch/torchaudio formal arguments).
 * `versions` overrides the torch/torchaudio versions it carries (to provoke a mismatch).
 */
export function standInNixpkgs(pin: string, versions?: { torch: string; torchaudio: string }, salt?: string): string {
  const v = versions
    ? ` versions = { torch = ${nixStr(versions.torch)}; torchaudio = ${nixStr(versions.torchaudio)}; };`
    : "";
  const s = salt === undefined ? "" : ` salt = ${nixStr(salt)};`;
  return `(args: import ${nixPath(STAND_IN_NIXPKGS)} (args // { standIn = { pin = ${nixStr(pin)};${v}${s} }; }))`;
}

/**
 * Nix options that make this machine declare every ISA's gccarch system feature, for building STAND-IN variants:
 * their derivations require the feature (pkgs/variant-attrs.nix), as real ones do, but run no code of that ISA, so
 * declaring it here lies about nothing they execute. Tests of the refusal itself leave it out (tests/isa-features.test.ts).
 */
export const STAND_IN_BUILDER_FEATURES = ["--option", "extra-system-features", [...new Set(catalog.isas.map(gccarchFeature))].join(" ")];

/** `import FILE { variantMatrixNixpkgs = NIXPKGS_EXPR; }` (a `.flox/pkgs` wrapper's one argument). */
export function importVariant(file: string, nixpkgsExpr: string): string {
  return `(import ${nixPath(file)} { ${WRAPPER_NIXPKGS_ARG} = ${nixpkgsExpr}; })`;
}

function lines(s: string): string[] {
  return s
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** A nixpkgs checkout directory whose default.nix is the stand-in of `pin` (with `overrides` of its facts). */
export function standInCheckout(pin: string, overrides: Record<string, unknown> = {}, opts: { gitRevision?: string | null; dir?: string } = {}): string {
  const dir = opts.dir ?? path.join(tempDir("vm-pin-"), "nixpkgs");
  mkdirSync(dir, { recursive: true });
  const nixOverrides = Object.entries(overrides)
    .map(([k, v]) => `${k} = ${Array.isArray(v) ? `[ ${v.map((x) => JSON.stringify(x)).join(" ")} ]` : JSON.stringify(v)};`)
    .join(" ");
  writeFileSync(
    path.join(dir, "default.nix"),
    `# stand-in nixpkgs of ${pin} (tests/fixtures/stand-in-nixpkgs)\n` +
      `args: import ${STAND_IN_NIXPKGS} (args // { standIn = { pin = "${pin}"; pinOverrides = { ${nixOverrides} }; }; })\n`,
  );
  const rev = opts.gitRevision === undefined ? pin : opts.gitRevision;
  if (rev !== null) writeFileSync(path.join(dir, ".git-revision"), `${rev}\n`);
  return dir;
}

/**
 * nixEvalJson with `--read-write-mode`: each `drvPath` the expression forces is also written to the store (its .drv
 * and those of its inputs), as `nix-instantiate` of that derivation writes them. One process evaluates and
 * instantiates many derivations, which nix-store can then query.
 */
export function nixEvalJsonWritingDrvs<T = unknown>(expr: string, opts: RunOptions = {}): T {
  return JSON.parse(runNix("nix-instantiate", ["--eval", "--strict", "--json", "--read-write-mode", "-E", expr], opts)) as T;
}

/**
 * A temporary directory for a test whose Nix builds write markers (`prefix…`, readable by the nixbld users), and in it
 * `marker/`, writable by them: a stand-in builder touches a file there, so the test sees which derivations were built.
 */
export function markedBuildDir(prefix: string): { dir: string; marker: string } {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o755);
  const marker = path.join(dir, "marker");
  mkdirSync(marker);
  chmodSync(marker, 0o777); // the builder runs as a nixbld user
  return { dir, marker };
}
