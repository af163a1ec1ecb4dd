# pkgs/overlay.nix: a nixpkgs overlay that gives a user's own nixpkgs one variant's torch and the packages the matrix
# builds on it (hand-written; the flake's `overlays.<pytorch variant name>`, pkgs/flake-outputs.nix). The recipe is the
# variant's, through the same builders: pkgs/pytorch.nix (gpuTargets = the capabilities, cudaSupport, the ISA's
# NIX_CFLAGS_COMPILE and gccarch system feature, pkgs/variant-attrs.nix) and pkgs/package-on-torch.nix for each
# package of the table built on it (torchaudio, torchvision, …: TORCH_CUDA_ARCH_LIST, the package's own arch inputs).
#
# Takes
#   variant   the pytorch variant (pkgs/variants.nix entry, role "torch").
#   siblings  the package variants built on it (role "onTorch", pkgs/matrix.nix), each replacing its attribute.
# Returns
#   final: prev: {
#     pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [ ext ];  ext replaces `torch` and the siblings'
#                                 attributes in the Python set of the variant's Python version only (python3Packages
#                                 too when it is that set), so every package of that set that takes `torch` (the user's
#                                 transformers, accelerate, …) is built on the variant's torch: one torch per closure.
#     cudaPackages = final.<variant's cudaPackages_X_Y>;   CUDA variants: the one CUDA set of ARCHITECTURE.md rule 2, as
#                                 pkgs/nixpkgs.nix's overlay does (torch, magma, nccl take it through callPackage).
#   }
#
# Facts relied on
# - nixpkgs applies `pythonPackagesExtensions` to every pythonXYZPackages set as overlays of the set
#   (pkgs/development/interpreters/python/passthrufun.nix); an overlay of nixpkgs may append to it.
# - An overlay cannot set nixpkgs `config`. The package-set scope (config.cudaCapabilities, cudaForwardCompat = false:
#   pkgs/nixpkgs.nix) is the user's import; a package-set-scope variant stops evaluation with what to set when the
#   user's config differs, rather than giving a torch whose CUDA libraries miss its GPU. cudaSupport of packages other
#   than torch and the table's packages (which the builders set) follows the user's config.cudaSupport.
{ variant, siblings ? [ ] }:

final: prev:
let
  isCuda = variant.cuda != null;
  packageSetScope = isCuda && variant.cudaCapabilitiesForPackageSet;
  configOk =
    !packageSetScope
    || ((prev.config.cudaCapabilities or null) == variant.cudaCapabilities && (prev.config.cudaForwardCompat or true) == false);
  ext = pyfinal: pyprev:
    if (pyprev.python.pythonVersion or null) != variant.python then { }
    else if !configOk then
      throw "${variant.name}: this variant compiles the whole CUDA package set for ${builtins.concatStringsSep ", " variant.cudaCapabilities} (the package-set scope); import nixpkgs with config.cudaCapabilities = [ ${builtins.concatStringsSep " " (map (c: "\"${c}\"") variant.cudaCapabilities)} ] and config.cudaForwardCompat = false to use its overlay"
    else
      let
        torch = import ./pytorch.nix { inherit variant; pkgs = final; base = pyprev.torch; };
        asVariant = s: {
          name = s.attr;
          value = import ./package-on-torch.nix {
            variant = s;
            pkgs = final;
            torch = pyfinal.torch;
            base = pyprev.${s.attr} or (throw "${s.name}: this nixpkgs' ${s.pythonPackageSet} has no ${s.attr}");
            pythonPackages = pyfinal;
          };
        };
      in
      { inherit torch; } // builtins.listToAttrs (map asVariant siblings);
in
assert variant.role == "torch";
{
  pythonPackagesExtensions = (prev.pythonPackagesExtensions or [ ]) ++ [ ext ];
}
// (if isCuda then {
  cudaPackages = final.${variant.cudaPackageSet} or (throw "${variant.name}: this nixpkgs has no ${variant.cudaPackageSet}");
} else { })
