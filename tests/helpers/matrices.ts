/** Matrices several test files share. */
import { catalog, preferredPin } from "../../generator/catalog/index.ts";
import type { MatrixInput } from "../../generator/schema.ts";

/** The widest catalog matrix: every release whose preferred pin has a hash, every Python, CUDA, GPU and ISA. */
export function widestMatrix(): MatrixInput {
  return {
    releases: catalog.torch.flatMap((t) => {
      const pin = preferredPin(catalog, t.version);
      return pin?.sha256 ? [{ torch: t.version, nixpkgs: pin.rev }] : [];
    }),
    python: catalog.python.map((p) => p.version),
    cuda: catalog.cuda.map((c) => c.version),
    gpus: catalog.gpus.map((g) => g.sm),
    isas: catalog.isas.map((i) => i.key),
    cpuOnly: true,
  };
}
