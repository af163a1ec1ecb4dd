/**
 * Words a reader can follow: every file name a comment of generator/, pkgs/ or bin/ gives (`jobs.ts`,
 * `driver/plan.ts`, `pkgs/nixpkgs.nix`) is the name of a file of this repository, and a function, type or constant it
 * names right after a file (`run.ts planFleet`, `model/wait.ts` `waitOf`) is in that file. ARCHITECTURE.md is held
 * to the same, its backquoted names too. A name of another project's tree (nixpkgs', flox's, node's, an upstream's)
 * or of a file the tool writes when it runs is listed below with who owns it; a placeholder (`NAME.nix`) is none.
 *
 * One meaning per name: "probe" is the GPU probe's word (verify/probe.py and what runs it); no identifier elsewhere
 * holds it.
 *
 * A name matches a file when it is the file's path from the repository's root or its last parts (`plan.ts`,
 * `model/plan.ts`, `generator/model/plan.ts`); tests/fixtures/ are stand-ins of other trees, so a name there counts
 * only by its full path.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { commentsOf } from "./helpers/comments.ts";
import { ROOT } from "./helpers/cli.ts";

/** Directories of the checkout that are no source: dependencies, outputs, git's own. */
const NOT_SOURCE = new Set([".git", "node_modules", "dist", "logs", "result"]);

/** Every file of the checkout (outside NOT_SOURCE), as paths from the root. */
function repositoryFiles(dir = ROOT): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (NOT_SOURCE.has(n) || n.startsWith("result-")) return [];
    return statSync(p).isDirectory() ? repositoryFiles(p) : [relative(ROOT, p)];
  });
}

/**
 * Names that no file of this repository has, by who owns them. Each is named in a comment (a test below holds that
 * every one still is, and that none is a name of ours, which would need no listing).
 */
const NAMED_ELSEWHERE: Readonly<Record<string, readonly string[]>> = {
  "nixpkgs' tree (NixOS/nixpkgs), named with the path nixpkgs gives it": [
    "_cuda/db/bootstrap/cuda.nix", "_cuda/lib/cuda.nix", "_cuda/lib/flags.nix", "_cuda/lib/redist.nix",
    "all-packages.nix", "backendStdenv/default.nix", "packages/backendStdenv.nix", "bitsandbytes/default.nix",
    "flash-attn/default.nix", "vllm/default.nix", "xformers/default.nix", "torchaudio/default.nix",
    "torchvision/default.nix", "source/default.nix", "torch/source/default.nix", "source/src.nix", "nccl.nix",
    "lib/minfeatures.nix", "lib/minver.nix", "minver.nix", "lib/systems/architectures.nix", "release-cuda.nix",
    "cuda-packages.nix", "python/wrapper.nix", "package.nix",
    "default.nix", // the root file of nixpkgs' tree (and of numtide/nix-gl-host's)
  ],
  "flox/flox's tree": [
    "assets/environment-interpreter/common/etc/profile.d/0800_cuda.sh", "0800_cuda.sh",
    "0100_common-run-mode-paths.sh", "0101_common-dev-mode-additional-paths.sh", "cli/flox/doc/flox-build.md",
    "package-builder/nef/lib/mkOverlay.nix", "instantiate.nix",
    "test_data/manually_generated/prior_release_baselines/plain/manifest.lock",
  ],
  "numtide/nix-gl-host's tree": ["src/nixglhost.py", "src/nixglhost_test.py", "nixglhost.py"],
  "numtide/nix-fast-build's tree": ["build.py", "processes.py", "log_format.py"],
  "nixos-cuda/infra's tree": ["hosts/hydra/cache.nix", "hosts/hydra/hydra/builders.nix"],
  "pytorch/pytorch's tree and torch's wheel": ["RELEASE.md", "_get_started/version-compatibility.md", "torch/utils/cpp_extension.py"],
  "yargs' package (node_modules/yargs)": [
    "build/lib/command.js", "build/lib/usage.js", "build/lib/yargs-factory.js", "command.js", "yargs/lib/platform-shims/esm.mjs",
  ],
  "other upstreams' trees, each named with its owner beside it": [
    "GRAVITON_VERIFICATION.md", // andikaseptiadi/local-code-model
    "revisions.json", // fzakaria/nixpkgs-multiverse
    "op_builder/builder.py", // deepspeedai/DeepSpeed
    "setup.py", // a Python package's own (flash-attn, xformers, DeepSpeed)
    "cpu/detect.py", // archspec
    "overlays/fixes.nix", // graham33/nixos-dgx-spark
    "bitsandbytes/cextension.py", "xformers/_cpp_lib.py", // the installed Python packages probe.py reads
    "__init__.py", // Python's package marker
    "pytorch-python311-cuda12_9-sm103-armv9.nix", // barstoolbluz/build-pytorch's .flox/pkgs/
  ],
  "files variant-matrix writes when it runs, or a user's own (not committed)": [
    "local-catalog.json", "report.json", "cli.js", "dist/cli.js", "cache-check.json", "pin-check.json",
    "newest-nixpkgs.json", "spec.json", "probe.json", "builder.json", "members.json", "out/members.json",
  ],
  "a file a user could write, named to say what it would do": [".flox/pkgs/nixpkgs.nix"],
  "code that reads like a file name (a property of an object)": ["outputOptions.json", "attempt.nix"],
  "a program's argument in an example": ["x.py"],
  "a path that no longer exists, named on purpose (a matrix file written before the move still imports it)": ["generator/schema.ts"],
};
const elsewhere = new Set(Object.values(NAMED_ELSEWHERE).flat());
/**
 * A path of nixpkgs' tree, named from its root: below `pkgs/<dir>/` (this repository's pkgs/ holds files only) or
 * `nixos/`.
 */
const NIXPKGS_PATH = /^(?:pkgs\/[^/]+\/|nixos\/)/;
/** Words that stand for a part of a path (`.flox/pkgs/NAME.nix`, `matrix-HASH.mjs`, `FACTS.json`). */
const PLACEHOLDER = /(?:^|[^\w])(?:NAME|HASH|RUN|DIR|PKGS_DIR|ROOT|FACTS|PROMISE|PROBE|pkgsDir|runDir|logsRoot)(?![\w])/;
/** A file name: path parts, then one of these extensions (not followed by more of a name: `programs.nix-required`). */
const FILE_NAME = /(?<![\w.\/-])([\w.\/-]*\w\.(?:ts|mjs|cjs|js|nix|py|njk|json|md|sh|lock))(?![\w-])/g;
/** What may follow a file name to name something in it: `` `ident` `` (any), or a camelCase identifier. */
const NAMED_IN_FILE = /^`?(?:'s)? (?:`([A-Za-z_]\w*)`|([a-z]+[A-Z]\w*))/;

const files = repositoryFiles();
const fixture = (p: string) => p.startsWith("tests/fixtures/");
/** The files of the repository a name may mean (its full path, or its last parts outside tests/fixtures/). */
function filesNamed(name: string): string[] {
  return files.filter((p) => p === name || (!fixture(p) && p.endsWith(`/${name}`)));
}
const texts = new Map<string, string>();
/** The text of the repository's file `p`, read once. */
const textOf = (p: string) => texts.get(p) ?? texts.set(p, readFileSync(join(ROOT, p), "utf8")).get(p)!;

/** A name as matched, less what only leads to it: `./`, `../`, an elision (`...`) or a root (`/`). */
const bare = (name: string) => name.replace(/^(?:\.\.\.|\.\.?\/|\/)+/, "");

/**
 * The problems of the file names in `text` (a comment, or a page), as "NAME: why": a name no file of the repository
 * has and that is neither listed in NAMED_ELSEWHERE nor a placeholder, or an identifier named right after a file
 * that no file of that name holds.
 */
function problemsIn(text: string): string[] {
  const flat = text.replace(/\n\s*(?:\/\/|\*|#)?\s*/g, " ");
  const found: string[] = [];
  for (const m of flat.matchAll(FILE_NAME)) {
    const name = bare(m[1]!);
    if (PLACEHOLDER.test(name) || elsewhere.has(name) || NIXPKGS_PATH.test(name)) continue;
    const named = filesNamed(name);
    if (named.length === 0) {
      found.push(`${name}: no file of the repository has this name`);
      continue;
    }
    const after = NAMED_IN_FILE.exec(flat.slice(m.index! + m[0].length));
    const ident = after?.[1] ?? after?.[2];
    if (ident && !named.some((p) => new RegExp(`\\b${ident}\\b`).test(textOf(p))))
      found.push(`${name} ${ident}: ${ident} is not in ${named.join(", ")}`);
  }
  return found;
}


/** The files whose comments are read: generator/'s sources and templates, pkgs/ (but the generated bundle), bin/. */
const commented = files.filter(
  (p) => /^(generator|pkgs|bin)\//.test(p) && /\.(ts|mjs|js|nix|py|njk)$/.test(p) && p !== "pkgs/verify-compare.mjs",
);

/** The comments of each file of `commented`, by path. */
const comments = new Map(commented.map((p) => [p, commentsOf(join(ROOT, p))]));

test("every file a comment of generator/, pkgs/ or bin/ names is a file of this repository, with what it names after it", () => {
  const read = ["pkgs/nixpkgs.nix", "bin/build-dist.mjs", "generator/verify/probe.py"];
  assert.ok(commented.length > 120 && read.every((p) => commented.includes(p)), "read the sources");
  const found = commented.flatMap((p) => comments.get(p)!.flatMap((c) => problemsIn(c).map((x) => `${p}: ${x}`)));
  assert.equal(found, []);
});

test("the names listed as another tree's are named in a comment, and none is a name of this repository", () => {
  const all = [...comments.values()].flat().join("\n");
  const named = new Set([...all.replace(/\n\s*(?:\/\/|\*|#)?\s*/g, " ").matchAll(FILE_NAME)].map((m) => bare(m[1]!)));
  const unused = [...elsewhere].filter((n) => !named.has(n));
  assert.equal(unused, [], "listed but named by no comment: drop them from NAMED_ELSEWHERE");
  assert.equal([...elsewhere].filter((n) => filesNamed(n).length > 0), [], "a file of this repository has the name");
});

test("ARCHITECTURE.md names files that exist, and what it names in them is there", () => {
  const page = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
  assert.equal(problemsIn(page), []);
  // Every test the page cites runs (tests/NAME.test.ts), and it cites some.
  const cited = [...page.matchAll(/tests\/[\w-]+\.test\.ts/g)].map((m) => m[0]);
  assert.ok(cited.length > 20);
  assert.equal(cited.filter((t) => !files.includes(t)), []);
});

/**
 * The identifiers of TypeScript `text` (names declared or used, from its syntax tree) that hold "probe" in any case:
 * the word is the GPU probe's (generator/verify/probe.py and what runs it), not Nix's store questions or preflight's.
 */
function probeIdentifiers(file: string, text: string): string[] {
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && /probe/i.test(node.text)) found.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false));
  return [...found];
}

test('"probe" names the GPU probe only: no identifier holds it outside verify/ and the commands that run verify', () => {
  const runsTheProbe = (p: string) => /^generator\/(verify\/|commands\/verify[\w-]*\.ts$)/.test(p);
  // Only a file whose text holds the word is parsed.
  const sources = files.filter((p) => p.startsWith("generator/") && p.endsWith(".ts") && /probe/i.test(textOf(p)));
  assert.ok(sources.some((p) => runsTheProbe(p) && probeIdentifiers(p, textOf(p)).includes("runProbe")), "the probe's own are found");
  assert.equal(sources.filter((p) => !runsTheProbe(p)).flatMap((p) => probeIdentifiers(p, textOf(p)).map((i) => `${p}: ${i}`)), []);
  // The wrong case fails: the store's and preflight's former names are caught; a comment or a string is not.
  const before = "export interface CacheProbe {}\nconst m = probeCached(t);\nnew Probes(h).nixVersion();";
  assert.equal(probeIdentifiers("store.ts", before), ["CacheProbe", "probeCached", "Probes"]);
  assert.equal(probeIdentifiers("x.ts", '// probe\nconst s = "--probe-store";'), []);
});

test("the reading catches a stale name, and passes a true one", () => {
  // Names of before the moves, and a function in the wrong file.
  assert.equal(problemsIn("// the jobs rule (jobs.ts coresForPackage)"), ["jobs.ts: no file of the repository has this name"]);
  assert.equal(problemsIn("/** see detect/host.ts readHost */"), ["detect/host.ts: no file of the repository has this name"]);
  assert.equal(problemsIn("# driver/plan.ts's estimate"), ["driver/plan.ts: no file of the repository has this name"]);
  assert.equal(problemsIn("// the deciding is job.ts planFleet"), ["job.ts planFleet: planFleet is not in generator/driver/job.ts"]);
  assert.equal(problemsIn("// (facts.ts `CheckerFacts`)"), ["facts.ts CheckerFacts: CheckerFacts is not in generator/pin/facts.ts"]);
  // A comment that runs over two lines is read as one text.
  assert.equal(problemsIn("// through\n// processes.ts `ProcessGroups`"), ["processes.ts: no file of the repository has this name"]);
  // True names: full, partial and bare paths, with what they name; another tree's listed name; placeholders; words
  // after a name that are no identifier.
  assert.equal(
    problemsIn(
      "// model/plan.ts `simulate`, wait.ts waitOf, generator/model/concurrency.ts startBuilds, plan.ts says, " +
        "pkgs/nixpkgs.nix imports; nixpkgs' all-packages.nix; .flox/pkgs/NAME.nix, matrix-HASH.mjs; programs.nix-required-mounts",
    ),
    [],
  );
  // A fixture's file counts only by its full path: a stand-in of another tree's file does not make its name ours.
  assert.ok(files.includes("tests/fixtures/stand-in-nixpkgs/torch-2.12.nix"));
  assert.equal(problemsIn("// tests/fixtures/stand-in-nixpkgs/torch-2.12.nix"), []);
  const partial = "stand-in-nixpkgs/torch-2.12.nix";
  assert.equal(problemsIn(`// ${partial}`), [`${partial}: no file of the repository has this name`]);
});

test.run();
