// Shared pieces of the property-based suites over client input (test/rest/params.fuzz.test.ts,
// test/graphql-arguments.fuzz.test.ts): how many runs, and the hostile values both draw from.
import fc from "fast-check";

/**
 * Runs per property: `ci` by default (a few hundred requests per suite), FUZZ_RUNS when set
 * (e.g. FUZZ_RUNS=10000 for a long run; docs/input-validation.md).
 */
export function fuzzRuns(ci: number): number {
  const runs = Number(process.env["FUZZ_RUNS"]);
  return Number.isInteger(runs) && runs > 0 ? runs : ci;
}

/** Text a client can send: empty, blank, control characters, surrogates, long, or plain. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom("", " ", "\u0000", "a\u0000b", "\t", "\uD800", "null", "undefined", "NaN", "-0", "1e999"),
  fc.string({ minLength: 150, maxLength: 1_200 }),
);

/** Integers as text around every edge a parser or a database column has. */
export const integerEdges: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom(0, 1, 100, 101, 1_000, 1_001, 2 ** 31 - 1, 2 ** 31, 2 ** 53, -1, -(2 ** 31)).map(String),
  fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }).map(String),
  fc.constantFrom("01", "+1", "1.0", "1e2", " 1", "0x10", "9".repeat(30)),
);

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** RFC 3339-shaped instants whose parts run past what exists: day 31 of any month, hour 24, year 0 or 9999 at -14:00. */
export const hostileInstant: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 1969, 1970, 9999)),
      month: fc.integer({ min: 0, max: 13 }),
      day: fc.integer({ min: 0, max: 32 }),
      hour: fc.integer({ min: 0, max: 25 }),
      minute: fc.integer({ min: 0, max: 60 }),
      offset: fc.constantFrom("Z", "+00:00", "-14:00", "+14:00", "+23:59", "+24:00", ""),
      dateOnly: fc.boolean(),
    })
    .map((t) => {
      const date = `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}`;
      return t.dateOnly ? date : `${date}T${pad(t.hour, 2)}:${pad(t.minute, 2)}:59${t.offset}`;
    }),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  {
    // The edges themselves, often: a random date seldom lands on year 0 or 10000.
    weight: 4,
    arbitrary: fc.constantFrom(
      "0000-01-01",
      "9999-12-31T23:59:59-14:00",
      "2026-02-31",
      "-000001-01-01T00:00:00Z",
      "+275760-09-13T00:00:00Z",
    ),
  },
);
