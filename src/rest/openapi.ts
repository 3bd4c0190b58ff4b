// The OpenAPI 3.1 description of /api/v1, generated from the route table (./routes.ts), the
// parameter definitions (./params.ts) and the representation schemas (./resources.ts): what
// is described is what is served. Decisions the catalog document left open are stated here.
import { z } from "zod";
import { errorCodesOf } from "../errors.ts";
import { surfaceLinks } from "../http/root.ts";
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, SEARCH_OFFSET_WINDOW } from "../graphql/paging.ts";
import { routes, API_PREFIX, COMPANY_OPEN_JOBS, type Route } from "./routes.ts";
import * as resources from "./resources.ts";
import { errorExample, successExample } from "./examples.ts";

export const API_VERSION = "1.0.0";

type Json = Record<string, unknown>;

const ref = (schema: z.ZodType) => {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error("a response schema must have a meta id");
  return { $ref: `#/components/schemas/${id}` };
};

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });

const rateLimitHeaders = {
  RateLimit: header('Remaining requests and seconds until the window resets, e.g. `"client-ip";r=299;t=60`.'),
  "RateLimit-Policy": header('The limit, e.g. `"client-ip";q=300;w=60`: q requests per w seconds per client IP.'),
};

const successHeaders = {
  ETag: header("Strong validator of the representation; send it back in If-None-Match."),
  "Cache-Control": header("public, max-age=<seconds>"),
  ...rateLimitHeaders,
};

/** An error response: what it means, its example (a code and message as answered), its headers. */
const errorResponse = (description: string, example: [code: string, message: string], extraHeaders: Json = {}) => ({
  description,
  headers: { ...rateLimitHeaders, ...extraHeaders },
  content: { "application/json": { schema: ref(resources.ErrorBody), example: errorExample(...example) } },
});

const retryAfter = { "Retry-After": header("Whole seconds to wait, at least 1.", { type: "integer", minimum: 1 }) };

const commonErrors = {
  "400": errorResponse(
    "A malformed, out-of-range, repeated or unknown query parameter: code `invalid_<parameter>` or `unknown_parameter`.",
    ["invalid_limit", `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}; got "500".`],
  ),
  "405": errorResponse(
    "Any method other than GET, HEAD and OPTIONS: code `method_not_allowed`, with `Allow`.",
    ["method_not_allowed", "POST is not allowed here; use GET, HEAD."],
    { Allow: header("GET, HEAD") },
  ),
  "429": errorResponse(
    "Too many requests from this client IP: code `rate_limited`.",
    ["rate_limited", "Too many requests; retry in 12 s."],
    retryAfter,
  ),
  "500": errorResponse("An unexpected fault: code `internal_error`; quote request_id when reporting it.", [
    "internal_error",
    "Something went wrong on our side.",
  ]),
  "503": errorResponse(
    "A dependency (database, rate-limit store) is unavailable: code `database_unavailable` or `rate_limit_unavailable`.",
    ["database_unavailable", "The database is unavailable; retry shortly."],
    retryAfter,
  ),
};

function operation(route: Route): Json {
  const base = {
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    operationId: operationId(route),
  };
  if (route.kind === "detail") return detailOperation(route, base);
  const parameters = Object.values(route.params).map((p) => ({
    name: p.name,
    in: "query",
    required: false,
    description: p.description,
    schema: p.schema,
    ...(p.schema["type"] === "array" ? { style: "form", explode: false } : {}),
  }));
  if (route.kind === "summary") return summaryOperation(route, base, parameters);
  return {
    ...base,
    parameters,
    responses: {
      "200": {
        description: route.kind === "feed" ? "Changes after since, oldest first." : "A page of the list.",
        headers:
          route.kind === "feed"
            ? successHeaders
            : {
                ...successHeaders,
                Link: header('`<meta.next>; rel="next"`, present when there is a next page (RFC 8288).'),
              },
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["data", "meta"],
              properties: {
                data: { type: "array", items: ref(route.item) },
                meta: ref(route.kind === "feed" ? resources.ChangesMeta : resources.Meta),
              },
            },
            ...exampleOf(route),
          },
        },
      },
      ...(route.kind === "feed"
        ? {
            "410": errorResponse("since is older than the changes kept: code `since_expired`.", [
              "since_expired",
              "since is older than the changes kept; start again without since.",
            ]),
          }
        : {}),
      "304": { description: "Not modified: the If-None-Match ETag is current.", headers: successHeaders },
      ...commonErrors,
    },
  };
}

/** A route answering one resource by its key (and, for a job, its JSON-LD beside the JSON). */
function detailOperation(route: Extract<Route, { kind: "detail" }>, base: Json): Json {
  return {
    ...base,
    parameters: [
      {
        name: route.key.name,
        in: "path",
        required: true,
        description: route.key.description,
        schema: { type: "string" },
      },
    ],
    responses: {
      "200": {
        description: "The resource.",
        headers: successHeaders,
        content: {
          "application/json": {
            schema: { type: "object", required: ["data"], properties: { data: ref(route.item) } },
            ...exampleOf(route),
          },
          ...(route.alternate ? { [route.alternate.type]: { schema: ref(route.alternate.schema) } } : {}),
        },
      },
      "304": { description: "Not modified: the If-None-Match ETag is current.", headers: successHeaders },
      "404": errorResponse(`No public ${route.noun} has this ${route.key.name}: code \`not_found\`.`, [
        "not_found",
        `No public ${route.noun} has this ${route.key.name}.`,
      ]),
      ...commonErrors,
    },
  };
}

/** A route answering one object computed from its parameters (facet counts). */
function summaryOperation(route: Route, base: Json, parameters: Json[]): Json {
  return {
    ...base,
    parameters,
    responses: {
      "200": {
        description: "The counts.",
        headers: successHeaders,
        content: {
          "application/json": {
            schema: { type: "object", required: ["data"], properties: { data: ref(route.item) } },
            ...exampleOf(route),
          },
        },
      },
      "304": { description: "Not modified: the If-None-Match ETag is current.", headers: successHeaders },
      ...commonErrors,
    },
  };
}

/** The example of a route's 200 (examples.ts), under the media type's `example`. */
function exampleOf(route: Route): Json {
  const example = successExample(route.kind, z.globalRegistry.get(route.item)?.id ?? "", route.path);
  return example === null ? {} : { example };
}

function operationId(route: Route): string {
  const words = route.path.split("/").filter((w) => w && !w.startsWith("{"));
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  // A summary counts (jobs/facets) or answers (suggest: getSuggest).
  if (route.kind === "summary") return `${route.path.endsWith("facets") ? "count" : "get"}${name}`;
  return route.kind === "detail" ? `get${name.replace(/s$/, "").replace(/ie$/, "y")}` : `list${name}`;
}

function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
    // Open objects: v1 grows by adding fields, and a client validating with these schemas must
    // keep working when it does. (The tests close them again, to catch undocumented fields.)
    override: (ctx) => {
      delete ctx.jsonSchema.additionalProperties;
    },
  }) as { schemas: Record<string, Json> };
  for (const schema of Object.values(schemas)) {
    // Components are addressed by their place in the document, not by an $id.
    delete schema["$schema"];
    delete schema["$id"];
  }
  return schemas;
}

// The description Swagger UI shows above the operations: two lines and the links to the other
// surfaces, the rest folded in a <details> (closed), so the first operation is on the first screen.
const lead = (
  origin: string,
) => `Read-only, unauthenticated API over the public catalog of the job marketplace: jobs, talents,
AI agents, companies, sectors and skills. It shows exactly what the public web pages show. Press an operation,
then **Try it out**.

${surfaceLinks(origin, "catalog_docs")}`;

const DETAILS = `<details>
<summary>Conventions, rate limit, errors and versioning</summary>

## Conventions
- JSON only; fields are snake_case; instants are RFC 3339 in UTC; enumerations are lowercase strings.
- Lists answer \`{data, meta}\`; \`meta.self\` and \`meta.next\` are absolute and spell out every parameter;
  \`meta.next\` is null on the last page and is also sent as \`Link: <…>; rel="next"\`.
- Every item carries \`links.self\` (this API) and \`links.html\` (the public web page), nested items too.
- Orders are stable: jobs and agents newest first (published_at, then id, descending); talents by handle;
  companies, sectors and skills by name then slug.
- \`limit\` is 1 to ${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}) and \`offset\` at least 0 (default 0). A malformed or
  out-of-range value is a 400 \`invalid_<parameter>\`: values are never clamped. A parameter the route does
  not know is a 400 \`unknown_parameter\`, so a typo cannot silently return the default page. An offset past
  the end returns an empty page. Skipped rows are still walked, so a deep offset costs more. With \`q\`,
  \`offset + limit\` is at most ${SEARCH_OFFSET_WINDOW} (beyond: 400 \`invalid_offset\`); following \`meta.next\`
  (its cursor) goes on past it, as far as the matches go.
- \`/jobs\`, \`/talents\` and \`/agents\` continue by cursor: \`meta.next\` carries \`cursor\` beside the offset it
  stands for, and following it seeks on the list order at the same cost at any depth; \`meta.offset\` stays
  exact. A cursor is opaque and bound to its list and filter: an altered one, one used with other filters,
  or with an \`offset\` other than its own is a 400 \`invalid_cursor\`.
- \`GET /companies/{slug}\` embeds the ${COMPANY_OPEN_JOBS} newest open jobs; \`links.open_jobs\` pages through all.
- A resource that does not exist and one that is not public get the same 404.
- Responses carry a strong \`ETag\`; a conditional GET with \`If-None-Match\` gets a 304. Successful responses
  are \`Cache-Control: public, max-age=…\`, but \`max-age=0\` (revalidate on every use) while counts are not exact
  yet (\`meta.total_exact\` or a facet answer's \`exact\` false); errors are \`no-store\`.
- CORS: any origin; preflights get 204 with \`Access-Control-Max-Age: 86400\`.

## Rate limit
Per client IP for the whole service (REST and GraphQL). Every response carries \`RateLimit-Policy\`
and \`RateLimit\` (IETF draft); a refused request gets 429 \`rate_limited\` with \`Retry-After\` in seconds.

## Errors
Every error has the body \`{"error": {"code", "message", "request_id"}}\`. Codes:
${errorCodesOf("catalog")
  .map(({ code, status, meaning }) => `- \`${code}\`: ${status}: ${meaning}`)
  .join("\n")}

## Versioning
The version is in the path. Within v1, changes are additive only (new fields, parameters, endpoints);
clients must ignore fields they do not know. A breaking change gets /api/v2, and v1 keeps working for
at least 12 months after v2 ships, announced with \`Deprecation\` and \`Sunset\` headers.

</details>`;

export function buildOpenApiDocument(serverUrl: string): Json {
  const origin = new URL(serverUrl).origin;
  const paths: Record<string, Json> = {};
  for (const route of routes) paths[route.path] = { get: operation(route) };
  return {
    openapi: "3.1.0",
    info: {
      title: "Marketplace public catalog API",
      version: API_VERSION,
      description: `${lead(origin)}\n\n${DETAILS}`,
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: serverUrl, description: "This deployment" }],
    tags: [
      { name: "Jobs", description: "Published open jobs." },
      { name: "Talents", description: "Candidates with a public profile." },
      { name: "Agents", description: "Published AI agents sold as products." },
      { name: "Companies", description: "Companies with a branded public page." },
      { name: "Taxonomy", description: "Sectors and skills." },
    ],
    paths,
    components: { schemas: componentSchemas() },
  };
}

export { API_PREFIX };
