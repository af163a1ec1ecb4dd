/**
 * The one answer to "are the generated files current?": `compareGenerated` compares the files on disk with what the
 * inputs give now, by content (SHA-256), and says for each file that differs what a generate would do with it and
 * why it differs. Every command asks it: `generate` (what to write; nothing when nothing differs), `generate --check`
 * (every file, with stale generated files and temporaries), and `build`, `eval` and `publish` (generated-state.ts:
 * the files Nix reads for their selection). (The dist hash of bin/build-dist.mjs is another question: whether the
 * compiled code is current.)
 *
 * What the inputs give now comes from the stamp of the last generate (stamp.ts) when it was taken of the same inputs
 * (a pure cache: the same hashes a render would give, without loading the catalog or rendering), else from a render.
 * The stamp also tells why a file differs (`FileDifference.cause`): not what the last generate wrote (edited by hand),
 * or what it wrote while an input changed since (`Freshness.changed` names which).
 *
 * What is ours in a managed directory (`MANAGED_DIRS`) when the render does not hold it: a file with the generated
 * header (`GENERATED_MARK` within its first five lines), an empty file of the directory's extension (what an
 * interrupted writer of an older version left: nothing hand-written is empty), and anywhere we write, our
 * temporaries. A hand-written file in `.flox/pkgs/` is never ours.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { GENERATED_MARK } from "../nix-literals.ts";
import type { FileMap } from "./render/index.ts";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import { changedInputs, inputKeys, readStamp, sha256, type InputKeys, type InputName, type Stamp } from "./stamp.ts";

/** Directories (repo-relative) whose generated files of the given extension are ours to remove when stale. */
const MANAGED_DIRS: { dir: string; ext: string }[] = [
  { dir: ".flox/pkgs", ext: ".nix" },
  { dir: "docs/matrix", ext: ".md" },
];

/** Our temporaries (write.ts tmpName): `.NAME.vm-tmp-PID-RANDOM`. */
const TMP_RE = /^\..+\.vm-tmp-\d+-[0-9a-z]+$/;
/** Temporaries of earlier versions: `NAME.tmp-PID` beside a file NAME that generate writes. */
const LEGACY_TMP_RE = /^(.+)\.tmp-\d+$/;

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw e;
  }
}

function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** True when `content` carries the generated header near its top. */
export function isGenerated(content: string): boolean {
  return content.split("\n", 5).some((l) => l.includes(GENERATED_MARK));
}

/**
 * Files under the managed directories of `root` that `keep` does not hold and that are ours: generated (header) or
 * empty. Repo-relative, sorted.
 */
function staleFiles(root: string, keep: ReadonlySet<string>): string[] {
  const stale: string[] = [];
  for (const { dir, ext } of MANAGED_DIRS)
    for (const n of listOrEmpty(join(root, dir))) {
      if (!n.endsWith(ext)) continue;
      const rel = `${dir}/${n}`;
      if (keep.has(rel)) continue;
      const content = readOrNull(join(root, rel));
      if (content !== null && (content === "" || isGenerated(content))) stale.push(rel);
    }
  return stale.sort();
}

/**
 * Temporaries an interrupted run left in the directories the files `rels` go in (and the managed ones): our
 * `.NAME.vm-tmp-PID-…` files, and `NAME.tmp-PID` beside a file NAME of `rels` (an earlier version's naming).
 * Repo-relative, sorted. Only safe to remove while holding the output's lock (output-lock.ts lockOutput).
 */
export function temporaryFiles(root: string, rels: Iterable<string>): string[] {
  const byDir = new Map<string, Set<string>>();
  for (const rel of rels) {
    const d = dirname(rel);
    if (!byDir.has(d)) byDir.set(d, new Set());
    byDir.get(d)!.add(basename(rel));
  }
  for (const { dir } of MANAGED_DIRS) if (!byDir.has(dir)) byDir.set(dir, new Set());
  const found: string[] = [];
  for (const [dir, names] of byDir)
    for (const n of listOrEmpty(join(root, dir))) {
      const legacy = LEGACY_TMP_RE.exec(n);
      if (TMP_RE.test(n) || (legacy && names.has(legacy[1]!))) found.push(dir === "." ? n : `${dir}/${n}`);
    }
  return found.sort();
}

/** The names in the managed directories of `root` (repo-relative, sorted). */
export function managedListing(root: string): string[] {
  return MANAGED_DIRS.flatMap(({ dir }) => listOrEmpty(join(root, dir)).map((n) => `${dir}/${n}`)).sort();
}

/** Each file's content hash (SHA-256 hex), by repo-relative path, in the map's order. */
export function hashesOf(files: FileMap): Map<string, string> {
  return new Map([...files].map(([rel, content]) => [rel, sha256(content)]));
}

/** What the comparison knows of the last generate of an output directory: its stamp, and the inputs' keys now. */
export interface LastGenerate {
  /** The stamp the last generate left (stamp.ts), or null when none is recorded here. */
  stamp: Stamp | null;
  inputs: InputKeys;
}

/** The last generate of `root` from `matrixFile` (its stamp) and the keys of the inputs now (stamp.ts inputKeys). */
export function lastGenerate(root: string, matrixFile: string): LastGenerate {
  return { stamp: readStamp(root), inputs: inputKeys(matrixFile) };
}

/** What the inputs give now: each compared file's content hash, from the stamp or from a render. */
export interface Expected {
  /** Repo-relative path → SHA-256 hex of what the inputs give. */
  hashes: ReadonlyMap<string, string>;
  /** True when `hashes` holds every file of the render (the whole tree: stale files and temporaries are looked for). */
  whole: boolean;
  /** Where the hashes came from. */
  from: "stamp" | "render";
}

/**
 * The stamp in front of the render: what the inputs give now, when the stamp of the last generate was taken of the
 * same inputs (every key equal) and may stand in for a render (`cacheable`); else null (render).
 * @param only the files to compare (default: all of them, the whole tree)
 */
export function expectedFromStamp(last: LastGenerate, only?: readonly string[]): Expected | null {
  const s = last.stamp;
  if (!s || !s.cacheable || changedInputs(s.inputs, last.inputs).length) return null;
  const all = new Map(Object.entries(s.files));
  if (!only) return { hashes: all, whole: true, from: "stamp" };
  const hashes = new Map<string, string>();
  for (const rel of only) {
    const h = all.get(rel);
    if (h === undefined) return null; // not a file of the render: the stamp cannot say, the render will
    hashes.set(rel, h);
  }
  return { hashes, whole: false, from: "stamp" };
}

/**
 * What the inputs give now, from a render: the hashes of `files` (all of them: the whole tree; or only those named).
 * @throws Error when `only` names a file the render does not hold (a caller's mistake)
 */
export function expectedFromRender(files: FileMap, only?: readonly string[]): Expected {
  if (!only) return { hashes: hashesOf(files), whole: true, from: "render" };
  const hashes = new Map<string, string>();
  for (const rel of only) {
    const content = files.get(rel);
    if (content === undefined) throw new Error(`expectedFromRender: ${rel} is not a file of the render`);
    hashes.set(rel, sha256(content));
  }
  return { hashes, whole: false, from: "render" };
}

/**
 * One file that is not what the inputs give now.
 * - `kind`: what a generate does with it: `missing` (write it), `differs` (rewrite it), `stale` (a generated file of
 *   a managed directory the render no longer holds: remove it), `temporary` (left by an interrupted run: remove it).
 * - `cause`, as far as the stamp of the last generate tells: `edited` (the file is not what the last generate wrote:
 *   edited by hand or by another tool), `removed` (the last generate wrote it and it is gone), `inputs` (it is what
 *   the last generate wrote, or was not among its files, and an input changed since: `Freshness.changed`),
 *   `interrupted` (a temporary), `unknown` (no stamp here, or the stamp knows nothing of it and no input changed).
 */
export interface FileDifference {
  /** Repo-relative path. */
  file: string;
  kind: "missing" | "differs" | "stale" | "temporary";
  cause: "edited" | "removed" | "inputs" | "interrupted" | "unknown";
}

/** The one comparison's answer. */
export interface Freshness {
  /** True when no compared file differs (and, for the whole tree, nothing stale and no temporary is there). */
  current: boolean;
  /** The files that differ: `missing` and `differs` in the order compared, then `stale`, then `temporary` (each sorted). */
  differences: FileDifference[];
  /** Files compared and found equal. */
  unchanged: number;
  /** Files compared. */
  compared: number;
  /** The inputs that changed since the last generate (stamp.ts InputName, in the order matrix, local, generator); null when no stamp is recorded. */
  changed: InputName[] | null;
  /** Where what the inputs give came from: the stamp (no render) or a render. */
  from: Expected["from"];
}

/**
 * Compare the generated files under `root` with what the inputs give (`expected`), by content. With the whole tree,
 * the managed directories are searched for stale generated files and temporaries too. Reads files; writes nothing.
 * @param last the last generate's stamp and the inputs' keys now, only to say why each file differs (null: not known)
 */
export function compareGenerated(root: string, expected: Expected, last: LastGenerate | null): Freshness {
  const stamped = last?.stamp?.files ?? null;
  const changed = last?.stamp ? changedInputs(last.stamp.inputs, last.inputs) : null;
  // One readdir per directory instead of a failed read per missing file (an ENOENT throw costs more than the read).
  const listings = new Map<string, Set<string>>();
  const read = (rel: string) => {
    const path = join(root, rel);
    const dir = dirname(path);
    let names = listings.get(dir);
    if (!names) listings.set(dir, (names = new Set(listOrEmpty(dir))));
    return names.has(basename(path)) ? readOrNull(path) : null;
  };
  const causeOf = (rel: string, disk: string | null): FileDifference["cause"] => {
    const was = stamped?.[rel];
    if (was !== undefined && disk === null) return "removed";
    if (was !== undefined && sha256(disk!) !== was) return "edited";
    return changed?.length ? "inputs" : "unknown";
  };
  const differences: FileDifference[] = [];
  let unchanged = 0;
  for (const [rel, hash] of expected.hashes) {
    const disk = read(rel);
    if (disk !== null && sha256(disk) === hash) unchanged++;
    else differences.push({ file: rel, kind: disk === null ? "missing" : "differs", cause: causeOf(rel, disk) });
  }
  if (expected.whole) {
    const keep = new Set(expected.hashes.keys());
    for (const rel of staleFiles(root, keep)) differences.push({ file: rel, kind: "stale", cause: causeOf(rel, readOrNull(join(root, rel))) });
    for (const rel of temporaryFiles(root, keep)) differences.push({ file: rel, kind: "temporary", cause: "interrupted" });
  }
  return { current: differences.length === 0, differences, unchanged, compared: expected.hashes.size, changed, from: expected.from };
}

/**
 * Why the files differ, in words, for a refusal or `generate --check`: the inputs that changed since the last
 * generate ("matrix.ts changed since the last generate"), the generated files edited by hand ("a generated file was
 * edited by hand: FILE"), or that no generate is recorded here. Paths are shown relative to the working directory.
 * @param matrixFile the matrix the inputs were read from (absolute)
 */
export function freshnessReason(f: Freshness, matrixFile: string): string {
  const shown = (file: string) => relative(process.cwd(), file) || file;
  const listed = (ds: FileDifference[]) => ds.slice(0, 3).map((d) => d.file).join(", ") + (ds.length > 3 ? ` and ${ds.length - 3} more` : "");
  const edited = f.differences.filter((d) => d.cause === "edited");
  const removed = f.differences.filter((d) => d.cause === "removed");
  const parts: string[] = [];
  const names: Record<InputName, string> = {
    matrix: shown(matrixFile),
    local: shown(join(dirname(matrixFile), LOCAL_CATALOG_FILE)),
    generator: "the generator or its catalog",
  };
  if (f.changed?.length) parts.push(`${f.changed.map((k) => names[k]).join(" and ")} changed since the last generate`);
  if (edited.length) parts.push(`${edited.length === 1 ? "a generated file was" : `${edited.length} generated files were`} edited by hand: ${listed(edited)}`);
  if (removed.length) parts.push(`${removed.length === 1 ? "a generated file was" : `${removed.length} generated files were`} removed: ${listed(removed)}`);
  if (f.differences.some((d) => d.kind === "temporary")) parts.push("an interrupted generate left temporaries");
  if (parts.length) return parts.join("; ");
  if (f.changed === null)
    return f.differences.every((d) => d.kind === "missing") ? "they were never generated here" : "no generate here recorded what it wrote, so what changed is not known";
  return "what changed is not known";
}
