/**
 * The local catalog (`local-catalog.json` beside matrix.ts): facts a user adds because the built-in catalog
 * (generator/catalog/) does not know them yet. Merged into the built-in catalog when a matrix loads, with the same
 * schemas (generator/catalog/schema.ts) and pairing checks as built-in entries; the built-in files are never touched.
 *
 * File shape (JSON, each key optional):
 * {
 *   "nixpkgs": NixpkgsPin[],                      pins, written by `variant-matrix pin add`, each with the facts read
 *                                                  at its revision (e.g. `nixpkgsDefaultCapabilities`, nixpkgs' default
 *                                                  cudaCapabilities per CUDA set there, which decide its variants' CUDA
 *                                                  scope and the checker's promise for them)
 *   "torch": TorchRelease[],                      PyTorch releases, written by `pin add` with the pin that carries them
 *   "packagesOnTorch": { NAME: OnTorchRelease[] }, releases of a package of the table (catalog/packages.ts names:
 *                                                  torchaudio, torchvision, …), `pin add` writes torchaudio's here
 *   "extras": ExtraFact[],                        what an environment's extra promises (catalog/extras.ts)
 *   "torchArchLists": TorchArchListFacts[]        what a torch minor's cpp_extension accepts (catalog/torch-arch-list.ts)
 * }
 * A file written before the package table took torchaudio's releases has a top-level "torchaudio" array
 * ({ version, servesTorch, stableAbi, nixpkgsDependsOnTorchcodec?, source }); it is read as
 * `packagesOnTorch.torchaudio`, and `pin add` rewrites it in the new shape. New packages built on torch, the bundled
 * libraries' device code, the cache model and the size model are facts about nixpkgs' builders and this project's
 * measurements, not something a pin brings: they are added in generator/catalog/ with their tests.
 */
import { existsSync, readFileSync } from "node:fs";
import { replaceFileSync } from "../output-file.ts";
import { dirname, join } from "node:path";
import "../zod-jitless.ts";
import * as z from "zod";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import { InputError } from "../errors.ts";
import { checkPairings } from "./index.ts";
import {
  ExtraFactSchema,
  NixpkgsPinSchema,
  OnTorchReleaseSchema,
  TorchArchListFactsSchema,
  TorchReleaseSchema,
  type Catalog,
  type NixpkgsPin,
  type OnTorchRelease,
  type TorchRelease,
} from "./schema.ts";

/** What `pin add` writes: the pin, and the PyTorch and torchaudio releases the catalog lacks for it. */
export interface LocalPinEntry {
  pin: NixpkgsPin;
  torch: TorchRelease | null;
  torchaudio: OnTorchRelease | null;
}

/** The legacy top-level torchaudio release (before the package table held torchaudio), read as an OnTorchRelease. */
const LegacyTorchaudioSchema = z
  .object({
    version: z.string(),
    servesTorch: z.object({ min: z.string(), below: z.string().nullable() }),
    stableAbi: z.boolean(),
    nixpkgsDependsOnTorchcodec: z.boolean().optional(),
    source: z.string(),
  })
  .strict()
  .transform(({ nixpkgsDependsOnTorchcodec, ...r }) => (nixpkgsDependsOnTorchcodec ? { ...r, nixpkgsDependencies: ["torchcodec"] } : r))
  .pipe(OnTorchReleaseSchema);

/** The local catalog file's schema. */
const LocalCatalogSchema = z
  .object({
    nixpkgs: z.array(NixpkgsPinSchema).default([]),
    torch: z.array(TorchReleaseSchema).default([]),
    packagesOnTorch: z.record(z.string(), z.array(OnTorchReleaseSchema)).default({}),
    extras: z.array(ExtraFactSchema).default([]),
    torchArchLists: z.array(TorchArchListFactsSchema).default([]),
    torchaudio: z.array(LegacyTorchaudioSchema).optional(),
  })
  .strict()
  .transform(({ torchaudio, ...l }) =>
    torchaudio?.length ? { ...l, packagesOnTorch: { ...l.packagesOnTorch, torchaudio: [...torchaudio, ...(l.packagesOnTorch.torchaudio ?? [])] } } : l,
  );
/** A parsed local catalog (the legacy torchaudio key already moved into packagesOnTorch). */
type LocalCatalog = z.output<typeof LocalCatalogSchema>;
/** A local catalog with nothing in it. */
const EMPTY: LocalCatalog = { nixpkgs: [], torch: [], packagesOnTorch: {}, extras: [], torchArchLists: [] };

/** A local catalog file that cannot be used: names the file and each bad field. Exit 2. */
class LocalCatalogError extends InputError {
  override name = "LocalCatalogError";
}

/** One line per zod issue: "  nixpkgs.0.sha256: expected …". */
function issuesText(err: z.ZodError): string {
  return err.issues.map((i) => `  ${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("\n");
}

/** The local catalog file of the matrix in directory `dir`. */
function localCatalogFile(dir: string): string {
  return join(dir, LOCAL_CATALOG_FILE);
}

/**
 * Read and validate the local catalog in `dir` (empty when the file does not exist).
 * @throws LocalCatalogError naming the file, the field path and the problem
 */
function readLocalCatalog(dir: string): LocalCatalog {
  const file = localCatalogFile(dir);
  if (!existsSync(file)) return EMPTY;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new LocalCatalogError(`${file}: not JSON: ${(e as Error).message}`);
  }
  const parsed = LocalCatalogSchema.safeParse(raw);
  if (!parsed.success)
    throw new LocalCatalogError(
      `${file}: invalid local catalog\n` + issuesText(parsed.error),
    );
  return parsed.data;
}

/**
 * The built-in catalog with the local catalog of `dir` added: local pins, releases, extras and arch lists come after
 * the built-in ones.
 * @throws LocalCatalogError when the file is invalid, names a package the table does not have, repeats a built-in or
 *   local entry, or pairs a torchaudio that does not serve its torch (generator/catalog/index.ts checkPairings)
 */
export function withLocalCatalog(cat: Catalog, dir: string): Catalog {
  const local = readLocalCatalog(dir);
  const empty =
    !local.nixpkgs.length && !local.torch.length && !local.extras.length && !local.torchArchLists.length && !Object.keys(local.packagesOnTorch).length;
  return empty ? cat : merge(cat, local, localCatalogFile(dir));
}

/**
 * The catalog a command run on matrix file `matrixFile` reads: `cat` with the local catalog beside it, or `cat` alone
 * when that file is invalid (`generate` and every command that loads the matrix report it; a build of files already
 * generated goes on with the built-in facts).
 */
export function catalogBeside(cat: Catalog, matrixFile: string): Catalog {
  try {
    return withLocalCatalog(cat, dirname(matrixFile));
  } catch (e) {
    if (e instanceof LocalCatalogError) return cat;
    throw e;
  }
}

/**
 * Refuse a nixpkgs revision the built-in catalog `cat` or the local catalog of `dir` already pins: `pin add` asks
 * before it downloads anything (a known pin is said at once, not after a tarball fetch that may fail offline).
 * @throws LocalCatalogError naming where the pin already is (the built-in catalog, or the local file)
 */
export function assertNotPinned(cat: Pick<Catalog, "nixpkgs">, dir: string, rev: string): void {
  if (cat.nixpkgs.some((p) => p.rev === rev))
    throw new LocalCatalogError(`nixpkgs ${rev} is already a pin of the built-in catalog: nothing to add (nothing written; \`variant-matrix pin check\` compares it with your Nix)`);
  if (readLocalCatalog(dir).nixpkgs.some((p) => p.rev === rev))
    throw new LocalCatalogError(`nixpkgs ${rev} is already in ${localCatalogFile(dir)}: nothing to add (nothing written)`);
}

/**
 * Add a pin entry (and the releases it brings) to the local catalog of `dir`, written atomically (a file of the
 * legacy shape is rewritten in the current one). The built-in catalog `cat` with the new local catalog is validated
 * before anything is written.
 * @returns the file written
 * @throws LocalCatalogError when the entry clashes with the built-in or local catalog (nothing written)
 */
export function addLocalEntry(cat: Catalog, dir: string, entry: LocalPinEntry): string {
  const local = readLocalCatalog(dir);
  const file = localCatalogFile(dir);
  // Said before the merge, whose message is about an existing file's entries (the file may not exist yet).
  assertNotPinned(cat, dir, entry.pin.rev);
  const audio = local.packagesOnTorch.torchaudio ?? [];
  const parsed = LocalCatalogSchema.safeParse({
    ...local,
    nixpkgs: [...local.nixpkgs, entry.pin],
    torch: [...local.torch, ...(entry.torch ? [entry.torch] : [])],
    packagesOnTorch: entry.torchaudio ? { ...local.packagesOnTorch, torchaudio: [...audio, entry.torchaudio] } : local.packagesOnTorch,
  });
  if (!parsed.success)
    throw new LocalCatalogError(
      `${file}: the new entry is not a valid catalog entry (nothing written)\n` + issuesText(parsed.error),
    );
  const next = parsed.data;
  merge(cat, next, file);
  replaceFileSync(file, JSON.stringify(next, null, 2) + "\n");
  return file;
}

/** The catalog with `local` appended, checked as the built-in one is. @throws LocalCatalogError */
function merge(cat: Catalog, local: LocalCatalog, file: string): Catalog {
  const once = (what: string, builtIn: string[], mine: string[]) =>
    mine.forEach((k, i) => {
      if (builtIn.includes(k))
        throw new LocalCatalogError(`${file}: ${what} ${k} is already in the built-in catalog (\`variant-matrix pin check\` compares it; remove it here)`);
      if (mine.indexOf(k) !== i) throw new LocalCatalogError(`${file}: ${what} ${k} appears twice`);
    });
  once("nixpkgs pin", cat.nixpkgs.map((p) => p.rev), local.nixpkgs.map((p) => p.rev));
  once("PyTorch release", cat.torch.map((t) => t.version), local.torch.map((t) => t.version));
  once("extra", cat.extras.map((e) => e.attr), local.extras.map((e) => e.attr));
  once("TORCH_CUDA_ARCH_LIST facts of torch", cat.torchArchLists.map((l) => l.torch), local.torchArchLists.map((l) => l.torch));
  const names = cat.packagesOnTorch.map((p) => p.name);
  for (const [name, releases] of Object.entries(local.packagesOnTorch)) {
    const p = cat.packagesOnTorch.find((x) => x.name === name);
    if (!p) throw new LocalCatalogError(`${file}: packagesOnTorch.${name}: not a package of the table; allowed: ${names.join(", ")}`);
    once(`${name} release`, p.releases.map((r) => r.version), releases.map((r) => r.version));
  }
  try {
    return checkPairings({
      ...cat,
      nixpkgs: [...cat.nixpkgs, ...local.nixpkgs],
      torch: [...cat.torch, ...local.torch],
      packagesOnTorch: cat.packagesOnTorch.map((p) => ({ ...p, releases: [...p.releases, ...(local.packagesOnTorch[p.name] ?? [])] })),
      extras: [...cat.extras, ...local.extras],
      torchArchLists: [...cat.torchArchLists, ...local.torchArchLists],
    });
  } catch (e) {
    throw new LocalCatalogError(`${file}: ${(e as Error).message}`);
  }
}
