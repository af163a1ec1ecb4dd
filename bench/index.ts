/** `npm run bench`: every benchmark in one run, each printing ratios measured side by side. */
import { main as generate } from "./generate.ts";
import { main as schedule } from "./schedule.ts";
import { main as evaluate } from "./eval.ts";
import { main as cli } from "./cli.ts";
import { main as startup } from "./startup.ts";
import { main as expand } from "./expand.ts";
import { main as caches } from "./caches.ts";
import { main as buildLog } from "./build-log.ts";
import { main as dryRun } from "./dry-run.ts";
import { main as verify } from "./verify.ts";
import { main as badInput } from "./bad-input.ts";
import { main as evalProof } from "./eval-proof.ts";
import { main as attribute } from "./attribute.ts";

await expand();
await cli();
await startup();
await generate();
await schedule();
await evaluate();
await caches();
await buildLog();
await dryRun();
await verify();
await badInput();
await evalProof();
await attribute();
