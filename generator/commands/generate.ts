/**
 * `variant-matrix generate`: write the generated files from matrix.ts (or, with --check, compare them).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { relative, resolve } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import { printer, runOf, terminalWidth, warnUntracked } from "./shared.ts";
import { matrixOption, type OptionTypes } from "./options.ts";
import { wrap } from "../text.ts";
import { errorLine, UsageError } from "../errors.ts";
import type { SyncProgress } from "../generate/write.ts";

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
      run.exitCode = await generateLocked(argv, root, matrixFile, progress);
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

/** generate's work, holding the output's lock, writing to its run's io (runOf(argv)). @returns the exit status (1: --check found a difference) */
async function generateLocked(argv: { check: boolean }, root: string, matrixFile: string, progress: SyncProgress): Promise<number> {
  // write.ts is loaded already (the handler's lock and SyncInterrupted): its import takes it from the module cache.
  const [stamp, write] = await Promise.all([import("../generate/stamp.ts"), import("../generate/write.ts")]);
  const { io } = runOf(argv);
  const print = printer(io);
  if (!argv.check) {
    const s = stamp.upToDate(root, matrixFile);
    if (s.upToDate) {
      print.out(`nothing to write: ${s.files} generated files already up to date (inputs unchanged since the last generate)`);
      return 0;
    }
  }
  const [p, { renderAll }, { isSingleFileMatrix }] = await Promise.all([
    import("../matrix/project.ts").then((m) => m.loadProject({ matrixFile })),
    import("../generate/render/index.ts"),
    import("../matrix/load-matrix.ts"),
  ]);
  // A matrix that yields no variant would delete every generated file and write `systems = []`: refuse (exit 2).
  const { noVariantMessage, packagesWithoutVariant } = await import("../matrix/matrix-yield.ts");
  const shown = relative(process.cwd(), p.matrixFile);
  const empty = noVariantMessage(p.variants, p.excluded, shown && !shown.startsWith("..") ? shown : p.matrixFile);
  if (empty) throw new UsageError(empty);
  // A typo in an environment's extras shows only when Nix evaluates the environment: say it now, with the extra the
  // catalog knows that it is close to.
  const { extraHints, extraHintText } = await import("../matrix/extra-hints.ts");
  for (const h of extraHints(p.catalog, p.matrix.environments)) print.err(wrap(extraHintText(h), terminalWidth(io), { indent: "warning: ", hang: "  " }));
  const files = renderAll(p);
  if (!argv.check) stamp.clearStamp(root);
  const r = await write.syncFiles(root, files, { check: argv.check, progress });
  const changes = [
    ...r.written.map((f) => `  ${argv.check ? "differs" : "wrote"}: ${f}`),
    ...r.removed.map((f) => `  ${argv.check ? "stale" : "removed"}: ${f}`),
    ...r.temporaries.map((f) => `  ${argv.check ? "temporary" : "removed temporary"}: ${f}`),
  ];
  if (argv.check) {
    if (changes.length) {
      io.err(errorLine(`generated files are out of date with ${p.matrixFile}; run \`npm run generate\`:`));
      print.err(changes.slice(0, 50).join("\n") + (changes.length > 50 ? `\n  ... and ${changes.length - 50} more` : ""));
      return 1;
    }
    print.out(`up to date: ${files.size} generated files match ${p.matrixFile}`);
    return 0;
  }
  stamp.writeStamp(root, matrixFile, files.keys(), isSingleFileMatrix(matrixFile));
  if (!changes.length) print.out(`nothing to write: ${files.size} generated files already up to date`);
  else {
    if (changes.length <= 20) print.out(changes.join("\n"));
    print.out(
      `${r.written.length} written, ${r.removed.length} stale removed, ${r.unchanged} unchanged ` +
        `(${p.variants.length} package variants, ${p.excluded.length} dropped; see BUILD_MATRIX.md)`,
    );
  }
  const { renamedFiles } = await import("../matrix/matrix-yield.ts");
  const renamed = renamedFiles(r.removed, r.written);
  if (renamed.length)
    print.out(
      wrap(
        `${renamed.length} variant file(s) renamed, not dropped: with more than one PyTorch release each name carries ` +
          `its release (e.g. ${renamed[0]![0]} is now ${renamed[0]![1]}); update what installs or builds them by name.`,
        terminalWidth(io),
        { indent: "note: ", hang: "  " },
      ),
    );
  for (const w of packagesWithoutVariant(p.matrix, p.variants, p.excluded))
    print.out(
      wrap(
        `no variant of ${w.package} (asked for in packages; ${w.dropped} combination(s) dropped): ${w.reason} ` +
          `See \`variant-matrix list --excluded --filter package=${w.package}\`.`,
        terminalWidth(io),
        { indent: "note: ", hang: "  " },
      ),
    );
  await warnUntracked(root, [...files.keys()], io.err);
  return 0;
}
