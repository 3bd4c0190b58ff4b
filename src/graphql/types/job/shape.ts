// A job row's computed fields (its location and salary), set on the row where it is read (our
// statement, ./rows-sql.ts, or Prisma's), so the Job type reads them as plain properties: a field
// with a resolver costs graphql-jit a resolve info and a response path per row, some 9 KiB of
// garbage a resolver on a page of 50 jobs. The company stays a resolver: it is gated (../../gates.ts),
// and a gate is never left to each place that reads a row.
import type { Prisma } from "../../../generated/prisma/client.ts";
import { locationOf, type LocationShape } from "../location.ts";

export interface SalaryShape {
  min: number | null;
  max: number | null;
  currency: string;
  period: Prisma.JobGetPayload<object>["salaryPeriod"] & string;
}

/** The columns the computed fields are made of: the Job type always selects them. */
interface JobColumns {
  locationCity: string | null;
  locationState: string | null;
  locationCountry: string | null;
  salaryMin: number | null;
  salaryMax: number | null;
  salaryCurrency: string | null;
  salaryPeriod: string | null;
}

export interface ShapedJob {
  location: LocationShape | null;
  /** null when the employer did not publish a salary. */
  salary: SalaryShape | null;
}

/** Sets the row's location and salary from its columns; the row itself, for chaining. */
export function shapeJob<Row extends object>(row: Row): Row {
  const j = row as unknown as JobColumns & ShapedJob;
  j.location = locationOf(j.locationCity, j.locationState, j.locationCountry);
  j.salary =
    j.salaryCurrency && j.salaryPeriod && (j.salaryMin !== null || j.salaryMax !== null)
      ? {
          min: j.salaryMin,
          max: j.salaryMax,
          currency: j.salaryCurrency,
          period: j.salaryPeriod as SalaryShape["period"],
        }
      : null;
  return row;
}

/** Rows from Prisma, shaped in place. */
export function shapeJobs<Row extends object>(rows: Row[]): Row[] {
  for (const row of rows) shapeJob(row);
  return rows;
}
