import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatName, parseName, torchSiblingName, type NameParts } from "../generator/matrix/naming.ts";
import { FilterError, matchFilters, parseFilters } from "../generator/matrix/filters.ts";

const cases: [string, NameParts][] = [
  ["torchaudio-python313-cuda12_8-sm121-armv9", { package: "torchaudio", tag: "", python: "3.13", cuda: "12.8", sm: "121", isa: "armv9" }],
  ["pytorch-python313-cpu-avx2", { package: "pytorch", tag: "", python: "3.13", cuda: null, sm: null, isa: "avx2" }],
  ["pytorch29-python311-cuda13_0-sm110-armv8_2", { package: "pytorch", tag: "29", python: "3.11", cuda: "13.0", sm: "110", isa: "armv8_2" }],
  ["torchaudio210-python312-cuda12_9-sm75-avx512bf16", { package: "torchaudio", tag: "210", python: "3.12", cuda: "12.9", sm: "75", isa: "avx512bf16" }],
];

test("format and parse are inverse on documented examples", () => {
  for (const [name, parts] of cases) {
    assert.equal(formatName(parts), name);
    assert.equal(parseName(name), parts);
  }
});

test("round-trip over a grid of parts", () => {
  let n = 0;
  for (const pkg of ["pytorch", "torchaudio"] as const)
    for (const tag of ["", "28", "210"])
      for (const python of ["3.11", "3.13"])
        for (const [cuda, sm] of [["12.8", "80"], ["13.0", "121"], [null, null]] as const)
          for (const isa of ["avx2", "armv8_2", "avx512vnni"]) {
            const p: NameParts = { package: pkg, tag, python, cuda, sm, isa };
            assert.equal(parseName(formatName(p)), p);
            n++;
          }
  assert.is(n, 108);
});

test("parse rejects names outside the rule", () => {
  for (const bad of [
    "pytorch-python3.13-cuda12_8-sm121-armv9",
    "pytorch-python313-cuda12.8-sm121-armv9",
    "pytorch-python313-cuda12_8-sm_121-armv9",
    "jax-python313-cpu-avx2",
    "pytorch-python313-cpu-armv8.2",
    "pytorch-python313-cuda12_8-armv9",
    "",
  ])
    assert.is(parseName(bad), null, bad);
});

test("format refuses half a GPU and unsafe parts", () => {
  assert.throws(() => formatName({ package: "pytorch", tag: "", python: "3.13", cuda: "12.8", sm: null, isa: "avx2" }));
  assert.throws(() => formatName({ package: "pytorch", tag: "", python: "3.13", cuda: null, sm: null, isa: 'x"; evil' }));
});

test("torchaudio sibling is the pytorch name with the same suffix", () => {
  assert.is(torchSiblingName(parseName("torchaudio29-python313-cuda12_9-sm121-armv9")!), "pytorch29-python313-cuda12_9-sm121-armv9");
});

test("filters: OR within a key, AND across keys, normalised values", () => {
  const v = { package: "pytorch", python: "3.13", cuda: "12.8", sm: "121", isa: "armv9", system: "aarch64-linux" };
  const cpu = { ...v, cuda: null, sm: null };
  assert.ok(matchFilters(v, parseFilters(["cuda=12_8", "sm=sm121"])));
  assert.ok(matchFilters(v, parseFilters(["python=313", "isa=avx2", "isa=armv9"])));
  assert.not.ok(matchFilters(v, parseFilters(["isa=avx2"])));
  assert.not.ok(matchFilters(v, parseFilters(["cuda=none"])));
  assert.ok(matchFilters(cpu, parseFilters(["cuda=none"])));
  assert.throws(() => parseFilters(["gpu=121"]), (e: Error) => e instanceof FilterError && /allowed keys: package, python, cuda, sm, isa, system/.test(e.message));
  assert.throws(() => parseFilters(["isa"]), (e: Error) => e instanceof FilterError);
});

test.run();
