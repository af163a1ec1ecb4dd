# pkgs/pytorch.nix: PyTorch for one variant of the matrix (hand-written; called by pkgs/matrix.nix with one
# entry of the generated data file pkgs/variants.nix).
#
# Takes
#   base      (optional) the torch derivation to override; default: `torch` of the variant's Python set of `pkgs`
#             (pkgs/overlay.nix passes the set's own torch from inside a pythonPackagesExtensions overlay).
#   pkgs      the nixpkgs package set pkgs/nixpkgs.nix imported for this variant (shared by every variant with
#             the same pin, system, CUDA set and capabilities).
#   variant   {
#               name                  "pytorch-python313-cuda12_8-sm121-armv9" (package variant name)
#               package               "pytorch" (or a package of generator/catalog/packages.ts, or "torch-env")
#               role                  "torch" | "onTorch" | "env" (which builder: pytorch.nix, on-torch.nix,
#                                     torch-env.nix)
#               attr                  nixpkgs attribute of an "onTorch" package ("torchvision"), else null
#               version, torchVersion "2.8.0" (equal for pytorch and the environment)
#               onTorchVersions       { torchaudio = "2.8.0"; torchvision = "0.23.0"; } (what this pin carries)
#               python                "3.13"
#               pythonPackageSet      "python313Packages"
#               cuda                  "12.8" | null (CPU-only)
#               cudaPackageSet        "cudaPackages_12_8" | null
#               sm                    "121" | null
#               isa                   "armv9"
#               system                "aarch64-linux"
#               cudaCapabilities      [ "12.0" ] ([ ] for CPU-only), written X.Y, never sm_XY
#               cudaCapabilitiesForPackageSet  bool: also set nixpkgs config.cudaCapabilities
#               cflags                [ "-march=armv9-a+i8mm" ]
#               nixpkgsRev            40-hex nixpkgs revision
#               nixpkgsSha256         sha256 of its tarball (SRI or base32)
#               dependsOn             [ ] (onTorch: [ its pytorch variant ]; env: [ pytorch, its members ])
#               description           one line naming the hardware
#               notes                 [ string ]
#             }
# Returns
#   nixpkgs' `${pythonPackageSet}.torch` of the pinned nixpkgs, overridden with
#   { cudaSupport = cuda != null; gpuTargets = cudaCapabilities; } and then pkgs/variant-attrs.nix
#   (cflags, TORCH_CUDA_ARCH_LIST, MAX_JOBS, pname/name, meta, passthru.variant), plus
#   passthru.cudaCapabilities = variant.cudaCapabilities.
#
# Facts relied on
# - nixpkgs torch (pkgs/development/python-modules/torch/source/default.nix, 2025) takes
#   `cudaSupport ? config.cudaSupport`, `cudaPackages` (from callPackage) and `gpuTargets ? [ ]`;
#   a non-empty gpuTargets "always takes priority" and becomes TORCH_CUDA_ARCH_LIST in preConfigure.
# - Its passthru.cudaCapabilities is computed from config.cudaCapabilities (intersected with the list
#   torch knows), not from gpuTargets, and torchaudio compiles for that list. We set it to the variant's
#   capabilities so every consumer of this torch sees what it was really built for.
# - rule 1 of ARCHITECTURE.md: the Python version of the name is `${pythonPackageSet}` (python313Packages),
#   never python3Packages.
{ variant, pkgs, base ? null }:

let
  # The variant's Python set as nixpkgs has it (pkgs/python-set.nix without a torch to put in). `base`: the torch to
  # start from instead (pkgs/overlay.nix hands in the set's own torch from inside a Python-set overlay).
  pythonPackages = import ./python-set.nix { inherit pkgs variant; };

  torch = (if base != null then base else pythonPackages.torch).override (import ./torch-override-args.nix variant);
in
assert variant.role == "torch";
torch.overrideAttrs (import ./variant-attrs.nix {
  inherit variant;
  passthru.cudaCapabilities = variant.cudaCapabilities;
})
