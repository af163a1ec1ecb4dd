/**
 * CPython minor versions and their nixpkgs package-set attributes.
 *
 * A variant named `python313` uses `python313Packages` of the pinned nixpkgs, never `python3Packages`
 * (DESIGN.md rule 1). Which pins carry which sets is recorded per pin in `torch.ts` (`NixpkgsPin.python`).
 *
 * Source: nixpkgs pkgs/top-level/all-packages.nix / python-packages aliases (`python311Packages`,
 * `python312Packages`, `python313Packages` exist in every 2025 nixpkgs revision).
 */
import type { PythonVersion } from "../schema.ts";

const SRC = "nixpkgs pkgs/top-level/all-packages.nix (pythonNNNPackages = recurseIntoAttrs pythonNNN.pkgs)";

export const python: PythonVersion[] = [
  { version: "3.11", packageSet: "python311Packages", source: SRC },
  { version: "3.12", packageSet: "python312Packages", source: SRC },
  { version: "3.13", packageSet: "python313Packages", source: SRC },
];
