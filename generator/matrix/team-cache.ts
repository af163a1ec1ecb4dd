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
export const CACHE_URL_FORM =
  `a store URL such as https://cache.example.org, file:///srv/nix-cache or s3://bucket (schemes: ${CACHE_URL_SCHEMES.join(", ")}; ` +
  "no whitespace, no '#', no control characters; a file:// path as it is on disk, without percent-escapes)";
/** The allowed form of a public key, as errors say it. */
export const CACHE_KEY_FORM =
  "name:base64 as `nix-store --generate-binary-cache-key NAME SECRET PUBLIC` writes it to PUBLIC, e.g. cache.example.org-1:<44 base64 characters> " +
  "(the name of letters, digits and . _ - + @ ~; the key 32 bytes)";

// Control characters (C0, DEL, C1), Unicode's invisible and direction-changing ones (zero-width, line/paragraph
// separators, bidi embeddings, overrides and isolates, BOM): none belongs in a nix.conf line or a generated file.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
// ASCII characters RFC 3986 never allows raw in a URL (a URL writes them percent-escaped).
const NOT_IN_URL = /["<>\\^`{|}]/;

/**
 * What stops `text` from being one word of a nix.conf line (Nix's nix.conf: settings' values are split at whitespace
 * and a `#` starts a comment anywhere on the line, so `https://c.example/#x` or a key name with `#` cuts the line and
 * drops every cache after it); null when nothing does.
 */
function confWordProblem(text: string): string | null {
  if (CONTROL.test(text)) return "it holds a control character";
  if (/\s/.test(text)) return "it holds whitespace, which separates the words of a nix.conf value";
  if (text.includes("#")) return "it holds '#', which starts a comment in nix.conf and cuts the line there";
  return null;
}

/**
 * Why `url` is not a store URL Nix takes as a substituter and nix.conf can hold (null when it is): a known scheme and
 * something after it, one word of a nix.conf line (confWordProblem), no character RFC 3986 writes escaped, a file://
 * path without percent-escapes (Nix reads a file:// path as written: `%20` stays three characters, not a space).
 */
export function cacheUrlProblem(url: string): string | null {
  const word = confWordProblem(url);
  if (word) return word;
  if (NOT_IN_URL.test(url)) return `it holds ${JSON.stringify(NOT_IN_URL.exec(url)![0])}, which a URL writes percent-escaped`;
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.+)$/.exec(url);
  if (!m || !(CACHE_URL_SCHEMES as readonly string[]).includes(m[1]!)) return "it is not SCHEME://… of a store Nix substitutes from";
  if (m[1] === "file" && m[2]!.split("?")[0]!.includes("%"))
    return "Nix reads a file:// path as written, without decoding percent-escapes (%20 stays %20): name the directory as it is on disk";
  try {
    new URL(url);
    return null;
  } catch {
    return "it does not parse as a URL";
  }
}

/**
 * Why `uri` (publish's --to: any store URI `nix copy --to` takes, `file://`, `s3://`, `ssh://`, a path, `daemon`)
 * cannot be used as given (null when it can): a control character, whitespace or `#` (what cacheUrlProblem refuses in
 * every URL), or a file:// path with percent-escapes, which Nix would read literally.
 */
export function storeUriProblem(uri: string): string | null {
  const word = confWordProblem(uri);
  if (word) return word;
  const m = /^file:\/\/([^?]*)/.exec(uri);
  if (m && m[1]!.includes("%")) return "Nix reads a file:// path as written, without decoding percent-escapes (%20 stays %20): name the directory as it is on disk";
  return null;
}

/**
 * Why `key` is not `name:base64` of a 32-byte Ed25519 public key that nix.conf can hold (null when it is): the name of
 * letters, digits and `. _ - + @ ~`, the key 44 base64 characters.
 */
export function publicKeyProblem(key: string): string | null {
  const word = confWordProblem(key);
  if (word) return word;
  const m = /^([^:]*):(.*)$/.exec(key);
  if (!m || m[1] === "") return "it is not NAME:KEY";
  if (!/^[A-Za-z0-9._+@~-]+$/.test(m[1]!)) return `its name ${JSON.stringify(m[1])} holds a character other than letters, digits and . _ - + @ ~`;
  if (!/^[A-Za-z0-9+/]{43}=$/.test(m[2]!) || Buffer.from(m[2]!, "base64").length !== 32) return "its key is not 44 base64 characters of 32 bytes";
  return null;
}

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

/** Whether `url` is a store URL Nix takes as a substituter and nix.conf can hold (cacheUrlProblem finds nothing). */
export function isCacheUrl(url: string): boolean {
  return cacheUrlProblem(url) === null;
}

/** Whether `key` is `name:base64` of a 32-byte Ed25519 public key that nix.conf can hold (publicKeyProblem finds nothing). */
export function isPublicKey(key: string): boolean {
  return publicKeyProblem(key) === null;
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
