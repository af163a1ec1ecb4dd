/**
 * PyTorch releases (with their torchaudio pairing, Python range and the CUDA versions PyTorch's own release
 * matrix builds) and the nixpkgs revisions that carry them.
 *
 * A variant is only emitted when a pin carries its torch release, its `pythonNNNPackages` set and its
 * `cudaPackages_X_Y` set, and that pin's torch is not marked broken for that CUDA (`brokenCuda`).
 *
 * Sources: pytorch/pytorch RELEASE.md "Release Compatibility Matrix"; barstoolbluz/build-pytorch README (pins);
 * nixpkgs pkgs/development/python-modules/torch/source/default.nix and .../torchaudio/default.nix at or near the
 * pinned revisions.
 */
import type { NixpkgsPin, TorchRelease } from "../schema.ts";

const RELEASE_MD = "pytorch/pytorch RELEASE.md 'Release Compatibility Matrix'";

export const torch: TorchRelease[] = [
  {
    version: "2.8.0",
    nameTag: "28",
    torchaudio: "2.8.0",
    python: ["3.9", "3.10", "3.11", "3.12", "3.13"],
    cuda: ["12.6", "12.8", "12.9"],
    source: `${RELEASE_MD} (2.8: Python >=3.9, <=3.13; stable CUDA 12.6, 12.8; experimental CUDA 12.9)`,
  },
  {
    version: "2.9.1",
    nameTag: "29",
    torchaudio: "2.9.1",
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    source:
      `${RELEASE_MD} (2.9: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0); torch 2.9.1 ` +
      "pairs with torchaudio 2.9.1 in PyTorch's install instructions (as quoted in several stored projects)",
  },
  {
    version: "2.10.0",
    nameTag: "210",
    torchaudio: "2.10.0",
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    // No nixpkgs pin carrying 2.10 is known: build-pytorch's cuda-13_0 branch overlays 2.10.0 onto 6a030d5 instead.
    source:
      `${RELEASE_MD} (2.10: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0); ` +
      "torchaudio pairing 2.10↔2.10 per DESIGN.md rule 6 (not independently verified)",
  },
];

export const nixpkgs: NixpkgsPin[] = [
  {
    rev: "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3",
    sha256: null,
    torch: "2.8.0",
    torchaudio: "2.8.0",
    python: ["3.11", "3.12", "3.13"],
    // Only 12.6/12.8 are listed: build-pytorch's CUDA 12.9 variants (e.g. pytorch-python311-cuda12_9-sm103-armv9.nix)
    // pin a different nixpkgs (46336d4) "with CUDA 12.9", so cudaPackages_12_9 at fe5e41d is not relied on.
    cuda: ["12.6", "12.8"],
    brokenCuda: {
      "13.0": "nixpkgs torch brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    source:
      "barstoolbluz/build-torchvision README 'Version Matrix' (main: PyTorch 2.8.0, CUDA 12.8, Python 3.13, " +
      "nixpkgs fe5e41d); barstoolbluz/build-torchaudio .flox/pkgs/torchaudio-python313-cuda12_8-*.nix (fe5e41d: " +
      "'PyTorch 2.8.0 and TorchAudio 2.8.0 are compatible'); build-pytorch python311 variants import fe5e41d; " +
      "nixpkgs torch source/default.nix brokenConditions of the 2.x era (CUDA major 11 or 12 only)",
  },
  {
    rev: "6a030d535719c5190187c4cec156f335e95e3211",
    sha256: null,
    torch: "2.9.1",
    torchaudio: "2.9.1",
    python: ["3.11", "3.12", "3.13"],
    cuda: ["12.6", "12.8", "12.9", "13.0"],
    brokenCuda: {
      "13.0": "nixpkgs torch 2.9.1 brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    source:
      "barstoolbluz/build-torchvision README 'Version Matrix' (cuda-12_9: PyTorch 2.9.1, CUDA 12.9.1, cuDNN " +
      "9.13.0, Python 3.13, nixpkgs 6a030d5); nixpkgs pkgs/top-level/cuda-packages.nix of that period (CUDA 12.9.1 " +
      "with cuDNN 9.13.0 alongside cudaPackages_12_6, _12_8 and _13_0); DESIGN.md rule 6 (torch 2.9.1 broken for " +
      "CUDA 13). torchaudio 2.9.1 at this revision is assumed from the release pairing, not read from nixpkgs",
  },
];
