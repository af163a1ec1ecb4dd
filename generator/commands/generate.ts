/**
 * `variant-matrix generate`: write the generated files from matrix.ts (or, with --check, compare them).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { resolve } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import { printer, runOf, terminalWidth, type Io } from "./shared.ts";
import { matrixOption, type OptionTypes } from "./options.ts";
import { wrap } from "../text.ts";
import { errorLine } from "../errors.ts";
import type { SyncProgress } from "../generate/write.ts";
import type { GenerateOptions, GeneratePlan, GenerateResult } from "../generate/generate.ts";

/** The options of `generate` (yargs), the shared ones defined once in options.ts. */
const generateOptions = {
  check: { type: "boolean", default: false, describe: "change nothing; exit 1 naming the files that differ" },
  ...matrixOption,
  out: { type: "string", describe: "directory to write into (default: the repository root)" },
} as const;

/** The yargs command module `generate`; generator/cli.ts registers it. Sets its run's exit status (1: --check found a difference). */
export const generateCommand: CommandModule<object, OptionTypes<typeof generateOptions>> = {
  command: "generate",
  describe: "write .flox/pkgs/*.nix, .flox/env/manifest.toml, BUILD_MATRIX.md and docs/matrix/ from matrix.ts",
  builder: (y: Argv<object>) => y.options(generateOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof generateOptions>>) => {
    const run = runOf(argv);
    const { io } = run;
    const root = argv.out ? resolve(process.cwd(), argv.out) : REPO_ROOT;
    const matrixFile = argv.matrix ? resolve(process.cwd(), argv.matrix) : resolve(REPO_ROOT, "matrix.ts");
    const write = await import("../generate/write.ts");
    // One generate at a time per output directory: a second one waits, then finds the tree current.
    const release = await write.lockOutput(root, {
      onWait: (pid, file) => io.err(`variant-matrix: another generate (pid ${pid}) is writing this tree; waiting for it to finish (lock: ${file})\n`),
    });
    // SIGINT and SIGTERM while it runs: a sync in progress stops starting writes, lets the ones in flight end and
    // removes its temporaries (write.ts SyncInterrupted); then the lock is released and one line says how far it got
    // (the next generate finishes the tree); exit 128 + the signal's number, returned through main. A signal while no
    // sync runs, or a second one, ends the process at once (CommandRun.exitNow: the one path that does not return).
    const progress: SyncProgress = { done: 0, total: 0, temporaries: new Set() };
    const interrupted = (signal: NodeJS.Signals, done: number, total: number): number => {
      write.removeTemporaries(progress);
      release();
      io.err(
        errorLine(
          done === 0
            ? `generate interrupted (${signal}) before writing anything; the generated files are as they were`
            : `generate interrupted (${signal}) after writing ${done} of ${total} changed files; the generated files are partly ` +
                `updated (each file whole, old or new; no temporaries left): run \`npm run generate\` again to finish`,
        ),
      );
      return 128 + (signal === "SIGINT" ? 2 : 15);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (progress.running && !progress.interrupted) progress.interrupted = signal;
      else run.exitNow(interrupted(signal, progress.done, progress.total));
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      run.exitCode = await generateLocked(argv, { root, matrixFile, check: argv.check }, progress);
    } catch (e) {
      if (!(e instanceof write.SyncInterrupted)) throw e;
      run.exitCode = interrupted(e.signal, e.done, e.total);
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      release();
    }
  },
};

/**
 * generate's work, holding the output's lock: plan (generate/generate.ts planGenerate: the one comparison), run
 * (write what differs), and print to its run's io (runOf(argv)). @returns the exit status (1: --check found a difference)
 */
async function generateLocked(argv: { check: boolean }, o: GenerateOptions, progress: SyncProgress): Promise<number> {
  const { io } = runOf(argv);
  const print = printer(io);
  const { planGenerate, runGenerate } = await import("../generate/generate.ts");
  const plan = await planGenerate(o);
  for (const w of plan.warnings) print.err(wrap(w, terminalWidth(io), { indent: "warning: ", hang: "  " }));
  const count = plan.freshness.compared;
  if (plan.freshness.current && !plan.rendered) {
    print.out(o.check ? `up to date: ${count} generated files match ${o.matrixFile}` : `nothing to write: ${count} generated files already up to date (inputs unchanged since the last generate)`);
    return 0;
  }
  const r = await runGenerate(plan, progress);
  const changes = [
    ...r.written.map((f) => `  ${o.check ? "differs" : "wrote"}: ${f}`),
    ...r.removed.map((f) => `  ${o.check ? "stale" : "removed"}: ${f}`),
    ...r.temporaries.map((f) => `  ${o.check ? "temporary" : "removed temporary"}: ${f}`),
  ];
  if (o.check) {
    if (changes.length) {
      const { freshnessReason } = await import("../generate/freshness.ts");
      io.err(errorLine(`generated files are out of date with ${o.matrixFile} (${freshnessReason(plan.freshness, o.matrixFile)}); run \`npm run generate\`:`));
      print.err(changes.slice(0, 50).join("\n") + (changes.length > 50 ? `\n  ... and ${changes.length - 50} more` : ""));
      return 1;
    }
    print.out(`up to date: ${count} generated files match ${o.matrixFile}`);
    return 0;
  }
  printWritten(r, plan, io);
  if (r.untracked?.length)
    io.err(
      `warning: ${r.untracked.length} generated file(s) are not git-tracked, and flox build sees only tracked files:` +
        ` run \`git add .flox pkgs\` (first: ${r.untracked.slice(0, 3).join(", ")})\n`,
    );
  return 0;
}

/** What a writing generate did: the changes (up to 20), the counts, renamed variant files, packages without a variant. */
function printWritten(r: GenerateResult, plan: GeneratePlan, io: Io): void {
  const print = printer(io);
  const note = (text: string) => print.out(wrap(text, terminalWidth(io), { indent: "note: ", hang: "  " }));
  const { project, files } = plan.rendered!;
  const changes = [...r.written.map((f) => `  wrote: ${f}`), ...r.removed.map((f) => `  removed: ${f}`), ...r.temporaries.map((f) => `  removed temporary: ${f}`)];
  if (!changes.length) print.out(`nothing to write: ${files.size} generated files already up to date`);
  else {
    if (changes.length <= 20) print.out(changes.join("\n"));
    print.out(
      `${r.written.length} written, ${r.removed.length} stale removed, ${r.unchanged} unchanged ` +
        `(${project.variants.length} package variants, ${project.excluded.length} dropped; see BUILD_MATRIX.md)`,
    );
  }
  if (r.renamed.length)
    note(
      `${r.renamed.length} variant file(s) renamed, not dropped: with more than one PyTorch release each name carries ` +
        `its release (e.g. ${r.renamed[0]![0]} is now ${r.renamed[0]![1]}); update what installs or builds them by name.`,
    );
  for (const w of r.withoutVariant)
    note(
      `no variant of ${w.package} (asked for in packages; ${w.dropped} combination(s) dropped): ${w.reason} ` +
        `See \`variant-matrix list --excluded --filter package=${w.package}\`.`,
    );
}
