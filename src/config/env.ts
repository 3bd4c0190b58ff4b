// The one reader of process.env. Every setting is parsed and validated here, all problems are
// reported at once, and the rest of the code receives a typed, frozen Config.
import { z } from "zod";
import { CALLBACKS, type CallbackName } from "../callbacks.ts";

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");

/** A comma-separated list (blanks dropped), lower-cased. */
const list = z
  .string()
  .default("")
  .transform((v) =>
    v
      .split(",")
      .map((item) => item.trim().toLowerCase())
      .filter(Boolean),
  );

export const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // json: Cloud Logging's structured lines; pretty: one short readable line each; auto: pretty in
  // development on a terminal, else json.
  LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  // http1: HTTP/1.1 only. h2c: also cleartext HTTP/2 with prior knowledge (Cloud Run's --use-http2).
  HTTP_PROTOCOL: z.enum(["http1", "h2c"]).default("http1"),
  // For the fault suite only: each named callback throws once after its work (src/callbacks.ts).
  FAILPOINTS: z
    .string()
    .default("")
    .transform((text) =>
      text
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(CALLBACKS))),
  // After SIGTERM, how long requests in flight may still take before they are aborted (Cloud Run
  // sends SIGKILL 10 s after SIGTERM).
  // Cloud Run kills 10 s after SIGTERM; the process exits at most 1.5 s after the grace period.
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(8.5).default(8),
  // What a client may hold the server with (docs/process-policy.md): the request line and headers
  // within HEADERS_TIMEOUT_SECONDS; then every request body, whatever the route, cut off once no
  // byte of it arrived for BODY_IDLE_TIMEOUT_SECONDS (a progress timeout: a 300 MB upload may take
  // as long as it keeps sending) and, however it trickles, once it took REQUEST_TIMEOUT_SECONDS in
  // all; at most MAX_CONNECTIONS connections at once (HTTP/2: as many streams per connection).
  HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(20),
  BODY_IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(30),
  REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(3600),
  MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1000),

  // Database: a PostgreSQL server when DATABASE_URL is set, otherwise embedded PGlite.
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  // The service's limits on a PostgreSQL server: opening a connection, and one statement (also
  // sent as statement_timeout). A database that does not answer within them is a 503, fast.
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(1000),
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(0).default(1500),
  PGLITE_DATA_DIR: z.string().min(1).default(".data/pglite"),
  DB_MIGRATE_ON_START: bool.optional(),
  SEED_DEMO_DATA: bool.optional(),
  SEED: z.coerce.number().int().min(0).default(42),

  // Where links.html points: the public web site of the marketplace.
  PUBLIC_WEB_BASE_URL: z.url().default("https://marketplace.example.com"),
  // The API's public origin for meta.self/next and links.self, e.g. https://api.example.com.
  // Unset: taken from each request (X-Forwarded-Proto and Host behind Cloud Run).
  PUBLIC_API_BASE_URL: z.url().optional(),
  // How long list totals are remembered (0: counted on every request).
  LIST_TOTAL_CACHE_SECONDS: z.coerce.number().int().min(0).default(30),
  // max-age of successful catalog responses, in seconds.
  CATALOG_CACHE_MAX_AGE: z.coerce.number().int().min(0).default(60),

  // /mcp (docs/mcp.md): the origins whose pages a browser may call it from (besides
  // PUBLIC_API_BASE_URL's; * is any), and the host names it answers to (unset: localhost, 127.0.0.1
  // and [::1] when HOST is a loopback address, else any).
  MCP_ALLOWED_ORIGINS: list,
  MCP_ALLOWED_HOSTS: list,

  // GraphQL endpoint for internal teams.
  GRAPHQL_EXPLORER: bool.default(true),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(10),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(15),
  // What one /graphql operation may answer at the most, lists multiplied by their limits
  // (docs/graphql-cost.md): field values, and rows (objects).
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(50_000),
  GRAPHQL_MAX_ROWS: z.coerce.number().int().min(1).default(5_000),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(1).default(2000),
  // Who may use /graphql: public (anyone), internal (a Google-signed identity: an ID token for
  // GRAPHQL_AUDIENCE whose account is in an allowed domain or an allowed service account, or IAP's
  // assertion for GRAPHQL_IAP_AUDIENCE), off (404). Unset: internal in production (NODE_ENV=production
  // or Cloud Run), public elsewhere.
  GRAPHQL_ACCESS: z.enum(["public", "internal", "off"]).optional(),
  GRAPHQL_AUDIENCE: z.string().min(1).optional(),
  GRAPHQL_ALLOWED_DOMAINS: list,
  GRAPHQL_ALLOWED_SERVICE_ACCOUNTS: list,
  GRAPHQL_IAP_AUDIENCE: z.string().min(1).optional(),

  // Compression API keys are stored as HMAC-SHA256 under this secret when set (keep it in Secret
  // Manager; changing it invalidates every key), else as plain SHA-256.
  API_KEY_PEPPER: z.string().min(16, "must be at least 16 characters").optional(),

  // The compression API.
  COMPRESS_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(300 * 1024 * 1024),
  COMPRESS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  COMPRESS_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  COMPRESS_QUEUE_LIMIT: z.coerce.number().int().min(0).default(8),
  // A compression's time limit grows with its input: base + rate x MB, so a 300 MB scan finishes
  // while a small hostile file is cut off fast. COMPRESS_TIMEOUT_SECONDS is the old flat limit,
  // still read alone (as a base with no rate); it cannot be combined with the two new settings.
  COMPRESS_TIMEOUT_BASE_SECONDS: z.coerce.number().min(1).optional(),
  COMPRESS_TIMEOUT_SECONDS_PER_MB: z.coerce.number().min(0).optional(),
  COMPRESS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).optional(),
  COMPRESS_MEMORY_MB: z.coerce.number().int().min(64).default(1536),
  // Resident memory of one compression's process (heap plus libvips' native memory); unset: twice
  // COMPRESS_MEMORY_MB.
  COMPRESS_MAX_RSS_MB: z.coerce.number().int().min(128).optional(),
  // A synchronous call with ocr reads at most this many scanned pages (some 3-10 s each); a file
  // with more is queued as a job and answered 202 (docs/compression-api.md, "OCR's synchronous limit").
  COMPRESS_SYNC_OCR_MAX_PAGES: z.coerce.number().int().min(0).max(10_000).default(5),
  // The largest file the MCP tool compress_pdf compresses within its call (bytes); a larger one is
  // queued as a job and answered at once (docs/mcp.md). 10 MiB: its time limit (30 s + 2 s/MB by
  // default) stays under the 60 s MCP clients commonly wait for a tool; 0 queues every file.
  MCP_SYNC_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 1024 * 1024),
  // Compression processes kept started and waiting for a job; unset: COMPRESS_CONCURRENCY.
  COMPRESS_WARM_PROCESSES: z.coerce.number().int().min(0).max(64).optional(),
  // How many of the warm processes are quick ones (V8's flags for speed, for small inputs without
  // large images); unset: 1 when there are at least 2 warm processes, else 0.
  COMPRESS_QUICK_WARM_PROCESSES: z.coerce.number().int().min(0).max(64).optional(),
  // A multipart upload's own idle limit (answered 408 upload_timeout); unset: BODY_IDLE_TIMEOUT_SECONDS.
  UPLOAD_IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).optional(),
  // A file_url's whole fetch (connection, redirects and body); a pause longer than the upload's idle
  // limit above ends it sooner.
  FILE_URL_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(600),
  UPLOAD_TMP_DIR: z.string().min(1).optional(),
  // Where results go: a Cloud Storage bucket when GCS_BUCKET is set, else a local directory
  // whose download addresses this service signs and serves.
  GCS_BUCKET: z.string().min(3).optional(),
  GCS_API_ENDPOINT: z.url().optional(),
  GCS_PROJECT_ID: z.string().min(1).optional(),
  LOCAL_STORAGE_DIR: z.string().min(1).default(".data/objects"),
  DOWNLOAD_SIGNING_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(604_800).default(3600),
  RESULT_RETENTION_HOURS: z.coerce.number().int().min(1).default(24),
  // Asynchronous jobs (Prefer: respond-async): jobs this instance runs at once (0: it runs none, a
  // web-only service beside a worker service), attempts of a job whose worker died, and the lease a
  // worker holds a job by (renewed while it runs; a dead worker's job is taken over after it).
  COMPRESS_JOB_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  COMPRESS_JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  COMPRESS_JOB_LEASE_SECONDS: z.coerce.number().int().min(2).max(3600).default(60),
  // Direct uploads (POST /v1/uploads): how long the signed upload URL works.
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  // Webhooks may call private and loopback addresses and plain http:// URLs (for tests and local
  // receivers). Never link-local or a cloud metadata address (docs/webhooks-and-sign-in.md). Unset:
  // this machine only (loopback) with NODE_ENV=development off Cloud Run, so a receiver on the
  // developer's laptop works with `npm start`; public hosts only anywhere else.
  WEBHOOK_ALLOW_PRIVATE: bool.optional(),
  // After a rotation the replaced webhook secret signs calls beside the new one this long, so
  // receivers can switch without refusing a call (Standard Webhooks' rotation; 0: at once).
  WEBHOOK_ROTATION_OVERLAP_HOURS: z.coerce.number().min(0).max(168).default(24),

  // The subscriber dashboard (/dashboard): sign-in links go out over SMTP when SMTP_URL is set
  // (smtp://user:pass@host:587, smtps://… for TLS from the start), else to the log and a local outbox.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional(),
  MAIL_FROM: z.string().min(3).default("Marketplace <no-reply@marketplace.example.com>"),
  MAIL_OUTBOX_DIR: z.string().min(1).default(".data/outbox"),
  // A sign-in link works once, for this long; a session lasts this long (sign-out ends it sooner).
  SIGN_IN_LINK_MINUTES: z.coerce.number().int().min(1).max(60).default(15),
  SESSION_HOURS: z.coerce.number().int().min(1).max(720).default(12),
  // Sign-in requests per hour for one address from one client IP, and from one client IP (a 429
  // past either). Sign-in mails per hour to one address before they are rationed to one per few
  // minutes, quietly (docs/webhooks-and-sign-in.md: no one can lock an owner out).
  // Unset with NODE_ENV=development: ten times these (SIGN_IN_DEVELOPMENT_DEFAULTS), so signing in
  // over and over while building something is never refused.
  SIGN_IN_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).optional(),
  SIGN_IN_LIMIT_PER_IP: z.coerce.number().int().min(1).optional(),
  SIGN_IN_MAILS_PER_ADDRESS: z.coerce.number().int().min(1).optional(),

  // Rate limiting per client IP: in memory per instance, or shared by every instance through Redis.
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  // Prepended to every Redis key, so several deployments (or test runs) can share one Redis.
  REDIS_KEY_PREFIX: z.string().min(1).optional(),
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(1).default(300),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  // Behind a proxy that appends the client's address (Cloud Run's front end), the client IP is the
  // last X-Forwarded-For entry. Unset: trusted on Cloud Run (K_SERVICE set) only; a service reached
  // directly must not let a client name its own address (it would never be rate-limited).
  TRUST_PROXY: bool.optional(),

  // Cloud Logging: the project that trace ids belong to (unset: bare trace ids, which Cloud
  // Logging also accepts); K_SERVICE and K_REVISION are set by Cloud Run (Error Reporting groups by them).
  GOOGLE_CLOUD_PROJECT: z.string().min(1).optional(),
  GCP_PROJECT: z.string().min(1).optional(),
  K_SERVICE: z.string().min(1).optional(),
  K_REVISION: z.string().min(1).optional(),
});

/** Who may use /graphql (docs/catalog-api.md, "The GraphQL endpoint"). */
export interface GraphQLAccess {
  mode: "public" | "internal" | "off";
  /** The audience Google ID tokens must be issued for (internal); null: no ID token is accepted. */
  audience: string | null;
  /** Google Workspace domains (the token's `hd`) whose accounts may call. */
  allowedDomains: string[];
  /** Service accounts (the token's `email`) that may call. */
  allowedServiceAccounts: string[];
  /** The audience of IAP's signed header (internal); null: the header is not accepted. */
  iapAudience: string | null;
}

export type DatabaseConfig =
  | { kind: "postgres"; url: string; poolSize: number; migrateOnStart: boolean; seedDemoData: boolean; seed: number }
  | { kind: "pglite"; dataDir: string; migrateOnStart: boolean; seedDemoData: boolean; seed: number };

export interface Config {
  env: "development" | "production" | "test";
  host: string;
  port: number;
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  httpProtocol: "http1" | "h2c";
  /** Callbacks that throw once, for the fault suite (src/callbacks.ts). */
  failpoints: readonly CallbackName[];
  /** After SIGTERM, how long requests in flight may still take. */
  shutdownGraceMs: number;
  /** What a client may hold the server with: see src/http/server.ts and docs/process-policy.md. */
  httpLimits: {
    headersTimeoutMs: number;
    bodyIdleTimeoutMs: number;
    requestTimeoutMs: number;
    maxConnections: number;
  };
  database: DatabaseConfig;
  /** The service's connection and statement time limits on a PostgreSQL server (0: none). */
  databaseTimeouts: { connectMs: number; queryMs: number };
  publicWebBaseUrl: string;
  /** The API's public origin without a trailing slash; null derives it from each request. */
  publicApiBaseUrl: string | null;
  catalogCacheMaxAge: number;
  listTotalCacheSeconds: number;
  /** /mcp's DNS rebinding checks: origins a browser may call it from, host names it answers to (null: any). */
  mcp: { allowedOrigins: string[]; allowedHosts: string[] | null };
  graphql: {
    explorer: boolean;
    maxDepth: number;
    maxAliases: number;
    maxCost: number;
    maxRows: number;
    maxTokens: number;
    access: GraphQLAccess;
  };
  compress: {
    maxUploadBytes: number;
    ratePerMinute: number;
    concurrency: number;
    queueLimit: number;
    /** The time limit of a compression: timeoutMs + timeoutMsPerMb x input MB (2^20 bytes). */
    timeoutMs: number;
    timeoutMsPerMb: number;
    /** The heap cap (V8) and the resident-memory cap of one compression's process. */
    memoryMb: number;
    maxRssMb: number;
    warmProcesses: number;
    /** Of warmProcesses, the quick ones (src/compress/isolation/process-kind.ts). */
    quickWarmProcesses: number;
    uploadIdleTimeoutMs: number;
    /** A file_url's whole fetch; its pauses are held to uploadIdleTimeoutMs. */
    fileUrlTimeoutMs: number;
    tmpDir: string | null;
    /** The scanned pages a synchronous call reads with ocr, at most; more, and it is queued as a job. */
    syncOcrMaxPages: number;
    /** The largest file compress_pdf (/v1/mcp) compresses within its call; larger, and it is queued as a job. */
    mcpSyncMaxBytes: number;
  };
  storage:
    | { kind: "gcs"; bucket: string; apiEndpoint: string | null; projectId: string | null }
    | { kind: "local"; dir: string; signingSecret: string | null };
  downloadUrlTtlSeconds: number;
  resultRetentionHours: number;
  jobs: { workers: number; maxAttempts: number; leaseMs: number; uploadUrlTtlSeconds: number };
  /** Webhook targets may be http:// and private or loopback addresses (never link-local or metadata). */
  /** What webhooks may reach beside public hosts (address-policy.ts). */
  webhookTargets: "public" | "loopback" | "private";
  webhookRotationOverlapMs: number;
  /** Secret for hashing API keys; null hashes with plain SHA-256. */
  apiKeyPepper: string | null;
  dashboard: {
    /** Sign-in mail over SMTP; null writes it to the log and outboxDir. */
    smtpUrl: string | null;
    mailFrom: string;
    outboxDir: string;
    signInLinkTtlMs: number;
    sessionTtlMs: number;
    /** Sign-in requests per hour per (address, client IP) and per client IP. */
    signInPerAddress: number;
    signInPerIp: number;
    /** Sign-in mails per hour to one address before they are rationed. */
    signInMailsPerAddress: number;
    /** The origin sign-in links point to: PUBLIC_API_BASE_URL, else http://localhost:PORT; never a request's Host. */
    /** Where sign-in links point: PUBLIC_API_BASE_URL, else http://localhost:PORT. */
    linkOrigin: string;
    /**
     * Development without PUBLIC_API_BASE_URL: a link asked for at a loopback origin
     * (http://127.0.0.1:3000, http://localhost:3000) points back at that origin, so the dashboard
     * opened at either lands signed in. Never another host: whoever asks must not choose where the code goes.
     */
    linkOriginFromLoopbackRequest: boolean;
  };
  /** The shared store of rate limits; null keeps them in each instance's memory. */
  redis: { url: string; keyPrefix?: string } | null;
  rateLimit: { requests: number; windowSeconds: number };
  /** Take the client IP from the last X-Forwarded-For entry (true) or the socket (false). */
  trustProxy: boolean;
  /** Cloud Logging: the trace ids' project and the service and revision named in Error Reporting. */
  logging: { projectId: string | null; service: string | null; revision: string | null };
  /** How lines are written: structured JSON, or short readable lines for a developer's terminal. */
  logFormat: "json" | "pretty";
}

/** The HTTP limits of an environment that sets none (src/http/server.ts's default). */
export const defaultHttpLimits = (): Config["httpLimits"] => loadConfig({}).httpLimits;

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join("\n  ")}`);
    this.name = "ConfigError";
    this.issues = issues;
  }
}

/**
 * What production needs beyond valid values. The embedded database and local result storage are
 * for development: in production (NODE_ENV=production) or on Cloud Run (K_SERVICE, which Cloud Run
 * sets) they would live on one instance's disk, or in its memory on Cloud Run, and vanish with it.
 * Judged on the raw values, so these are listed beside any invalid value.
 */
function deploymentIssues(env: Record<string, string | undefined>): string[] {
  const issues: string[] = [];
  const onCloudRun = env["K_SERVICE"] !== undefined;
  const where = onCloudRun ? "on Cloud Run (K_SERVICE is set)" : "with NODE_ENV=production";
  if ((onCloudRun || env["NODE_ENV"] === "production") && !env["DATABASE_URL"] && !env["PGLITE_DATA_DIR"]) {
    issues.push(
      `DATABASE_URL: required ${where}; without it the service would use an embedded database on this ` +
        "instance alone (set PGLITE_DATA_DIR to choose that on purpose)",
    );
  }
  if (onCloudRun && !env["GCS_BUCKET"]) {
    issues.push(
      "GCS_BUCKET: required on Cloud Run (K_SERVICE is set); without it results would be stored in the " +
        "instance's memory, lost when it stops and unreachable from the other instances",
    );
  }
  return issues;
}

/**
 * The defaults of the compression time limit, from the 290 MB scan-like file of
 * `npm run bench:compress:scale` (docs/benchmarks.md).
 */
export const COMPRESS_TIMEOUT_DEFAULTS = { baseSeconds: 30, secondsPerMb: 2 } as const;

function compressTimeout(e: z.infer<typeof envSchema>): { timeoutMs: number; timeoutMsPerMb: number } {
  if (e.COMPRESS_TIMEOUT_SECONDS !== undefined)
    return { timeoutMs: e.COMPRESS_TIMEOUT_SECONDS * 1000, timeoutMsPerMb: 0 };
  return {
    timeoutMs: Math.round((e.COMPRESS_TIMEOUT_BASE_SECONDS ?? COMPRESS_TIMEOUT_DEFAULTS.baseSeconds) * 1000),
    timeoutMsPerMb: Math.round((e.COMPRESS_TIMEOUT_SECONDS_PER_MB ?? COMPRESS_TIMEOUT_DEFAULTS.secondsPerMb) * 1000),
  };
}

/** Settings that are valid alone but not together. */
function conflicts(env: Record<string, string | undefined>): string[] {
  // Sign-in links never take their origin from a request's Host header (the one who asks would
  // choose where a working code is sent); without PUBLIC_API_BASE_URL they point at
  // http://localhost:PORT, right for the local outbox and wrong for a real mailbox.
  const mail =
    env["SMTP_URL"] !== undefined && env["PUBLIC_API_BASE_URL"] === undefined
      ? [
          "SMTP_URL: needs PUBLIC_API_BASE_URL, the origin that mailed sign-in links point to (without it " +
            "they would point at http://localhost:PORT)",
        ]
      : [];
  return [...mail, ...compressTimeoutConflicts(env), ...quickWarmConflicts(env)];
}

/** The quick warm processes are part of the warm ones: no more of them than there are in all. */
function quickWarmConflicts(env: Record<string, string | undefined>): string[] {
  const quick = Number(env["COMPRESS_QUICK_WARM_PROCESSES"] ?? 0);
  const warm = Number(env["COMPRESS_WARM_PROCESSES"] ?? Number(env["COMPRESS_CONCURRENCY"] ?? 2) + 1);
  if (!(quick > warm)) return [];
  return [
    `COMPRESS_QUICK_WARM_PROCESSES: ${quick} is more than the warm processes (COMPRESS_WARM_PROCESSES: ${warm}), ` +
      "of which the quick ones are part",
  ];
}

function compressTimeoutConflicts(env: Record<string, string | undefined>): string[] {
  if (env["COMPRESS_TIMEOUT_SECONDS"] === undefined) return [];
  if (env["COMPRESS_TIMEOUT_BASE_SECONDS"] === undefined && env["COMPRESS_TIMEOUT_SECONDS_PER_MB"] === undefined) {
    return [];
  }
  return [
    "COMPRESS_TIMEOUT_SECONDS: the old flat time limit cannot be combined with COMPRESS_TIMEOUT_BASE_SECONDS " +
      "or COMPRESS_TIMEOUT_SECONDS_PER_MB; remove it (its value is the same as COMPRESS_TIMEOUT_BASE_SECONDS " +
      "with COMPRESS_TIMEOUT_SECONDS_PER_MB=0)",
  ];
}

type Env = z.infer<typeof envSchema>;

/**
 * An embedded database belongs to this process: migrate and seed it by default. A server is
 * shared: migrations run as their own step (npm run db:migrate, a Cloud Run job).
 */
function databaseOf(e: Env): DatabaseConfig {
  return e.DATABASE_URL
    ? {
        kind: "postgres",
        url: e.DATABASE_URL,
        poolSize: e.DATABASE_POOL_SIZE,
        migrateOnStart: e.DB_MIGRATE_ON_START ?? false,
        seedDemoData: e.SEED_DEMO_DATA ?? false,
        seed: e.SEED,
      }
    : {
        kind: "pglite",
        dataDir: e.PGLITE_DATA_DIR,
        migrateOnStart: e.DB_MIGRATE_ON_START ?? true,
        seedDemoData: e.SEED_DEMO_DATA ?? true,
        seed: e.SEED,
      };
}

function graphqlOf(e: Env): Config["graphql"] {
  return {
    explorer: e.GRAPHQL_EXPLORER,
    maxDepth: e.GRAPHQL_MAX_DEPTH,
    maxAliases: e.GRAPHQL_MAX_ALIASES,
    maxCost: e.GRAPHQL_MAX_COST,
    maxRows: e.GRAPHQL_MAX_ROWS,
    maxTokens: e.GRAPHQL_MAX_TOKENS,
    access: {
      mode: e.GRAPHQL_ACCESS ?? (e.NODE_ENV === "production" || e.K_SERVICE !== undefined ? "internal" : "public"),
      audience: e.GRAPHQL_AUDIENCE ?? null,
      allowedDomains: e.GRAPHQL_ALLOWED_DOMAINS,
      allowedServiceAccounts: e.GRAPHQL_ALLOWED_SERVICE_ACCOUNTS,
      iapAudience: e.GRAPHQL_IAP_AUDIENCE ?? null,
    },
  };
}

/** One more than can run: see compressOf. */
const warmProcessesOf = (e: Env) => e.COMPRESS_WARM_PROCESSES ?? e.COMPRESS_CONCURRENCY + 1;

function compressOf(e: Env): Config["compress"] {
  return {
    maxUploadBytes: e.COMPRESS_MAX_UPLOAD_BYTES,
    ratePerMinute: e.COMPRESS_RATE_LIMIT_PER_MINUTE,
    concurrency: e.COMPRESS_CONCURRENCY,
    queueLimit: e.COMPRESS_QUEUE_LIMIT,
    ...compressTimeout(e),
    memoryMb: e.COMPRESS_MEMORY_MB,
    maxRssMb: e.COMPRESS_MAX_RSS_MB ?? e.COMPRESS_MEMORY_MB * 2,
    // One more than can run: back-to-back small jobs each leave a process to be replaced, and a
    // replacement takes longer to start (0.35-1 s) than a small file takes to compress.
    warmProcesses: warmProcessesOf(e),
    quickWarmProcesses: e.COMPRESS_QUICK_WARM_PROCESSES ?? (warmProcessesOf(e) >= 2 ? 1 : 0),
    uploadIdleTimeoutMs: Math.round((e.UPLOAD_IDLE_TIMEOUT_SECONDS ?? e.BODY_IDLE_TIMEOUT_SECONDS) * 1000),
    fileUrlTimeoutMs: Math.round(e.FILE_URL_TIMEOUT_SECONDS * 1000),
    tmpDir: e.UPLOAD_TMP_DIR ?? null,
    syncOcrMaxPages: e.COMPRESS_SYNC_OCR_MAX_PAGES,
    mcpSyncMaxBytes: e.MCP_SYNC_MAX_BYTES,
  };
}

/** Hourly sign-in limits where none is set: production's, and ten times as many in development. */
export const SIGN_IN_DEFAULTS = { perAddress: 5, perIp: 30, mailsPerAddress: 10 } as const;
export const SIGN_IN_DEVELOPMENT_DEFAULTS = { perAddress: 50, perIp: 300, mailsPerAddress: 100 } as const;

function signInLimitsOf(e: Env) {
  const defaults = e.NODE_ENV === "development" ? SIGN_IN_DEVELOPMENT_DEFAULTS : SIGN_IN_DEFAULTS;
  return {
    signInPerAddress: e.SIGN_IN_LIMIT_PER_ADDRESS ?? defaults.perAddress,
    signInPerIp: e.SIGN_IN_LIMIT_PER_IP ?? defaults.perIp,
    signInMailsPerAddress: e.SIGN_IN_MAILS_PER_ADDRESS ?? defaults.mailsPerAddress,
  };
}

/** Set: as set. Unset: this machine in development (never on Cloud Run), public hosts elsewhere. */
function webhookTargetsOf(e: Env): Config["webhookTargets"] {
  if (e.WEBHOOK_ALLOW_PRIVATE !== undefined) return e.WEBHOOK_ALLOW_PRIVATE ? "private" : "public";
  return e.NODE_ENV === "development" && e.K_SERVICE === undefined ? "loopback" : "public";
}

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

function mcpOf(e: Env): Config["mcp"] {
  const loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].includes(e.HOST.toLowerCase());
  return {
    // Origins compare exactly, and an origin has no trailing slash.
    allowedOrigins: e.MCP_ALLOWED_ORIGINS.map((origin) => origin.replace(/\/+$/, "")),
    allowedHosts: e.MCP_ALLOWED_HOSTS.length ? e.MCP_ALLOWED_HOSTS : loopback ? LOOPBACK_HOSTS : null,
  };
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset", as in most deployment tools' UIs.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  issues.push(...deploymentIssues(cleaned), ...conflicts(cleaned));
  if (!parsed.success || issues.length) throw new ConfigError(issues);
  const e = parsed.data;
  return Object.freeze({
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    httpProtocol: e.HTTP_PROTOCOL,
    failpoints: e.FAILPOINTS,
    shutdownGraceMs: Math.round(e.SHUTDOWN_GRACE_SECONDS * 1000),
    httpLimits: {
      headersTimeoutMs: Math.round(e.HEADERS_TIMEOUT_SECONDS * 1000),
      bodyIdleTimeoutMs: Math.round(e.BODY_IDLE_TIMEOUT_SECONDS * 1000),
      requestTimeoutMs: Math.round(e.REQUEST_TIMEOUT_SECONDS * 1000),
      maxConnections: e.MAX_CONNECTIONS,
    },
    database: databaseOf(e),
    databaseTimeouts: { connectMs: e.DATABASE_CONNECT_TIMEOUT_MS, queryMs: e.DATABASE_QUERY_TIMEOUT_MS },
    publicWebBaseUrl: e.PUBLIC_WEB_BASE_URL.replace(/\/+$/, ""),
    publicApiBaseUrl: e.PUBLIC_API_BASE_URL?.replace(/\/+$/, "") ?? null,
    catalogCacheMaxAge: e.CATALOG_CACHE_MAX_AGE,
    listTotalCacheSeconds: e.LIST_TOTAL_CACHE_SECONDS,
    mcp: mcpOf(e),
    graphql: graphqlOf(e),
    apiKeyPepper: e.API_KEY_PEPPER ?? null,
    dashboard: {
      smtpUrl: e.SMTP_URL ?? null,
      mailFrom: e.MAIL_FROM,
      outboxDir: e.MAIL_OUTBOX_DIR,
      signInLinkTtlMs: e.SIGN_IN_LINK_MINUTES * 60_000,
      sessionTtlMs: e.SESSION_HOURS * 3_600_000,
      ...signInLimitsOf(e),
      linkOrigin: e.PUBLIC_API_BASE_URL?.replace(/\/+$/, "") ?? `http://localhost:${e.PORT}`,
      linkOriginFromLoopbackRequest: e.PUBLIC_API_BASE_URL === undefined && e.NODE_ENV === "development",
    },
    compress: compressOf(e),
    storage: e.GCS_BUCKET
      ? {
          kind: "gcs" as const,
          bucket: e.GCS_BUCKET,
          apiEndpoint: e.GCS_API_ENDPOINT ?? null,
          projectId: e.GCS_PROJECT_ID ?? null,
        }
      : { kind: "local" as const, dir: e.LOCAL_STORAGE_DIR, signingSecret: e.DOWNLOAD_SIGNING_SECRET ?? null },
    downloadUrlTtlSeconds: e.DOWNLOAD_URL_TTL_SECONDS,
    resultRetentionHours: e.RESULT_RETENTION_HOURS,
    jobs: {
      workers: e.COMPRESS_JOB_WORKERS,
      maxAttempts: e.COMPRESS_JOB_MAX_ATTEMPTS,
      leaseMs: e.COMPRESS_JOB_LEASE_SECONDS * 1000,
      uploadUrlTtlSeconds: e.UPLOAD_URL_TTL_SECONDS,
    },
    webhookTargets: webhookTargetsOf(e),
    webhookRotationOverlapMs: Math.round(e.WEBHOOK_ROTATION_OVERLAP_HOURS * 3_600_000),
    redis: e.REDIS_URL ? { url: e.REDIS_URL, ...(e.REDIS_KEY_PREFIX ? { keyPrefix: e.REDIS_KEY_PREFIX } : {}) } : null,
    rateLimit: { requests: e.RATE_LIMIT_REQUESTS, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS },
    trustProxy: e.TRUST_PROXY ?? e.K_SERVICE !== undefined,
    logging: {
      projectId: e.GOOGLE_CLOUD_PROJECT ?? e.GCP_PROJECT ?? null,
      service: e.K_SERVICE ?? null,
      revision: e.K_REVISION ?? null,
    },
    logFormat:
      e.LOG_FORMAT === "auto"
        ? e.NODE_ENV === "development" && process.stdout.isTTY
          ? "pretty"
          : "json"
        : e.LOG_FORMAT,
  });
}
