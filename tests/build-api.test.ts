/**
 * `build` as a library (generator/driver/build.ts): planBuild returns the plan as data and prints nothing; its refusals
 * are thrown, not printed. The CLI's own behaviour is build.test.ts's (the same plan through commands/build-main.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { planBuild } from "../generator/driver/build.ts";
import { SelectionError } from "../generator/driver/targets.ts";
import { parseNixOptions } from "../generator/commands/shared.ts";
import { BUILD_MATRIX, FIXTURES } from "./helpers/driver.ts";
import { tempDir } from "./helpers/cli.ts";

const PT_ARM = "pytorch-python313-cuda12_8-sm121-armv9";
const TA_ARM = "torchaudio-python313-cuda12_8-sm121-armv9";

/** planBuild's options for a dry run of `names` over the fixtures, in a fresh directory. */
function options(names: string[]) {
  const dir = tempDir("vm-build-api-");
  const args = {
    names,
    dryRun: true,
    backend: "nix" as const,
    pkgsDir: FIXTURES,
    matrix: BUILD_MATRIX,
    outDir: join(dir, "out"),
    logsDir: join(dir, "logs"),
    nixOption: ["substituters="],
  };
  return { args, projectRoot: dir, parseNixOptions, width: 80 };
}

/** Run `work` with stdout and stderr recorded instead of written. */
async function quiet<T>(work: () => Promise<T>): Promise<{ value: T | undefined; error: unknown; written: string }> {
  const [out, err] = [process.stdout.write, process.stderr.write];
  let written = "";
  const record = (s: string | Uint8Array) => ((written += String(s)), true);
  process.stdout.write = record;
  process.stderr.write = record;
  try {
    return { value: await work(), error: undefined, written };
  } catch (error) {
    return { value: undefined, error, written };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

test("planBuild: a dry run's plan as data (selection closed over dependsOn, order, rows), nothing printed", async () => {
  const warnings: string[] = [];
  const { value: p, error, written } = await quiet(() => planBuild({ ...options([TA_ARM]), onWarning: (t) => warnings.push(t) }));
  assert.is(error, undefined);
  assert.is(written, "");
  assert.equal(warnings, []);
  // The selection closed over dependsOn, and each variant's static check after it (build proves by default).
  const checks = [PT_ARM, TA_ARM].map((n) => `check-static-${n}`);
  assert.equal(p!.selection.targets.map((t) => t.name).sort(), [PT_ARM, TA_ARM, ...checks].sort());
  assert.is(p!.selection.why.get(PT_ARM), "dependency");
  assert.equal(p!.plan.order.filter((n) => !n.startsWith("check-")), [PT_ARM, TA_ARM]);
  for (const [i, n] of [PT_ARM, TA_ARM].entries()) assert.ok(p!.plan.order.indexOf(checks[i]!) > p!.plan.order.indexOf(n), `${n}'s check after it`);
  assert.is(p!.instantiated, false, "a dry run without --ask-store does not instantiate for the driver");
  assert.equal(p!.evaluationFailures, []);
  // It asks Nix what it would build and fetch (issue 53, ask-nix.ts): real Nix over the stand-in files answers.
  assert.ok(p!.nixAnswer, "the plan says which answer it used");
  assert.is(p!.nixAnswer!.asked, true, JSON.stringify(p!.nixAnswer));
  assert.ok(p!.store instanceof Map);
  assert.equal(p!.dryRun!.rows.rows.filter((r) => r.check === null).map((r) => r.name), [PT_ARM, TA_ARM]);
  assert.equal(p!.dryRun!.rows.rows.filter((r) => r.check !== null).map((r) => r.name).sort(), [...checks].sort());
  assert.is(p!.options.backend, "nix");
  // --ask-nix-timeout 0: Nix is not asked, the model stands, and the plan says why.
  const o = options([TA_ARM]);
  const { value: m } = await quiet(() => planBuild({ ...o, args: { ...o.args, askNixTimeout: 0 } }));
  assert.is(m!.store, undefined);
  assert.equal(m!.nixAnswer, { asked: false, why: "--ask-nix-timeout 0" });
});

test("planBuild: an unknown name is thrown (SelectionError, exit 2), never printed", async () => {
  const { error, written } = await quiet(() => planBuild(options(["pytorch-nope"])));
  assert.instance(error, SelectionError);
  assert.match((error as Error).message, /unknown variant/);
  assert.is(written, "");
});

test.run();
