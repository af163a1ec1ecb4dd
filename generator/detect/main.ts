/**
 * Private entry point for `detect` alone (tests run it as a child process; generator/cli.ts is the real CLI):
 *
 *   npx tsx generator/detect/main.ts detect --cpuinfo FILE --nvidia-smi FILE --json
 *
 * yargs usage errors (unknown option, missing value) exit 2 like every other bad input.
 */
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { detectCommand } from "./command.ts";

await yargs(hideBin(process.argv))
  .scriptName("variant-matrix")
  .command(detectCommand)
  .demandCommand(1)
  .strict()
  .fail((msg, err) => {
    if (err && !msg) throw err; // a bug, not bad input: keep the stack trace
    process.stderr.write(`detect: ${msg ?? err?.message}\n`);
    process.exit(2);
  })
  .parseAsync();
