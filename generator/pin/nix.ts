/**
 * Reading a nixpkgs revision with the user's own Nix (I/O: child processes, files): its Nix version requirement,
 * fetching a revision's tarball with its hash, and evaluating pkgs/inspect-pin.nix over it.
 *
 * Facts relied on:
 * - nixpkgs' root default.nix aborts on a Nix older than `lib/minver.nix` ("This version of Nixpkgs requires Nix >=
 *   …, please upgrade"); nixpkgs from NixOS/nixpkgs#428076 (August 2025) on asks for 2.18 (before it, from #354586,
 *   2.3.17), which Debian's nix-bin (2.8) is not.
 * - `nix-prefetch-url --unpack --print-path URL` prints the sha256 (Nix base32) of the NAR of the unpacked tarball,
 *   the very hash `builtins.fetchTarball { sha256 }` checks, and the store path it unpacked to.
 * - `nix hash to-sri --type sha256 HASH` (nix-command) writes that hash as SRI ("sha256-…"), as flake.lock does.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { InputError } from "../errors.ts";
import { REPO_ROOT } from "../paths.ts";
import { runTool } from "../process.ts";
import { compareVersions } from "../versions.ts";
import { nixString } from "../nix-literals.ts";
import { PinFactsSchema, type PinFacts } from "./facts.ts";

/** The inspection expression (hand-written Nix; see its header). */
const INSPECT_NIX = join(REPO_ROOT, "pkgs", "inspect-pin.nix");
/** The expression of `pin cache`'s sample derivations (hand-written Nix; see its header). */
const CACHE_SAMPLES_NIX = join(REPO_ROOT, "pkgs", "cache-samples.nix");

/** A nixpkgs that cannot be read here (too old a Nix, a fetch that failed, an evaluation error): exit 2. */
export class PinError extends InputError {
  override name = "PinError";
}

/** nixVersion's answers by the PATH they were read under: one `nix-instantiate --version` a process, not one a pin. */
const versionsByPath = new Map<string, string>();

/**
 * The version of the Nix on PATH (`nix-instantiate --version`: "nix-instantiate (Nix) 2.8.0" → "2.8.0"), read once per
 * value of $PATH in this process (`pin check` and `pin cache` read every pin with the same Nix).
 * @throws PinError when nix-instantiate cannot be run
 */
async function nixVersion(): Promise<string> {
  const path = process.env.PATH ?? "";
  const known = versionsByPath.get(path);
  if (known !== undefined) return known;
  const r = await runTool(["nix-instantiate", "--version"]).catch(() => null);
  const m = r?.stdout.match(/(\d+\.\d+(?:\.\d+)?)/);
  if (!r || r.code !== 0 || !m) throw new PinError("cannot run nix-instantiate: install Nix (nix-instantiate on PATH) to read a nixpkgs");
  versionsByPath.set(path, m[1]!);
  return m[1]!;
}

/**
 * The Nix version a nixpkgs checkout asks for: the string in its `lib/minver.nix` ("2.18"), or null when it has
 * none (the stand-in, or very old nixpkgs).
 */
function requiredNixVersion(nixpkgsPath: string): string | null {
  const f = join(nixpkgsPath, "lib", "minver.nix");
  if (!existsSync(f)) return null;
  const m = readFileSync(f, "utf8").match(/"(\d+(?:\.\d+)*)"/);
  return m ? m[1]! : null;
}

/**
 * Refuse, with a plain message, a nixpkgs whose lib/minver.nix asks for a newer Nix than `have`.
 * @throws PinError naming both versions and what to do
 */
function checkNixVersion(nixpkgsPath: string, have: string): void {
  const need = requiredNixVersion(nixpkgsPath);
  if (need !== null && compareVersions(have, need) < 0)
    throw new PinError(
      `this nixpkgs (${nixpkgsPath}) needs Nix >= ${need} (its lib/minver.nix), and the Nix on PATH is ${have} ` +
        `(nix-instantiate --version). nixpkgs of August 2025 and later cannot be evaluated by Nix ${have} (Debian's nix-bin); ` +
        `put a Nix >= ${need} first on PATH (the official installer, or \`nix profile install nixpkgs#nix\`) and run this again.`,
    );
}

/**
 * Refuse a nixpkgs whose `lib/minfeatures.nix` (nixpkgs since NixOS/nixpkgs#433057, August 2025: the root default.nix
 * aborts when a feature is missing) lists features this Nix lacks; it is evaluated by this very Nix.
 * @throws PinError listing the missing features (e.g. "`builtins.nixVersion` reports at least 2.18")
 */
export async function checkNixFeatures(nixpkgsPath: string, have: string): Promise<void> {
  const f = join(nixpkgsPath, "lib", "minfeatures.nix");
  if (!existsSync(f)) return;
  const r = await runTool(["nix-instantiate", "--eval", "--strict", "--json", "-E", `map (f: f.description) (import ${nixString(f)}).missing`]);
  const missing = r.code === 0 ? (JSON.parse(r.stdout) as string[]) : [`(evaluating lib/minfeatures.nix failed: ${lastLines(r.stderr, 1)})`];
  if (missing.length)
    throw new PinError(
      `this nixpkgs (${nixpkgsPath}) needs a Nix with features the Nix on PATH (${have}) lacks (its lib/minfeatures.nix): ` +
        `${missing.join("; ")}. Put a newer Nix first on PATH (the official installer, or \`nix profile install nixpkgs#nix\`) and run this again.`,
    );
}

/**
 * Fetch a tarball as `builtins.fetchTarball` would and hash it: `nix-prefetch-url --unpack --print-path URL`.
 * @returns the store path it unpacked to and its sha256 in SRI form ("sha256-…=")
 * @throws PinError with Nix's message when the fetch fails (offline, unknown revision)
 */
export async function prefetchTarball(url: string): Promise<{ path: string; sha256: string; base32: string }> {
  const r = await runTool(["nix-prefetch-url", "--unpack", "--print-path", url]);
  const [base32, path] = r.stdout.trim().split("\n");
  if (r.code !== 0 || !base32 || !path)
    throw new PinError(`cannot fetch ${url}: ${lastLines(r.stderr) || `nix-prefetch-url exited ${r.code}`}`);
  return { path, base32, sha256: await toSri(base32) };
}

/** Nix base32 sha256 → SRI, by the user's Nix (`nix hash to-sri`). @throws PinError when Nix refuses */
async function toSri(base32: string): Promise<string> {
  const r = await runTool(["nix", "--extra-experimental-features", "nix-command", "hash", "to-sri", "--type", "sha256", base32]);
  const out = r.stdout.trim();
  if (r.code !== 0 || !out.startsWith("sha256-")) throw new PinError(`nix hash to-sri ${base32} failed: ${lastLines(r.stderr)}`);
  return out;
}

/**
 * The revision of a nixpkgs checkout: its `.git-revision` file (channel tarballs), else `git rev-parse HEAD`.
 * @returns the 40-hex revision, or null when neither says
 */
export async function revisionOf(nixpkgsPath: string): Promise<string | null> {
  const f = join(nixpkgsPath, ".git-revision");
  if (existsSync(f)) {
    const rev = readFileSync(f, "utf8").trim();
    if (/^[0-9a-f]{40}$/.test(rev)) return rev;
  }
  const r = await runTool(["git", "-C", nixpkgsPath, "rev-parse", "HEAD"]).catch(() => null);
  const rev = r?.code === 0 ? r.stdout.trim() : "";
  return /^[0-9a-f]{40}$/.test(rev) ? rev : null;
}

/**
 * Evaluate pkgs/inspect-pin.nix over a nixpkgs checkout with the Nix on PATH.
 * @param nixpkgsPath a directory holding nixpkgs (its default.nix)
 * @param system the Nix system to evaluate for ("x86_64-linux"), or undefined for the current one
 * @param extras nixpkgs Python attribute names whose version to read in every Python set (environment extras)
 * @throws PinError when Nix is too old for it (lib/minver.nix) or the evaluation fails (Nix's message)
 */
export async function inspectNixpkgs(nixpkgsPath: string, system?: string, extras: readonly string[] = []): Promise<{ facts: PinFacts; nixVersion: string }> {
  const path = resolve(nixpkgsPath);
  if (!existsSync(join(path, "default.nix"))) throw new PinError(`${path} is not a nixpkgs checkout: it has no default.nix`);
  const have = await nixVersion();
  checkNixVersion(path, have);
  await checkNixFeatures(path, have);
  const args = ["nix-instantiate", "--eval", "--strict", "--json", INSPECT_NIX, "--argstr", "nixpkgs", path];
  if (system) args.push("--argstr", "system", system);
  // Attribute names (schema.ts NIX_ATTR_RE, checked by the caller) as a Nix list of strings.
  if (extras.length) args.push("--arg", "extras", `[ ${extras.map(nixString).join(" ")} ]`);
  const r = await runTool(args);
  if (r.code !== 0) throw new PinError(`evaluating ${path} with Nix ${have} failed:\n${lastLines(r.stderr, 8)}`);
  const parsed = PinFactsSchema.safeParse(JSON.parse(r.stdout));
  if (!parsed.success) throw new PinError(`pkgs/inspect-pin.nix printed an unexpected shape: ${parsed.error.message}`);
  return { facts: parsed.data, nixVersion: have };
}

function lastLines(s: string, n = 3): string {
  return s.trim().split("\n").filter((l) => l.trim()).slice(-n).join("\n");
}

/** One sample of `pin cache`: torch of a Python set with a CUDA set, and the drvPaths of its CUDA-built inputs. */
interface CacheSampleDrvs {
  python: string;
  cuda: string;
  /** torch's drvPath, null when it cannot be evaluated (marked broken with that CUDA set, absent). */
  torch: string | null;
  /** By pname (nccl, magma, libnvshmem, triton): the drvPath of torch's input, null when torch has none. */
  deps: Record<string, string | null>;
}

/**
 * Instantiate, in the nixpkgs at `nixpkgsPath` imported as the NixOS-CUDA Hydra imports it, torch and its CUDA-built
 * inputs for each (Python, CUDA) sample (pkgs/cache-samples.nix; the .drv files are written, for
 * `nix-store --realise --dry-run`).
 * @throws PinError when Nix is too old for it or the evaluation fails
 */
export async function cacheSampleDrvs(
  nixpkgsPath: string,
  samples: readonly { python: string; cuda: string }[],
  system?: string,
): Promise<CacheSampleDrvs[]> {
  const path = resolve(nixpkgsPath);
  const have = await nixVersion();
  checkNixVersion(path, have);
  const args = ["nix-instantiate", "--eval", "--strict", "--json", "--read-write-mode", CACHE_SAMPLES_NIX, "--argstr", "nixpkgs", path];
  args.push("--argstr", "samplesJson", JSON.stringify(samples));
  if (system) args.push("--argstr", "system", system);
  const r = await runTool(args);
  if (r.code !== 0) throw new PinError(`evaluating torch's inputs in ${path} with Nix ${have} failed:\n${lastLines(r.stderr, 8)}`);
  return JSON.parse(r.stdout) as CacheSampleDrvs[];
}
