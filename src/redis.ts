// The Redis client (rate limits shared by every instance). It fails fast instead of waiting for
// Redis: no offline queue, so a command sent while disconnected fails at once; short connect and
// command timeouts; one retry per command. It reconnects in the background by itself, forever,
// and logs connection trouble at most once a minute rather than once per attempt. A connection
// that stops answering without closing (a network that drops packets) is noticed by a heartbeat
// and replaced, so the client recovers by itself once Redis is reachable again.
import { Redis, type RedisOptions } from "ioredis";
import type { Config } from "./config/env.ts";
import type { Logger } from "./logger.ts";
import { guarded } from "./callbacks.ts";

const ERROR_LOG_INTERVAL_MS = 60_000;
/** How often a ready connection is checked; one unanswered PING (commandTimeout) replaces it. */
const HEARTBEAT_MS = 2_000;

export type { Redis };

export function createRedis(
  config: Pick<Config, "redis">,
  logger: Logger,
  /** Overrides for tests, such as a keyPrefix of their own. */
  options: RedisOptions = {},
): Redis | null {
  if (!config.redis) return null;
  const redis = new Redis(config.redis.url, {
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    maxRetriesPerRequest: 1,
    // Reconnect after 0.2 s, 0.4 s, … then every 2 s until Redis is back.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    connectionName: "marketplace-api",
    ...(config.redis.keyPrefix ? { keyPrefix: config.redis.keyPrefix } : {}),
    ...options,
  });

  // Never the URL: it may carry a password.
  const where = { host: redis.options.host, port: redis.options.port };
  let failing = false;
  let lastLoggedAt = 0;
  let suppressed = 0;
  redis.on("error", (error: Error) => {
    failing = true;
    const now = Date.now();
    if (now - lastLoggedAt < ERROR_LOG_INTERVAL_MS) {
      suppressed++;
      return;
    }
    logger.warn({ err: error, redis: where, suppressed }, "redis unavailable; reconnecting in the background");
    lastLoggedAt = now;
    suppressed = 0;
  });
  redis.on("ready", () => {
    if (!failing) return;
    logger.info({ redis: where }, "redis connection restored");
    failing = false;
    lastLoggedAt = 0;
    suppressed = 0;
  });

  let beating = false;
  const heartbeat = setInterval(
    guarded("redis-heartbeat", () => {
      if (redis.status !== "ready" || beating) return;
      beating = true;
      redis
        .ping()
        .catch((error: unknown) => {
          if (redis.status !== "ready") return;
          redis.emit("error", new Error(`redis gave no answer to a heartbeat (${String(error)}); reconnecting`));
          // Destroyed rather than ended: a FIN may never reach a peer that is gone.
          redis.stream.destroy();
        })
        .finally(() => (beating = false));
    }),
    HEARTBEAT_MS,
  );
  heartbeat.unref();
  redis.once("end", () => clearInterval(heartbeat));
  return redis;
}

/** Closes the client: QUIT when connected (pending replies first), otherwise just disconnect. */
export async function closeRedis(redis: Redis | null | undefined): Promise<void> {
  if (!redis || redis.status === "end") return;
  if (redis.status !== "ready") {
    redis.disconnect();
    return;
  }
  const timer = setTimeout(() => redis.disconnect(), 2_000);
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
