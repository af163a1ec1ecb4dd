/**
 * `generate` as two calls, plan then run (the shape of driver/build.ts): `planGenerate` compares the generated files
 * with what the inputs give now (freshness.ts, the one comparison, with the stamp in front of the render) and returns
 * the answer as data; `runGenerate` writes what differs and records the stamp. Neither prints: commands/generate.ts
 * takes the output's lock, handles signals and prints.
 *
 * planGenerate's steps:
 *  1. the stamp of the last generate, taken of the same inputs, stands in for the render: when it says every file
 *     is current (or `--check` only asks what differs), the matrix is not even loaded;
 *  2. else the project is loaded (MatrixError, exit 2), a matrix that yields no variant refused (UsageError, exit 2:
 *     it would delete every generated file), the environments' extras close to one the catalog knows noted, every
 *     file rendered and compared.
 */
import { relative } from "node:path";
import { UsageError } from "../errors.ts";
import type { Project } from "../matrix/project.ts";
import type { FileMap } from "./render/index.ts";
import { compareGenerated, expectedFromRender, expectedFromStamp, hashesOf, lastGenerate, type Freshness, type LastGenerate } from "./freshness.ts";
import { clearStamp, writeStamp } from "./stamp.ts";
import type { SyncProgress } from "./write.ts";

/** What planGenerate is given. */
export interface GenerateOptions {
  /** The output directory (absolute). */
  root: string;
  /** The matrix file (absolute). */
  matrixFile: string;
  /** `--check`: compare only; runGenerate then writes nothing. */
  check: boolean;
}

/** What planGenerate decided: the comparison's answer, and (when it rendered) the project and its files. */
export interface GeneratePlan {
  options: GenerateOptions;
  /** The one comparison's answer for the whole tree (freshness.ts). */
  freshness: Freshness;
  /** The last generate's stamp and the inputs' keys now. */
  last: LastGenerate;
  /** The project and every file it renders; null when the stamp answered (nothing rendered). */
  rendered: { project: Project; files: FileMap } | null;
  /** Warnings, unwrapped (an environment's extra close to one the catalog knows: a likely typo). */
  warnings: string[];
}

/** What runGenerate did. Paths are repo-relative, sorted. */
export interface GenerateResult {
  /** Files created or changed (with --check: that differ). */
  written: string[];
  /** Stale generated files removed (with --check: found). */
  removed: string[];
  /** Temporaries of an interrupted run removed (with --check: found). */
  temporaries: string[];
  unchanged: number;
  /** Variant files renamed, not dropped (a second release puts the release in each name): [old, new]. */
  renamed: [string, string][];
  /** Packages asked for that yield no variant, with the first reason. */
  withoutVariant: { package: string; dropped: number; reason: string }[];
  /**
   * A writing run's generated files git does not track (`flox build` evaluates a store copy of tracked files only);
   * null with --check, with nothing rendered, or outside a git checkout (git-tracked.ts untrackedGenerated).
   */
  untracked: string[] | null;
}

/**
 * Plan a generate: compare the tree with what the inputs give (the module comment's steps). Reads; writes nothing.
 * @throws MatrixError (exit 2) for a matrix that does not load or validate
 * @throws UsageError (exit 2) for a matrix that yields no variant
 */
export async function planGenerate(o: GenerateOptions): Promise<GeneratePlan> {
  const last = lastGenerate(o.root, o.matrixFile);
  const cached = expectedFromStamp(last);
  if (cached) {
    const freshness = compareGenerated(o.root, cached, last);
    if (freshness.current || o.check) return { options: o, freshness, last, rendered: null, warnings: [] };
  }
  const [{ loadProject }, { renderAll }, { noVariantMessage }, { extraHints, extraHintText }] = await Promise.all([
    import("../matrix/project.ts"),
    import("./render/index.ts"),
    import("../matrix/matrix-yield.ts"),
    import("../matrix/extra-hints.ts"),
  ]);
  const project = await loadProject({ matrixFile: o.matrixFile });
  // A matrix that yields no variant would delete every generated file and write `systems = []`: refuse (exit 2).
  const shown = relative(process.cwd(), project.matrixFile);
  const empty = noVariantMessage(project.variants, project.excluded, shown && !shown.startsWith("..") ? shown : project.matrixFile);
  if (empty) throw new UsageError(empty);
  // A typo in an environment's extras shows only when Nix evaluates the environment: say it now.
  const warnings = extraHints(project.catalog, project.matrix.environments).map(extraHintText);
  const files = renderAll(project);
  const freshness = compareGenerated(o.root, expectedFromRender(files), last);
  return { options: o, freshness, last, rendered: { project, files }, warnings };
}

/**
 * Run a plan: with --check, or when nothing differs, write nothing; else remove the stamp, write what differs
 * (write.ts syncFiles: each file whole through a rename), then record the stamp. A tree found current by a render
 * records its stamp too (the cache in front of the next comparison).
 * @param progress filled while files are written; a signal handler stops the writes through it
 * @throws SyncInterrupted when a signal stopped the writes (every file whole, no temporary left, no stamp)
 */
export async function runGenerate(plan: GeneratePlan, progress: SyncProgress): Promise<GenerateResult> {
  const { options: o, freshness: f, rendered } = plan;
  const of = (kind: Freshness["differences"][number]["kind"], also?: "missing") =>
    f.differences.filter((d) => d.kind === kind || d.kind === also).map((d) => d.file).sort();
  const shown = { written: of("differs", "missing"), removed: of("stale"), temporaries: of("temporary"), unchanged: f.unchanged };
  if (!rendered) return { ...shown, renamed: [], withoutVariant: [], untracked: null };
  const { files, project } = rendered;
  const record = async () => writeStamp(o.root, plan.last.inputs, hashesOf(files), (await import("../matrix/load-matrix.ts")).isSingleFileMatrix(o.matrixFile));
  if (o.check) {
    if (f.current) await record();
    return { ...shown, renamed: [], withoutVariant: [], untracked: null };
  }
  const [{ syncFiles }, { renamedFiles, packagesWithoutVariant }, { untrackedGenerated }] = await Promise.all([
    import("./write.ts"),
    import("../matrix/matrix-yield.ts"),
    import("./git-tracked.ts"),
  ]);
  if (!f.current) clearStamp(o.root);
  const r = await syncFiles(o.root, files, { progress, freshness: f });
  await record();
  return {
    ...r,
    renamed: renamedFiles(r.removed, r.written),
    withoutVariant: packagesWithoutVariant(project.matrix, project.variants, project.excluded),
    untracked: await untrackedGenerated(o.root, [...files.keys()]),
  };
}
