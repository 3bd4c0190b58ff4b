// Health probes and dependency faults.
// - Liveness, GET /healthz, touches nothing: a slow database must not get the instance restarted.
// - Readiness, GET /readyz, checks the database and Redis (when configured) at once, each within a
//   time limit, and answers 503 in the error shape with Retry-After when one is down or the
//   service is shutting down.
// - dependencyFaults() turns a database that cannot be reached, wherever a route meets it, into
//   503 `database_unavailable` with Retry-After instead of a 500.
import Router from "@koa/router";
import type { Redis } from "ioredis";
import type { Context, Next } from "koa";
import type { Database } from "../db/database.ts";
import { isDatabaseUnavailable, unavailableMessage } from "../db/errors.ts";
import type { Lifecycle } from "./drain.ts";
import type { AppState } from "./state.ts";
import {
  databaseUnavailable,
  HttpError,
  isStorageUnavailable,
  rateLimitUnavailable,
  shuttingDown,
  storageUnavailable,
} from "../errors.ts";
import { withTimeout } from "../with-timeout.ts";

/** A readiness check that takes longer than this counts as failed. */
const CHECK_TIMEOUT_MS = 1_500;

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    return await withTimeout(
      probe().then(() => true),
      CHECK_TIMEOUT_MS,
      () => false,
    );
  } catch {
    return false;
  }
}

export function createHealthRouter(deps: {
  db: Database;
  redis: Redis | null;
  lifecycle: Lifecycle | null;
}): Router<AppState> {
  const { db, redis, lifecycle } = deps;
  const router = new Router<AppState>();
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", async (ctx) => {
    if (lifecycle?.draining) throw shuttingDown();
    const [database, store] = await Promise.all([
      check(() => db.sql.query("SELECT 1")),
      redis ? check(() => redis.ping()) : Promise.resolve(true),
    ]);
    if (lifecycle?.draining) throw shuttingDown();
    if (!database) throw databaseUnavailable();
    if (!store) throw rateLimitUnavailable();
    ctx.set("Cache-Control", "no-store");
    ctx.body = { status: "ok", database: db.kind, redis: redis ? "ok" : "not configured" };
  });
  return router;
}

function withCause(answer: HttpError, cause: unknown): HttpError {
  answer.cause = cause;
  return answer;
}

/** Inside the error middleware: a database fault anywhere below becomes a 503, not a 500. */
export function dependencyFaults() {
  return async (_ctx: Context, next: Next) => {
    try {
      await next();
    } catch (error) {
      // What a client can retry is a 503 with Retry-After (src/db/errors.ts, src/errors.ts); the rest stays as it is.
      if (error instanceof HttpError) throw error;
      // The fault itself goes with the answer as its cause: the error middleware logs it.
      if (isDatabaseUnavailable(error)) throw withCause(databaseUnavailable(unavailableMessage(error)), error);
      if (isStorageUnavailable(error)) throw withCause(storageUnavailable(), error);
      throw error;
    }
  };
}
