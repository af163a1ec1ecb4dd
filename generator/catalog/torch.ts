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
import type { NixpkgsPin, TorchRelease } from "./schema.ts";

const RELEASE_MD = "pytorch/pytorch RELEASE.md 'Release Compatibility Matrix'";
/**
 * pytorch.org's version compatibility table as mirrored by PyTorchKR/pytorch.kr (_get_started/version-compatibility.md
 * at 1c9bf47, which the site takes from pytorch/pytorch.github.io): release date, torchvision, torchcodec, Python
 * (PyPI classifiers) and CUDA per release; 2.14.0 from PyTorchKR/pytorch.kr#119 (pytorch/pytorch.github.io@563f92c).
 */
const COMPAT = "pytorch.org version compatibility table (PyTorchKR/pytorch.kr _get_started/version-compatibility.md at 1c9bf47)";
const TORCHCODEC =
  "Since torchaudio 2.9, torchaudio.load and torchaudio.save go through TorchCodec (pytorch/audio#3902); nixpkgs' " +
  "torchaudio before 2.11 does not depend on torchcodec (pkgs/development/python-modules/torchaudio/default.nix " +
  "at 005ab72), so to read or write audio files take torchcodec from this package's passthru.pythonPackages (the " +
  "variant's Python set, where torchcodec is built on this variant's torch), not from another package set.";
const TORCHCODEC_DEP =
  "nixpkgs' torchaudio 2.11.0 depends on torchcodec (dependencies = [ torch torchcodec ]): both are built on this " +
  "variant's torch, one torch per closure. torchcodec, torchvision and every other package built on the same torch " +
  "are in this package's passthru.pythonPackages.";
const CUDA_SETS_13_2 =
  "cudaPackages_13_2: on master by 2026-04-27 (NixOS/nixpkgs#513972 'cudaPackages.cuda_crt: do not patch math headers on " +
  ">=13.2', which 'Fixes cudaPackages_13_2.cuda_crt'); cudaPackages_13 is 13.2 (13.2.1 since NixOS/nixpkgs#525132)";
const CUDA_SETS_2026 = `cudaPackages_12_8, _12_9 and _13_0 are in every cuda-packages.nix of 2026 found, before and after this rev; ${CUDA_SETS_13_2}`;
/**
 * Which pythonXYZPackages nixpkgs' CI evaluation recurses into (all-packages.nix `recurseIntoAttrs`), per era. Sources
 * (as read, kept in no file here): a 2025 all-packages.nix (`python3 = python313`; python312Packages and python313Packages
 * `recurseIntoAttrs`; `python3Packages = dontRecurseIntoAttrs …`); a 2026 all-packages.nix (`python3 = python314`;
 * python313Packages and python314Packages `recurseIntoAttrs`, python312Packages and python315Packages plain). Neither
 * file's commit is known, so every pin's value is inferred from its era.
 */
const RECURSED_2025 =
  "3.12, 3.13: the 2025 pattern (all-packages.nix with python3 = python313: python312Packages and python313Packages " +
  "recurseIntoAttrs, python3Packages dontRecurseIntoAttrs); not read at this rev";
const RECURSED_2026 =
  "3.13, 3.14: a 2026 all-packages.nix (python313Packages and python314Packages recurseIntoAttrs, python312Packages " +
  "plain); NixOS/nixpkgs#502810's review (2026-03-27) ran on python313Packages and python314Packages and #484881 " +
  "(2026-05-28) says python312Packages is not Hydra-built; not read at this rev";

const DEFAULT_CUDA_12_9 =
  "12.9: NixOS/nixpkgs#498861 (2026-03-11, cudaPackages 12.8 -> 12.9) came before this rev; nixpkgs' torchaudio 2.11.0 " +
  "file: 'As of 2026-03-27, the default `cudaPackages` version is 12.9.1'; a late-2026 all-packages.nix has " +
  "cudaPackages_12 = cudaPackages_12_9. Not read at this rev";

export const torch: TorchRelease[] = [
  {
    version: "2.8.0",
    nameTag: "28",
    torchaudio: "2.8.0",
    python: ["3.9", "3.10", "3.11", "3.12", "3.13"],
    cuda: ["12.6", "12.8", "12.9"],
    upstream: [{ version: "2.8.0", released: "2025-08-06", torchvision: "0.23.0", torchcodec: "0.7.0" }],
    source: `${RELEASE_MD} (2.8: Python >=3.9, <=3.13; stable CUDA 12.6, 12.8; experimental CUDA 12.9); ${COMPAT} (2.8.0)`,
  },
  {
    version: "2.9.1",
    nameTag: "29",
    torchaudio: "2.9.1",
    torchaudioNote: TORCHCODEC,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    upstream: [
      { version: "2.9.0", released: "2025-10-15", torchvision: "0.24.0", torchcodec: "0.8.0" },
      { version: "2.9.1", released: "2025-11-12", torchvision: "0.24.1", torchcodec: "0.9.1" },
    ],
    source:
      `${RELEASE_MD} (2.9: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0); ${COMPAT} (2.9.0, 2.9.1); torch 2.9.1 ` +
      "pairs with torchaudio 2.9.1 in PyTorch's install instructions (as quoted in several stored projects)",
  },
  {
    version: "2.10.0",
    nameTag: "210",
    torchaudio: "2.10.0",
    torchaudioNote: TORCHCODEC,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    upstream: [{ version: "2.10.0", released: "2026-01-21", torchvision: "0.25.0", torchcodec: "0.10.0" }],
    // nixpkgs carried torch 2.10.0 with torchaudio 2.10.0 between NixOS/nixpkgs#484881 and #502810 (Feb-Mar 2026).
    // The one revision of that window with a sourced narHash, 46db2e0 (nixos-unstable 2026-03-24, narHash
    // sha256-4hAV26qu… in fzakaria/nixpkgs-multiverse revisions.json), is only inferred to carry 2.10.0 (from PR
    // dates; #484881's merge date was not found): no source read torch at that rev, so the catalog has no 2.10 pin.
    source:
      `${RELEASE_MD} (2.10: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8; experimental CUDA 13.0); ${COMPAT} (2.10.0); ` +
      "nixpkgs pkgs/development/python-modules/torchaudio/default.nix at 005ab72 (version 2.10.0, torch from the " +
      "same set); NixOS/nixpkgs#502810 ('python3Packages.torchaudio: 2.10.0 -> 2.11.0', 'Previous update: #484881')",
  },
  {
    version: "2.11.0",
    nameTag: "211",
    torchaudio: "2.11.0",
    torchaudioNote: TORCHCODEC_DEP,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    cuda: ["12.6", "12.8", "13.0"],
    upstream: [{ version: "2.11.0", released: "2026-03-23", torchvision: "0.26.0", torchcodec: "0.11.0" }],
    source:
      `${RELEASE_MD} (2.11: Python >=3.10, <=3.14; stable CUDA 12.6, 12.8, 13.0), read in a stored copy of ` +
      "RELEASE.md that also lists 2.12-2.14; NixOS/nixpkgs#502810 (2026-03-23, torch and torchaudio 2.10.0 -> 2.11.0 " +
      `in one update); ${COMPAT} (2.11.0)`,
  },
  {
    version: "2.12.0",
    nameTag: "212",
    // torchaudio 2.11.0 is torchaudio's last release and serves torch >= 2.11 (see `torchaudio` below).
    torchaudio: "2.11.0",
    torchaudioNote: TORCHCODEC_DEP,
    python: ["3.10", "3.11", "3.12", "3.13", "3.14"],
    // PyTorch's own 2.12 wheels dropped CUDA 12.8 (PyTorchKR/pytorch.kr#82: "12.8 제거"); the release still supports
    // CUDA 12 through 12.6, and a source build with nixpkgs' cudaPackages_12_8 is a CUDA 12 build (majors are what
    // `judge` checks).
    cuda: ["12.6", "13.0", "13.2"],
    // 2.12.1 (2026-06-18) is the same minor: pytorch.org pairs it with torchvision 0.27.1 and torchcodec 0.13.0, and
    // its CUDA and Python ranges are 2.12.0's. A pin carrying 2.12.1 is judged by this entry's minor-level facts.
    upstream: [
      { version: "2.12.0", released: "2026-05-13", torchvision: "0.27.0", torchcodec: "0.12.0" },
      { version: "2.12.1", released: "2026-06-18", torchvision: "0.27.1", torchcodec: "0.13.0" },
    ],
    source:
      `${RELEASE_MD} (2.12: Python >=3.10, <=3.14; stable CUDA 12.6, 13.0; experimental 13.2; release 13 May 2026); ` +
      "pytorch.org release blog 'PyTorch 2.12 Release Blog'; PyTorchKR/pytorch.kr#102 (torchaudio 2.11.0 is the last " +
      `release, 2.12 has none; torchcodec 2.12.0 -> 0.12.0, 2.12.1 -> 0.13.0); ${COMPAT} (2.12.0, 2.12.1: CUDA 13.2; 13.0; 12.6)`,
  },
  {
    version: "2.13.0",
    nameTag: "213",
    // torchaudio 2.11.0 is torchaudio's last release and serves torch >= 2.11 (see `torchaudio` below).
    torchaudio: "2.11.0",
    torchaudioNote: TORCHCODEC_DEP,
    // Sources disagree on Python: RELEASE.md's matrix says <= 3.15 for 2.13, pytorch.org's table (PyPI classifiers)
    // says <= 3.14. The wider range is kept: 3.15 is in no catalog Python set, so it decides nothing here. They also
    // disagree on the date by a day (RELEASE.md 2026-07-09, pytorch.org 2026/07/08).
    python: ["3.10", "3.11", "3.12", "3.13", "3.14", "3.15"],
    cuda: ["12.6", "13.0", "13.2"],
    upstream: [{ version: "2.13.0", released: "2026-07-08", torchvision: "0.28.0", torchcodec: "0.14.0" }],
    source:
      `${RELEASE_MD} (2.13: Python >=3.10, <=3.15; stable CUDA 12.6, 13.0; experimental 13.2; released 2026-07-09); ` +
      `NixOS/nixpkgs#533426 (python3Packages.torch 2.12.0 -> 2.13.0); ${COMPAT} (2.13.0: Python >=3.10, <=3.14; CUDA ` +
      "13.2; 13.0; 12.6); PyTorchKR/pytorch.kr#102 (2.13 moves to C++20; torchcodec 0.14.0)",
  },
  {
    version: "2.14.0",
    nameTag: "214",
    // torchaudio 2.11.0 is torchaudio's last release and serves torch >= 2.11 (see `torchaudio` below).
    torchaudio: "2.11.0",
    torchaudioNote: TORCHCODEC_DEP,
    // As for 2.13: RELEASE.md's matrix says <= 3.15 (3.15t experimental), pytorch.org's table (PyPI classifiers) and
    // the release manager say <= 3.14. The wider range is kept: 3.15 is in no catalog Python set, so it decides nothing.
    python: ["3.10", "3.11", "3.12", "3.13", "3.14", "3.15"],
    cuda: ["12.6", "13.0", "13.2"],
    upstream: [{ version: "2.14.0", released: "2026-09-02", torchvision: "0.29.0", torchcodec: "0.16.0" }],
    // No catalog pin carries it: nixpkgs master has torch 2.14.0 (source/src.nix at 0d64e2a) and torchcodec 0.16.0
    // (0873ea5), but no flake.lock or fetchTarball with a hash of such a revision was found. `pin add` is the way in.
    source:
      `${RELEASE_MD} (2.14: Python >=3.10, <=(3.15, 3.15t experimental); stable CUDA 12.6, 13.0, 13.2; release 2 Sept ` +
      "2026), read in a stored copy of RELEASE.md whose matrix is kept in English; " +
      "PyTorchKR/pytorch.kr#119 (mirroring pytorch/pytorch.github.io@563f92c: 2.14.0 released 2026/09/02, torchvision " +
      "0.29.0, torchcodec 0.16.0, Python >=3.10, <=3.14 from the PyPI classifiers, CUDA 13.2; 13.0; 12.6, no torchaudio); " +
      "googlecolab/colabtools#6093 (2026-09-03, PyTorch's release manager: 'Python 3.10-Python 3.14', CUDA 13.0 the " +
      "default, cu126 and cu132 builds); coreweave/ml-containers#233 (torch 2.14.0 with torchvision 0.29.0)",
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
      "13.2": "nixpkgs torch brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    torchcodec: null,
    torchvision: "0.23.0",
    flashAttn: "unknown",
    xformers: "unknown",
    bitsandbytes: "unknown",
    vllm: "unknown",
    defaultPython: null,
    defaultCuda: null,
    recursedPython: ["3.12", "3.13"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: null,
    inferred: {
      flashAttn: "unknown: nixpkgs' flash-attn was initialised at 2.8.2 on 2025-07-31 (NixOS/nixpkgs#429821); this rev's date is not known",
      xformers: "unknown: 0.0.30 after NixOS/nixpkgs#446320 (2025-09-26), 0.0.32.post2 (broken with CUDA) before it; this rev's date is not known",
      bitsandbytes: "unknown: 0.46.1 or 0.47.0 (NixOS/nixpkgs#436594, 2025-08-24); this rev's date is not known",
      vllm: "unknown: this rev's date is not known; nixpkgs' vllm file was not read at it",
      recursedPython: RECURSED_2025,
      torchvision: "0.23.0: the torchvision of torch 2.8.0 in the build-torchvision README at this rev (barstoolbluz/build-torchvision main), not read from nixpkgs",
      torchcodec: "absent: nixpkgs' torchcodec was initialised at 0.8.1 (NixOS/nixpkgs#456843, 2025-10-29) with torch 2.9.0",
      python: "package sets as the build-torchvision/build-torchaudio recipes at this rev use them",
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
      "13.2": "nixpkgs torch 2.9.1 brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    torchcodec: "unknown",
    torchvision: "0.24.1",
    flashAttn: "2.8.2",
    xformers: "0.0.30",
    bitsandbytes: "unknown",
    vllm: "unknown",
    defaultPython: null,
    defaultCuda: null,
    recursedPython: ["3.12", "3.13"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: null,
    inferred: {
      flashAttn: "2.8.2: nixpkgs' flash-attn was initialised at 2.8.2 (NixOS/nixpkgs#429821, 2025-07-31) and moved to 2.8.3 only with #514440 (reviewed 2026-05-27); not read at this rev",
      xformers: "0.0.30: NixOS/nixpkgs#446320 (2025-09-26) took xformers back from 0.0.32.post2 (broken with CUDA) to 0.0.30, and #502963 (2026-03-24) moved it to 0.0.35; not read at this rev",
      bitsandbytes: "unknown: somewhere between 0.47.0 (NixOS/nixpkgs#436594, 2025-08-24) and 0.49.1 (on master until NixOS/nixpkgs#501796, 2026-03-21); this rev's date is not known",
      vllm: "unknown: this rev's date is not known; nixpkgs' vllm file was not read at it",
      recursedPython: RECURSED_2025,
      torchvision: "0.24.1: the build-torchvision README cuda-12_9 branch at this rev builds torchvision 0.24 on torch 2.9.1; the patch release not read",
      torchaudio: "2.9.1 from the release pairing, not read at this rev",
      torchcodec: "present (init at 0.8.1, NixOS/nixpkgs#456843, 2025-10-29, with torch 2.9.0), version not read",
    },
    source:
      "barstoolbluz/build-torchvision README 'Version Matrix' (cuda-12_9: PyTorch 2.9.1, CUDA 12.9.1, cuDNN " +
      "9.13.0, Python 3.13, nixpkgs 6a030d5); nixpkgs pkgs/top-level/cuda-packages.nix of that period (CUDA 12.9.1 " +
      "with cuDNN 9.13.0 alongside cudaPackages_12_6, _12_8 and _13_0); nixpkgs torch brokenConditions (torch 2.9.1 broken for " +
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
      "13.2": "nixpkgs torch 2.9.1 brokenConditions 'Unsupported CUDA version': cudaMajorVersion must be 11 or 12",
    },
    // Sources disagree on this rev's torch: one build-pytorch planning note says it "ships 2.10.0 natively", but the
    // branch that uses it (pytorch-2.10-python313 README: "0182a36 with cudaPackages_12_9 and torch 2.10.0 source
    // override") and its vLLM recipes ("Custom PyTorch 2.9.1", "pin 0182a36 has 2.9.1 natively") say 2.9.1; the
    // 2.10 update (#484881) is later. We record 2.9.1; pkgs/variant-attrs.nix refuses a mismatch at evaluation.
    torchcodec: "0.9.1",
    torchvision: "0.24.1",
    flashAttn: "2.8.2",
    xformers: "0.0.30",
    bitsandbytes: "0.49.1",
    vllm: "0.15.1",
    defaultPython: "3.13",
    defaultCuda: "12.8",
    recursedPython: ["3.12", "3.13"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: "nixos-unstable",
    inferred: {
      flashAttn: "2.8.2: from NixOS/nixpkgs#429821 (init, 2025-07-31) until #514440 (2.8.3, reviewed 2026-05-27); not read at this rev",
      xformers: "0.0.30: between NixOS/nixpkgs#446320 (2025-09-26) and #502963 (0.0.35, 2026-03-24); not read at this rev",
      bitsandbytes: "0.49.1: NixOS/nixpkgs#501796 (2026-03-21) bumped 0.49.1 to 0.49.2, and upstream released 0.49.1 on 2026-01-08; when nixpkgs took 0.49.1 was not found (the #406675 cited before is about something else); not read at this rev",
      vllm: "0.15.1: barstoolbluz/build-vllm's variants at this rev build python312Packages.vllm (b98f1e4) and python313Packages.vllm with CUDA 12.8 and 12.9, bitsandbytes kept (main, 1b17389) and name it 'vLLM 0.15.1'; NixOS/nixpkgs#483505 (0.14.0 -> 0.15.1, 2026-01-24) before this rev; the file was not read at this rev",
      recursedPython: RECURSED_2025,
      torchvision: "0.24.1: the torchvision paired with torch 2.9.1 (pytorch/vision 0.24 ↔ 2.9), not read at this rev",
      torchcodec: "0.9.1: NixOS/nixpkgs#498390 'torchcodec: 0.9.1 -> 0.10.0' is dated 2026-03-09, after this rev",
      defaultPython: "python3 became 3.14 in nixos-unstable on 2026-07-08 (carlthome/mirpkgs#26)",
      defaultCuda: "12.8: cudaPackages_12 = cudaPackages_12_8 in 2025 all-packages.nix; NixOS/nixpkgs#498861 (12.8 -> 12.9) is dated 2026-03-11, after this rev",
    },
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
    cuda: ["12.8", "12.9", "13.0", "13.2"],
    // CUDA 13: nixpkgs torch 2.10.0 (GaetanLepage/nixpkgs d361bc7) still accepted CUDA majors 11 and 12 only; the
    // torch 2.13.0 file stored later accepts 11, 12 and 13. Between them #501079 (2026-03-18, "fixes the PyTorch
    // build when using cudaPackages>=13.0") landed before the 2.11 update. The brokenConditions of 2.11.0 at this rev
    // were not read directly; we never set allowBroken, so if they still refuse CUDA 13 evaluation stops with
    // nixpkgs' own "Unsupported CUDA version" instead of building anything else.
    brokenCuda: {},
    torchcodec: "0.11.1",
    torchvision: "0.26.0",
    flashAttn: "2.8.2",
    xformers: "0.0.35",
    bitsandbytes: "0.49.2",
    vllm: "0.16.0",
    defaultPython: "3.13",
    defaultCuda: "12.9",
    recursedPython: ["3.13", "3.14"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: "nixos-unstable",
    inferred: {
      flashAttn: "2.8.2: NixOS/nixpkgs#514440 (2.8.2 -> 2.8.3) was reviewed on 2026-05-27, after this rev; not read at this rev",
      cuda: `cudaPackages_12_8, _12_9 and _13_0 as NixOS/nixpkgs#498861 and #501079 show them; ${CUDA_SETS_13_2}, before this rev of 2026-05-05`,
      xformers: "0.0.35: NixOS/nixpkgs#502963 (0.0.30 -> 0.0.35, 2026-03-24) before this rev; not read at this rev",
      bitsandbytes: "0.49.2: NixOS/nixpkgs#501796 (0.49.1 -> 0.49.2, 2026-03-21) before this rev; upstream 0.50.0 came on 2026-07-24; not read at this rev",
      vllm:
        "0.16.0, from pull-request descriptions and a consumer's commits, not read at this rev: NixOS/nixpkgs#498040 " +
        "'vllm: 0.16.0 -> 0.24.0' (opened 2026-03-08 from master's 0.16.0, merged 2026-08-05, after this rev); #504975 " +
        "'vllm: 0.16.0 -> 0.18.1' (2026-03-30) was closed unmerged; graham33/nixos-dgx-spark 18a2cb5 (2026-04-16, on nixpkgs " +
        "459e685 of 2026-03-30) 'Bump vLLM 0.16.0 → 0.19.0 … Ports the vLLM 0.19.0 package from NixOS/nixpkgs#498040' and " +
        "d770a2e ('the local copy of the package definition from NixOS/nixpkgs#498040 (0.19.0)'): the stored 0.19.0 and " +
        "0.20.1 files are that pull request's branch, never master",
      recursedPython: RECURSED_2026,
      torchvision: "0.26.0: NixOS/nixpkgs#502810 moved torch 2.11 and torchvision 0.26 together before this rev; not read at this rev",
      defaultCuda: DEFAULT_CUDA_12_9,
      torch:
        "2.11.0: NixOS/nixpkgs#502810 (torch, torchaudio, torchvision, torchcodec to 2.11 / 0.26 / 0.11) was reviewed " +
        "on 2026-03-27 and nixos-26.05, branched from unstable after this rev, carries torch 2.11.0; PyTorch 2.12 was " +
        "released on 2026-05-13, after this rev. Not read at this rev",
      torchcodec: "0.11.1: NixOS/nixpkgs#510060 (0.11.0 -> 0.11.1, 2026-04-14); #530330 (2026-06-10) came later",
      brokenCuda: "CUDA 13 accepted: see the comment above; torch 2.11.0's brokenConditions were not read",
      defaultPython: "python3 became 3.14 in nixos-unstable on 2026-07-08 (carlthome/mirpkgs#26)",
    },
    source:
      "NixOS/nixpkgs#502810 (torch and torchaudio 2.10.0 -> 2.11.0, nixpkgs-review 2026-03-27 on python313Packages " +
      "and python314Packages) before this nixos-unstable rev of 2026-05-05; NixOS 26.05 (branched from unstable in " +
      "May 2026) builds python3.12-torch-2.11.0 (a stored deployment log); #498861 (2026-03-11, cudaPackages 12.8 -> " +
      "12.9: cudaPackages_12_8 and _12_9); #501079 (2026-03-18, cuda_cccl patch fixing torch on CUDA >= 13.0) and " +
      "#504339 (2026-03-28, torch: gcc 14 with CUDA 12.8/12.9) before this rev; nixpkgs torch source/default.nix " +
      "2.10.0 and torchaudio/default.nix 2.10.0 (005ab72) for the formal arguments",
  },
  {
    rev: "a3116115851d68b8952a2a4221cc25a84e56b532",
    date: "2026-09-01",
    sha256: "sha256-Z+vUNbfd2FIKkWOTkcT7RYlh3oFCnig/d2eXD1SWf2E=",
    sha256Source:
      "sha256 of two stored fetchTarball calls of this rev (`rev = \"a311611…\"; sha256 = \"sha256-Z+vU…\"`) and the " +
      "narHash a stored Go test uses for rev a311611 (the NAR hash of the unpacked tree, as a flake.lock records it)",
    torch: "2.11.0",
    torchaudio: "2.11.0",
    python: ["3.12", "3.13", "3.14"],
    cuda: ["12.8", "12.9", "13.0", "13.2"],
    brokenCuda: {},
    torchcodec: "0.11.1",
    torchvision: "0.26.0",
    flashAttn: "unknown",
    xformers: "0.0.35",
    bitsandbytes: "0.49.2",
    vllm: "0.16.0",
    defaultPython: "3.13",
    defaultCuda: "12.9",
    recursedPython: ["3.13", "3.14"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: "nixos-26.05",
    inferred: {
      flashAttn: "unknown: 26.05 branched in late May 2026, about when NixOS/nixpkgs#514440 (2.8.2 -> 2.8.3, reviewed 2026-05-27) merged; which side of it the branch is was not found",
      xformers: "0.0.35: NixOS/nixpkgs#502963 (2026-03-24) before 26.05 branched; not read at this rev",
      bitsandbytes: "0.49.2: NixOS/nixpkgs#501796 (2026-03-21) before 26.05 branched, and upstream 0.50.0 (2026-07-24) is a minor update a stable branch does not take; not read at this rev",
      vllm: "0.16.0: as at 549bd84, the unstable revision 26.05 branched after (NixOS/nixpkgs#498040, from 0.16.0, merged 2026-08-05, after 26.05 branched; a stable branch takes no minor vLLM update); not read at this rev",
      recursedPython: RECURSED_2026,
      torchvision: "0.26.0: a 26.05 deployment record (fcb8fcd) lists python3.13-torchvision-0.26.0 beside torch 2.11.0; not read at this rev",
      defaultCuda: DEFAULT_CUDA_12_9,
      torch:
        "2.11.0 read at an earlier revision of the same branch (nixos-26.05.7376, fcb8fcd, 2026-08-09: " +
        "python3.13-torch-2.11.0 and python3.13-torchaudio-2.11.0 substitutable, recorded 2026-09-09); a stable branch " +
        "takes no minor torch update, so this later 26.05 revision (build 8846) is taken to carry the same",
      torchcodec: "0.11.1: 26.05 branched in late May 2026, before NixOS/nixpkgs#530330 (2026-06-10)",
      python: "python312-314Packages as at 549bd84, the unstable revision 26.05 branched after",
      cuda: `cudaPackages_12_8 and _12_9 are still in late-2026 files; _13_0 was updated in April (#514134); ${CUDA_SETS_13_2}, before 26.05 branched`,
      brokenCuda: "as at 549bd84 (torch 2.11.0's brokenConditions were not read)",
    },
    source:
      "NixOS channel name nixos-26.05.8846.a3116115851d (a stored NixOS configuration's `nixpkgs-stable` tarball; ISO " +
      "names nixos-minimal-26.05.8846.a3116115851d-x86_64-linux.iso); system names 26.05.20260901.a311611 (date); a " +
      "26.05 deployment at fcb8fcd recording python3.13-torch-2.11.0, -torchvision-0.26.0 and -torchaudio-2.11.0 " +
      "built from python3 (3.13)",
  },
  {
    rev: "2c423e03bbafcff28bfadc6781a4a8257f205cb5",
    date: "2026-08-22",
    sha256: "sha256-dt4WdcvsA8/RCe+VZZwqU0X+XMM3wBbGCWA0/sFWzGo=",
    sha256Source:
      "narHash in fzakaria/nixpkgs-multiverse revisions.json (nixos-unstable channel revisions; entry " +
      "nixos-26.11pre1059570.2c423e03bbaf, 2026-08-22); the same narHash in two stored projects pinning this rev " +
      "(one with lastModified 1787360063 = 2026-08-22)",
    torch: "2.12.0",
    torchaudio: "2.11.0",
    python: ["3.12", "3.13", "3.14"],
    cuda: ["12.8", "12.9", "13.0", "13.2"],
    brokenCuda: {},
    torchcodec: "unknown",
    torchvision: "0.27.1",
    flashAttn: "2.8.3.post1",
    xformers: "0.0.35",
    bitsandbytes: "unknown",
    vllm: "0.24.0",
    defaultPython: "3.14",
    defaultCuda: "12.9",
    recursedPython: ["3.13", "3.14"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: "nixos-unstable",
    inferred: {
      flashAttn: "2.8.3.post1: NixOS/nixpkgs#530811 (2.8.3 -> 2.8.3.post1, 2026-06-11, merged) before this rev; no later flash-attn 2 release (v2.8.3.post1 is upstream's newest tag); not read at this rev",
      xformers: "0.0.35: NixOS/nixpkgs#502963 (2026-03-24); no later bump found; not read at this rev",
      bitsandbytes: "unknown: 0.49.2 (NixOS/nixpkgs#501796) or a 0.50.x (upstream 0.50.0 on 2026-07-24); no bump PR was found",
      vllm: "0.24.0: NixOS/nixpkgs#498040 (-> 0.24.0) merged 2026-08-05, before this rev of 2026-08-22, and master still had 0.24.0 late in September (graham33/nixos-dgx-spark fixes.nix: 'pending the bump in NixOS/nixpkgs#549327'); not read at this rev",
      recursedPython: RECURSED_2026,
      torchvision: "0.27.1: the newest stored nixpkgs torchvision file (version 0.27.1, the pair of torch 2.12); not read at this rev",
      defaultCuda: DEFAULT_CUDA_12_9,
      python:
        "python313Packages and python314Packages are Hydra-built in this period (NixOS/nixpkgs#502810 review); " +
        "python312Packages is still defined, not Hydra-built (#484881 comment, 2026-05-28)",
      cuda: CUDA_SETS_2026,
      brokenCuda:
        "CUDA 13 accepted: torch 2.12.0's brokenConditions accept majors 11, 12, 13 in a fork's copy of the file " +
        "(Swarsel/nixpkgs 4aa6836), and upstream torch 2.13.0 (098e8c2) does too; upstream 2.12.0 not read",
      torchcodec:
        "present (torchaudio 2.11.0 depends on it); after NixOS/nixpkgs#530330 (2026-06-10) it compiles for " +
        "torch.cudaCapabilities; its version was not read",
    },
    source:
      "an outside `nix eval --offline` at this rev (x86_64-linux): python 3.14.7, torch 2.12.0, torchaudio 2.11.0, " +
      "numpy 2.5.1 (a stored public project's qualification notes); nixos-unstable had python3.13-torch-2.12.0 by " +
      "2026-06-12 and python3.14-torch-2.12.0 on 2026-09-07 (stored records), torch 2.13.0 only from 2026-09-06; " +
      "python3 switched to 3.14 on 2026-07-08 (carlthome/mirpkgs#26)",
  },
  {
    rev: "c043004d1c6985732bcc1cbc5a9c9aecbbb4e0f0",
    date: "2026-09-05",
    sha256: "sha256-7QYjT2vHLuX9Z1pdxHXDKCbh1CR3D/2rywB9Tx0MPRg=",
    sha256Source:
      "narHash of a stored flake.lock diff moving ref nixos-unstable from 801bef6 to this rev (lastModified 1788614874 = " +
      "2026-09-05); the same hash as the nix-base32 sha256 061x1hfl…j61pd of a stored fetchTarball of this rev's GitHub " +
      "archive (converted to SRI)",
    torch: "2.13.0",
    torchaudio: "2.11.0",
    python: ["3.12", "3.13", "3.14"],
    cuda: ["12.8", "12.9", "13.0", "13.2"],
    brokenCuda: {},
    torchcodec: "unknown",
    torchvision: "0.28.0",
    flashAttn: "2.8.3.post1",
    xformers: "0.0.35",
    bitsandbytes: "unknown",
    vllm: "0.24.0",
    defaultPython: "3.14",
    defaultCuda: "12.9",
    recursedPython: ["3.13", "3.14"],
    // Not read by evaluation: catalog/cuda.ts nixpkgsDefaultCapabilities (from the table at 55d5788) stands in.
    nixpkgsDefaultCapabilities: null,
    // The linkedAt lists of catalog/device-code.ts were read for this revision.
    bundledLinksKnown: true,
    channel: "nixos-unstable",
    inferred: {
      flashAttn: "2.8.3.post1: as at 2c423e0 (NixOS/nixpkgs#530811, 2026-06-11); not read at this rev",
      xformers: "0.0.35: as at 2c423e0; not read at this rev",
      bitsandbytes: "unknown: as at 2c423e0",
      vllm: "0.24.0: as at 2c423e0 (NixOS/nixpkgs#498040 merged 2026-08-05; #549327 not merged by late September); not read at this rev",
      recursedPython: RECURSED_2026,
      torchvision: "0.28.0: upstream pairs torch 2.13.0 with torchvision 0.28.0 ('torchvision 0.28.0+cpu requires torch==2.13.0'); no nixpkgs 0.28.0 file was found stored",
      torchaudio:
        "2.11.0: torchaudio has no later release (PyTorchKR/pytorch.kr#102) and nixpkgs' torchaudio was 2.11.0 at 2c423e0 " +
        "(2026-08-22); not read at this rev",
      python:
        "python312-314Packages as at 2c423e0 (a stored, undated mid-2026 python/default.nix lists python311-315); only " +
        "python3.14-torch-2.13.0 was seen at this rev",
      cuda: CUDA_SETS_2026,
      brokenCuda:
        "CUDA 13 accepted: torch 2.13.0's brokenConditions accept CUDA majors 11, 12, 13 in every stored 2.13.0 file " +
        "(NixOS/nixpkgs 098e8c2, 85b7ecd, 7dec1fd, a8b649e); which of them this rev has was not seen",
      torchcodec: "present (torchaudio 2.11.0 depends on it); stored nixpkgs files show 0.16.0 and 0.17.0, neither dated to this rev",
      defaultPython: "3.14: the torch seen in the cache at this rev is python3.14-torch-2.13.0 (python3 is 3.14 since 2026-07-08)",
      defaultCuda: DEFAULT_CUDA_12_9,
    },
    source:
      "nixos-unstable channel revision nixos-26.11pre1068089.c043004d1c69 (a stored NixOS verification record); a stored " +
      "note 'Verified 2026-09-06 against our locked nixpkgs (c043004): the cache has python3.14-torch-2.13.0 … for this " +
      "exact rev' (lcleveland/itera.personal hosts/apps/dream/freetoken.nix at 34c7437); NixOS/nixpkgs#533426 (torch " +
      "2.12.0 -> 2.13.0); nixpkgs torch source/default.nix 2.13.0 at 098e8c2 for the formal arguments",
  },
];
