/**
 * `variant-matrix ci github|hydra`: a GitHub Actions workflow or a Hydra jobset spec for every variant.
 */
import { UsageError } from "../errors.ts";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { resolve } from "node:path";
import { FILTER_OPTION } from "../matrix/filters.ts";
import { project, runOf } from "./shared.ts";
import { matrixOption, type OptionTypes } from "./options.ts";
import { REPEATABLE } from "../constants.ts";

/** The positional of `ci`: which CI. */
const enginePositional = {
  engine: { choices: ["github", "hydra"], demandOption: true, describe: "github: a GitHub Actions workflow; hydra: a declarative Hydra jobset spec" },
} as const;

/** The options of `ci` (yargs), the shared ones defined once in options.ts. */
const ciOptions = {
  output: { alias: "o", type: "string", describe: "file to write (default: stdout)" },
  "runs-on": {
    ...REPEATABLE,
    describe:
      "github: SYSTEM=self-hosted,LABEL... the self-hosted runner labels of a system's torch builds " +
      "(default self-hosted,linux,X64 / self-hosted,linux,ARM64); labels without self-hosted are refused",
  },
  "hosted-cpu": {
    type: "boolean",
    describe: "github: CPU-only variants whose ISA GitHub's hosted runner runs go to ubuntu-24.04 / ubuntu-24.04-arm (360-minute cap)",
  },
  checks: {
    type: "boolean",
    describe: "github: write the nightly workflow that runs pin check and eval against the real nixpkgs instead",
  },
  filter: { ...FILTER_OPTION, describe: `github: only these variants; ${FILTER_OPTION.describe}` },
  repo: { type: "string", describe: "hydra: the git URL Hydra fetches this repository from" },
  branch: { type: "string", default: "main", describe: "hydra: branch" },
  ...matrixOption,
} as const;

/** The yargs command module `ci <engine>`; generator/cli.ts registers it. */
export const ciCommand: CommandModule<object, OptionTypes<typeof enginePositional & typeof ciOptions>> = {
  command: "ci <engine>",
  describe: "write a CI definition for every variant: github (Actions workflow) or hydra (declarative jobset spec)",
  builder: (y: Argv<object>) => y.positional("engine", enginePositional.engine).options(ciOptions),
  handler: async (argv: ArgumentsCamelCase<OptionTypes<typeof enginePositional & typeof ciOptions>>) => {
    const { checksWorkflowYaml, githubWorkflowYaml, hydraSpec } = await import("../generate/ci.ts");
    let text: string;
    if (argv.checks && argv.engine !== "github") throw new UsageError("--checks writes a GitHub Actions workflow: use ci github --checks");
    if (argv.checks) text = checksWorkflowYaml();
    else if (argv.engine === "github") {
      const [p, { selectTargets }] = await Promise.all([project(argv.matrix), import("../driver/targets.ts")]);
      const chosen = selectTargets(p.variants, { filters: argv.filter }).targets;
      const runsOn: Record<string, string[]> = {};
      for (const spec of argv.runsOn ?? []) {
        const eq = spec.indexOf("=");
        if (eq < 1) throw new UsageError(`--runs-on "${spec}": expected SYSTEM=LABEL[,LABEL...], e.g. aarch64-linux=self-hosted,linux,ARM64`);
        runsOn[spec.slice(0, eq)] = spec.slice(eq + 1).split(",").filter(Boolean);
      }
      text = githubWorkflowYaml(chosen, { runsOn, hostedCpu: argv.hostedCpu, isas: p.catalog.isas });
    } else {
      if (!argv.repo) throw new UsageError("ci hydra needs --repo URL (the git URL Hydra fetches this repository from)");
      text = JSON.stringify(hydraSpec({ repo: argv.repo, branch: argv.branch }), null, 2) + "\n";
    }
    if (argv.output) {
      const { writeOutputFile } = await import("../output-file.ts");
      await writeOutputFile(resolve(process.cwd(), argv.output), text);
      runOf(argv).io.err(`wrote ${argv.output}\n`);
    } else runOf(argv).io.out(text);
  },
};

