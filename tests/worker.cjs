// A test process that runs many files, one after another, as tests/run.mjs hands them out: it reads file names
// (relative to tests/) on stdin, one a line, and runs each as `uvu -r tsx tests '^FILE$'` would (tsx registered as
// uvu's `-r tsx` does, the file required, uvu's exec over its suites), printing uvu's own output for it, then the line
// `MARK FILE`, MARK being what run.mjs gives in VM_TEST_DONE_MARK. It ends when stdin ends. Starting Node, tsx and the generator's modules once per worker instead of
// once per file is what it is for; a file that cannot load prints its error and gets no counts (run.mjs counts it as
// one failed test).
//
// Plain CommonJS: uvu's runner is CommonJS, and so are the test files as tsx's require hook compiles them.
"use strict";
const { join } = require("node:path");
const readline = require("node:readline");

/** The start of the line that ends a file's output: run.mjs's, which splits the stream on it. */
const DONE_MARK = process.env.VM_TEST_DONE_MARK;
if (!DONE_MARK) throw new Error("tests/worker.cjs runs under tests/run.mjs, which sets VM_TEST_DONE_MARK");
const TESTS = __dirname;

require("tsx");
globalThis.UVU_DEFER = 1; // as uvu/run sets it: a file's test.run() queues its suite instead of running it
const uvu = require("uvu");

const pending = [];
let busy = false;
let ended = false;

/** Run the files queued so far, one at a time, in the order they came. */
async function pump() {
  if (busy) return;
  busy = true;
  while (pending.length > 0) {
    const file = pending.shift();
    globalThis.UVU_QUEUE.length = 0;
    globalThis.UVU_QUEUE.push([file]);
    globalThis.UVU_INDEX = 0;
    let loaded = true;
    try {
      require(join(TESTS, file));
    } catch (e) {
      loaded = false;
      process.stdout.write(`${file}\n${(e && e.stack) || String(e)}\n`);
    }
    if (loaded) await uvu.exec();
    await new Promise((resolve) => process.stdout.write(`\n${DONE_MARK} ${file}\n`, resolve));
  }
  busy = false;
  if (ended) process.stdin.destroy();
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (l) => {
  if (l.trim() === "") return;
  pending.push(l.trim());
  void pump();
});
lines.on("close", () => {
  ended = true;
});
