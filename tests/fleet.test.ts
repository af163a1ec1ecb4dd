// Fleet plan. The cover is checked against brute force, each host's variant against detect's own
// recommendation, --write-matrix against generate, and the cost model on recorded (synthetic) reports.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { parse as parseToml } from "smol-toml";
import { join } from "node:path";
import { catalog } from "../generator/catalog/index.ts";
import { recommend } from "../generator/detect/recommend.ts";
import { buildCost, fit, leaveOneOut, predict, readSamples, DEFAULT_BUILD_SECONDS } from "../generator/fleet/cost.ts";
import { coverFleet, elementsOf, runsOn } from "../generator/fleet/cover.ts";
import { readFleetHost } from "../generator/fleet/plan.ts";
import { projectFromMatrix } from "../generator/matrix/project.ts";
import type { Variant } from "../generator/matrix/schema.ts";
import { cliArgv, ROOT, tempDir, writeMatrix } from "./helpers/cli.ts";
import { runMain } from "./helpers/main.ts";

const HOSTS = join(ROOT, "tests/fixtures/hosts");
const FLEET = ["spr-h100", "gh200", "dgx-spark", "graviton2-t4g", "graviton3-nogpu", "newer-gpu", "two-gpus", "thor"].map((h) => join(HOSTS, h));
const REPORTS = join(ROOT, "tests/fixtures/reports");

/** The fleet's candidates: the default matrix's release, Python and CUDA with every GPU and ISA of the catalog. */
const candidates = projectFromMatrix({
  releases: [{ torch: "2.11.0" }],
  python: ["3.13"],
  cuda: ["12.8", "12.9", "13.0"],
  gpus: catalog.gpus.map((g) => g.sm),
  isas: catalog.isas.map((i) => i.key),
  cpuOnly: true,
}).variants;
let hosts: Awaited<ReturnType<typeof readFleetHost>>[] = [];
let cover: ReturnType<typeof coverFleet>;
test.before(async () => {
  hosts = await Promise.all(FLEET.map(readFleetHost));
  cover = coverFleet(hosts, candidates, catalog, "torchaudio");
});

function* combinations<T>(xs: readonly T[], k: number, start = 0, acc: T[] = []): Generator<T[]> {
  if (acc.length === k) {
    yield acc;
    return;
  }
  for (let i = start; i <= xs.length - (k - acc.length); i++) yield* combinations(xs, k, i + 1, [...acc, xs[i]!]);
}

test("fleet cover is exact: it covers every servable host GPU/CPU, and brute force finds no smaller cover", () => {
  assert.is(cover.method.kind, "exact");
  const elements = elementsOf(hosts);
  const hostOf = new Map(hosts.map((h) => [h.id, h.host]));
  const pool = candidates.filter((v) => v.package === "torchaudio");
  const servable = elements.filter((e) => pool.some((v) => runsOn(v, e, hostOf.get(e.hostId)!, catalog)));
  // What each variant runs on, asked of runsOn once per (variant, element): a bit per servable element.
  const masks = new Map<Variant, bigint>();
  const served = (v: Variant) => {
    let m = masks.get(v);
    if (m === undefined) masks.set(v, (m = servable.reduce((a, e, i) => (runsOn(v, e, hostOf.get(e.hostId)!, catalog) ? a | (1n << BigInt(i)) : a), 0n)));
    return m;
  };
  const all = (1n << BigInt(servable.length)) - 1n;
  const coversAll = (set: readonly Variant[]) => set.reduce((m, v) => m | served(v), 0n) === all;
  assert.ok(coversAll(cover.chosen), "the chosen set covers every servable element");
  const relevant = pool.filter((v) => served(v) !== 0n);
  let smaller = 0;
  for (const set of combinations(relevant, cover.chosen.length - 1)) if (coversAll(set)) smaller++;
  assert.is(smaller, 0, `no cover of ${cover.chosen.length - 1} variants among ${relevant.length} candidates`);
  assert.is(cover.chosen.length, 8);
});

test("every served host's variant is one detect itself recommends or accepts for that host; unserved hosts carry reasons", async () => {
  const chosenNames = new Set(cover.chosen.map((v) => v.name));
  for (const x of cover.assignment) {
    const h = hosts.find((y) => y.id === x.element.hostId)!.host;
    // detect, given only the chosen variants, picks a variant for this GPU (or the CPU) among them: the same one.
    const r = recommend(h, cover.chosen, catalog, { package: "torchaudio" });
    const pick = r.picks.find((p) => (x.element.capability === null ? p.kind === "cpu" : p.capability === x.element.capability))!;
    assert.ok(pick.variant && chosenNames.has(pick.variant), `${x.element.key}: detect finds a chosen variant`);
    assert.is(pick.variant, x.variant.name, `${x.element.key}: detect's pick equals the fleet's`);
  }
  assert.equal(cover.unserved.map((e) => e.key), ["newer-gpu gpu 13.0"]);
  const r = await runMain(["fleet", ...FLEET, "--json"]);
  assert.is(r.status, 1, "unserved hosts make the exit code 1");
  const j = JSON.parse(r.stdout);
  assert.match(j.unserved[0].reason, /13\.0.*not in the catalog/);
  assert.match(j.method.kind, /exact/);
  // What the build machines must declare: per system, big-parallel and each ISA's gccarch feature, covering every build.
  const needs = j.builderFeatures as { system: string; features: string[]; variants: number }[];
  assert.is(needs.reduce((a, n) => a + n.variants, 0), j.build.length);
  for (const n of needs) assert.ok(n.features.includes("big-parallel") && n.features.some((f) => f.startsWith("gccarch-")), JSON.stringify(n));
  assert.ok(needs.some((n) => n.system === "aarch64-linux" && n.features.includes("gccarch-armv9-a+i8mm")));
});

test("preferences cost no extra variant: native code and the widest ISA wherever the cover allows", () => {
  const byKey = new Map(cover.assignment.map((x) => [x.element.key, x]));
  for (const k of ["spr-h100 gpu 9.0", "gh200 gpu 9.0", "dgx-spark gpu 12.1", "thor gpu 11.0", "graviton2-t4g gpu 7.5"]) {
    assert.ok(byKey.get(k)!.native, `${k} native`);
    assert.ok(byKey.get(k)!.isaIsBest, `${k} widest ISA`);
  }
  assert.match(byKey.get("dgx-spark gpu 12.1")!.variant.name, /cuda1(2_9|3_0)-sm121-armv9$/, "native 12.1 code needs CUDA ≥ 12.9");
  assert.match(byKey.get("thor gpu 11.0")!.variant.name, /cuda13_0-sm110-armv9$/);
  // Like detect, a GPU gets a variant named for its own SM: the A6000 (8.6) next to A100s (8.0) needs its own.
  assert.match(byKey.get("two-gpus gpu 8.6")!.variant.name, /-sm86-/);
  assert.match(byKey.get("two-gpus gpu 8.0")!.variant.name, /-sm80-/);
  // Where only binary-compatible code exists for a GPU's SM on the allowed CUDA versions, it is used.
  const only128 = coverFleet(hosts.filter((h) => h.id === "dgx-spark"), candidates.filter((v) => v.cuda !== "12.9" && v.cuda !== "13.0"), catalog, "torchaudio");
  assert.not.ok(only128.assignment[0]!.native, "sm121 on CUDA 12.8 carries 12.0 code");
  assert.equal(only128.assignment[0]!.variant.cudaCapabilities, ["12.0"]);
});

test("--write-matrix: the matrix it writes generates exactly the chosen variants (and their pytorch)", async () => {
  const out = tempDir("vm-fleet-");
  const m = join(out, "matrix.ts");
  const r = await runMain(["fleet", ...FLEET, "--package", "torchaudio", "--write-matrix", m]);
  assert.ok(r.status === 1 && /wrote/.test(r.stderr), r.stderr);
  // The written file imports ./generator/matrix/schema.ts; point it at this checkout.
  writeFileSync(m, readFileSync(m, "utf8").replace("./generator/matrix/schema.ts", join(ROOT, "generator/matrix/schema.ts")));
  const list = await runMain(["list", "--json", "--matrix", m]);
  assert.is(list.status, 0, list.stderr);
  const names = (JSON.parse(list.stdout) as { name: string }[]).map((v) => v.name).sort();
  const want = [...new Set(cover.chosen.flatMap((v) => [v.name, ...v.dependsOn]))].sort();
  assert.equal(names, want);
  const gen = await runMain(["generate", "--matrix", m, "--out", out]);
  assert.is(gen.status, 0, gen.stderr);
});

test("--package torchvision and --package torch-env: the matrix written generates the chosen variants and what each is built against", async () => {
  for (const pkg of ["torchvision", "torch-env"]) {
    const out = tempDir("vm-fleet-");
    const m = join(out, "matrix.ts");
    const r = await runMain(["fleet", ...FLEET, "--package", pkg, "--write-matrix", m, "--json"]);
    assert.ok(r.status === 1 && /wrote/.test(r.stderr), r.stderr);
    const chosen = (JSON.parse(r.stdout) as { variants: string[] }).variants;
    assert.ok(chosen.length > 0 && chosen.every((n) => n.startsWith(`${pkg}-`)), chosen.join(" "));
    writeFileSync(m, readFileSync(m, "utf8").replace("./generator/matrix/schema.ts", join(ROOT, "generator/matrix/schema.ts")));
    const list = JSON.parse((await runMain(["list", "--json", "--matrix", m])).stdout) as { name: string; dependsOn: string[] }[];
    const names = new Set(list.map((v) => v.name));
    for (const n of chosen) {
      assert.ok(names.has(n), `${n} generated`);
      for (const d of list.find((v) => v.name === n)!.dependsOn) assert.ok(names.has(d), `${n}: ${d} generated too`);
    }
    if (pkg === "torch-env") assert.ok(list.some((v) => v.name.startsWith("torchvision-")) && list.some((v) => v.name.startsWith("torchaudio-")), "the environment's members");
  }
});

test("a detect --json file is a host too", async () => {
  const out = tempDir("vm-fleet-json-");
  const json = execFileSync(process.execPath, cliArgv(["detect", "--json", "--cpuinfo", join(HOSTS, "gh200/cpuinfo"), "--nvidia-smi", join(HOSTS, "gh200/nvidia-smi.txt"), "--machine", "aarch64"]), { cwd: ROOT, encoding: "utf8" });
  writeFileSync(join(out, "grace-node.json"), json);
  const r = await runMain(["fleet", join(out, "grace-node.json"), join(HOSTS, "spr-h100"), "--json"]);
  assert.is(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.hosts.map((h: { host: string }) => h.host).sort(), ["grace-node", "spr-h100"]);
  assert.ok(j.variants.some((n: string) => /sm90-armv9$/.test(n)));
  const bad = await runMain(["fleet", join(out, "nope.json")]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /no such file/);
});

test("cost model: fit on recorded reports (built only), leave-one-out error, default table with sources, makespan from the build driver's scheduler", async () => {
  const samples = readSamples(REPORTS);
  assert.is(samples.length, 10, "the substituted and the failed entries are ignored");
  const m = fit(samples);
  const pt = predict(m, { package: "pytorch", cuda: "12.8", cudaCapabilities: ["9.0"] });
  assert.is(pt.from, "fit");
  assert.ok(Math.abs(pt.seconds - (6900 + 7400 + 7900) / 3) < 1e-6, "mean of the CUDA pytorch builds");
  const loo = leaveOneOut(samples);
  assert.is(loo.n, 10);
  assert.ok(loo.meanPct! > 0 && loo.meanPct! < 50, `LOO mean error ${loo.meanPct}`);
  const none = fit([]);
  assert.is(predict(none, { package: "torchaudio", cuda: null, cudaCapabilities: [] }).seconds, DEFAULT_BUILD_SECONDS.torchaudio.seconds);
  assert.match(DEFAULT_BUILD_SECONDS.pytorch.source, /Building PyTorch 2\.9\.1 for ARM64/);
  const chosen = cover.chosen.flatMap((v) => [v, candidates.find((c) => c.name === v.dependsOn[0])!]);
  const one = buildCost(chosen, none, 1, catalog);
  const four = buildCost(chosen, none, 4, catalog);
  assert.ok(Math.abs(one.makespanHours - one.hours) < 1e-9, "one builder: makespan = total");
  assert.ok(four.makespanHours < one.makespanHours && four.makespanHours >= one.hours / 4, "more builders, shorter, not below work/4");
  const r = await runMain(["fleet", join(HOSTS, "spr-h100"), "--logs-dir", REPORTS, "--builders", "2"]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /makespan on 2 builder\(s\)/);
  assert.match(r.stdout, /leave-one-out error mean \d+%/);
  // The old spelling still works, hidden from the help.
  const old = await runMain(["fleet", join(HOSTS, "spr-h100"), "--reports", REPORTS, "--builders", "2"]);
  assert.match(old.stdout, /leave-one-out error mean \d+%/);
});

test("property: for every recorded host and every variant of the widest matrix, detect and fleet agree on what runs", async () => {
  const { readFleetHost } = await import("../generator/fleet/plan.ts");
  const { elementsOf, runsOn } = await import("../generator/fleet/cover.ts");
  const { recommend } = await import("../generator/detect/recommend.ts");
  const { projectFromMatrix } = await import("../generator/matrix/project.ts");
  const { widestMatrix } = await import("./helpers/matrices.ts");
  const { readdirSync, statSync } = await import("node:fs");
  const p = projectFromMatrix(widestMatrix());
  const dirs = readdirSync(HOSTS).filter((d) => d !== "bad" && statSync(join(HOSTS, d)).isDirectory());
  assert.ok(dirs.length >= 8, `recorded hosts: ${dirs.join(" ")}`);
  let compared = 0;
  for (const d of dirs) {
    const fh = await readFleetHost(join(HOSTS, d));
    for (const pkg of ["pytorch", "torchaudio"] as const) {
      const r = recommend(fh.host, p.variants, p.catalog, { package: pkg, maxAlternatives: Number.MAX_SAFE_INTEGER });
      for (const e of elementsOf([fh])) {
        const pick = r.picks.find((k) => (e.capability === null ? k.kind === "cpu" : k.capability === e.capability));
        const detectFits = new Set(pick ? [pick.variant, ...pick.alternatives].filter((n): n is string => n !== null) : []);
        const fleetFits = new Set(p.variants.filter((v) => v.package === pkg && runsOn(v, e, fh.host, p.catalog)).map((v) => v.name));
        assert.equal([...detectFits].sort(), [...fleetFits].sort(), `${d} ${pkg} ${e.capability ?? "cpu"}`);
        compared += p.variants.filter((v) => v.package === pkg).length;
      }
    }
  }
  assert.ok(compared > 10_000, `${compared} (variant, host element) pairs compared`);
});

test("one report reader: the plan's estimates and the cost model count the same builds (substituted or present ones are not builds)", async () => {
  const { durationsFromReports } = await import("../generator/driver/report.ts");
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const { tempDir } = await import("./helpers/cli.ts");
  const logs = tempDir();
  mkdirSync(join(logs, "run-1"));
  const v = (name: string, origin: string, durationS: number) => ({ name, status: "built", origin, durationS });
  writeFileSync(
    join(logs, "run-1", "report.json"),
    JSON.stringify({
      variants: [
        v("pytorch-python313-cuda12_8-sm90-avx2", "built", 7000),
        v("pytorch-python313-cuda12_8-sm80-avx2", "substituted", 12),
        v("pytorch-python313-cpu-avx2", "present", 1),
      ],
    }),
  );
  writeFileSync(join(logs, "run-2-broken.json"), "{");
  // Reports of another shape are left out, each passed to the caller once (it warns), by both readers alike.
  mkdirSync(join(logs, "run-3"));
  writeFileSync(join(logs, "run-3", "report.json"), "null");
  const skipped: string[][] = [[], []];
  const plan = [...durationsFromReports(logs, (x) => skipped[0]!.push(x.why)).keys()];
  const cost = readSamples(logs, (x) => skipped[1]!.push(x.why)).map((x) => x.name);
  assert.equal(plan, ["pytorch-python313-cuda12_8-sm90-avx2"]);
  assert.equal(cost, plan);
  assert.equal(skipped, [["null, not an object"], ["null, not an object"]]);
});

test("planFleet decides without printing: cover, cost with the CUDA closure, and the matrix or why none is written", async () => {
  const { planFleet } = await import("../generator/fleet/plan.ts");
  const { projectFromMatrix } = await import("../generator/matrix/project.ts");
  const defaultMatrix = (await import("../matrix.ts")).default;
  const p = projectFromMatrix(defaultMatrix);
  const hosts = await Promise.all(["spr-h100", "thor"].map((h) => readFleetHost(join(HOSTS, h))));
  const f = planFleet(p, hosts, { package: "torchaudio", builders: 2 }, []);
  assert.equal(f.cover.chosen.map((v) => v.sm).sort(), ["110", "90"]);
  assert.is(f.unserved.length, 0);
  assert.is(f.refusal, null);
  assert.is(f.cost.cudaClosures, 1, "Thor's variant brings its own CUDA closure");
  assert.match(f.matrixText, /defineMatrix/);
  const none = planFleet(p, [await readFleetHost(join(HOSTS, "newer-gpu"))], { package: "torchaudio", builders: 1 }, []);
  assert.is(none.cover.chosen.length, 0);
  assert.match(none.refusal!, /no variant serves any of these hosts/);
  assert.match(none.unserved[0]!.reason, /not in the catalog/);
});

test("fleet --write-manifest DIR --org ORG: one flox manifest per variant, installing ORG/NAME on its system, naming its hosts; without --org exit 2", async () => {
  const dir = tempDir("vm-fleet-manifests-");
  const r = await runMain(["fleet", ...FLEET, "--write-manifest", dir, "--org", "acme", "--json"]);
  const j = JSON.parse(r.stdout) as { variants: string[]; hosts: { host: string; variant: string }[] };
  const files = readdirSync(dir).sort();
  assert.equal(files, [...j.variants].sort().map((v) => `${v}.toml`), "one environment per chosen variant (never two torches in one)");
  for (const f of files) {
    const name = f.replace(/\.toml$/, "");
    const text = readFileSync(join(dir, f), "utf8");
    const m = JSON.parse(JSON.stringify(parseToml(text))) as { version: number; install: Record<string, { "pkg-path": string }>; options: { systems: string[] } };
    assert.is(m.version, 1);
    assert.equal(m.install, { [name]: { "pkg-path": `acme/${name}` } });
    assert.equal(m.options.systems, [name.includes("armv") ? "aarch64-linux" : "x86_64-linux"]);
    for (const h of j.hosts.filter((x) => x.variant === name)) assert.match(text, new RegExp(`host\\(s\\) .*${h.host}`));
  }
  const bad = await runMain(["fleet", ...FLEET, "--write-manifest", tempDir("vm-fleet-manifests-")]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--write-manifest needs --org ORG/);
});

test("fleet --package NAME-env: a named environment of the matrix is served (its extras in the written matrix); an unknown one is refused", async () => {
  const dir = tempDir("vm-fleet-env-");
  const matrix = writeMatrix(dir, {
    releases: [{ torch: "2.12.0", nixpkgs: "2c423e03bbafcff28bfadc6781a4a8257f205cb5" }],
    python: ["3.13"],
    cuda: ["12.9"],
    gpus: ["121"],
    isas: ["armv9"],
    cpuOnly: false,
    environments: { llm: ["transformers"] },
  });
  const spark = join(ROOT, "tests/fixtures/hosts/dgx-spark");
  const r = await runMain(["fleet", spark, "--matrix", matrix, "--package", "llm-env", "--json"]);
  assert.is(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).variants, ["llm-env-python313-cuda12_9-sm121-armv9"]);
  const written = await runMain(["fleet", spark, "--matrix", matrix, "--package", "llm-env", "--write-matrix"]);
  assert.match(written.stdout, /"environments": \{\s*"llm": \[\s*"transformers"\s*\]/);
  const bad = await runMain(["fleet", spark, "--matrix", matrix, "--package", "chat-env"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--package: unknown package "chat-env"; allowed values: .*torch-env, llm-env/);
});

test("a host file of the wrong shape (null, a null GPU, a numeric capability) is refused naming the file and the field, exit 2, no TypeError", async () => {
  const out = tempDir("vm-fleet-shape-");
  const json = execFileSync(process.execPath, cliArgv(["detect", "--json", "--cpuinfo", join(HOSTS, "gh200/cpuinfo"), "--nvidia-smi", join(HOSTS, "gh200/nvidia-smi.txt"), "--machine", "aarch64"]), { cwd: ROOT, encoding: "utf8" });
  const good = JSON.parse(json);
  const cases: [string, unknown, RegExp][] = [
    ["null.json", null, /\(the whole file\): expected an object with a `host` key/],
    ["null-gpu.json", { ...good, host: { ...good.host, gpus: [null] } }, /host\.gpus\.0: expected a GPU object \{index, name, capability, sm, driver\}/],
    ["numeric-cap.json", { ...good, host: { ...good.host, gpus: [{ ...good.host.gpus[0], capability: 9.0 }] } }, /host\.gpus\.0\.capability: expected a string/],
  ];
  for (const [name, body, field] of cases) {
    const file = join(out, name);
    writeFileSync(file, JSON.stringify(body));
    const r = await runMain(["fleet", file, join(HOSTS, "spr-h100")]);
    assert.is(r.status, 2, `${name}: ${r.stderr}`);
    assert.not.match(r.stderr, /TypeError|at .*\.ts:\d+/, name);
    const lines = r.stderr.trim().split("\n");
    assert.is(lines.length, 1, `${name}: one line\n${r.stderr}`);
    assert.match(lines[0]!, new RegExp(`^variant-matrix: error: host ${file.replace(/[/.]/g, "\\$&")}: not what \`variant-matrix detect --json\` prints: `), name);
    assert.match(lines[0]!, field, name);
  }
});

test.run();
