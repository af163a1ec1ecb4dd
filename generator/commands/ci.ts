/**
 * `variant-matrix ci github|hydra`: a GitHub Actions workflow or a Hydra jobset spec for every variant.
 */
import type { CommandModule } from "yargs";
import { resolve } from "node:path";
import { checkFilterValues, FILTER_OPTION, matchFilters, parseFilters } from "../filters.ts";
import { REPO_ROOT } from "../paths.ts";
import { project, UsageError, variantJson, warnUntracked } from "./shared.ts";
import { matrixOption } from "./options.ts";
import { REPEATABLE } from "../constants.ts";

interface CiArgs {
  engine: string;
  output?: string;
  runsOn?: string[];
  hostedCpu?: boolean;
  checks?: boolean;
  filter?: string[];
  repo?: string;
  branch: string;
  matrix?: string;
}

export const ciCommand: CommandModule<{}, CiArgs> = {
  command: "ci <engine>",
  describe: "write a CI definition for every variant: github (Actions workflow) or hydra (declarative jobset spec)",
  builder: (y) =>
    y
      .positional("engine", { choices: ["github", "hydra"] as const, demandOption: true, describe: "github: a GitHub Actions workflow; hydra: a declarative Hydra jobset spec" })
      .option("output", { alias: "o", type: "string", describe: "file to write (default: stdout)" })
      .option("runs-on", {
        ...REPEATABLE,
        describe:
          "github: SYSTEM=self-hosted,LABEL... the self-hosted runner labels of a system's torch builds " +
          "(default self-hosted,linux,X64 / self-hosted,linux,ARM64); labels without self-hosted are refused",
      })
      .option("hosted-cpu", {
        type: "boolean",
        describe: "github: CPU-only variants whose ISA GitHub's hosted runner runs go to ubuntu-24.04 / ubuntu-24.04-arm (360-minute cap)",
      })
      .option("checks", {
        type: "boolean",
        describe: "github: write the nightly workflow that runs pin check and eval against the real nixpkgs instead",
      })
      .option("filter", { ...FILTER_OPTION, describe: `github: only these variants; ${FILTER_OPTION.describe}` })
      .option("repo", { type: "string", describe: "hydra: the git URL Hydra fetches this repository from" })
      .option("branch", { type: "string", default: "main", describe: "hydra: branch" })
      .options(matrixOption) as never,
  handler: async (argv) => {
    const { checksWorkflowYaml, githubWorkflowYaml, hydraSpec } = await import("../ci.ts");
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
      console.error(`wrote ${argv.output}`);
    } else process.stdout.write(text);
  },
};

