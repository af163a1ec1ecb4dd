/**
 * What a variant's device code weighs, per library and origin, as a model (explain and BUILD_MATRIX.md show it, so a
 * user weighs a capability list before building): uncompressed cubin bytes per compute capability, measured in PyPI
 * torch 2.11.0+cu130 on an H100 host
 * (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/device-code-size.txt, recorded as
 * device-code-size-pypi-torch2.11-h100: `cuobjdump -xelf all LIB`, the extracted cubins' sizes summed per target; get_arch_list
 * sm_75 sm_80 sm_86 sm_90 sm_100 sm_120). A variant's library holds one cubin set per capability it is compiled for
 * (catalog/device-code.ts says which list each origin follows in each scope), so its size is the sum over that list.
 *
 * How the model is derived, and its limits:
 * - A capability that was not measured takes the nearest measured one of the same major at or below it (8.9 ← 8.6,
 *   10.3 ← 10.0, 12.1 ← 12.0), else the nearest below (11.0 ← 10.0, 8.7 ← 8.6, 7.0/7.2 ← 7.5: an estimate).
 * - Uncompressed: nvcc compresses fatbins, so the files are smaller (libtorch_cuda.so is 456 MB for 6 capabilities
 *   whose cubins sum to 4.6 GB, about 10×). The model compares scopes and capabilities; it does not predict a file's
 *   size on disk.
 * - PyPI torch 2.11 is not nixpkgs' torch (other CUDA version, build flags); no nixpkgs torch was measured, so the
 *   model's error on a real nixpkgs closure is not known (a build's report records its real narSize/closureSize).
 * - NCCL: PyPI links NCCL dynamically (its separate 209 MB library holds every architecture of its wheel, not broken
 *   down per capability), so NCCL's device code per capability is not modelled.
 */

import type { DeviceCodeBytes } from "./schema.ts";

/** Measured uncompressed cubin bytes per compute capability, per origin. */
export const DEVICE_CODE_BYTES: DeviceCodeBytes = {
  torch: {
    library: "libtorch_cuda.so",
    perCapability: { "7.5": 589374744, "8.0": 647424440, "8.6": 647047480, "9.0": 729827144, "10.0": 995129480, "12.0": 1024743296 },
    source: "PyPI torch 2.11.0+cu130 libtorch_cuda.so on an H100 host: 444 cubins per listed sm_XX (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/device-code-size.txt, recorded as device-code-size-pypi-torch2.11-h100)",
  },
  magma: {
    library: "libtorch_cuda_linalg.so",
    perCapability: { "8.0": 60119608, "8.6": 59992632, "9.0": 61139512, "10.0": 79286784, "12.0": 105748728 },
    source: "PyPI torch 2.11.0+cu130 libtorch_cuda_linalg.so (MAGMA; no sm_75 in that build): 99 cubins per sm_XX (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/device-code-size.txt, recorded as device-code-size-pypi-torch2.11-h100)",
  },
  nvshmem: {
    library: "libtorch_nvshmem.so",
    perCapability: { "7.5": 558592, "8.0": 574592, "8.6": 575232, "9.0": 735040, "10.0": 970336, "12.0": 951096 },
    source: "PyPI torch 2.11.0+cu130 libtorch_nvshmem.so: one cubin per sm_XX (tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/device-code-size.txt, recorded as device-code-size-pypi-torch2.11-h100)",
  },
};
