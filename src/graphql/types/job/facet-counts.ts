// The statements behind jobFacets (./facets.ts): how many of a filter's jobs hold each value of a
// facet. The facets whose own condition the filter does not set share the filter's whole where
// (multi-select leaves out only a facet's own condition), so they are counted in one pass over the
// matching jobs, with the total, by GROUPING SETS: a common word at a million jobs matches half of
// them, and each pass over those costs 1.6-2.5 s. A facet whose condition is set (its where is
// another), the skills (one row per job and skill) and the salary histogram have a statement each.
// Every statement reads its jobs from `Rows`: all the matching jobs, or a sample of at most `cap` of
// them (any cap the server finds first), whose counts are lower bounds of the exact ones.
import { enumValue, type SqlCondition, type SqlParams, type SqlQuery } from "../../sql.ts";

export interface FacetValue {
  value: string;
  name: string | null;
  count: number;
}
export interface SalaryRangeShape {
  from: number;
  to: number | null;
  count: number;
}
export interface SalaryUnit {
  currency: string;
  period: "hour" | "day" | "week" | "month" | "year";
  interval: number;
}
export type HistogramShape = SalaryUnit & { ranges: SalaryRangeShape[] };

/** The facets a grouping statement counts: one column of the jobs row each. */
export type GroupedFacet = "workModel" | "employmentType" | "country" | "sector";
export const GROUPED_FACETS: readonly GroupedFacet[] = ["workModel", "employmentType", "country", "sector"];
const GROUP_COLUMNS: Record<GroupedFacet, string> = {
  workModel: "j.work_model",
  employmentType: "j.employment_type",
  country: "j.location_country",
  sector: "j.sector_id",
};

/** The most ranges a salary histogram lists; higher salaries are counted in the last, open range. */
export const SALARY_RANGES_MAX = 100;
const INT_MAX = 2_147_483_647;

/**
 * Where a statement reads the matching jobs (aliased j) from: `from` after a `with` clause, `where`
 * left to the statement, and for a sample, a statement of how many jobs the sample read (to tell a
 * complete sample, one that read fewer than the cap: every match, so exact counts).
 */
export interface RowsIn {
  with: string;
  from: string;
  where: string;
  sampledCount: string | null;
}
export type Rows = (p: SqlParams, where: SqlCondition) => RowsIn;

/** Every job matching `where`: the exact counts. */
export const allRows: Rows = (p, where) => ({ with: "", from: "jobs j", where: where(p), sampledCount: null });

// The columns the statements read, and no more: a job's search words and description are long.
const SAMPLE_COLUMNS = ["id", "work_model", "employment_type", "location_country", "sector_id", "salary_top"]
  .map((c) => `j.${c}`)
  .join(", ");

/** At most `cap` of the jobs matching `where`, in no order (the server reads whichever it finds first). */
export const sampledRows =
  (cap: number): Rows =>
  (p, where) => ({
    with: `WITH m AS MATERIALIZED (SELECT ${SAMPLE_COLUMNS} FROM jobs j WHERE ${where(p)} LIMIT ${p.add(cap, "int")}) `,
    from: "m j",
    where: "TRUE",
    sampledCount: "SELECT count(*)::int FROM m",
  });

/** What a statement counted, and over how many jobs when it read a sample (null: every match). */
export interface Counts<T> {
  counts: T;
  sampled: number | null;
}

interface GroupedRow {
  count: number;
  value: string | null;
  name: string | null;
  /** Which grouping set the row is: a facet's, or null for the total's. */
  facet: GroupedFacet | null;
}

/**
 * The counts of `facets` over the jobs matching `where`, and their total, in one statement: each
 * facet's values (most jobs first, then by value, at most `limit`; jobs without a value not counted).
 */
export async function groupedCounts(
  sql: SqlQuery,
  p: SqlParams,
  { facets, where, rows, limit }: { facets: readonly GroupedFacet[]; where: SqlCondition; rows: Rows; limit: number },
): Promise<Counts<{ total: number; values: Partial<Record<GroupedFacet, FacetValue[]>> }>> {
  const { with: withClause, from, where: w, sampledCount } = rows(p, where);
  const sets = [...facets.map((f) => `(${GROUP_COLUMNS[f]})`), "()"].join(", ");
  // GROUPING(column) is 0 in the rows of the set grouped by it; the total's row has 1 in each.
  const setOf = facets.map((f) => `WHEN GROUPING(${GROUP_COLUMNS[f]}) = 0 THEN '${f}'`).join(" ");
  const valueOf = facets
    .map((f) => `WHEN GROUPING(${GROUP_COLUMNS[f]}) = 0 THEN ${f === "sector" ? "NULL" : `${GROUP_COLUMNS[f]}::text`}`)
    .join(" ");
  const sectorOf = facets.includes("sector")
    ? "CASE WHEN GROUPING(j.sector_id) = 0 THEN j.sector_id END"
    : "NULL::uuid";
  const found = await sql.query<GroupedRow>(
    `${withClause}SELECT g.facet, COALESCE(s.slug, g.value) AS value, s.name, g.count FROM
       (SELECT CASE ${setOf || "WHEN FALSE THEN NULL"} END AS facet, CASE ${valueOf || "WHEN FALSE THEN NULL"} END AS value,
               ${sectorOf} AS sector_id, count(*)::int AS count
          FROM ${from} WHERE ${w} GROUP BY GROUPING SETS (${sets})) g
       LEFT JOIN sectors s ON s.id = g.sector_id`,
    p.values,
  );
  let total = 0;
  const values: Partial<Record<GroupedFacet, FacetValue[]>> = Object.fromEntries(facets.map((f) => [f, []]));
  for (const row of found) {
    if (row.facet === null) total = row.count;
    // Jobs without a sector or location form a group of their own: not a value to offer.
    else if (row.value !== null) values[row.facet]!.push({ value: row.value, name: row.name, count: row.count });
  }
  for (const facet of facets) values[facet] = topValues(values[facet]!, limit);
  // The total's row (the empty grouping set) counts the sample's jobs.
  return { counts: { total, values }, sampled: sampledCount === null ? null : total };
}

/** Most jobs first, then by value (as SQL's ORDER BY count DESC, value in the C collation), at most `limit`. */
function topValues(values: FacetValue[], limit: number): FacetValue[] {
  return values
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, limit);
}

/** The skills of the jobs matching `where` (a job counts once for each of its skills). */
export async function skillCounts(
  sql: SqlQuery,
  p: SqlParams,
  { where, rows, limit }: { where: SqlCondition; rows: Rows; limit: number },
): Promise<Counts<FacetValue[]>> {
  const { with: withClause, from, where: w, sampledCount } = rows(p, where);
  const top = `SELECT k.slug AS value, k.name, f.count FROM
       (SELECT js."B" AS skill_id, count(*)::int AS count FROM ${from} JOIN "_JobSkills" js ON js."A" = j.id
         WHERE ${w} GROUP BY 1) f
       JOIN skills k ON k.id = f.skill_id ORDER BY count DESC, value LIMIT ${p.add(limit, "int")}`;
  if (sampledCount === null) return { counts: await sql.query<FacetValue>(top, p.values), sampled: null };
  // A last row, without a value, says how many jobs the sample read (a sample may hold no skill at all).
  const found = await sql.query<FacetValue & { value: string | null }>(
    `${withClause}(${top}) UNION ALL SELECT NULL, NULL, (${sampledCount})`,
    p.values,
  );
  const sampled = found.pop()!.count;
  return { counts: found, sampled };
}

/** The salary histogram of the jobs matching `where`, in the unit's currency and period. */
export async function salaryHistogram(
  sql: SqlQuery,
  p: SqlParams,
  { where, rows, unit }: { where: SqlCondition; rows: Rows; unit: SalaryUnit },
): Promise<Counts<HistogramShape>> {
  const inUnit: SqlCondition = (q) =>
    `${where(q)} AND j.salary_currency = ${q.add(unit.currency, "bpchar")}
      AND j.salary_period = ${enumValue(q, unit.period, "SalaryPeriod")} AND j.salary_top IS NOT NULL`;
  const { with: withClause, from, where: w, sampledCount } = rows(p, inUnit);
  const interval = p.add(unit.interval, "int8");
  const found = await sql.query<{ from: string | number; count: number }>(
    `${withClause}SELECT (j.salary_top::int8 / ${interval}) * ${interval} AS "from", count(*)::int AS count FROM ${from}
      WHERE ${w} GROUP BY 1 ORDER BY 1`,
    p.values,
  );
  // Every job of the sample has a salary in the unit: its ranges add up to the jobs it read.
  const sampled = sampledCount === null ? null : found.reduce((n, r) => n + r.count, 0);
  const ranges: SalaryRangeShape[] = found.map((r) => {
    const to = Number(r.from) + unit.interval;
    // A range reaching past the largest amount a salary can hold is open (GraphQL's Int is 32-bit).
    return { from: Number(r.from), to: to > INT_MAX ? null : to, count: r.count };
  });
  if (ranges.length > SALARY_RANGES_MAX) {
    const rest = ranges.splice(SALARY_RANGES_MAX - 1);
    ranges.push({ from: rest[0]!.from, to: null, count: rest.reduce((n, r) => n + r.count, 0) });
  }
  return { counts: { ...unit, ranges }, sampled };
}
