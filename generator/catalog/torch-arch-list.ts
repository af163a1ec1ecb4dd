/**
 * Which TORCH_CUDA_ARCH_LIST entries each PyTorch release's C++-extension builder accepts: torch.utils.cpp_extension
 * `_get_cuda_arch_flags` raises `ValueError("Unknown CUDA arch (X) or GPU not supported")` for any entry outside its
 * `supported_arches`, and that list changes by release. Every package that hands TORCH_CUDA_ARCH_LIST to
 * cpp_extension (torchaudio, torchvision, xformers, flash-attn when none of its own tokens is recognised) builds only
 * where the variant's torch accepts the entry (catalog/lib/packages.ts `cudaBuildOf`). torch's own build reads the
 * variable through CMake (select_compute_arch.cmake), not through this list.
 *
 * Facts are data with sources: a release whose list was read has `accepted` (exactly the list); one known only from
 * reports has `accepted: null` and the entries reported refused. A release absent here: unknown (no drop, no note).
 *
 * torch 2.12, 2.13 and 2.14 are absent: their torch/utils/cpp_extension.py was not read (pytorch/pytorch at those tags
 * is not among the stored sources, and no wheel of them was on the H100 host). What was found does not decide it: a
 * fork's copy (maggiemoss/pytorch 4b78f85, undated) holds exactly 2.11's list; pytorch/pytorch#157999 (family "f"
 * entries in TORCH_CUDA_ARCH_LIST, 2025-07-10) is closed with no merge seen. So `explain` says "not read" for them and
 * no entry is dropped on their account.
 */
import type { TorchArchListFacts } from "./schema.ts";

export const torchArchLists: TorchArchListFacts[] = [
  {
    torch: "2.9",
    accepted: null,
    // Only 10.1 was seen refused: #166120 tries TORCH_CUDA_ARCH_LIST=10.1 alone. 10.1a left the 2.11 list with it
    // (below), but nothing shows 2.9's, so 2.9 and 10.1a stay unknown.
    refused: ["10.1"],
    source:
      "pytorch/pytorch#166120 (2025-10-23): TORCH_CUDA_ARCH_LIST=10.1 fails on torch 2.9.0 with 'ValueError: Unknown " +
      "CUDA arch (10.1) or GPU not supported' (sm_101 renamed sm_110 in CUDA 13.0, pytorch/pytorch#156176); 10.1a was not " +
      "tried there, and the rest of 2.9's list was not read",
  },
  {
    torch: "2.11",
    accepted: ["3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "9.0a", "10.0", "10.0a", "11.0", "11.0a", "10.3", "10.3a", "12.0", "12.0a", "12.1", "12.1a"],
    refused: ["8.8", "10.0f", "10.1", "10.1a"],
    source:
      "torch 2.11.0+cu130 (PyPI) torch/utils/cpp_extension.py `supported_arches`, read and each entry tried through " +
      "`_get_cuda_arch_flags` on the H100 host, 2026-11-25 (tests/fixtures/probes/h100-real-builds/torch-arches.json): " +
      "8.8 (which CUDA 13.0's nvcc lists), 10.1 and the f forms raise ValueError",
  },
];
