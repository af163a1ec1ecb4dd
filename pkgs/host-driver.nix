# pkgs/host-driver.nix: an environment whose Pythons run through the host's GPU driver, for a host that is not NixOS
# (hand-written; called by pkgs/torch-env.nix as its `withHostDriver`, which `variant-matrix install` links at DIR).
#
# Takes
#   runCommand  nixpkgs' runCommand (pkgs/build-support/trivial-builders): name -> env -> script -> derivation.
#   shell       the interpreter of the wrappers' `#!` line (nixpkgs' runtimeShell).
#   env         the environment (pkgs/torch-env.nix's python.withPackages): bin/python3 and the rest.
#   nixglhost   pkgs/nix-gl-host.nix (numtide's nix-gl-host; its program is bin/nixglhost, meta.mainProgram).
# Returns
#   a derivation named `<env's name>-host-driver` holding a link to every entry of env, except that bin/python,
#   bin/python3 and bin/python3.N are scripts running `nixglhost <env>/bin/<same name> "$@"`. The other programs of bin
#   (pip, torchrun, …) are links to env's: they run as they do in env.
#
# Facts relied on
# - `nixglhost NIX_BINARY ARGS…` (src/nixglhost.py at 5269b23: argparse, NIX_BINARY positional, ARGS
#   argparse.REMAINDER) puts the host's libcuda.so* (found as generator/catalog/machines.ts NIXGLHOST describes) on
#   LD_LIBRARY_PATH and execs NIX_BINARY with every argument after it unchanged, so `python3 -c …` and `python3 x.py`
#   keep their meaning.
# - A Nix output, not a script outside the store: it is garbage-collected with its environment, and a second build of
#   the same env and nix-gl-host is the same store path.
{ runCommand, shell, env, nixglhost }:

runCommand "${env.name}-host-driver" { } ''
  mkdir -p $out/bin
  for f in ${env}/*; do
    case "''${f##*/}" in bin) ;; *) ln -s "$f" "$out/" ;; esac
  done
  for f in ${env}/bin/*; do
    n="''${f##*/}"
    case "$n" in
      python|python3|python3.[0-9]|python3.[0-9][0-9])
        printf '#!%s\nexec %s %s "$@"\n' "${shell}" "${nixglhost}/bin/nixglhost" "$f" > "$out/bin/$n"
        chmod +x "$out/bin/$n" ;;
      *) ln -s "$f" "$out/bin/$n" ;;
    esac
  done
  [ -x "$out/bin/python3" ] || { echo "${env.name} has no bin/python3 to run through nixglhost" >&2; exit 1; }
''
