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
    source: `${RELEASE_MD} (2.9: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0)`,
  },
  {
    version: "2.10.0",
    nameTag: "210",
    torchaudio: "2.10.0",
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    source: `${RELEASE_MD} (2.10: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0)`,
  },
];

export const nixpkgs: NixpkgsPin[] = [
  {
    rev: "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3",
    sha256: null,
    torch: "2.8.0",
    torchaudio: "2.8.0",
    python: ["3.11", "3.12", "3.13"],
    cuda: ["12.6", "12.8", "12.9"],
    brokenCuda: {},
    source: "barstoolbluz/build-pytorch README (fe5e41d = PyTorch 2.8.0, CUDA 12.8 default, Python 3.13)",
  },
  {
    rev: "6a030d535719c5190187c4cec156f335e95e3211",
    sha256: null,
    torch: "2.9.1",
    torchaudio: "2.9.1",
    python: ["3.11", "3.12", "3.13"],
    cuda: ["12.6", "12.8", "12.9", "13.0"],
    brokenCuda: {
      "13.0": "nixpkgs torch 2.9.1 brokenConditions accept CUDA major 11 or 12 only",
    },
    source: "barstoolbluz/build-pytorch README (6a030d5 = PyTorch 2.9.1, CUDA 12.9.1, Python 3.13)",
  },
];
