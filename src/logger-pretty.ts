// Development's log lines: the same entries as the structured JSON (src/logger.ts), written as one
// short line each for a person at a terminal: time, severity, message, then the fields a developer
// reads most (request, status, duration) and any others as key=value. Production keeps the JSON,
// which Cloud Logging parses.
import type { DestinationStream } from "pino";

const COLOUR: Record<string, string> = { WARNING: "\x1b[33m", ERROR: "\x1b[31m", CRITICAL: "\x1b[31m" };
const RESET = "\x1b[0m";
// Fields every line carries that say nothing at a terminal, and the ones already shown up front.
const OMITTED = new Set(["time", "severity", "message", "serviceContext", "stack_trace", "err"]);

function fieldText(value: unknown): string {
  if (typeof value === "string") return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One JSON log line as a short readable line (the stack, when there is one, on the lines below). */
export function prettyLine(json: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry["time"] === "string" ? entry["time"].slice(11, 23) : "";
  const severity = typeof entry["severity"] === "string" ? entry["severity"] : "DEFAULT";
  const fields = Object.entries(entry)
    .filter(([key, value]) => !OMITTED.has(key) && value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  const level = colour && COLOUR[severity] ? `${COLOUR[severity]}${severity.padEnd(7)}${RESET}` : severity.padEnd(7);
  const message = typeof entry["message"] === "string" ? entry["message"] : "";
  const stack = typeof entry["stack_trace"] === "string" ? `\n${entry["stack_trace"]}` : "";
  return `${time} ${level} ${message}${fields.length > 0 ? "  " + fields.join(" ") : ""}${stack}\n`;
}

/** A pino destination that writes each line readably to out (stdout by default). */
export function prettyDestination(
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): DestinationStream {
  const colour = out.isTTY === true;
  return {
    write(line: string) {
      out.write(prettyLine(line.trimEnd(), colour));
    },
  };
}
