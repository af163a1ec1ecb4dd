/**
 * Which builders can take which variants (pure): a derivation with `requiredSystemFeatures` is built only by a
 * machine of its system that declares every one of them (Nix manual, "Remote Builds": the machines file's
 * supported-features column; nix.conf `system-features` for the local machine, whose default declares no
 * `gccarch-*`). Every variant requires its ISA's `gccarch-<arch>` (catalog/cpu-isas.ts), so before hours of
 * building, `build` says which builder takes each group of variants and which group none can take.
 */

/** A builder as Nix sees it: "local" or a machines-file URI, its systems and the features it declares. */
interface BuilderFeatures {
  name: string;
  systems: string[];
  features: string[];
}

/** One group of variants with the same system and required features, and the builders that can take it. */
export interface FeatureNeed {
  system: string;
  features: string[];
  variants: string[];
  /** Names of the builders that declare every feature (empty: Nix will refuse these builds). */
  takenBy: string[];
}

/**
 * Parse a Nix machines specification (`--builders` value or a machines file's text): one machine per line or per
 * `;`, fields URI, systems (comma-separated), SSH key, max jobs, speed factor, supported features (comma-separated),
 * mandatory features, public host key; `-` for a default. Comments (`#`) and empty lines are skipped.
 */
export function parseMachines(spec: string): BuilderFeatures[] {
  return spec
    .split(/[\n;]/)
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter(Boolean)
    .map((l) => {
      const f = l.split(/\s+/);
      const list = (x: string | undefined) => (x && x !== "-" ? x.split(",").filter(Boolean) : []);
      return { name: f[0]!, systems: list(f[1]), features: [...list(f[5]), ...list(f[6])] };
    });
}

/**
 * Group `targets` by system and required features, and say for each group which builders declare all of them.
 * @param local this machine (its system and nix.conf `system-features`), or null when it builds nothing (--max-jobs 0)
 */
export function featureNeeds(
  targets: readonly { name: string; system: string; requiredSystemFeatures?: readonly string[] }[],
  local: BuilderFeatures | null,
  remote: readonly BuilderFeatures[],
): FeatureNeed[] {
  const groups = new Map<string, FeatureNeed>();
  for (const t of targets) {
    const features = [...new Set(t.requiredSystemFeatures ?? [])].sort();
    const key = `${t.system}|${features.join(" ")}`;
    const g = groups.get(key) ?? { system: t.system, features, variants: [], takenBy: [] };
    g.variants.push(t.name);
    groups.set(key, g);
  }
  const builders = [...(local ? [local] : []), ...remote];
  for (const g of groups.values())
    g.takenBy = builders.filter((b) => b.systems.includes(g.system) && g.features.every((f) => b.features.includes(f))).map((b) => b.name);
  return [...groups.values()];
}

/**
 * The nix.conf line that makes this machine declare the gccarch features its CPU really runs (`features` from
 * /proc/cpuinfo through compat.ts isaFit), added to Nix's defaults with `extra-`.
 */
export function systemFeaturesLine(gccarchFeatures: readonly string[]): string {
  return `extra-system-features = ${[...new Set(gccarchFeatures)].join(" ")}`;
}
