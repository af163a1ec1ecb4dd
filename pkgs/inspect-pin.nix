# pkgs/inspect-pin.nix: read, by evaluating a nixpkgs, every fact variant-matrix keeps per nixpkgs pin
# (hand-written; evaluated by `variant-matrix pin inspect|check|add`, generator/pin/nix.ts, with the user's Nix).
#
# Takes
#   nixpkgs   a nixpkgs source (path or string: a checkout, or the store path of a fetched tarball) or a nixpkgs
#             function (tests hand in the stand-in this way).
#   system    the Nix system to evaluate for (default builtins.currentSystem).
#   builderTorchArgs  the arguments pkgs/pytorch.nix passes to torch.override (checked against its formals);
#             default: the names of pkgs/torch-override-args.nix, the set pkgs/pytorch.nix passes.
# Returns (nix-instantiate --eval --strict --json)
#   { pythonSets = [ { set; version; torch; torchaudio; torchcodec; torchvision; flashAttn; xformers; bitsandbytes; vllm;
#                      extras = [ { attr; expr; value; } ]; } ];
#     defaultPython; defaultCuda; recursedPython;
#     cudaSets = [ { set; version; defaultCapabilities; torchBroken; } ];
#     torchFormals; builderArgsMissing; staticLinks = { nccl; magma; nvshmem; }; torchaudioDependencies; }
#   where every fact is { expr; value; }: `expr` is the Nix expression the value was read from (relative to the
#   nixpkgs import it names), `value` its value, or null when the attribute is absent or fails to evaluate (a
#   package set that throws, an alias of a removed package).
#
# How each fact is read (nothing is parsed from files; everything is evaluated):
# - Python sets: every top-level `pythonXYZPackages` attribute; its `python.pythonVersion`; the `version` of its
#   torch, torchaudio, torchcodec and torchvision (`or null` where the set has none). Imported with
#   allowAliases = false, so removed sets (aliases that throw) are not listed.
# - The default Python is `python3.pythonVersion`; the default CUDA set is `cudaPackages.cudaMajorMinorVersion`
#   (`cudaVersion` in older eras).
# - The Python sets nixpkgs' CI evaluation recurses into: the versions of the `pythonXYZPackages` sets whose
#   `recurseForDerivations` is true (all-packages.nix `recurseIntoAttrs`; pkgs/top-level/release.nix follows it).
# - CUDA sets: every `cudaPackages_X_Y`; its `cudaMajorMinorVersion`; nixpkgs' default capabilities for it,
#   `flags.cudaCapabilities` (2025+; `cudaFlags.cudaCapabilities` before the cuda-modules rework).
# - Whether torch is broken with a CUDA set: nixpkgs imported exactly as pkgs/nixpkgs.nix imports it for a variant
#   (allowUnfree, cudaSupport, an overlay pointing `cudaPackages` at the set), then the default Python set's
#   `torch.meta.broken`. In nixpkgs `meta` is readable on a broken package (check-meta only guards drvPath and
#   outPath, lib.extendDerivation), and torch's meta.broken is `any id (attrValues brokenConditions)`.
# - torch's formal arguments: `torch.override.__functionArgs` (lib.makeOverridable mirrors the function's).
# - What torch links statically, in the default CUDA set: NCCL when its derivation sets USE_STATIC_NCCL = "1" (top
#   level up to torch 2.9/2.10, inside `env` from 2.12); MAGMA when an input with pname "magma" was configured with
#   BUILD_SHARED_LIBS off (magma-cuda-static: magma's package.nix `cmakeBool "BUILD_SHARED_LIBS" (!static)`);
#   NVSHMEM when USE_NVSHMEM = "1" and an input is libnvshmem (torch's CMake then links libnvshmem_device.a).
# - torchaudio's dependencies: the pnames of its propagatedBuildInputs (buildPythonPackage puts `dependencies`
#   there).
{
  nixpkgs,
  system ? builtins.currentSystem,
  builderTorchArgs ? builtins.attrNames (import ./torch-override-args.nix { cuda = null; cudaCapabilities = [ ]; }),
  # Environment extras to look up (matrix.ts `environments`: nixpkgs attribute names; `pin inspect --extra ATTR`).
  extras ? [ ],
}:

let
  inherit (builtins) attrNames filter match tryEval deepSeq elem any concatMap typeOf;

  importFn = if typeOf nixpkgs == "lambda" then nixpkgs else import nixpkgs;
  baseConfig = { allowUnfree = true; allowAliases = false; };
  plain = importFn { inherit system; config = baseConfig; overlays = [ ]; };
  withCuda = setName: importFn {
    inherit system;
    config = baseConfig // { cudaSupport = true; };
    overlays = [ (final: prev: { cudaPackages = final.${setName}; }) ];
  };

  # The value of `v` fully evaluated, or null when it throws.
  # (tryEval catches `throw` and `assert`, which removed or unavailable packages use; a missing attribute is not
  # caught, so every lookup below has an `or` default.)
  try = v: let r = tryEval (deepSeq v v); in if r.success then r.value else null;
  fact = expr: value: { inherit expr; value = try value; };
  importText = "import <nixpkgs> { config = { allowUnfree = true; allowAliases = false; }; }";
  cudaImportText = set:
    "import <nixpkgs> { config = { allowUnfree = true; allowAliases = false; cudaSupport = true; }; "
    + "overlays = [ (final: prev: { cudaPackages = final.${set}; }) ]; }";

  names = attrNames plain;
  pythonSetNames = filter (n: match "python3[0-9]+Packages" n != null) names;
  cudaSetNames = filter (n: match "cudaPackages_[0-9]+_[0-9]+" n != null) names;

  pythonSets = filter (s: s.version != null) (map (set: {
    inherit set;
    version = try (plain.${set}.python.pythonVersion or null);
    torch = fact "(${importText}).${set}.torch.version" (plain.${set}.torch.version or null);
    torchaudio = fact "(${importText}).${set}.torchaudio.version" (plain.${set}.torchaudio.version or null);
    torchcodec = fact "(${importText}).${set}.torchcodec.version" (plain.${set}.torchcodec.version or null);
    torchvision = fact "(${importText}).${set}.torchvision.version" (plain.${set}.torchvision.version or null);
    # The CUDA extensions of generator/catalog/packages.ts (pin fields flashAttn, xformers, bitsandbytes, vllm).
    flashAttn = fact "(${importText}).${set}.flash-attn.version" (plain.${set}.flash-attn.version or null);
    xformers = fact "(${importText}).${set}.xformers.version" (plain.${set}.xformers.version or null);
    bitsandbytes = fact "(${importText}).${set}.bitsandbytes.version" (plain.${set}.bitsandbytes.version or null);
    vllm = fact "(${importText}).${set}.vllm.version" (plain.${set}.vllm.version or null);
    # Each asked-for extra: its version, null when the set has no such attribute (an environment holding it would stop
    # at evaluation, pkgs/torch-env.nix).
    extras = map (a: { attr = a; } // fact "(${importText}).${set}.${a}.version" (plain.${set}.${a}.version or null)) extras;
  }) pythonSetNames);

  defaultPythonVersion = try (plain.python3.pythonVersion or null);
  defaultPythonSet =
    if defaultPythonVersion == null then "python3Packages"
    else "python${builtins.replaceStrings [ "." ] [ "" ] defaultPythonVersion}Packages";

  cudaVersionOf = s: s.cudaMajorMinorVersion or (s.cudaVersion or null);

  cudaSets = filter (s: s.version != null) (map (set: {
    inherit set;
    version = try (cudaVersionOf plain.${set});
    defaultCapabilities = fact "(${importText}).${set}.flags.cudaCapabilities"
      (plain.${set}.flags.cudaCapabilities or plain.${set}.cudaFlags.cudaCapabilities or null);
    torchBroken = fact "(${cudaImportText set}).${defaultPythonSet}.torch.meta.broken"
      ((withCuda set).${defaultPythonSet}.torch.meta.broken or null);
  }) cudaSetNames);

  defaultCudaVersion = try (cudaVersionOf (plain.cudaPackages or { }));
  defaultCudaSet = "cudaPackages_${builtins.replaceStrings [ "." ] [ "_" ] (toString defaultCudaVersion)}";

  torchPlain = plain.${defaultPythonSet}.torch or null;
  torchFormalNames = try (if torchPlain == null then null else attrNames (torchPlain.override.__functionArgs or { }));

  # torch with CUDA, in the default CUDA set (the torch scope: nixpkgs' defaults).
  torchCuda = (withCuda defaultCudaSet).${defaultPythonSet}.torch or { };
  drvAttrs = torchCuda.drvAttrs or { };
  attrOrEnv = n: drvAttrs.${n} or (drvAttrs.env.${n} or null);
  truthy = v: v != null && v != false && v != "" && v != "0" && v != "OFF";
  inputs = filter (d: typeOf d == "set") (concatMap (n: drvAttrs.${n} or [ ]) [ "buildInputs" "propagatedBuildInputs" ]);
  inputsNamed = pname: filter (d: (d.pname or null) == pname) inputs;
  # magma's package.nix: pname "magma" whatever `static` is; static turns BUILD_SHARED_LIBS off (cmakeBool).
  staticMagma = any (d: elem "-DBUILD_SHARED_LIBS:BOOL=FALSE" (d.cmakeFlags or [ ])) (inputsNamed "magma");
  torchCudaText = "(${cudaImportText defaultCudaSet}).${defaultPythonSet}.torch";

  torchaudioPlain = plain.${defaultPythonSet}.torchaudio or { };
in
{
  inherit pythonSets cudaSets;
  defaultPython = fact "(${importText}).python3.pythonVersion" defaultPythonVersion;
  defaultCuda = fact "(${importText}).cudaPackages.cudaMajorMinorVersion" defaultCudaVersion;
  recursedPython = fact "map (s: s.python.pythonVersion) (filter (s: s.recurseForDerivations or false) pythonXYZPackages of ${importText})"
    (map (s: s.version) (filter (s: plain.${s.set}.recurseForDerivations or false) pythonSets));
  torchFormals = fact "builtins.attrNames (${importText}).${defaultPythonSet}.torch.override.__functionArgs" torchFormalNames;
  builderArgsMissing = fact "the arguments pkgs/pytorch.nix passes (${builtins.concatStringsSep ", " builderTorchArgs}) minus torch's formals"
    (if torchFormalNames == null then null else filter (a: !(elem a torchFormalNames)) builderTorchArgs);
  staticLinks = {
    nccl = fact "${torchCudaText}.drvAttrs: USE_STATIC_NCCL (top level or env)" (truthy (attrOrEnv "USE_STATIC_NCCL"));
    magma = fact "${torchCudaText}.buildInputs: a magma (pname) with -DBUILD_SHARED_LIBS:BOOL=FALSE in its cmakeFlags"
      staticMagma;
    nvshmem = fact "${torchCudaText}.drvAttrs: USE_NVSHMEM (top level or env) and a libnvshmem (pname) among buildInputs"
      (truthy (attrOrEnv "USE_NVSHMEM") && inputsNamed "libnvshmem" != [ ]);
  };
  torchaudioDependencies = fact "map (d: d.pname) (${importText}).${defaultPythonSet}.torchaudio.propagatedBuildInputs"
    (filter (n: n != null) (map (d: d.pname or null) (filter (d: typeOf d == "set") (torchaudioPlain.propagatedBuildInputs or [ ]))));
}
