# pkgs/checks.nix: the checks of one variant's promise (hand-written; used by pkgs/matrix.nix for release.nix's
# `tests.NAME`, and as passthru.tests of the packages).
#
# Takes
#   pkgs            the variant's nixpkgs instance (pkgs/nixpkgs.nix).
#   variant         the variant attrset (pkgs/pytorch.nix describes it).
#   package         the built variant (torch; a package built on torch, with passthru.pythonPackages; or the
#                   environment, pkgs/torch-env.nix, which is itself the Python environment checked).
#   pythonPackages  the variant's Python set in which `torch` is the variant's torch (pkgs/python-set.nix).
#   memberChecks    (environments) [ { name = MEMBER; static = its static check; } ... ] for the members (dependsOn):
#                   the environment's static check writes them to $out/members.json, so its proof lists its members'
#                   proofs (and is built after them). Default [ ].
# Returns
#   {
#     static    runs generator/verify/probe.py --cuobjdump in a Python environment holding `package`, then
#               pkgs/verify-compare.mjs (the bundle of generator/verify/compare.ts, the comparison `verify` uses;
#               code only) with pkgs/verify-facts.json (the catalog's facts it judges with, as data; both written
#               by `generate`) against the variant's promise: versions, Python, CUDA, TORCH_CUDA_ARCH_LIST and NVCC flags, the
#               device code of every library per origin (cuobjdump -symbols of cudaPackages.cuda_cuobjdump: torch's
#               and torchaudio's own kernels exactly the capabilities with no PTX; NCCL, MAGMA and NVSHMEM, which
#               nixpkgs links into torch statically, as their scope builds them), SASS for the variant's GPU, the
#               libtorch each package built on torch loads. No GPU needed: it builds in any sandbox.
#     gpuCheck  the same probe with --gpu (matmul against the CPU; each package's GPU smoke tests, the catalog's
#               `gpuChecks`: torchaudio's rnnt_loss and forced_align, torchvision's nms and roi_align on CUDA tensors), with requiredSystemFeatures = [ "cuda" ], nixpkgs' convention for GPU checks (as in
#               torch's and torchaudio 2.11's passthru.gpuCheck): only builders that declare the `cuda` system
#               feature (e.g. NixOS hosts with `nix-required-mounts`) build it. Absent for CPU-only variants.
#   }
#   Each writes the probe (probe.json, whose `cuobjdump.tool` names the cuobjdump that read the libraries), the report
#   (report.txt) and the builder it ran on (builder.json: the Nix system, the host name, kernel and CPU the build saw;
#   in Nix's sandbox the host name is "localhost") to $out, and fails when a promise does not hold; an environment's
#   static check also members.json: [ { "name": MEMBER, "proof": STORE PATH of its static check } ... ]. The static
#   check's $out is the variant's proof: `build` links it as result-NAME-proof, `publish` copies it with the variant,
#   `install` shows it (generator/driver/proof.ts).
{ pkgs, variant, package, pythonPackages, memberChecks ? [ ] }:

let
  isCuda = variant.cuda != null;
  python = pythonPackages.python;
  # withPackages gathers the propagated closure (torch for torchaudio) of exactly these derivations; the
  # environment variant is one already.
  env = if variant.role == "env" then package else python.withPackages (_: [ package ]);
  # The promise the comparison reads: the name's parts, the CUDA scope and the pin (which third-party device code
  # nixpkgs links into torch, and for which capabilities, depends on both: generator/verify/origins.ts).
  promise = builtins.toFile "${variant.name}-promise.json" (builtins.toJSON {
    inherit (variant) name package version torchVersion onTorchVersions dependsOn python cuda sm isa system cudaCapabilities cudaCapabilitiesForPackageSet;
    nixpkgs = variant.nixpkgsRev;
    # A named environment's extras (pkgs/torch-env.nix): the version the pin carries, the modules its own
    # pythonImportsCheck imports (else the attribute), its distribution name (pname) for importlib.metadata.
    extras = map (a:
      let p = pythonPackages.${a}; in {
        attr = a;
        version = p.version or null;
        modules = p.pythonImportsCheck or [ a ];
        dist = p.pname or a;
      }) (variant.extras or [ ]);
  });
  # The checks run the variant's code (the probe imports torch): they need a builder that runs its ISA, like the
  # variant (pkgs/variant-attrs.nix).
  isaFeatures = import ./isa-features.nix variant;
  cuobjdump = if isCuda then "--cuobjdump=${pkgs.cudaPackages.cuda_cuobjdump}/bin/cuobjdump" else "";
  # The members' proofs as JSON, an attribute of the check's derivation: the store paths' context makes each member's
  # check an input (built first), and the builder writes it as it is (Nix 2.8: builtins.toJSON keeps string context;
  # builtins.toFile could not hold it).
  members = if memberChecks == [ ] then { } else {
    membersJson = builtins.toJSON (map (m: { inherit (m) name; proof = "${m.static}"; }) memberChecks);
  };
  check = kind: probeArgs: extra:
    pkgs.runCommand "${variant.name}-check-${kind}" ({
      nativeBuildInputs = [ env pkgs.nodejs ];
      passthru = { inherit variant; };
    } // extra) ''
      mkdir -p $out
      ${if memberChecks == [ ] then "" else ''printf '%s\n' "$membersJson" > $out/members.json''}
      node -e 'const os = require("os"); process.stdout.write(JSON.stringify({ system: process.argv[1], hostname: os.hostname(), kernel: os.release(), cpu: (os.cpus()[0] || {}).model || null }) + "\n")' ${variant.system} > $out/builder.json
      ${env}/bin/python3 ${../generator/verify/probe.py} ${probeArgs} --promise=${promise} > $out/probe.json
      status=0
      node ${./verify-compare.mjs} ${./verify-facts.json} ${promise} $out/probe.json > $out/report.txt || status=$?
      cat $out/report.txt
      exit $status
    '';
in
{
  static = check "static" cuobjdump ((if isaFeatures == [ ] then { } else { requiredSystemFeatures = isaFeatures; }) // members);
}
// (if isCuda then { gpuCheck = check "gpu" "--gpu ${cuobjdump}" { requiredSystemFeatures = [ "cuda" ] ++ isaFeatures; }; } else { })
