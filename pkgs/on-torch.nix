# pkgs/on-torch.nix: a package built on torch (torchaudio, torchvision, … : the catalog's table,
# generator/catalog/packages.ts) for one variant of the matrix, built against the matching PyTorch variant
# (hand-written; called by pkgs/matrix.nix). Nothing here names a package: the variant says which (`attr`).
#
# Takes
#   pkgs      the package set of this variant, the same instance its torch was built from (pkgs/matrix.nix).
#   torch     the PyTorch variant this package links against: pkgs/matrix.nix's package of the variant
#             named in dependsOn, same Python/CUDA/SM/ISA/pin (it carries passthru.variant, which is checked
#             against this variant).
#   variant   the attrset described in pkgs/pytorch.nix, with role = "onTorch", attr = the nixpkgs attribute
#             ("torchvision") and version = that package's version (torchVersion = the torch version).
#   siblings  the package variants built on the same torch (pkgs/matrix.nix), default [ variant ]: they are the
#             set's own packages of those attributes (pkgs/python-set.nix), this variant among them.
# Returns
#   `${attr}` of the variant's Python set with `torch` replaced by the given torch and each sibling's attribute
#   replaced by that sibling variant (pkgs/python-set.nix: `${pythonPackageSet}.overrideScope`), so the package AND
#   every package of its closure that takes `torch` (torchcodec, which nixpkgs' torchaudio 2.11 depends on;
#   torchvision among torchcodec's check inputs, which is then the torchvision variant itself) are built on that one
#   derivation. The variant is pkgs/package-on-torch.nix over the set's package: overridden where the package
#   accepts them with cudaSupport and torch's own cudaPackages, then pkgs/variant-attrs.nix, passthru.torch = torch
#   and passthru.pythonPackages = that Python set (take torchcodec or any other package from it to stay on the same
#   torch).
#
# Facts relied on
# - Overriding only torchaudio's own `torch` argument is not enough from torchaudio 2.11 on: nixpkgs' torchaudio
#   2.11.0 has `dependencies = [ torch torchcodec ]` and torchcodec takes the `torch` of its package set, so the
#   closure would hold the set's stock torch beside ours, a second ~2-hour build that pythonCatchConflictsHook
#   (on in buildPythonPackage) refuses ("Found duplicated packages in closure for dependency 'torch'").
#   Hence the package-set override of pkgs/python-set.nix.
# - nixpkgs torchaudio (pkgs/development/python-modules/torchaudio/default.nix, 2025) takes `torch`,
#   `cudaSupport ? torch.cudaSupport`, `cudaPackages` (callPackage) and `gpuTargets` (ROCm only), builds
#   with torch's stdenv and exports TORCH_CUDA_ARCH_LIST from torch.cudaCapabilities. nixpkgs torchvision
#   (.../torchvision/default.nix, 0.23-0.27) takes `torch` only among these and sets env.TORCH_CUDA_ARCH_LIST
#   from torch's cudaCapabilities when torch.cudaSupport (generator/catalog/packages.ts `archList`).
{ variant, torch, pkgs, siblings ? [ variant ] }:

let
  # The torch variant must be the one this package's name promises.
  torchVariant = torch.variant or null;
  mismatches = builtins.filter (field: torchVariant.${field} != variant.${field}) [
    "torchVersion" "python" "cuda" "sm" "isa" "system" "cudaCapabilities" "cflags" "nixpkgsRev"
  ];
  checkedTorch =
    if torchVariant == null then throw "${variant.name}: `torch` is not a variant-matrix PyTorch (no passthru.variant)"
    else if mismatches != [ ] then
      throw "${variant.name}: torch ${torchVariant.name} differs in ${builtins.concatStringsSep ", " mismatches}"
    else torch;
  # This variant is always among the set's replaced packages.
  siblings' = siblings ++ builtins.filter (_: !(builtins.any (s: s.name == variant.name) siblings)) [ variant ];
  # Checked before the set is built on it.
  pythonPackages = import ./python-set.nix { inherit pkgs variant; torch = checkedTorch; siblings = siblings'; };
in
assert variant.role == "onTorch";
pythonPackages.${variant.attr}
