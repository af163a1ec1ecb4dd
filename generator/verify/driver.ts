/**
 * Why a variant's torch sees no GPU that nvidia-smi sees (pure): nixpkgs' CUDA libraries load libcuda.so.1 from
 * /run/opengl-driver/lib (the runpath Nix gave them, nixpkgs' addDriverRunpath; catalog/machines.ts NIXOS_DRIVER_LIB),
 * which only NixOS creates, or from a directory of LD_LIBRARY_PATH (searched before the runpath: the route
 * nix-gl-host takes), never through the host's /etc/ld.so.cache, while the host keeps it in its own library
 * directory (`ldconfig -p`). verify prints these lines under the
 * GPU checks, with the ways to run again through the host's GPU driver (catalog/machines.ts DRIVER_ROUTES).
 */
import { machines } from "../catalog/index.ts";
import { driverRouteLines, type CheckedVariant } from "../preflight/checks.ts";

/** What the cause is decided from. */
interface DriverFacts {
  /** The variant's CUDA version, null for a CPU variant. */
  cuda: string | null;
  /** torch.cuda.is_available() in the probe. */
  torchSeesGpu: boolean;
  /** GPUs nvidia-smi lists on this host. */
  hostGpus: number;
  /** The host's libcuda.so.1 paths (`ldconfig -p`). */
  hostLibcuda: readonly string[];
  /** /run/opengl-driver/lib/libcuda.so.1 exists (NixOS). */
  nixosDriver: boolean;
  /** The probe already ran through a route (--host-driver). */
  throughRoute: string | null;
}

/** The finding for the GPU check and the lines that explain it, or null when the GPU driver is not the cause. */
interface DriverCause {
  found: string;
  lines: string[];
}

/**
 * The cause when torch sees no GPU while nvidia-smi does; null otherwise (a CPU variant, torch sees one, or no GPU).
 * @param v the variant (name, file, environment file) for the commands to run again
 * @param rerun how verify was called, to repeat with --host-driver
 */
export function driverCause(f: DriverFacts, v: Pick<CheckedVariant, "name" | "file" | "envFile">, rerun: string): DriverCause | null {
  if (f.cuda === null || f.torchSeesGpu || f.hostGpus === 0) return null;
  const lib = `${machines.nixosDriverLib.dir}/libcuda.so.1`;
  if (f.throughRoute)
    return {
      found: `torch sees no CUDA device though nvidia-smi lists ${f.hostGpus} GPU(s), even through ${f.throughRoute}`,
      lines: [
        `the probe ran through ${f.throughRoute}, which found ${f.hostLibcuda.length ? f.hostLibcuda.join(", ") : "no libcuda.so.1 (ldconfig -p lists none)"}: ` +
          "check that the driver loads (nvidia-smi) and matches the variant's CUDA (detect)",
      ],
    };
  if (f.nixosDriver) return null;
  const where = f.hostLibcuda.length
    ? `the host has it at ${f.hostLibcuda.join(", ")} (ldconfig -p), where Nix's glibc does not look.`
    : "`ldconfig -p` lists no libcuda.so.1 either: check the driver's installation (nvidia-smi runs, so its libraries may sit outside the ldconfig cache).";
  return {
    found: `torch sees no CUDA device though nvidia-smi lists ${f.hostGpus} GPU(s): libcuda.so.1 is not on the runpath Nix gave torch (${machines.nixosDriverLib.dir})`,
    lines: [
      `Nix's CUDA libraries load libcuda.so.1 from ${machines.nixosDriverLib.dir}, which only NixOS creates (${lib} is missing here), or from a directory of LD_LIBRARY_PATH, never through the host's ld.so.cache; ${where}`,
      `run again through the host's driver: \`${rerun} --host-driver\` (nixglhost on PATH, or PATH of it), or run the environment itself through one of:`,
      ...driverRouteLines(v).map((l) => `- ${l}`),
    ],
  };
}
