/**
 * Naming an unknown value well (pure): the allowed values in their natural order (numbers as numbers: 75 before
 * 100) and the closest ones by edit distance (fastest-levenshtein), for every "unknown value" message of the CLI
 * (explain, --filter); and for a name that is no variant, the nearest variant names (`nearestNames`: explain, eval,
 * build).
 */
import { distance } from "fastest-levenshtein";
import type { System } from "../constants.ts";
import { clip, MAX_SHOWN } from "../errors.ts";
import { compareVersions, isDottedVersion } from "../versions.ts";
import { parseName, type NameParts } from "./naming.ts";

/**
 * Compare two values as numbers when both are dotted numbers ("75" < "100", "3.9" < "3.13" by parts, versions.ts
 * compareVersions; of two equal by it, the one with fewer parts first: "3" < "3.0"), else as text.
 */
export function compareValues(a: string, b: string): number {
  if (isDottedVersion(a) && isDottedVersion(b)) return compareVersions(a, b) || a.split(".").length - b.split(".").length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `values` without repeats, in natural order (compareValues). */
function sortValues(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareValues);
}

/**
 * The values of `allowed` closest to `value` by edit distance (Levenshtein), at most `max`, nearest first (ties in
 * natural order); only those within half the longer string's length, so "avx3" suggests "avx2" but "hello" nothing.
 */
export function closestValues(value: string, allowed: Iterable<string>, max = 3): string[] {
  const scored = sortValues(allowed)
    .map((v) => ({ v, d: distance(value.toLowerCase(), v.toLowerCase()) }))
    .filter((x) => x.d > 0 && x.d <= Math.max(1, Math.floor(Math.max(value.length, x.v.length) / 2)));
  const num = (x: string) => (/^\d+(\.\d+)?$/.test(x) ? Number(x) : NaN);
  // Ties: the numerically nearer first (95 → 90 before 75), else natural order.
  const gap = (x: string) => Math.abs(num(x) - num(value));
  const best = scored.sort((a, b) => a.d - b.d || (Number.isNaN(gap(a.v) - gap(b.v)) ? 0 : gap(a.v) - gap(b.v)) || compareValues(a.v, b.v));
  return best.slice(0, max).map((x) => x.v);
}

/**
 * "allowed values: 75, 80, …; closest: 90, 75" — the tail of an unknown-value message.
 * @param what the kind of value for the message, e.g. "SMs"
 */
export function allowedAndClosest(value: string, allowed: Iterable<string>, what = "values"): string {
  const all = sortValues(allowed);
  const near = closestValues(value, all);
  return `${what} here: ${all.join(", ")}${near.length ? `; closest: ${near.join(", ")}` : ""}`;
}

export { clip };

/**
 * A value the user wrote, for a message: as JSON (strings quoted), cut with `clip`. Never throws: a value that cannot
 * be written as JSON (a cycle, a Proxy whose traps throw, a BigInt) is shown by its type.
 */
export function shown(value: unknown, max = MAX_SHOWN): string {
  let text: string | undefined;
  try {
    text = typeof value === "bigint" ? `${value}n` : JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    try {
      text = `(${value === null ? "null" : typeof value})`;
    } catch {
      text = "(a value)";
    }
  }
  return clip(text, max);
}

/**
 * The message of an object that has keys its schema does not know: each unknown key (at most 5 shown, with how many
 * more), the allowed keys, and for each shown key the closest allowed ones (closestValues), e.g.
 * `unknown key "gpu"; allowed keys: releases, python, cuda, gpus, …; closest to "gpu": gpus`.
 */
export function unknownKeysMessage(keys: readonly PropertyKey[], allowed: readonly string[]): string {
  const names = keys.map((k) => (typeof k === "symbol" ? k.toString() : String(k)));
  const head = names.slice(0, 5);
  const more = names.length > head.length ? ` and ${names.length - head.length} more` : "";
  const near = head
    .map((k) => [k, closestValues(k, allowed)] as const)
    .filter(([, c]) => c.length)
    .map(([k, c]) => `closest to ${shown(k)}: ${c.join(", ")}`);
  return (
    `unknown key${names.length > 1 ? "s" : ""} ${head.map((k) => shown(k)).join(", ")}${more}; allowed keys: ${allowed.join(", ")}` +
    (near.length ? `; ${near.join("; ")}` : "")
  );
}

/** A name that exists, with why it is suggested ("same GPU on CUDA 12.9"). */
export interface Suggestion {
  name: string;
  why: string;
}

/** True when two parsed names differ at most in their release tag (same package, Python, CUDA, SM and ISA). */
export const sameExceptTag = (a: NameParts, b: NameParts): boolean =>
  a.package === b.package && a.python === b.python && a.cuda === b.cuda && a.sm === b.sm && a.isa === b.isa;

/** What nearestNames reads of a variant (a Variant, or a build target): Pick<Variant, "name" | "torchVersion" | "system">. */
export interface NearestCandidate {
  name: string;
  torchVersion: string;
  system: System;
}

/**
 * The one nearest-name search (explain, eval, build).
 * Nearest existing names to `name`: a name that differs only in its release tag first, then the same GPU on
 * another CUDA version, the same CUDA and GPU on another ISA, the same hardware on another release, then by
 * edit distance (only names at least half as long as `name`). At most `max`.
 */
export function nearestNames(name: string, variants: readonly NearestCandidate[], max = 5): Suggestion[] {
  const want = parseName(name);
  const out: Suggestion[] = [];
  const add = (v: NearestCandidate, why: string) => {
    if (v.name !== name && !out.some((s) => s.name === v.name)) out.push({ name: v.name, why });
  };
  if (want) {
    const parsed = variants.map((v) => [v, parseName(v.name)!] as const);
    for (const [v, p] of parsed)
      if (sameExceptTag(p, want))
        add(v, want.tag === "" ? `this matrix's name for it (PyTorch ${v.torchVersion})` : `same combination on PyTorch ${v.torchVersion}`);
    for (const [v, p] of parsed)
      if (p.package === want.package && p.sm === want.sm && p.isa === want.isa && p.python === want.python && p.cuda !== want.cuda && p.tag === want.tag)
        add(v, p.cuda ? `same GPU and ISA on CUDA ${p.cuda}` : "CPU-only build for the same ISA");
    for (const [v, p] of parsed)
      if (p.package === want.package && p.sm === want.sm && p.cuda === want.cuda && p.python === want.python && p.isa !== want.isa && p.tag === want.tag)
        add(v, `same GPU and CUDA on ISA ${p.isa} (${v.system})`);
    for (const [v, p] of parsed)
      if (p.package === want.package && p.sm === want.sm && p.isa === want.isa && p.tag !== want.tag)
        add(v, `same hardware on PyTorch ${v.torchVersion}${p.cuda ? `, CUDA ${p.cuda}` : ""}`);
    for (const [v, p] of parsed)
      if (p.package === want.package && p.sm === want.sm && p.isa === want.isa && p.python !== want.python)
        add(v, `same hardware on Python ${p.python}`);
  }
  // One distance per variant, not one per comparison of the sort. A name more than twice as long as a variant's is
  // no misspelling of it (their edit distance is more than half the longer length, closestValues' bound): not
  // measured, so a 100 kB name costs no edit distances (each would take milliseconds).
  const byDistance = variants
    .filter((v) => name.length <= 2 * v.name.length)
    .map((v) => ({ v, d: distance(v.name, name) }))
    .sort((a, b) => a.d - b.d || (a.v.name < b.v.name ? -1 : 1));
  for (const { v } of byDistance.slice(0, max)) add(v, "similar name");
  return out.slice(0, max);
}
