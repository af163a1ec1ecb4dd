# pkgs/nixpkgs.nix: import the pinned nixpkgs for one package variant (hand-written; shared by
# pkgs/pytorch.nix, pkgs/on-torch.nix and pkgs/torch-env.nix).
#
# Takes
#   variant   the attrset a generated .flox/pkgs file carries (see pkgs/pytorch.nix); this file reads
#             system, cuda, cudaPackageSet, cudaCapabilities, cudaCapabilitiesForPackageSet,
#             nixpkgsRev, nixpkgsSha256.
#   nixpkgs   null (default): fetch github:NixOS/nixpkgs at variant.nixpkgsRev (with nixpkgsSha256
#             when it is not null); or a nixpkgs source (path, string, or a non-derivation attrset with
#             outPath such as a flake input); or a nixpkgs function (`args: pkgs`), which tests use to
#             hand in the stand-in with extra arguments; or a set of any of these by revision
#             ({ "<40-hex rev>" = source or function; ... }, e.g. local checkouts of each pin), from which
#             the variant's nixpkgsRev is taken.
# Returns
#   the package set, imported with
#     system   = variant.system
#     config   = { allowUnfree = true; cudaSupport = cuda != null; }
#                plus, in the package-set scope (cuda != null and variant.cudaCapabilitiesForPackageSet),
#                cudaCapabilities = variant.cudaCapabilities and cudaForwardCompat = false
#     overlays = for CUDA: [ (final: prev: { cudaPackages = final.${variant.cudaPackageSet}; }) ],
#                for CPU-only: [ ]
#
# Facts relied on
# - nixpkgs' entry point accepts { system, config, overlays, ... } (pkgs/top-level/impure.nix).
# - Python packages and magma/nccl take `cudaPackages` from the top-level set through callPackage, so
#   one overlay that points `cudaPackages` at a versioned set makes torch, torchaudio, magma and nccl
#   use that one set (ARCHITECTURE.md rule 2; barstoolbluz/build-pytorch and flox/torchaudio-nix use the
#   same overlay). nixpkgs' torch breaks itself when magma's CUDA version differs from its own
#   (`brokenConditions`, pkgs/development/python-modules/torch/source/default.nix).
# - torch's `cudaSupport` defaults to config.cudaSupport (same file); flox's own nixpkgs has allowUnfree
#   but not cudaSupport (ARCHITECTURE.md, "Nix and flox facts"), hence this separate import.
# - config.cudaCapabilities applies to every package of the CUDA set; config.cudaForwardCompat "includes
#   the forward compatibility gencode (+PTX)" on top of them (nixpkgs cuda-modules flags module). We turn
#   it off in the package-set scope so nvcc compiles exactly the listed targets, as nixpkgs' own per-capability
#   sets do (pkgs/top-level/variants.nix: `cudaForwardCompat = false; cudaCapabilities = [ cap ];`). In the torch
#   scope the CUDA set must be the one binary caches built with nixpkgs' default config, so neither is set; torch
#   itself compiles exactly gpuTargets (TORCH_CUDA_ARCH_LIST, no +PTX) whatever cudaForwardCompat says.
# - builtins.fetchTarball takes { url, sha256? }; sha256 may be base32 or SRI ("sha256-...": both checked
#   with Nix 2.8 here). Without sha256 the download is re-checked after tarball-ttl and is refused in pure
#   evaluation (Nix manual, builtins.fetchTarball), so the catalog should carry nixpkgsSha256.
{ variant, nixpkgs ? null }:

let
  isCuda = variant.cuda != null;

  fetched = builtins.fetchTarball (
    { url = "https://github.com/NixOS/nixpkgs/archive/${variant.nixpkgsRev}.tar.gz"; }
    // (if (variant.nixpkgsSha256 or null) != null then { sha256 = variant.nixpkgsSha256; } else { })
    # (the generator refuses a pin without a hash, so generated variants always have one)
  );

  # A set of sources by revision: pick this variant's.
  isByRev = builtins.typeOf nixpkgs == "set" && !(nixpkgs ? outPath) && (nixpkgs.type or null) != "derivation"
    && builtins.all (n: builtins.match "[0-9a-f]{40}" n != null) (builtins.attrNames nixpkgs);
  chosen =
    if isByRev then
      nixpkgs.${variant.nixpkgsRev}
        or (throw "${variant.name}: the `nixpkgs` set by revision has no ${variant.nixpkgsRev} (it has ${builtins.concatStringsSep ", " (builtins.attrNames nixpkgs)})")
    else nixpkgs;

  kind = builtins.typeOf chosen;

  # What to call with { system, config, overlays }.
  nixpkgsFunction =
    if chosen == null then import fetched
    else if kind == "lambda" then chosen
    else if kind == "path" || kind == "string" then import chosen
    else if kind == "set" && chosen ? outPath && (chosen.type or null) != "derivation" then import chosen
    else throw ''
      ${variant.name}: the `nixpkgs` argument must be null (fetch nixpkgs ${variant.nixpkgsRev}), a nixpkgs
      source (path, string, flake input) or a nixpkgs function; got a ${kind}${
        if kind == "set" && (chosen.type or null) == "derivation" then " (a derivation: did callPackage fill `nixpkgs` from a package of that name?)" else ""
      }.
    '';

  # Package-set scope: config.cudaCapabilities and no forward-compatible PTX in the CUDA libraries. Torch scope:
  # the config binary caches build the CUDA set with (allowUnfree, cudaSupport, nothing else), so magma, nccl, …
  # are the cached derivations; torch gets the capabilities through gpuTargets (pkgs/pytorch.nix) and never adds
  # PTX itself (it does not read cudaForwardCompat).
  packageSetScope = isCuda && variant.cudaCapabilitiesForPackageSet;
  config = {
    allowUnfree = true;
    cudaSupport = isCuda;
  }
  // (if packageSetScope then { cudaCapabilities = variant.cudaCapabilities; cudaForwardCompat = false; } else { });

  cudaOverlay = final: prev: {
    cudaPackages =
      final.${variant.cudaPackageSet}
        or (throw "${variant.name}: nixpkgs ${variant.nixpkgsRev} has no ${variant.cudaPackageSet}");
  };
in
nixpkgsFunction {
  system = variant.system;
  inherit config;
  overlays = if isCuda then [ cudaOverlay ] else [ ];
}
