/**
 * `variant-matrix pin inspect|check|add|cache`: read a nixpkgs pin's facts with the user's own Nix, compare the
 * catalog's pins with them, add a pin the built-in catalog does not know to the local catalog (local-catalog.json
 * beside matrix.ts), and ask a binary cache whether it holds what the cache model says it holds. This file parses the
 * options and prints; each action's work is one call of generator/pin/run.ts, which returns data.
 *
 *   pin inspect REV|PATH [--json] [--system S] [--rev REV] [--url URL]
 *   pin check [--nixpkgs REV=PATH ...] [--also REV|PATH ...] [--no-fetch] [--system S] [--json] [--matrix FILE]
 *   pin add REV|PATH [--rev REV] [--sha256 H] [--url URL] [--date YYYY-MM-DD] [--channel C] [--system S] [--matrix FILE]
 *   pin cache [--substituter URL] [--nixpkgs REV=PATH ...] [--no-fetch] [--nix-option K=V ...] [--json]
 *
 * Exit status: 0 done (check: every reachable pin agrees; cache: every answer agrees with the model); 1 check or
 * cache found a difference (or cache got no answer at a pin); 2 bad input, a Nix too old for the nixpkgs
 * (lib/minver.nix), a failed fetch or evaluation, or check or cache reached no pin at all.
 */
import { UsageError } from "../errors.ts";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { resolve } from "node:path";
import { LOCAL_CATALOG_FILE, REPEATABLE } from "../constants.ts";
import type { BesideCheck } from "../pin/actions.ts";
import type { PinCacheReport, PinCheckReport, PinInspection } from "../pin/run.ts";
import { parseNixOptions, printer, runOf, type Io } from "./shared.ts";
import { matrixOption, nixOptions, outputOptions, type ArgsOf, type OptionTypes } from "./options.ts";
import { withArgumentRules } from "./arguments.ts";

/** A pin as the check and cache lines name it: "2c423e0 (torch 2.12.0, nixos-unstable 2026-08-22)". */
const pinHead = (pin: { rev: string; torch: string; channel: string | null; date: string | null }) =>
  `${pin.rev.slice(0, 7)} (torch ${pin.torch}${pin.channel ? `, ${pin.channel}` : ""}${pin.date ? ` ${pin.date}` : ""})`;

/** One block per catalog pin, each line to `out`: "– PIN: not checked: why" for an unreachable one, else the lines `checked` gives. */
function printPerPin<C extends { status: "checked" }, U extends { status: "unreachable"; why: string }>(
  results: readonly ((C | U) & { pin: { rev: string; torch: string; channel: string | null; date: string | null } })[],
  checked: (r: C, head: string) => string[],
  out: (line: string) => void,
): void {
  for (const r of results) {
    const head = pinHead(r.pin);
    if (r.status === "unreachable") out(`– ${head}: not checked: ${(r as U).why}`);
    else for (const l of checked(r as C, head)) out(l);
  }
}

/** Options the actions share (yargs option definitions), so each action's help lists its own. */
const OPT = {
  system: { type: "string", describe: "Nix system to evaluate for (default: this machine's)" },
  rev: { type: "string", describe: "the revision of a checkout without .git-revision or .git" },
  url: { type: "string", describe: "fetch the revision from this tarball URL (default: GitHub's archive of REV)" },
  nixpkgs: { ...REPEATABLE, describe: "REV=PATH: a checkout of a catalog pin, read instead of fetching it (repeatable)" },
  fetch: { type: "boolean", default: true, describe: "fetch pins not given with --nixpkgs (--no-fetch: only those given)" },
} as const;

/** The positional of inspect and add. */
const sourcePositional = {
  source: { type: "string", demandOption: true, describe: "a nixpkgs revision (40 hex, fetched) or a nixpkgs checkout directory" },
} as const;

const inspectOptions = {
  json: { ...outputOptions.json, describe: "print the facts as JSON" },
  system: OPT.system,
  extra: { ...REPEATABLE, describe: "also read this nixpkgs Python attribute in every Python set (an environment extra; repeatable)" },
  rev: OPT.rev,
  url: OPT.url,
} as const;

const checkOptions = {
  nixpkgs: OPT.nixpkgs,
  also: {
    ...REPEATABLE,
    describe:
      "REV|PATH: a nixpkgs that is not a catalog pin (yours: a revision, fetched, or a checkout), read beside the pins: " +
      "the torch it carries, and `pin add` when the catalog knows no release as new (repeatable)",
  },
  fetch: OPT.fetch,
  system: OPT.system,
  json: { ...outputOptions.json, describe: "print the comparison as JSON" },
  ...matrixOption,
} as const;

const addOptions = {
  rev: OPT.rev,
  sha256: { type: "string", describe: "the tarball hash, for a checkout (what nix-prefetch-url --unpack prints)" },
  url: OPT.url,
  date: { type: "string", describe: "the revision's commit date, YYYY-MM-DD" },
  channel: { type: "string", describe: "the channel it was taken from (nixos-unstable, nixos-26.05)" },
  system: OPT.system,
  ...matrixOption,
} as const;

const cacheOptions = {
  // Left out: pin/run.ts askCacheAtPins takes the catalog's NixOS-CUDA cache from the Catalog value.
  substituter: { type: "string", describe: "the binary cache whose contents are compared with the cache model (default: the catalog's NixOS-CUDA cache)" },
  nixpkgs: OPT.nixpkgs,
  fetch: OPT.fetch,
  "nix-option": { ...nixOptions["nix-option"], describe: "NAME=VALUE passed to nix-store as --option NAME VALUE (e.g. require-sigs=false)" },
  system: OPT.system,
  json: { ...outputOptions.json, describe: "print the answers as JSON" },
  ...matrixOption,
} as const;

type InspectArgs = ArgsOf<typeof sourcePositional & typeof inspectOptions>;
type CheckArgs = ArgsOf<typeof checkOptions>;
type AddArgs = ArgsOf<typeof sourcePositional & typeof addOptions>;
type CacheArgs = ArgsOf<typeof cacheOptions>;

/** Parsed options of `pin ACTION`, as yargs infers them from that action's options, with `action` set. */
export type PinArgs =
  | (InspectArgs & { action: "inspect" })
  | (CheckArgs & { action: "check" })
  | (AddArgs & { action: "add" })
  | (CacheArgs & { action: "cache" });

/** The four actions as command modules, each with its own options and help; `run` gets the options with `action`. */
export function pinActions(run: (argv: PinArgs) => void | Promise<void>) {
  const inspect: CommandModule<object, OptionTypes<typeof sourcePositional & typeof inspectOptions>> = {
    command: "inspect <source>",
    describe: "read a nixpkgs pin's facts with your Nix: Python and CUDA sets, torch and its packages, static links",
    builder: (y: Argv<object>) => y.positional("source", sourcePositional.source).options(inspectOptions),
    handler: (argv: ArgumentsCamelCase<OptionTypes<typeof sourcePositional & typeof inspectOptions>>) => run({ ...argv, action: "inspect" }),
  };
  const check: CommandModule<object, OptionTypes<typeof checkOptions>> = {
    command: "check",
    describe: "compare every catalog pin's facts with what your Nix reads from that nixpkgs (exit 1 on a difference)",
    builder: (y: Argv<object>) => y.options(checkOptions),
    handler: (argv: ArgumentsCamelCase<OptionTypes<typeof checkOptions>>) => run({ ...argv, action: "check" }),
  };
  const add: CommandModule<object, OptionTypes<typeof sourcePositional & typeof addOptions>> = {
    command: "add <source>",
    describe: "add a nixpkgs pin the built-in catalog does not know to local-catalog.json beside matrix.ts",
    builder: (y: Argv<object>) => y.positional("source", sourcePositional.source).options(addOptions),
    handler: (argv: ArgumentsCamelCase<OptionTypes<typeof sourcePositional & typeof addOptions>>) => run({ ...argv, action: "add" }),
  };
  const cache: CommandModule<object, OptionTypes<typeof cacheOptions>> = {
    command: "cache",
    describe: "ask a binary cache whether it holds what the cache model says it holds, at every catalog pin (exit 1 on a difference)",
    builder: (y: Argv<object>) => y.options(cacheOptions),
    handler: (argv: ArgumentsCamelCase<OptionTypes<typeof cacheOptions>>) => run({ ...argv, action: "cache" }),
  };
  return [inspect, check, add, cache] as const;
}

/**
 * The `pin` command with its four actions, each a subcommand with its own options and help; `run` gets the parsed
 * options with `action` set (tests hand in a recorder).
 */
export function makePinCommand(run: (argv: PinArgs) => void | Promise<void> = runPin): CommandModule<object, object> {
  return {
    command: "pin <action>",
    describe:
      "read a nixpkgs pin's facts with your Nix (inspect), compare the catalog's pins with them (check), add a pin locally (add), " +
      "ask a binary cache whether it holds what the cache model says (cache); `pin ACTION --help` for each",
    builder: (y: Argv<object>) => {
      const [inspect, check, add, cache] = pinActions(run);
      return y
        .command(withArgumentRules(inspect, { depth: 2 }))
        .command(withArgumentRules(check, { depth: 2 }))
        .command(withArgumentRules(add, { depth: 2 }))
        .command(withArgumentRules(cache, { depth: 2 }))
        .demandCommand(1, "name an action: inspect, check, add or cache");
    },
    handler: () => {},
  };
}

/** The `pin` command as generator/cli.ts registers it: each action runs runPin. */
export const pinCommand = makePinCommand();

/** Run one pin action with its parsed options and set its run's exit status (see the file header for each action). */
async function runPin(argv: PinArgs): Promise<void> {
  const cmd = runOf(argv);
  cmd.exitCode = await pinAction(argv, cmd.io);
}

/** One pin action: its options to one call of pin/run.ts, what it returns printed to `io`. @returns the exit status (see the file header) */
async function pinAction(argv: PinArgs, io: Io): Promise<number> {
  if ((argv.action === "inspect" || argv.action === "add") && !argv.source) throw new UsageError(`pin ${argv.action} needs a source: a nixpkgs revision or checkout directory`);
  const out = printer(io).out;
  const pin = await import("../pin/run.ts");
  if (argv.action === "inspect") {
    const ins = await pin.inspectPin({ source: argv.source, rev: argv.rev, url: argv.url, system: argv.system, extras: argv.extra });
    printInspection(ins, argv, out, (await import("../pin/facts.ts")).show);
    return 0;
  }
  const reach = { matrixFile: argv.matrix ? resolve(process.cwd(), argv.matrix) : undefined, system: argv.system };
  if (argv.action === "add") {
    printAdded(await pin.addPin({ ...reach, source: argv.source, rev: argv.rev, url: argv.url, sha256: argv.sha256, date: argv.date, channel: argv.channel }), out);
    return 0;
  }
  if (argv.action === "cache") {
    const report = await pin.askCacheAtPins({ ...reach, nixpkgs: argv.nixpkgs, fetch: argv.fetch, substituter: argv.substituter, nixOptions: parseNixOptions(argv.nixOption) });
    printCache(report, argv.json, out);
    if (report.error) throw report.error;
    return report.differs ? 1 : 0;
  }
  const report = await pin.checkCatalogPins({ ...reach, nixpkgs: argv.nixpkgs, also: argv.also, fetch: argv.fetch });
  printCheck(report, argv.json, out);
  if (report.error) throw report.error;
  return report.differs ? 1 : 0;
}

/**
 * `pin inspect SOURCE`'s answer (lines to `out`): the facts, each with the expression it came from, or their JSON.
 * @param show how a fact's value is written (pin/facts.ts, loaded with the action)
 */
function printInspection(ins: PinInspection, argv: Pick<InspectArgs, "json" | "source">, out: (line: string) => void, show: (v: unknown) => string): void {
  const { source: src, facts: f, newerTorch: newer } = ins;
  if (argv.json) {
    out(JSON.stringify({ path: src.path, rev: src.rev, sha256: src.sha256, url: src.url, nixVersion: ins.nixVersion, system: ins.system, facts: f, newerTorch: newer }, null, 2));
    return;
  }
  const line = (label: string, value: unknown, expr: string) => out(`${label.padEnd(34)} ${show(value)}\n${"".padEnd(36)}← ${expr}`);
  out(`nixpkgs ${src.rev ?? "(revision unknown)"} at ${src.path}, read with Nix ${ins.nixVersion}${ins.system ? ` for ${ins.system}` : ""}`);
  if (src.sha256) out(`sha256 ${src.sha256}  (nix-prefetch-url --unpack ${src.url})`);
  line("default Python", f.defaultPython.value, f.defaultPython.expr);
  line("default CUDA", f.defaultCuda.value, f.defaultCuda.expr);
  for (const s of f.pythonSets) {
    line(`${s.set} torch`, s.torch.value, s.torch.expr);
    line(`${s.set} torchaudio`, s.torchaudio.value, s.torchaudio.expr);
    line(`${s.set} torchcodec`, s.torchcodec.value, s.torchcodec.expr);
    line(`${s.set} torchvision`, s.torchvision.value, s.torchvision.expr);
    for (const x of s.extras) line(`${s.set} ${x.attr}`, x.value ?? "absent", x.expr);
  }
  for (const s of f.cudaSets) {
    line(`${s.set} default capabilities`, s.defaultCapabilities.value, s.defaultCapabilities.expr);
    line(`${s.set} torch broken`, s.torchBroken.value, s.torchBroken.expr);
  }
  line("torch formals", f.torchFormals.value, f.torchFormals.expr);
  line("builder arguments torch lacks", f.builderArgsMissing.value, f.builderArgsMissing.expr);
  line("torch links NCCL statically", f.staticLinks.nccl.value, f.staticLinks.nccl.expr);
  line("torch links MAGMA statically", f.staticLinks.magma.value, f.staticLinks.magma.expr);
  line("torch links NVSHMEM statically", f.staticLinks.nvshmem.value, f.staticLinks.nvshmem.expr);
  line("torchaudio dependencies", f.torchaudioDependencies.value, f.torchaudioDependencies.expr);
  if (newer)
    out(
      `note: torch ${newer.torch} is newer than every PyTorch release the catalog knows (newest ${newer.newest}): ` +
        `\`variant-matrix pin add ${argv.source}\` records this pin and what it carries in ${LOCAL_CATALOG_FILE}`,
    );
}

/** `pin cache`'s answers (lines to `out`): per pin, each (Python, CUDA, input) cached or built beside the model's word, or their JSON. */
function printCache(report: PinCacheReport, json: boolean, out: (line: string) => void): void {
  const { results } = report;
  const word = (b: boolean) => (b ? "cached" : "built");
  if (json) out(JSON.stringify(results.map((r) => (r.status === "checked" ? { rev: r.pin.rev, status: r.status, where: r.where, answers: r.answers, notes: r.notes } : { rev: r.pin.rev, status: r.status, why: r.why })), null, 2));
  else
    printPerPin(results, (r, head) => {
      const bad = r.answers.filter((a) => a.cached !== a.modelCached);
      return [
        bad.length ? `✗ ${head}: ${bad.length} of ${r.answers.length} answers differ from the model` : `✓ ${head}: ${r.answers.length} answers agree with the model`,
        ...r.answers.map((a) => `    ${a.cached === a.modelCached ? "✓" : "✗"} python${a.python.replace(".", "")}Packages, CUDA ${a.cuda}: ${a.input} ${word(a.cached)} (model: ${word(a.modelCached)})`),
        ...r.notes.map((n) => `    note: ${n}`),
      ];
    }, out);
}

/** `pin check`'s answer (lines to `out`): per pin, the facts that agree or differ, then each nixpkgs read beside them; or their JSON. */
function printCheck(report: PinCheckReport, json: boolean, out: (line: string) => void): void {
  const { results, beside } = report;
  if (json) {
    const rows = [
      ...results.map((r) => (r.status === "checked" ? { status: r.status, where: r.where, ...r.comparison } : { rev: r.pin.rev, status: r.status, why: r.why })),
      ...beside.map((b) => ({ status: "beside", ...b })),
    ];
    out(JSON.stringify(rows, null, 2));
    return;
  }
  printPerPin(results, (r, head) => {
    const c = r.comparison;
    return [
      c.differences.length ? `✗ ${head}: ${c.differences.length} of ${c.compared} facts differ` : `✓ ${head}: ${c.compared} facts agree`,
      ...c.differences.map((d) => `    ${d.message}`),
      ...c.notes.map((n) => `    note: ${n}`),
    ];
  }, out);
  for (const b of beside) out(besideLine(b));
}

/** One line for a nixpkgs read beside the pins: its torch, and `pin add` when the catalog knows no release as new. */
function besideLine(b: BesideCheck): string {
  const what = `nixpkgs ${b.rev ?? b.source} (--also)`;
  if (b.newerTorch)
    return `note: ${what}: torch ${b.newerTorch.torch}, newer than every release the catalog knows (newest ${b.newerTorch.newest}): \`variant-matrix pin add ${b.source}\` brings it in`;
  return b.torch === null ? `– ${what}: no Python set has torch` : `✓ ${what}: torch ${b.torch}, a release the catalog knows`;
}

/** What `pin add` wrote (lines to `out`): the pin, a release it added, and how matrix.ts uses it. */
function printAdded({ entry, file }: Awaited<ReturnType<typeof import("../pin/run.ts").addPin>>, out: (line: string) => void): void {
  const p = entry.pin;
  out(`added nixpkgs ${p.rev} (torch ${p.torch}, torchaudio ${p.torchaudio}; Python ${p.python.join(", ")}; CUDA ${p.cuda.join(", ")}${Object.keys(p.brokenCuda).length ? `, torch broken with CUDA ${Object.keys(p.brokenCuda).join(", ")}` : ""}) to ${file}`);
  if (entry.torch) out(`added PyTorch ${entry.torch.version} (name tag ${entry.torch.nameTag}) to ${LOCAL_CATALOG_FILE}: Python and CUDA as nixpkgs builds it`);
  if (entry.torchaudio) out(`added torchaudio ${entry.torchaudio.version} to ${LOCAL_CATALOG_FILE}`);
  out(`use it in matrix.ts: releases: [{ torch: "${p.torch}", nixpkgs: "${p.rev}" }], then \`npm run generate\``);
}
