/**
 * The local catalog (`local-catalog.json` beside matrix.ts): nixpkgs pins, and the PyTorch and torchaudio releases
 * they carry, that a user added with `variant-matrix pin add` because the built-in catalog (generator/catalog/) does
 * not know them yet. Merged into the built-in catalog when a matrix loads, with the same schemas and pairing checks
 * as built-in entries; the built-in files are never touched.
 *
 * File shape (JSON): { "nixpkgs": NixpkgsPin[], "torch": TorchRelease[], "torchaudio": TorchaudioRelease[] }
 * (each key optional; schemas in generator/catalog/schema.ts).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { LOCAL_CATALOG_FILE } from "../constants.ts";
import { InputError } from "../errors.ts";
import { checkPairings } from "./index.ts";
import { NixpkgsPinSchema, TorchaudioReleaseSchema, TorchReleaseSchema, type Catalog, type NixpkgsPin, type TorchaudioRelease, type TorchRelease } from "./schema.ts";

/** What `pin add` writes: the pin, and the PyTorch and torchaudio releases the catalog lacks for it. */
export interface LocalPinEntry {
  pin: NixpkgsPin;
  torch: TorchRelease | null;
  torchaudio: TorchaudioRelease | null;
}

/** The local catalog file's schema. */
const LocalCatalogSchema = z
  .object({
    nixpkgs: z.array(NixpkgsPinSchema).default([]),
    torch: z.array(TorchReleaseSchema).default([]),
    torchaudio: z.array(TorchaudioReleaseSchema).default([]),
  })
  .strict();
/** A parsed local catalog. */
type LocalCatalog = z.infer<typeof LocalCatalogSchema>;

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
  if (!existsSync(file)) return { nixpkgs: [], torch: [], torchaudio: [] };
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
 * The built-in catalog with the local catalog of `dir` added: local pins and releases come after the built-in ones.
 * @throws LocalCatalogError when the file is invalid, repeats a built-in or local pin or release, or pairs a
 *   torchaudio that does not serve its torch (the built-in pairing check, generator/catalog/index.ts checkPairings)
 */
export function withLocalCatalog(cat: Catalog, dir: string): Catalog {
  const local = readLocalCatalog(dir);
  if (!local.nixpkgs.length && !local.torch.length && !local.torchaudio.length) return cat;
  return merge(cat, local, localCatalogFile(dir));
}

/**
 * Add a pin entry (and the releases it brings) to the local catalog of `dir`, written atomically. The built-in
 * catalog `cat` with the new local catalog is validated before anything is written.
 * @returns the file written
 * @throws LocalCatalogError when the entry clashes with the built-in or local catalog (nothing written)
 */
export function addLocalEntry(cat: Catalog, dir: string, entry: LocalPinEntry): string {
  const local = readLocalCatalog(dir);
  const file = localCatalogFile(dir);
  const parsed = LocalCatalogSchema.safeParse({
    nixpkgs: [...local.nixpkgs, entry.pin],
    torch: [...local.torch, ...(entry.torch ? [entry.torch] : [])],
    torchaudio: [...local.torchaudio, ...(entry.torchaudio ? [entry.torchaudio] : [])],
  });
  if (!parsed.success)
    throw new LocalCatalogError(
      `${file}: the new entry is not a valid catalog entry (nothing written)\n` + issuesText(parsed.error),
    );
  const next = parsed.data;
  merge(cat, next, file);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(next, null, 2) + "\n");
  renameSync(tmp, file);
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
  once("torchaudio release", cat.torchaudio.map((t) => t.version), local.torchaudio.map((t) => t.version));
  try {
    return checkPairings({
      ...cat,
      nixpkgs: [...cat.nixpkgs, ...local.nixpkgs],
      torch: [...cat.torch, ...local.torch],
      torchaudio: [...cat.torchaudio, ...local.torchaudio],
    });
  } catch (e) {
    throw new LocalCatalogError(`${file}: ${(e as Error).message}`);
  }
}
