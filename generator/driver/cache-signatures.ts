/**
 * Signatures in a binary cache, judged as Nix judges them before it substitutes a path (`require-sigs`), and the
 * signing key publish signs with.
 *
 * What Nix does (Nix 2.8 src/libstore/build/substitution-goal.cc, path-info.cc, crypto.cc; measured here with Nix
 * 2.8.0): a substituter's path is used only when the substituter is trusted (`?trusted=1` in its URL), the path is
 * content-addressed (a `CA` field), `require-sigs` is false, or one of its `Sig:` lines verifies with a key of
 * `trusted-public-keys`; otherwise Nix warns "does not have a valid signature" and tries the next substituter, then
 * builds. Its dry run (`nix-store --realise --dry-run`) does not look at signatures: it lists such a path as "will be
 * fetched". A signature is Ed25519 over the fingerprint `1;STOREPATH;NARHASH;NARSIZE;REF,REF…` (NARHASH as
 * `sha256:` and Nix's base-32, the references as full store paths, in the order Nix stores them: sorted); a key is
 * `name:base64`, the public key 32 bytes, the secret key 64 (the seed, then the public key), as `nix key
 * generate-secret` and `nix key convert-secret-to-public` write them.
 *
 * A cache is read with `nix path-info --json --store URL PATHS…` (nix-command): Nix itself reads the narinfo of any
 * store it can open (file://, http(s):// with the user's netrc, s3://, ssh://), and a path the store lacks is
 * `"valid": false`. Child processes go through generator/process.ts.
 */
import { createPublicKey, verify } from "node:crypto";
import { readFileSync } from "node:fs";
import { InputError } from "../errors.ts";
import { runTool } from "../process.ts";
import { redactCredentials } from "../redact.ts";

/** `[name, value]` pairs passed to a Nix command as `--option name value` (store.ts NixOptions). */
type Options = readonly (readonly [string, string])[];

/** What a cache says of one store path (`nix path-info --json`): what its signatures are checked against. */
export interface CachedPath {
  path: string;
  /** `sha256:` and Nix's base-32 (the fingerprint's form), converted from the SRI hash path-info prints. */
  narHash: string;
  narSize: number;
  /** Full store paths. */
  references: string[];
  /** The derivation that built it (full path), when the cache records one. */
  deriver: string | null;
  /** `name:base64` signatures. */
  signatures: string[];
  /** The content address (`fixed:…`, `text:…`), when the path has one. */
  ca: string | null;
}

const BASE32 = "0123456789abcdfghijklmnpqrsvwxyz";

/** Nix's base-32 of `bytes` (src/libutil/hash.cc printHash32: the last 5-bit group first, no padding). */
export function nixBase32(bytes: Uint8Array): string {
  const len = Math.ceil((bytes.length * 8) / 5);
  let s = "";
  for (let n = len - 1; n >= 0; n--) {
    const b = n * 5;
    const i = Math.floor(b / 8);
    const j = b % 8;
    const c = (bytes[i]! >> j) | (i + 1 < bytes.length ? bytes[i + 1]! << (8 - j) : 0);
    s += BASE32[c & 0x1f];
  }
  return s;
}

/**
 * A NAR hash in the fingerprint's form, `sha256:` and base-32, from either form Nix prints: `sha256:<52 base-32>`
 * (narinfo) or SRI `sha256-<base64>` (`nix path-info --json` of Nix 2.4 and later).
 * @throws Error for another form or algorithm
 */
export function narHashBase32(h: string): string {
  if (/^sha256:[0-9a-df-np-sv-z]{52}$/.test(h)) return h;
  const m = /^sha256-([A-Za-z0-9+/]{43}=)$/.exec(h);
  if (m) return `sha256:${nixBase32(Buffer.from(m[1]!, "base64"))}`;
  throw new Error(`not a sha256 NAR hash: ${JSON.stringify(h.slice(0, 80))}`);
}

/** The text Nix signs for a store path (ValidPathInfo::fingerprint): `1;PATH;NARHASH;NARSIZE;REF,…`. */
export function fingerprint(p: Pick<CachedPath, "path" | "narHash" | "narSize" | "references">): string {
  return `1;${p.path};${narHashBase32(p.narHash)};${p.narSize};${p.references.join(",")}`;
}

/**
 * The public keys of `keys` (`name:base64` of 32 bytes, as nix.conf `trusted-public-keys` lists them) by name;
 * malformed entries are left out (Nix refuses them where it reads them).
 */
export function publicKeys(keys: readonly string[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const k of keys) {
    const m = /^([^\s:]+):([A-Za-z0-9+/]{43}=)$/.exec(k.trim());
    if (m) out.set(m[1]!, Buffer.from(m[2]!, "base64"));
  }
  return out;
}

/** Whether `signature` (`name:base64` of 64 bytes) verifies `text` with the Ed25519 public key `key` (32 bytes). */
function verifies(text: string, signature: string, key: Buffer): boolean {
  const raw = Buffer.from(signature.slice(signature.indexOf(":") + 1), "base64");
  if (raw.length !== 64 || key.length !== 32) return false;
  const pub = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.toString("base64url") }, format: "jwk" });
  return verify(null, Buffer.from(text), pub, raw);
}

/** How a path's signatures stand against a set of keys. */
export interface SignatureVerdict {
  /** Names of the keys whose signature verifies. */
  valid: string[];
  /** Names of signatures by a key of the set that do not verify (a changed narinfo, another path's signature). */
  broken: string[];
  /** Names of signatures by keys outside the set. */
  others: string[];
}

/** Check each signature of `p` against `keys` (name → public key): Ed25519 over Nix's fingerprint. */
export function checkSignatures(p: CachedPath, keys: ReadonlyMap<string, Buffer>): SignatureVerdict {
  const v: SignatureVerdict = { valid: [], broken: [], others: [] };
  let text: string | null;
  try {
    text = fingerprint(p);
  } catch {
    text = null;
  }
  for (const sig of p.signatures) {
    const name = sig.slice(0, Math.max(0, sig.indexOf(":")));
    const key = keys.get(name);
    if (!key) v.others.push(name);
    else if (text !== null && verifies(text, sig, key)) v.valid.push(name);
    else v.broken.push(name);
  }
  return v;
}

/** Why a path would not be substituted from a cache, in words (null: Nix takes it from there). */
export function untrustedWhy(p: CachedPath, keys: ReadonlyMap<string, Buffer>): string | null {
  if (p.ca) return null;
  const v = checkSignatures(p, keys);
  if (v.valid.length) return null;
  if (v.broken.length) return `its signature by ${v.broken.join(", ")} does not verify`;
  if (v.others.length) return `signed by ${v.others.join(", ")} only, a key this host does not trust`;
  return "unsigned";
}

/** The query parameters of a store URL (`file:///srv/cache?trusted=1&secret-key=/k`), by name. */
export function storeUrlParams(url: string): URLSearchParams {
  const q = url.indexOf("?");
  return new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
}

/** A store URL without its query parameters and trailing slashes: what names the same cache. */
export function storeUrlBase(url: string): string {
  const q = url.indexOf("?");
  return (q < 0 ? url : url.slice(0, q)).replace(/\/+$/, "");
}

/**
 * `url` without its parameter `name` (every one of that name), the others kept as written (not re-encoded: the URL
 * Nix gets is the user's).
 */
export function withoutStoreUrlParam(url: string, name: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const rest = url.slice(q + 1).split("&").filter((kv) => kv !== "" && kv.split("=")[0] !== name);
  return url.slice(0, q) + (rest.length ? `?${rest.join("&")}` : "");
}

/** `url` with the parameter `name=value` (replacing any of that name), written as given: a file path stays readable. */
export function withStoreUrlParam(url: string, name: string, value: string): string {
  const base = withoutStoreUrlParam(url, name);
  return `${base}${base.includes("?") ? "&" : "?"}${name}=${value}`;
}

/** Whether a substituter URL says `trusted=…` true, as Nix reads a boolean setting ("true", "yes" or "1"). */
export function trustedStoreUrl(url: string): boolean {
  return ["true", "yes", "1"].includes(storeUrlParams(url).get("trusted") ?? "");
}

/** The signing key publish uses: its file and the names it gives, never its contents. */
export interface SigningKey {
  /** The secret key file (absolute). */
  file: string;
  /** The key's name (what `Sig:` lines start with). */
  name: string;
  /** Its public key, `name:base64`, derived from the secret key (its last 32 bytes). */
  publicKey: string;
  /** Where it was named: "--secret-key-file", "the store URL's secret-key=", or "matrix.ts caches". */
  from: string;
}

/**
 * Read a secret key file (`nix key generate-secret --key-name NAME`, or `nix-store --generate-binary-cache-key`):
 * `name:base64` of 64 bytes (Nix's Ed25519 secret key: the seed, then the public key).
 * @throws InputError (exit 2) naming the file when it cannot be read or has another form (the key never shows)
 */
export function readSigningKey(file: string, from: string): SigningKey {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (e) {
    throw new InputError(`${from} ${file}: cannot read the secret key (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const m = /^([^\s:]+):([A-Za-z0-9+/]+={0,2})$/.exec(text);
  const raw = m ? Buffer.from(m[2]!, "base64") : null;
  if (!m || raw!.length !== 64)
    throw new InputError(`${from} ${file}: not a Nix secret key (expected name:base64 of 64 bytes, as \`nix key generate-secret --key-name NAME\` writes it)`);
  return { file, name: m[1]!, publicKey: `${m[1]}:${raw!.subarray(32).toString("base64")}`, from };
}

/** Store paths per `nix path-info` call (the argument list stays far below the system's limit). */
const PATHS_PER_QUERY = 500;

/**
 * What the store at `url` holds of `paths`: `nix path-info --json --store URL PATHS…`, in batches. A path the store
 * lacks maps to null.
 * @param opts.fresh read every narinfo again (narinfo-cache TTLs 0), not Nix's cached answer (publish's check after
 *   writing); without it Nix answers as its substitution would (its narinfo disk cache for http(s) caches)
 * @returns the map, or `{ error }` with Nix's message (credentials redacted) when a call failed or timed out
 */
export async function queryCache(
  url: string,
  paths: readonly string[],
  nixOptions: Options = [],
  opts: { fresh?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Map<string, CachedPath | null> | { error: string }> {
  const out = new Map<string, CachedPath | null>();
  const fresh: Options = opts.fresh ? [["narinfo-cache-positive-ttl", "0"], ["narinfo-cache-negative-ttl", "0"]] : [];
  const args = [...nixOptions, ...fresh].flatMap(([k, v]) => ["--option", k, v]);
  for (let i = 0; i < paths.length; i += PATHS_PER_QUERY) {
    const batch = paths.slice(i, i + PATHS_PER_QUERY);
    const r = await runTool(["nix", "--extra-experimental-features", "nix-command", "path-info", ...args, "--json", "--store", url, ...batch], {
      timeoutMs: opts.timeoutMs,
      env: opts.env,
    });
    if (r.stopped) return { error: redactCredentials(r.stopped) };
    let rows: Record<string, unknown>[];
    try {
      if (r.code !== 0) throw new Error();
      rows = JSON.parse(r.stdout) as Record<string, unknown>[];
    } catch {
      const line = r.stderr.split("\n").find((l) => l.startsWith("error:")) ?? r.stderr.trim().split("\n").at(-1) ?? `exit ${r.code}`;
      return { error: redactCredentials(`nix path-info --store ${url}: ${line.trim()}`) };
    }
    for (const row of rows) out.set(String(row.path), row.valid === false ? null : cachedPath(row));
  }
  return out;
}

/** One row of `nix path-info --json` (a valid path) as a CachedPath. */
function cachedPath(row: Record<string, unknown>): CachedPath {
  return {
    path: String(row.path),
    narHash: narHashBase32(String(row.narHash)),
    narSize: Number(row.narSize),
    references: (row.references as string[] | undefined) ?? [],
    deriver: typeof row.deriver === "string" ? row.deriver : null,
    signatures: (row.signatures as string[] | undefined) ?? [],
    ca: typeof row.ca === "string" ? row.ca : null,
  };
}

/** How this host's Nix judges signatures: `require-sigs` and `trusted-public-keys` (`nix show-config`). */
export interface SignaturePolicy {
  requireSigs: boolean;
  /** `name:base64` keys. */
  trustedKeys: string[];
}

/**
 * This host's signature policy under `nixOptions`: `nix show-config`'s `require-sigs` (default true) and
 * `trusted-public-keys` (extra- settings merged in), plus `extraKeys` (the team caches' keys, which this run passes
 * to Nix). When Nix cannot be asked: require-sigs (Nix's default) with `extraKeys` only.
 */
export async function signaturePolicy(nixOptions: Options, extraKeys: readonly string[], timeoutMs?: number): Promise<SignaturePolicy> {
  const r = await runTool(["nix", "--extra-experimental-features", "nix-command", "show-config", ...nixOptions.flatMap(([k, v]) => ["--option", k, v])], { timeoutMs });
  const conf = new Map<string, string>();
  if (r.code === 0)
    for (const line of r.stdout.split("\n")) {
      const i = line.indexOf(" = ");
      if (i > 0) conf.set(line.slice(0, i).trim(), line.slice(i + 3).trim());
    }
  const keys = (conf.get("trusted-public-keys") ?? "").split(/\s+/).filter(Boolean);
  return { requireSigs: conf.get("require-sigs") !== "false", trustedKeys: [...new Set([...keys, ...extraKeys])] };
}

/** A path Nix lists as to fetch that no team cache holding it may give (Nix would build it). */
export interface UntrustedFetch {
  path: string;
  /** The team cache(s) holding it (redacted), in words with why: "unsigned in file:///srv/cache". */
  where: string;
  /** Its deriver (full .drv path) when a cache records one: what Nix builds instead. */
  deriver: string | null;
}

/**
 * Of `toFetch` (paths Nix's dry run would fetch), those held by one of `caches` (matrix.ts `caches`, as substituters of
 * this run) but acceptable from none of the team caches holding them, under `policy` (see the module comment):
 * Nix would build each of these. A path no team cache holds is left to Nix's answer (another substituter of the
 * host), and so is a cache Nix cannot read here (its paths are not judged). A path a team cache holds unsigned
 * that another substituter of the host holds signed counts here as to build: Nix would fetch it from that one.
 */
export async function untrustedFetches(
  toFetch: readonly string[],
  caches: readonly { url: string; publicKey: string }[],
  nixOptions: Options,
  policy: () => Promise<SignaturePolicy>,
  deadline?: number,
): Promise<UntrustedFetch[]> {
  if (toFetch.length === 0 || caches.length === 0) return [];
  const timeoutMs = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
  const held = new Map<string, { url: string; info: CachedPath }[]>();
  for (const c of caches) {
    const r = await queryCache(c.url, toFetch, nixOptions, { timeoutMs });
    if ("error" in r) continue;
    for (const [p, info] of r) if (info) held.set(p, [...(held.get(p) ?? []), { url: c.url, info }]);
  }
  if (held.size === 0) return [];
  const pol = await policy();
  if (!pol.requireSigs) return [];
  const keys = publicKeys(pol.trustedKeys);
  const out: UntrustedFetch[] = [];
  for (const [path, from] of held) {
    const whys = from.map((f) => (trustedStoreUrl(f.url) ? null : untrustedWhy(f.info, keys)));
    if (whys.some((w) => w === null)) continue;
    out.push({
      path,
      where: from.map((f, i) => `${whys[i]} in ${redactCredentials(storeUrlBase(f.url))}`).join("; "),
      deriver: from.find((f) => f.info.deriver)?.info.deriver ?? null,
    });
  }
  return out;
}
