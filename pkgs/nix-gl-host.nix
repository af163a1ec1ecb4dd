# pkgs/nix-gl-host.nix: numtide's nix-gl-host (`nixglhost`), the route from a Nix-built CUDA program to the host's GPU
# driver outside NixOS (hand-written; used by pkgs/torch-env.nix and pkgs/flake-outputs.nix).
#
# Takes
#   pkgs   the variant's nixpkgs instance.
# Returns
#   pkgs.nix-gl-host when that nixpkgs carries one; else a derivation of numtide/nix-gl-host at 5269b23
#   (2024-11-21, the newest commit of its main branch; its README calls it alpha; no tag exists) built as the
#   repository's own default.nix builds it: src/nixglhost.py installed as bin/nixglhost, patchelf's path and
#   IN_NIX_STORE = True substituted, its shebang patched to nixpkgs' python3. meta.mainProgram "nixglhost".
#
# Facts relied on
# - No nixpkgs file of nix-gl-host was found: no `pkgs/by-name/ni/nix-gl-host` (or other nix-gl-host package file) in
#   the stored nixpkgs trees, no init PR in its tracker; upstream documents only its flake (overlays.default adds
#   `nix-gl-host`) and `callPackage` of its default.nix. So every catalog pin is taken to have none, and this file
#   packages the commit whose src/nixglhost.py generator/catalog/machines.ts (NIXGLHOST) models.
# - The hash is the NAR hash of `git archive 5269b233f83880a0b433eafe026f0bc0d8f1a4a9` of that repository (no
#   .gitattributes: GitHub's tarball holds the same files), computed with nix-hash --type sha256.
# - Upstream's checkPhase (default.nix at 5269b23, doCheck = true) runs black and nixpkgs-fmt over its sources (style
#   checks) and `python src/nixglhost_test.py`, its unit tests of the cache directory's JSON and library records
#   (CacheDirContent, LibraryPath, ResolvedLib). This file runs no check phase, so neither the style checks nor those
#   unit tests run here: the behaviour variant-matrix relies on is read from src/nixglhost.py (catalog/machines.ts
#   NIXGLHOST) and was exercised on a real Ubuntu + H100 host (docs/gpu-driver.md).
pkgs:

pkgs.nix-gl-host or (pkgs.stdenvNoCC.mkDerivation {
  pname = "nix-gl-host";
  version = "0.1-unstable-2024-11-21";
  src = pkgs.fetchFromGitHub {
    owner = "numtide";
    repo = "nix-gl-host";
    rev = "5269b233f83880a0b433eafe026f0bc0d8f1a4a9";
    hash = "sha256-QZCKJoypcwgS3tDNSWMjlxEBZtOYPW3eXV24rMzKsac=";
  };
  # The interpreter of bin/nixglhost (patchShebangs looks on the host PATH: buildInputs).
  buildInputs = [ pkgs.python3 ];
  dontBuild = true;
  installPhase = ''
    install -D -m0755 src/nixglhost.py $out/bin/nixglhost
  '';
  postFixup = ''
    substituteInPlace $out/bin/nixglhost \
      --replace-fail "@patchelf-bin@" "${pkgs.patchelf}/bin/patchelf" \
      --replace-fail "IN_NIX_STORE = False" "IN_NIX_STORE = True"
    patchShebangs $out/bin/nixglhost
  '';
  meta = {
    description = "Run Nix-built OpenGL and CUDA programs with the host's GPU driver libraries";
    homepage = "https://github.com/numtide/nix-gl-host";
    mainProgram = "nixglhost";
  };
})
