/**
 * Facts about the machines and tools the project runs on, as data with their sources: what the preflight checks
 * compare a host against (generator/preflight/checks.ts reads them; docs/gpu-driver.md explains them), the oldest flox
 * the generated files need (render/index.ts writes it into them), and the memory one CUDA compile process takes (the
 * build driver's `--jobs` default, model/concurrency.ts). With ci-runners.ts they make the catalog's second value,
 * `machines` (catalog/index.ts, MachineFactsSchema); the public CUDA caches are in the catalog itself
 * (catalog/binary-cache.ts). Readers on the CLI's start-up path import this file directly (no zod at start-up:
 * tests/catalog-tables.test.ts lists them and why).
 */
import type { DriverRoute, MachineFacts } from "./schema.ts";

/**
 * The flox that opens `.flox/env/manifest.toml` and builds `.flox/pkgs/*.nix`, and why (flox/flox 6536dac):
 * - The manifest says `version = 1`, the oldest manifest format: every flox since 1.0.4 reads it, and the newest
 *   still does (cli/flox-manifest/src/parsed/common.rs `VersionKind::Version(1) => Ok(KnownSchemaVersion::V1)`,
 *   migrated in memory, kept as written on disk). It uses `[options] systems` only, which that format has. A
 *   `schema-version` is refused by any flox older than it ("manifest had invalid schema version '1.19.0'"), and
 *   1.10.0 (the oldest) by flox ≤ 1.9.1 ("unsupported manifest version").
 * - Nix expression builds (`flox build NAME` of `.flox/pkgs/NAME.nix`) are generally available from flox 1.5.0 (they
 *   appeared behind a feature flag in 1.4.3; #3281 removed it "in preparation for 1.5 release").
 */
export const FLOX_MIN_VERSION = "1.5.0";

/** Memory one CUDA compile process of torch needs, in GiB (the guide 'Building PyTorch 2.9.1 for ARM64 with T4G (sm_75) Support'). */
export const GIB_PER_COMPILE_JOB = 4;

/**
 * The oldest Nix that evaluates the catalog's pins: nixpkgs' root default.nix aborts on a Nix older than its
 * `lib/minver.nix` ("This version of Nixpkgs requires Nix >= …, please upgrade"). That file said "2.3.17" from
 * NixOS/nixpkgs#354586 (2024-11) and became "2.18" with NixOS/nixpkgs#428076 ("nix_2_3: drop and raise minver to
 * 2.18", reviewed 2025-08-09/10). So not every nixpkgs of 2025 asks for 2.18: those before August 2025 ask for 2.3.17.
 * The rule holds for every catalog pin for another reason: each carries torch 2.8.0 or later, and torch 2.8.0 reached
 * nixpkgs with NixOS/nixpkgs#431973 (merged about 2025-08-31), after #428076 (`minverSince` below; tests/catalog.test.ts
 * checks every pin against it). generator/pin/nix.ts reads the file itself when it has a checkout, so a user's older
 * pin is judged by its own minver.nix.
 */
export const NIX_MIN = {
  version: "2.18",
  /** Since when nixpkgs asks for `version`, and the oldest torch whose nixpkgs update came after that. */
  minverSince: { pr: "NixOS/nixpkgs#428076", month: "2025-08", previous: "2.3.17", previousSince: "NixOS/nixpkgs#354586 (2024-11)", torchAfter: "2.8.0", torchAfterPr: "NixOS/nixpkgs#431973" },
  source:
    "nixpkgs lib/minver.nix: \"2.3.17\" from NixOS/nixpkgs#354586 (2024-11), \"2.18\" from NixOS/nixpkgs#428076 (August 2025); every " +
    "catalog pin carries torch >= 2.8.0, which came with NixOS/nixpkgs#431973 (2025-08-31), later; pin/nix.ts requiredNixVersion " +
    "reads the file from a checkout",
} as const;

/** The oldest flox whose `flox build` builds `.flox/pkgs/*.nix` (render/index.ts FLOX_MIN_VERSION: flox#3281, 1.5 release). */
export const FLOX_MIN = {
  version: FLOX_MIN_VERSION,
  source: "flox 1.4.3 had Nix expression builds behind a feature flag; flox/flox#3281 removed it 'in preparation for 1.5 release' (generator/generate/render/index.ts)",
} as const;

/**
 * Free space the Nix store needs for a variant built here: a heuristic floor, not a measurement of a Nix store. The
 * one figure behind it is matteospanio/torchfx#76: on a GitHub-hosted runner (~14 GB free), "the CUDA toolkit + the
 * multi-GB CUDA torch wheel + the build" of a pip/dnf wheel build exhausted the disk. That is not a Nix store and not a
 * source build of torch, but a Nix closure holds the same kinds of things (a CUDA toolkit, a CUDA torch), so 14 GB is
 * taken as a floor below which a build cannot fit (generator/catalog/ci-runners.ts GITHUB_LIMITS: a hosted job has a 14 GB disk and
 * torch builds go to self-hosted runners). A source build of torch needs more (its build tree and nvcc's temporaries);
 * nothing here measured how much, so the check fails only below the floor.
 */
export const STORE_FREE_FLOOR = {
  bytes: 14 * 1000 ** 3,
  /** How the value was reached: a heuristic from one wheel build's disk exhaustion, never measured on a Nix store. */
  kind: "heuristic",
  source:
    "heuristic: matteospanio/torchfx#76 (a pip/dnf CUDA wheel build exhausted a GitHub runner's ~14 GB free; not a Nix store); " +
    "generator/catalog/ci-runners.ts GITHUB_LIMITS (14 GB hosted-runner disk)",
} as const;

/**
 * Where nixpkgs' CUDA packages look for the GPU driver's libcuda.so.1 by default: the runpath entry
 * `${driverLink}/lib` that the addDriverRunpath / autoAddDriverRunpath hooks write into their ELF files. It is not the
 * only way in: the dynamic loader searches LD_LIBRARY_PATH before a library's RUNPATH, so a libcuda.so.1 placed on
 * LD_LIBRARY_PATH is found first (that is how nixglhost works, DRIVER_ROUTES below).
 */
export const NIXOS_DRIVER_LIB = {
  dir: "/run/opengl-driver/lib",
  source:
    "nixpkgs pkgs/by-name/ad/addDriverRunpath/package.nix (driverLink = \"/run/opengl-driver\", \"the path to hardware drivers " +
    "installed by NixOS\") and pkgs/by-name/au/autoAddDriverRunpath (the hook that adds it to every ELF file's runpath); " +
    "NixOS creates it from hardware.graphics / hardware.nvidia; Nix's glibc does not read the host's /etc/ld.so.cache, " +
    "but does read LD_LIBRARY_PATH, searched before RUNPATH (ld.so(8))",
} as const;

/**
 * How numtide/nix-gl-host's `nixglhost PROGRAM` finds the host's GPU driver (src/nixglhost.py at 5269b23, 2024-11-21; its
 * README calls it alpha): `get_ld_paths` lists the directories of LD_LIBRARY_PATH, /etc/ld.so.conf (its `include`
 * globs followed, relative ones from the including file's directory), then /lib, /usr/lib, /lib64, /usr/lib64,
 * /run/opengl-driver/lib and /usr/lib/wsl/lib, keeping those that are directories ($PREFIX's, for Termux, are not
 * modelled). `scan_dsos_from_dir` keeps a directory only when a file of it matches one of NVIDIA_DSO_PATTERNS
 * (`re.search` over the file's absolute path); only then are its CUDA_DSO_PATTERNS files (libcuda, libcudadebugger,
 * libnvidia-ml) copied to the cache directory put on PROGRAM's LD_LIBRARY_PATH. So a directory holding libcuda alone
 * is passed over.
 */
export const NIXGLHOST: MachineFacts["nixglhost"] = {
  /** get_ld_paths' fixed directories, after LD_LIBRARY_PATH and /etc/ld.so.conf. */
  fixedDirs: ["/lib", "/usr/lib", "/lib64", "/usr/lib64", "/run/opengl-driver/lib", "/usr/lib/wsl/lib"],
  searchList: "LD_LIBRARY_PATH, /etc/ld.so.conf (and its includes), /lib, /usr/lib, /lib64, /usr/lib64, /run/opengl-driver/lib or /usr/lib/wsl/lib",
  /** NVIDIA_DSO_PATTERNS, as nixglhost.py writes them (Python `re` syntax that JavaScript reads alike). */
  nvidiaDsoPatterns: [
    "libGLESv1_CM_nvidia\\.so.*$", "libGLESv2_nvidia\\.so.*$", "libglxserver_nvidia\\.so.*$", "libnvcuvid\\.so.*$",
    "libnvidia-allocator\\.so.*$", "libnvidia-cfg\\.so.*$", "libnvidia-compiler\\.so.*$", "libnvidia-eglcore\\.so.*$",
    "libnvidia-encode\\.so.*$", "libnvidia-fbc\\.so.*$", "libnvidia-glcore\\.so.*$", "libnvidia-glsi\\.so.*$",
    "libnvidia-glvkspirv\\.so.*$", "libnvidia-gpucomp\\.so.*$", "libnvidia-ngx\\.so.*$", "libnvidia-nvvm\\.so.*$",
    "libnvidia-opencl\\.so.*$", "libnvidia-opticalflow\\.so.*$", "libnvidia-ptxjitcompiler\\.so.*$", "libnvidia-rtcore\\.so.*$",
    "libnvidia-tls\\.so.*$", "libnvidia-vulkan-producer\\.so.*$", "libnvidia-wayland-client\\.so.*$", "libnvoptix\\.so.*$",
    "libnvtegrahv\\.so.*$", "libdrm\\.so.*$", "libffi\\.so.*$", "libgbm\\.so.*$", "libexpat\\.so.*$", "libxcb-glx\\.so.*$",
    "libX11-xcb\\.so.*$", "libX11\\.so.*$", "libXext\\.so.*$", "libwayland-server\\.so.*$", "libwayland-client\\.so.*$",
    "libd3d12core\\.so.*$", "libd3d12\\.so.*$", "libdxcore\\.so.*$",
  ],
  /** CUDA_DSO_PATTERNS: what it copies for CUDA from a kept directory. */
  cudaDsoPatterns: ["libcudadebugger\\.so.*$", "libcuda\\.so.*$", "libnvidia-ml\\.so.*$"],
  source:
    "numtide/nix-gl-host src/nixglhost.py at 5269b233f83880a0b433eafe026f0bc0d8f1a4a9 (2024-11-21): get_ld_paths, " +
    "NVIDIA_DSO_PATTERNS, CUDA_DSO_PATTERNS, scan_dsos_from_dir, resolve_libraries; meta.mainProgram \"nixglhost\"; " +
    "graham33/nixos-dgx-spark puts it in its dev shells on non-NixOS hosts",
};

/**
 * How today's flox serves the host's GPU driver to a Nix-built program (flox/flox at 6536dac28dab945560ce1a6652fe77415ae66800,
 * v1.14.x): assets/environment-interpreter/common/etc/profile.d/0800_cuda.sh `activate_cuda` runs only when the activate
 * script was given `--cuda-detection` (it sets the unexported `_FLOX_ENV_CUDA_DETECTION_V2=1`, since v1.12.1, commit
 * 588f1f6; earlier flox exported `_FLOX_ENV_CUDA_DETECTION=1` to every child), on Linux, when
 * `find /dev -maxdepth 1 -iname 'nvidia*' -o -iname dxg` finds a node; it collects the paths of
 * `^lib(cuda|nv|dxcore).*\.so.*` from `ldconfig --print-cache -C /etc/ld.so.cache` (NixOS: files under
 * /run/opengl-driver) and appends them to LD_FLOXLIB_FILES_PATH. It links nothing into the environment:
 * 0101_common-dev-mode-additional-paths.sh sets `LD_AUDIT` to ld-floxlib.so (unless FLOX_NOSET_LD_AUDIT), and
 * ld-floxlib/ld-floxlib.c's la_objsearch serves a library whose name is the basename of a LD_FLOXLIB_FILES_PATH entry
 * once the loader's own search (the runpath /run/opengl-driver/lib) found nothing (LD_FLOXLIB_FILES_PATH since v1.3.12,
 * ca1d1f8). Those profile.d scripts are sourced in dev and build mode; `run` mode (activate/activate) sources only
 * 0100_common-run-mode-paths.sh, so `flox activate -m run` serves no libcuda.
 */
export const FLOX_CUDA = {
  /** The 1.5–1.12.0 variable, exported into the activation (1.12.1 stopped exporting it). */
  legacyVariable: "_FLOX_ENV_CUDA_DETECTION",
  auditLibrary: "ld-floxlib.so",
  source:
    "flox/flox 6536dac (v1.14.x): assets/environment-interpreter/common/etc/profile.d/0800_cuda.sh (activate_cuda), " +
    "0101_common-dev-mode-additional-paths.sh (LD_AUDIT=ld-floxlib.so), activate/activate (--cuda-detection sets the unexported " +
    "_FLOX_ENV_CUDA_DETECTION_V2 since v1.12.1, 588f1f6; run mode sources no CUDA detection), ld-floxlib/ld-floxlib.c " +
    "(la_objsearch: LD_FLOXLIB_FILES_PATH entries by basename); flox manifest options.cuda-detection (default true)",
} as const;

/**
 * The three routes, as their own sources say they work. No copy of their logic lives here: the environment variants
 * carry numtide's nix-gl-host (pkgs/nix-gl-host.nix; pkgs/torch-env.nix passthru `nixglhost`), and flox does its own detection.
 */
export const DRIVER_ROUTES: DriverRoute[] = [
  {
    id: "nixos",
    command: "PROGRAM (nothing to add)",
    needs: ["NixOS with hardware.nvidia (or hardware.graphics) enabled: it links the driver into /run/opengl-driver/lib"],
    source: NIXOS_DRIVER_LIB.source,
  },
  {
    id: "nixglhost",
    command: "nixglhost PROGRAM",
    needs: [
      `a directory of ${NIXGLHOST.searchList} that holds one of nix-gl-host's NVIDIA DSO patterns (libnvidia-*, libnvcuvid, …) besides libcuda.so*: a directory with libcuda alone is passed over`,
      "nixglhost itself: numtide's nix-gl-host (every CUDA environment variant carries it: nix-build FILE -A nixglhost; pkgs/nix-gl-host.nix)",
    ],
    source: NIXGLHOST.source,
  },
  {
    id: "flox",
    command: "flox activate -- PROGRAM (in an environment that installs the variant; dev mode, flox's default)",
    needs: [
      "an NVIDIA device node: /dev/nvidia* (or /dev/dxg under WSL)",
      "the host's ldconfig cache lists lib(cuda|nv|dxcore)*.so* (ldconfig --print-cache -C /etc/ld.so.cache; NixOS: /run/opengl-driver)",
      "options.cuda-detection not set to false in the environment's manifest (it is on by default)",
      "dev or build mode: `flox activate -m run` sets no LD_AUDIT, so nothing serves libcuda",
    ],
    source: FLOX_CUDA.source,
  },
];
