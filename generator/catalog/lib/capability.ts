/**
 * The binary-compatibility rule of compute capabilities, alone in a module with no imports so that every layer can
 * use it (generator/matrix/compat.ts exports it with the other "runs on" rules; generator/catalog/lib/cuda-build.ts, which the Nix
 * checks' bundle holds, takes it from here).
 *
 * Source: CUDA C++ Programming Guide, "Binary Compatibility": a cubin for X.y runs on X.z, z ≥ y, never across a
 * major.
 */

/**
 * True when a cubin compiled for compute capability `code` ("12.0") runs on a device of capability `device`
 * ("12.1"): same major, minor ≤ the device's.
 */
export function capabilityRunsOn(code: string, device: string): boolean {
  const [cm, cn] = code.split(".").map(Number);
  const [dm, dn] = device.split(".").map(Number);
  return cm === dm && cn! <= dn!;
}
