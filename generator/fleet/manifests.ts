/**
 * `fleet --write-manifest DIR --org ORG` (pure): one flox manifest per group of hosts that install the same variant,
 * each installing that variant from the Flox catalog it was published to (`publish --org ORG`). One environment per
 * variant, never two variants in one: a host whose GPUs need two variants gets two environments (two torches in one
 * environment would collide).
 *
 * The manifest is flox's `version = 1` format, as the project's own (catalog/machines.ts FLOX_MIN_VERSION): `[install]
 * NAME.pkg-path = "ORG/NAME"` (what `flox install ORG/NAME` writes for a package published by an organisation; flox
 * docs "Publishing") and `[options] systems` = the variant's system (a published package exists for the system it was
 * published from).
 */
import { stringify as tomlStringify } from "smol-toml";
import { checkFloxOrg } from "../driver/publish.ts";
import { commentText } from "../nix-literals.ts";

/**
 * The manifests: file name (`NAME.toml`) → text. Values go through smol-toml only; the host names and the
 * organisation in the comment through commentText (a host's file name may hold a newline).
 * @param assignment which host runs which variant (fleet's cover)
 * @param org the Flox organisation (FLOX_ORG_RE)
 * @throws InputError for an organisation name checkFloxOrg refuses
 */
export function hostGroupManifests(
  assignment: readonly { element: { hostId: string }; variant: { name: string; system: string } }[],
  org: string,
): Map<string, string> {
  checkFloxOrg(org);
  const byVariant = new Map<string, { system: string; hosts: Set<string> }>();
  for (const a of assignment) {
    const g = byVariant.get(a.variant.name) ?? { system: a.variant.system, hosts: new Set<string>() };
    g.hosts.add(a.element.hostId);
    byVariant.set(a.variant.name, g);
  }
  const out = new Map<string, string>();
  for (const [name, g] of [...byVariant].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const body = tomlStringify({ version: 1, install: { [name]: { "pkg-path": `${org}/${name}` } }, options: { systems: [g.system] } });
    out.set(
      `${name}.toml`,
      `# written by variant-matrix fleet --write-manifest: the environment of host(s) ${commentText([...g.hosts].sort().join(", "))}\n` +
        `# (flox init there, put this in .flox/env/manifest.toml, flox activate; the variant was published with publish --org ${commentText(org)})\n${body}\n`,
    );
  }
  return out;
}
