// The job list's conditions, each written once in both of its forms side by side: Prisma's `where`
// (for the queries Prisma runs) and SQL on jobs aliased j (for the read model's own statement,
// ./rows-sql.ts). test/read-model/job-sql.test.ts holds both forms to the same rows.
import type { Prisma } from "../../../generated/prisma/client.ts";
import type { GraphQLContext } from "../../context.ts";
import { publicCompanySql, publicCompanyWhere } from "../../gates.ts";
import { badArgument } from "../../paging.ts";
import { allOf, enumValue, type SqlCondition } from "../../sql.ts";
import { locationWhere, resolveNear } from "../location.ts";
import { withinSql } from "./ranked-sql.ts";
import type { JobFilterShape } from "./filter.ts";
import type { JobSortValue } from "./order.ts";
import { readSearch, type SearchReading } from "../../search/reading.ts";
import { excludedSql, searchSql, searchWhere } from "../../search/read-conditions.ts";

/** One condition of the job list, in both of its forms: Prisma's, and SQL on jobs aliased j (../sql.ts). */
export interface JobCondition {
  where: Prisma.JobWhereInput;
  sql: SqlCondition;
  /** The facet this condition selects values of: that facet's counts leave it out (./facets.ts). */
  facet?: JobFacetName;
  /** Prisma's form is only a superset (a box around a circle): rows and counts go through SQL. */
  sqlOnly?: boolean;
  /**
   * q's condition without its words (its excluded terms only), for the relevance tiers whose own
   * condition implies the words (./ranked-sql.ts relevanceTiers).
   */
  sqlBesidesWords?: SqlCondition;
}

/** The facets of the job list (GET /jobs/facets, jobFacets). */
export type JobFacetName = "workModel" | "employmentType" | "sector" | "skill" | "country" | "salary";

const COUNTRY = /^[A-Z]{2}$/;

const anyOf =
  (column: string, values: string[], enumType: string): SqlCondition =>
  (p) =>
    `${column} IN (${values.map((v) => enumValue(p, v, enumType)).join(", ")})`;

export async function jobFilterConditions(ctx: GraphQLContext, filter: JobFilterShape, sort: JobSortValue) {
  const all: JobCondition[] = [];
  const reading = await searchReadingOf(ctx, filter);
  if (reading) all.push(...searchConditions(reading));
  if (filter.workModel?.length) {
    const values = filter.workModel;
    all.push({
      where: { workModel: { in: values } },
      sql: anyOf("j.work_model", values, "WorkModel"),
      facet: "workModel",
    });
  }
  if (filter.employmentType?.length) {
    const values = filter.employmentType;
    all.push({
      where: { employmentType: { in: values } },
      sql: anyOf("j.employment_type", values, "EmploymentType"),
      facet: "employmentType",
    });
  }
  all.push(...relationConditions(filter));
  if (filter.updatedSince) {
    const since = filter.updatedSince;
    all.push({ where: { updatedAt: { gte: since } }, sql: (p) => `j.updated_at >= ${p.add(since, "timestamptz")}` });
  }
  if (filter.location != null) {
    const where = locationWhere(filter.location);
    all.push({ where, sql: (p) => `j.location_terms @> ${p.add(where.locationTerms.hasEvery, "text[]")}` });
  }
  if (filter.remote != null) {
    const remote = filter.remote;
    all.push({
      where: { workModel: remote ? "remote" : { not: "remote" } },
      sql: () => `j.work_model ${remote ? "=" : "<>"} 'remote'`,
      facet: "workModel",
    });
  }
  if (filter.country?.length) {
    const codes = [...new Set(filter.country.map((c) => c.toUpperCase()))];
    const bad = codes.find((c) => !COUNTRY.test(c));
    if (bad !== undefined)
      throw badArgument("country", `country must be ISO 3166-1 alpha-2 codes such as DE; got "${bad}"`);
    all.push({
      where: { locationCountry: { in: codes } },
      // As char(2), the column's type, so its comparison stays on the column.
      sql: (p) => `j.location_country = ANY(${p.add(codes, "bpchar[]")})`,
      facet: "country",
    });
  }
  all.push(...salaryConditions(filter, sort));
  const near = await resolveNear(ctx.prisma, filter.near, filter.radiusKm);
  if (near) {
    const within = withinSql("j", near.lat, near.lon, near.radiusKm);
    all.push({ where: { latitude: { not: null }, longitude: { not: null } }, sql: within, sqlOnly: true });
  }
  return all;
}

/**
 * How the filter's `q` is read (../../search/reading.ts), or null without one. A place in q becomes
 * the place filter unless location or near is given; a company, unless company is.
 */
export function searchReadingOf(ctx: GraphQLContext, filter: JobFilterShape): Promise<SearchReading> | null {
  if (filter.q == null) return null;
  return readSearch(ctx, filter.q, {
    places: filter.location == null && filter.near == null,
    companies: filter.company == null,
  });
}

/** The conditions of a reading: its words, and the place and companies q named. */
function searchConditions(reading: SearchReading): JobCondition[] {
  const all: JobCondition[] = [];
  if (reading.groups.length > 0 || reading.excluded.length > 0) {
    const { where, exact } = searchWhere(reading);
    all.push({
      where,
      sql: searchSql(reading),
      sqlBesidesWords: excludedSql(reading),
      ...(exact ? {} : { sqlOnly: true }),
    });
  }
  // A place named in q stands for the jobs in it: those at its coordinates, which follow a job's
  // city and country (a trigger copies them from places). On the coordinates' index a page walks
  // the place's jobs newest first and stops when it is full; the location terms' GIN index gave
  // every job of the city to sort (Berlin at a million jobs: 27,589 rows, over a second).
  if (reading.place) {
    const { latitude, longitude } = reading.place;
    all.push({
      where: { latitude, longitude },
      sql: (p) => `j.latitude = ${p.add(latitude, "float8")} AND j.longitude = ${p.add(longitude, "float8")}`,
    });
  }
  if (reading.company) {
    const ids = reading.company.ids;
    all.push({
      where: { companyId: { in: ids }, company: publicCompanyWhere },
      sql: (p) =>
        `j.company_id IN (SELECT c.id FROM companies c WHERE c.id = ANY(${p.add(ids, "uuid[]")}) AND ${publicCompanySql})`,
    });
  }
  return all;
}

/** The filters by a sector, a skill or a company, each named by its slug. */
function relationConditions(filter: JobFilterShape): JobCondition[] {
  const all: JobCondition[] = [];
  const { sector, skill, company } = filter;
  if (sector) {
    all.push({
      where: { sector: { slug: sector } },
      sql: (p) => `j.sector_id = (SELECT id FROM sectors WHERE slug = ${p.add(sector, "text")})`,
      facet: "sector",
    });
  }
  if (skill) {
    all.push({
      // The job's own row holds its skills' slugs (kept by triggers on "_JobSkills" and skills):
      // a walk of a list order checks each job without probing the link table.
      where: { skillSlugs: { has: skill } },
      sql: (p) => `j.skill_slugs @> ARRAY[${p.add(skill, "text")}]`,
      facet: "skill",
    });
  }
  // Only a public company can be named: filtering by a hidden one must not reveal its jobs.
  if (company) {
    all.push({
      where: { company: { slug: company, ...publicCompanyWhere } },
      sql: (p) =>
        `j.company_id = (SELECT c.id FROM companies c WHERE c.slug = ${p.add(company, "text")} AND ${publicCompanySql})`,
    });
  }
  return all;
}

const CURRENCY = /^[A-Z]{3}$/;

/** The salary conditions: currency and period, and the top of the range when a minimum or a salary order needs it. */
function salaryConditions(filter: JobFilterShape, sort: JobSortValue): JobCondition[] {
  const bySalary = sort === "SALARY_DESC" || sort === "SALARY_ASC";
  const currency = filter.salaryCurrency?.toUpperCase();
  if (currency != null && !CURRENCY.test(currency)) {
    throw badArgument(
      "salaryCurrency",
      `salary_currency must be an ISO 4217 code such as EUR; got "${filter.salaryCurrency}"`,
    );
  }
  if (filter.salaryMin != null && filter.salaryMin < 0) {
    throw badArgument("salaryMin", "salary_min must be an integer of at least 0");
  }
  if (currency == null) {
    if (filter.salaryMin != null) {
      throw badArgument("salaryMin", "salary_min needs salary_currency: amounts are compared in one currency");
    }
    if (bySalary)
      throw badArgument("sort", "sort by salary needs salary_currency: amounts are compared in one currency");
    return filter.salaryPeriod ? [periodCondition({}, filter.salaryPeriod)] : [];
  }
  const period = filter.salaryPeriod ?? (filter.salaryMin != null || bySalary ? "year" : undefined);
  const all: JobCondition[] = [periodCondition({ salaryCurrency: currency }, period)];
  const atLeast = filter.salaryMin;
  if (atLeast != null) {
    all.push({
      where: { salaryTop: { gte: atLeast } },
      sql: (p) => `j.salary_top >= ${p.add(atLeast, "int")}`,
      facet: "salary",
    });
  } else if (bySalary) all.push({ where: { salaryTop: { not: null } }, sql: () => "j.salary_top IS NOT NULL" });
  return all;
}

/** A salary's period, with its currency when one is given. */
function periodCondition(currency: { salaryCurrency?: string }, period: JobFilterShape["salaryPeriod"]): JobCondition {
  const parts: SqlCondition[] = [];
  const { salaryCurrency } = currency;
  // As char(3), the column's type: compared as text, the column would be cast and its index unused.
  if (salaryCurrency) parts.push((p) => `j.salary_currency = ${p.add(salaryCurrency, "bpchar")}`);
  if (period) parts.push((p) => `j.salary_period = ${enumValue(p, period, "SalaryPeriod")}`);
  return { where: { ...currency, ...(period ? { salaryPeriod: period } : {}) }, sql: allOf(parts) };
}
