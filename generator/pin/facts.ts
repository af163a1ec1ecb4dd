/**
 * The facts of one nixpkgs revision as `pkgs/inspect-pin.nix` reads them by evaluation, their comparison with the
 * catalog (`pin check`), and a catalog pin entry made from them (`pin add`). Pure: no I/O.
 *
 * Every fact is `{ expr, value }`: the Nix expression it was read from and its value (null when absent or when it
 * failed to evaluate). What the catalog keeps per pin (generator/catalog/torch.ts `nixpkgs`), per CUDA version
 * (cuda.ts `nixpkgsDefaultCapabilities`), per bundled library (device-code.ts `linkedAt`) and per torchaudio release
 * (torch.ts `torchaudio[].nixpkgsDependsOnTorchcodec`) is compared with the matching fact.
 */
import "../zod-jitless.ts";
import * as z from "zod";
import { packageOnTorch, releaseOf } from "../catalog/lib/packages.ts";
import { nixpkgsCudaFacts } from "../catalog/lib/cuda.ts";
import type { Catalog, NixpkgsPin, OnTorchRelease, TorchRelease } from "../catalog/schema.ts";
import { compareVersions, majorMinor } from "../versions.ts";
import type { LocalPinEntry } from "../catalog/local.ts";

const fact = <T extends z.ZodTypeAny>(value: T) => z.object({ expr: z.string(), value: value.nullable() });
const str = fact(z.string());

/** What pkgs/inspect-pin.nix prints (nix-instantiate --eval --strict --json), validated. */
export const PinFactsSchema = z.object({
  pythonSets: z.array(
    z.object({
      set: z.string(),
      version: z.string(),
      torch: str,
      torchaudio: str,
      torchcodec: str,
      torchvision: str,
      // The CUDA extensions (catalog/packages.ts pin fields); older recorded facts lack them (not read).
      flashAttn: str.default({ expr: "(not read)", value: null }),
      xformers: str.default({ expr: "(not read)", value: null }),
      bitsandbytes: str.default({ expr: "(not read)", value: null }),
      vllm: str.default({ expr: "(not read)", value: null }),
      // Environment extras asked for (`pin inspect --extra ATTR`): version, null when the set lacks the attribute.
      extras: z.array(z.object({ attr: z.string(), expr: z.string(), value: z.string().nullable() })).default([]),
    }),
  ),
  defaultPython: str,
  defaultCuda: str,
  /** Versions of the pythonXYZPackages sets with recurseForDerivations (what nixpkgs' CI evaluation recurses into). */
  recursedPython: fact(z.array(z.string())),
  cudaSets: z.array(
    z.object({
      set: z.string(),
      version: z.string(),
      defaultCapabilities: fact(z.array(z.string())),
      torchBroken: fact(z.boolean()),
    }),
  ),
  torchFormals: fact(z.array(z.string())),
  builderArgsMissing: fact(z.array(z.string())),
  staticLinks: z.object({ nccl: fact(z.boolean()), magma: fact(z.boolean()), nvshmem: fact(z.boolean()) }),
  torchaudioDependencies: fact(z.array(z.string())),
});
/** The facts of one nixpkgs revision (see PinFactsSchema). */
export type PinFacts = z.infer<typeof PinFactsSchema>;

/** One fact on which the catalog and the inspected nixpkgs disagree: `fact` names it, `message` says both sides. */
export interface PinDifference {
  /** "torch", "brokenCuda[13.0]", "nixpkgsDefaultCapabilities[12.8]", "staticLinks.nvshmem", … */
  fact: string;
  /** What the catalog says, as text. */
  catalog: string;
  /** What the evaluated nixpkgs says, as text. */
  nixpkgs: string;
  /** The Nix expression the nixpkgs side was read from. */
  expr: string;
  /** One line for the user, e.g. "catalog says CUDA 13.0 refused for torch 2.11.0 at 549bd84; your nixpkgs says accepted". */
  message: string;
}

/** The result of comparing a pin with its facts: differences fail `pin check`; notes do not (facts the catalog leaves open). */
export interface PinComparison {
  rev: string;
  differences: PinDifference[];
  notes: string[];
  /** How many facts were compared. */
  compared: number;
}

const short = (rev: string) => rev.slice(0, 7);
/** A fact's value as text: "absent" for null, a list joined with ", " ("(none)" when empty). */
export const show = (v: unknown) => (v === null ? "absent" : Array.isArray(v) ? (v.length ? v.join(", ") : "(none)") : String(v));

/** What comparePin collects, and `differ`, which compares one fact (counting it) and records a difference. */
interface PinTally {
  at: string;
  differences: PinDifference[];
  notes: string[];
  compared: number;
  differ: (factName: string, catalog: unknown, nixpkgs: unknown, expr: string, message?: string) => void;
}

/** An empty tally for `pin` (its short revision in messages). */
function pinTally(pin: NixpkgsPin): PinTally {
  const at = short(pin.rev);
  const t: PinTally = {
    at,
    differences: [],
    notes: [],
    compared: 0,
    differ: (factName, catalog, nixpkgs, expr, message) => {
      t.compared++;
      if (JSON.stringify(catalog) === JSON.stringify(nixpkgs)) return;
      t.differences.push({
        fact: factName,
        catalog: show(catalog),
        nixpkgs: show(nixpkgs),
        expr,
        message: message ?? `${factName}: catalog says ${show(catalog)} at ${at}; your nixpkgs says ${show(nixpkgs)} (${expr})`,
      });
    },
  };
  return t;
}

/** Package sets the catalog relies on must exist; extra ones are only worth a note. */
function comparePackageSets(pin: NixpkgsPin, facts: PinFacts, t: PinTally): void {
  const { at, differ, notes } = t;
  const py = new Map(facts.pythonSets.map((s) => [s.version, s]));
  for (const v of pin.python) differ(`python[${v}]`, `python${v.replace(".", "")}Packages`, py.has(v) ? py.get(v)!.set : null, "builtins.attrNames pkgs");
  const extraPy = [...py.keys()].filter((v) => !pin.python.includes(v));
  if (extraPy.length) notes.push(`nixpkgs at ${at} also has Python ${extraPy.join(", ")} (the catalog does not list them for this pin)`);
  const cu = new Map(facts.cudaSets.map((s) => [s.version, s]));
  for (const v of pin.cuda) differ(`cuda[${v}]`, `cudaPackages_${v.replace(".", "_")}`, cu.has(v) ? cu.get(v)!.set : null, "builtins.attrNames pkgs");
  const extraCuda = [...cu.keys()].filter((v) => !pin.cuda.includes(v));
  if (extraCuda.length) notes.push(`nixpkgs at ${at} also has CUDA ${extraCuda.join(", ")} (the catalog does not list them for this pin)`);
}

/**
 * Versions in every Python set the catalog lists for the pin: torch, the packages built on torch (catalog/packages.ts:
 * each entry's pin field) and torchcodec (torchaudio's dependency); then the default Python and CUDA sets and the
 * Python sets nixpkgs' CI recurses into.
 */
function compareVersionFacts(pin: NixpkgsPin, facts: PinFacts, cat: Catalog, t: PinTally): void {
  const { at, differ, notes } = t;
  const py = new Map(facts.pythonSets.map((s) => [s.version, s]));
  const fields = [...new Set([...cat.packagesOnTorch.map((p) => p.pinField), "torchcodec" as const])];
  const unknown = new Map<string, string[]>();
  for (const v of pin.python) {
    const s = py.get(v);
    if (!s) continue;
    differ(`torch[${v}]`, pin.torch, s.torch.value, s.torch.expr);
    for (const f of fields) {
      if (pin[f] === "unknown") unknown.set(f, [...(unknown.get(f) ?? []), `${s.set}: ${show(s[f].value)}`]);
      else differ(`${f}[${v}]`, pin[f], s[f].value, s[f].expr);
    }
  }
  for (const [f, seen] of unknown)
    notes.push(`${f} at ${at}: the catalog has "unknown"; your nixpkgs says ${seen.join(", ")} (pythonXYZPackages.${f}.version): record it in the catalog`);
  for (const [key, f] of [["defaultPython", facts.defaultPython], ["defaultCuda", facts.defaultCuda]] as const) {
    if (pin[key] !== null) differ(key, pin[key], f.value, f.expr);
    else if (f.value) notes.push(`${key} at ${at}: the catalog has none; your nixpkgs says ${f.value} (${f.expr})`);
  }
  // The Python sets nixpkgs' CI evaluation recurses into: the cache model's jobs (catalog/binary-cache.ts).
  const recursed = facts.recursedPython.value === null ? null : [...facts.recursedPython.value].sort(compareVersions);
  if (pin.recursedPython !== null) differ("recursedPython", [...pin.recursedPython].sort(compareVersions), recursed, facts.recursedPython.expr);
  else if (recursed) notes.push(`recursedPython at ${at}: the catalog has none; your nixpkgs says ${show(recursed)} (${facts.recursedPython.expr})`);
}

/** torch's brokenConditions and nixpkgs' default capabilities, per CUDA set present that the catalog knows. */
function compareCudaFacts(pin: NixpkgsPin, facts: PinFacts, cat: Catalog, t: PinTally): void {
  const { at, differ } = t;
  // The catalog's brokenCuda lists the versions it refuses.
  for (const s of facts.cudaSets) {
    if (!cat.cuda.some((c) => c.version === s.version)) continue;
    const refused = s.version in pin.brokenCuda;
    const nix = s.torchBroken.value;
    const word = (b: boolean | null) => (b === null ? "unreadable" : b ? "refused" : "accepted");
    differ(`brokenCuda[${s.version}]`, word(refused), word(nix), s.torchBroken.expr,
      `catalog says CUDA ${s.version} ${word(refused)} for torch ${pin.torch} at ${at}; your nixpkgs says ${word(nix)} (${s.torchBroken.expr})`);
    // nixpkgs' default capabilities of that CUDA set: the pin's own record where it has one, else the catalog's table.
    const tk = cat.cuda.find((c) => c.version === s.version)!;
    differ(`nixpkgsDefaultCapabilities[${s.version}]`, nixpkgsCudaFacts(cat, pin, tk).defaults, s.defaultCapabilities.value, s.defaultCapabilities.expr);
  }
}

/** torch's formal arguments, the libraries it links statically, and torchaudio's dependency on torchcodec. */
function compareTorchFacts(pin: NixpkgsPin, facts: PinFacts, cat: Catalog, t: PinTally): void {
  const { at, differ } = t;
  // What our builders hand torch must be among its formal arguments.
  differ("torch formals our builders pass", [], facts.builderArgsMissing.value, facts.builderArgsMissing.expr,
    `torch at ${at} lacks formal argument(s) ${show(facts.builderArgsMissing.value)} that pkgs/pytorch.nix passes (${facts.torchFormals.expr})`);

  // Bundled libraries (catalog/device-code.ts: which pins' torch links each statically).
  for (const lib of cat.bundledDeviceCode) {
    const expected = lib.linkedAt === "every pin" || lib.linkedAt.includes(pin.rev);
    const f = facts.staticLinks[lib.origin];
    differ(`staticLinks.${lib.origin}`, expected, f.value, f.expr,
      `catalog says torch ${expected ? "links" : "does not link"} ${lib.label} statically at ${at}; your nixpkgs says ${f.value === null ? "unreadable" : f.value ? "it does" : "it does not"} (${f.expr})`);
  }

  // torchaudio's dependency on torchcodec (nixpkgs' torchaudio file, per torchaudio release).
  const ta = releaseOf(packageOnTorch(cat, "torchaudio"), pin.torchaudio);
  if (ta) {
    const deps = facts.torchaudioDependencies.value;
    const expected = (ta.nixpkgsDependencies ?? []).includes("torchcodec");
    differ("torchaudio depends on torchcodec", expected, deps === null ? null : deps.includes("torchcodec"), facts.torchaudioDependencies.expr);
  }
}

/**
 * Compare a catalog pin (and the catalog facts that depend on it) with the facts read from that revision.
 * Facts the catalog marks unknown ("unknown" torchcodec) or does not list (extra Python or CUDA sets) become notes.
 * @returns every difference and note; `compared` counts the facts checked.
 */
export function comparePin(pin: NixpkgsPin, facts: PinFacts, cat: Catalog): PinComparison {
  const t = pinTally(pin);
  comparePackageSets(pin, facts, t);
  compareVersionFacts(pin, facts, cat, t);
  compareCudaFacts(pin, facts, cat, t);
  compareTorchFacts(pin, facts, cat, t);
  return { rev: pin.rev, differences: t.differences, notes: t.notes, compared: t.compared };
}

/** The PyTorch version nixpkgs' default Python set carries (the set of `python3`), else the first set's. */
function defaultSet(facts: PinFacts) {
  return facts.pythonSets.find((s) => s.version === facts.defaultPython.value) ?? facts.pythonSets.find((s) => s.torch.value !== null);
}

/**
 * A catalog pin entry made from the facts of a revision: every field read (nothing inferred), with the expressions
 * in its `source`. When the catalog lacks the PyTorch release (or the torchaudio) it carries, a release entry is
 * made too: its Python range is the Python sets that carry that torch, its CUDA list the sets torch accepts (what
 * nixpkgs builds, not PyTorch's own release matrix: said in its source).
 * @throws Error when the revision has no torch in any Python set, or a Python/CUDA set the catalog has no facts for
 *   is all it has.
 */
export function pinEntryFromFacts(
  facts: PinFacts,
  opts: { rev: string; sha256: string; sha256Source: string; date: string | null; channel: string | null; nixVersion: string; where: string },
  cat: Catalog,
): LocalPinEntry {
  const def = defaultSet(facts);
  if (!def || def.torch.value === null) throw new Error(`nixpkgs ${opts.rev} has no torch in any Python set`);
  const torch = def.torch.value;
  const torchaudio = def.torchaudio.value;
  if (torchaudio === null) throw new Error(`nixpkgs ${opts.rev} has torch ${torch} but no torchaudio in ${def.set}`);
  const knownPy = new Set(cat.python.map((p) => p.version));
  const knownCuda = new Set(cat.cuda.map((c) => c.version));
  const python = facts.pythonSets.filter((s) => s.torch.value === torch && knownPy.has(s.version)).map((s) => s.version);
  const cudaSets = facts.cudaSets.filter((s) => knownCuda.has(s.version));
  const cuda = cudaSets.map((s) => s.version);
  if (!python.length) throw new Error(`nixpkgs ${opts.rev}: no Python set the catalog knows carries torch ${torch}`);
  if (!cuda.length) throw new Error(`nixpkgs ${opts.rev}: no CUDA set the catalog knows (${[...knownCuda].join(", ")})`);
  const brokenCuda = Object.fromEntries(
    cudaSets.filter((s) => s.torchBroken.value === true).map((s) => [s.version, `nixpkgs marks torch ${torch} broken with ${s.set} (${s.torchBroken.expr} = true)`]),
  );
  const codecs = [...new Set(facts.pythonSets.filter((s) => python.includes(s.version)).map((s) => s.torchcodec.value))];
  const visions = [...new Set(facts.pythonSets.filter((s) => python.includes(s.version)).map((s) => s.torchvision.value))];
  // One version across the pin's Python sets, else "unknown" (as torchcodec and torchvision).
  const one = (f: "flashAttn" | "xformers" | "bitsandbytes" | "vllm") => {
    const vs = [...new Set(facts.pythonSets.filter((s) => python.includes(s.version)).map((s) => s[f].value))];
    return vs.length === 1 ? vs[0]! : "unknown";
  };
  const pin: NixpkgsPin = {
    rev: opts.rev,
    date: opts.date,
    sha256: opts.sha256,
    sha256Source: opts.sha256Source,
    torch,
    torchaudio,
    python,
    cuda,
    brokenCuda,
    torchcodec: codecs.length === 1 ? codecs[0]! : "unknown",
    torchvision: visions.length === 1 ? visions[0]! : "unknown",
    flashAttn: one("flashAttn"),
    xformers: one("xformers"),
    bitsandbytes: one("bitsandbytes"),
    vllm: one("vllm"),
    defaultPython: facts.defaultPython.value,
    defaultCuda: facts.defaultCuda.value,
    recursedPython: facts.recursedPython.value === null ? null : [...facts.recursedPython.value].sort(compareVersions),
    nixpkgsDefaultCapabilities: ownDefaults(cudaSets),
    bundledLinksKnown: false,
    channel: opts.channel,
    inferred: {},
    source:
      `variant-matrix pin add: evaluated ${opts.where} with Nix ${opts.nixVersion} (pkgs/inspect-pin.nix): ` +
      `${def.torch.expr} = ${torch}; ${def.torchaudio.expr} = ${torchaudio}; package sets from builtins.attrNames; ` +
      `brokenCuda from torch.meta.broken per cudaPackages_X_Y; nixpkgsDefaultCapabilities from cudaPackages_X_Y.flags.cudaCapabilities`,
  };
  const release: TorchRelease | null = cat.torch.some((t) => t.version === torch)
    ? null
    : {
        version: torch,
        nameTag: majorMinor(torch).replace(".", ""),
        torchaudio,
        python,
        cuda: cuda.filter((v) => !(v in brokenCuda)),
        source:
          `nixpkgs ${short(opts.rev)} as evaluated by variant-matrix pin add: Python sets carrying torch ${torch} ` +
          `(${python.join(", ")}) and the CUDA sets its meta.broken accepts; PyTorch's own release matrix was not read`,
      };
  const audio: OnTorchRelease | null = releaseOf(packageOnTorch(cat, "torchaudio"), torchaudio)
    ? null
    : {
        version: torchaudio,
        servesTorch: { min: majorMinor(torch), below: nextMinor(torch) },
        stableAbi: false,
        nixpkgsDependencies: (facts.torchaudioDependencies.value ?? []).filter((d) => d === "torchcodec"),
        source: `nixpkgs ${short(opts.rev)} pairs torchaudio ${torchaudio} with torch ${torch} (variant-matrix pin add); taken to serve that torch minor only`,
      };
  return { pin, torch: release, torchaudio: audio };
}

/** The next minor of a version: "2.12.0" → "2.13". */
function nextMinor(v: string): string {
  const [a, b] = v.split(".").map(Number);
  return `${a}.${b! + 1}`;
}

/**
 * The default capabilities of each CUDA set as evaluated (`cudaPackages_X_Y.flags.cudaCapabilities`), sorted, for the
 * pin's own entry; null when no set's could be read.
 */
function ownDefaults(cudaSets: PinFacts["cudaSets"]): Record<string, string[]> | null {
  const read = cudaSets.flatMap((s) => (s.defaultCapabilities.value === null ? [] : [[s.version, [...s.defaultCapabilities.value].sort(compareVersions)] as const]));
  return read.length ? Object.fromEntries(read) : null;
}

/** The newest of `versions` (versions.ts compareVersions), or null for none. */
const newestVersion = (versions: readonly string[]) => versions.reduce<string | null>((a, v) => (a === null || compareVersions(v, a) > 0 ? v : a), null);

/** The newest torch of a nixpkgs' Python sets ("2.14.0"), or null when no set has torch. */
export function newestTorchOf(facts: Pick<PinFacts, "pythonSets">): string | null {
  return newestVersion(facts.pythonSets.flatMap((s) => (s.torch.value !== null ? [s.torch.value] : [])));
}

/**
 * A torch in `facts` newer than every PyTorch release the catalog knows: the user's nixpkgs moved past the catalog, and
 * `pin add` is the way in (it records the pin and what it carries in local-catalog.json). Versions compare as
 * versions.ts compareVersions does; a set without torch is ignored.
 * @returns the newest torch of the pin's Python sets and the catalog's newest release, or null when the catalog knows
 *   a release at least as new (or the pin has no torch)
 */
export function torchNewerThanCatalog(facts: Pick<PinFacts, "pythonSets">, cat: Pick<Catalog, "torch">): { torch: string; newest: string } | null {
  const torch = newestTorchOf(facts);
  const newest = newestVersion(cat.torch.map((t) => t.version));
  if (torch === null || newest === null || compareVersions(torch, newest) <= 0) return null;
  return { torch, newest };
}
