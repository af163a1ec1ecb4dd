/**
 * CPython minor versions and their nixpkgs package-set attributes.
 *
 * A variant named `python313` uses `python313Packages` of the pinned nixpkgs, never `python3Packages`
 * (ARCHITECTURE.md rule 1). Which pins carry which sets is recorded per pin in `torch.ts` (`NixpkgsPin.python`).
 *
 * Source: the attribute names as used against the pinned nixpkgs revisions by barstoolbluz/build-pytorch
 * (`nixpkgs_pinned.python311Packages.torch` in .flox/pkgs/pytorch-python311-*.nix, python313 variants in its README)
 * and barstoolbluz/build-torchaudio; nixpkgs' naming pattern pythonXYZPackages for CPython X.YZ.
 */
import type { PythonVersion } from "./schema.ts";

const SRC =
  "nixpkgs attribute pythonXYZPackages, as used by barstoolbluz/build-pytorch .flox/pkgs/pytorch-python311-*.nix " +
  "(nixpkgs_pinned.python311Packages.torch) and its python313 variants";

export const python: PythonVersion[] = [
  { version: "3.11", packageSet: "python311Packages", source: SRC },
  { version: "3.12", packageSet: "python312Packages", source: SRC },
  { version: "3.13", packageSet: "python313Packages", source: SRC },
  {
    version: "3.14",
    packageSet: "python314Packages",
    source: "NixOS/nixpkgs#502810 nixpkgs-review (2026-03-27) built python314Packages.torch and python314Packages.torchaudio",
  },
];
