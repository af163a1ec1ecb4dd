# pkgs/torch-env.nix: the environment of one variant (`torch-env-python313-cuda12_8-sm121-armv9`): the Python of the
# variant's Python set with its torch, the packages built on it that the matrix keeps (torchaudio, torchvision, …)
# and torchcodec, all from that one set (hand-written; called by pkgs/matrix.nix). What a user activates:
# `flox build`, `nix-build`, `nix shell -f … ` give a `bin/python3` that imports all of them.
#
# Takes
#   pkgs      the variant's nixpkgs instance (the one its torch was built from).
#   variant   the attrset described in pkgs/pytorch.nix, with role = "env"; dependsOn names the pytorch variant
#             first, then the packages on torch it holds.
#   members   the built derivations of dependsOn, in that order (pkgs/matrix.nix's packages): torch first.
#   siblings  the package variants on that torch (pkgs/matrix.nix), default: the members' variants.
# Returns
#   `python.withPackages (_: members ++ [ torchcodec ])` of the variant's Python set (pkgs/python-set.nix, `torch`
#   replaced, so torchcodec, when the set has one, is built on the same torch), with passthru-style attributes
#   variant, torch, pythonPackages, nixglhost (CUDA variants: pkgs/nix-gl-host.nix, the route to the host's GPU
#   driver outside NixOS; see below) and withHostDriver (the environment with its Pythons run through that nixglhost).
#
# Named environments (matrix.ts `environments`, `llm-env-…`): variant.extras lists nixpkgs attribute names of the
# variant's Python set; each is taken from the set built above (torch replaced), so an extra that takes `torch` is built
# on the variant's torch. An extra the pin lacks stops the evaluation with the attribute and the pin named; an extra
# whose Python closure (propagatedBuildInputs, followed transitively: what buildPythonPackage propagates and
# withPackages links) holds another torch stops it too, naming the extra and that torch (a user's overlay that pinned
# a package to the stock torch would do that).
#
# Facts relied on
# - `python.withPackages` is nixpkgs' python/wrapper.nix: a `buildEnv` of the given packages and their Python
#   closure (requiredPythonModules) with ignoreCollisions = false, so two torches in it (two store paths that both
#   hold lib/pythonX.Y/site-packages/torch) fail the build with buildEnv's "two given paths contain a conflicting
#   subpath" (pkgs/build-support/buildenv/builder.pl). Explicit derivations (not `ps: [ ps.torch ]`) are passed, so
#   the environment holds exactly the variants built by this matrix.
# - Every member was built from the same Python set with the same torch (pkgs/on-torch.nix checks passthru.variant),
#   and torchcodec is taken from that set with `torch` replaced: one torch in the environment (ARCHITECTURE.md rule 8).
{ variant, pkgs, members, siblings ? builtins.filter (v: (v.role or null) == "onTorch") (map (m: m.variant or { }) (builtins.tail members)) }:

let
  inherit (builtins) head filter map concatStringsSep;

  torch = head members;
  torchVariant = torch.variant or (throw "${variant.name}: its first member is not a variant-matrix PyTorch");
  # The set the members were built from (the same siblings), so torchcodec's own inputs are the members.
  pythonPackages = import ./python-set.nix { inherit pkgs variant torch siblings; };
  extraNames = variant.extras or [ ];
  extras = map (a:
    pythonPackages.${a} or (throw "${variant.name}: nixpkgs ${variant.nixpkgsRev} has no ${variant.pythonPackageSet}.${a} (an extra of this environment, matrix.ts environments); pick a pin that carries it or drop it")
  ) extraNames;
  # The derivations of a package's Python closure (propagatedBuildInputs, transitively), by drvPath.
  isDrv = d: builtins.isAttrs d && (d.type or null) == "derivation";
  closureOf = p: map (e: e.drv) (builtins.genericClosure {
    startSet = [ { key = p.drvPath; drv = p; } ];
    operator = e: map (d: { key = d.drvPath; drv = d; }) (filter isDrv (e.drv.propagatedBuildInputs or [ ]));
  });
  otherTorches = p: filter (d: (d.pname or null) == "torch" && d.drvPath != torch.drvPath) (closureOf p);
  foreignExtras = filter (x: otherTorches x.drv != [ ]) (builtins.genList (i: { name = builtins.elemAt extraNames i; drv = builtins.elemAt extras i; }) (builtins.length extras));
  checkedExtras =
    if foreignExtras != [ ] then
      throw "${variant.name}: extra ${concatStringsSep ", " (map (x: "${x.name} is built on ${(head (otherTorches x.drv)).drvPath}") foreignExtras)}, not on this variant's torch ${torch.drvPath}: two torches in one environment"
    else extras;
  # torchcodec (torchaudio's audio I/O since 2.9; a dependency of nixpkgs' torchaudio from 2.11) when the set has it.
  torchcodec = if pythonPackages ? torchcodec then [ pythonPackages.torchcodec ] else [ ];
  # Every member must be built on exactly this torch.
  foreign = filter (m: (m.torch.drvPath or torch.drvPath) != torch.drvPath) (builtins.tail members);
  checked =
    if torchVariant.name != head variant.dependsOn then
      throw "${variant.name}: first member is ${torchVariant.name}, not ${head variant.dependsOn}"
    else if foreign != [ ] then
      throw "${variant.name}: ${concatStringsSep ", " (map (m: m.variant.name or m.name) foreign)} built on another torch"
    else members;
  # The environment runs no variant code itself (a buildEnv of symlinks and wrappers), but it is a derivation of the
  # variant: it carries the ISA's gccarch feature like every other, so a builder that takes it can run
  # what it holds.
  isaFeatures = import ./isa-features.nix variant;
  plainEnv = pythonPackages.python.withPackages (_: checked ++ torchcodec ++ checkedExtras);
  env = if isaFeatures == [ ] then plainEnv else plainEnv.overrideAttrs (old: {
    requiredSystemFeatures = (old.requiredSystemFeatures or [ ]) ++ isaFeatures;
  });
  # The host's GPU driver outside NixOS (docs/gpu-driver.md). The CUDA libraries of this environment look for
  # libcuda.so.1 in /run/opengl-driver/lib (their runpath: nixpkgs pkgs/by-name/ad/addDriverRunpath), which only NixOS
  # creates, or on LD_LIBRARY_PATH (searched before the runpath); Nix's glibc does not read the host's
  # /etc/ld.so.cache. numtide's nix-gl-host (pkgs/nix-gl-host.nix: the pin's when it carries one, which no catalog pin
  # was found to do, else numtide/nix-gl-host at 5269b23) runs a program with the host's libcuda.so* on
  # LD_LIBRARY_PATH, taken from those directories of LD_LIBRARY_PATH, /etc/ld.so.conf and its includes, /lib,
  # /usr/lib, /lib64, /usr/lib64, /run/opengl-driver/lib and /usr/lib/wsl/lib that also hold one of its NVIDIA
  # libraries (src/nixglhost.py at 5269b23: get_ld_paths, scan_dsos_from_dir; generator/catalog/machines.ts NIXGLHOST).
  # `nix-build FILE -A withHostDriver -o DIR` gives this environment with its Pythons run through it. The other route,
  # `flox activate` of an environment that installs the variant (options.cuda-detection), needs nothing here.
  nixglhost =
    if variant.cuda == null then throw "${variant.name} is CPU-only: it loads no libcuda, so it needs no nixglhost"
    else import ./nix-gl-host.nix pkgs;
  # The environment with bin/python, python3 and python3.N running through that nixglhost (pkgs/host-driver.nix): what
  # `variant-matrix install` links at DIR on a host that is not NixOS.
  withHostDriver = import ./host-driver.nix { inherit (pkgs) runCommand; shell = pkgs.runtimeShell; inherit env nixglhost; };
in
assert variant.role == "env";
env // {
  inherit variant torch pythonPackages nixglhost withHostDriver;
  members = map (m: m.variant.name or m.name) checked;
  extras = extraNames;
}
