/**
 * The team's own binary caches, as `matrix.ts` names them (`caches: [{ url, publicKey }]`): the zod schema with errors
 * that name the field and the allowed form, and the Nix settings that use them. A team that builds the matrix once
 * (`publish`, CI's `nix copy`) names its cache here; `generate` writes it into the flake's `nixConfig` and
 * BUILD_MATRIX.md's nix.conf block, `doctor` and `install` check that the host's Nix uses it (preflight/checks.ts
 * "team-cache"), `build`/`install` pass it to Nix for their runs and ask Nix what it holds (driver/ask-nix.ts), and
 * `publish` copies to the first one unless `--to` says otherwise.
 *
 * The zod schema of `caches` is schema.ts cachesSchema (this module loads no zod: preflight reads it at start-up).
 *
 * The public NixOS-CUDA and Flox caches are catalog facts (catalog/binary-cache.ts), not matrix entries.
 *
 * Forms (Nix manual, "nix.conf": `substituters` takes store URLs; `trusted-public-keys` takes `name:base64-key`
 * entries, the output of `nix-store --generate-binary-cache-key NAME SECRET PUBLIC`, whose key is an Ed25519 public
 * key: 32 bytes, 44 base64 characters).
 */
import { redactCredentials } from "../redact.ts";

/** Store URL schemes Nix can substitute from (Nix manual, "Store Types": binary caches over HTTP(S), files, S3, SSH). */
export const CACHE_URL_SCHEMES = ["https", "http", "file", "s3", "ssh", "ssh-ng"] as const;

/** The allowed form of a cache URL, as errors say it. */
export const CACHE_URL_FORM = `a store URL such as https://cache.example.org, file:///srv/nix-cache or s3://bucket (schemes: ${CACHE_URL_SCHEMES.join(", ")}; no spaces)`;
/** The allowed form of a public key, as errors say it. */
export const CACHE_KEY_FORM = "name:base64 as `nix-store --generate-binary-cache-key NAME SECRET PUBLIC` writes it to PUBLIC, e.g. cache.example.org-1:<44 base64 characters>";

/** One cache of the team, as matrix.ts gives it. */
export interface TeamCache {
  /** The substituter URL (nix.conf `substituters`). */
  url: string;
  /** Its signing key, `name:base64` (nix.conf `trusted-public-keys`). */
  publicKey: string;
  /**
   * The path of the secret key `publish` signs with (relative to matrix.ts's directory), for the machines that publish;
   * only the path is in matrix.ts, and no generated file carries it (driver/publish.ts signingKeyFor).
   */
  secretKeyFile?: string;
}

/** Whether `url` is a store URL Nix takes as a substituter: a known scheme, something after it, no whitespace. */
export function isCacheUrl(url: string): boolean {
  if (/\s/.test(url)) return false;
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.+)$/.exec(url);
  if (!m || !(CACHE_URL_SCHEMES as readonly string[]).includes(m[1]!)) return false;
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/** Whether `key` is `name:base64` of a 32-byte Ed25519 public key (what Nix's trusted-public-keys holds). */
export function isPublicKey(key: string): boolean {
  const m = /^([^\s:]+):([A-Za-z0-9+/]{43}=)$/.exec(key);
  return m !== null && Buffer.from(m[2]!, "base64").length === 32;
}

/** A URL as Nix compares substituters: without trailing slashes. */
export function cacheUrlKey(url: string): string {
  return url.replace(/\/+$/, "");
}

/**
 * The nix.conf lines that add `caches`: `extra-substituters = URL …` and `extra-trusted-public-keys = KEY …`, whole
 * lines (never cut: a setting cut inside its value is an invalid nix.conf line). [] for no caches.
 */
export function cacheConfLines(caches: readonly TeamCache[]): string[] {
  if (caches.length === 0) return [];
  return [`extra-substituters = ${caches.map((c) => c.url).join(" ")}`, `extra-trusted-public-keys = ${caches.map((c) => c.publicKey).join(" ")}`];
}

/**
 * `--option` pairs that add `caches` to one Nix command's substituters and keys (`extra-` settings add to nix.conf's
 * and to earlier `--option substituters`). With a Nix daemon, a trusted user's substituters are used, and another user's
 * only where the daemon's `trusted-substituters` lists the URL (Nix manual, `trusted-substituters`: "Unprivileged users
 * … can pass as `substituters` only those URLs listed in `trusted-substituters`"); others get Nix's "ignoring untrusted
 * substituter" warning and the host's own list.
 */
export function cacheNixOptions(caches: readonly TeamCache[]): (readonly [string, string])[] {
  if (caches.length === 0) return [];
  return [
    ["extra-substituters", caches.map((c) => c.url).join(" ")],
    ["extra-trusted-public-keys", caches.map((c) => c.publicKey).join(" ")],
  ];
}

/**
 * Which of `caches` a Nix configuration lacks (`substituters` and `trusted-public-keys` as `nix show-config` prints
 * them, extra- settings merged in): the nix.conf lines that add what is missing, whole lines, and in words.
 * URLs are redacted (redact.ts): what is printed never carries a cache's credentials.
 * @returns no lines when every cache and key is there
 */
export function missingTeamCaches(caches: readonly TeamCache[], substituters: readonly string[], keys: readonly string[]): { lines: string[]; what: string; count: number } {
  const subs = new Set(substituters.map(cacheUrlKey));
  const noUrl = caches.filter((c) => !subs.has(cacheUrlKey(c.url)));
  const noKey = caches.filter((c) => !keys.includes(c.publicKey));
  const lines = [
    ...(noUrl.length ? [`extra-substituters = ${noUrl.map((c) => c.url).join(" ")}`] : []),
    ...(noKey.length ? [`extra-trusted-public-keys = ${noKey.map((c) => c.publicKey).join(" ")}`] : []),
  ];
  const missing = caches.filter((c) => noUrl.includes(c) || noKey.includes(c));
  const what = missing.map((c) => `${noUrl.includes(c) ? "the substituter" : "the key"} ${noUrl.includes(c) ? c.url : c.publicKey.split(":")[0]}`).join(" and ");
  return { lines: lines.map(redactCredentials), what: `${redactCredentials(what)} ${missing.length === 1 ? "is" : "are"}`, count: missing.length };
}
