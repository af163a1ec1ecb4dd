# pkgs/cache-samples.nix: the derivations `variant-matrix pin cache` asks a binary cache about (hand-written;
# evaluated by generator/pin/nix.ts cacheSampleDrvs with the user's Nix).
#
# Takes
#   nixpkgs      a nixpkgs source (path or string) or a nixpkgs function (tests hand in the stand-in this way);
#   system       the Nix system (default builtins.currentSystem);
#   samplesJson  JSON of [ { python = "3.13"; cuda = "12.9"; } … ].
# Returns (nix-instantiate --eval --strict --json --read-write-mode, so the .drv files exist)
#   [ { python; cuda; torch; deps = { nccl; magma; libnvshmem; triton; }; } ]: the drvPath of torch of
#   `pythonXYZPackages` and of its inputs with those pnames (null where it has none, or where torch cannot be
#   evaluated), with nixpkgs imported as the NixOS-CUDA Hydra imports it (nixos-cuda/hydra-jobsets cuda-packages.nix:
#   allowUnfree, cudaSupport, allowAliases = false; no cudaCapabilities) and `cudaPackages` pointed at the sample's
#   set, as pkgs/nixpkgs.nix does for a torch-scope variant. Torch's own inputs are taken, not `pythonXYZPackages.triton`:
#   torch builds with `triton-cuda.override { inherit cudaPackages; }`, `lib.getOutput "static" nccl`,
#   `magma-cuda-static.override { inherit cudaPackages; }` and `cudaPackages.libnvshmem` (its source/default.nix).
{ nixpkgs, system ? builtins.currentSystem, samplesJson }:

let
  inherit (builtins) concatMap filter fromJSON head map replaceStrings tryEval typeOf;
  importFn = if typeOf nixpkgs == "lambda" then nixpkgs else import nixpkgs;
  pkgsFor = cuda: importFn {
    inherit system;
    config = { allowUnfree = true; cudaSupport = true; allowAliases = false; };
    overlays = [ (final: prev: { cudaPackages = final."cudaPackages_${replaceStrings [ "." ] [ "_" ] cuda}"; }) ];
  };
  try = v: let r = tryEval v; in if r.success then r.value else null;
  depsOf = torch:
    let
      attrs = torch.drvAttrs or { };
      inputs = filter (d: typeOf d == "set") (concatMap (n: attrs.${n} or [ ]) [ "buildInputs" "propagatedBuildInputs" "dependencies" ]);
      byName = pname: let ds = filter (d: (d.pname or null) == pname) inputs; in if ds == [ ] then null else try (head ds).drvPath;
    in
    { nccl = byName "nccl"; magma = byName "magma"; libnvshmem = byName "libnvshmem"; triton = byName "triton"; };
  one = s:
    let torch = (pkgsFor s.cuda)."python${replaceStrings [ "." ] [ "" ] s.python}Packages".torch or null; in
    s // {
      torch = if torch == null then null else try torch.drvPath;
      deps = if torch == null || try torch.drvPath == null then { nccl = null; magma = null; libnvshmem = null; triton = null; } else depsOf torch;
    };
in
map one (fromJSON samplesJson)
