/**
 * Render a project to the generated files: one `.flox/pkgs/NAME.nix` per package variant, `BUILD_MATRIX.md`,
 * one `docs/matrix/*.md` page per (PyTorch release, CUDA version) and `.flox/env/manifest.toml`.
 * Pure: returns a map of repo-relative path → content; `write.ts` does the I/O.
 */
import { machines } from "../../catalog/index.ts";
import { nixpkgsAllows } from "../../catalog/lib/cuda.ts";
import { stringify as tomlStringify } from "smol-toml";
import { compareVersions } from "../../versions.ts";
import type { Project } from "../../matrix/project.ts";
import type { Excluded, Variant } from "../../matrix/schema.ts";
import { formatCombination, parseName } from "../../matrix/naming.ts";
import { ENV_PACKAGE, PACKAGES, packageOnTorch } from "../../catalog/lib/packages.ts";
import { type OnTorchRelease } from "../../catalog/schema.ts";
import { GENERATED_HEADER, nixString, nixValue, templates } from "./env.ts";
import { modelDeviceCode } from "../../catalog/lib/device-code.ts";
import { cachesToOffer } from "../../catalog/lib/binary-cache.ts";
import { cacheConfLines, type TeamCache } from "../../matrix/team-cache.ts";
import { CHECKER_BUNDLE_FILE, CHECKER_FACTS_FILE, renderCheckerBundle, renderCheckerFacts } from "./checker.ts";

/** Generated files: repo-relative path → content. Insertion order is stable. */
export type FileMap = Map<string, string>;

/** The Nix fields handed to a builder, in the order they are written (the builder's `variant` attrset). */
function nixFields(v: Variant): [string, unknown][] {
  return [
    ["name", v.name],
    ["package", v.package],
    ["role", v.role],
    ["attr", v.attr],
    ["version", v.version],
    ["torchVersion", v.torchVersion],
    ["onTorchVersions", v.onTorchVersions],
    ["python", v.python],
    ["pythonPackageSet", v.pythonPackageSet],
    ["cuda", v.cuda],
    ["cudaPackageSet", v.cudaPackageSet],
    ["sm", v.sm],
    ["isa", v.isa],
    ["system", v.system],
    ["cudaCapabilities", v.cudaCapabilities],
    ["binaryCompat", v.binaryCompat],
    ["cudaCapabilitiesForPackageSet", v.cudaCapabilitiesForPackageSet],
    ["cflags", v.cflags],
    ["requiredSystemFeatures", v.requiredSystemFeatures],
    ["nixpkgsRev", v.nixpkgs],
    ["nixpkgsSha256", v.nixpkgsSha256],
    // The nixpkgs instance it is built in (pkgs/matrix.nix groups by it): computed once, by expand.
    ["nixpkgsKey", v.nixpkgsKey],
    ["dependsOn", v.dependsOn],
    ...(v.packageBuild ? ([["packageBuild", v.packageBuild]] as [string, unknown][]) : []),
    ...(v.extras.length ? ([["extras", v.extras]] as [string, unknown][]) : []),
    ["description", v.description],
    ["notes", v.notes],
  ];
}

/**
 * The one formal argument of every `.flox/pkgs` wrapper: a nixpkgs to use instead of the variant's pin (tests, or
 * `nix-build FILE --arg variantMatrixNixpkgs PATH`). flox calls each `.flox/pkgs` file with `callPackage` over a scope
 * of its own nixpkgs, `catalogs` and every other `.flox/pkgs` package (flox/flox package-builder/nef/lib/mkOverlay.nix:
 * `final.newScope { … }`; instantiate.nix), and callPackage fills every formal argument the scope has. A plain
 * `nixpkgs` could be filled by a hand-written `.flox/pkgs/nixpkgs.nix` or an overlay's attribute of that name (third
 * parties' overlays define `nixpkgs = callPackage …`), silently replacing the pin; no package of nixpkgs or of the
 * generator's naming scheme is called this.
 */
export const WRAPPER_NIXPKGS_ARG = "variantMatrixNixpkgs";

/**
 * Render one variant's `.flox/pkgs/NAME.nix`: a thin wrapper naming its entry of `pkgs/variants.nix`.
 * Written here rather than through a nunjucks template: it is five fixed lines, rendered thousands of times, and
 * a template render costs more than the rest of a full generate per file (bench/cli.ts).
 */
export function renderVariant(v: Variant): string {
  const name = nixString(v.name);
  return (
    `# ${GENERATED_HEADER}\n` +
    `# ${v.name}: ${v.description.replace(/\n/g, " ")}\n` +
    `# Its parameters are the entry "${v.name}" of pkgs/variants.nix (\`variant-matrix explain ${v.name}\`).\n` +
    `{ ${WRAPPER_NIXPKGS_ARG} ? null }:\n\n` +
    `(import ../../pkgs/matrix.nix { nixpkgs = ${WRAPPER_NIXPKGS_ARG}; }).package ${name}\n`
  );
}

/** One variant's attrset as it stands in `pkgs/variants.nix` (indented for that file). */
function variantEntry(v: Variant): string {
  const attrs = nixFields(v)
    .map(([k, val]) => `    ${k} = ${nixValue(val)};`)
    .join("\n");
  return `  ${nixString(v.name)} = {\n${attrs}\n  };\n`;
}

/**
 * Render `pkgs/variants.nix`: every variant's resolved data, by name, once (the wrappers in .flox/pkgs and
 * release.nix read it through pkgs/matrix.nix). Built by string joins: it holds thousands of entries.
 */
export function renderVariantsData(p: Project): string {
  const head =
    `# ${GENERATED_HEADER}\n` +
    "# Every package variant of the matrix by name, with its resolved parameters (literal data only): what\n" +
    "# pkgs/matrix.nix builds. `variant-matrix explain NAME` prints one entry with its notes.\n";
  return `${head}{\n${p.variants.map(variantEntry).join("")}}\n`;
}

/** Render the root `release.nix`: every variant by name, `all` and `bySystem`, for engines (see the template). */
export function renderRelease(p: Project): string {
  const systems = [...new Set(p.variants.map((v) => v.system))].sort();
  return templates().render("release.nix.njk", { count: p.variants.length, systems });
}

/** One pinned nixpkgs of the flake: input name, revision and its NAR hash in SRI form (flake.lock `narHash`). */
interface FlakePin {
  /** "nixpkgs-2c423e0": the flake input (first 7 hex digits of the revision). */
  input: string;
  rev: string;
  /** "sha256-…=" */
  narHash: string;
}

const NIX_BASE32 = "0123456789abcdfghijklmnpqrsvwxyz";

/**
 * A sha256 as the catalog or matrix.ts gives it (SRI "sha256-…=" or Nix base32, schema.ts SHA256_RE) in SRI form, the only
 * form flake.lock's `narHash` holds. Nix base32 is Nix's own alphabet read from the last character (libutil hash.cc
 * `Hash::parseNonSRIUnprefixed`: bit i*5 of the hash is character n-1-i).
 * @throws Error for a string that is neither.
 */
export function sha256ToSri(hash: string): string {
  if (hash.startsWith("sha256-")) return hash;
  if (!/^[0-9abcdfghijklmnpqrsvwxyz]{52}$/.test(hash)) throw new Error(`not a sha256 in SRI or Nix base32 form: ${hash}`);
  const bytes = new Uint8Array(32);
  for (let n = 0; n < 52; n++) {
    const c = NIX_BASE32.indexOf(hash[51 - n]!);
    const b = n * 5;
    const i = b >> 3;
    const j = b & 7;
    bytes[i]! |= (c << j) & 0xff;
    if (i + 1 < 32) bytes[i + 1]! |= c >> (8 - j);
  }
  return `sha256-${Buffer.from(bytes).toString("base64")}`;
}

/** The nixpkgs pins the matrix's variants use, each once, in revision order (the flake's inputs). */
function flakePins(p: Project): FlakePin[] {
  const byRev = new Map<string, string>();
  for (const v of p.variants) byRev.set(v.nixpkgs, v.nixpkgsSha256);
  return [...byRev.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([rev, sha]) => ({ input: `nixpkgs-${rev.slice(0, 7)}`, rev, narHash: sha256ToSri(sha) }));
}

/** Render the root `flake.nix` (see the template): the pins as inputs, the outputs from pkgs/flake-outputs.nix. */
function renderFlake(p: Project): string {
  const systems = [...new Set(p.variants.map((v) => v.system))].sort();
  return templates().render("flake.nix.njk", { count: p.variants.length, systems, pins: flakePins(p), caches: p.matrix.caches.map((c) => ({ url: nixString(c.url), publicKey: nixString(c.publicKey) })) });
}

/**
 * Render `flake.lock` as Nix writes it (lock file version 7, Nix 2.4 and later; nixos/nix src/libexpr/flake/lockfile.cc):
 * a root node listing the inputs, one node per pin with `flake: false`, `locked` = { narHash, owner, repo, rev, type:
 * "github" } and `original` = the input's URL as written. `lastModified` is left out: no catalog source gives the commit
 * time, and Nix compares it only when the lock has it. Pretty JSON (2 spaces) with a final newline; JSON has no comments,
 * so it carries no generated header.
 */
function renderFlakeLock(p: Project): string {
  const pins = flakePins(p);
  const nodes: Record<string, unknown> = {};
  for (const pin of pins)
    nodes[pin.input] = {
      flake: false,
      locked: { narHash: pin.narHash, owner: "NixOS", repo: "nixpkgs", rev: pin.rev, type: "github" },
      original: { owner: "NixOS", repo: "nixpkgs", rev: pin.rev, type: "github" },
    };
  nodes.root = { inputs: Object.fromEntries(pins.map((pin) => [pin.input, pin.input])) };
  return JSON.stringify({ nodes, root: "root", version: 7 }, null, 2) + "\n";
}

/** The manifest format written: the pre-1.10 `version = 1` field (see catalog/machines.ts FLOX_MIN_VERSION). */
const FLOX_MANIFEST_VERSION = 1;

/** Name of the flox path environment in `.flox/env.json` (`flox init` writes the directory's name). */
const FLOX_ENV_NAME = "variant-matrix";

/**
 * `.flox/env.json`: what makes `.flox` a flox path environment (`{ "name", "version": 1 }`, as `flox init` writes it;
 * without it flox stops with "Failed to read environment metadata … verify that `.flox/env.json` is committed").
 * JSON has no comments, so it carries no generated header and is never removed as stale.
 */
function renderFloxEnvJson(): string {
  return JSON.stringify({ name: FLOX_ENV_NAME, version: 1 }, null, 2) + "\n";
}

/** `.flox/.gitignore` as `flox init` writes it: flox's run, cache, lib and log directories stay out of git. */
function renderFloxGitignore(): string {
  return `# ${GENERATED_HEADER}\nrun/\ncache/\nlib/\nlog/\n!env/\n`;
}

/** The systems the matrix covers, sorted: the manifest's `options.systems`. */
const floxSystems = (p: Project) => [...new Set(p.variants.map((v) => v.system))].sort();

/**
 * Render `.flox/env/manifest.toml`: `version = 1` and the systems the matrix covers, no `[install]` packages. With no
 * packages flox locks the environment without its catalog service (providers/lock_manifest.rs `resolve_manifest`:
 * nothing to resolve, no request), so the committed lock (renderManifestLock) is current and `flox build` needs no
 * FloxHub login; the tools that run the generator (Node, git) come from the user's system.
 */
function renderManifest(p: Project): string {
  const body = tomlStringify({ version: FLOX_MANIFEST_VERSION, options: { systems: floxSystems(p) } });
  return (
    `# ${GENERATED_HEADER}\n` +
    `# Packages to build live in .flox/pkgs/ (flox build NAME, flox >= ${machines.floxMinVersion}). No [install] packages: the lock beside\n` +
    "# this file is made without flox's catalog service and committed, so `flox build` needs no login. Node and git,\n" +
    "# which run the generator, come from your system.\n" +
    `${body}\n`
  );
}

/**
 * Render `.flox/env/manifest.lock` as flox writes it for that manifest: `lockfile-version` 1, the manifest as flox
 * parses it (`version`, `options`; empty tables left out), no packages, pretty JSON with a final newline (flox/flox
 * cli/flox-manifest/src/lockfile/mod.rs `Lockfile`; core_environment.rs `write_atomically`; the fixture
 * test_data/manually_generated/prior_release_baselines/plain/manifest.lock has exactly this shape). flox takes a lock
 * as current when its `manifest` equals the parsed manifest.toml, so it never relocks (or asks the catalog) for it.
 * JSON has no comments: no generated header, never removed as stale.
 */
function renderManifestLock(p: Project): string {
  const lock = { "lockfile-version": 1, manifest: { version: FLOX_MANIFEST_VERSION, options: { systems: floxSystems(p) } }, packages: [] };
  return JSON.stringify(lock, null, 2) + "\n";
}

/** The combination a pytorch variant and its torchaudio variant share: "python313-cuda12_8-sm121-armv9". */
const suffix = (name: string) => formatCombination(parseName(name)!);

/** One (release, CUDA) slice of the matrix, the unit of a docs page and of a grid. */
interface MatrixPage {
  /** "pytorch-2.8.0-cuda-12.8" (or "…-cpu" for CPU-only). */
  slug: string;
  title: string;
  torchVersion: string;
  torchaudioVersion: string;
  cuda: string | null;
  /** nixpkgs revision, or null when no sourced pin carries the release. */
  nixpkgs: string | null;
  /** SM rows (ascending) × ISA columns, cells are pytorch variants or null for dropped. */
  grid: { sms: string[]; isas: string[]; rows: { sm: string; python: string; cells: (Variant | null)[] }[] };
  variants: Variant[];
  excluded: ExcludedGroup[];
  /** Each distinct note of the page's pytorch variants, with the combinations it applies to. */
  notes: { note: string; appliesTo: string[] }[];
  /** Number of dropped combinations (a pytorch/torchaudio pair counts once). */
  excludedCombinations: number;
}

/** Dropped combinations sharing release, Python, CUDA, GPU and reasons, gathered over ISAs and packages. */
interface ExcludedGroup {
  /** The name suffix without the ISA: "python313-cuda12_8-sm110" or "python313-cpu". */
  combination: string;
  isas: string[];
  packages: string[];
  /** Dropped package variant names in the group. */
  names: string[];
  reasons: string[];
}

function groupExcluded(ex: Excluded[]): ExcludedGroup[] {
  const groups = new Map<string, ExcludedGroup>();
  for (const e of ex) {
    const combination = suffix(e.name).slice(0, -(e.isa.length + 1));
    const key = `${e.torchVersion}|${combination}|${e.reasons.join("\n")}`;
    const g = groups.get(key) ?? { combination, isas: [], packages: [], names: [], reasons: e.reasons };
    if (!g.isas.includes(e.isa)) g.isas.push(e.isa);
    if (!g.packages.includes(e.package)) g.packages.push(e.package);
    g.names.push(e.name);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** Distinct notes of the pytorch variants (torchaudio shares them), each with "python313-cuda12_8-sm89: avx2, …". */
function pageNotes(variants: Variant[]): { note: string; appliesTo: string[] }[] {
  const byNote = new Map<string, Map<string, string[]>>();
  for (const v of variants) {
    if (v.package !== "pytorch") continue;
    const combination = suffix(v.name).slice(0, -(v.isa.length + 1));
    for (const note of v.notes) {
      const combos = byNote.get(note) ?? new Map<string, string[]>();
      combos.set(combination, [...(combos.get(combination) ?? []), v.isa]);
      byNote.set(note, combos);
    }
  }
  return [...byNote].map(([note, combos]) => ({
    note,
    appliesTo: [...combos].map(([c, isas]) => `${c}: ${isas.join(", ")}`),
  }));
}

/** Slice a project into pages, one per (release, CUDA version) plus one per release for CPU-only variants. */
function matrixPages(p: Project): MatrixPage[] {
  const pages: MatrixPage[] = [];
  const isas = p.matrix.isas;
  const cudas: (string | null)[] = [...p.matrix.cuda].sort(compareVersions);
  if (p.matrix.cpuOnly) cudas.push(null);
  for (const r of p.matrix.releases) {
    const rel = p.catalog.torch.find((t) => t.version === r.torch)!;
    for (const cuda of cudas) {
      const variants = p.variants.filter((v) => v.torchVersion === r.torch && v.cuda === cuda);
      const excluded = p.excluded.filter((e) => e.torchVersion === r.torch && e.cuda === cuda);
      const pythons = [...p.matrix.python].sort(compareVersions);
      const sms = cuda === null ? ["cpu"] : [...p.matrix.gpus].sort((a, b) => Number(a) - Number(b));
      // Grid cell key → the pytorch variant (or the torchaudio one when pytorch is not generated).
      const cellOf = new Map<string, Variant>();
      for (const v of variants) {
        const key = `${v.python}|${v.sm ?? "cpu"}|${v.isa}`;
        if (!cellOf.has(key) || v.package === "pytorch") cellOf.set(key, v);
      }
      const rows = pythons.flatMap((python) =>
        sms.map((sm) => ({ sm, python, cells: isas.map((isa) => cellOf.get(`${python}|${sm}|${isa}`) ?? null) })),
      );
      const slug = `pytorch-${r.torch}-${cuda === null ? "cpu" : `cuda-${cuda}`}`;
      pages.push({
        slug,
        title: `PyTorch ${r.torch}${Object.entries(variants[0]?.onTorchVersions ?? { torchaudio: rel.torchaudio }).map(([k, x]) => ` / ${k} ${x}`).join("")}, ${cuda === null ? "CPU only" : `CUDA ${cuda}`}`,
        torchVersion: r.torch,
        torchaudioVersion: rel.torchaudio,
        cuda,
        nixpkgs: r.nixpkgs ?? null,
        grid: { sms, isas, rows },
        variants,
        excluded: groupExcluded(excluded),
        notes: pageNotes(variants),
        excludedCombinations: new Set(excluded.map((e) => suffix(e.name))).size,
      });
    }
  }
  return pages;
}

/**
 * Reference rows for the GPU table: first and last CUDA version of the catalog that builds each SM natively, as
 * expand's serveGpu decides (its nvcc compiles it and nixpkgs' capability table allows it with that CUDA).
 */
function gpuReference(p: Project) {
  return p.catalog.gpus.map((g) => {
    const knownBy = p.catalog.cuda.filter((c) => c.capabilities.includes(g.capability) && nixpkgsAllows(p.catalog.nixpkgsCapabilities, g.capability, c.version)).map((c) => c.version);
    return { ...g, minCuda: knownBy[0] ?? "—", lastCuda: knownBy[knownBy.length - 1] ?? "—", selected: p.matrix.gpus.includes(g.sm) };
  });
}

/**
 * BUILD_MATRIX.md's binary caches: the team's (matrix.ts `caches`) and the public CUDA caches for the matrix's CUDA
 * systems (catalog/binary-cache.ts, the one copy of their URLs and keys), as whole nix.conf lines.
 */
function cacheDocs(p: Project): { team: TeamCache[]; publicNames: string[]; lines: string[] } {
  const publicCaches = cachesToOffer(p.catalog, p.variants.filter((v) => v.cuda !== null).map((v) => v.system));
  return { team: p.matrix.caches, publicNames: publicCaches.map((c) => c.name), lines: cacheConfLines([...p.matrix.caches, ...publicCaches]) };
}

/** Render BUILD_MATRIX.md and the docs/matrix pages. */
function renderDocs(p: Project): FileMap {
  const files: FileMap = new Map();
  const pages = matrixPages(p);
  const multi = p.matrix.releases.length > 1;
  const counts = {
    variants: p.variants.length,
    byPackage: PACKAGES.filter((k) => p.matrix.packages.includes(k)).map((k) => ({ name: k, count: p.variants.filter((v) => v.package === k).length })),
    cuda: p.variants.filter((v) => v.cuda !== null).length,
    cpu: p.variants.filter((v) => v.cuda === null).length,
    binaryCompat: p.variants.filter((v) => v.binaryCompat).length,
    excluded: new Set(p.excluded.map((e) => `${e.torchVersion}|${suffix(e.name)}`)).size,
    excludedPackages: p.excluded.length,
  };
  // The example is the last variant with a GPU (highest SM, last ISA) of the environment, else of the last package
  // built on torch, else any: the DGX Spark one by default.
  const lastWithGpu = (pkg: string) => [...p.variants].reverse().find((v) => v.package === pkg && v.cuda) ?? p.variants.find((v) => v.package === pkg);
  const envExample = lastWithGpu(ENV_PACKAGE) ?? null;
  const example =
    envExample ?? [...p.catalog.packagesOnTorch].reverse().map((o) => lastWithGpu(o.name)).find((v) => v) ?? p.variants[0] ?? null;
  const releases = p.matrix.releases.map((r) => {
    const rel = p.catalog.torch.find((t) => t.version === r.torch)!;
    const v = p.variants.find((x) => x.torchVersion === r.torch);
    return { torch: r.torch, torchaudio: rel.torchaudio, versions: v?.onTorchVersions ?? {}, tag: rel.nameTag, nixpkgs: r.nixpkgs ?? null };
  });
  const cudaVariants = p.variants.filter((v) => v.cuda !== null);
  const forced = cudaVariants.filter((v) => v.cudaCapabilitiesForPackageSet);
  const ownSets = new Set(forced.map((v) => v.nixpkgsKey)).size;
  const sharedSets = new Set(cudaVariants.filter((v) => !v.cudaCapabilitiesForPackageSet).map((v) => v.nixpkgsKey)).size;
  const scopeSummary = cudaVariants.length
    ? `In this matrix: ${cudaVariants.length - forced.length} of ${cudaVariants.length} CUDA package variants share ` +
      `${sharedSets} nixpkgs default CUDA set(s); ${forced.length} use the package-set scope, with ${ownSets} CUDA ` +
      `closure(s) of their own built from source${forced.length ? ` (${[...new Set(forced.map((v) => `SM${v.sm} on CUDA ${v.cuda}`))].join(", ")})` : ""}.`
    : "";
  // What the scope costs in device code (catalog/device-code-size.ts, a model from cubins measured on an H100): MAGMA at
  // nixpkgs' default list (torch scope) against one capability (package-set scope), per CUDA version of the matrix.
  const mb = (b: number) => `${(b / 1e6).toLocaleString("en-US", { maximumFractionDigits: 0 })} MB`;
  const perCap = (origin: "torch" | "magma") => Object.values(p.catalog.deviceCodeBytes[origin].perCapability);
  const scopeSizes = [...new Set(cudaVariants.map((v) => v.cuda!))].sort().map((version) => {
    const defaults = p.catalog.cuda.find((c) => c.version === version)?.nixpkgsDefaultCapabilities ?? [];
    const magma = modelDeviceCode(p.catalog, [], defaults, "torch", false).find((x) => x.origin === "magma")!;
    return { version, defaults: defaults.join(", "), magmaTorchScope: mb(magma.bytes) };
  });
  const sizeRange = (origin: "torch" | "magma") => `${mb(Math.min(...perCap(origin)))}–${mb(Math.max(...perCap(origin)))}`;
  const ctx = {
    p,
    scopeSummary,
    scopeSizes,
    magmaPerCapability: sizeRange("magma"),
    torchPerCapability: sizeRange("torch"),
    sizeSource: p.catalog.deviceCodeBytes.torch.source,
    // torchaudio's releases: its row of the table of packages built on torch (catalog/packages.ts).
    torchaudioReleases: packageOnTorch(p.catalog, "torchaudio").releases,
    releases,
    pages,
    counts,
    multi,
    example,
    envExample,
    envPackage: ENV_PACKAGE,
    environments: Object.entries(p.matrix.environments).map(([name, extras]) => ({ name, extras })),
    // The packages on torch the matrix asks for (names, the versions table); the reference lists every entry.
    onTorch: p.catalog.packagesOnTorch.filter((o) => p.matrix.packages.includes(o.name)),
    allOnTorch: p.catalog.packagesOnTorch.map((o) => ({
      ...o,
      targets: o.releases.map((r) => `${r.version}: ${targetsWords(r)}`),
      cuda: o.releases
        .filter((r) => r.cuda || r.failsWithCuda || r.failsOnCapabilities)
        .map((r) => `${r.version}: ${r.cuda ? `CUDA ${r.cuda.min}${r.cuda.below ? `–${r.cuda.below} (exclusive)` : "+"}` : "any CUDA"}${r.failsWithCuda ? ` (fails with CUDA ${r.failsWithCuda.cuda.join(", ")})` : ""}${r.failsOnCapabilities ? ` (code that fails on ${r.failsOnCapabilities.capabilities.join(", ")}: dropped there)` : ""}`),
    })),
    gpus: gpuReference(p),
    header: GENERATED_HEADER,
    systems: [...new Set(p.variants.map((v) => v.system))].sort(),
    caches: cacheDocs(p),
  };
  files.set("BUILD_MATRIX.md", templates().render("BUILD_MATRIX.md.njk", ctx));
  for (const page of pages)
    files.set(`docs/matrix/${page.slug}.md`, templates().render("matrix-page.md.njk", { ...ctx, page }));
  return files;
}

/**
 * Render every generated file of a project, the Nix checks' bundle and facts among them (render/checker.ts: they
 * depend on the generator's sources and the catalog with its local-catalog.json).
 * @throws Error when the checker's sources do not bundle.
 */
export function renderAll(p: Project): FileMap {
  const files: FileMap = new Map();
  for (const v of p.variants) files.set(v.file, renderVariant(v));
  files.set("pkgs/variants.nix", renderVariantsData(p));
  files.set(CHECKER_FACTS_FILE, renderCheckerFacts(p.catalog));
  files.set(CHECKER_BUNDLE_FILE, renderCheckerBundle());
  files.set("release.nix", renderRelease(p));
  files.set("flake.nix", renderFlake(p));
  files.set("flake.lock", renderFlakeLock(p));
  files.set(".flox/env/manifest.toml", renderManifest(p));
  files.set(".flox/env/manifest.lock", renderManifestLock(p));
  files.set(".flox/env.json", renderFloxEnvJson());
  files.set(".flox/.gitignore", renderFloxGitignore());
  for (const [k, v] of renderDocs(p)) files.set(k, v);
  return files;
}

/** How a release turns capabilities into device code, in words (BUILD_MATRIX's reference; catalog/packages.ts DeviceTargets). */
function targetsWords(r: OnTorchRelease): string {
  const t = r.targets ?? { kind: "torchArchList" as const };
  if (t.kind === "torchArchList") return "TORCH_CUDA_ARCH_LIST: the capabilities exactly, no PTX";
  if (t.kind === "ownList")
    return `its own ${t.variable} (${t.tokens.map((k) => `${k.token} from CUDA ${k.minCuda}`).join(", ")}; a capability gets the token of its major at or below it), no PTX`;
  if (t.kind === "supportedArchs")
    return `-D${t.archFlag} and -D${t.dotlessFlag}: its own CUDA_SUPPORTED_ARCHS per CUDA (${t.eras.map((e) => `${e.minCuda}${e.belowCuda ? `–${e.belowCuda}` : "+"}: ${e.archs.join(" ")}${e.family ? ", family f targets" : ""}`).join("; ")}; a capability gets the listed entry of its major at or below it), no PTX`;
  const where = t.ptxIn?.where === "relocatable" ? " (in the relocatable fatbin: cuobjdump -all)" : "";
  return `-D${t.flag}=<capabilities without dots>: SASS for each${t.ptxForHighest ? `, PTX for the highest${where}` : ""}`;
}
