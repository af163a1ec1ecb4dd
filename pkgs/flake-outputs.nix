# pkgs/flake-outputs.nix: the outputs of the generated flake.nix (hand-written; flake.nix only lists the pinned nixpkgs
# inputs and calls this). Everything comes from pkgs/matrix.nix over the same pkgs/variants.nix as release.nix and the
# .flox/pkgs wrappers, so `nix build .#NAME`, `nix-build release.nix -A NAME` and `flox build NAME` are one derivation.
#
# Takes
#   nixpkgsByRev   { "<40-hex rev>" = flake input (flake = false, a nixpkgs source); ... }: each pin the matrix uses,
#                  locked in flake.lock to the catalog's narHash (pkgs/nixpkgs.nix accepts a set by revision).
# Returns {
#   packages.<system>.<NAME>     every variant of the matrix (pytorch, packages on torch, environments)
#   checks.<system>.<NAME>       the static check of each variant's promise (pkgs/checks.nix `static`: runs the probe on
#                                the built outputs, no GPU); the GPU checks stay in release.nix (`tests.NAME.gpuCheck`,
#                                they need a builder with the `cuda` system feature)
#   hydraJobs.<NAME>.<system>    every variant, and hydraJobs.static.<NAME>.<system> its static check (Hydra's and
#                                nix-eval-jobs' `--flake` convention: attribute paths ending in the system)
#   devShells.<system>.<NAME>    every environment variant (torch-env-…, NAME-env-…): a mkShell holding the
#                                environment and, for a host that is not NixOS, numtide's nix-gl-host (`nixglhost
#                                python3 …` adds the host's GPU driver libraries, which Nix's glibc does not find)
#   overlays.<pytorch NAME>      pkgs/overlay.nix for each pytorch variant: the variant's torch and the packages of the
#                                table built on it, in a user's own nixpkgs
# }
{ nixpkgsByRev }:

let
  inherit (builtins) attrValues filter groupBy head listToAttrs mapAttrs;

  matrix = import ./matrix.nix { nixpkgs = nixpkgsByRev; };
  inherit (matrix) variants packages instances keyOf;

  all = attrValues variants;
  perSystem = f: mapAttrs (system: vs: listToAttrs (map (v: { inherit (v) name; value = f v; }) vs)) (groupBy (v: v.system) all);

  devShellOf = v:
    let
      pkgs = instances.${keyOf v};
      env = packages.${v.name};
      # CUDA environments carry nixglhost (pkgs/torch-env.nix: the pin's nix-gl-host, else numtide's at 5269b23).
      glhost = if v.cuda == null then [ ] else [ env.nixglhost ];
    in
    pkgs.mkShell {
      name = "${v.name}-shell";
      packages = [ env ] ++ glhost;
      shellHook = if v.cuda == null then "" else ''
        echo "${v.name}: not on NixOS? run GPU programs through the host's driver: nixglhost python3 …" >&2
      '';
    };

  onTorchOf = groupBy (v: head v.dependsOn) (filter (v: v.role == "onTorch") all);
in
{
  packages = perSystem (v: packages.${v.name});
  checks = perSystem (v: packages.${v.name}.tests.static);
  hydraJobs = mapAttrs (n: v: { ${v.system} = packages.${n}; }) variants // {
    static = mapAttrs (n: v: { ${v.system} = packages.${n}.tests.static; }) variants;
  };
  devShells = mapAttrs (_: vs: listToAttrs (map (v: { inherit (v) name; value = devShellOf v; }) (filter (v: v.role == "env") vs)))
    (groupBy (v: v.system) all);
  overlays = listToAttrs (map (v: { inherit (v) name; value = import ./overlay.nix { variant = v; siblings = onTorchOf.${v.name} or [ ]; }; })
    (filter (v: v.role == "torch") all));
}
