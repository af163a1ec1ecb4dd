/**
 * Credentials in URLs, kept out of what this CLI stores or prints for others to read (report.json, log headers,
 * status lines): `--substituter https://user:TOKEN@host`, `--copy-to https://TOKEN@host`. The command still runs
 * with the real URL; only the record of it is redacted.
 */

/** What stands in for a removed secret. */
const REDACTED = "REDACTED";

// scheme://userinfo@ : userinfo holds no "/", whitespace or quote, and runs to the LAST "@" before those (a password
// with an unescaped "@" is still removed whole); a scheme starts with a letter. Quotes and whitespace end it, so that
// a URL inside JSON or a quoted log line is matched on its own.
const USERINFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/\s"'`]*)@/g;

/**
 * `text` with the credentials of every URL in it replaced: the password of `user:password@` (the user stays, it names
 * the account), and a lone `TOKEN@` of an http(s) URL (tokens are passed as the user name there). The user of other
 * schemes stays (`ssh://nix@builder`: a login name, which the log needs to say where a build went).
 * @param text any text (a command line, a log line, a JSON string value)
 * @returns the text, unchanged when it holds no such URL
 */
export function redactCredentials(text: string): string {
  if (!text.includes("@")) return text;
  return text.replace(USERINFO, (all, scheme: string, info: string) => {
    const colon = info.indexOf(":");
    if (colon >= 0) return `${scheme}${info.slice(0, colon)}:${REDACTED}@`;
    if (info !== "" && /^https?:\/\/$/i.test(scheme)) return `${scheme}${REDACTED}@`;
    return all;
  });
}

/**
 * A deep copy of JSON-like data with every string passed through redactCredentials (keys too).
 * @param value plain objects, arrays, strings, numbers, booleans, null
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactCredentials(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactCredentials(k), redactDeep(v)])) as T;
  return value;
}
