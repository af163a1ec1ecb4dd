/**
 * `--filter KEY=VALUE` selection shared by `list` and `build`.
 *
 * Keys: package, python, cuda, sm, isa, system. Values are compared to the variant's field as written in
 * `list --json` ("3.13", "12.8", "121", "armv9", "aarch64-linux"); `cuda` also accepts "12_8", and
 * `cuda=none` / `sm=none` select CPU-only variants. Several filters on one key are alternatives (OR);
 * filters on different keys must all hold (AND).
 */
import { REPEATABLE } from "../constants.ts";
import { InputError } from "../errors.ts";
import { allowedAndClosest, clip, shown } from "./suggest.ts";

const FILTER_KEYS = ["package", "python", "cuda", "sm", "isa", "system"] as const;
type FilterKey = (typeof FILTER_KEYS)[number];

/** The `--filter` option of every command that selects variants (list, build, eval, ci github). */
export const FILTER_OPTION = {
  ...REPEATABLE,
  describe: `KEY=VALUE with KEY one of ${FILTER_KEYS.join(", ")}; repeat it: alternatives on one key, all keys must hold`,
} as const;

/** One parsed `KEY=VALUE`. */
interface Filter {
  key: FilterKey;
  value: string;
}

/** The fields a filter reads. */
export type Filterable = Record<FilterKey, string | null>;

/** Thrown for a malformed filter; the message names the allowed keys. */
export class FilterError extends InputError {}

/**
 * Parse `KEY=VALUE` strings.
 * @throws FilterError naming the bad filter and the allowed keys.
 */
export function parseFilters(specs: readonly string[] | undefined): Filter[] {
  return (specs ?? []).map((spec) => {
    const eq = spec.indexOf("=");
    const key = spec.slice(0, eq).trim();
    const value = spec.slice(eq + 1).trim();
    if (eq < 1 || value === "")
      throw new FilterError(`--filter ${shown(spec)}: expected KEY=VALUE with KEY one of ${FILTER_KEYS.join(", ")}`);
    if (!(FILTER_KEYS as readonly string[]).includes(key))
      throw new FilterError(`--filter ${shown(spec)}: unknown key ${shown(key)}; allowed keys: ${FILTER_KEYS.join(", ")}`);
    let v = value;
    if (key === "cuda") v = v.replace("_", ".");
    if (key === "sm") v = v.replace(/^sm_?/, "");
    if (key === "python") v = /^\d{3,}$/.test(v) ? `${v[0]}.${v.slice(1)}` : v.replace(/^python/, "");
    return { key: key as FilterKey, value: v };
  });
}

/** True when `item` passes every filter (OR within a key, AND across keys). */
export function matchFilters(item: Filterable, filters: readonly Filter[]): boolean {
  const byKey = new Map<FilterKey, string[]>();
  for (const f of filters) byKey.set(f.key, [...(byKey.get(f.key) ?? []), f.value]);
  for (const [key, values] of byKey) {
    const actual = item[key];
    const ok = values.some((v) => (v === "none" || v === "cpu" ? actual === null : actual === v));
    if (!ok) return false;
  }
  return true;
}

/**
 * Check that every filter value occurs in `items` (the variants of this matrix or build targets).
 * @throws FilterError naming the filter, the values that do occur for its key (numbers in numeric order) and the
 *   closest of them.
 */
export function checkFilterValues(filters: readonly Filter[], items: readonly Filterable[]): void {
  for (const f of filters) {
    const values = new Set(items.map((i) => i[f.key] ?? "none"));
    const v = f.value === "cpu" ? "none" : f.value;
    if (!values.has(v))
      throw new FilterError(
        `--filter ${f.key}=${clip(f.value)} matches no variant of this matrix; ${allowedAndClosest(v, values, `values of ${f.key}`)}`,
      );
  }
}

/**
 * `list`'s variants: those of `variants` that pass `specs` (`--filter KEY=VALUE`).
 * @throws FilterError for a malformed filter or a value that matches no variant of this matrix
 */
export function listedVariants<V extends Filterable>(variants: readonly V[], specs: readonly string[] | undefined): V[] {
  const filters = parseFilters(specs);
  checkFilterValues(filters, variants);
  return variants.filter((v) => matchFilters(v, filters));
}

/**
 * `list --excluded`'s dropped combinations: those of `excluded` that pass `specs`, each with its ISA's system (from
 * `isas`, the catalog's) as its system.
 * @throws FilterError for a malformed filter
 */
export function listedExcluded<E extends Omit<Filterable, "system"> & { isa: string }>(
  excluded: readonly E[],
  specs: readonly string[] | undefined,
  isas: readonly { key: string; system: string }[],
): E[] {
  const filters = parseFilters(specs);
  return excluded.filter((e) => matchFilters({ ...e, system: isas.find((i) => i.key === e.isa)!.system }, filters));
}
