// Graceful shutdown. Cloud Run sends SIGTERM and, 10 s later, SIGKILL; in between the instance
// gets no new requests. On SIGTERM (or SIGINT), in this order:
//  1. readiness answers 503 `shutting_down` at once (the lifecycle is `draining`: src/http/drain.ts);
//  2. after a moment (ACCEPT_GRACE_MS, so connections and requests already on their way are still
//     taken), the listener closes: new connections are refused. Every HTTP/1.1 response from then
//     on carries `Connection: close`, idle keep-alive connections are closed, and every HTTP/2
//     session gets GOAWAY (its open streams finish, the client opens no new ones);
//  3. requests in flight, uploads and compressions included, get until `graceMs` after the signal
//     to finish. Then the lifecycle's `deadline` signal aborts what is left: an upload or a
//     compression is cut off and answered `503 shutting_down` with Retry-After, its quota unit
//     given back and its temporary files removed (by the route, as for any failure);
//  4. once no request is in flight (or shortly after the deadline), the connections still open
//     are destroyed and the dependencies closed one by one, each within a time limit: the
//     compression runner (its children are killed), the admin socket, Redis, the database;
//  5. the log is flushed. main.ts then exits 0 (a failed step is logged), or 1 if its hard limit
//     (graceMs + 1.5 s) hits first.
import type { LifecycleController } from "./http/drain.ts";
import type { ServiceServer } from "./http/server.ts";
import { flushLogger, type Logger } from "./logger.ts";
import { withTimeout } from "./with-timeout.ts";

/** How long connections already on their way are still accepted after the signal. */
export const ACCEPT_GRACE_MS = 250;
/** After the deadline, how long aborted requests get to send their 503. */
const ABORT_FLUSH_MS = 500;
/** After the last response, before connections are destroyed: lets clients read what was sent. */
const LINGER_MS = 150;
/** Each dependency gets this long to close. */
const STEP_TIMEOUT_MS = 1_000;

export interface ShutdownStep {
  name: string;
  run: () => unknown;
  timeoutMs?: number;
}

export interface ShutdownOptions {
  lifecycle: LifecycleController;
  server: ServiceServer;
  /** How long in-flight requests may take, from the signal on. */
  graceMs: number;
  /** Closed in order once the server is done. */
  steps: ShutdownStep[];
  logger: Logger;
  acceptGraceMs?: number;
  /** Everything, steps included, within this long from the signal (default: graceMs + 0.8 s). */
  budgetMs?: number;
}

export interface ShutdownReport {
  /** Requests still in flight at the deadline, aborted. */
  aborted: number;
  /** Steps that failed or timed out. */
  failed: string[];
  ms: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves with true when promise settled within ms, false otherwise. */
const within = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  withTimeout(
    promise.then(() => true),
    ms,
    () => false,
  );

export async function shutdown(options: ShutdownOptions): Promise<ShutdownReport> {
  const { lifecycle, server, graceMs, logger } = options;
  const started = Date.now();
  const budgetMs = options.budgetMs ?? graceMs + 800;
  lifecycle.beginDraining();
  await sleep(Math.min(options.acceptGraceMs ?? ACCEPT_GRACE_MS, graceMs));
  server.drain();
  logger.info({ inFlight: server.inFlight(), connections: server.connections() }, "stopped accepting connections");

  let aborted = 0;
  const left = graceMs - (Date.now() - started);
  if (!(await within(server.whenIdle(), Math.max(0, left)))) {
    aborted = server.inFlight();
    logger.warn({ inFlight: aborted, graceMs }, "requests still in flight at the deadline: aborting them");
    lifecycle.abortInFlight();
    await within(server.whenIdle(), ABORT_FLUSH_MS);
  }
  await sleep(LINGER_MS);
  await server.destroy();

  const failed: string[] = [];
  for (const step of options.steps) {
    const outcome = Promise.resolve()
      .then(step.run)
      .then(
        () => true,
        (error: unknown) => {
          logger.error({ err: error, step: step.name }, "shutdown step failed");
          return false;
        },
      );
    const remaining = budgetMs - (Date.now() - started);
    const limit = Math.max(100, Math.min(step.timeoutMs ?? STEP_TIMEOUT_MS, remaining));
    const ok = (await within(outcome, limit)) && (await outcome);
    if (!ok) failed.push(step.name);
  }
  const ms = Date.now() - started;
  logger.info({ ms, aborted, failed }, "shut down");
  await flushLogger(logger);
  return { aborted, failed, ms };
}
