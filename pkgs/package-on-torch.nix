# pkgs/package-on-torch.nix: one package variant of the table (torchaudio, torchvision, …) made from its Python set's
# package (hand-written; called by pkgs/python-set.nix for every sibling, so the set's attribute IS the variant).
#
# Takes
#   variant         the package variant (role "onTorch": attr, version, cflags, capabilities, …).
#   torch           the variant's torch (already checked against the variant by pkgs/on-torch.nix).
#   pkgs            the nixpkgs instance of the variant.
#   base            the set's package (`prev.${attr}` of the overrideScope: callPackage'd with the set's torch).
#   pythonPackages  the final set (passthru.pythonPackages).
# Returns
#   base overridden, where it accepts them, with torch, cudaSupport and torch's own cudaPackages (torchaudio takes
#   both; torchvision takes neither: `inherit (torch) cudaSupport cudaPackages`), then pkgs/variant-attrs.nix
#   (cflags, TORCH_CUDA_ARCH_LIST where the file keeps it, MAX_JOBS, pname/name, meta, requiredSystemFeatures,
#   passthru.variant), passthru.torch and passthru.pythonPackages.
#
# Facts relied on
# - `.override` of a callPackage'd package mirrors the function's arguments (lib.makeOverridable uses
#   lib.mirrorFunctionArgs, read back with `__functionArgs`), so optional arguments are passed only when
#   this nixpkgs' package declares them; `torch` is always passed.
{ variant, torch, pkgs, base, pythonPackages }:

let
  inherit (builtins) intersectAttrs functionArgs isFunction;
  isCuda = variant.cuda != null;
  # Arguments the override accepts (as lib.functionArgs reads them).
  accepted =
    let o = base.override; in
    o.__functionArgs or (if isFunction o then functionArgs o else { });
  optionalArgs = {
    cudaSupport = isCuda;
  }
  // (if isCuda then { cudaPackages = torch.cudaPackages or pkgs.cudaPackages; } else { });
in
(base.override ({ inherit torch; } // intersectAttrs accepted optionalArgs)).overrideAttrs
  (import ./variant-attrs.nix {
    inherit variant;
    passthru = { inherit torch pythonPackages; };
  })
