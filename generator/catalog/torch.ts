/**
 * PyTorch releases (with their torchaudio pairing, Python range and the CUDA versions PyTorch's own release
 * matrix builds) and the nixpkgs revisions that carry them.
 *
 * A variant is only emitted when a pin carries its torch release, its `pythonNNNPackages` set and its
 * `cudaPackages_X_Y` set, and that pin's torch is not marked broken for that CUDA (`brokenCuda`).
 *
 * Every pin is content-addressed when its hash is known: `sha256` is the NAR hash of the unpacked GitHub tarball
 * that `builtins.fetchTarball` checks, written in SRI form; a flake.lock `narHash` of the same rev is that same
 * value. A pin whose hash no source gives keeps `sha256: null`, and `generate` refuses it until matrix.ts gives
 * `releases[].sha256` (printed by `nix-prefetch-url --unpack URL`).
 *
 * Sources: pytorch/pytorch RELEASE.md "Release Compatibility Matrix"; barstoolbluz/build-pytorch README and
 * recipes (pins); nixpkgs pkgs/development/python-modules/torch/source/default.nix and .../torchaudio/default.nix
 * as stored for the revisions named below; nixpkgs pull requests named per entry; flake.lock files that pin
 * each revision (narHash).
 */
import type { NixpkgsPin, TorchRelease } from "../schema.ts";

const RELEASE_MD = "pytorch/pytorch RELEASE.md 'Release Compatibility Matrix'";
const TORCHCODEC =
  "Since torchaudio 2.9, torchaudio.load and torchaudio.save go through TorchCodec (pytorch/audio#3902); nixpkgs' " +
  "torchaudio does not depend on torchcodec (pkgs/development/python-modules/torchaudio/default.nix at 005ab72), " +
  "so add python3Packages.torchcodec of the same nixpkgs to read or write audio files.";

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
    torchaudioNote: TORCHCODEC,
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
    torchaudioNote: TORCHCODEC,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    // nixpkgs carried torch 2.10.0 with torchaudio 2.10.0 between NixOS/nixpkgs#484881 and #502810 (Feb-Mar 2026),
    // but no revision of that window with a sourced narHash was found, so the catalog has no 2.10 pin.
    source:
      `${RELEASE_MD} (2.10: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0); ` +
      "nixpkgs pkgs/development/python-modules/torchaudio/default.nix at 005ab72 (version 2.10.0, torch from the " +
      "same set); NixOS/nixpkgs#502810 ('python3Packages.torchaudio: 2.10.0 -> 2.11.0', 'Previous update: #484881')",
  },
  {
    version: "2.11.0",
    nameTag: "211",
    torchaudio: "2.11.0",
    torchaudioNote: TORCHCODEC,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    // RELEASE.md's 2.11 row was not read directly; the Python range and CUDA majors are those of 2.10, which the
    // stored evidence agrees with (PyTorch 2.11.0+cu128 and +cu130 wheels, python314Packages.torch built in #502810).
    source:
      "NixOS/nixpkgs#502810 (2026-03-23, 'python3Packages.torch: 2.10.0 -> 2.11.0' and 'python3Packages.torchaudio: " +
      "2.10.0 -> 2.11.0' in one update; nixpkgs-review built python313Packages and python314Packages torch and " +
      "torchaudio); pytorch/audio v2.11.0 (torchaudio 2.11 builds against PyTorch's stable ABI: DESIGN.md rule 6); " +
      "cu128 and cu130 builds of torch 2.11.0 quoted in stored projects",
  },
];

export const nixpkgs: NixpkgsPin[] = [
  {
    rev: "fe5e41d7ffc0421f0913e8472ce6238ed0daf8e3",
    date: null,
    sha256: null,
    // No flake.lock or fetchTarball with a hash of this rev was found (its users write "You can add the sha256 here
    // once known"): matrix.ts must give releases[].sha256 for it.
    sha256Source: null,
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
    date: null,
    sha256: null,
    // Pinned by URL alone in every stored recipe (build-pytorch, build-torchvision, flox/torchaudio-nix); no narHash
    // found. 0182a36 below carries the same torch 2.9.1 with a sourced hash and is preferred for 2.9.1.
    sha256Source: null,
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
  {
    rev: "0182a361324364ae3f436a63005877674cf45efb",
    date: "2026-02-17",
    sha256: "sha256-0NBlEBKkN3lufyvFegY4TYv5mCNHbi5OmBDrzihbBMQ=",
    sha256Source:
      "narHash of two stored flake.lock files locking github:NixOS/nixpkgs/nixos-unstable at this rev " +
      "(lastModified 1771369470 = 2026-02-17)",
    torch: "2.9.1",
    torchaudio: "2.9.1",
    python: ["3.12", "3.13"],
    cuda: ["12.8", "12.9"],
    brokenCuda: {
      "13.0": "nixpkgs torch 2.9.1 brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    // Sources disagree on this rev's torch: one build-pytorch planning note says it "ships 2.10.0 natively", but the
    // branch that uses it (pytorch-2.10-python313 README: "0182a36 with cudaPackages_12_9 and torch 2.10.0 source
    // override") and its vLLM recipes ("Custom PyTorch 2.9.1", "pin 0182a36 has 2.9.1 natively") say 2.9.1; the
    // 2.10 update (#484881) is later. We record 2.9.1; pkgs/variant-attrs.nix refuses a mismatch at evaluation.
    source:
      "barstoolbluz/build-pytorch branch pytorch-2.10-python313 README (CUDA 12.8/12.9 variants use 0182a36 with " +
      "cudaPackages_12_8/_12_9 and a torch 2.10.0 source override) and its recipes ('pin 0182a36 has 2.9.1 " +
      "natively'); build-pytorch vllm-0.15.1 recipes at 0182a36 (python312/python313 variants, cudaPackages_12_8 and " +
      "_12_9); nixpkgs torch source/default.nix at 6b516b4 (torch 2.9.1, brokenConditions: CUDA major 11 or 12)",
  },
  {
    rev: "549bd84d6279f9852cae6225e372cc67fb91a4c1",
    date: "2026-05-05",
    sha256: "sha256-hGdgeU2Nk87RAuZyYjyDjFL6LK7dAZN5RE9+hrDTkDU=",
    sha256Source:
      "narHash of a stored flake.lock excerpt locking github:NixOS/nixpkgs at this rev (lastModified 1777954456 = " +
      "2026-05-05; 'Added input nixpkgs: github:NixOS/nixpkgs/549bd84 (2026-05-05)')",
    torch: "2.11.0",
    torchaudio: "2.11.0",
    python: ["3.12", "3.13", "3.14"],
    cuda: ["12.8", "12.9", "13.0"],
    // CUDA 13: nixpkgs torch 2.10.0 (GaetanLepage/nixpkgs d361bc7) still accepted CUDA majors 11 and 12 only; the
    // torch 2.13.0 file stored later accepts 11, 12 and 13. Between them #501079 (2026-03-18, "fixes the PyTorch
    // build when using cudaPackages>=13.0") landed before the 2.11 update. The brokenConditions of 2.11.0 at this rev
    // were not read directly; we never set allowBroken, so if they still refuse CUDA 13 evaluation stops with
    // nixpkgs' own "Unsupported CUDA version" instead of building anything else.
    brokenCuda: {},
    source:
      "NixOS/nixpkgs#502810 (torch and torchaudio 2.10.0 -> 2.11.0, nixpkgs-review 2026-03-27 on python313Packages " +
      "and python314Packages) before this nixos-unstable rev of 2026-05-05; NixOS 26.05 (branched from unstable in " +
      "May 2026) builds python3.12-torch-2.11.0 (a stored deployment log); #498861 (2026-03-11, cudaPackages 12.8 -> " +
      "12.9: cudaPackages_12_8 and _12_9); #501079 (2026-03-18, cuda_cccl patch fixing torch on CUDA >= 13.0) and " +
      "#504339 (2026-03-28, torch: gcc 14 with CUDA 12.8/12.9) before this rev; nixpkgs torch source/default.nix " +
      "2.10.0 and torchaudio/default.nix 2.10.0 (005ab72) for the formal arguments",
  },
];
