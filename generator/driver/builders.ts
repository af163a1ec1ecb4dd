/**
 * Which builders the selected variants need (I/O: this machine's Nix, a machines file, /proc/cpuinfo): this machine
 * (unless --max-jobs 0) with the `system-features` its Nix declares, and the `--builders` machines, against each group
 * of variants' requiredSystemFeatures (generator/system-features.ts, pure). `build --dry-run` prints the groups; the refusal to start
 * without a declared feature is preflight/checks.ts's.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { featureNeeds, parseMachines, systemFeaturesLine, type FeatureNeed } from "../system-features.ts";
import { localSystemFeatures, type NixOptions } from "./store.ts";

/** The groups, this machine's declared features (null: Nix did not answer) and the nix.conf line of what this CPU runs. */
export interface BuilderNeeds {
  groups: FeatureNeed[];
  local: string[] | null;
  localBuilds: boolean;
  hostLine: string | null;
}

/**
 * What builders `targets` need. With the flox backend the local Nix is asked without --nix-option (flox builds with it).
 * @param o.builders the --builders value: a machines spec, or @FILE
 * @param o.hostRoot the root this machine's /proc/cpuinfo is read under (default "/"; tests: a modelled host)
 */
export async function builderNeeds(
  targets: readonly { name: string; system: string; requiredSystemFeatures?: readonly string[] }[],
  o: { host: string; builders?: string; maxJobs?: number; nixOptions: NixOptions; backend: string; hostRoot?: string },
): Promise<BuilderNeeds> {
  const local = await localSystemFeatures(o.backend === "nix" ? o.nixOptions : []);
  const localBuilds = o.maxJobs !== 0;
  let remote: ReturnType<typeof parseMachines> = [];
  if (o.builders) {
    const spec = o.builders.startsWith("@") ? (() => { try { return readFileSync(o.builders!.slice(1), "utf8"); } catch { return ""; } })() : o.builders;
    remote = parseMachines(spec);
  }
  const groups = featureNeeds(targets, localBuilds && local !== null ? { name: "this machine", systems: [o.host], features: local } : null, remote);
  let hostLine: string | null = null;
  try {
    const [{ parseCpuinfo }, { isaFit }, { catalog }, { gccarchFeature }] = await Promise.all([
      import("../host/read-host.ts"),
      import("../matrix/compat.ts"),
      import("../catalog/index.ts"),
      import("../catalog/lib/machines.ts"),
    ]);
    const cpu = parseCpuinfo(await readFile(join(o.hostRoot ?? "/", "proc/cpuinfo"), "utf8"));
    const runnable = isaFit({ system: o.host as never, cpu }, catalog).runnable;
    if (runnable.length) hostLine = systemFeaturesLine(runnable.map(gccarchFeature));
  } catch {
    hostLine = null;
  }
  return { groups, local, localBuilds, hostLine };
}
