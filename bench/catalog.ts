// Load benchmark of the catalog REST API against a direct-SQL baseline, on the configured database.
// Run by hand, never in CI. Seed first, e.g.
//   DATABASE_URL=... npm run db:seed -- --jobs 1000000 --reset     (or PGLITE_DATA_DIR=...)
//   DATABASE_URL=... npm run bench:catalog
// Flags: --duration S (10), --warmup S (2), --connections N (8), --min-jobs N (1000000),
//        --slugs N (100, detail pages rotate over that many public jobs),
//        --only name,name (run a subset of the scenarios).
//
// Two servers run in this process on loopback ports: the real app (createApp) and a baseline
// (plain node:http) that runs the equivalent SQL through db.sql.query, with the same public gates
// as src/graphql/gates.ts, and writes the same JSON. Before measuring, every scenario's baseline
// body is checked to be byte-for-byte the REST body. Both remember list totals the same way
// (LIST_TOTAL_CACHE_SECONDS; run with 0 to count on every request). The load generator runs in a
// worker thread (./catalog-load.ts) and sends the same Host header to both, so both build the same
// links.
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { parseArgs } from "node:util";
import { isDeepStrictEqual } from "node:util";
import { Worker } from "node:worker_threads";
import { createApp } from "../src/app.ts";
import { loadConfig, type Config } from "../src/config/env.ts";
import { openDatabase, type Database } from "../src/db/database.ts";
import { createLogger } from "../src/logger.ts";
import type { LoadRequest, LoadResult } from "./catalog-load.ts";

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "8" },
    "min-jobs": { type: "string", default: "1000000" },
    slugs: { type: "string", default: "100" },
    only: { type: "string" },
  },
});
const positive = (name: string, value: string, min = 1) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number of at least ${min}; got ${value}`);
  return n;
};
const durationMs = positive("duration", flags.duration, 0.1) * 1000;
const warmupMs = positive("warmup", flags.warmup, 0) * 1000;
const connections = Math.floor(positive("connections", flags.connections));
const minJobs = Math.floor(positive("min-jobs", flags["min-jobs"], 0));
const slugCount = Math.floor(positive("slugs", flags.slugs));

const API = "/api/v1";
/** Sent to both servers: the REST API derives its links from the Host header. */
const HOST = "catalog.bench.test";

// ---------------------------------------------------------------------------------------------
// The database

const loaded = loadConfig();
const config: Config = {
  ...loaded,
  logLevel: "silent",
  rateLimit: { requests: 1_000_000_000, windowSeconds: 60 },
};
const db = await openDatabase(config.database);

async function countJobs(): Promise<number> {
  try {
    const [row] = await db.sql.query<{ jobs: number }>(`SELECT count(*)::int AS jobs FROM jobs`);
    return row?.jobs ?? 0;
  } catch {
    return -1; // not migrated
  }
}

const where = config.database.kind === "postgres" ? "DATABASE_URL=..." : `PGLITE_DATA_DIR=${config.database.dataDir}`;
const jobCount = await countJobs();
if (jobCount < minJobs) {
  console.error(
    `${jobCount < 0 ? "The database has no jobs table" : `The database holds ${jobCount.toLocaleString("en")} jobs`}; ` +
      `this benchmark needs at least ${minJobs.toLocaleString("en")} (--min-jobs). Seed it first:\n` +
      `  ${where} npm run db:seed -- --jobs ${Math.max(minJobs, 1)} --reset\n` +
      (config.database.kind === "postgres" ? `(after ${where} npm run db:migrate on a new database)\n` : ""),
  );
  await db.close();
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// The baseline: the same representations, straight from SQL

/** The public job gate of src/graphql/gates.ts; $1 is the request's "now". */
const JOB_GATE = `j.status = 'published' AND j.filled = false AND j.published_at <= $1
  AND (j.valid_through IS NULL OR j.valid_through > $1)`;

interface JobRow {
  id: string;
  slug: string;
  title: string;
  work_model: string;
  employment_type: string;
  location_city: string | null;
  location_state: string | null;
  salary_min: number | null;
  salary_max: number | null;
  salary_currency: string | null;
  salary_period: string | null;
  published_at: Date;
  company_id: string | null;
  company_slug: string;
  company_name: string;
  company_logo_url: string | null;
}

interface JobDetailRow extends JobRow {
  location_country: string | null;
  seniority: string | null;
  description_html: string;
  description_text: string;
  apply_url: string | null;
  valid_through: Date | null;
  updated_at: Date;
  sector_id: string | null;
  sector_slug: string;
  sector_name: string;
  skills: { id: string; slug: string; name: string; category: string }[];
}

// Columns of a job summary; the company only when it has a public page (the join's condition).
const SUMMARY_COLUMNS = `j.id, j.slug, j.title, j.work_model, j.employment_type, j.location_city, j.location_state,
  j.salary_min, j.salary_max, j.salary_currency, j.salary_period, coalesce(j.published_at, j.created_at) AS published_at,
  c.id AS company_id, c.slug AS company_slug, c.name AS company_name, c.logo_url AS company_logo_url`;

interface ListFilter {
  q?: string;
  workModel?: string[];
  employmentType?: string[];
}

/** The list filter's SQL and its parameters, numbered after the first `offset` parameters. */
function filterSql(filter: ListFilter, offset: number): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${offset + params.length}`;
  };
  if (filter.q !== undefined) {
    parts.push(`j.search_terms @> tsvector_to_array(to_tsvector('english'::regconfig, ${param(filter.q)}::text))`);
  }
  if (filter.workModel?.length) {
    parts.push(`j.work_model IN (${filter.workModel.map((v) => `CAST(${param(v)}::text AS "WorkModel")`).join(", ")})`);
  }
  if (filter.employmentType?.length) {
    const list = filter.employmentType.map((v) => `CAST(${param(v)}::text AS "EmploymentType")`).join(", ");
    parts.push(`j.employment_type IN (${list})`);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

// The same policy as the read model (src/graphql/totals.ts): a list's total is remembered per filter
// for config.listTotalCacheSeconds (0: counted every time), and concurrent requests share one count.
const totals = new Map<string, { expires: number; value: Promise<number> }>();
function rememberedTotal(key: string, load: () => Promise<number>): Promise<number> {
  const ttl = config.listTotalCacheSeconds;
  if (ttl <= 0) return load();
  const now = Date.now();
  const hit = totals.get(key);
  if (hit && hit.expires > now) return hit.value;
  const value = load();
  totals.set(key, { expires: now + ttl * 1000, value });
  value.catch(() => totals.delete(key));
  return value;
}

async function listJobs(database: Database, filter: ListFilter, limit: number, offset: number, now: Date) {
  const f = filterSql(filter, 1);
  const pageParams = [now, ...f.params, limit, offset];
  const n = pageParams.length;
  const count = async () => {
    const [row] = await database.sql.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM jobs j WHERE ${JOB_GATE}${f.sql}`,
      [now, ...f.params],
    );
    return row?.total ?? 0;
  };
  // The same shape as the read model: the count beside a deferred join (ids over the list index,
  // then the page's rows) so deep offsets never read skipped rows.
  const [total, rows] = await Promise.all([
    rememberedTotal(JSON.stringify(filter), count),
    database.sql.query<JobRow>(
      `SELECT ${SUMMARY_COLUMNS}
       FROM (SELECT j.id FROM jobs j WHERE ${JOB_GATE}${f.sql}
             ORDER BY j.published_at DESC, j.id DESC LIMIT $${n - 1} OFFSET $${n}) AS page
       JOIN jobs j ON j.id = page.id
       LEFT JOIN companies c ON c.id = j.company_id AND c.has_public_page
       ORDER BY j.published_at DESC, j.id DESC`,
      pageParams,
    ),
  ]);
  return { total, rows };
}

async function getJob(database: Database, slug: string, now: Date): Promise<JobDetailRow | undefined> {
  const [row] = await database.sql.query<JobDetailRow>(
    `SELECT ${SUMMARY_COLUMNS}, j.location_country, j.seniority, j.description_html, j.description_text,
       j.apply_url, j.valid_through, j.updated_at,
       s.id AS sector_id, s.slug AS sector_slug, s.name AS sector_name,
       (SELECT coalesce(json_agg(json_build_object('id', k.id, 'slug', k.slug, 'name', k.name, 'category', k.category)
                                 ORDER BY k.name, k.slug), '[]'::json)
        FROM "_JobSkills" js JOIN skills k ON k.id = js."B" WHERE js."A" = j.id) AS skills
     FROM jobs j
     LEFT JOIN companies c ON c.id = j.company_id AND c.has_public_page
     LEFT JOIN sectors s ON s.id = j.sector_id
     WHERE j.slug = $2 AND ${JOB_GATE}`,
    [now, slug],
  );
  return row;
}

interface Linker {
  apiBase: string;
  webBase: string;
}

const linksOf = (l: Linker, collection: string, key: string) => {
  const path = `/${collection}/${encodeURIComponent(key)}`;
  return { self: `${l.apiBase}${path}`, html: `${l.webBase}${path}` };
};

function jobSummary(l: Linker, j: JobRow) {
  const hasSalary = j.salary_currency && j.salary_period && (j.salary_min !== null || j.salary_max !== null);
  return {
    id: j.id,
    slug: j.slug,
    title: j.title,
    work_model: j.work_model,
    employment_type: j.employment_type,
    location_city: j.location_city,
    location_state: j.location_state,
    salary: hasSalary
      ? { min: j.salary_min, max: j.salary_max, currency: j.salary_currency, period: j.salary_period }
      : null,
    company: j.company_id
      ? {
          id: j.company_id,
          slug: j.company_slug,
          name: j.company_name,
          logo_url: j.company_logo_url,
          links: linksOf(l, "companies", j.company_slug),
        }
      : null,
    published_at: j.published_at.toISOString(),
    links: linksOf(l, "jobs", j.slug),
  };
}

function jobDetail(l: Linker, j: JobDetailRow) {
  return {
    ...jobSummary(l, j),
    location_country: j.location_country,
    seniority: j.seniority,
    description_html: j.description_html,
    description_text: j.description_text,
    apply_url: j.apply_url,
    valid_through: j.valid_through && j.valid_through.toISOString(),
    updated_at: j.updated_at.toISOString(),
    sector: j.sector_id
      ? { id: j.sector_id, slug: j.sector_slug, name: j.sector_name, links: linksOf(l, "sectors", j.sector_slug) }
      : null,
    skills: j.skills.map((s) => ({
      id: s.id,
      slug: s.slug,
      name: s.name,
      category: s.category,
      links: linksOf(l, "skills", s.slug),
    })),
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
    "cache-control": `public, max-age=${config.catalogCacheMaxAge}`,
    ...headers,
  });
  res.end(json);
}

/** The baseline's /api/v1/jobs: only the parameters the scenarios use, in the REST API's canonical order. */
async function baselineList(l: Linker, search: URLSearchParams, res: http.ServerResponse) {
  const limit = Number(search.get("limit") ?? 50);
  const offset = Number(search.get("offset") ?? 0);
  const q = search.get("q") ?? undefined;
  const workModel = search.get("work_model")?.split(",");
  const employmentType = search.get("employment_type")?.split(",");
  const { total, rows } = await listJobs(db, { q, workModel, employmentType }, limit, offset, new Date());
  const pageUrl = (at: number) => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(at) });
    if (q !== undefined) query.set("q", q);
    if (workModel) query.set("work_model", workModel.join(","));
    if (employmentType) query.set("employment_type", employmentType.join(","));
    return `${l.apiBase}/jobs?${query.toString()}`;
  };
  const next = offset + rows.length < total && rows.length > 0 ? pageUrl(offset + limit) : null;
  const body = {
    data: rows.map((r) => jobSummary(l, r)),
    meta: { total, limit, offset, self: pageUrl(offset), next },
  };
  send(res, 200, body, next ? { link: `<${next}>; rel="next"` } : {});
}

function startBaseline(): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://baseline");
    const l: Linker = {
      apiBase: `${config.publicApiBaseUrl ?? `http://${req.headers.host}`}${API}`,
      webBase: config.publicWebBaseUrl,
    };
    const handle = async () => {
      if (url.pathname === `${API}/jobs`) return baselineList(l, url.searchParams, res);
      const detail = /^\/api\/v1\/jobs\/([^/]+)$/.exec(url.pathname);
      if (detail) {
        const slug = decodeURIComponent(detail[1]!);
        const job = await getJob(db, slug, new Date());
        if (!job) return send(res, 404, { error: { code: "not_found", message: `No public job with slug "${slug}"` } });
        return send(res, 200, { data: jobDetail(l, job) });
      }
      send(res, 404, { error: { code: "not_found", message: "Not found" } });
    };
    handle().catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) send(res, 500, { error: { code: "internal", message: String(error) } });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Scenarios

/** ~`count` public jobs spread over the whole table, so detail pages do not hit one hot row. */
async function publicSlugs(count: number): Promise<string[]> {
  const rows = await db.sql.query<{ slug: string }>(
    `SELECT j.slug FROM jobs j WHERE ${JOB_GATE} ORDER BY md5(j.id::text) LIMIT $2`,
    [new Date(), count],
  );
  return rows.map((r) => r.slug);
}

interface Scenario {
  name: string;
  paths: string[];
}

const slugs = await publicSlugs(slugCount);
if (slugs.length === 0) throw new Error("no public jobs");
const allScenarios: Scenario[] = [
  { name: "list", paths: [`${API}/jobs?limit=50`] },
  { name: "list-deep", paths: [`${API}/jobs?limit=50&offset=100000`] },
  { name: "detail", paths: slugs.map((s) => `${API}/jobs/${encodeURIComponent(s)}`) },
  { name: "filtered", paths: [`${API}/jobs?limit=50&work_model=remote&employment_type=full_time`] },
  { name: "search", paths: [`${API}/jobs?limit=50&q=engineer`] },
];
const only = flags.only?.split(",");
const scenarios = only ? allScenarios.filter((s) => only.includes(s.name)) : allScenarios;

// ---------------------------------------------------------------------------------------------
// Servers, verification, load

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

const app = createApp({ config, db, logger: createLogger(config) });
const handleRest = app.callback();
const restServer = http.createServer((req, res) => void handleRest(req, res));
const baselineServer = startBaseline();
const servers = { rest: await listen(restServer), baseline: await listen(baselineServer) };
type ServerName = keyof typeof servers;

function fetchBody(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, headers: { host: HOST }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

const cores = os.availableParallelism();
console.log(
  `database: ${db.kind}${db.kind === "pglite" ? ` (${where})` : ` (pool ${config.database.kind === "postgres" ? config.database.poolSize : 1})`}, ` +
    `${jobCount.toLocaleString("en")} jobs; node ${process.version}; ${cores} cores (${os.cpus()[0]?.model ?? "?"})`,
);
console.log(
  config.listTotalCacheSeconds > 0
    ? `list totals: remembered per filter for ${config.listTotalCacheSeconds} s by both servers (LIST_TOTAL_CACHE_SECONDS; 0 counts every request)`
    : "list totals: counted on every request by both servers (LIST_TOTAL_CACHE_SECONDS=0)",
);
console.log(
  `load: ${connections} connections, ${warmupMs / 1000} s warm-up + ${durationMs / 1000} s per scenario and server; ` +
    `detail rotates over ${slugs.length} public slugs`,
);

// Verification: the baseline must answer exactly what the REST API answers.
for (const scenario of scenarios) {
  let bytes = 0;
  let identical = true;
  for (const path of scenario.paths) {
    const [rest, base] = await Promise.all([fetchBody(servers.rest, path), fetchBody(servers.baseline, path)]);
    if (rest.status !== 200) throw new Error(`REST answered ${rest.status} for ${path}: ${rest.text.slice(0, 300)}`);
    const same = rest.text === base.text;
    if (!same && !isDeepStrictEqual(JSON.parse(rest.text), JSON.parse(base.text))) {
      console.error(`REST:     ${rest.text.slice(0, 2000)}\nbaseline: ${base.text.slice(0, 2000)}`);
      throw new Error(`${scenario.name}: the baseline body differs from the REST body for ${path}`);
    }
    identical &&= same;
    bytes += rest.text.length;
  }
  console.log(
    `verified ${scenario.name.padEnd(9)}: baseline body deep-equals the REST body for ${scenario.paths.length} path(s) ` +
      `(${identical ? "byte-identical" : "same JSON, different key order or spacing"}; ~${Math.round(bytes / scenario.paths.length).toLocaleString("en")} bytes each)`,
  );
}

const worker = new Worker(new URL("./catalog-load.ts", import.meta.url));
const load = (request: LoadRequest) =>
  new Promise<LoadResult>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.postMessage(request);
  });

interface Row {
  scenario: string;
  server: ServerName;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  requests: number;
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN;

const results: Row[] = [];
for (const scenario of scenarios) {
  for (const server of ["rest", "baseline"] as const) {
    const r = await load({
      port: servers[server],
      host: HOST,
      paths: scenario.paths,
      connections,
      warmupMs,
      durationMs,
    });
    const sorted = r.latencies.sort();
    const row: Row = {
      scenario: scenario.name,
      server,
      rps: (r.requests / r.elapsedMs) * 1000,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      mean: sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1),
      errors: r.errors,
      requests: r.requests,
    };
    results.push(row);
    console.log(
      `  ${scenario.name.padEnd(9)} ${server.padEnd(8)} ${row.requests} requests, ${row.rps.toFixed(0)} req/s, p50 ${row.p50.toFixed(2)} ms` +
        (r.errors ? `; ${r.errors} errors, first: ${r.firstError}` : ""),
    );
  }
}
await worker.terminate();

// ---------------------------------------------------------------------------------------------
// Report

const find = (scenario: string, server: ServerName) =>
  results.find((r) => r.scenario === scenario && r.server === server);
const fmt = (n: number | undefined, digits = 2) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));
const header = ["scenario", "server", "req/s", "p50 ms", "p99 ms", "mean ms", "errors", "p50 rest/base"];
const table = results.map((r) => {
  const base = find(r.scenario, "baseline");
  return [
    r.scenario,
    r.server,
    r.rps.toFixed(0),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.mean),
    String(r.errors),
    r.server === "rest" && base ? `${fmt(r.p50 / base.p50)}x` : "",
  ];
});
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
console.log();
console.log(line(header));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const row of table) console.log(line(row));
console.log();
for (const server of ["rest", "baseline"] as const) {
  const deep = find("list-deep", server);
  const top = find("list", server);
  if (deep && top) {
    console.log(
      `deep offset (100,000) p50 / offset 0 p50, ${server.padEnd(8)}: ${fmt(deep.p50 / top.p50)}x (target: at most 3x)`,
    );
  }
}
const worst = results
  .filter((r) => r.server === "rest")
  .map((r) => ({ scenario: r.scenario, ratio: r.p50 / (find(r.scenario, "baseline")?.p50 ?? NaN) }))
  .sort((a, b) => b.ratio - a.ratio)[0];
if (worst) console.log(`worst p50 rest/baseline: ${fmt(worst.ratio)}x (${worst.scenario}; target: at most 1.5x)`);

restServer.close();
baselineServer.close();
restServer.closeAllConnections();
baselineServer.closeAllConnections();
await db.close();
