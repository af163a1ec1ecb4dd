/**
 * The packages built on torch (DESIGN.md rule 8): one entry per package, read by every part of the generator that
 * handles packages (expand, naming, the Nix builders through pkgs/variants.nix, the plan's durations, CI exports,
 * detect, fleet, verify). Nothing outside this table names a package but the `pytorch` root and the environment
 * (`torch-env`, ENV_PACKAGE below), which holds every package of this table that the matrix keeps.
 *
 * An entry says:
 * - `name`: the package part of variant names (`torchvision-python313-…`) and the nixpkgs attribute in
 *   `pythonXYZPackages` (`attr`);
 * - `pinField`: which field of a nixpkgs pin (generator/catalog/torch.ts) records the version that revision carries;
 * - `releases`: the releases and the torch minors each serves (`servesTorch`: min inclusive, below exclusive or null);
 *   a pin's version is matched by exact version or by series ("0.27" matches 0.27.1);
 * - `archList`: how its CUDA code gets the capabilities, per era of its nixpkgs file (where `TORCH_CUDA_ARCH_LIST`
 *   is set and from what), which pkgs/variant-attrs.nix follows (it writes the variable where the package keeps it);
 * - `deviceCode`: the directory of its libraries with device code (generator/verify/origins.ts attributes code there
 *   to this package, whose promise is exactly the variant's capabilities, no PTX: torch.utils.cpp_extension
 *   `_get_cuda_arch_flags` turns `TORCH_CUDA_ARCH_LIST` "9.0" into `-gencode arch=compute_90,code=sm_90` and adds PTX
 *   only for a `+PTX` entry);
 * - `gpuChecks`: the GPU smoke tests generator/verify/probe.py runs for it (keys of the probe's output);
 * - `buildSeconds`: the duration estimate the plan, fleet and `build --dry-run` use without recorded builds;
 * - `inEnv`: whether the environment variant (`torch-env-…`) holds it.
 *
 * Adding a package built on torch: one entry here, its pin field on the pins (torch.ts), its nixpkgs file in the
 * stand-in (tests/fixtures/stand-in-nixpkgs), and its probe keys in probe.py when it has GPU checks.
 */
// constants.ts, the schema and the catalog read this file, so it imports none of them (only versions.ts, which
// imports nothing).
import { compareVersions } from "../versions.ts";

/** The name of the environment variant's package part: `torch-env-python313-cuda12_8-sm121-armv9`. */
export const ENV_PACKAGE = "torch-env";
/** The root package: torch itself. */
export const TORCH_PACKAGE = "pytorch";

/** One release of a package built on torch and the torch minors it serves. */
export interface OnTorchRelease {
  /** A full version ("2.11.0") or a series ("0.27", matching 0.27.0, 0.27.1). */
  version: string;
  /** Torch versions served, MAJOR.MINOR: `min` inclusive, `below` exclusive (null: no upper bound). */
  servesTorch: { min: string; below: string | null };
  /** Built against PyTorch's stable C ABI rather than one torch minor's C++ ABI. */
  stableAbi: boolean;
  /**
   * Packages on torch that nixpkgs' file of this release lists in `dependencies` (torchaudio 2.11.0: torchcodec), as
   * read in that file; `pin check` compares it with the evaluated propagatedBuildInputs.
   */
  nixpkgsDependencies?: string[];
  source: string;
}

/** How one era of the package's nixpkgs file hands the CUDA capabilities to its build. */
export interface ArchListEra {
  /** First version of the package whose nixpkgs file does it this way (MAJOR.MINOR). */
  from: string;
  /** Where the file sets `TORCH_CUDA_ARCH_LIST`: in `env`, as a top-level attribute, or not at all. */
  placement: "env" | "topLevel" | "none";
  /** The Nix expression, as written in the file. */
  expr: string;
  source: string;
}

/** One package built on torch. */
export interface PackageOnTorch {
  name: string;
  /** Attribute in nixpkgs' `pythonXYZPackages`. */
  attr: string;
  /** Name used in prose ("torchvision"). */
  label: string;
  /** Field of a nixpkgs pin (NixpkgsPin) that records this package's version at that revision. */
  pinField: "torchaudio" | "torchvision" | "torchcodec";
  releases: OnTorchRelease[];
  archList: ArchListEra[];
  deviceCode: { directory: string; source: string };
  /** Keys of the probe's per-package `gpu` results that must hold on a GPU (generator/verify/probe.py). */
  gpuChecks: { key: string; label: string }[];
  /** Build duration estimate without recorded builds, seconds, with where it comes from. */
  buildSeconds: { seconds: number; source: string };
  inEnv: boolean;
  source: string;
}

const VISION = "pytorch/vision";
const VISION_PAIRING =
  `${VISION} README 'Installation' compatibility table (torch ↔ torchvision: each torchvision minor is built for one ` +
  "torch minor, main/nightly ↔ main/nightly)";

const AUDIO = "pytorch/audio";

export const packagesOnTorch: PackageOnTorch[] = [
  {
    name: "torchaudio",
    attr: "torchaudio",
    label: "torchaudio",
    pinField: "torchaudio",
    // Up to 2.10 a torchaudio release is built against the C++ ABI of its own torch minor only; 2.11 moved to
    // PyTorch's stable ABI and declares `torch>=2.11`, and is the last release (torch 2.12 and later pair with it).
    // nixpkgs' file: `dependencies = [ torch ]` for 2.9.1 and 2.10.0 (005ab72; 2.8.0 taken to be the same, its file
    // was not found stored), `[ torch torchcodec ]` for 2.11.0 (NixOS/nixpkgs#502810); the stand-in mirrors them.
    releases: [
      {
        version: "2.8.0",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.8", below: "2.9" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.8 with torch 2.8; built against torch's C++ ABI)`,
      },
      {
        version: "2.9.1",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.9", below: "2.10" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.9 with torch 2.9)`,
      },
      {
        version: "2.10.0",
        nixpkgsDependencies: [],
        servesTorch: { min: "2.10", below: "2.11" },
        stableAbi: false,
        source: `${AUDIO} README version table (torchaudio 2.10 with torch 2.10); NixOS/nixpkgs#502810 bumps both together`,
      },
      {
        version: "2.11.0",
        nixpkgsDependencies: ["torchcodec"],
        servesTorch: { min: "2.11", below: null },
        stableAbi: true,
        source:
          `${AUDIO}#4212 ('clarify torchaudio 2.11 supports torch>=2.11'), ${AUDIO}#4225 ('set torch dep to ` +
          `torch>=2.11'), ${AUDIO}#4142 ('[STABLE ABI] Verify that torchaudio is torch ABI stable'); ` +
          "PyTorchKR/pytorch.kr#102 (2.11.0 is the last torchaudio release); the nixos-unstable pin 2c423e0 pairs " +
          "torch 2.12.0 with torchaudio 2.11.0 (generator/catalog/torch.ts)",
      },
    ],
    archList: [
      {
        from: "2.8",
        placement: "env",
        expr: 'env.TORCH_CUDA_ARCH_LIST = lib.concatStringsSep ";" torch.cudaCapabilities',
        source:
          "nixpkgs pkgs/development/python-modules/torchaudio/default.nix at 005ab72 (2.10.0) and NixOS/nixpkgs#502810 " +
          "(2.11.0); the stand-in's torchaudio-2.9/2.10/2.11.nix",
      },
    ],
    deviceCode: { directory: "torchaudio/lib", source: "torchaudio's libtorchaudio.so (PyPI wheel, cuobjdump on the H100: tests/fixtures/probes)" },
    gpuChecks: [
      { key: "rnntLoss", label: "torchaudio.functional.rnnt_loss on CUDA" },
      { key: "forcedAlign", label: "torchaudio.functional.forced_align on CUDA" },
    ],
    buildSeconds: {
      seconds: 30 * 60,
      source:
        "the README 'TorchAudio Architecture-Specific Builds' (Flox/Nix torchaudio variants, ../shared/seeds): " +
        "\"Build times vary (20-40 minutes typical for TorchAudio)\"; midpoint",
    },
    inEnv: true,
    source: "pytorch/audio README version table; pytorch/audio#4212, #4225 (2.11 serves torch>=2.11)",
  },
  {
    name: "torchvision",
    attr: "torchvision",
    label: "torchvision",
    pinField: "torchvision",
    releases: [
      { version: "0.23", servesTorch: { min: "2.8", below: "2.9" }, stableAbi: false, source: `${VISION_PAIRING}: 0.23 ↔ 2.8` },
      { version: "0.24", servesTorch: { min: "2.9", below: "2.10" }, stableAbi: false, source: `${VISION_PAIRING}: 0.24 ↔ 2.9` },
      { version: "0.25", servesTorch: { min: "2.10", below: "2.11" }, stableAbi: false, source: `${VISION_PAIRING}: 0.25 ↔ 2.10` },
      {
        version: "0.26",
        servesTorch: { min: "2.11", below: "2.12" },
        stableAbi: false,
        source: `${VISION_PAIRING}: 0.26 ↔ 2.11; NixOS/nixpkgs#502810 bumps torch 2.11 and torchvision 0.26 together`,
      },
      { version: "0.27", servesTorch: { min: "2.12", below: "2.13" }, stableAbi: false, source: `${VISION_PAIRING}: 0.27 ↔ 2.12` },
      {
        version: "0.28",
        servesTorch: { min: "2.13", below: "2.14" },
        stableAbi: false,
        source: `${VISION_PAIRING}: 0.28 ↔ 2.13 ("torchvision 0.28.0+cpu requires torch==2.13.0", a stored pip resolution)`,
      },
    ],
    archList: [
      {
        from: "0.20",
        placement: "env",
        expr: 'env = lib.optionalAttrs cudaSupport { TORCH_CUDA_ARCH_LIST = "${lib.concatStringsSep ";" cudaCapabilities}"; }',
        source:
          "nixpkgs pkgs/development/python-modules/torchvision/default.nix (0.26.0 and 0.27.1 stored copies): " +
          "`inherit (torch) cudaCapabilities cudaPackages cudaSupport;`, TORCH_CUDA_ARCH_LIST in env when cudaSupport",
      },
    ],
    deviceCode: {
      directory: "torchvision",
      source: "pytorch/vision setup.py: the `torchvision._C` extension holds the CUDA ops (nms, roi_align, deform_conv2d, …)",
    },
    gpuChecks: [
      { key: "nms", label: "torchvision.ops.nms on CUDA" },
      { key: "roiAlign", label: "torchvision.ops.roi_align on CUDA" },
    ],
    buildSeconds: {
      seconds: 30 * 60,
      source:
        "estimate, not a measurement: no recorded torchvision build time was found (nixpkgs PRs, Hydra: CUDA packages " +
        "are not built there); its _C extension is, like torchaudio's, one cpp_extension of C++/CUDA ops built against " +
        "a finished torch, so torchaudio's 20-40 minutes (midpoint) is taken",
    },
    inEnv: true,
    source: VISION_PAIRING,
  },
];

/** Names of every package variant kind, in build order: torch, the packages on torch, the environment. */
export const PACKAGE_NAMES: readonly string[] = [TORCH_PACKAGE, ...packagesOnTorch.map((p) => p.name), ENV_PACKAGE];

/** The table entry of a package on torch, or undefined for `pytorch`, the environment or an unknown name. */
export function onTorch(name: string): PackageOnTorch | undefined {
  return packagesOnTorch.find((p) => p.name === name);
}

/** Whether a release serves PyTorch `torchVersion` ("2.12.0"): its minor is within `servesTorch`. */
export function releaseServes(r: Pick<OnTorchRelease, "servesTorch">, torchVersion: string): boolean {
  const v = torchVersion.split(".").slice(0, 2).join(".");
  return compareVersions(v, r.servesTorch.min) >= 0 && (r.servesTorch.below === null || compareVersions(v, r.servesTorch.below) < 0);
}

/** The release of `pkg` that a version ("0.27.1") belongs to: exact, else its series ("0.27"); undefined if none. */
export function releaseOf(pkg: PackageOnTorch, version: string): OnTorchRelease | undefined {
  return pkg.releases.find((r) => r.version === version) ?? pkg.releases.find((r) => version.startsWith(`${r.version}.`));
}

/** The `archList` era of a package version (the last era whose `from` ≤ its minor), or undefined. */
export function archListEra(pkg: PackageOnTorch, version: string): ArchListEra | undefined {
  const m = version.split(".").slice(0, 2).join(".");
  return [...pkg.archList].reverse().find((e) => compareVersions(m, e.from) >= 0);
}
