# pkgs/torch-override-args.nix: what pkgs/pytorch.nix hands nixpkgs' torch through `.override` for one variant
# (hand-written). Kept apart so that pkgs/inspect-pin.nix checks exactly these names against torch's formal
# arguments (`torch.override.__functionArgs`) of a nixpkgs: one list, two readers.
#
# Takes   variant  (reads cuda: "12.8" | null, cudaCapabilities: [ "12.0" ]; see pkgs/pytorch.nix)
# Returns { cudaSupport = cuda != null; gpuTargets = cudaCapabilities; }
#   gpuTargets becomes TORCH_CUDA_ARCH_LIST ("if gpuTargets != [ ] … it always takes priority", nixpkgs torch
#   source/default.nix).
variant: {
  cudaSupport = variant.cuda != null;
  gpuTargets = variant.cudaCapabilities;
}
