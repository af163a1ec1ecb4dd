/**
 * A variant's proof, and how a binary cache says it has none (so that a teammate who installs from a cache reads what
 * was checked, without a GPU).
 *
 * - The proof: the output of the variant's static check, `tests.static` of its own file (pkgs/checks.nix `static`,
 *   the attribute `build` builds after each variant by default: targets.ts checkTargets), a store path holding `probe.json` (probe.py
 *   `--cuobjdump`, run in the sandbox), `report.txt` (one line per promise, verify/check-main.ts) and `builder.json`
 *   (the Nix system, host name, kernel and CPU the check ran on). Nix makes that path valid only when the check
 *   succeeded, so "proven" is: the check's output path, read off its derivation (`nix-instantiate FILE -A
 *   tests.static`), is valid in the store.
 * - Unproven in a cache: `publish --allow-unproven` copies, beside the variant, a small text store path whose name and
 *   contents depend only on the variant's name and output path (unprovenMarker): `builtins.toFile
 *   "variant-matrix-unproven-NAME" TEXT`. Its path is computed here without Nix (textStorePath, Nix's own formula for
 *   a text path) and is signed and checked back like the rest, so any cache Nix can substitute from (file://, http,
 *   s3, ssh) can say it, and a consumer tells "published unproven" (the marker substitutes) from "no proof
 *   published" (neither the proof nor the marker does).
 * - On a consumer (install): the proof's path is computed the same way and only substituted (`nix-store --realise
 *   PATH` of an output path, not of its derivation: Nix fetches it or fails, it never builds it), then read
 *   (readProof): the promise's lines, the cuobjdump that read the libraries, the builder.
 *
 * Child processes go through generator/process.ts (runTool); nothing here prints.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import pLimit from "p-limit";
import { runTool } from "../process.ts";
import { nixString } from "../nix-literals.ts";
import { nixBase32 } from "./cache-signatures.ts";
import { drvOutputs, nixErrorMessage, until, type NixOptions } from "./store.ts";

/** The attribute of a variant's file that is its static check (pkgs/checks.nix, as release.nix `tests.NAME.static`). */
export const PROOF_ATTR = "tests.static";

/**
 * What the static check of one variant gives: its derivation and output path, and the output paths of the variant its
 * file gives now (whose check it is; [] when Nix could not say), or why Nix could not say.
 */
export type ProofPath = { drv: string; out: string; variantOuts: string[] } | { error: string };

/** `--option NAME VALUE` for each pair. */
function optionArgs(nixOptions: NixOptions): string[] {
  return nixOptions.flatMap(([k, v]) => ["--option", k, v]);
}

/**
 * The static check's derivation and output path of each variant file (`nix-instantiate FILE -A "" -A tests.static`:
 * the variant's derivation, then its check's; outputs read off the .drv files, store.ts drvOutputs; else `nix-store -q
 * --outputs`), 8 files at a time.
 * @param files name → absolute path of the variant's `.nix` file
 * @param deadline epoch ms: a call still running then is stopped (its file gets an error saying so)
 * @returns name → ProofPath (an error is Nix's message as one line, e.g. a file with no `tests.static`)
 */
export async function proofPaths(files: readonly { name: string; file: string }[], nixOptions: NixOptions = [], deadline?: number): Promise<Map<string, ProofPath>> {
  const limit = pLimit(8);
  const one = async (file: string): Promise<ProofPath> => {
    const r = await runTool(["nix-instantiate", ...optionArgs(nixOptions), file, "-A", "", "-A", PROOF_ATTR], until(deadline));
    if (r.stopped) return { error: r.stopped };
    const drvs = r.stdout.split("\n").filter((l) => l.endsWith(".drv"));
    const drv = drvs.at(-1);
    if (r.code !== 0 || !drv) return { error: nixErrorMessage(r.stderr, `nix-instantiate ${file} -A ${PROOF_ATTR} exited with ${r.code}`) };
    const variantOuts = drvs.length === 2 ? (drvOutputs(drvs[0]!) ?? []) : [];
    const outs = drvOutputs(drv);
    if (outs?.[0]) return { drv, out: outs[0], variantOuts };
    const q = await runTool(["nix-store", ...optionArgs(nixOptions), "-q", "--outputs", drv], until(deadline));
    const out = q.stdout.split("\n").find(Boolean);
    return q.code === 0 && out ? { drv, out, variantOuts } : { error: nixErrorMessage(q.stderr, `nix-store -q --outputs ${drv} exited with ${q.code}`) };
  };
  const answers = await Promise.all(files.map((f) => limit(() => one(f.file))));
  return new Map(files.map((f, i) => [f.name, answers[i]!]));
}

/** Which of `paths` are valid in this store (`nix-store --check-validity --print-invalid`, one call). */
export async function validStorePaths(paths: readonly string[], nixOptions: NixOptions = []): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const r = await runTool(["nix-store", ...optionArgs(nixOptions), "--check-validity", "--print-invalid", ...paths]);
  if (r.code !== 0) return new Set();
  const invalid = new Set(r.stdout.split("\n").filter(Boolean));
  return new Set(paths.filter((p) => !invalid.has(p)));
}

/** Whether one variant may be published, and why. */
export type VariantProof =
  | { name: string; state: "proven"; /** The check's output path (the proof). */ path: string }
  | { name: string; state: "unproven"; /** Why, in words (no check in its file, the check not built or failed). */ why: string; /** The check's output path when known. */ path: string | null };

/**
 * Judge each variant by its proof (the module comment): proven when its static check's output is valid in this store
 * and is the check of the very build `out` (the store path publish copies, read off its result link): a result link
 * left by an earlier build, before the file changed, is another build than the one the check proves.
 * @param files name → absolute path of the variant's `.nix` file, and `out` the build to publish
 */
export async function judgeProofs(files: readonly { name: string; file: string; out?: string }[], nixOptions: NixOptions = []): Promise<VariantProof[]> {
  const paths = await proofPaths(files, nixOptions);
  const outs = [...paths.values()].flatMap((p) => ("out" in p ? [p.out] : []));
  const valid = await validStorePaths(outs, nixOptions);
  return files.map(({ name, out }) => {
    const p = paths.get(name)!;
    if ("error" in p) return { name, state: "unproven", path: null, why: `its file gives no static check (-A ${PROOF_ATTR}): ${p.error}` };
    if (out && p.variantOuts.length && !p.variantOuts.includes(out))
      return { name, state: "unproven", path: p.out, why: `its result link is another build (${out}) than its file gives now (${p.variantOuts[0]}), and its static check proves that one: build ${name} again` };
    if (valid.has(p.out)) return { name, state: "proven", path: p.out };
    return { name, state: "unproven", path: p.out, why: `its static check has not passed here (${p.out} is not in the store: build it, or it failed)` };
  });
}

/** Nix's store directory (NIX_STORE_DIR, else /nix/store). */
function storeDir(): string {
  return (process.env.NIX_STORE_DIR ?? "/nix/store").replace(/\/+$/, "");
}

/**
 * The store path Nix gives a text file of `name` holding `text` with no references, as `builtins.toFile` makes it
 * (Nix's makeTextPath: sha256 of "text:sha256:HEX(sha256(text)):STOREDIR:NAME", folded to 20 bytes by XOR, in Nix's
 * base-32). Pure. tests/proof.test.ts holds it to Nix's own answer.
 */
export function textStorePath(name: string, text: string, dir = storeDir()): string {
  const inner = createHash("sha256").update(text).digest("hex");
  const full = createHash("sha256").update(`text:sha256:${inner}:${dir}:${name}`).digest();
  const folded = Buffer.alloc(20);
  for (let i = 0; i < full.length; i++) folded[i % 20]! ^= full[i]!;
  return `${dir}/${nixBase32(folded)}-${name}`;
}

/** The marker of a variant published without its proof: its store name, its text and its store path. */
export interface UnprovenMarker {
  name: string;
  text: string;
  path: string;
}

/**
 * The marker `publish --allow-unproven` copies beside `outPath` (the module comment): a text store path named
 * `variant-matrix-unproven-NAME` whose text names the variant and its output, so one marker says it of one build only.
 * Pure: a consumer computes the same path from the same two values.
 */
export function unprovenMarker(variant: string, outPath: string): UnprovenMarker {
  const name = `variant-matrix-unproven-${variant}`;
  const text = `${JSON.stringify({ unproven: variant, outPath, by: "variant-matrix publish --allow-unproven: its static check had not passed where it was published" })}\n`;
  return { name, text, path: textStorePath(name, text) };
}

/**
 * Put the marker in this store (`nix-instantiate --eval --read-write-mode -E 'builtins.toFile NAME TEXT'`).
 * @returns null when Nix made exactly `m.path`, else why not
 */
export async function addUnprovenMarker(m: UnprovenMarker, nixOptions: NixOptions = []): Promise<string | null> {
  const r = await runTool(["nix-instantiate", ...optionArgs(nixOptions), "--eval", "--read-write-mode", "-E", `builtins.toFile ${nixString(m.name)} ${nixString(m.text)}`]);
  if (r.code !== 0) return nixErrorMessage(r.stderr, `nix-instantiate exited with ${r.code}`);
  const made = r.stdout.trim().replace(/^"|"$/g, "");
  return made === m.path ? null : `Nix made ${made}, not the marker's path ${m.path}`;
}

/** What a proof says, read from its store path: the promise's lines, the cuobjdump that read the libraries, the builder. */
export interface ProofSummary {
  path: string;
  /** report.txt's lines (one per promise: ✓, ✗ or –, then the verdict line). */
  lines: string[];
  /** probe.json's `cuobjdump.tool` (the cuobjdump binary the check ran), null when it ran none or is unreadable. */
  cuobjdump: string | null;
  /** builder.json (system, hostname, kernel, cpu) as one phrase, else probe.json's `machine`, else null. */
  builder: string | null;
}

/** A file of a store path as Nix reads it (`nix store cat`: any store, a chroot store too), or null when absent. */
async function storeFile(path: string, nixOptions: NixOptions): Promise<string | null> {
  const r = await runTool(["nix", "--extra-experimental-features", "nix-command", "store", "cat", ...optionArgs(nixOptions), path]);
  return r.code === 0 ? r.stdout : null;
}

/** The JSON object of `text`, or null when it is none. */
function jsonObject(text: string | null): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text ?? "") as unknown;
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Read a proof's files (ProofSummary) through Nix (`nix store cat`, so that a store that is not /nix/store on this
 * disk is read too): report.txt, probe.json's cuobjdump, builder.json. Missing parts are null or [].
 */
export async function readProof(path: string, nixOptions: NixOptions = []): Promise<ProofSummary> {
  const [report, checkedText, builderText] = await Promise.all(["report.txt", "probe.json", "builder.json"].map((f) => storeFile(`${path}/${f}`, nixOptions)));
  const lines = (report ?? "").split("\n").filter((l) => l.trim() !== "");
  const checked = jsonObject(checkedText!);
  const c = checked?.cuobjdump as { tool?: unknown } | null | undefined;
  const b = jsonObject(builderText!);
  const str = (x: unknown) => (typeof x === "string" && x !== "" ? x : null);
  const builder = b
    ? [str(b.hostname) && `host ${str(b.hostname)}`, str(b.system), str(b.kernel) && `kernel ${str(b.kernel)}`, str(b.cpu)].filter(Boolean).join(", ") || null
    : str(checked?.machine);
  return { path, lines, cuobjdump: str(c?.tool), builder };
}

/** What install found of a variant's proof. */
export type FetchedProof =
  /** Valid here or substituted: its summary. `fetched`: it came from a substituter now. */
  | { state: "proven"; fetched: boolean; summary: ProofSummary }
  /** No proof, and the cache says the variant was published unproven (its marker substituted). */
  | { state: "unproven"; marker: string }
  /** No proof and no marker: why (no check in the file, no substituter holds either). */
  | { state: "none"; why: string };

/**
 * A variant's proof for install (the module comment): the check's output path (`file -A tests.static`), valid here or
 * substituted (`nix-store --realise PATH`: never built); else whether a cache holds its unproven marker.
 * @param outPath the variant's output path (the marker names it)
 * @param nixOptions the team's caches as Nix options (install's cacheOptions)
 * @param deadline epoch ms for each of Nix's answers
 */
export async function fetchProof(variant: { name: string; file: string; outPath: string }, nixOptions: NixOptions = [], deadline?: number): Promise<FetchedProof> {
  const p = (await proofPaths([variant], nixOptions, deadline)).get(variant.name)!;
  const realise = async (path: string) => (await runTool(["nix-store", ...optionArgs(nixOptions), "--realise", path], until(deadline))).code === 0;
  // A proof verify cannot read where its path says (a store not mounted at /nix/store, e.g. `store = /some/root`): verify
  // then reads the device code itself, and install says why.
  const unreadable = (path: string): FetchedProof => ({
    state: "none",
    why: `its proof ${path} is in the store, but its files are not at that path on this machine (a store kept elsewhere): verify reads the device code itself`,
  });
  if ("out" in p) {
    const fetched = (await validStorePaths([p.out], nixOptions)).has(p.out) ? false : (await realise(p.out)) ? true : null;
    if (fetched !== null) return existsSync(join(p.out, "probe.json")) ? { state: "proven", fetched, summary: await readProof(p.out, nixOptions) } : unreadable(p.out);
  }
  const marker = unprovenMarker(variant.name, variant.outPath);
  if (await realise(marker.path)) return { state: "unproven", marker: marker.path };
  return {
    state: "none",
    why: "error" in p ? `its file has no static check here (${p.error})` : `no substituter holds its proof ${p.out} or a mark that it was published unproven`,
  };
}
