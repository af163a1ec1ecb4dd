/**
 * The argument rules every command shares, in one place: cli.ts registers each command module through
 * `withArgumentRules`, and `pin` wraps each of its actions the same way. yargs alone gets three things wrong for this
 * CLI, so the wrapper adds them to whatever options and positionals the module's own builder declares:
 *
 * - An option of type string or number needs a value. yargs takes a bare `--report` as "" and a bare `--jobs` as
 *   nothing at all, so the run went on with a default nobody asked for; here both are an error (exit 2), and so is an
 *   explicitly empty string (`--report ""`), except for the options a module lists as `optionalValue` (fleet's
 *   `--write-matrix`: bare, it prints).
 * - Words after `--` are the command's names. yargs fills positionals before it looks past `--` and then leaves
 *   those words in `argv._`, where no handler reads them (`build -- NAME` selected every variant). Here they go to the
 *   command's variadic positional (`names`, `hosts`), else to its unset optional positionals in order; any left over
 *   is an error naming them.
 * - Numbers are checked against NUMBER_RULES (`--kill-grace -5`, `--jobs abc` and `--jobs 1.5` are errors).
 * - A single-valued option given twice: the last one wins, as POSIX tools do (`--logs-dir A --logs-dir B` is B,
 *   `--backend nix --backend flox` is flox). yargs alone makes an array of it, which reached handlers that expect a
 *   string (a TypeError) or a report (`"backend": ["nix","flox"]`). yargs' `duplicate-arguments-array: false` would do
 *   the same to the repeatable options and variadic positionals too, so the rule is applied here, per option, before
 *   yargs validates choices: only options declared `array` (REPEATABLE) and variadic positionals stay arrays.
 *
 * Every violation throws UsageError (exit 2, one `variant-matrix: error: …` line, no stack).
 */
import type { Argv, CommandModule } from "yargs";
import { clip, UsageError } from "../errors.ts";


/** What a number option accepts: at least `min`, and only whole numbers when `integer`. */
export interface NumberRule {
  min: number;
  integer: boolean;
}

/**
 * The accepted range of every number option, by option name (one name per concept across commands, so one rule per
 * name): counts of jobs, cores, builders and retries are whole numbers; `kill-grace` is seconds and may be a fraction.
 * A number option missing here gets DEFAULT_NUMBER_RULE.
 */
export const NUMBER_RULES: Readonly<Record<string, NumberRule>> = {
  jobs: { min: 1, integer: true },
  cores: { min: 1, integer: true },
  "max-jobs": { min: 0, integer: true },
  retries: { min: 0, integer: true },
  "kill-grace": { min: 0, integer: false },
  builders: { min: 1, integer: true },
  // ssh's ConnectTimeout takes whole seconds, and 0 would mean "the system's TCP timeout" (a hang, not a limit).
  "connect-timeout": { min: 1, integer: true },
};

/** The rule of a number option NUMBER_RULES does not name: any finite number ≥ 0. */
export const DEFAULT_NUMBER_RULE: NumberRule = { min: 0, integer: false };

/** How a command module is wrapped (see withArgumentRules). */
export interface ArgumentRulesOptions {
  /** String options that may be given bare (their value is then ""), e.g. fleet's `--write-matrix`. */
  optionalValue?: readonly string[];
  /**
   * How many command words precede the command's own arguments in `argv._`: 1 for a top-level command (`build`),
   * 2 for an action of one (`pin add`). Default 1.
   */
  depth?: number;
  /**
   * The command line's words as given (cli.ts passes them): yargs reads `--jobs ""` as 0, so an empty word after a
   * number option is found here and refused as a missing value.
   */
  words?: readonly string[];
}

/** A positional of a yargs command string: `[names..]` → { name: "names", variadic: true, required: false }. */
export interface Positional {
  name: string;
  variadic: boolean;
  required: boolean;
}

/** The positionals a yargs command string declares, in order: `"build [names..]"` → [{ name: "names", … }]. */
export function positionalsOf(command: string): Positional[] {
  return [...command.matchAll(/([<[])([^\]>|.]+)(?:\|[^\]>]*)?(\.\.)?[>\]]/g)].map((m) => ({
    name: m[2]!,
    variadic: m[3] !== undefined,
    required: m[1] === "<",
  }));
}

/** The option names yargs declares (not their aliases) of one type, from `getOptions()` (a runtime API @types lacks). */
function declared(y: Argv, type: "string" | "number"): { names: string[]; aliases: Set<string> } {
  const o = (y as Argv & { getOptions(): { string: string[]; number: string[]; alias: Record<string, string[]> } }).getOptions();
  const aliases = new Set(Object.values(o.alias ?? {}).flat());
  return { names: [...new Set(o[type] ?? [])].filter((k) => !aliases.has(k)), aliases };
}

/** The option runtime view yargs' `getOptions()` gives (a runtime API @types lacks). */
interface OptionsView {
  key: Record<string, unknown>;
  array: string[];
  alias: Record<string, string[]>;
}

/** "logs-dir" → "logsDir": the camelCase key yargs also sets. */
function camel(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The options of `y` that take one value: every declared key (string, number, boolean, or choices only) but those
 * declared `array` (REPEATABLE, variadic positionals), `help` and `version`; aliases are not listed (they share the
 * value). Tests enumerate every command's options through this.
 */
export function singleValuedOptions(y: Argv): string[] {
  const o = (y as Argv & { getOptions(): OptionsView }).getOptions();
  const aliases = new Set(Object.values(o.alias ?? {}).flat());
  const arrays = new Set(o.array ?? []);
  return Object.keys(o.key ?? {}).filter((k) => !arrays.has(k) && !aliases.has(k) && k !== "help" && k !== "version");
}

/**
 * In `argv`, each of `names` (and its aliases and camelCase keys) given more than once becomes its last value.
 * @param aliases yargs' alias map (option → its other names)
 */
export function lastValueWins(argv: Record<string, unknown>, names: readonly string[], aliases: Readonly<Record<string, readonly string[]>> = {}): void {
  for (const name of names) {
    for (const k of new Set([name, ...(aliases[name] ?? [])].flatMap((n) => [n, camel(n)]))) {
      const v = argv[k];
      if (Array.isArray(v)) argv[k] = v[v.length - 1];
    }
  }
}

/**
 * Check the number options' values in `argv` against NUMBER_RULES.
 * @param names the number options (kebab-case, as declared)
 * @throws UsageError naming the option, the value given and what it accepts
 */
export function checkNumbers(argv: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    const v = argv[name];
    if (v === undefined) continue;
    const rule = NUMBER_RULES[name] ?? DEFAULT_NUMBER_RULE;
    const ok = typeof v === "number" && Number.isFinite(v) && v >= rule.min && (!rule.integer || Number.isInteger(v));
    if (!ok) {
      const shown =
        typeof v !== "number" ? JSON.stringify(v) : Number.isNaN(v) ? "not a number" : !Number.isFinite(v) ? "a number too large to hold" : String(v);
      throw new UsageError(`--${name} must be ${rule.integer ? "an integer" : "a number"} ≥ ${rule.min}, got ${shown}`);
    }
  }
}

/**
 * Refuse a number option followed by an empty word in `words` (`--jobs ""`, `-j ""`), which yargs reads as 0.
 * @param names the number options; @param aliases yargs' alias map
 * @throws UsageError "--NAME needs a value"
 */
export function refuseEmptyNumbers(words: readonly string[], names: readonly string[], aliases: Readonly<Record<string, readonly string[]>> = {}): void {
  const end = words.indexOf("--");
  const head = end < 0 ? words : words.slice(0, end);
  for (const name of names)
    for (const n of [name, ...(aliases[name] ?? [])]) {
      const flag = n.length === 1 ? `-${n}` : `--${n}`;
      if (head.some((w, i) => w === flag && head[i + 1] === "")) throw new UsageError(`--${name} needs a value`);
    }
}

/**
 * Move the words after `--` (which yargs leaves in `argv._` after the command words) to the command's positionals:
 * all of them to a variadic positional, else one each to the unset optional positionals in order.
 * @param depth the number of command words at the start of `argv._`
 * @throws UsageError when words are left over (the command takes no more names)
 */
export function takeWordsAfterDashDash(argv: Record<string, unknown> & { _: (string | number)[] }, command: string, depth: number): void {
  const words = argv._.slice(depth).map(String);
  if (!words.length) return;
  argv._ = argv._.slice(0, depth);
  const cmd = argv._.join(" ");
  const positionals = positionalsOf(command);
  const variadic = positionals.find((p) => p.variadic);
  if (variadic) {
    const had = argv[variadic.name];
    argv[variadic.name] = [...(Array.isArray(had) ? had.map(String) : []), ...words];
    return;
  }
  for (const p of positionals) if (words.length && argv[p.name] === undefined) argv[p.name] = words.shift();
  if (words.length) {
    const takes = positionals.length ? `takes ${positionals.map((p) => p.name.toUpperCase()).join(" ")} once` : "takes no names";
    throw new UsageError(`unexpected argument${words.length > 1 ? "s" : ""} after \`--\`: ${words.slice(0, 5).map((w) => clip(JSON.stringify(w))).join(", ")}${words.length > 5 ? ` and ${words.length - 5} more` : ""} (${cmd} ${takes})`);
  }
}

/**
 * `m` with the shared argument rules (see the file header): its builder also makes every string and number option
 * require a value; its handler first takes the words after `--` as names, refuses empty strings and checks numbers.
 * The module's own options, help and handler are otherwise unchanged.
 */
export function withArgumentRules<T, U>(m: CommandModule<T, U>, opts: ArgumentRulesOptions = {}): CommandModule<T, U> {
  const command = [m.command ?? ""].flat()[0] ?? "";
  const positional = new Set(positionalsOf(command).map((p) => p.name));
  const optionalValue = new Set(opts.optionalValue ?? []);
  let strings: string[] = [];
  let numbers: string[] = [];
  let aliases: Record<string, string[]> = {};
  const builder = (y: Argv<T>) => {
    const b = m.builder;
    const built = typeof b === "function" ? b(y) : b ? y.options(b) : y;
    // Every builder of this CLI returns its Argv; a promised one (none here) would be passed on without the rules.
    if (!("requiresArg" in built)) return built;
    strings = declared(built, "string").names.filter((k) => !positional.has(k) && !optionalValue.has(k));
    numbers = declared(built, "number").names;
    const single = singleValuedOptions(built as Argv).filter((k) => !positionalsOf(command).some((p) => p.variadic && p.name === k));
    aliases = (built as Argv as Argv & { getOptions(): OptionsView }).getOptions().alias ?? {};
    // Before validation, so that choices judge the value that counts (`--backend bogus --backend nix` is nix).
    (built as Argv).middleware((argv: Record<string, unknown>) => lastValueWins(argv, single, aliases), true);
    const needValue = [...strings, ...numbers];
    return needValue.length ? built.requiresArg(needValue) : built;
  };
  return {
    ...m,
    builder: builder as CommandModule<T, U>["builder"],
    // Synchronous, as the module's own handler may be (tests parse with parseSync): a throw here reaches yargs' fail
    // and then main like one from the handler.
    handler: (argv) => {
      const a: Record<string, unknown> & { _: (string | number)[] } = argv;
      takeWordsAfterDashDash(a, command, opts.depth ?? 1);
      for (const k of strings) {
        const v = a[k];
        if (v === "" || (Array.isArray(v) && v.includes(""))) throw new UsageError(`--${k} needs a value`);
      }
      refuseEmptyNumbers(opts.words ?? [], numbers, aliases);
      checkNumbers(a, numbers);
      return m.handler(argv);
    },
  };
}
