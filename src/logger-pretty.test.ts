import { describe, expect, it } from "vitest";
import { prettyLine } from "./logger-pretty.ts";

describe("prettyLine", () => {
  it("writes time, severity, message and the other fields as key=value", () => {
    const line = prettyLine(
      JSON.stringify({
        severity: "INFO",
        time: "2026-11-26T08:30:01.234Z",
        message: "request completed",
        method: "GET",
        url: "/api/v1/jobs?q=a b",
        status: 200,
      }),
      false,
    );
    expect(line).toBe('08:30:01.234 INFO    request completed  method=GET url="/api/v1/jobs?q=a b" status=200\n');
  });

  it("puts a logged error's stack on the lines below", () => {
    const line = prettyLine(
      JSON.stringify({
        severity: "ERROR",
        time: "2026-11-26T08:30:01.234Z",
        message: "boom",
        stack_trace: "Error: boom\n    at x",
      }),
      false,
    );
    expect(line).toBe("08:30:01.234 ERROR   boom\nError: boom\n    at x\n");
  });

  it("passes through a line that is not JSON", () => {
    expect(prettyLine("not json", false)).toBe("not json");
  });
});
