/**
 * Nix's structured log (`--log-format internal-json`, new in Nix 2.4 by its release notes: "The new `--log-format`
 * flag … There is a new `internal-json` output format"; so in the project's floor, 2.18): what a nix-build attempt
 * says, read as data rather than prose (pure; job.ts feeds it the lines).
 *
 * Nix writes one record a line on stderr, `@nix {"action": "start"|"stop"|"result"|"msg", …}` (src/libutil/logging.cc
 * JSONLogger; the same shape nix-fast-build's log_format.py reads). The records this module reads (logging.hh enums):
 * - `start` of activity type 105 (actBuild): `fields` [drvPath, machine ("" local, else the store URI), round, rounds];
 *   type 108 (actSubstitute): [storePath, substituter URI]; other types only for their `text`.
 * - `result` type 101 (resBuildLogLine) and 107 (resPostBuildLogLine): `fields` [line], one line the builder (or the
 *   post-build hook) printed, under its activity's `id`.
 * - `msg`: `level` (0 error, 1 warning, 3 info) and `msg` (with ANSI colours); errors also carry `raw_msg`, the text
 *   without the "error:" prefix.
 * A line without the `@nix ` prefix (ssh's own complaint, a wrapper's line) is kept as it is.
 *
 * The human log is kept for the user: `human(line)` gives what Nix's own human format prints for the record (a
 * start's text with "...", a message, a builder's line; ANSI removed, as Nix does for a file), checked against the
 * human log of the same real build (tests/fixtures/nix-log). Memory stays bounded: per build, its last lines only.
 */

/** Activity types (Nix src/libutil/logging.hh) this module reads. */
const ACT_BUILD = 105;
const ACT_SUBSTITUTE = 108;
/** Result types (logging.hh): a builder's line, a post-build hook's line. */
const RES_BUILD_LOG_LINE = 101;
const RES_POST_BUILD_LOG_LINE = 107;
/** Nix's default verbosity (lvlInfo): what its human format prints of activity texts. */
const LVL_INFO = 3;
/** Lines kept per build for a failure's "last output". */
const TAIL_LINES = 10;
/** Characters kept of one builder line in the tail (a builder may print a line of megabytes). */
const TAIL_LINE_CHARS = 1000;

/** The prefix of a structured record. */
export const NIX_JSON_PREFIX = "@nix ";

/** ANSI escape sequences (colours, cursor), removed as Nix's human format does when it writes to a file. */
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;

/** One derivation Nix started building in this attempt. */
export interface NixBuild {
  /** /nix/store/…-NAME.drv */
  drvPath: string;
  /** "local", or the remote builder's store URI (`ssh://host`, `ssh-ng://…`). */
  machine: string;
  /** Its last lines (at most 10), oldest first. */
  tail: string[];
}

/** Why an attempt failed, as Nix's records say. */
export interface NixFailure {
  /** Nix's last error message, ANSI removed (`builder for '/nix/store/…drv' failed with exit code 3`). */
  error: string;
  /** The derivation whose builder failed (a build of this attempt that an error names), else null. */
  drvPath: string | null;
  /** That build's last lines (at most 10), else []. */
  lastLines: string[];
}

/** How a variant's output came to be in one attempt. */
export interface NixOrigin {
  origin: "built" | "substituted" | "present";
  /** "local" or the builder's URI (built), the substituter's URI (substituted), null (present). */
  machine: string | null;
}

/** One parsed record; null for a line that is not one (then it is kept as it is). */
interface NixRecord {
  action?: string;
  id?: number;
  type?: number;
  level?: number;
  text?: string;
  msg?: string;
  raw_msg?: string;
  fields?: unknown[];
}

/** The record of `line`, or null when it is not `@nix {…}` (a plain line, or a cut or broken record). */
function parseRecord(line: string): NixRecord | null {
  if (!line.startsWith(NIX_JSON_PREFIX)) return null;
  try {
    const r = JSON.parse(line.slice(NIX_JSON_PREFIX.length)) as unknown;
    return r !== null && typeof r === "object" && !Array.isArray(r) ? (r as NixRecord) : null;
  } catch {
    return null;
  }
}

/** `s` without ANSI escapes. */
export const stripAnsi = (s: string): string => s.replace(ANSI, "");

/**
 * Whether store path or derivation `path` is the variant `name`'s: its name part is NAME or NAME-VERSION (a version
 * starts with a digit), with or without `.drv`.
 */
export function isVariantPath(path: string, name: string): boolean {
  const m = /^\/nix\/store\/[a-z0-9]{32}-(.+?)(?:\.drv)?$/.exec(path);
  if (!m) return false;
  const base = m[1]!;
  return base === name || (base.startsWith(`${name}-`) && /^[0-9]/.test(base.slice(name.length + 1)));
}

/**
 * The structured log of one nix-build attempt: feed it every stderr line with `line` (it returns the human text to
 * keep in the log), then ask `failure()` and `origin(name)`.
 */
export class NixLog {
  /** Build activities by id (every build of the attempt: a failure may name any of them). */
  private readonly builds = new Map<number, NixBuild>();
  /** Substitutions: store path → substituter URI. */
  private readonly substituted = new Map<string, string>();
  /** Error messages (level 0), ANSI removed, in order (the last few). */
  private readonly errors: string[] = [];
  /** Whether any `@nix` record was seen (a Nix that ignored the flag writes none). */
  structured = false;

  /**
   * Read one stderr line of the attempt.
   * @returns what Nix's human format prints for it (no newline), or null when it prints nothing (progress records)
   */
  line(line: string): string | null {
    const r = parseRecord(line);
    if (r === null) return line;
    this.structured = true;
    switch (r.action) {
      case "start":
        return this.start(r);
      case "result":
        return this.result(r);
      case "msg": {
        const text = stripAnsi(String(r.msg ?? ""));
        if (r.level === 0) {
          this.errors.push(stripAnsi(String(r.raw_msg ?? r.msg ?? "").replace(/^error: /, "")));
          if (this.errors.length > 20) this.errors.shift();
        }
        return text;
      }
      default:
        return null;
    }
  }

  private start(r: NixRecord): string | null {
    const f = Array.isArray(r.fields) ? r.fields : [];
    if (r.type === ACT_BUILD && typeof f[0] === "string" && typeof r.id === "number")
      this.builds.set(r.id, { drvPath: f[0], machine: typeof f[1] === "string" && f[1] !== "" ? f[1] : "local", tail: [] });
    if (r.type === ACT_SUBSTITUTE && typeof f[0] === "string" && typeof f[1] === "string") this.substituted.set(f[0], f[1]);
    // Nix's human format: an activity's text at the default verbosity, followed by "...".
    return r.text && (r.level ?? 0) <= LVL_INFO ? `${stripAnsi(r.text)}...` : null;
  }

  private result(r: NixRecord): string | null {
    if (r.type !== RES_BUILD_LOG_LINE && r.type !== RES_POST_BUILD_LOG_LINE) return null;
    const text = String(Array.isArray(r.fields) ? (r.fields[0] ?? "") : "");
    const b = typeof r.id === "number" ? this.builds.get(r.id) : undefined;
    if (b && text.trim() !== "") {
      b.tail.push(text.length > TAIL_LINE_CHARS ? `${text.slice(0, TAIL_LINE_CHARS)}…` : text);
      if (b.tail.length > TAIL_LINES) b.tail.shift();
    }
    return text;
  }

  /** The builds Nix started, in order. */
  buildsStarted(): NixBuild[] {
    return [...this.builds.values()];
  }

  /**
   * Why the attempt failed: Nix's error that names a build of this attempt (its builder failed), with that build's
   * last lines; else Nix's last error (an evaluation error, a dependency that could not be fetched). Null when Nix
   * printed no error (a flag it ignored, a crash: read the human log then).
   */
  failure(): NixFailure | null {
    if (this.errors.length === 0) return null;
    for (let i = this.errors.length - 1; i >= 0; i--) {
      const e = this.errors[i]!;
      const b = [...this.builds.values()].reverse().find((x) => e.includes(`'${x.drvPath}'`));
      if (b) return { error: e, drvPath: b.drvPath, lastLines: [...b.tail] };
    }
    return { error: this.errors.at(-1)!, drvPath: null, lastLines: [] };
  }

  /**
   * How variant `name`'s output came to be: built (locally or on a remote builder: the last build of its
   * derivation), substituted (from which substituter), or present (neither: it was in the store already).
   */
  origin(name: string): NixOrigin {
    const b = [...this.builds.values()].reverse().find((x) => isVariantPath(x.drvPath, name));
    if (b) return { origin: "built", machine: b.machine };
    const s = [...this.substituted].reverse().find(([p]) => isVariantPath(p, name));
    if (s) return { origin: "substituted", machine: s[1] };
    return { origin: "present", machine: null };
  }
}

/**
 * One line for the report from a failure: Nix's error (store hashes removed) and, when a builder failed, its last
 * line; at most 300 characters.
 */
export function failureText(f: NixFailure): string {
  let l = `error: ${f.error.replace(/\/nix\/store\/[a-z0-9]{32}-/g, "")}`;
  const last = f.lastLines.at(-1);
  if (f.drvPath !== null && last !== undefined) l += `; last output: ${last.trim()}`;
  return l.length > 300 ? `${l.slice(0, 297)}…` : l;
}
