/**
 * The rules over the catalog's PyTorch releases and nixpkgs pins (catalog/torch.ts) and the TORCH_CUDA_ARCH_LIST
 * entries each release's cpp_extension accepts (catalog/torch-arch-list.ts): the pin to use for a release, a pin's
 * tarball, whether an entry is accepted, a release's facts in words.
 */
import { majorMinor } from "../../versions.ts";
import { archEntryAcceptedIn, archListIn } from "./cuda-build.ts";
import type { Catalog, NixpkgsPin } from "../schema.ts";

/**
 * Whether torch `torchVersion`'s cpp_extension accepts TORCH_CUDA_ARCH_LIST entry `entry` ("12.1", "9.0a"; a "+PTX"
 * suffix is ignored), by the catalog's lists (`cat.torchArchLists`: this table plus local-catalog.json's): true,
 * false (refused: a ValueError at build time), or null when the catalog cannot say (generator/catalog/lib/cuda-build.ts
 * `archEntryAcceptedIn`).
 */
export function archEntryAccepted(cat: Pick<Catalog, "torchArchLists">, torchVersion: string, entry: string): boolean | null {
  return archEntryAcceptedIn(cat.torchArchLists, torchVersion, entry);
}

/**
 * What the catalog knows of PyTorch `torchVersion`'s release, in words for `explain`: upstream's pairing (date,
 * torchvision, torchcodec; catalog/torch.ts `upstream`) with its Python and CUDA ranges, and which
 * TORCH_CUDA_ARCH_LIST entries its cpp_extension accepts (catalog/torch-arch-list.ts), each with its source, or that
 * the catalog does not know. Here, not in catalog/index.ts, so that `explain` reads it without loading zod or parsing
 * the catalog again (it has the Project's catalog).
 */
export function torchReleaseFacts(cat: Catalog, torchVersion: string): { release: string; archList: string } {
  const minor = majorMinor(torchVersion);
  const rel = cat.torch.find((t) => t.version === torchVersion) ?? cat.torch.find((t) => t.version.startsWith(`${minor}.`));
  const up = rel?.upstream?.find((u) => u.version === torchVersion);
  const release = rel
    ? `${up ? `PyTorch ${up.version} (released ${up.released}) pairs torchvision ${up.torchvision}${up.torchcodec ? ` and torchcodec ${up.torchcodec}` : ", no torchcodec"}; ` : `PyTorch ${torchVersion}: upstream's torchvision/torchcodec pairing not in the catalog; `}` +
      `Python ${rel.python[0]}–${rel.python[rel.python.length - 1]}; PyTorch's own CUDA builds ${rel.cuda.join(", ")}. Sources: ${rel.source}`
    : `PyTorch ${torchVersion} is not in the catalog's releases (generator/catalog/torch.ts)`;
  const f = archListIn(cat.torchArchLists, torchVersion);
  const archList = !f
    ? `not read for torch ${minor}: which TORCH_CUDA_ARCH_LIST entries its torch/utils/cpp_extension.py accepts is unknown here (no drop, no verdict)`
    : f.accepted
      ? `${f.accepted.join(", ")} (each also with +PTX); refused: ${f.refused.join(", ")}. Source: ${f.source}`
      : `only known refused: ${f.refused.join(", ")}; the rest not read. Source: ${f.source}`;
  return { release, archList };
}

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
