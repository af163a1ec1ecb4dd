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
# - A variant of a package built on torch (role "onTorch": torchaudio, torchvision, …) or an environment (role "env")
#   has its pytorch variant's key (same pin, system, CUDA and capabilities), and its torch is `packages.${dependsOn}`:
#   the very derivation of its pytorch variant, no second nixpkgs import. An environment's members are the
#   packages of its dependsOn (pytorch first).
# - Every package variant on one torch is built from ONE Python set: the set with `torch` replaced and each of its
#   sibling packages (the onTorch variants of the same pytorch) replaced by the variant itself (pkgs/python-set.nix
#   `siblings`), so a package of the table that another takes from the set (torchcodec's check input torchvision) is
#   the variant's own derivation: one derivation per package per closure.
{ nixpkgs ? null }:

let
  inherit (builtins) attrValues filter groupBy head map mapAttrs;

  variants = import ./variants.nix;

  # The nixpkgs instance of a variant: revision, system, CUDA set and (package-set scope) capabilities, computed by
  # the generator (generator/matrix/expand.ts nixpkgsInstanceKey) and written into pkgs/variants.nix as nixpkgsKey.
  keyOf = v: v.nixpkgsKey;

  instances = mapAttrs
    (_: vs: import ./nixpkgs.nix { variant = head vs; inherit nixpkgs; })
    (groupBy keyOf (attrValues variants));

  # The package variants built on each pytorch variant (by its name): a set's siblings.
  onTorchOf = groupBy (v: head v.dependsOn) (filter (v: v.role == "onTorch") (attrValues variants));
  siblingsOf = v: onTorchOf.${head v.dependsOn} or [ ];

  # `built'` gives a variant the packages it depends on (its torch; an environment's members), built from the same
  # package set.
  buildWith = pkgs: built': v:
    if v.role == "torch" then import ./pytorch.nix { variant = v; inherit pkgs; }
    else if v.role == "onTorch" then import ./on-torch.nix { variant = v; inherit pkgs; torch = built' (head v.dependsOn); siblings = siblingsOf v; }
    else if v.role == "env" then import ./torch-env.nix { variant = v; inherit pkgs; members = map built' v.dependsOn; siblings = siblingsOf v; }
    else throw "pkgs/matrix.nix: ${v.name} has unknown role ${v.role}";

  built = mapAttrs (_: v: buildWith instances.${keyOf v} (n: built.${n}) v) variants;

  # The checks of a variant's promise (pkgs/checks.nix): { static; gpuCheck (CUDA only); }. `testsOf` gives a member's
  # checks: an environment's static check lists its members' static checks (their proofs).
  checksOf = pkgs: testsOf: v: p:
    import ./checks.nix {
      inherit pkgs;
      variant = v;
      package = p;
      pythonPackages = p.pythonPackages or (import ./python-set.nix { inherit pkgs; variant = v; torch = p; });
      memberChecks = if v.role == "env" then map (m: { name = m; static = (testsOf m).static; }) v.dependsOn else [ ];
    };

  # Each package with its checks as `tests` (nixpkgs' passthru.tests convention).
  packages = mapAttrs (n: v: built.${n} // { tests = checksOf instances.${keyOf v} (m: packages.${m}.tests) v built.${n}; }) variants;

  # release.nix's `tests.NAME`: recursed by nix-eval-jobs and Hydra.
  tests = mapAttrs (n: _: packages.${n}.tests // { recurseForDerivations = true; }) variants;

  package = name:
    let
      v = variants.${name} or (throw "pkgs/matrix.nix: no variant named ${name} in pkgs/variants.nix");
      pkgs = import ./nixpkgs.nix { variant = v; inherit nixpkgs; };
      # This variant and what it depends on (a member's own dependency, its pytorch, is among them), each once.
      local = builtins.listToAttrs (map (n: { name = n; value = buildWith pkgs (m: local.${m}) variants.${n}; }) ([ name ] ++ v.dependsOn));
      p = local.${name};
      # The checks of this variant and of what it depends on (an environment's proof lists its members' proofs).
      localTests = n: checksOf pkgs localTests variants.${n} local.${n};
    in
    p // { tests = localTests name; };

  bySystem = mapAttrs
    (_: vs: builtins.listToAttrs (map (v: { inherit (v) name; value = packages.${v.name}; }) vs))
    (groupBy (v: v.system) (attrValues variants));
in
{
  inherit variants packages package bySystem instances keyOf tests;
}
