/**
 * The rules over the catalog's public CUDA caches (catalog/binary-cache.ts, as `Catalog.publicCudaCaches`): which serve
 * a system, which to offer a host, their nix.conf lines, the NixOS-CUDA cache the cache model counts on.
 */
import type { Catalog, PublicCudaCache } from "../schema.ts";

/** The public CUDA caches of `cat` that serve `system` (builds first, then "may hold"). */
export function cudaCachesFor(cat: Pick<Catalog, "publicCudaCaches">, system: string): PublicCudaCache[] {
  return cat.publicCudaCaches.filter((c) => (c.systems as string[]).includes(system)).sort((a, b) => (a.holds === b.holds ? 0 : a.holds === "builds" ? -1 : 1));
}

/**
 * The nix.conf settings that add `caches` as substituters with their keys: two whole `name = value` lines, for
 * /etc/nix/nix.conf (a user's own nix.conf takes `extra-trusted-public-keys` only from a trusted user). preflight's
 * checks print them as a copyable block (preflight/checks.ts nixConfBlock).
 */
export function substituterLines(caches: readonly Pick<PublicCudaCache, "url" | "publicKey">[]): string[] {
  return [`extra-substituters = ${caches.map((c) => c.url).join(" ")}`, `extra-trusted-public-keys = ${caches.map((c) => c.publicKey).join(" ")}`];
}

/**
 * The public caches of `cat` a host building CUDA variants of `systems` should have: for each system the caches that build
 * for it, or where none does (aarch64-linux), the ones that may hold its packages. Deduplicated, builds first.
 */
export function cachesToOffer(cat: Pick<Catalog, "publicCudaCaches">, systems: Iterable<string>): PublicCudaCache[] {
  const out = new Map<string, PublicCudaCache>();
  for (const s of new Set(systems)) {
    const all = cudaCachesFor(cat, s);
    const builds = all.filter((c) => c.holds === "builds");
    for (const c of builds.length ? builds : all) out.set(c.url, c);
  }
  return [...out.values()].sort((a, b) => (a.holds === b.holds ? 0 : a.holds === "builds" ? -1 : 1));
}

/**
 * The NixOS-CUDA binary cache the cache model counts on, and its signing key: the "builds" entry of `cat`'s public
 * caches (generator/generate/ci.ts writes it into the workflows). Some other repositories write invented
 * `cache.nixos-cuda.org-1:` keys: the key's name has no `-1`.
 * @throws Error when the catalog has no cache that "builds" (the schema allows it; the built-in catalog has one)
 */
export function cudaCacheSubstituter(cat: Pick<Catalog, "publicCudaCaches">): Pick<PublicCudaCache, "url" | "publicKey" | "source"> {
  const c = cat.publicCudaCaches.find((x) => x.holds === "builds");
  if (!c) throw new Error("catalog: no public CUDA cache with holds \"builds\" (generator/catalog/binary-cache.ts)");
  return { url: c.url, publicKey: c.publicKey, source: c.source };
}
