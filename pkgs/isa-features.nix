# pkgs/isa-features.nix: the ISA system features of a variant (hand-written; used by python-set.nix, torch-env.nix and
# checks.nix): the `gccarch-…` entries of variant.requiredSystemFeatures (generator/matrix/expand.ts gccarchFeature), which
# every derivation that runs the variant's code while it builds must require.
variant: builtins.filter (f: builtins.substring 0 8 f == "gccarch-") (variant.requiredSystemFeatures or [ ])
