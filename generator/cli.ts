/**
 * variant-matrix command line (yargs): generate, list, explain, build, detect.
 *
 * Exit codes: 0 success; 1 a check failed (generate --check found drift, explain found no such variant,
 * a build failed); 2 bad input (invalid matrix.ts, bad filter, unknown name); 130 interrupted.
 */
import yargs, { type Argv, type CommandModule } from "yargs";
import { hideBin } from "yargs/helpers";
import { resolve } from "node:path";
// Only light modules load at start; each command imports what it uses in its handler (fast --help, list, explain).
import { EXIT, exitCodeOf, InputError } from "./errors.ts";
import { checkFilterValues, FILTER_OPTION, matchFilters, parseFilters } from "./filters.ts";
import { REPO_ROOT } from "./paths.ts";
import type { Project } from "./project.ts";
import type { Variant, VariantJson } from "./schema.ts";
import { buildCommand } from "./driver/command.ts";
import { detectCommand } from "./detect/command.ts";
import { verifyCommand } from "./verify/command.ts";
import { evalCommand } from "./driver/eval-command.ts";
import { fleetCommand } from "./fleet/command.ts";

/** Thrown for bad command-line input; exits 2 with its message. */
export class UsageError extends InputError {}

const matrixOption = {
  matrix: { type: "string", describe: "matrix file to read (default: matrix.ts in the repository root)" },
} as const;

/** Load the project, turning a bad matrix into exit 2 with the field paths and allowed values. */
async function project(matrix?: string): Promise<Project> {
  const { loadProject } = await import("./project.ts");
  return loadProject({ matrixFile: matrix ? resolve(process.cwd(), matrix) : undefined });
}

/** The `list --json` contract of DESIGN.md for one variant. */
export function variantJson(v: Variant): VariantJson {
  return {
    name: v.name,
    package: v.package,
    version: v.version,
    torchVersion: v.torchVersion,
    python: v.python,
    cuda: v.cuda,
    sm: v.sm,
    isa: v.isa,
    system: v.system,
    cudaCapabilities: v.cudaCapabilities,
    cflags: v.cflags,
    nixpkgs: v.nixpkgs,
    dependsOn: v.dependsOn,
    file: v.file,
    notes: v.notes,
  };
}

/** Warn about generated files git does not track: `flox build` evaluates a store copy of tracked files only. */
async function warnUntracked(root: string, files: string[]): Promise<void> {
  // node:child_process rather than zx here, on purpose: `generate` runs on every edit of matrix.ts and loading zx
  // costs about 15 ms of its start-up for one short, argument-array git call (bench/cli.ts).
  const { execFile } = await import("node:child_process");
  const out = await new Promise<string | null>((res) =>
    execFile("git", ["ls-files", "-z", "--", ".flox", "pkgs"], { cwd: root, maxBuffer: 64 << 20 }, (err, stdout) => res(err ? null : stdout)),
  );
  if (out === null) return; // not a git checkout (or no git): nothing to say
  const tracked = new Set(out.split("\0").filter(Boolean));
  const untracked = files.filter((f) => (f.startsWith(".flox/") || f.startsWith("pkgs/")) && !tracked.has(f));
  if (untracked.length)
    console.error(
      `warning: ${untracked.length} generated file(s) are not git-tracked, and flox build sees only tracked files:` +
        ` run \`git add .flox pkgs\` (first: ${untracked.slice(0, 3).join(", ")})`,
    );
}

const generate: CommandModule<{}, { check: boolean; matrix?: string; out?: string }> = {
  command: "generate",
  describe: "write .flox/pkgs/*.nix, .flox/env/manifest.toml, BUILD_MATRIX.md and docs/matrix/ from matrix.ts",
  builder: (y) =>
    y
      .option("check", { type: "boolean", default: false, describe: "change nothing; exit 1 naming the files that differ" })
      .options(matrixOption)
      .option("out", { type: "string", describe: "directory to write into (default: the repository root)" }),
  handler: async (argv) => {
    const root = argv.out ? resolve(process.cwd(), argv.out) : REPO_ROOT;
    const matrixFile = argv.matrix ? resolve(process.cwd(), argv.matrix) : resolve(REPO_ROOT, "matrix.ts");
    const stamp = await import("./stamp.ts");
    if (!argv.check) {
      const s = stamp.upToDate(root, matrixFile);
      if (s.upToDate) {
        console.log(`nothing to write: ${s.files} generated files already up to date (inputs unchanged since the last generate)`);
        return;
      }
    }
    const [p, { renderAll }, { syncFiles }, { isSingleFileMatrix }] = await Promise.all([
      import("./project.ts").then((m) => m.loadProject({ matrixFile })),
      import("./render/index.ts"),
      import("./write.ts"),
      import("./load-matrix.ts"),
    ]);
    const files = renderAll(p);
    const r = await syncFiles(root, files, { check: argv.check });
    const changes = [...r.written.map((f) => `  ${argv.check ? "differs" : "wrote"}: ${f}`), ...r.removed.map((f) => `  ${argv.check ? "stale" : "removed"}: ${f}`)];
    if (argv.check) {
      if (changes.length) {
        console.error(`generated files are out of date with ${p.matrixFile}; run \`npm run generate\`:`);
        console.error(changes.slice(0, 50).join("\n") + (changes.length > 50 ? `\n  ... and ${changes.length - 50} more` : ""));
        process.exitCode = 1;
      } else console.log(`up to date: ${files.size} generated files match ${p.matrixFile}`);
      return;
    }
    stamp.writeStamp(root, matrixFile, files.keys(), isSingleFileMatrix(matrixFile));
    if (!changes.length) console.log(`nothing to write: ${files.size} generated files already up to date`);
    else {
      if (changes.length <= 20) console.log(changes.join("\n"));
      console.log(
        `${r.written.length} written, ${r.removed.length} stale removed, ${r.unchanged} unchanged ` +
          `(${p.variants.length} package variants, ${p.excluded.length} dropped; see BUILD_MATRIX.md)`,
      );
    }
    await warnUntracked(root, [...files.keys()]);
  },
};

const list: CommandModule<{}, { json: boolean; excluded: boolean; filter?: string[]; matrix?: string }> = {
  command: "list",
  describe: "list package variants (or, with --excluded, dropped combinations and their reasons)",
  builder: (y) =>
    y
      .option("json", { type: "boolean", default: false, describe: "print JSON (the list --json contract)" })
      .option("excluded", { type: "boolean", default: false, describe: "list dropped combinations with reasons" })
      .option("filter", FILTER_OPTION)
      .options(matrixOption),
  handler: async (argv) => {
    const filters = parseFilters(argv.filter);
    const p = await project(argv.matrix);
    if (argv.excluded) {
      const ex = p.excluded.filter((e) =>
        matchFilters({ ...e, package: e.package, system: p.catalog.isas.find((i) => i.key === e.isa)!.system }, filters),
      );
      if (argv.json) console.log(JSON.stringify(ex.map((e) => ({ name: e.name, reasons: e.reasons })), null, 2));
      else for (const e of ex) console.log(`${e.name}\n${e.reasons.map((r) => `  - ${r}`).join("\n")}`);
      return;
    }
    checkFilterValues(filters, p.variants);
    const vs = p.variants.filter((v) => matchFilters(v, filters));
    if (argv.json) console.log(JSON.stringify(vs.map(variantJson), null, 2));
    else {
      const w = Math.max(0, ...vs.map((v) => v.name.length));
      for (const v of vs)
        console.log(
          `${v.name.padEnd(w)}  ${v.system.padEnd(13)}  ${(v.cudaCapabilities.join(",") || "cpu").padEnd(5)}${v.binaryCompat ? " (binary-compatible)" : ""}`,
        );
      console.error(`${vs.length} of ${p.variants.length} package variants`);
    }
  },
};

const explain: CommandModule<{}, { name: string; json: boolean; matrix?: string }> = {
  command: "explain <name>",
  describe: "show a variant's resolved parameters and notes, or why a name is dropped and the nearest names that exist",
  builder: (y) =>
    y
      .positional("name", { type: "string", demandOption: true, describe: "package variant name" })
      .option("json", { type: "boolean", default: false })
      .options(matrixOption),
  handler: async (argv) => {
    const [p, { explainName }] = await Promise.all([project(argv.matrix), import("./explain.ts")]);
    const e = explainName(argv.name, p);
    if (argv.json) {
      console.log(JSON.stringify(e.kind === "variant" ? { kind: e.kind, ...e.variant } : e, null, 2));
    } else if (e.kind === "variant") {
      const v = e.variant;
      const rows: [string, string][] = [
        ["name", v.name],
        ["description", v.description],
        ["package", `${v.package} ${v.version} (PyTorch ${v.torchVersion}, torchaudio ${v.torchaudioVersion})`],
        ["system", v.system],
        ["python", `${v.python} (${v.pythonPackageSet})`],
        ["cuda", v.cuda ? `${v.cuda} (${v.cudaPackageSet})` : "none (CPU only)"],
        ["gpu", v.sm ? `SM${v.sm}` : "none"],
        ["TORCH_CUDA_ARCH_LIST", v.cudaCapabilities.join(";") || "(none)"],
        ["cudaCapabilities", `${JSON.stringify(v.cudaCapabilities)}${v.cudaCapabilitiesForPackageSet ? " (whole CUDA package set: config.cudaCapabilities)" : " (torch and the packages built on it; the CUDA set keeps nixpkgs' defaults)"}`],
        ["isa", `${v.isa}: ${v.cflags.join(" ")}`],
        ["nixpkgs", v.nixpkgs],
        ["nixpkgs sha256", v.nixpkgsSha256],
        ["systemFeatures", v.requiredSystemFeatures.join(" ") || "(none)"],
        ["file", v.file],
        ["dependsOn", v.dependsOn.join(", ") || "(none)"],
      ];
      for (const [k, val] of rows) console.log(`${k.padEnd(21)} ${val}`);
      for (const n of v.notes) console.log(`note: ${n}`);
    } else {
      const head = { excluded: "dropped", "not-in-matrix": "not in this matrix", unknown: "not a variant name" }[e.kind];
      console.log(`${e.name}: ${head}`);
      for (const r of e.reasons) console.log(`  - ${r}`);
      if (e.matrixChanges.length) console.log(`to add it, edit matrix.ts: ${e.matrixChanges.join("; ")}`);
      if (e.nearest.length) {
        console.log("nearest names that exist:");
        for (const s of e.nearest) console.log(`  ${s.name}  (${s.why})`);
      }
    }
    if (e.kind !== "variant") process.exitCode = 1;
  },
};

const ci: CommandModule<{}, { engine: string; output?: string; runsOn?: string[]; filter?: string[]; repo?: string; branch: string; matrix?: string }> = {
  command: "ci <engine>",
  describe: "write a CI definition for every variant: github (Actions workflow) or hydra (declarative jobset spec)",
  builder: (y) =>
    y
      .positional("engine", { choices: ["github", "hydra"] as const, demandOption: true })
      .option("output", { alias: "o", type: "string", describe: "file to write (default: stdout)" })
      .option("runs-on", { type: "string", array: true, describe: "github: SYSTEM=LABEL[,LABEL...] runner labels for a system" })
      .option("filter", { ...FILTER_OPTION, describe: `github: only these variants; ${FILTER_OPTION.describe}` })
      .option("repo", { type: "string", describe: "hydra: the git URL Hydra fetches this repository from" })
      .option("branch", { type: "string", default: "main", describe: "hydra: branch" })
      .options(matrixOption) as never,
  handler: async (argv) => {
    const { githubWorkflowYaml, hydraSpec } = await import("./ci.ts");
    let text: string;
    if (argv.engine === "github") {
      const [p, { selectTargets }] = await Promise.all([project(argv.matrix), import("./driver/targets.ts")]);
      const chosen = selectTargets(p.variants, { filters: argv.filter }).targets;
      const runsOn: Record<string, string[]> = {};
      for (const spec of argv.runsOn ?? []) {
        const eq = spec.indexOf("=");
        if (eq < 1) throw new UsageError(`--runs-on "${spec}": expected SYSTEM=LABEL[,LABEL...], e.g. aarch64-linux=self-hosted,arm64`);
        runsOn[spec.slice(0, eq)] = spec.slice(eq + 1).split(",").filter(Boolean);
      }
      text = githubWorkflowYaml(chosen, { runsOn });
    } else {
      if (!argv.repo) throw new UsageError("ci hydra needs --repo URL (the git URL Hydra fetches this repository from)");
      text = JSON.stringify(hydraSpec({ repo: argv.repo, branch: argv.branch }), null, 2) + "\n";
    }
    if (argv.output) {
      const { mkdirSync, writeFileSync } = await import("node:fs");
      const { dirname } = await import("node:path");
      const out = resolve(process.cwd(), argv.output);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, text);
      console.error(`wrote ${argv.output}`);
    } else process.stdout.write(text);
  },
};

/** Build the yargs parser (exported for tests). */
export function cli(args: string[]): Argv {
  return yargs(args)
    .scriptName("variant-matrix")
    .command(generate)
    .command(list)
    .command(explain)
    .command(buildCommand as CommandModule)
    .command(detectCommand as CommandModule)
    .command(evalCommand as CommandModule)
    .command(ci as CommandModule)
    .command(fleetCommand as CommandModule)
    .command(verifyCommand as CommandModule)
    .demandCommand(1, "name a command: generate, list, explain, build, eval, detect, fleet, ci, verify")
    .strict()
    .help()
    .alias("h", "help")
    .fail((msg, err) => {
      if (err) throw err;
      console.error(`error: ${msg}\nrun with --help for usage`);
      process.exit(EXIT.input);
    });
}

/** Entry point: runs the CLI; maps MatrixError / FilterError / UsageError to exit 2 with their message. */
export async function main(argv = hideBin(process.argv)): Promise<void> {
  // `variant-matrix list | head`: a closed pipe ends the output quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
  try {
    await cli(argv).parseAsync();
  } catch (e) {
    const exit = exitCodeOf(e);
    if (exit !== null) {
      console.error(`error: ${(e as Error).message}`);
      process.exitCode = exit;
      return;
    }
    // A path the user gave that cannot be written or read: say so plainly, no stack trace.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code && ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOTDIR", "EROFS", "EEXIST"].includes(code)) {
      console.error(`error: ${(e as Error).message}`);
      process.exitCode = EXIT.input;
      return;
    }
    throw e;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) await main();
