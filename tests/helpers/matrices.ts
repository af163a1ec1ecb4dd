/** Matrices several test files share. */
import { catalog, preferredPin } from "../../generator/catalog/index.ts";
import type { MatrixInput } from "../../generator/schema.ts";

/** The widest catalog matrix: every release whose preferred pin has a hash, every Python and CUDA version one of those pins has, every GPU and ISA. */
export function widestMatrix(): MatrixInput {
  const releases = catalog.torch.flatMap((t) => {
    const pin = preferredPin(catalog, t.version);
    return pin?.sha256 ? [{ torch: t.version, nixpkgs: pin.rev }] : [];
  });
  // Only Python and CUDA versions some pin of these releases has (generate refuses one that none has).
  const pins = releases.map((r) => catalog.nixpkgs.find((p) => p.rev === r.nixpkgs)!);
  return {
    releases,
    python: catalog.python.map((p) => p.version).filter((v) => pins.some((p) => p.python.includes(v))),
    cuda: catalog.cuda.map((c) => c.version).filter((v) => pins.some((p) => p.cuda.includes(v))),
    gpus: catalog.gpus.map((g) => g.sm),
    isas: catalog.isas.map((i) => i.key),
    cpuOnly: true,
  };
}
