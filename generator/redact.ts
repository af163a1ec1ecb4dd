/**
 * Credentials, kept out of what this CLI stores or prints for others to read (report.json, log headers, printed
 * plans, status and error lines). One function, redactCredentials, knows every kind:
 *
 * - a URL's user info: `--substituter https://user:TOKEN@host`, `--copy-to https://TOKEN@host`;
 * - a URL's query values: `https://cache.example/?token=…` (the values of Nix's own store URL settings that hold
 *   no secret, such as `priority` and `trusted`, stay: they say what the run did);
 * - Nix's `access-tokens` setting (Nix manual, nix.conf "access-tokens": a space-separated list of HOST=TOKEN), in
 *   whatever form it passes: `--nix-option access-tokens=…`, `--option access-tokens …` (a command line, also as
 *   JSON), or a nix.conf / NIX_CONFIG line `access-tokens = …`;
 * - netrc contents (the file `netrc-file` names; curl and Nix read `machine HOST login USER password SECRET`).
 *
 * The command still runs with the real values; only the record of it is redacted.
 */

/** What stands in for a removed secret. */
export const REDACTED = "REDACTED";

// scheme://userinfo@ : userinfo holds no "/", whitespace or quote, and runs to the LAST "@" before those (a password
// with an unescaped "@" is still removed whole); a scheme starts with a letter. Quotes and whitespace end it, so that
// a URL inside JSON or a quoted log line is matched on its own.
const USERINFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/\s"'`]*)@/g;

// A URL's query: scheme://…?QUERY, up to whitespace, a quote or a fragment.
const QUERY = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'`?#]*\?)([^\s"'`#]*)/g;

/**
 * Query parameters of Nix store URLs whose values are settings, not secrets (Nix manual, "Store Types": the HTTP
 * binary cache, S3 and SSH store settings): kept so that a report still says which cache and how it was used.
 */
const PLAIN_QUERY_KEYS = new Set([
  "priority", "trusted", "want-mass-query", "compression", "compression-level", "parallel-compression", "region",
  "endpoint", "scheme", "profile", "multipart-upload", "buffer-size", "narinfo-compression", "ls-compression",
  "log-compression", "write-nar-listing", "write-debug-info", "index-debug-info", "local-nar-cache",
  "path-info-cache-size", "remote-store", "remote-program", "max-connections", "compress", "root", "store", "state",
  "log", "real", "system-features",
]);

// access-tokens (or extra-access-tokens), then `=` / ` = ` (nix.conf, --nix-option), `","` (a JSON argv) or spaces
// and maybe a quote (a command line, shell-quoted), then one or more HOST=TOKEN words separated by spaces.
const ACCESS_TOKENS = /\b((?:extra-)?access-tokens)(\s*=\s*|"\s*,\s*"|\s+['"]?)((?:[^\s"'=]+=[^\s"']*)(?:[ \t]+[^\s"'=-][^\s"'=]*=[^\s"']*)*)/g;

// netrc: `password SECRET` after a `machine`/`default` entry's words (netrc(5)), on one line or across lines.
const NETRC_PASSWORD = /(\b(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+)(\S+)/g;

/** The query `q` (without "?") with every value but those of PLAIN_QUERY_KEYS redacted. */
function redactQuery(q: string): string {
  return q
    .split("&")
    .map((kv) => {
      const eq = kv.indexOf("=");
      if (eq < 0) return kv;
      const key = kv.slice(0, eq);
      return PLAIN_QUERY_KEYS.has(key.toLowerCase()) || kv.slice(eq + 1) === "" ? kv : `${key}=${REDACTED}`;
    })
    .join("&");
}

/** A URL's user info redacted: the password of `user:password@` (the user names the account), an http(s) lone `TOKEN@`. */
function redactUserInfo(text: string): string {
  if (!text.includes("@")) return text;
  return text.replace(USERINFO, (all, scheme: string, info: string) => {
    const colon = info.indexOf(":");
    if (colon >= 0) return `${scheme}${info.slice(0, colon)}:${REDACTED}@`;
    if (info !== "" && /^https?:\/\/$/i.test(scheme)) return `${scheme}${REDACTED}@`;
    return all;
  });
}

/**
 * `text` with every credential this file knows replaced by REDACTED (see the file header): URLs' passwords, http(s)
 * tokens in the user name and query values; `access-tokens` values (each HOST=TOKEN keeps its HOST); netrc
 * passwords. The user of other schemes stays (`ssh://nix@builder`: a login name, which the log needs to say where a
 * build went).
 * @param text any text (a command line, a log line, a JSON string value, a printed plan)
 * @returns the text, unchanged when it holds no credential
 */
export function redactCredentials(text: string): string {
  let out = redactUserInfo(text);
  if (out.includes("?")) out = out.replace(QUERY, (_all, head: string, q: string) => head + redactQuery(q));
  if (out.includes("access-tokens"))
    out = out.replace(ACCESS_TOKENS, (_all, name: string, sep: string, value: string) =>
      name + sep + value.replace(/([^\s=]+)=([^\s]*)/g, (_p, host: string) => `${host}=${REDACTED}`),
    );
  if (out.includes("password")) out = out.replace(NETRC_PASSWORD, (_all, head: string) => head + REDACTED);
  return out;
}

/**
 * A deep copy of JSON-like data with every string passed through redactCredentials (keys too). An array of
 * strings is also redacted joined by spaces, so that a secret split over two elements (`["--option",
 * "access-tokens", "github.com=…"]`, an argv) is found.
 * @param value plain objects, arrays, strings, numbers, booleans, null
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactCredentials(value) as T;
  if (Array.isArray(value)) return redactArray(value) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactCredentials(k), redactDeep(v)])) as T;
  return value;
}

/** An array redacted element by element, and a value following an `access-tokens` element redacted as its value. */
function redactArray(value: unknown[]): unknown[] {
  return value.map((v, i) => {
    const prev = value[i - 1];
    if (typeof v === "string" && typeof prev === "string" && /^(?:extra-)?access-tokens$/.test(prev))
      return redactCredentials(`access-tokens ${v}`).slice("access-tokens ".length);
    return redactDeep(v);
  });
}
