/**
 * fleet's cost model without recorded builds uses the build plan's own estimate (model/plan.ts estimateBuild), not a
 * flat figure per package (issue 55): a CPU-only torch costs what `build --dry-run` says (the model's CPU figure), a
 * CUDA torch the model's one-capability figure, any other package the catalog's; fleet's text names the model.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { fit, predict } from "../generator/fleet/cost.ts";
import { DEFAULT_BUILD_SECONDS, estimateBuild, TORCH_BUILD_MODEL } from "../generator/model/plan.ts";
import { HOSTS } from "./helpers/host-model.ts";
import { runMain } from "./helpers/main.ts";

test("predict without samples: the plan's estimate for torch (CPU-only and CUDA differ), the catalog figure for the rest", () => {
  const none = fit([]);
  const cpu = predict(none, { package: "pytorch", cuda: null, cudaCapabilities: [] });
  const cuda = predict(none, { package: "pytorch", cuda: "12.8", cudaCapabilities: ["9.0"] });
  assert.is(cpu.from, "default");
  assert.is(cpu.seconds, estimateBuild({ package: "pytorch", cuda: null, cudaCapabilities: [] }, null)!.seconds);
  assert.is(cpu.seconds, TORCH_BUILD_MODEL.cpuSeconds);
  // #183931's figure, 49 min on 48 cores, at the model's reference cores: the same core-seconds.
  assert.is(cpu.seconds * TORCH_BUILD_MODEL.referenceCores, 49 * 60 * 48);
  assert.is(cuda.seconds, TORCH_BUILD_MODEL.cudaOneCapabilitySeconds);
  assert.ok(cpu.seconds < cuda.seconds, "a CPU-only torch is not costed as a CUDA one");
  const two = predict(none, { package: "pytorch", cuda: "12.8", cudaCapabilities: ["9.0", "10.0"] });
  assert.ok(two.seconds > cuda.seconds, "each capability adds device code to compile");
  assert.is(predict(none, { package: "torchvision", cuda: "12.8", cudaCapabilities: ["9.0"] }).seconds, DEFAULT_BUILD_SECONDS.torchvision!.seconds);
});

test("fleet without reports names the plan's model for torch in its default table", async () => {
  const r = await runMain(["fleet", join(HOSTS, "epyc-nogpu"), "--logs-dir", join(HOSTS, "no-such-logs"), "--verbose"]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout.replace(/\s+/g, " "), new RegExp(`pytorch: the build plan's model at ${TORCH_BUILD_MODEL.referenceCores} cores, CUDA 1\\.75 h for one capability .*CPU-only 49 min at 48 cores, 98 min at ${TORCH_BUILD_MODEL.referenceCores} \\(pytorch\\/pytorch#183931`));
});

test.run();
