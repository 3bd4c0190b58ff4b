// Until when the history offers a result's download: a call's link lives its TTL from when it
// finished; a job's is signed afresh while the result is kept, each link its TTL at most.
import { describe, expect, it } from "vitest";
import { resultValidUntil } from "./records.ts";

const now = new Date("2026-11-26T12:00:00.000Z");
const limits = { ttlSeconds: 3600, retentionHours: 24 };
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);
const iso = (d: Date | null) => d?.toISOString() ?? null;

describe("resultValidUntil", () => {
  it.each([
    [
      "a call finished 10 min ago: its link's hour",
      { jobId: null, finishedAt: minutesAgo(10) },
      "2026-11-26T12:50:00.000Z",
    ],
    ["a call finished 61 min ago: expired", { jobId: null, finishedAt: minutesAgo(61) }, null],
    [
      "a job finished 3 h ago: an hour from now",
      { jobId: "j", finishedAt: minutesAgo(180) },
      "2026-11-26T13:00:00.000Z",
    ],
    [
      "a job finished 23.5 h ago: until it is swept",
      { jobId: "j", finishedAt: minutesAgo(23.5 * 60) },
      "2026-11-26T12:30:00.000Z",
    ],
    ["a job finished 25 h ago: swept", { jobId: "j", finishedAt: minutesAgo(25 * 60) }, null],
    ["nothing stored (failed)", { jobId: null, finishedAt: minutesAgo(1), objectName: null }, null],
    [
      "a call kept 5 min (retention 300), finished 1 min ago: until it is deleted",
      { jobId: null, finishedAt: minutesAgo(1), expiresAt: new Date(now.getTime() + 4 * 60_000) },
      "2026-11-26T12:04:00.000Z",
    ],
    [
      "a job kept 10 min, finished 20 min ago: deleted",
      { jobId: "j", finishedAt: minutesAgo(20), expiresAt: minutesAgo(10) },
      null,
    ],
    ["not finished", { jobId: "j", finishedAt: null }, null],
  ])("%s", (_, row, expected) => {
    const full = { objectName: "abc.pdf", ...row };
    expect(iso(resultValidUntil(full, limits, now))).toBe(expected);
  });
});
