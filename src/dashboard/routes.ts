// The subscriber dashboard under /dashboard: passwordless sign-in (one-time links by mail),
// database sessions, Settings → API keys, Usage (per day and per key), History, Webhooks and Try it. Pages are server-rendered
// (pages.ts); every request that changes something passes the cross-origin check and, once
// signed in, the session's CSRF token (security.ts). Keys are made and revoked by the same code as
// the operator's tool (src/auth/accounts.ts); Try it runs the compression API's own service.
import { readFileSync } from "node:fs";
import Router from "@koa/router";
import type { Context, Next, ParameterizedContext } from "koa";
import type { Redis } from "ioredis";
import { accounts, AccountError, keyRefusal, type Accounts } from "../auth/accounts.ts";
import { subscriberKey, type AuthenticatedKey } from "../auth/authenticate.ts";
import { csrfToken, isCsrfToken, sessions, type Sessions, type SessionSubscriber } from "../auth/sessions.ts";
import { dailyCompressions, usageSummary } from "../auth/usage.ts";
import { rotateWebhookSecret, webhookSecret } from "../compress/async-jobs/webhooks.ts";
import type { ObjectStorage } from "../compress/storage/storage.ts";
import { accountRetention, findCompression, setAccountRetention } from "../compress/workflow/compressions.ts";
import { deleteCompression, maxRetentionSeconds, resultUrl } from "../compress/workflow/results.ts";
import type { CompressService } from "../compress/workflow/service.ts";
import { UploadAborted } from "../compress/workflow/failure.ts";
import type { Config } from "../config/env.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { isDatabaseUnavailable } from "../db/errors.ts";
import {
  databaseUnavailable,
  DEPENDENCY_RETRY_SECONDS,
  HttpError,
  isStorageUnavailable,
  retryAfter,
  storageUnavailable,
} from "../errors.ts";
import { setHeaders, setRateLimitHeaders } from "../http/rate-limit.ts";
import { publicOrigin } from "../http/origin.ts";
import { withRequestInfo } from "../http/request-info.ts";
import type { AppState } from "../http/state.ts";
import type { Logger } from "../logger.ts";
import {
  historyPage,
  rotateConfirmPage,
  webhooksPage,
  type ResultLink,
  type WebhooksPageOptions,
} from "./activity-pages.ts";
import type { Mailer } from "./mailer.ts";
import {
  checkEmailPage,
  confirmSignInPage,
  DASHBOARD,
  errorPage,
  keysPage,
  linkRefusedPage,
  revokeConfirmPage,
  signInPage,
  usagePage,
  type KeysPageOptions,
  type Viewer,
} from "./pages.ts";
import { history, recentDeliveries, resultValidUntil, usagePerKey, type HistoryRow } from "./records.ts";
import { deleteConfirmPage, duration, type RetentionSetting } from "./results-pages.ts";
import { tryPage } from "./try-page.ts";
import { requestSignInLink, signInLimits, type LinkSender } from "./sign-in-links.ts";
import {
  assertSameOrigin,
  clearSessionCookie,
  readForm,
  sessionCookieName,
  setPageHeaders,
  setSessionCookie,
} from "./security.ts";

export interface DashboardDeps {
  config: Config;
  prisma: PrismaClient;
  logger: Logger;
  redis: Redis | null;
  mailer: Mailer;
  /** The compression API's service, for Try it; null where /v1 is not served. */
  compress: CompressService | null;
  /** Where results are stored, to sign the history's download links; null where /v1 is not served. */
  storage: ObjectStorage | null;
}

const ASSETS: Record<string, string> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};
const assetFiles = new Map(
  Object.keys(ASSETS).map((name) => [name, readFileSync(new URL(`./assets/${name}`, import.meta.url))]),
);

const EMAIL = /^[^@\s]+@[^@\s]+$/;

interface SignedIn extends Viewer {
  secret: string;
}

/** ctx.state here: the app's, and the viewer once a session cookie resolved. */
interface DashboardState extends AppState {
  dashboard?: SignedIn;
}
/** ctx.state of the routes behind `signedIn`, which only go on with a viewer. */
interface SignedInState {
  dashboard: SignedIn;
}
type DashboardContext = ParameterizedContext<DashboardState>;

function page(ctx: Context, body: string, status = 200) {
  setPageHeaders(ctx);
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = body;
}

/** Middleware that lets a request on only with a viewer; see `signedInOnly`. */
type SignedInGate = (ctx: DashboardContext, next: Next) => Promise<void>;

export function createDashboardRouter(deps: DashboardDeps): Router<DashboardState> {
  const { config, prisma, logger } = deps;
  const settings = config.dashboard;
  const auth = sessions(prisma, { linkTtlMs: settings.signInLinkTtlMs, sessionTtlMs: settings.sessionTtlMs });
  const admin = accounts(prisma, config.apiKeyPepper);
  const signedIn = signedInOnly(auth);
  const router = new Router<DashboardState>({ prefix: DASHBOARD });

  router.use(errorsAsPages(logger));
  registerAssets(router);
  router.get("/", async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    ctx.redirect((await viewerOf(ctx, auth)) ? `${DASHBOARD}/keys` : `${DASHBOARD}/sign-in`);
  });
  registerSignIn(router, { config, logger, redis: deps.redis, mailer: deps.mailer, auth, signedIn });
  registerKeys(router, { logger, admin, signedIn, publicApiBaseUrl: config.publicApiBaseUrl });
  registerUsage(router, { prisma, signedIn });
  registerHistory(router, { config, prisma, storage: deps.storage, signedIn });
  registerWebhooks(router, { config, prisma, logger, signedIn });
  registerTryIt(router, { config, prisma, logger, compress: deps.compress, admin, signedIn });

  // Any other page under /dashboard: a page saying so, not the API's JSON.
  router.get("/{*rest}", () => {
    throw new HttpError(404, "not_found", "There is no such page in the dashboard.");
  });

  return router;
}

/** A fault the client may retry as its 503 (src/db/errors.ts, src/errors.ts); anything else as it is. */
function retryableFault(error: unknown): unknown {
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (isStorageUnavailable(error)) return storageUnavailable();
  return error;
}

/**
 * Errors become pages here, with the status they carry; anything unexpected is logged. A database
 * that cannot be reached, or a full disk, is the API's 503 with Retry-After, not a 500. A client
 * that asks for JSON (Accept prefers application/json) gets the service's JSON error shape instead
 * of a page: the app's error middleware answers it.
 */
function errorsAsPages(logger: Logger) {
  return async (ctx: DashboardContext, next: Next) => {
    try {
      await next();
    } catch (caught) {
      const error = caught instanceof HttpError ? caught : retryableFault(caught);
      if (ctx.accepts("html", "json") === "json") throw error;
      const viewer = ctx.state.dashboard ?? null;
      if (error instanceof HttpError) {
        ctx.set(error.headers);
        return page(ctx, errorPage(titleOf(error.status), error.message, viewer), error.status);
      }
      // A client that went away (Cancel during an upload) is no fault of the service: the request
      // log's line records it, at info; no stack, no error.
      if (error instanceof UploadAborted || !ctx.writable || ctx.req.aborted) {
        logger.debug({ requestId: ctx.state.requestId }, "dashboard request ended by the client");
        return;
      }
      logger.error({ err: error, requestId: ctx.state.requestId }, "dashboard request failed");
      page(ctx, errorPage("Something went wrong", "The page could not be shown; try again shortly.", viewer), 500);
    }
  };
}

/** Loads the session of the cookie, if any, into ctx.state.dashboard. */
async function viewerOf(ctx: DashboardContext, auth: Sessions): Promise<SignedIn | null> {
  const secret = ctx.cookies.get(sessionCookieName(ctx));
  if (!secret) return null;
  const session = await auth.resolve(secret);
  if (!session) return null;
  const viewer: SignedIn = { session, csrf: csrfToken(secret), secret };
  ctx.state.dashboard = viewer;
  return viewer;
}

/** Signed-in pages: a GET without a session goes to the sign-in page; anything else is a 401. */
function signedInOnly(auth: Sessions): SignedInGate {
  return async (ctx, next) => {
    if (await viewerOf(ctx, auth)) {
      await next();
      return;
    }
    if (ctx.method === "GET" || ctx.method === "HEAD") {
      clearSessionCookie(ctx);
      ctx.set("Cache-Control", "no-store");
      return ctx.redirect(`${DASHBOARD}/sign-in`);
    }
    throw new HttpError(401, "signed_out", "Your session has ended. Sign in again, then repeat what you did.");
  };
}

/** Every request that changes something: from this origin, with the session's token. */
function changing(ctx: ParameterizedContext<SignedInState>, form: URLSearchParams | Record<string, string>) {
  const viewer = ctx.state.dashboard;
  const token = form instanceof URLSearchParams ? form.get("csrf_token") : form["csrf_token"];
  if (!isCsrfToken(viewer.secret, token)) {
    throw new HttpError(403, "invalid_csrf_token", "This form has expired or did not come from this dashboard.");
  }
  return viewer;
}

/** The origin half of that, as middleware: checked before the form is read. */
async function sameOrigin(ctx: Context, next: Next) {
  assertSameOrigin(ctx);
  await next();
}

function registerAssets(router: Router<DashboardState>) {
  router.get("/assets/:file", (ctx) => {
    const file = ctx.params["file"] ?? "";
    const body = assetFiles.get(file);
    if (!body) throw new HttpError(404, "not_found", `No asset ${file}`);
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.type = ASSETS[file]!;
    ctx.body = body;
  });
}

// ---- Sign-in ----

interface SignInDeps {
  config: Config;
  logger: Logger;
  redis: Redis | null;
  mailer: Mailer;
  auth: Sessions;
  signedIn: SignedInGate;
}

/** What requesting a link needs: the sender, and where the outbox is (named on the sign-in page). */
interface LinkRequest {
  settings: Config["dashboard"];
  logger: Logger;
  sender: LinkSender;
  outboxDir: string | null;
}

function registerSignIn(router: Router<DashboardState>, deps: SignInDeps) {
  const { config, logger, auth, signedIn } = deps;
  const settings = config.dashboard;
  const linkMinutes = Math.round(settings.signInLinkTtlMs / 60_000);
  const outboxDir = deps.mailer.kind === "outbox" ? settings.outboxDir : null;
  const linkRequest: LinkRequest = {
    settings,
    logger,
    outboxDir,
    sender: {
      auth,
      mailer: deps.mailer,
      limits: signInLimits(settings, deps.redis, logger),
      logger,
      origin: settings.linkOrigin,
      linkMinutes,
    },
  };

  router.get("/sign-in", async (ctx) => {
    if (await viewerOf(ctx, auth)) {
      ctx.set("Cache-Control", "no-store");
      return ctx.redirect(`${DASHBOARD}/keys`);
    }
    page(ctx, signInPage({ signedOut: ctx.query["signed_out"] === "1", outboxDir }));
  });

  router.post("/sign-in", sameOrigin, (ctx) => requestLink(ctx, linkRequest));

  // The link opens a page that asks to confirm: a mail scanner that follows links does not spend it.
  router.get("/sign-in/link", async (ctx) => {
    const code = typeof ctx.query["code"] === "string" ? ctx.query["code"] : "";
    const found = await auth.peekLink(code);
    if (!found) return page(ctx, linkRefusedPage(linkMinutes), 400);
    page(ctx, confirmSignInPage(code, found.email));
  });

  router.post("/sign-in/link", sameOrigin, async (ctx) => {
    const form = await readForm(ctx);
    const session = await auth.redeemLink(form.get("code") ?? "");
    if (!session) return page(ctx, linkRefusedPage(linkMinutes), 400);
    setSessionCookie(ctx, session.secret, session.expiresAt);
    ctx.status = 303;
    ctx.redirect(`${DASHBOARD}/keys`);
  });

  router.post<SignedInState>("/sign-out", sameOrigin, signedIn, async (ctx) => {
    const viewer = changing(ctx, await readForm(ctx));
    await auth.revoke(viewer.session.sessionId);
    clearSessionCookie(ctx);
    ctx.status = 303;
    ctx.redirect(`${DASHBOARD}/sign-in?signed_out=1`);
  });
}

const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * Where a sign-in link points: the configured origin; in development without one, the request's own
 * origin when it is this machine (127.0.0.1 or localhost, the Host a browser on it sends), so the
 * session cookie is set on the origin the dashboard was opened at. Any other Host gets the default.
 */
function linkOriginOf(ctx: DashboardContext, settings: Config["dashboard"]): string {
  if (!settings.linkOriginFromLoopbackRequest || !LOOPBACK_HOSTNAMES.has(ctx.hostname)) return settings.linkOrigin;
  return `${ctx.protocol}://${ctx.host}`;
}

/**
 * POST /sign-in: "check your e-mail" for any well-formed address once its link is mailed (or
 * quietly not: sign-in-links.ts); 429 to the one who asks too often; 503 when no link could be made
 * or sent.
 */
async function requestLink(ctx: DashboardContext, deps: LinkRequest) {
  const { logger, outboxDir } = deps;
  const form = await readForm(ctx);
  const email = (form.get("email") ?? "").trim().toLowerCase();
  const again = (error: string, status: number) => page(ctx, signInPage({ email, error, outboxDir }), status);
  if (!EMAIL.test(email) || email.length > 254) return again("Enter the e-mail address of your subscription.", 400);
  const sender = { ...deps.sender, origin: linkOriginOf(ctx, deps.settings) };
  const outcome = await requestSignInLink(sender, email, ctx.ip || "unknown");
  for (const { limiter, result } of outcome.checks) setRateLimitHeaders(ctx, limiter, result);
  if (outcome.kind === "limited") {
    const minutes = Math.max(1, Math.ceil(outcome.resetSeconds / 60));
    ctx.set(retryAfter(outcome.resetSeconds));
    return again(`Too many sign-in requests. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`, 429);
  }
  if (outcome.kind === "failed") {
    logger.error({ err: outcome.error, requestId: ctx.state.requestId }, "could not send a sign-in link");
    ctx.set(retryAfter(DEPENDENCY_RETRY_SECONDS));
    return again("The sign-in link could not be sent just now. Try again in a few minutes.", 503);
  }
  page(ctx, checkEmailPage(email, deps.sender.linkMinutes));
}

// ---- Settings → API keys ----

const keysOf = (admin: Accounts, session: SessionSubscriber) => admin.listKeys(session.subscriberId);

function registerKeys(
  router: Router<DashboardState>,
  deps: { logger: Logger; admin: Accounts; signedIn: SignedInGate; publicApiBaseUrl: string | null },
) {
  const { logger, admin, signedIn } = deps;
  const showKeys = async (
    ctx: Context,
    viewer: Viewer,
    options: Omit<KeysPageOptions, "keys" | "origin">,
    status = 200,
  ) => {
    const origin = publicOrigin(ctx, deps.publicApiBaseUrl);
    page(ctx, keysPage(viewer, { keys: await keysOf(admin, viewer.session), origin, ...options }), status);
  };

  router.get<SignedInState>("/keys", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    // Only a key prefix is echoed: the page cannot be made to announce anything else.
    const given = ctx.query["revoked"];
    const revoked = typeof given === "string" && /^mkp_[0-9A-Za-z]{6}$/.test(given) ? given : undefined;
    await showKeys(ctx, viewer, revoked ? { revoked } : {});
  });

  router.post<SignedInState>("/keys", sameOrigin, signedIn, async (ctx) => {
    const form = await readForm(ctx);
    const viewer = changing(ctx, form);
    const name = form.get("name") ?? "";
    const refusal = keyRefusal(viewer.session.email, viewer.session.plan);
    if (refusal) {
      return showKeys(ctx, viewer, { error: `No key was created: ${refusal}.` }, 403);
    }
    try {
      const created = await admin.issueKey(viewer.session.subscriberId, name);
      logger.info(
        { subscriberId: viewer.session.subscriberId, prefix: created.prefix },
        "API key created in the dashboard",
      );
      await showKeys(
        ctx,
        viewer,
        { created: { name: created.name, prefix: created.prefix, token: created.token } },
        201,
      );
    } catch (error) {
      if (!(error instanceof AccountError)) throw error;
      await showKeys(ctx, viewer, { error: error.message, name }, 400);
    }
  });

  // A revocation is asked for first: this page says what it does and holds the form that does it.
  router.get<SignedInState>("/keys/:id/revoke", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    const key = (await keysOf(admin, viewer.session)).find((k) => k.id === ctx.params["id"] && !k.revokedAt);
    if (!key) throw new HttpError(404, "not_found", "No such active key of yours.");
    page(ctx, revokeConfirmPage(viewer, key));
  });

  router.post<SignedInState>("/keys/:id/revoke", sameOrigin, signedIn, async (ctx) => {
    const viewer = changing(ctx, await readForm(ctx));
    try {
      const key = await admin.revokeKey(ctx.params["id"] ?? "", viewer.session.subscriberId);
      logger.info(
        { subscriberId: viewer.session.subscriberId, prefix: key.prefix },
        "API key revoked in the dashboard",
      );
      ctx.status = 303;
      ctx.redirect(`${DASHBOARD}/keys?revoked=${encodeURIComponent(key.prefix)}`);
    } catch (error) {
      if (!(error instanceof AccountError)) throw error;
      throw new HttpError(404, "not_found", "No such key of yours.");
    }
  });
}

// ---- Usage ----

function registerUsage(router: Router<DashboardState>, deps: { prisma: PrismaClient; signedIn: SignedInGate }) {
  const { prisma, signedIn } = deps;
  router.get<SignedInState>("/usage", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    const subscriber = {
      id: viewer.session.subscriberId,
      plan: viewer.session.plan,
      monthlyQuota: viewer.session.monthlyQuota,
    };
    const [summary, days, perKey] = await Promise.all([
      usageSummary(prisma, subscriber),
      dailyCompressions(prisma, subscriber.id),
      usagePerKey(prisma, subscriber.id),
    ]);
    page(ctx, usagePage(viewer, summary, days, perKey));
  });
}

// ---- History ----

interface HistoryDeps {
  config: Config;
  prisma: PrismaClient;
  storage: ObjectStorage | null;
  signedIn: SignedInGate;
}

function registerHistory(router: Router<DashboardState>, deps: HistoryDeps) {
  const { config, prisma, signedIn } = deps;
  router.get<SignedInState>("/history", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    const rows = await history(prisma, viewer.session.subscriberId);
    const links = await resultLinks(deps, rows, publicOrigin(ctx, config.publicApiBaseUrl));
    page(ctx, historyPage(viewer, rows, links, { deleted: ctx.query["deleted"] === "1" }));
  });

  // "Delete now" is asked for first, like a key's revocation: this page says what it does.
  router.get<SignedInState>("/history/:id/delete", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    const record = await findCompression(prisma, viewer.session.subscriberId, ctx.params["id"] ?? "");
    if (!record) throw new HttpError(404, "not_found", "No such compression of yours.");
    const filename = record.deletedAt ? null : record.job?.filename || record.filename;
    page(ctx, deleteConfirmPage(viewer, { id: record.id, filename, createdAt: record.createdAt }));
  });

  router.post<SignedInState>("/history/:id/delete", sameOrigin, signedIn, async (ctx) => {
    const viewer = changing(ctx, await readForm(ctx));
    const { storage } = deps;
    if (!storage) throw new HttpError(503, "not_served", "This instance does not serve the compression API.");
    await deleteCompression({ prisma, storage, config }, viewer.session.subscriberId, ctx.params["id"] ?? "");
    ctx.status = 303;
    ctx.redirect(`${DASHBOARD}/history?deleted=1`);
  });
}

/** Download links of the rows whose result can still be fetched, each expiring when its result's link would. */
async function resultLinks(deps: HistoryDeps, rows: HistoryRow[], origin: string): Promise<Map<string, ResultLink>> {
  const { storage, config } = deps;
  const links = new Map<string, ResultLink>();
  if (!storage) return links;
  const limits = { ttlSeconds: config.downloadUrlTtlSeconds, retentionHours: config.resultRetentionHours };
  const now = new Date();
  for (const row of rows) {
    const until = resultValidUntil(row, limits, now);
    if (!until || !row.objectName) continue;
    const stored = {
      objectName: row.objectName,
      uploadedName: row.filename ?? "document",
      kind: row.kind,
      retentionSeconds: row.retentionSeconds,
    };
    const ttlSeconds = Math.floor((until.getTime() - now.getTime()) / 1000);
    links.set(row.id, { url: await resultUrl({ storage, config }, stored, { ttlSeconds, origin }), until });
  }
  return links;
}

// ---- Webhooks ----

interface WebhookDeps {
  config: Config;
  prisma: PrismaClient;
  logger: Logger;
  signedIn: SignedInGate;
}

/** The page, with the whole secret when it was just asked for or made. */
async function showWebhooks(
  ctx: Context,
  deps: WebhookDeps,
  viewer: Viewer,
  shown?: WebhooksPageOptions["shown"],
  retention: Partial<RetentionSetting> = {},
  status = 200,
) {
  const subscriberId = viewer.session.subscriberId;
  const [row, deliveries, seconds] = await Promise.all([
    deps.prisma.webhookSecret.findUnique({ where: { subscriberId } }),
    recentDeliveries(deps.prisma, subscriberId),
    accountRetention(deps.prisma, subscriberId),
  ]);
  // "whsec_" and four characters: enough to tell two secrets apart, nothing to sign with.
  const secret = row ? { masked: row.secret.slice(0, 10), createdAt: row.createdAt } : null;
  const setting = { seconds, maxSeconds: maxRetentionSeconds(deps.config), ...retention };
  page(ctx, webhooksPage(viewer, { secret, deliveries, retention: setting, ...(shown ? { shown } : {}) }), status);
}

/** The retention form's value: empty is the maximum (null); else whole seconds up to the maximum. */
function parseRetentionForm(value: string | null, maxSeconds: number): number | null | { error: string } {
  const text = (value ?? "").trim();
  if (text === "") return null;
  if (!/^[0-9]{1,12}$/.test(text)) return { error: "Retention must be a whole number of seconds, 0 or more." };
  const seconds = Number(text);
  if (seconds > maxSeconds) {
    return { error: `Results are kept at most ${duration(maxSeconds)} (${maxSeconds} s); choose that or less.` };
  }
  return seconds;
}

/** Only a subscriber whose plan has the API has a webhook secret to show or rotate. */
function assertEligible(viewer: Viewer) {
  const refusal = keyRefusal(viewer.session.email, viewer.session.plan);
  if (refusal) throw new HttpError(403, "plan_not_eligible", `${refusal}.`);
}

function registerWebhooks(router: Router<DashboardState>, deps: WebhookDeps) {
  const { prisma, logger, signedIn } = deps;
  router.get<SignedInState>("/webhooks", signedIn, (ctx) =>
    showWebhooks(ctx, deps, ctx.state.dashboard, undefined, { saved: ctx.query["retention"] === "saved" }),
  );

  router.post<SignedInState>("/webhooks/retention", sameOrigin, signedIn, async (ctx) => {
    const form = await readForm(ctx);
    const viewer = changing(ctx, form);
    assertEligible(viewer);
    const parsed = parseRetentionForm(form.get("retention"), maxRetentionSeconds(deps.config));
    if (parsed !== null && typeof parsed === "object") {
      return showWebhooks(ctx, deps, viewer, undefined, { error: parsed.error }, 400);
    }
    await setAccountRetention(prisma, viewer.session.subscriberId, parsed);
    logger.info(
      { subscriberId: viewer.session.subscriberId, retention: parsed },
      "result retention set in the dashboard",
    );
    ctx.status = 303;
    ctx.redirect(`${DASHBOARD}/webhooks?retention=saved#retention`);
  });

  // Shown on the answer to a POST only: never in a page a GET (a reload, the history) brings back.
  router.post<SignedInState>("/webhooks/secret", sameOrigin, signedIn, async (ctx) => {
    const viewer = changing(ctx, await readForm(ctx));
    assertEligible(viewer);
    const secret = await webhookSecret(prisma, viewer.session.subscriberId);
    await showWebhooks(ctx, deps, viewer, { secret, rotated: false, previousUntil: null });
  });

  // A rotation is asked for first, like a key's revocation.
  router.get<SignedInState>("/webhooks/rotate", signedIn, (ctx) => {
    assertEligible(ctx.state.dashboard);
    page(ctx, rotateConfirmPage(ctx.state.dashboard, deps.config.webhookRotationOverlapMs));
  });

  router.post<SignedInState>("/webhooks/rotate", sameOrigin, signedIn, async (ctx) => {
    const viewer = changing(ctx, await readForm(ctx));
    assertEligible(viewer);
    const rotated = await rotateWebhookSecret(
      prisma,
      viewer.session.subscriberId,
      deps.config.webhookRotationOverlapMs,
    );
    logger.info({ subscriberId: viewer.session.subscriberId }, "webhook secret rotated in the dashboard");
    await showWebhooks(ctx, deps, viewer, { ...rotated, rotated: true });
  });
}

// ---- Try it ----

interface TryItDeps {
  config: Config;
  prisma: PrismaClient;
  logger: Logger;
  /** The compression API's service; null where /v1 is not served. */
  compress: CompressService | null;
  admin: Accounts;
}

function registerTryIt(router: Router<DashboardState>, deps: TryItDeps & { signedIn: SignedInGate }) {
  const { admin, signedIn } = deps;
  router.get<SignedInState>("/try", signedIn, async (ctx) => {
    const viewer = ctx.state.dashboard;
    page(ctx, tryPage(viewer, { keys: await keysOf(admin, viewer.session) }));
  });

  router.post<SignedInState>("/try", sameOrigin, signedIn, (ctx) => tryCompress(ctx, deps));
}

/** POST /try: the upload through the compression API's service, its result or refusal shown on the page. */
async function tryCompress(ctx: ParameterizedContext<SignedInState & AppState>, deps: TryItDeps) {
  const viewer = ctx.state.dashboard;
  const keys = await keysOf(deps.admin, viewer.session);
  const service = deps.compress;
  if (!service) throw new HttpError(503, "not_served", "This instance does not serve the compression API.");
  const refusal = keyRefusal(viewer.session.email, viewer.session.plan);
  if (refusal) throw new HttpError(403, "plan_not_eligible", `${refusal}.`);
  // The form's token and key come in the body, before the file (the page puts them first): the
  // form is checked here as the file part begins; the service then applies the key's rate limit,
  // quota and the engine's room, and reserves, records and compresses like the API.
  let fields: Readonly<Record<string, string>> = {};
  const form = {
    upload: { body: ctx.req },
    fields: ["csrf_token", "key_id"],
    keyOf: (early: Readonly<Record<string, string>>) => {
      fields = early;
      return formKey(ctx, deps, early);
    },
  };
  try {
    const done = await withRequestInfo(ctx, deps.config.publicApiBaseUrl, (request) =>
      service.compressForm(request, form),
    );
    setHeaders(ctx, done.headers);
    const answer =
      "now" in done
        ? { result: { ...done.now.body, filename: done.filename } }
        : { queued: { ...done.job.body, filename: done.filename } };
    page(ctx, tryPage(viewer, { keys, fields: done.fields, ...answer }));
  } catch (error) {
    if (!(error instanceof HttpError) || error.status === 401 || error.code === "invalid_csrf_token") throw error;
    setHeaders(ctx, error.headers);
    page(
      ctx,
      // The form as it was sent: its key, profile and options precede the file, so they are known
      // whatever was refused.
      tryPage(viewer, { keys, fields, error: { status: error.status, code: error.code, message: error.message } }),
      error.status,
    );
  }
}

/** Try it's own checks on the fields that precede the file: the session's CSRF token, one of the subscriber's active keys. */
async function formKey(
  ctx: ParameterizedContext<SignedInState>,
  deps: TryItDeps,
  fields: Readonly<Record<string, string>>,
): Promise<AuthenticatedKey> {
  const { prisma, logger } = deps;
  const viewer = changing(ctx, fields);
  const key = await subscriberKey(prisma, viewer.session.subscriberId, fields["key_id"] ?? "", (error) =>
    logger.warn({ err: error }, "could not record an API key's last use"),
  );
  if (!key) throw new HttpError(400, "invalid_key_id", "Choose one of your active keys.");
  return key;
}

function titleOf(status: number): string {
  if (status === 401) return "Signed out";
  if (status === 403) return "Refused";
  if (status === 404) return "Not found";
  if (status === 429) return "Too many requests";
  if (status >= 500) return "Unavailable";
  return "Cannot do that";
}
