/**
 * Which builders can take which variants (pure): a derivation with `requiredSystemFeatures` is built only by a
 * machine of its system that declares every one of them (Nix manual, "Remote Builds": the machines file's
 * supported-features column; nix.conf `system-features` for the local machine, whose default declares no
 * `gccarch-*`). Every variant requires its ISA's `gccarch-<arch>` (catalog/cpu-isas.ts), so before hours of
 * building, `build` says which builder takes each group of variants and which group none can take.
 */

/**
 * The system feature pkgs/checks.nix's gpuCheck requires besides the variant's `gccarch-…` ones: nixpkgs' convention for
 * GPU tests (torch's passthru.gpuCheck), which NixOS's `programs.nix-required-mounts.presets.nvidia-gpu` declares
 * together with `nvidia-gpu`, `gpu` and `opengl` (NixOS/nixpkgs#518786's description; the module,
 * nixos/modules/programs/nix-required-mounts.nix, sets nix.settings.system-features to the preset's onFeatures and
 * mounts the driver for derivations that require one of them). tests/build-plan.test.ts holds it equal to checks.nix.
 */
export const GPU_CHECK_FEATURE = "cuda";

/**
 * How to declare GPU_CHECK_FEATURE: on NixOS through nix-required-mounts (which also mounts the driver into the
 * sandbox), elsewhere in nix.conf only where the build sandbox reaches the GPU. NixOS/nixpkgs#380601 (2025-02) reported
 * that the module's system-features replaced NixOS's defaults (big-parallel, …); whether later nixpkgs merges them was
 * not read, so the advice says to check.
 */
export const GPU_CHECK_FEATURE_HOWTO =
  "on NixOS: programs.nix-required-mounts.enable = true; and programs.nix-required-mounts.presets.nvidia-gpu.enable = true; " +
  "(it declares nvidia-gpu, cuda, gpu and opengl and mounts the driver into the sandbox for them; then check that " +
  "`nix show-config` still lists big-parallel and the gccarch- features, which NixOS/nixpkgs#380601 saw it replace); " +
  "elsewhere add cuda to system-features only on a machine whose build sandbox reaches the GPU";

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

/**
 * How many of `names` are variants and how many their checks (a check's name is `check-KIND-VARIANT`,
 * driver/targets.ts checkTargets): "2 variant(s)", or "2 variant(s), 2 check(s)".
 */
export function variantsAndChecks(names: readonly string[]): string {
  const checks = names.filter((n) => n.startsWith("check-")).length;
  return `${names.length - checks} variant(s)${checks ? `, ${checks} check(s)` : ""}`;
}
