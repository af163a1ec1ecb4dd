/**
 * Standalone entry for the build driver (development and tests): `node --import tsx generator/driver/main.ts build …`.
 * The project CLI (`generator/cli.ts`) registers the same `buildCommand`.
 */
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { buildCommand } from "./command.ts";

await yargs(hideBin(process.argv))
  .scriptName("variant-matrix")
  .command(buildCommand)
  .demandCommand(1)
  .strict()
  .showHelpOnFail(false)
  .help()
  .parseAsync();
