# pkgs/python-set.nix: the Python package set of one variant, in which `torch` IS the variant's torch
# (hand-written; used by pkgs/on-torch.nix and pkgs/torch-env.nix, and exposed as passthru.pythonPackages).
#
# Takes
#   pkgs      the nixpkgs package set pkgs/nixpkgs.nix imported for the variant.
#   variant   the variant attrset (see pkgs/pytorch.nix); reads name, nixpkgsRev, pythonPackageSet.
#   torch     the variant's torch derivation (pkgs/pytorch.nix's result for the pytorch variant).
# Returns
#   pkgs.${variant.pythonPackageSet}.overrideScope (final: prev: { torch = torch; }): the same package set with
#   `torch` replaced, so every package of it that takes `torch` through callPackage (torchaudio; torchcodec, which
#   nixpkgs' torchaudio 2.11 depends on; torchvision, among torchcodec's check inputs; anything else) is built on
#   exactly that derivation. One torch per closure (DESIGN.md rule 8).
#
# The idiom, and why this one
# - nixpkgs offers three: `pythonXYZPackages.overrideScope`, `pythonXYZ.override { packageOverrides; self; }`
#   and a `pythonPackagesExtensions` overlay on the whole nixpkgs import.
# - The overlay would change the nixpkgs instance itself: every variant sharing an instance (same pin, system,
#   CUDA set) would need its own import, one per torch, which is the sharing pkgs/matrix.nix exists for.
# - `python.override { packageOverrides }` also gives a consistent `python.withPackages`, but needs the `self`
#   knot tied by hand; our outputs are packages, not an interpreter environment.
# - `overrideScope` is local to this one Python set, costs one more fixpoint over it (lazy: only what is used
#   is evaluated), and is what `lib.makeScopeWithSplicing'`, which builds every Python package set, provides
#   (pkgs/development/interpreters/python/passthrufun.nix). Packages outside the set (magma, nccl, the CUDA
#   libraries) never take `torch`, so nothing else needs rewiring.
#
# With torch = null (pkgs/pytorch.nix, which takes torch from it) it returns the set as nixpkgs has it: the one
# place a variant's Python set is looked up.
{ pkgs, variant, torch ? null }:

let
  pythonPackages =
    pkgs.${variant.pythonPackageSet}
      or (throw "${variant.name}: nixpkgs ${variant.nixpkgsRev} has no ${variant.pythonPackageSet}");
in
if torch == null then pythonPackages
else if !(pythonPackages ? overrideScope) then
  throw "${variant.name}: ${variant.pythonPackageSet} of nixpkgs ${variant.nixpkgsRev} has no overrideScope (not a lib.makeScope set)"
else
  pythonPackages.overrideScope (final: prev: { inherit torch; })
