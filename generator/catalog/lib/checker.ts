/**
 * The checker's facts (checker-facts.ts `CheckerFacts`) taken from the catalog: what `verify` judges with in TypeScript, and
 * what `generate` writes to pkgs/verify-facts.json for the Nix checks (generator/generate/render/checker.ts), so both judge
 * with the same facts. Each field is copied by name: a catalog field the comparison does not read (most `source`
 * strings) never reaches the data, so editing it changes no check derivation.
 *
 * From the catalog a command loaded (the built-in one plus a matrix's local-catalog.json): a local release of a
 * package is judged by its own facts, and a local pin by its own: `knownPins` are the pins whose bundled-library links
 * were read (NixpkgsPin.bundledLinksKnown: the built-in pins; a pin `pin add` wrote is not one, so its
 * bundled-library lines stay "not checked", docs/matrix.md), and `pinDefaultCapabilities` the default capabilities a
 * pin's own entry records (read at that revision), which judge its bundled libraries instead of the catalog's table.
 */
import { ownDeviceCode } from "./device-code.ts";
import { extraPromise } from "./packages.ts";
import type { Catalog, DeviceTargets, OnTorchRelease } from "../schema.ts";
import type { ReleaseBuildFacts, TargetsFacts } from "./cuda-build.ts";
import { CHECKER_FACTS_FORMAT, type CheckerFacts } from "./checker-facts.ts";

function targetsFacts(t: DeviceTargets): TargetsFacts {
  if (t.kind === "torchArchList")
    return { kind: t.kind, ...(t.extraSass ? { extraSass: t.extraSass.map((e) => ({ when: e.when, adds: e.adds, minCuda: e.minCuda, source: e.source })) } : {}) };
  if (t.kind === "ownList")
    return { kind: t.kind, variable: t.variable, tokens: t.tokens.map((k) => ({ token: k.token, capability: k.capability, minCuda: k.minCuda })), limit: t.limit };
  if (t.kind === "supportedArchs")
    return {
      kind: t.kind,
      eras: t.eras.map((e) => ({ minCuda: e.minCuda, belowCuda: e.belowCuda, archs: [...e.archs], family: e.family, source: e.source })),
      archFlag: t.archFlag,
      dotlessFlag: t.dotlessFlag,
      limit: t.limit,
    };
  return { kind: t.kind, flag: t.flag, ptxForHighest: t.ptxForHighest, ...(t.ptxIn ? { ptxIn: { where: t.ptxIn.where } } : {}) };
}

function releaseFacts(r: OnTorchRelease): ReleaseBuildFacts {
  return {
    version: r.version,
    ...(r.cuda ? { cuda: { min: r.cuda.min, below: r.cuda.below, source: r.cuda.source } } : {}),
    ...(r.failsWithCuda ? { failsWithCuda: { cuda: [...r.failsWithCuda.cuda], source: r.failsWithCuda.source } } : {}),
    ...(r.failsOnCapabilities ? { failsOnCapabilities: { capabilities: [...r.failsOnCapabilities.capabilities], source: r.failsOnCapabilities.source } } : {}),
    ...(r.targets ? { targets: targetsFacts(r.targets) } : {}),
  };
}

const memo = new WeakMap<Catalog, CheckerFacts>();

/** The checker's facts from catalog `cat` (computed once per catalog value; callers must not mutate them). */
export function catalogCheckerFacts(cat: Catalog): CheckerFacts {
  const known = memo.get(cat);
  if (known) return known;
  const facts: CheckerFacts = {
    format: CHECKER_FACTS_FORMAT,
    packagesOnTorch: cat.packagesOnTorch.map((p) => ({
      name: p.name,
      label: p.label,
      gpuChecks: p.gpuChecks.map((g) => ({ key: g.key, label: g.label })),
      releases: p.releases.map(releaseFacts),
    })),
    torchArchLists: cat.torchArchLists.map((l) => ({ torch: l.torch, accepted: l.accepted && [...l.accepted], refused: [...l.refused], source: l.source })),
    bundledDeviceCode: cat.bundledDeviceCode.map((b) => ({
      origin: b.origin,
      label: b.label,
      library: b.library,
      names: [...b.names],
      libraryDefault: b.libraryDefault,
      flags: b.flags,
      deviceLinkedByTorch: b.deviceLinkedByTorch,
      ptxVisible: b.ptxVisible,
      extraSass: b.extraSass.map((e) => ({ sass: e.sass, minCuda: e.minCuda, belowCuda: e.belowCuda, why: e.why })),
      linkedAt: b.linkedAt === "every pin" ? b.linkedAt : [...b.linkedAt],
    })),
    extraSass: cat.extraSass.entries.map((e) => ({ when: e.when, adds: e.adds, minCuda: e.minCuda })),
    compilerHelperNames: [...cat.compilerHelperNames.patterns],
    ownDeviceCode: ownDeviceCode(cat).map((o) => ({ origin: o.origin, directory: o.directory, ...(o.file !== undefined ? { file: o.file } : {}), names: [...o.names] })),
    nixpkgsDefaultCapabilities: Object.fromEntries(cat.cuda.map((c) => [c.version, [...c.nixpkgsDefaultCapabilities]])),
    knownPins: cat.nixpkgs.filter((p) => p.bundledLinksKnown).map((p) => p.rev),
    pinDefaultCapabilities: Object.fromEntries(
      cat.nixpkgs.flatMap((p) => (p.nixpkgsDefaultCapabilities ? [[p.rev, structuredClone(p.nixpkgsDefaultCapabilities)]] : [])),
    ),
    judgedExtras: cat.extras.filter((e) => extraPromise(cat, e.attr).judged).map((e) => e.attr),
  };
  memo.set(cat, facts);
  return facts;
}
