// The MCP tools: one per list and detail route of /api/v1 (src/rest/routes.ts), made from that route
// table. A tool's arguments are the route's query parameters (their zod schemas derived from the
// parameters' own JSON Schemas); a call spells them as a query string, parses it with the route's own
// parser and runs the route's loader: the same typed GraphQL operation, gates, validation and
// presentation as REST. What differs is what suits an agent: smaller pages, and the arguments of
// the next call instead of a next URL.
import { z } from "zod";
import { HttpError } from "../errors.ts";
import { cutLongTexts, itemsThatFit } from "./fit.ts";
import { parseQuery, type JsonSchema, type ParamDef } from "../rest/params.ts";
import { pageEnd } from "../rest/respond.ts";
import { SearchReading } from "../rest/resources.ts";
import {
  API_PREFIX,
  DETAIL_KEY_MAX,
  loadDetail,
  notFound,
  routes,
  type DetailRoute,
  type ListRoute,
  type Route,
  type RouteContext,
  type SummaryRoute,
} from "../rest/routes.ts";

/** Items per call: fewer than REST's 100, since an agent reads every byte of a result. */
export const MCP_PAGE_LIMIT_MAX = 50;
export const MCP_PAGE_LIMIT_DEFAULT = 10;

/** How a route appears as a tool: its name, title and what an agent should know beyond the route's description. */
interface ToolName {
  name: string;
  title: string;
  hint?: string;
}

const FIND_SLUGS = "Sector and skill slugs come from list_sectors and list_skills.";

/** The routes served as tools, by path. Every other route (the change feed: a sync protocol for crawlers) is not one. */
export const TOOL_OF_PATH: Record<string, ToolName> = {
  "/jobs": {
    name: "search_jobs",
    title: "Search jobs",
    hint: `Full-text search (q) and filters over open jobs. ${FIND_SLUGS} Read a result in full with get_job.`,
  },
  "/jobs/facets": {
    name: "job_facets",
    title: "Count jobs by facet",
    hint: "Takes search_jobs's filters: use it to see how many jobs each work model, employment type, sector, skill, country or salary range would give before choosing filters.",
  },
  "/jobs/{slug}": { name: "get_job", title: "Get a job", hint: "The slug comes from search_jobs or a company." },
  "/talents": {
    name: "search_talents",
    title: "Search talents",
    hint: `Candidates with a public profile. ${FIND_SLUGS}`,
  },
  "/talents/{handle}": { name: "get_talent", title: "Get a talent" },
  "/agents": { name: "search_agents", title: "Search AI agents", hint: "The AI agents sold on the marketplace." },
  "/agents/{slug}": { name: "get_agent", title: "Get an AI agent" },
  "/companies": { name: "list_companies", title: "List companies" },
  "/companies/{slug}": { name: "get_company", title: "Get a company" },
  "/sectors": { name: "list_sectors", title: "List sectors", hint: "Their slugs filter jobs and talents." },
  "/sectors/{slug}": { name: "get_sector", title: "Get a sector" },
  "/skills": { name: "list_skills", title: "List skills", hint: "Their slugs filter jobs and talents." },
  "/skills/{slug}": { name: "get_skill", title: "Get a skill" },
  "/suggest": {
    name: "suggest",
    title: "Suggest places, skills, companies and titles",
    hint: "Use it to find valid filter values for search_jobs (a skill or company slug, a place) from a few letters, typos allowed.",
  },
};

/** What a call answers: the structured result, or the message of a row that is not public (a tool error). */
export type ToolOutcome = { structured: Record<string, unknown> } | { notFound: string };

export interface CatalogTool {
  name: string;
  title: string;
  description: string;
  /** The REST route it runs. */
  path: string;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  run(rc: RouteContext, args: Record<string, unknown>): Promise<ToolOutcome>;
}

/** Arguments every list tool describes in its own terms (REST's speak of meta.next and pages of 100). */
const PAGING_ARGUMENTS: Record<string, z.ZodType> = {
  limit: z
    .int()
    .min(1)
    .max(MCP_PAGE_LIMIT_MAX)
    .optional()
    .describe(`Items to return, 1 to ${MCP_PAGE_LIMIT_MAX}; default ${MCP_PAGE_LIMIT_DEFAULT}.`),
  offset: z
    .int()
    .min(0)
    .max(2_147_483_647)
    .optional()
    .describe("Items to skip, for random access; default 0. To read on, call again with next_arguments instead."),
  cursor: z
    .string()
    .min(1)
    .max(1_000)
    .optional()
    .describe(
      "Continuation from an earlier call's next_arguments (opaque; valid only with the same filters). Leave offset out with it.",
    ),
};

const asStrings = (values: unknown): string[] | undefined =>
  Array.isArray(values) && values.every((v) => typeof v === "string") ? values : undefined;

/** The zod schema of a tool argument, from the JSON Schema of the REST parameter it stands for. */
export function argumentSchema(def: ParamDef<unknown>): z.ZodType {
  const s: JsonSchema = def.schema;
  const number = (base: z.ZodNumber) => {
    const min = typeof s["minimum"] === "number" ? base.min(s["minimum"]) : base;
    return typeof s["maximum"] === "number" ? min.max(s["maximum"]) : min;
  };
  const enumOf = asStrings(s["enum"]);
  const itemEnum = asStrings((s["items"] as JsonSchema | undefined)?.["enum"]);
  let schema: z.ZodType;
  if (s["type"] === "integer") schema = number(z.int());
  else if (s["type"] === "number") schema = number(z.number());
  else if (s["type"] === "boolean") schema = z.boolean();
  else if (s["type"] === "string" && enumOf) schema = z.enum(enumOf as [string, ...string[]]);
  else if (s["type"] === "string" && s["format"] === "date-time") schema = z.string().min(1).max(64);
  else if (s["type"] === "string")
    schema = z
      .string()
      .min(1)
      .max(Number(s["maxLength"] ?? 200));
  else if (s["type"] === "array" && itemEnum) {
    schema = z
      .array(z.enum(itemEnum as [string, ...string[]]))
      .min(1)
      .max(itemEnum.length);
  } else if (s["type"] === "array" && (s["items"] as JsonSchema | undefined)?.["type"] === "string") {
    // Free short values (country codes): the read model checks them.
    const items = s["items"] as JsonSchema;
    schema = z
      .array(
        z
          .string()
          .min(1)
          .max(Number(items["maxLength"] ?? 200)),
      )
      .min(1)
      .max(Number(s["maxItems"] ?? 50));
  } else throw new Error(`no MCP argument for the parameter ${def.name}: ${JSON.stringify(s)}`);
  // REST's list parameters are comma-separated or repeated; here they are an array.
  return schema.optional().describe(def.description.replace(", comma-separated or repeated", ""));
}

/** The query string a call's arguments stand for: what REST would have been sent. */
function queryOf(args: Record<string, unknown>): URLSearchParams {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    // Zod has checked them: strings, numbers, booleans, and arrays of strings.
    search.set(
      name,
      Array.isArray(value) ? value.join(",") : typeof value === "string" ? value : JSON.stringify(value),
    );
  }
  return search;
}

const listOutput = (item: z.ZodType) =>
  z.object({
    items: z.array(item),
    total: z
      .int()
      .min(0)
      .describe("Items matching the call, ignoring limit and offset; a lower bound when total_exact is false."),
    total_exact: z.boolean().describe("false: total is a lower bound while the first count of this filter runs."),
    limit: z.int().min(0),
    offset: z.int().min(0).describe("Items before these."),
    next_arguments: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe("The arguments of the call that reads on (the same filters, a cursor or an offset); null at the end."),
    search: SearchReading.optional().describe("How q was read (search_jobs with q)."),
    truncated: z
      .boolean()
      .describe(
        "true: items were left off the end to keep the result within its size limit; next_arguments reads on from the first.",
      ),
  });

function listTool(route: ListRoute, name: ToolName): CatalogTool {
  const shape: Record<string, z.ZodType> = {};
  for (const def of Object.values(route.params)) shape[def.name] = PAGING_ARGUMENTS[def.name] ?? argumentSchema(def);
  const paged = "limit" in route.params;
  return {
    ...toolText(route, name),
    inputSchema: z.strictObject(shape),
    outputSchema: listOutput(route.item),
    async run(rc, args) {
      const given = paged ? { limit: MCP_PAGE_LIMIT_DEFAULT, ...args } : args;
      const params = parseQuery(route.params, queryOf(given), `${API_PREFIX}${route.path}`);
      const page = await route.load(rc, params);
      const { hasNext, total } = pageEnd(page);
      const filters: Record<string, unknown> = { ...given };
      delete filters["offset"];
      delete filters["cursor"];
      const next = page.nextCursor
        ? { ...filters, cursor: page.nextCursor }
        : { ...filters, offset: page.offset + page.limit };
      const result = {
        items: page.items,
        total,
        total_exact: page.totalExact,
        limit: page.limit,
        offset: page.offset,
        next_arguments: hasNext ? next : null,
        ...(page.search ? { search: page.search } : {}),
        truncated: false,
      };
      const fit = itemsThatFit(result);
      if (fit === page.items.length) return { structured: cutLongTexts(result).value };
      // The items left off come next, by offset: the page's cursor would skip them.
      const kept = { ...result, items: page.items.slice(0, fit), truncated: true };
      return { structured: cutLongTexts({ ...kept, next_arguments: { ...filters, offset: page.offset + fit } }).value };
    },
  };
}

function detailTool(route: DetailRoute, name: ToolName): CatalogTool {
  if (!(route.item instanceof z.ZodObject)) throw new Error(`${route.path}: an item that is not an object`);
  const key = route.key.name;
  return {
    ...toolText(route, name),
    inputSchema: z.strictObject({ [key]: z.string().min(1).max(DETAIL_KEY_MAX).describe(route.key.description) }),
    // A fresh object of the same fields: the item's own schema has an id, which would make the
    // result's JSON Schema a $ref, and MCP wants an object at the root.
    outputSchema: z.object(route.item.shape),
    async run(rc, args) {
      const value = String(args[key]);
      const item = await loadDetail(route, rc, value);
      if (!item) return { notFound: notFound(route, value).message };
      return { structured: cutLongTexts(item as Record<string, unknown>).value };
    },
  };
}

function summaryTool(route: SummaryRoute, name: ToolName): CatalogTool {
  if (!(route.item instanceof z.ZodObject)) throw new Error(`${route.path}: an item that is not an object`);
  const shape: Record<string, z.ZodType> = {};
  for (const def of Object.values(route.params)) shape[def.name] = argumentSchema(def);
  return {
    ...toolText(route, name),
    inputSchema: z.strictObject(shape),
    outputSchema: z.object(route.item.shape),
    async run(rc, args) {
      const params = parseQuery(route.params, queryOf(args), `${API_PREFIX}${route.path}`);
      return { structured: cutLongTexts((await route.load(rc, params)) as Record<string, unknown>).value };
    },
  };
}

function toolText(route: Route, name: ToolName) {
  const hint = name.hint ? ` ${name.hint}` : "";
  return {
    name: name.name,
    title: name.title,
    path: route.path,
    description: `${route.summary}. ${route.description}${hint} Each item's links.self is its address in the REST API (${API_PREFIX}), links.html its web page.`,
  };
}

export function catalogTools(): CatalogTool[] {
  return routes.flatMap((route) => {
    const name = TOOL_OF_PATH[route.path];
    if (!name) return [];
    if (route.kind === "list") return [listTool(route, name)];
    if (route.kind === "detail") return [detailTool(route, name)];
    if (route.kind === "summary") return [summaryTool(route, name)];
    throw new Error(`${route.path}: a ${route.kind} route cannot be a tool`);
  });
}

/** An error a call's arguments caused (a 4xx of the route): the agent's to fix, told as a tool error. */
export const isCallersError = (error: unknown): error is HttpError => error instanceof HttpError && error.status < 500;
