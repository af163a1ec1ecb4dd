# pkgs/variant-attrs.nix: the one overrideAttrs function every variant builder applies (hand-written).
#
# Takes
#   variant    the variant attrset of a generated file (see pkgs/pytorch.nix); reads name, version,
#              cuda, cudaCapabilities, cflags, system, description.
#   passthru   extra passthru attributes of this package (default { }).
# Returns
#   `old: { ... }`, to hand to `drv.overrideAttrs`. It
#   - checks that the package nixpkgs provides is the version the variant's name promises;
#   - appends variant.cflags to NIX_CFLAGS_COMPILE (keeping what nixpkgs set there);
#   - for CUDA, sets TORCH_CUDA_ARCH_LIST to variant.cudaCapabilities joined with ";" ("12.0;..."), and the
#     package's own variables of variant.packageBuild.env (flash-attn's FLASH_ATTN_CUDA_ARCHS);
#   - adds variant.packageBuild.cmakeFlags to cmakeFlags, replacing the package's flags of the same variable
#     (bitsandbytes' -DCOMPUTE_CAPABILITY, which its CMakeLists turns into CMAKE_CUDA_ARCHITECTURES);
#   - with variant.packageBuild.gibPerCompileJob, caps MAX_JOBS to the builder's available memory after the
#     package's own preConfigure;
#   - prepends `export MAX_JOBS="$NIX_BUILD_CORES"` to preConfigure (never a fixed -j);
#   - sets name = "${variant.name}-${version}" (the store name) and keeps the package's pname, or sets the
#     distribution name variant.packageBuild.pname where nixpkgs' pname is not it (flash-attn before
#     NixOS/nixpkgs#561201): nixpkgs' pythonMetadataCheckHook (NixOS/nixpkgs#532778, in nixos-unstable from mid-2026)
#     runs `importlib.metadata.version("$pname")` after the install and fails the build when no installed
#     distribution has that (normalized) name, whatever doCheck says;
#   - sets meta.description, meta.platforms = [ variant.system ]; with the catalog's "unbreak" fix
#     (variant.packageBuild.fixes), meta.broken = false and aarch64-linux out of meta.badPlatforms;
#   - adds variant.requiredSystemFeatures (matrix.ts policy, default [ "big-parallel" ]) to the derivation's
#     requiredSystemFeatures, so remote builders and Hydra route it to machines that declare them;
#   - adds passthru.variant = variant (plus the given passthru).
#
# Facts relied on
# - nixpkgs torch sets env.NIX_CFLAGS_COMPILE (toString [ "-Wno-error" ... ]) and PyTorch's setup.py
#   reads CFLAGS for C and C++ alike; NIX_CFLAGS_COMPILE reaches every compiler call through the cc
#   wrapper (pkgs/development/python-modules/torch/source/default.nix, `env` block and its comment).
# - stdenv.mkDerivation refuses a name that is both in `env` and a top-level attribute, so a variable
#   is written where the package already keeps it (top level if there, else `env`)
#   (pkgs/stdenv/generic/make-derivation.nix, the `env` overlap check).
# - nixpkgs torchaudio exports TORCH_CUDA_ARCH_LIST from `torch.cudaCapabilities`, which nixpkgs torch
#   derives from config.cudaCapabilities, not from `gpuTargets`
#   (pkgs/development/python-modules/torchaudio/default.nix `env`; torch/source/default.nix passthru).
#   Setting it here from the variant keeps torchaudio's kernels on the variant's capabilities whether or
#   not config.cudaCapabilities is set.
# - PyTorch's and torchaudio's setup.py take their build parallelism from MAX_JOBS; stdenv sets
#   NIX_BUILD_CORES (normalised to the core count when 0) before any hook runs (nixpkgs torch itself does
#   `export MAX_JOBS=$NIX_BUILD_CORES` in preBuild). preConfigure runs for buildPythonPackage even with
#   dontUseCmakeConfigure (the default configurePhase runs its hooks).
# - Older buildPythonPackage passed `name = namePrefix + "${pname}-${version}"` computed once
#   (pkgs/development/interpreters/python/mk-python-derivation.nix); newer ones derive name from finalAttrs.pname.
#   Setting `name` gives the variant's store name on both, with pname left as the distribution's.
# - pkgs/development/interpreters/python/hooks/python-metadata-check-hook.sh reads `$pname` and `$version` from the
#   build environment (so an overrideAttrs of pname changes what it looks up) and is skipped only by
#   dontCheckPythonMetadata (it runs in preDistPhases, not under doCheck).
{ variant, passthru ? { } }:

old:
let
  inherit (builtins) concatStringsSep intersectAttrs attrNames removeAttrs;

  # Guard the promise of the name: the pinned nixpkgs must carry the version the variant names.
  version =
    if old.version == variant.version then old.version
    else throw ''
      ${variant.name}: the pinned nixpkgs (${variant.nixpkgsRev or "?"}) provides ${old.pname or "the package"} ${old.version},
      but the variant promises ${variant.version}. Fix the release → nixpkgs pin in the catalog.
    '';

  oldEnv = old.env or { };
  current = name: toString (old.${name} or oldEnv.${name} or "");
  appendWords = a: b: if a == "" then b else if b == "" then a else "${a} ${b}";

  # A package's own build inputs besides TORCH_CUDA_ARCH_LIST (generator/catalog/lib/packages.ts `cudaBuildOf`), absent for
  # most variants.
  build = { env = { }; cmakeFlags = [ ]; gibPerCompileJob = null; pname = null; fixes = [ ]; } // (variant.packageBuild or { });
  # The catalog's "unbreak" fix (generator/catalog/packages.ts `fixes`, resolved per pin by expand): nixpkgs marks the
  # package broken under CUDA, and bad on aarch64-linux for its CPU backend, where a sourced recipe builds it.
  unbreak = builtins.elem "unbreak" build.fixes;

  vars = {
    NIX_CFLAGS_COMPILE = appendWords (current "NIX_CFLAGS_COMPILE") (concatStringsSep " " variant.cflags);
  }
  // (if variant.cuda != null then { TORCH_CUDA_ARCH_LIST = concatStringsSep ";" variant.cudaCapabilities; } // build.env else { });

  # CMake flags replace any flag of the same variable the package sets ("-DCOMPUTE_CAPABILITY" of
  # "-DCOMPUTE_CAPABILITY:STRING=…", lib.cmakeFeature's spelling, or of "-DCOMPUTE_CAPABILITY=…").
  flagName = f: builtins.head (builtins.split "[=:]" (toString f));
  ourFlagNames = map flagName build.cmakeFlags;
  cmakeAttrs =
    if build.cmakeFlags == [ ] then { }
    else { cmakeFlags = builtins.filter (f: !(builtins.elem (flagName f) ourFlagNames)) (old.cmakeFlags or [ ]) ++ build.cmakeFlags; };

  # At most one compile job per gibPerCompileJob GiB of the memory the builder has now (MemAvailable), after the
  # package's own preConfigure (which sets MAX_JOBS from NIX_BUILD_CORES); shell builtins only. Unreadable
  # /proc/meminfo: no cap.
  memoryCap = if build.gibPerCompileJob == null then "" else ''
    # variant-matrix: one compile job per ${toString build.gibPerCompileJob} GiB of available memory (generator/catalog/packages.ts gibPerCompileJob).
    variantMatrixMemKiB=0
    if [ -r /proc/meminfo ]; then
      while read -r variantMatrixKey variantMatrixValue variantMatrixUnit; do
        if [ "$variantMatrixKey" = "MemAvailable:" ]; then variantMatrixMemKiB=$variantMatrixValue; fi
      done < /proc/meminfo
    fi
    if [ "$variantMatrixMemKiB" -gt 0 ]; then
      variantMatrixByMemory=$(( variantMatrixMemKiB / (${toString build.gibPerCompileJob} * 1024 * 1024) ))
      if [ "$variantMatrixByMemory" -lt 1 ]; then variantMatrixByMemory=1; fi
      if [ "''${MAX_JOBS:-$NIX_BUILD_CORES}" -gt "$variantMatrixByMemory" ]; then
        echo "variant-matrix: MAX_JOBS $variantMatrixByMemory (of ''${MAX_JOBS:-$NIX_BUILD_CORES}): $variantMatrixMemKiB KiB available, ${toString build.gibPerCompileJob} GiB per compile job"
        export MAX_JOBS=$variantMatrixByMemory
      fi
    fi
  '';

  # Variables the package keeps at top level stay there; the rest go to `env`.
  topLevelVars = intersectAttrs old vars;
  envVars = removeAttrs vars (attrNames topLevelVars);
in
topLevelVars
// cmakeAttrs
// {
  # pname stays the package's own (or the table's correction of it): nixpkgs' pythonMetadataCheckHook looks the
  # installed distribution up by `$pname` at build time; only the store name carries the variant.
  pname = if build.pname != null then build.pname else old.pname or variant.name;
  name = "${variant.name}-${version}";
  requiredSystemFeatures =
    let old' = old.requiredSystemFeatures or [ ];
    in old' ++ builtins.filter (f: !(builtins.elem f old')) (variant.requiredSystemFeatures or [ ]);
  env = oldEnv // envVars;

  preConfigure = ''
    # variant-matrix: build parallelism follows the builder's cores (nix --cores / NIX_BUILD_CORES).
    export MAX_JOBS="$NIX_BUILD_CORES"
  '' + (old.preConfigure or "") + memoryCap;

  passthru = (old.passthru or { }) // passthru // { inherit variant; };

  meta = (old.meta or { }) // {
    description = variant.description;
    platforms = [ variant.system ];
  } // (if unbreak then {
    broken = false;
    badPlatforms = builtins.filter (p: p != "aarch64-linux") (old.meta.badPlatforms or [ ]);
  } else { });
}
