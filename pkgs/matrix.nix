# pkgs/matrix.nix: every package variant of the matrix, built from the one generated data file
# pkgs/variants.nix (hand-written; used by every .flox/pkgs/NAME.nix wrapper and by release.nix).
#
# Takes
#   nixpkgs   as in pkgs/nixpkgs.nix: null (fetch each variant's pinned revision by content), a nixpkgs
#             source or function, or a set of sources by revision.
# Returns {
#   variants    the data of pkgs/variants.nix: { NAME = variant attrset (see pkgs/pytorch.nix); ... }
#   packages    { NAME = derivation; ... } for every variant, lazily (only what is asked for is evaluated),
#               sharing nixpkgs instances across variants (release.nix)
#   package     NAME -> derivation of that one variant, importing nixpkgs once for it and its torch
#               (.flox/pkgs/NAME.nix): no work proportional to the size of the matrix beyond reading variants.nix
#   bySystem    { "aarch64-linux" = { NAME = derivation; ... }; ... }
#   instances   { KEY = nixpkgs package set; ... }, one per distinct (rev, system, CUDA set, capabilities)
#   keyOf       variant -> KEY
# }
#
# Facts relied on
# - A nixpkgs instance is determined by what pkgs/nixpkgs.nix reads: the revision (and its hash), the system,
#   the CUDA package set of the overlay, and config.cudaCapabilities when the variant sets them for the whole
#   package set. Variants with the same key share one instance: `instances` is an attrset whose values Nix
#   evaluates at most once per evaluation (lazy, memoised attribute values; Nix manual, "Laziness").
# - A torchaudio variant's key equals its pytorch variant's key (same pin, system, CUDA and capabilities), and its
#   torch is `packages.${dependsOn}`: the very derivation of its pytorch variant, no second nixpkgs import.
{ nixpkgs ? null }:

let
  inherit (builtins) attrValues concatStringsSep groupBy head mapAttrs;

  variants = import ./variants.nix;

  keyOf = v:
    concatStringsSep "|" (
      [ v.nixpkgsRev v.system (if v.cuda == null then "cpu" else v.cudaPackageSet) ]
      ++ (if v.cuda != null && v.cudaCapabilitiesForPackageSet then v.cudaCapabilities else [ ])
    );

  instances = mapAttrs
    (_: vs: import ./nixpkgs.nix { variant = head vs; inherit nixpkgs; })
    (groupBy keyOf (attrValues variants));

  # `torchOf` gives a torchaudio variant its torch: the pytorch variant built from the same package set.
  buildWith = pkgs: torchOf: v:
    if v.package == "pytorch" then import ./pytorch.nix { variant = v; inherit pkgs; }
    else import ./torchaudio.nix { variant = v; inherit pkgs; torch = torchOf (head v.dependsOn); };

  built = mapAttrs (_: v: buildWith instances.${keyOf v} (n: built.${n}) v) variants;

  # The checks of a variant's promise (pkgs/checks.nix): { static; gpuCheck (CUDA only); }.
  checksOf = pkgs: v: p:
    import ./checks.nix {
      inherit pkgs;
      variant = v;
      package = p;
      pythonPackages = p.pythonPackages or (import ./python-set.nix { inherit pkgs; variant = v; torch = p; });
    };

  # Each package with its checks as `tests` (nixpkgs' passthru.tests convention).
  packages = mapAttrs (n: v: built.${n} // { tests = checksOf instances.${keyOf v} v built.${n}; }) variants;

  # release.nix's `tests.NAME`: recursed by nix-eval-jobs and Hydra.
  tests = mapAttrs (n: _: packages.${n}.tests // { recurseForDerivations = true; }) variants;

  package = name:
    let
      v = variants.${name} or (throw "pkgs/matrix.nix: no variant named ${name} in pkgs/variants.nix");
      pkgs = import ./nixpkgs.nix { variant = v; inherit nixpkgs; };
      p = buildWith pkgs (n: buildWith pkgs (_: throw "a pytorch variant depends on nothing") variants.${n}) v;
    in
    p // { tests = checksOf pkgs v p; };

  bySystem = mapAttrs
    (_: vs: builtins.listToAttrs (map (v: { inherit (v) name; value = packages.${v.name}; }) vs))
    (groupBy (v: v.system) (attrValues variants));
in
{
  inherit variants packages package bySystem instances keyOf tests;
}
