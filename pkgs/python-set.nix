# pkgs/python-set.nix: the Python package set of one variant, in which `torch` IS the variant's torch
# (hand-written; used by pkgs/on-torch.nix and pkgs/torch-env.nix, and exposed as passthru.pythonPackages).
#
# Takes
#   pkgs      the nixpkgs package set pkgs/nixpkgs.nix imported for the variant.
#   variant   the variant attrset (see pkgs/pytorch.nix); reads name, nixpkgsRev, pythonPackageSet.
#   torch     the variant's torch derivation (pkgs/pytorch.nix's result for the pytorch variant).
#   siblings  the package variants built on that torch (role "onTorch", same pytorch; pkgs/matrix.nix), default [ ].
# Returns
#   pkgs.${variant.pythonPackageSet}.overrideScope (final: prev: { torch = torch; … }): the same package set with
#   `torch` replaced, so every package of it that takes `torch` through callPackage (torchaudio; torchcodec, which
#   nixpkgs' torchaudio 2.11 depends on; torchvision, among torchcodec's check inputs; anything else) is built on
#   exactly that derivation. One torch per closure (ARCHITECTURE.md rule 8). And each sibling's attribute (`torchvision`)
#   is the sibling variant itself (pkgs/package-on-torch.nix over the set's own package), so where one package takes
#   another of the table from the set (nixpkgs' torchcodec lists torchvision among its check inputs) it gets the
#   variant, not a second build of the same package: one derivation per package per closure. torchcodec,
#   which runs torch in its tests, gets the variant's gccarch system feature (pkgs/variant-attrs.nix does the same
#   for the variants). A sibling's catalog fixes of other packages of the set (variant.packageBuild.fixes: "cudaCrt"
#   adds cudaPackages.cuda_crt to bitsandbytes, "cupyCudaPackages" builds cupy on the variant's cudaPackages: vLLM's
#   dependencies under CUDA 13; "bnbCapabilities" builds bitsandbytes for the siblings' capabilities only under CUDA
#   12.9, generator/catalog/packages.ts) are applied here, once for the set.
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
{ pkgs, variant, torch ? null, siblings ? [ ] }:

let
  pythonPackages =
    pkgs.${variant.pythonPackageSet}
      or (throw "${variant.name}: nixpkgs ${variant.nixpkgsRev} has no ${variant.pythonPackageSet}");
in
if torch == null then pythonPackages
else if !(pythonPackages ? overrideScope) then
  throw "${variant.name}: ${variant.pythonPackageSet} of nixpkgs ${variant.nixpkgsRev} has no overrideScope (not a lib.makeScope set)"
else
  pythonPackages.overrideScope (final: prev:
    let
      isaFeatures = import ./isa-features.nix variant;
      asVariant = s: {
        name = s.attr;
        value = import ./package-on-torch.nix {
          variant = s;
          inherit pkgs torch;
          base = prev.${s.attr} or (throw "${s.name}: ${s.pythonPackageSet} of nixpkgs ${s.nixpkgsRev} has no ${s.attr}");
          pythonPackages = final;
        };
      };
      variants = builtins.listToAttrs (map asVariant siblings);
      # The catalog's fixes of the set's other packages that a sibling's build needs (generator/catalog/packages.ts
      # `fixes`, resolved per pin, CUDA and system by expand): bitsandbytes with cuda_crt under CUDA 13, cupy on the
      # variant's own cudaPackages (vLLM's dependencies; graham33/nixos-dgx-spark overlays/fixes.nix).
      fixes = builtins.concatMap (s: (s.packageBuild or { }).fixes or [ ]) siblings;
      cudaPackages = torch.cudaPackages or pkgs.cudaPackages;
      current = n: variants.${n} or prev.${n};
      # "bnbCapabilities": CUDA 12.9's CCCL 2.8.2 breaks bitsandbytes built for every architecture (nixpkgs' file names
      # none), so it is built for the capabilities of the siblings that ask, dotless ("90"), as barstoolbluz/build-vllm
      # does at 0182a36. A bitsandbytes sibling already carries its own -DCOMPUTE_CAPABILITY (pkgs/variant-attrs.nix).
      bnbCaps = builtins.concatMap (s: if builtins.elem "bnbCapabilities" ((s.packageBuild or { }).fixes or [ ]) then s.cudaCapabilities else [ ]) siblings;
      bnbFlag = "-DCOMPUTE_CAPABILITY=" + builtins.concatStringsSep ";" (map (c: builtins.replaceStrings [ "." ] [ "" ] c) (builtins.foldl' (acc: c: if builtins.elem c acc then acc else acc ++ [ c ]) [ ] bnbCaps));
      isComputeCapability = f: builtins.match "-DCOMPUTE_CAPABILITY(:[A-Z]+)?=.*" f != null;
    in
    { inherit torch; }
    // variants
    // (if builtins.elem "cudaCrt" fixes && prev ? bitsandbytes && cudaPackages ? cuda_crt then {
      bitsandbytes = (current "bitsandbytes").overrideAttrs (old: { buildInputs = (old.buildInputs or [ ]) ++ [ cudaPackages.cuda_crt ]; });
    } else { })
    // (if bnbCaps != [ ] && prev ? bitsandbytes && !(variants ? bitsandbytes) then {
      bitsandbytes = prev.bitsandbytes.overrideAttrs (old: {
        cmakeFlags = builtins.filter (f: !(isComputeCapability f)) (old.cmakeFlags or [ ]) ++ [ bnbFlag ];
      });
    } else { })
    // (if builtins.elem "cupyCudaPackages" fixes && prev ? cupy then {
      cupy = prev.cupy.override { inherit cudaPackages; };
    } else { })
    // (if prev ? torchcodec && isaFeatures != [ ] then {
      torchcodec = prev.torchcodec.overrideAttrs (old: {
        requiredSystemFeatures = (old.requiredSystemFeatures or [ ]) ++ builtins.filter (f: !(builtins.elem f (old.requiredSystemFeatures or [ ]))) isaFeatures;
      });
    } else { }))
