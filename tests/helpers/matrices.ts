/** Matrices several test files share. */
import { catalog, catalogAxes, preferredPin } from "../../generator/catalog/index.ts";
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
    python: catalogAxes(catalog).python.filter((v) => pins.some((p) => p.python.includes(v))),
    cuda: catalogAxes(catalog).cuda.filter((v) => pins.some((p) => p.cuda.includes(v))),
    gpus: catalogAxes(catalog).gpus,
    isas: catalogAxes(catalog).isas,
    cpuOnly: true,
  };
}
