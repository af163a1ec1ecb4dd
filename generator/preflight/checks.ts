/**
 * The checks `doctor`, `build`, `eval`, `install` and `publish` share: each a small record saying what it applies
 * to, how it asks the host (HostAnswers, over generator/preflight/host-root.ts: a root directory and a PATH, so tests
 * model hosts) and its verdict, ✓ ok, ✗ fail (with the exact fix) or – (does not apply here, and why). The facts
 * compared against are in catalog/machines.ts and catalog/binary-cache.ts.
 *
 * Which command runs which check: `doctor` all of them; `build` the ones it must not start without (Nix version when
 * the pinned nixpkgs is evaluated, system features, flox) plus store space as a warning; `eval` the Nix version;
 * `install` what build runs plus the CUDA cache and the GPU driver; `publish` flox and, with --org, `flox auth status`.
 * `blocking` says which ✗ stops `build`/`eval`/`install`/`publish` with exit 2; each shows every ✗ at once.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, normalize } from "node:path";
import { compareVersions } from "../versions.ts";
import { GPU_CHECK_FEATURE, GPU_CHECK_FEATURE_HOWTO, systemFeaturesLine, variantsAndChecks } from "../system-features.ts";
// The built-in catalog and machine facts, unparsed (catalog/lib/built-in.ts): every command that runs a check loads this
// module, and parsing the whole catalog with zod for a check would cost more than the check. None of what the checks
// read is extended by local-catalog.json (the public caches, the ISA table, the machine facts).
import { cachesToOffer } from "../catalog/lib/binary-cache.ts";
import { builtInCatalog } from "../catalog/lib/built-in.ts";
import { builtInMachines } from "../catalog/lib/machines.ts";
import { existsOn, runOn, type Host } from "./host-root.ts";
import { parseCpuinfo } from "../host/read-host.ts";
import { isaFit } from "../matrix/compat.ts";
import { gccarchFeature } from "../catalog/lib/machines.ts";
import { settingLines, wrap } from "../text.ts";
import { InputError } from "../errors.ts";
import { redactCredentials } from "../redact.ts";
import { GENERATED_MARK } from "../nix-literals.ts";
import { missingTeamCaches, type TeamCache } from "../matrix/team-cache.ts";
import { carriesNixglhost, driverRouteLines, nixglhostRouteNote, type CheckedVariant } from "../matrix/driver-route.ts";
// The driver routes live in matrix/driver-route.ts (pure: explain reads them without the checks); their importers read them here too.
export { carriesNixglhost, checkedVariants, driverRouteLines, hostDriverRoute, withHostDriverLine, type CheckedVariant } from "../matrix/driver-route.ts";

/** What the checks are asked about. */
export interface PreflightContext {
  command: "doctor" | "build" | "publish" | "eval" | "install";
  variants: readonly CheckedVariant[];
  /** The backend chosen ("flox", "nix"), or null when none is (doctor without flox on PATH: the nix backend). */
  backend: "flox" | "nix";
  /** Whether this host's Nix evaluates the catalog's pinned nixpkgs (not when the user hands in their own files). */
  pinnedNixpkgs: boolean;
  /** This host's Nix system ("x86_64-linux"). */
  hostSystem: string;
  /** --builders given: remote machines may take what this one cannot. */
  builders?: string;
  /** --max-jobs 0: this machine builds nothing. */
  localBuilds?: boolean;
  /** publish --org ORG: flox auth status is needed. */
  org?: string;
  /** --nix-option pairs, passed to `nix show-config`. */
  nixOptions?: readonly (readonly [string, string])[];
  /** The team's binary caches matrix.ts names (team-cache.ts); none when absent. */
  teamCaches?: readonly TeamCache[];
}

/** A check's answer. */
interface Verdict {
  status: "ok" | "fail" | "skip";
  /** What was found (or why the check does not apply). */
  detail: string;
  /** The exact fix, for "fail". */
  fix?: string;
  /** The nix.conf lines of the fix (or, for a –, of the optional setting), printed as one block that is never wrapped. */
  conf?: NixConfFix;
  /**
   * The GPU driver check's route, when the host's driver sits outside /run/opengl-driver/lib (not NixOS): "nixglhost",
   * the route install takes (✓ where the variant carries it and nixglhost finds the driver, ✗ otherwise).
   */
  route?: "nixglhost";
}

/**
 * A fix that is nix.conf settings. Each line is a whole `name = value` setting: a line cut inside its value leaves an
 * empty setting and an invalid line, which stop every Nix command reading the file (nix-daemon included).
 */
interface NixConfFix {
  /** The file the lines are appended to: "/etc/nix/nix.conf" (the daemon's, needs root) or "~/.config/nix/nix.conf". */
  file: "/etc/nix/nix.conf" | "~/.config/nix/nix.conf";
  /** Whole `name = value` lines (`extra-` names, which add to Nix's defaults rather than replace them). */
  lines: string[];
  /** What a NixOS host sets instead (its /etc/nix/nix.conf is generated and read-only), e.g. "nix.settings.substituters". */
  nixos?: string;
}

/**
 * The shell block that appends `conf.lines` to its file, as it is printed and pasted: a heredoc (its first line empty,
 * so the settings start on a line of their own even when the file does not end in a newline), then for the system file
 * the restart of nix-daemon, which reads /etc/nix/nix.conf only when it starts (Nix manual, "nix.conf": the daemon's
 * settings; multi-user installs run it as the systemd unit nix-daemon.service). Pure; lines without indentation, since
 * the heredoc's closing EOF must start its line. An `extra-` setting wider than `width` becomes several `extra-` lines
 * of the same name (text.ts settingLines: each appends, so Nix reads the same value), never a line cut inside its value.
 */
function nixConfBlock(conf: NixConfFix, width: number): string[] {
  const system = conf.file === "/etc/nix/nix.conf";
  return [
    system ? `sudo tee -a ${conf.file} >/dev/null <<'EOF'` : `mkdir -p ~/.config/nix && tee -a ${conf.file} >/dev/null <<'EOF'`,
    "",
    ...conf.lines.flatMap((l) => settingLines(l, width)),
    "EOF",
    ...(system ? ["sudo systemctl restart nix-daemon"] : []),
  ];
}

/** The sentence that introduces a NixConfFix's block (the fix line of a ✗). */
function confFixText(conf: NixConfFix): string {
  const restart = conf.file === "/etc/nix/nix.conf" ? ", then restart nix-daemon" : "";
  return `append ${conf.lines.length === 1 ? "this line" : "these lines"} to ${conf.file}${restart} (the block below does both)${conf.nixos ? `; NixOS: set ${conf.nixos} in configuration.nix instead` : ""}`;
}

/** One check: what it applies to, and its verdict from what the host answers. */
interface Check {
  id: string;
  title: string;
  /** Commands that run it. */
  commands: readonly PreflightContext["command"][];
  /** A ✗ stops build/publish with exit 2 (doctor exits 1 on any ✗). */
  blocking: boolean;
  /** null when it applies, else why not (shown as –). */
  appliesTo(c: PreflightContext): string | null;
  judge(p: HostAnswers, c: PreflightContext): Verdict;
}

/** A check's result, as doctor prints it and --json writes it. */
export interface CheckResult extends Verdict {
  id: string;
  title: string;
  blocking: boolean;
}

/**
 * What the host answers, each asked once: `nix-instantiate --version`, `nix show-config` (with and without
 * nix-command), flox, nvidia-smi, ldconfig, df.
 */
export class HostAnswers {
  private memo = new Map<string, unknown>();
  constructor(
    readonly host: Host,
    private readonly nixOptions: readonly (readonly [string, string])[] = [],
  ) {}
  private once<T>(key: string, f: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, f());
    return this.memo.get(key) as T;
  }
  /** The Nix version ("2.8.0"), or null when Nix is not on PATH. */
  nixVersion(): string | null {
    return this.once("nixVersion", () => {
      const r = runOn(this.host, ["nix-instantiate", "--version"]);
      return r.code === 0 ? (r.stdout.match(/(\d+\.\d+(?:\.\d+)?)/)?.[1] ?? null) : null;
    });
  }
  /** `nix show-config` as a map (nix-command turned on for this call only), or null when it fails. */
  nixConfig(): Map<string, string> | null {
    return this.once("nixConfig", () => {
      const opts = this.nixOptions.flatMap(([k, v]) => ["--option", k, v]);
      const r = runOn(this.host, ["nix", "--extra-experimental-features", "nix-command", "show-config", ...opts]);
      if (r.code !== 0) return null;
      return new Map(
        r.stdout
          .split("\n")
          .map((l) => l.match(/^([\w-]+) = ?(.*)$/))
          .filter((m): m is RegExpMatchArray => m !== null)
          .map((m) => [m[1]!, m[2]!.trim()] as const),
      );
    });
  }
  /** Whether `nix show-config` runs without --extra-experimental-features (nix-command on by the user's config). */
  nixCommandOn(): boolean | null {
    return this.once("nixCommand", () => {
      const r = runOn(this.host, ["nix", "show-config"]);
      if (r.code === null) return null;
      return r.code === 0;
    });
  }
  /** `flox --version` ("1.7.3"), "unknown" when flox runs but prints no version, null when flox is not on PATH. */
  floxVersion(): string | null {
    return this.once("flox", () => {
      const r = runOn(this.host, ["flox", "--version"]);
      if (r.code === null) return null;
      return r.code === 0 ? (r.stdout.match(/(\d+\.\d+\.\d+)/)?.[1] ?? "unknown") : "unknown";
    });
  }
  /** `flox auth status`: its exit code and first line. */
  floxAuth(): { ok: boolean; line: string } {
    return this.once("floxAuth", () => {
      const r = runOn(this.host, ["flox", "auth", "status"]);
      return { ok: r.code === 0, line: (r.code === 0 ? r.stdout || r.stderr : r.stderr || r.stdout).trim().split("\n")[0] ?? "" };
    });
  }
  /** The NVIDIA driver as the host sees it: nvidia-smi's GPUs, /dev/nvidia0, libcuda.so.1 in `ldconfig -p`. */
  driver(): { smi: string[] | null; device: boolean; hostLibcuda: string[] } {
    return this.once("driver", () => {
      const smi = runOn(this.host, ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]);
      const ld = runOn(this.host, ["ldconfig", "-p"]);
      const libs = ld.code === 0 ? parseLdconfig(ld.stdout).filter((l) => l.name === "libcuda.so.1").map((l) => l.path) : [];
      return {
        smi: smi.code === 0 ? smi.stdout.split("\n").map((l) => l.trim()).filter(Boolean) : null,
        device: existsOn(this.host, "/dev/nvidia0"),
        hostLibcuda: [...new Set(libs)],
      };
    });
  }
  /** Bytes free where the Nix store is (`df -Pk` of /nix/store, else /nix, else /), or null when df cannot say. */
  storeFree(): { path: string; bytes: number } | null {
    return this.once("df", () => {
      const path = ["/nix/store", "/nix", "/"].find((p) => existsOn(this.host, p)) ?? "/";
      const r = runOn(this.host, ["df", "-Pk", join(this.host.root, path)]);
      const line = r.code === 0 ? r.stdout.trim().split("\n")[1] : undefined;
      const kib = Number(line?.split(/\s+/)[3]);
      return Number.isFinite(kib) ? { path, bytes: kib * 1024 } : null;
    });
  }
  /** The CPU's /proc/cpuinfo under the host root, or null. */
  cpuinfo(): string | null {
    return this.once("cpuinfo", () => {
      try {
        return readFileSync(this.host.cpuinfoFile ?? join(this.host.root, "proc/cpuinfo"), "utf8");
      } catch {
        return null;
      }
    });
  }
}

/** `ldconfig -p` lines ("\tlibcuda.so.1 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libcuda.so.1") as name and path. */
function parseLdconfig(text: string): { name: string; path: string }[] {
  return text
    .split("\n")
    .map((l) => l.match(/^\s*(\S+)\s+\(.*\)\s+=>\s+(\S+)\s*$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ name: m[1]!, path: m[2]! }));
}

const gib = (b: number) => `${(b / 1000 ** 3).toFixed(1)} GB`;
const cudaVariants = (c: PreflightContext) => c.variants.filter((v) => v.cuda !== null);

/** The checks, in the order doctor prints them. */
const CHECKS: readonly Check[] = [
  {
    id: "nix-version",
    title: "Nix version",
    commands: ["doctor", "build", "eval", "install"],
    blocking: true,
    appliesTo: (c) =>
      c.backend === "flox"
        ? "the flox backend evaluates with flox's own Nix"
        : !c.pinnedNixpkgs
          ? "the files built are your own (--pkgs-dir): no catalog pin is evaluated by this Nix"
          : null,
    judge: (p) => {
      const have = p.nixVersion();
      const fix = `install Nix >= ${builtInMachines.nixMin.version} with the official installer (the Nix manual, "Installation"), then open a new shell`;
      if (have === null) return { status: "fail", detail: "Nix is not installed (no nix-instantiate on PATH)", fix };
      return compareVersions(have, builtInMachines.nixMin.version) >= 0
        ? { status: "ok", detail: `Nix ${have} (the catalog's pins need >= ${builtInMachines.nixMin.version}, their lib/minver.nix)` }
        : {
            status: "fail",
            detail: `Nix ${have} is older than ${builtInMachines.nixMin.version}, which the pinned nixpkgs needs (its lib/minver.nix): it would abort evaluating it`,
            fix,
          };
    },
  },
  {
    id: "nix-command",
    title: "nix-command",
    commands: ["doctor"],
    blocking: false,
    appliesTo: () => null,
    judge: (p) => {
      const on = p.nixCommandOn();
      if (on === null) return { status: "skip", detail: "Nix is not installed" };
      return on
        ? { status: "ok", detail: "on: `nix …` commands run as written" }
        : {
            status: "skip",
            detail:
              "off (Nix's default): not needed, the commands the docs show are nix-build and nix-instantiate; for `nix shell` or " +
              "`nix copy` yourself, the block below turns it on for your user",
            conf: { file: "~/.config/nix/nix.conf", lines: ["extra-experimental-features = nix-command"] },
          };
    },
  },
  {
    id: "system-features",
    title: "system features",
    commands: ["doctor", "build", "install"],
    blocking: true,
    appliesTo: (c) =>
      (c.command === "build" || c.command === "install") && c.backend === "flox"
        ? "flox builds with the Nix it runs (build --dry-run lists what a builder must declare)"
        : c.localBuilds === false
        ? "--max-jobs 0: this machine builds nothing"
        : c.builders
          ? "--builders given: build --dry-run says which builder takes which variant"
          : c.variants.some((v) => v.system === c.hostSystem)
            ? null
            : `no variant here is for this host's system (${c.hostSystem})`,
    judge: (p, c) => {
      const conf = p.nixConfig();
      if (!conf) return { status: "fail", detail: "`nix show-config` did not answer", fix: `install Nix >= ${builtInMachines.nixMin.version} (the official installer)` };
      const declared = (conf.get("system-features") ?? "").split(/\s+/).filter(Boolean);
      const required = [...new Set(c.variants.filter((v) => v.system === c.hostSystem).flatMap((v) => v.requiredSystemFeatures))].sort();
      const missing = required.filter((f) => !declared.includes(f));
      if (missing.length === 0) return { status: "ok", detail: `declared: ${required.join(" ") || "(none required)"}` };
      const who = c.variants.filter((v) => v.requiredSystemFeatures.some((f) => missing.includes(f))).map((v) => v.name);
      const runnable = hostGccarch(p, c.hostSystem);
      const unrunnable = missing.filter((f) => f.startsWith("gccarch-") && runnable !== null && !runnable.includes(f));
      const detail =
        `this machine's Nix declares no ${missing.join(", ")}, which ${variantsAndChecks(who)} require (e.g. ${who.find((n) => !n.startsWith("check-")) ?? who[0]}): Nix would refuse ` +
        "them after building their dependencies";
      if (unrunnable.length)
        return {
          status: "fail",
          detail,
          // --builders is an option of the nix backend only (driver/build-options.ts refuses it with flox).
          fix:
            `this CPU cannot run ${unrunnable.join(", ")}: build on a machine that can, whose nix.conf declares it` +
            (c.backend === "nix" ? " (--builders)" : " (the nix backend's --builders, or flox on that machine)"),
        };
      const fixConf: NixConfFix = { file: "/etc/nix/nix.conf", lines: [systemFeaturesLine(missing)], nixos: "nix.settings.system-features" };
      // The GPU checks' `cuda` (build --verify-gpu) needs the driver in the sandbox too, not only the declaration.
      const gpu = missing.includes(GPU_CHECK_FEATURE) ? `; for ${GPU_CHECK_FEATURE} (the GPU checks): ${GPU_CHECK_FEATURE_HOWTO}` : "";
      return { status: "fail", detail, fix: confFixText(fixConf) + gpu, conf: fixConf };
    },
  },
  {
    id: "store-space",
    title: "Nix store space",
    commands: ["doctor", "build", "install"],
    blocking: false,
    appliesTo: () => null,
    judge: (p) => {
      const f = p.storeFree();
      if (!f) return { status: "skip", detail: "df could not say how much space is free" };
      return f.bytes >= builtInMachines.storeFreeFloor.bytes
        ? { status: "ok", detail: `${gib(f.bytes)} free at ${f.path}` }
        : {
            status: "fail",
            detail: `${gib(f.bytes)} free at ${f.path}, less than the ${gib(builtInMachines.storeFreeFloor.bytes)} that a CUDA toolkit and one CUDA torch fill`,
            fix: "free space (nix-collect-garbage -d) or put /nix on a larger disk",
          };
    },
  },
  {
    id: "cuda-cache",
    title: "CUDA binary cache",
    commands: ["doctor", "install"],
    blocking: false,
    // The public caches that serve the CUDA variants' systems (catalog/lib/binary-cache.ts cachesToOffer):
    // cache.nixos-cuda.org where it builds (x86_64-linux), cache.flox.dev where no cache builds (aarch64-linux), which
    // may hold the packages (`pin cache` asks it of a variant).
    appliesTo: (c) => (cudaVariants(c).length === 0 ? "no CUDA variant" : cachesToOffer(builtInCatalog, cudaVariants(c).map((v) => v.system)).length === 0 ? "no public cache serves these systems" : null),
    judge: (p, c) => {
      const conf = p.nixConfig();
      if (!conf) return { status: "fail", detail: "`nix show-config` did not answer", fix: `install Nix >= ${builtInMachines.nixMin.version}` };
      const subs = (conf.get("substituters") ?? "").split(/\s+/).map((s) => s.replace(/\/+$/, ""));
      const keys = (conf.get("trusted-public-keys") ?? "").split(/\s+/);
      const caches = cachesToOffer(builtInCatalog, cudaVariants(c).map((v) => v.system));
      const missing = caches.filter((k) => !subs.includes(k.url) || !keys.includes(k.publicKey));
      const said = (k: (typeof caches)[number]) => (k.holds === "builds" ? `${k.url}` : `${k.url} (may hold them: which revisions it built is not known here)`);
      if (missing.length === 0) return { status: "ok", detail: `${caches.map(said).join(", ")} with ${caches.length === 1 ? "its key" : "their keys"}` };
      const lines = [
        ...(missing.some((k) => !subs.includes(k.url)) ? [`extra-substituters = ${missing.filter((k) => !subs.includes(k.url)).map((k) => k.url).join(" ")}`] : []),
        ...(missing.some((k) => !keys.includes(k.publicKey))
          ? [`extra-trusted-public-keys = ${missing.filter((k) => !keys.includes(k.publicKey)).map((k) => k.publicKey).join(" ")}`]
          : []),
      ];
      const fixConf: NixConfFix = { file: "/etc/nix/nix.conf", lines, nixos: "nix.settings.substituters and nix.settings.trusted-public-keys" };
      const what = missing
        .map((k) => `${!subs.includes(k.url) ? "the substituter" : "the key"} of ${k.name}${k.holds === "builds" ? "" : " (which may hold them)"}`)
        .join(" and ");
      // A cache that only may hold the packages is offered (–, with its block), not required: doctor still passes.
      const required = missing.some((k) => k.holds === "builds");
      return {
        status: required ? "fail" : "skip",
        detail: `${what} ${missing.length === 1 ? "is" : "are"} not configured: ${required ? "its CUDA packages would be built here" : "to try it, add the block below"}`,
        fix: confFixText(fixConf),
        conf: fixConf,
      };
    },
  },
  {
    id: "team-cache",
    title: "team binary cache",
    commands: ["doctor", "install"],
    blocking: false,
    appliesTo: (c) => (c.teamCaches?.length ? null : "matrix.ts names no team cache (caches)"),
    // Offered, not required (–, with its block): build and install pass the caches to Nix for their own runs.
    judge: (p, c) => {
      const conf = p.nixConfig();
      if (!conf) return { status: "fail", detail: "`nix show-config` did not answer", fix: `install Nix >= ${builtInMachines.nixMin.version}` };
      const caches = c.teamCaches!;
      const m = missingTeamCaches(caches, (conf.get("substituters") ?? "").split(/\s+/), (conf.get("trusted-public-keys") ?? "").split(/\s+/));
      if (m.lines.length === 0) return { status: "ok", detail: `${caches.map((k) => redactCredentials(k.url)).join(", ")} with ${caches.length === 1 ? "its key" : "their keys"}` };
      const fixConf: NixConfFix = { file: "/etc/nix/nix.conf", lines: m.lines, nixos: "nix.settings.substituters and nix.settings.trusted-public-keys" };
      return {
        status: "skip",
        detail:
          `${m.what} not in this host's Nix configuration: build and install pass ${m.count === 1 ? "it" : "them"} for their own runs ` +
          "(a Nix daemon takes them from a user not in trusted-users only where its trusted-substituters lists them); add the block below so every Nix command and user fetches from " +
          (m.count === 1 ? "it" : "them"),
        fix: confFixText(fixConf),
        conf: fixConf,
      };
    },
  },
  {
    id: "flox",
    title: "flox",
    commands: ["doctor", "build", "publish", "install"],
    blocking: true,
    appliesTo: (c) => (c.backend === "flox" || c.org !== undefined ? null : "the nix backend is chosen"),
    judge: (p, c) => {
      const v = p.floxVersion();
      // The way round flox is an option of the command at hand: publish has no --backend, its Nix way is --to.
      const fix =
        `install flox ≥ ${builtInMachines.floxMin.version} (flox.dev docs, "Install Flox"), ` +
        (c.command === "publish" ? "or push to a Nix binary cache with `publish --to STORE-URI`" : "or use `--backend nix`");
      if (v === null) return { status: "fail", detail: "flox is not installed (no flox on PATH)", fix };
      if (v === "unknown") return { status: "ok", detail: "flox is on PATH (it printed no version)" };
      return compareVersions(v, builtInMachines.floxMin.version) >= 0
        ? { status: "ok", detail: `flox ${v}` }
        : { status: "fail", detail: `flox ${v} is older than ${builtInMachines.floxMin.version}, the first whose flox build builds .flox/pkgs/*.nix`, fix: `upgrade flox to >= ${builtInMachines.floxMin.version}` };
    },
  },
  {
    id: "flox-auth",
    title: "flox auth",
    commands: ["doctor", "publish"],
    blocking: true,
    appliesTo: (c) => (c.org !== undefined ? null : "only publish --org needs a login"),
    judge: (p) => {
      if (p.floxVersion() === null) return { status: "skip", detail: "flox is not installed (the flox line says how to install it)" };
      const a = p.floxAuth();
      return a.ok ? { status: "ok", detail: a.line || "logged in" } : { status: "fail", detail: `flox auth status: ${a.line || "not logged in"}`, fix: "flox auth login" };
    },
  },
  {
    id: "gpu-driver",
    title: "GPU driver",
    commands: ["doctor", "install"],
    blocking: false,
    appliesTo: (c) => {
      const cuda = cudaVariants(c);
      if (cuda.length === 0) return "no CUDA variant: nothing loads libcuda";
      if (!cuda.some((v) => v.system === c.hostSystem)) return `the CUDA variant is for ${cuda[0]!.system}, not this host (${c.hostSystem})`;
      return null;
    },
    judge: (p, c) => gpuDriverVerdict(p, cudaVariants(c).find((v) => v.system === c.hostSystem)!),
  },
];

/**
 * The gccarch-… features this host's CPU runs (its /proc/cpuinfo under the root, through compat.ts isaFit), or null.
 * Reads the built-in catalog's ISA table unparsed (catalog/lib/built-in.ts): no local catalog extends it.
 */
function hostGccarch(p: HostAnswers, hostSystem: string): string[] | null {
  const text = p.cpuinfo();
  if (text === null) return null;
  try {
    return isaFit({ system: hostSystem as never, cpu: parseCpuinfo(text) }, builtInCatalog).runnable.map(gccarchFeature);
  } catch {
    return null;
  }
}

/**
 * The GPU driver as the variant's CUDA libraries see it: their runpath holds /run/opengl-driver/lib, and the loader
 * also searches LD_LIBRARY_PATH (before the runpath), never the host's /etc/ld.so.cache.
 * ✓ NixOS with libcuda.so.1 there, or this process inside a flox activation that serves the host's libcuda
 * (floxCudaRoute), or a host whose GPU driver sits elsewhere (nvidia-smi, /dev/nvidia0, `ldconfig -p`) where nix-gl-host
 * would find it (nixglhostSearch) and the variant carries nixglhost (the route install takes: a ✓ with the route, since
 * nothing is left to fix); ✗ such a host where nixglhost would find no driver or the matrix has no environment to carry
 * it, with what the flox activation lacks and the routes that work; – no NVIDIA driver here (fine for building).
 */
function gpuDriverVerdict(p: HostAnswers, v: CheckedVariant): Verdict {
  const nixosLib = `${builtInMachines.nixosDriverLib.dir}/libcuda.so.1`;
  if (existsOn(p.host, nixosLib)) return { status: "ok", detail: `${nixosLib} is there (NixOS): the variant's CUDA libraries load it` };
  const d = p.driver();
  const flox = floxCudaRoute(p.host, d.device);
  if (flox.serves) return { status: "ok", detail: flox.detail };
  if (!d.smi && !d.device && d.hostLibcuda.length === 0)
    return { status: "skip", detail: "no NVIDIA driver here (no nvidia-smi, /dev/nvidia0 or libcuda.so.1): fine for building; run on a GPU host" };
  const where = d.hostLibcuda.length ? `the host's libcuda.so.1 is ${d.hostLibcuda.join(", ")} (ldconfig -p)` : "no libcuda.so.1 in `ldconfig -p`";
  const found = nixglhostSearch(p.host).filter((x) => x.kept && x.cuda.some((f) => f.startsWith("libcuda.so")));
  const passedOver = nixglhostSearch(p.host).filter((x) => !x.kept && x.cuda.some((f) => f.startsWith("libcuda.so")));
  const nixglhost = found.length
    ? `nixglhost would take libcuda from ${found.map((x) => x.dir).join(", ")}`
    : passedOver.length
      ? `nixglhost would find no driver: ${passedOver.map((x) => x.dir).join(", ")} holds libcuda but none of its NVIDIA libraries (libnvidia-*), so it passes the directory over`
      : `nixglhost would find no libcuda in ${builtInMachines.nixglhost.searchList}`;
  const seen = `${d.smi ? `nvidia-smi sees ${d.smi.length} GPU(s)` : "/dev/nvidia0 exists"} and ${where}`;
  if (found.length && carriesNixglhost(v))
    return {
      status: "ok",
      route: "nixglhost",
      detail: `${seen}, outside ${builtInMachines.nixosDriverLib.dir} (not NixOS): ${nixglhostRouteNote(v)}; nixglhost takes libcuda from ${found.map((x) => x.dir).join(", ")}` + (flox.detail ? `; ${flox.detail}` : ""),
    };
  return {
    status: "fail",
    route: "nixglhost",
    detail:
      `${seen}, but ${nixosLib} is missing ` +
      `(not NixOS): the variant's CUDA libraries look for libcuda there (the runpath Nix gives them) and in LD_LIBRARY_PATH, ` +
      `never in the host's ld.so.cache, so torch sees no GPU; ` +
      `${nixglhost}` +
      (found.length ? `, but the matrix has no environment variant of this combination to carry it (add "torch-env" to packages)` : "") +
      (flox.detail ? `; ${flox.detail}` : ""),
    fix: `run it through one of:\n${driverRouteLines(v).join("\n")}`,
  };
}

/**
 * Whether this process runs inside a flox activation that serves the host's libcuda (catalog/machines.ts FLOX_CUDA, read from
 * flox's 0800_cuda.sh and ld-floxlib): `LD_AUDIT` names ld-floxlib.so and `LD_FLOXLIB_FILES_PATH` holds a file named
 * libcuda.so.1 that exists (ld-floxlib matches entries by basename); as a fallback for flox 1.5–1.12.0, which exported
 * it, `_FLOX_ENV_CUDA_DETECTION=1` with an NVIDIA device node. `detail` says why not when FLOX_ENV shows an activation
 * (run mode, detection off, no libcuda in the ldconfig cache); "" outside any activation. Reads the environment and
 * files under the host root only.
 */
function floxCudaRoute(host: Host, device: boolean): { serves: boolean; detail: string } {
  const env = host.env;
  const audit = (env.LD_AUDIT ?? "").split(/[:\s]/).filter(Boolean);
  const floxlib = audit.find((a) => basename(a) === builtInMachines.floxCuda.auditLibrary);
  const files = (env.LD_FLOXLIB_FILES_PATH ?? "").split(":").filter(Boolean);
  const libcuda = files.find((f) => basename(f) === "libcuda.so.1" && existsOn(host, f));
  const where = env.FLOX_ENV ? ` of ${env.FLOX_ENV}` : "";
  if (floxlib && libcuda)
    return { serves: true, detail: `inside \`flox activate\`${where}: ld-floxlib (LD_AUDIT) serves the host's ${libcuda} (LD_FLOXLIB_FILES_PATH, flox's cuda-detection)` };
  if (env.FLOX_ENV && env[builtInMachines.floxCuda.legacyVariable] === "1" && device)
    return { serves: true, detail: `inside \`flox activate\`${where} with cuda-detection on (${builtInMachines.floxCuda.legacyVariable}=1, flox 1.5 to 1.12.0): flox serves the host's libcuda` };
  if (!env.FLOX_ENV) return { serves: false, detail: "" };
  if (!floxlib)
    return {
      serves: false,
      detail:
        `this shell is inside \`flox activate\`${where} but LD_AUDIT names no ld-floxlib.so: \`run\` mode (flox activate -m run) does no CUDA ` +
        "detection (or FLOX_NOSET_LD_AUDIT is set); activate in dev mode, flox's default",
    };
  return {
    serves: false,
    detail:
      `this shell is inside \`flox activate\`${where} with ld-floxlib, but LD_FLOXLIB_FILES_PATH holds no libcuda.so.1: cuda-detection is off ` +
      "(options.cuda-detection = false), no /dev/nvidia* node, or the host's ldconfig cache lists no libcuda",
  };
}

/**
 * The directories numtide/nix-gl-host's `nixglhost` searches on this host, in its order (catalog/machines.ts NIXGLHOST:
 * LD_LIBRARY_PATH, /etc/ld.so.conf with its includes, the fixed list), under the host root, each with whether its rule
 * keeps it (a file matching NVIDIA_DSO_PATTERNS) and its files matching CUDA_DSO_PATTERNS (names). Directories that do
 * not exist are left out, as get_ld_paths does. Never throws (unreadable files count as absent).
 * @returns host paths ("/usr/lib/x86_64-linux-gnu"), not paths under the root
 */
export function nixglhostSearch(host: Host): { dir: string; kept: boolean; cuda: string[] }[] {
  const under = (x: string) => join(host.root, x);
  const isDir = (x: string) => {
    try {
      return statSync(under(x)).isDirectory();
    } catch {
      return false;
    }
  };
  const confDirs = (file: string, depth = 0): string[] => {
    let text: string;
    try {
      text = readFileSync(under(file), "utf8");
    } catch {
      return [];
    }
    return text.split("\n").flatMap((raw) => {
      const l = raw.trim();
      if (!l || l.startsWith("#")) return [];
      if (!l.startsWith("include ")) return [l];
      if (depth > 8) return [];
      let g = l.slice("include ".length);
      if (!g.startsWith("/")) g = `${dirname(normalize(file))}/${g}`;
      return globFiles(host, g).flatMap((f) => confDirs(f, depth + 1));
    });
  };
  const dirs = [...(host.env.LD_LIBRARY_PATH ?? "").split(":").filter(Boolean), ...confDirs("/etc/ld.so.conf"), ...builtInMachines.nixglhost.fixedDirs];
  const nvidia = builtInMachines.nixglhost.nvidiaDsoPatterns.map((x) => new RegExp(x));
  const cudaRe = builtInMachines.nixglhost.cudaDsoPatterns.map((x) => new RegExp(x));
  return [...new Set(dirs)].filter(isDir).map((dir) => {
    let names: string[] = [];
    try {
      names = readdirSync(under(dir)).filter((n) => {
        try {
          return statSync(join(under(dir), n)).isFile();
        } catch {
          return false;
        }
      });
    } catch {
      names = [];
    }
    // resolve_libraries matches re.search over the file's absolute path; on the host that is DIR/NAME.
    const matches = (res: RegExp[], n: string) => res.some((r) => r.test(`${dir}/${n}`));
    return { dir, kept: names.some((n) => matches(nvidia, n)), cuda: names.filter((n) => matches(cudaRe, n)) };
  });
}

/** Python's glob for an ld.so.conf `include` (wildcards `*`, `?` in the last component only), as host paths, sorted. */
function globFiles(host: Host, pattern: string): string[] {
  const dir = dirname(pattern);
  const base = basename(pattern);
  if (!/[*?[]/.test(base)) return existsOn(host, pattern) ? [pattern] : [];
  const re = new RegExp(`^${base.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")}$`);
  try {
    return readdirSync(join(host.root, dir))
      .filter((n) => !n.startsWith(".") && re.test(n))
      .sort()
      .map((n) => `${dir}/${n}`);
  } catch {
    return [];
  }
}

/** Run the checks `command` runs against `host`, in order. */
export function runChecks(host: Host, c: PreflightContext, only?: readonly string[]): CheckResult[] {
  const p = new HostAnswers(host, c.nixOptions ?? []);
  return CHECKS.filter((k) => k.commands.includes(c.command) && (!only || only.includes(k.id))).map((k) => {
    const why = k.appliesTo(c);
    const v: Verdict = why !== null ? { status: "skip", detail: why } : k.judge(p, c);
    return { id: k.id, title: k.title, blocking: k.blocking, ...v };
  });
}

/**
 * The lines of `results` at `width` columns: "✓ title: detail", "✗ …" then "    fix: …" (a list when the fix has several
 * lines), "– …". A fix or setting in nix.conf follows as its shell block (nixConfBlock), between blank lines, never
 * wrapped as prose: each line is a whole setting that can be pasted as it is (an `extra-` setting wider than `width`
 * is split into several `extra-` lines of the same name; any other setting longer than `width` stays whole).
 */
export function formatChecks(results: readonly CheckResult[], width: number): string {
  const mark = { ok: "✓", fail: "✗", skip: "–" } as const;
  return results
    .flatMap((r) => [
      wrap(`${r.title}: ${r.detail}`, width, { indent: `  ${mark[r.status]} `, hang: "    " }),
      // A fix of several lines (one per way) is a list under its first line.
      ...(r.status === "fail" && r.fix
        ? r.fix.split("\n").map((l, i) => (i === 0 ? wrap(`fix: ${l}`, width, { indent: "    ", hang: "      " }) : wrap(l, width, { indent: "      - ", hang: "        " })))
        : []),
      ...(r.conf && r.status !== "ok" ? ["", ...nixConfBlock(r.conf, width), ""] : []),
    ])
    .join("\n");
}


/** build/publish cannot start: a blocking check failed. Exit 2; the message holds the check lines with their fixes. */
class PreflightError extends InputError {
  override name = "PreflightError";
  constructor(
    readonly results: readonly CheckResult[],
    width: number,
  ) {
    super(`cannot start: a check failed (variant-matrix doctor runs them all)\n${formatChecks(results.filter((r) => r.status === "fail"), width)}`);
  }
}

/**
 * Throw PreflightError when a blocking check of `results` failed.
 * @throws PreflightError listing the failed checks (blocking or not) with their fixes
 */
export function refuseOnBlocking(results: readonly CheckResult[], width: number): void {
  if (results.some((r) => r.status === "fail" && r.blocking)) throw new PreflightError(results, width);
}

/**
 * Whether building `files` makes this host's Nix evaluate a catalog pin: a generated wrapper (its first line is the
 * generator's header) imports pkgs/matrix.nix, which fetches the pinned nixpkgs; the user's own files (--pkgs-dir)
 * are not known to.
 */
export function evaluatesPinnedNixpkgs(files: readonly string[]): boolean {
  return files.some((f) => {
    try {
      return readFileSync(f, "utf8").startsWith(`# ${GENERATED_MARK}`);
    } catch {
      return false;
    }
  });
}

