// The instants the catalog accepts as input: an RFC 3339 date-time whose calendar date and clock
// time exist, within years 0001 to 9999 in UTC. JavaScript's Date rolls an impossible date over
// (2026-02-31 became 2026-03-03) and holds years PostgreSQL and Prisma do not (year 0 failed in
// PGlite, an instant in year 10000 is written +010000-...): both answered 500 before (issue 25).
import { GraphQLError, GraphQLScalarType, type ValueNode } from "graphql";
import { DateTimeResolver } from "graphql-scalars";

/** The first and last instants accepted. */
export const INSTANT_MIN = new Date("0001-01-01T00:00:00.000Z");
export const INSTANT_MAX = new Date("9999-12-31T23:59:59.999Z");

export const INSTANT_RANGE = "years 0001 to 9999 in UTC";

const within = (date: Date) => date.getTime() >= INSTANT_MIN.getTime() && date.getTime() <= INSTANT_MAX.getTime();

// A date, or a date-time with an offset; seconds and their fraction optional.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * A date (midnight UTC) or an RFC 3339 date-time with offset, as the REST parameters accept it;
 * null when it does not match, names a day or time that does not exist, or falls outside the range.
 */
export function parseInstant(raw: string): Date | null {
  const m = DATE_TIME.exec(raw);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0, , offsetHours = 0, offsetMinutes = 0] = m
    .slice(1)
    .map((part) => (part === undefined || part.startsWith(".") ? undefined : Number(part)));
  const exists =
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysIn(year!, month!) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!exists) return null;
  // Years below 100 need the ISO form: Date.UTC would read 0001 as 1901.
  const date = new Date(raw.length === 10 ? `${raw}T00:00:00Z` : `${raw.slice(0, 10)}T${raw.slice(11)}`);
  return Number.isNaN(date.getTime()) || !within(date) ? null : date;
}

function inRange(date: Date): Date {
  if (!within(date)) {
    throw new GraphQLError(`DateTime must be within ${INSTANT_RANGE}; got ${date.toISOString()}`, {
      extensions: { code: "BAD_USER_INPUT" },
    });
  }
  return date;
}

/** graphql-scalars' DateTime (which checks the calendar), held to the range PostgreSQL and Prisma store. */
export const DateTimeScalar = new GraphQLScalarType<Date, Date>({
  ...DateTimeResolver.toConfig(),
  parseValue: (value: unknown) => inRange(DateTimeResolver.parseValue(value)),
  parseLiteral: (ast: ValueNode, variables?: Record<string, unknown> | null) =>
    inRange(DateTimeResolver.parseLiteral(ast, variables)),
});
