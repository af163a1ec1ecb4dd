/**
 * Constants shared by the schema and the command-line definitions, kept apart from zod so that `--help` and the
 * command definitions load nothing heavy.
 */

/** A Nix system double, e.g. `aarch64-linux`. */
export const SYSTEMS = ["x86_64-linux", "aarch64-linux"] as const;
export type System = (typeof SYSTEMS)[number];

/** The two packages the generator writes per kept combination. */
export const PACKAGES = ["pytorch", "torchaudio"] as const;
export type PackageName = (typeof PACKAGES)[number];
