/**
 * The catalog: every fact the generator knows, each with a `source`. Validated by `CatalogSchema` at load.
 * @throws Error (zod) at import time when a catalog file breaks its schema.
 */
import { CatalogSchema, type Catalog, type NixpkgsPin } from "../schema.ts";
import { gpus } from "./gpus.ts";
import { cuda } from "./cuda.ts";
import { isas } from "./cpu-isas.ts";
import { python } from "./python.ts";
import { torch, nixpkgs } from "./torch.ts";

export const catalog: Catalog = CatalogSchema.parse({ gpus, cuda, isas, python, torch, nixpkgs });

/**
 * The catalog pin to use for PyTorch `torchVersion` when matrix.ts names none: among the pins carrying it, one with
 * a known tarball hash first (content-addressed), then the newest `date`, then catalog order.
 * @returns the pin, or undefined when no pin carries the release.
 */
export function preferredPin(cat: Catalog, torchVersion: string): NixpkgsPin | undefined {
  const carriers = cat.nixpkgs.filter((p) => p.torch === torchVersion);
  const score = (p: NixpkgsPin) => [p.sha256 ? 1 : 0, p.date ?? ""] as const;
  return [...carriers].sort((a, b) => {
    const [ha, da] = score(a);
    const [hb, db] = score(b);
    return hb - ha || (db > da ? 1 : db < da ? -1 : 0);
  })[0];
}

/** The URL `builtins.fetchTarball` fetches for a nixpkgs revision (and `nix-prefetch-url --unpack` hashes). */
export function nixpkgsTarballUrl(rev: string): string {
  return `https://github.com/NixOS/nixpkgs/archive/${rev}.tar.gz`;
}
