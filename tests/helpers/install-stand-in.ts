/**
 * The STAND-IN environment of the install tests (tests/install.test.ts, tests/install-places.test.ts): a --pkgs-dir
 * for torch-env-python313-cuda12_8-sm90-avx512bf16 built with the real nix-build, offline.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectFromMatrix } from "../../generator/matrix/project.ts";
import matrix from "../../matrix.ts";
import { ROOT, tempDir } from "./cli.ts";
import { newSalt } from "./driver.ts";
import { nixPath } from "./nix.ts";

/** The variant the stand-in environment is (an environment with a GPU: install's nixglhost route applies). */
export const NAME = "torch-env-python313-cuda12_8-sm90-avx512bf16";
const variant = projectFromMatrix(matrix).variants.find((v) => v.name === NAME)!;

/**
 * A --pkgs-dir holding NAME.nix: a STAND-IN environment whose bin/python3 prints the recorded H100 probe (the GPU seen
 * only when libcuda.so.1 is reachable), with `nixglhost` = the stand-in nixpkgs' nix-gl-host of the variant's pin and
 * `withHostDriver` = the real pkgs/host-driver.nix around both, as pkgs/torch-env.nix carries them; beside it a tiny
 * derivation of each variant it is built on. Each file is a function, as a generated wrapper is, with `tests.static`: a
 * STAND-IN static check (its output a probe.json and a report.txt, as pkgs/checks.nix writes them; nothing is probed),
 * so the build driver proves each variant by default and install gets the environment's proof.
 */
export function standInEnvironment(): string {
  const dir = tempDir("vm-install-pkgs-");
  const probe = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/probes/h100-pypi-torch2.11.0-cu130/probe.json"), "utf8"));
  writeFileSync(join(dir, "sees.json"), JSON.stringify(probe) + "\n");
  writeFileSync(join(dir, "blind.json"), JSON.stringify({ ...probe, gpu: { available: false, devices: [], matmul: null } }) + "\n");
  writeFileSync(
    join(dir, "python3"),
    `#!/bin/sh\n# STAND-IN python3 of a Nix-built torch: it sees the GPU only when it can load libcuda.so.1.\n` +
      `for d in $(echo "\${LD_LIBRARY_PATH:-}" | tr ':' ' ') "\${NIXGLHOST_STAND_IN_ROOT:-}/run/opengl-driver/lib"; do\n` +
      `  [ -e "$d/libcuda.so.1" ] && exec cat "${join(dir, "sees.json")}"\ndone\nexec cat "${join(dir, "blind.json")}"\n`,
  );
  const pkgs = join(dir, "pkgs");
  mkdirSync(pkgs);
  writeFileSync(
    join(pkgs, `${NAME}.nix`),
    `{ ... }:\nlet standIn = import ${nixPath(join(ROOT, "tests/fixtures/stand-in-nixpkgs"))} { standIn = { pin = "${variant.nixpkgs}"; nixGlHost = true; }; };\n` +
      `  env = derivation {\n  name = "${NAME}-stand-in-${newSalt()}";\n  system = builtins.currentSystem;\n  builder = "/bin/sh";\n` +
      `  PATH = "/usr/bin:/bin";\n  python = builtins.readFile ${nixPath(join(dir, "python3"))};\n` +
      `  args = [ "-c" "mkdir -p $out/bin && printf '%s' \\"$python\\" > $out/bin/python3 && chmod +x $out/bin/python3 && echo pip > $out/bin/pip" ];\n` +
      `  };\n` +
      // The real pkgs/host-driver.nix, its script run by a runCommand that runs it (the stand-in nixpkgs' only records).
      `  runCommand = name: _: script: derivation { inherit name; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" script ]; };\n` +
      `in env // { nixglhost = standIn.nix-gl-host; withHostDriver = import ${nixPath(join(ROOT, "pkgs/host-driver.nix"))} { inherit runCommand env; shell = "/bin/sh"; nixglhost = standIn.nix-gl-host; }; tests.static = ${standInCheck(NAME)}; }\n`,
  );
  // What the environment is built on (its pytorch, torchaudio, torchvision): tiny derivations, built first.
  for (const dep of variant.dependsOn)
    writeFileSync(
      join(pkgs, `${dep}.nix`),
      `{ ... }: derivation { name = "${dep}-stand-in-${newSalt()}"; system = builtins.currentSystem; builder = "/bin/sh"; args = [ "-c" "echo > $out" ]; } // { tests.static = ${standInCheck(dep)}; }\n`,
    );
  return pkgs;
}

/** A STAND-IN static check of `name` (a Nix expression): $out holds probe.json and report.txt, as pkgs/checks.nix's does. */
function standInCheck(name: string): string {
  const script = `mkdir -p $out && echo '{}' > $out/probe.json && echo '${name}: every promise holds (stand-in check)' > $out/report.txt`;
  return `derivation { name = "${name}-check-static-${newSalt()}"; system = builtins.currentSystem; builder = "/bin/sh"; PATH = "/usr/bin:/bin"; args = [ "-c" ${JSON.stringify(script)} ]; }`;
}

