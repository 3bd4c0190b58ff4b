// The typed client's Retry-After arithmetic (clients/typescript/src/retry.ts), case by case: the
// two forms RFC 9110 allows, what is not retried, and the bounds. The behaviour against the real
// service is in catalog.test.ts and compression.test.ts.
import { describe, expect, it } from "vitest";
import { retryAfterMs, retryWait, sleep } from "../../clients/typescript/src/retry.ts";

const now = Date.parse("2026-11-24T06:00:00Z");
const answer = (status: number, retryAfter?: string) =>
  new Response(null, { status, headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } });

describe("retryAfterMs", () => {
  it.each([
    ["5", 5_000],
    [" 0 ", 0],
    ["Tue, 24 Nov 2026 06:00:07 GMT", 7_000],
    ["Tue, 24 Nov 2026 05:59:00 GMT", 0],
    ["Tuesday, 24-Nov-26 06:00:03 GMT", 3_000],
    ["Tue Nov 24 06:00:09 2026", 9_000],
    ["", undefined],
    ["-1", undefined],
    ["1.5", undefined],
    ["soon", undefined],
  ])("reads %j as %j ms", (value, expected) => {
    expect(retryAfterMs(value, now)).toBe(expected);
  });

  it("is undefined without the header", () => {
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe("retryWait", () => {
  it.each([
    ["429 with Retry-After", answer(429, "2"), 1, {}, 2_000],
    ["503 with Retry-After", answer(503, "1"), 1, {}, 1_000],
    ["no Retry-After: fallback doubled per attempt", answer(503), 3, {}, 4_000],
    ["a status not retried", answer(500, "1"), 1, {}, undefined],
    ["402 even with Retry-After", answer(402, "60"), 1, {}, undefined],
    ["attempts used up", answer(429, "1"), 4, {}, undefined],
    ["a wait over maxWaitMs", answer(429, "60"), 1, { maxWaitMs: 10_000 }, undefined],
    ["retries: 0", answer(429, "1"), 1, { retries: 0 }, undefined],
    ["statuses chosen by the caller", answer(502), 1, { statuses: [502], fallbackWaitMs: 10 }, 10],
  ])("%s", (_, response, attempt, options, expected) => {
    expect(retryWait(response, attempt, options)).toBe(expected);
  });
});

describe("sleep", () => {
  it("rejects with the signal's reason as soon as it aborts", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = sleep(10_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(sleep(10, AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
  });
});
