/**
 * The rules over the catalog's device-code facts: each origin's own kernels (the packages' directories,
 * catalog/packages.ts `deviceCode`) and what a variant's device code weighs by the measurements of
 * catalog/device-code-size.ts (the model and its limits are described there).
 */
import type { Catalog, DeviceCodeBytes } from "../schema.ts";

/** Where device code comes from: torch, a package built on torch (catalog/packages.ts names), or a bundled library. */
export type DeviceCodeOrigin = "torch" | "nccl" | "magma" | "nvshmem" | (string & {});

/**
 * The variant's own packages and the libraries whose device code they compile, by directory of the installed
 * package: torch's `lib/` (every file but the bundled ones' `libraryDefault`), and each package built on torch's
 * `deviceCode.directory` (torchaudio's `lib/`, torchvision's package directory with `_C.so`). Own kernels are compiled from `TORCH_CUDA_ARCH_LIST` with no PTX: PyTorch's
 * cmake/public/utils.cmake `torch_cuda_get_nvcc_gencode_flag` writes `code=sm_XY` unless an entry says `+PTX`, and
 * our builders never write `+PTX` (rule 3); torchaudio and torchvision compile through
 * torch.utils.cpp_extension `_get_cuda_arch_flags`, which adds `compute_XY` only for `+PTX` entries.
 */
export function ownDeviceCode(cat: Pick<Catalog, "packagesOnTorch">): { origin: string; directory: string; file?: string; names: string[]; source: string }[] {
  return [
    {
      origin: "torch",
      directory: "torch/lib",
      // PyTorch's own namespaces, which keep its kernels its own in a library whose default is a bundled origin.
      names: ["^at$", "^at_cuda_detail$", "^c10", "^torch$", "^caffe2$", "^_INTERNAL_"],
      source: "PyTorch cmake/public/utils.cmake torch_cuda_get_nvcc_gencode_flag; cmake/Codegen.cmake; the H100 recording's heads",
    },
    // Each package built on torch: its library directory from the table (catalog/packages.ts).
    ...cat.packagesOnTorch.map((p) => ({
      origin: p.name,
      directory: p.deviceCode.directory,
      ...(p.deviceCode.file !== undefined ? { file: p.deviceCode.file } : {}),
      names: [],
      source: `torch.utils.cpp_extension _get_cuda_arch_flags; ${p.archList.map((e) => e.source).join("; ")}; ${p.deviceCode.source}`,
    })),
  ];
}

const num = (c: string) => Number(c);

/**
 * Modelled uncompressed bytes of `origin`'s device code for one compute capability ("12.1"), and the measured
 * capability it was taken from, by the catalog's measurements (`cat.deviceCodeBytes`, this file's DEVICE_CODE_BYTES).
 */
export function bytesFor(cat: Pick<Catalog, "deviceCodeBytes">, origin: keyof DeviceCodeBytes, capability: string): { bytes: number; from: string } {
  const measured = Object.keys(cat.deviceCodeBytes[origin].perCapability).sort((a, b) => num(a) - num(b));
  const major = capability.split(".")[0];
  const sameMajor = measured.filter((m) => m.split(".")[0] === major && num(m) <= num(capability));
  const below = measured.filter((m) => num(m) <= num(capability));
  const from = sameMajor.at(-1) ?? below.at(-1) ?? measured[0]!;
  return { bytes: cat.deviceCodeBytes[origin].perCapability[from]!, from };
}

/** One origin's modelled device code for a list of capabilities. */
interface ModelledDeviceCode {
  origin: string;
  library: string;
  capabilities: string[];
  bytes: number;
  /** Capabilities taken from another measured one ("12.1←12.0"). */
  approximated: string[];
}

/**
 * The modelled device code of a CUDA variant's torch in one scope: torch's own kernels and NVSHMEM (device-linked by
 * torch) at the variant's capabilities; MAGMA at the variant's capabilities in the package-set scope and at nixpkgs'
 * default list of the CUDA version in the torch scope (catalog/device-code.ts). NCCL is not modelled (see above).
 * @param linksNvshmem whether torch links NVSHMEM at the variant's pin (device-code.ts linkedAt)
 */
export function modelDeviceCode(
  cat: Pick<Catalog, "deviceCodeBytes">,
  capabilities: readonly string[],
  defaultCapabilities: readonly string[],
  scope: "torch" | "packageSet",
  linksNvshmem: boolean,
): ModelledDeviceCode[] {
  const one = (origin: keyof DeviceCodeBytes, caps: readonly string[]): ModelledDeviceCode => {
    const parts = caps.map((c) => ({ c, ...bytesFor(cat, origin, c) }));
    return {
      origin,
      library: cat.deviceCodeBytes[origin].library,
      capabilities: [...caps],
      bytes: parts.reduce((a, p) => a + p.bytes, 0),
      approximated: parts.filter((p) => p.from !== p.c).map((p) => `${p.c}←${p.from}`),
    };
  };
  return [
    one("torch", capabilities),
    one("magma", scope === "torch" ? defaultCapabilities : capabilities),
    ...(linksNvshmem ? [one("nvshmem", capabilities)] : []),
  ];
}
