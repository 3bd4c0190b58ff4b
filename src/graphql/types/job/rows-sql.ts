// A page of jobs, and a job, read by one statement of our own instead of Prisma's (see ../../sql.ts):
// the rows come back in the shape Prisma would give for the planner's query, so the Job type's
// fields read them the same way. Only a query this statement fully answers takes this path: the
// job's columns, its company (the type's fixed selection), its sector and its skills; anything
// else (a nested relation under them, a column it does not read) goes through Prisma.
import type { PageWindow } from "../../paging.ts";
import { derivedFrom } from "../../planned-query.ts";
import { SqlParams, type SqlCondition, type SqlQuery, type SqlRunner } from "../../sql.ts";
import { shapeJob } from "./shape.ts";

/** Job fields by the column that holds them (enums as text, as Prisma returns them). */
const JOB_COLUMNS: Record<string, string> = {
  id: "j.id",
  slug: "j.slug",
  title: "j.title",
  descriptionHtml: "j.description_html",
  descriptionText: "j.description_text",
  employmentType: "j.employment_type::text",
  workModel: "j.work_model::text",
  seniority: "j.seniority::text",
  locationCity: "j.location_city",
  locationState: "j.location_state",
  locationCountry: "j.location_country",
  latitude: "j.latitude",
  longitude: "j.longitude",
  salaryMin: "j.salary_min",
  salaryMax: "j.salary_max",
  salaryCurrency: "j.salary_currency",
  salaryPeriod: "j.salary_period::text",
  salaryTop: "j.salary_top",
  applyUrl: "j.apply_url",
  publishedAt: "j.published_at",
  validThrough: "j.valid_through",
  updatedAt: "j.updated_at",
};

const COMPANY_COLUMNS: Record<string, string> = {
  id: "c.id",
  hasPublicPage: "c.has_public_page",
  slug: "c.slug",
  name: "c.name",
  logoUrl: "c.logo_url",
};
const SECTOR_COLUMNS = ["id", "slug", "name"];
const SKILL_COLUMNS = ["id", "slug", "name", "category"];
/** The order of a job's skills in the Job type (skills: name, then slug). */
const SKILL_ORDER = JSON.stringify([{ name: "asc" }, { slug: "asc" }]);

type Selection = Record<string, unknown>;
/** The planner's query for a job: Prisma's select, as Pothos builds it from the operation. */
export interface JobQuery {
  select?: Selection;
  include?: Selection;
}

const isSelectOf = (value: unknown, columns: readonly string[]): boolean => {
  if (value === true) return true;
  if (typeof value !== "object" || value === null) return false;
  const { select, ...rest } = value as { select?: Selection };
  if (Object.keys(rest).length > 0 || typeof select !== "object" || select === null) return false;
  return Object.entries(select).every(([key, v]) => v === true && columns.includes(key));
};

function isSkillsQuery(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value !== "object" || value === null) return false;
  const { orderBy, ...rest } = value as { orderBy?: unknown };
  if (orderBy !== undefined && JSON.stringify(orderBy) !== SKILL_ORDER) return false;
  return Object.keys(rest).length === 0 || isSelectOf(rest, SKILL_COLUMNS);
}

/** Whether one statement of ours answers this query exactly (else Prisma runs it); once per kept query. */
export function answersJobQuery(query: JobQuery): query is { select: Selection } {
  return derivedFrom(query, answersJobQuery, () => answers(query));
}

function answers(query: JobQuery): boolean {
  if (!query.select || query.include) return false;
  return Object.entries(query.select).every(([key, value]) => {
    if (key === "company") return isSelectOf(value, Object.keys(COMPANY_COLUMNS));
    if (key === "sector") return isSelectOf(value, SECTOR_COLUMNS);
    if (key === "skills") return isSkillsQuery(value);
    return value === true && key in JOB_COLUMNS;
  });
}

const SKILLS_OF_JOB = `(SELECT coalesce(json_agg(json_build_object('id', k.id, 'slug', k.slug, 'name', k.name,
    'category', k.category) ORDER BY k.name, k.slug), '[]'::json)
   FROM "_JobSkills" js JOIN skills k ON k.id = js."B" WHERE js."A" = j.id) AS skills`;

// By the selected fields' names: what the statement reads depends on nothing else.
const columnsByFields = new Map<string, { columns: string; joins: string }>();

/**
 * The select list and the joins that answer `select` (a kept query's select: by its identity).
 * The Job type always selects the coordinates, but only a `near` page reads them (to measure each
 * row's distance, ./page.ts): elsewhere they are left out, two columns fewer to send and parse per row.
 */
function columnsOf(select: Selection, near = false): { columns: string; joins: string } {
  return derivedFrom(select, near ? WITH_POINT : columnsOf, () => columnsByNames(select, near));
}
const WITH_POINT = Symbol("columns with the coordinates");

const POINT_FIELDS = new Set(["latitude", "longitude"]);

function columnsByNames(select: Selection, near: boolean): { columns: string; joins: string } {
  const fields = `${near}:${Object.keys(select).join(",")}`;
  let found = columnsByFields.get(fields);
  if (!found) columnsByFields.set(fields, (found = buildColumns(select, near)));
  return found;
}

function buildColumns(select: Selection, near: boolean): { columns: string; joins: string } {
  const columns = Object.keys(select)
    .filter((key) => JOB_COLUMNS[key] && (near || !POINT_FIELDS.has(key)))
    .map((key) => `${JOB_COLUMNS[key]} AS "${key}"`);
  let joins = "";
  if (select["company"]) {
    joins += " LEFT JOIN companies c ON c.id = j.company_id";
    columns.push(...Object.entries(COMPANY_COLUMNS).map(([key, column]) => `${column} AS "company.${key}"`));
  }
  if (select["sector"]) {
    joins += " LEFT JOIN sectors s ON s.id = j.sector_id";
    columns.push(...SECTOR_COLUMNS.map((key) => `s.${key} AS "sector.${key}"`));
  }
  if (select["skills"]) columns.push(SKILLS_OF_JOB);
  return { columns: columns.join(", "), joins };
}

/**
 * A row as Prisma gives it, shaped as every job row is (./shape.ts): the company's and the sector's
 * columns gathered into their objects (their flat "company.…" columns stay on the row, unread). A
 * job without a company (or sector) has null in every column of the join.
 */
function nest(row: Record<string, unknown>): Record<string, unknown> {
  if ("company.id" in row) {
    row["company"] =
      row["company.id"] === null
        ? null
        : {
            id: row["company.id"],
            hasPublicPage: row["company.hasPublicPage"],
            slug: row["company.slug"],
            name: row["company.name"],
            logoUrl: row["company.logoUrl"],
          };
  }
  if ("sector.id" in row) {
    row["sector"] =
      row["sector.id"] === null ? null : { id: row["sector.id"], slug: row["sector.slug"], name: row["sector.name"] };
  }
  return shapeJob(row);
}

/** The public job `slug`, in one statement; undefined when it is not public. */
export async function jobBySlug(
  sql: SqlRunner,
  select: Selection,
  where: SqlCondition,
  slug: string,
): Promise<Record<string, unknown> | null> {
  const params = new SqlParams();
  const { columns, joins } = columnsOf(select);
  // A lookup by the unique slug: prepared on a server (../../../db/prepared.ts).
  const [row] = await sql.lookup(
    `SELECT ${columns} FROM jobs j${joins} WHERE j.slug = ${params.add(slug)} AND ${where(params)}`,
    params.values,
  );
  return row ? nest(row) : null;
}

const ORDER_COLUMNS: Record<string, { column: string; type: string }> = {
  publishedAt: { column: "j.published_at", type: "timestamptz" },
  salaryTop: { column: "j.salary_top", type: "int" },
  id: { column: "j.id", type: "uuid" },
};

/** ORDER BY, and the seek past a cursor's key (every job order runs one way, so a row comparison). */
function orderOf(window: PageWindow<unknown>, params: SqlParams): { by: string; seek: string } {
  const order = window.order!;
  const columns = order.map((o) => ORDER_COLUMNS[o.field]!);
  const direction = order[0]!.direction === "desc" ? "DESC" : "ASC";
  const by = columns.map((c) => `${c.column} ${direction}`).join(", ");
  if (!window.seek) return { by, seek: "" };
  const key = window.seek.map((value, i) => params.add(value, columns[i]!.type)).join(", ");
  const after = direction === "DESC" ? "<" : ">";
  return { by, seek: ` AND (${columns.map((c) => c.column).join(", ")}) ${after} (${key})` };
}

/**
 * A page of jobs in one statement, as a deferred join: the page's ids off the list's index alone
 * (an index-only scan), then the page's rows joined on them, so skipped rows' heap tuples are never
 * read and a filter an index covers reads no row it does not answer.
 */
export async function jobPage(
  sql: SqlRunner,
  select: Selection,
  window: PageWindow<unknown> & { sqlWhere: SqlCondition },
): Promise<Record<string, unknown>[]> {
  const params = new SqlParams();
  const { columns, joins } = columnsOf(select, Boolean(window.near));
  const where = window.sqlWhere(params);
  const { by, seek } = orderOf(window, params);
  const page = `ORDER BY ${by} LIMIT ${params.add(window.limit, "int")} OFFSET ${params.add(window.skip, "int")}`;
  const text = `SELECT ${columns} FROM (SELECT j.id FROM jobs j WHERE ${where}${seek} ${page}) AS page
           JOIN jobs j ON j.id = page.id${joins} ORDER BY ${by}`;
  const rows = await sql.query(text, params.values);
  return rows.map(nest);
}

/** The ids of a page in a column order (for a filter Prisma cannot express; the rows are read by id after). */
export async function jobIdsPage(
  sql: SqlQuery,
  window: PageWindow<unknown> & { sqlWhere: SqlCondition },
): Promise<Record<string, unknown>[]> {
  const params = new SqlParams();
  const where = window.sqlWhere(params);
  const { by, seek } = orderOf(window, params);
  const keys = window.order!.map((o) => `${ORDER_COLUMNS[o.field]!.column} AS "${o.field}"`).join(", ");
  return sql.query(
    `SELECT ${keys} FROM jobs j WHERE ${where}${seek} ORDER BY ${by}
      LIMIT ${params.add(window.limit, "int")} OFFSET ${params.add(window.skip, "int")}`,
    params.values,
  );
}

/**
 * How a statement that finds a page's ids (each row an `id`, aliased page) reads the page's rows
 * in the same statement: the selected columns joined on the ids, in `order`. One round trip
 * instead of two (the ids, then the rows by id), as a hand-written deferred join would do it.
 */
export interface RowsOfIds {
  statement(ids: string, order: string, extra?: string): string;
  rows(raw: Record<string, unknown>[]): Record<string, unknown>[];
}

export function rowsOfIds(select: Selection, near: boolean): RowsOfIds {
  const { columns, joins } = columnsOf(select, near);
  return {
    statement: (ids, order, extra = "") =>
      `SELECT ${columns}${extra} FROM (${ids}) AS page JOIN jobs j ON j.id = page.id${joins} ORDER BY ${order}`,
    rows: (raw) => raw.map(nest),
  };
}
