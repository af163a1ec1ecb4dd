/**
 * One source per fact, said: with a recorded host (`--cpuinfo`/`--nvidia-smi` without `--host-root`), the checks of
 * doctor and install say whose fact each is. The GPU driver's comes from the recording (its nvidia-smi output and
 * driver), with the route that host takes; the checks only this machine can answer (Nix, the store, system features,
 * caches, flox) say "this machine".
 */
import type { HostInfo, ReadHostOptions } from "../host/read-host.ts";
import type { CheckResult } from "./checks.ts";
import { carriesNixglhost, driverRouteLines, nixglhostRouteNote, type CheckedVariant } from "../matrix/driver-route.ts";

/**
 * Judge `results` (doctor's or install's checks, run on this machine) for the recorded host: the GPU driver's check
 * replaced by the recording's verdict (its driver outside /run/opengl-driver/lib, as on every host but NixOS: reached
 * through nixglhost, ✓ with the route where the variant carries it, as install takes it, else ✗ with the routes; no
 * GPU: skipped), added for a CUDA variant when the checks had none; every other check's detail prefixed
 * "this machine: ". Changes `results` in place.
 * @param variant the variant checked (a CUDA one's GPU driver matters; its environment carries nixglhost)
 * @returns the recorded host, as detect reads it
 * @throws HostFileError for a recording that cannot be read
 */
export async function judgeRecordedHost(args: ReadHostOptions, results: CheckResult[], variant: CheckedVariant): Promise<HostInfo> {
  const cuda = variant.cuda !== null;
  const { readHost } = await import("../host/read-host.ts");
  const host = await readHost({ cpuinfo: args.cpuinfo, nvidiaSmi: args.nvidiaSmi, machine: args.machine, mem: args.mem });
  const i = results.findIndex((r) => r.id === "gpu-driver");
  const from = host.sources.nvidiaSmi;
  if (i >= 0 || cuda) {
    const base = i >= 0 ? results[i]! : { id: "gpu-driver", title: "GPU driver", blocking: false };
    const gpus = host.gpus;
    results.splice(i >= 0 ? i : results.length, i >= 0 ? 1 : 0, gpus.length
      ? {
          ...base,
          ...(carriesNixglhost(variant)
            ? { status: "ok" as const, fix: undefined, route: "nixglhost" as const }
            : { status: "fail" as const, fix: `run it through one of:\n${driverRouteLines(variant).join("\n")}`, route: "nixglhost" as const }),
          detail:
            `the recorded host (${from}): nvidia-smi sees ${gpus.length} GPU(s), driver ${gpus[0]!.driver}; a driver outside ` +
            `/run/opengl-driver/lib (every host but NixOS, whose driver the variant's CUDA libraries find directly) is ` +
            (carriesNixglhost(variant) ? nixglhostRouteNote(variant) : `reached through nixglhost, which no environment variant of this combination carries here (add "torch-env" to packages)`),
        }
      : { ...base, status: "skip", detail: `the recorded host has no NVIDIA GPU (${host.gpuAbsentReason ?? from})`, fix: undefined });
  }
  for (const r of results) if (r.id !== "gpu-driver" && !r.detail.startsWith("this machine")) r.detail = `this machine: ${r.detail}`;
  return host;
}
