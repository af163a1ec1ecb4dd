/**
 * Progress output of a run. On a TTY: a live status (log-update) with counts, the running builds and elapsed
 * time, and one persistent line per finished variant. Otherwise: one plain line per event. `NO_COLOR` (any
 * non-empty value) turns colour off; colour is also off when the stream is not a TTY.
 */
import { createLogUpdate } from "log-update";
import { formatDuration } from "./report.ts";

/** Something that happened during a run. Times are `Date.now()` milliseconds. */
export type BuildEvent =
  | { type: "start"; name: string; attempt: number; maxAttempts: number; at: number }
  | {
      type: "built";
      name: string;
      durationS: number;
      /** How the output came to be and where (see VariantReport.origin / machine). */
      origin?: "built" | "substituted" | "present";
      machine?: string | null;
      at: number;
    }
  | { type: "retry"; name: string; attempt: number; maxAttempts: number; reason: string; at: number }
  | { type: "failed"; name: string; reason: string; at: number }
  | { type: "cached"; name: string; at: number }
  | { type: "skipped"; name: string; reason: string; at: number }
  | { type: "interrupt"; signal: string; at: number }
  | { type: "note"; text: string; at: number };

/** A sink for events; `close` restores the terminal. */
export interface StatusSink {
  event(e: BuildEvent): void;
  close(): void;
}

/** Should colour be used on `stream`? False when NO_COLOR is set (non-empty) or the stream is not a TTY. */
function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR && stream.isTTY === true;
}

const codes = { green: 32, red: 31, yellow: 33, cyan: 36, dim: 2, bold: 1 } as const;
function paint(on: boolean) {
  return (c: keyof typeof codes, s: string) => (on ? `\u001b[${codes[c]}m${s}\u001b[0m` : s);
}

function eventLine(e: BuildEvent, t0: number, color: ReturnType<typeof paint>): string {
  const clock = `[${formatDuration((e.at - t0) / 1000).padStart(6)}]`;
  switch (e.type) {
    case "start":
      return `${clock} start   ${e.name}${e.maxAttempts > 1 ? ` (attempt ${e.attempt}/${e.maxAttempts})` : ""}`;
    case "built":
      return (
        `${clock} ${color("green", "built")}   ${e.name} in ${formatDuration(e.durationS)}` +
        (e.origin === "built" && e.machine ? ` on ${e.machine}` : e.origin === "substituted" ? ` (substituted from ${e.machine})` : e.origin === "present" ? " (already in the store)" : "")
      );
    case "retry":
      return `${clock} ${color("yellow", "retry")}   ${e.name} (attempt ${e.attempt}/${e.maxAttempts} failed: ${e.reason})`;
    case "failed":
      return `${clock} ${color("red", "failed")}  ${e.name}: ${e.reason}`;
    case "cached":
      return `${clock} ${color("cyan", "cached")}  ${e.name}`;
    case "skipped":
      return `${clock} ${color("yellow", "skipped")} ${e.name}: ${e.reason}`;
    case "interrupt":
      return `${clock} ${color("red", `${e.signal}: stopping, ending running builds`)}`;
    case "note":
      return `${clock} ${e.text}`;
  }
}

/** One plain line per event on `stream` (a stream, or main's io.err with whether it is a terminal). */
export function plainStatus(stream: { write(s: string): unknown; isTTY?: boolean }, t0 = Date.now()): StatusSink {
  const color = paint(useColor(stream));
  return {
    event: (e) => stream.write(eventLine(e, t0, color) + "\n"),
    close: () => {},
  };
}

/**
 * Live status on a TTY: persistent event lines above a block redrawn every second showing counts, running names
 * with their elapsed time, and the run's elapsed time.
 * @param total number of variants in the run
 */
export function liveStatus(stream: NodeJS.WriteStream, total: number, t0 = Date.now()): StatusSink {
  const color = paint(useColor(stream));
  const log = createLogUpdate(stream);
  const running = new Map<string, { since: number; attempt: number; maxAttempts: number }>();
  const counts = { built: 0, cached: 0, failed: 0, skipped: 0 };
  const draw = () => {
    const now = Date.now();
    const done = counts.built + counts.cached + counts.failed + counts.skipped;
    const head =
      `${color("bold", `${done}/${total}`)} done · ${color("green", `${counts.built} built`)} · ` +
      `${color("cyan", `${counts.cached} cached`)} · ${color("red", `${counts.failed} failed`)} · ` +
      `${color("yellow", `${counts.skipped} skipped`)} · ${running.size} running · ` +
      `${total - done - running.size} waiting · ${formatDuration((now - t0) / 1000)}`;
    const lines = [...running].map(
      ([name, r]) =>
        `  ${color("dim", "▸")} ${name}  ${formatDuration((now - r.since) / 1000)}` +
        (r.maxAttempts > 1 ? ` (attempt ${r.attempt}/${r.maxAttempts})` : ""),
    );
    log([head, ...lines].join("\n"));
  };
  const timer = setInterval(draw, 1000);
  timer.unref();
  draw();
  return {
    event(e) {
      if (e.type === "start") running.set(e.name, { since: e.at, attempt: e.attempt, maxAttempts: e.maxAttempts });
      else if (e.type === "built" || e.type === "failed") {
        running.delete(e.name);
        counts[e.type]++;
      } else if (e.type === "cached" || e.type === "skipped") {
        running.delete(e.name);
        counts[e.type]++;
      }
      if (e.type !== "start") log.persist(eventLine(e, t0, color));
      draw();
    },
    close() {
      clearInterval(timer);
      draw();
      log.done();
    },
  };
}
