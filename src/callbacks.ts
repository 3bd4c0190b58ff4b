// The callbacks the server owns (timers, event handlers, stream callbacks) run outside every
// request: a throw in one is an uncaught exception, and the process policy answers that by stopping
// the instance (src/main.ts). Issue 39: one such throw, in the body watch, let any anonymous client
// stop the service. So each of them runs through `guarded`: a throw, or a rejected promise, is
// logged at ERROR with the callback's name, and the process serves on; the mechanism carries on as
// it can (an interval ticks again, a handler is called again on the next event).
//
// Failpoints, for the fault suite (test/http/callback-faults.test.ts), as etcd's gofail and TiKV's
// fail-rs have them: FAILPOINTS=body-watch,holds,… makes each named callback throw once, after its
// work, inside its guard, so a test sees that every callback is guarded and that the process lives.

/** Every guarded callback, by the mechanism it belongs to (docs/process-policy.md lists them). */
export const CALLBACKS = [
  "body-watch",
  "holds",
  "housekeeping",
  "job-feed",
  "engine-pool",
  "db-pool",
  "query-deadline",
  "async-jobs",
  "webhooks",
  "drain",
  "redis-heartbeat",
  "upload-stream",
  "request-log",
] as const;
export type CallbackName = (typeof CALLBACKS)[number];

type Report = (name: CallbackName, error: unknown) => void;

const reportToStderr: Report = (name, error) =>
  console.error(
    JSON.stringify({ severity: "ERROR", callback: name, message: `callback ${name} failed`, error: String(error) }),
  );

let report: Report = reportToStderr;
const armed = new Set<CallbackName>();

export class InjectedFault extends Error {
  constructor(name: CallbackName) {
    super(`failpoint ${name}: a fault injected for the fault suite`);
    this.name = "InjectedFault";
  }
}

/** Where failures are logged, and which failpoints are armed (each fires once). */
export function configureCallbacks(options: { report: Report; failpoints?: readonly CallbackName[] }): void {
  report = options.report;
  armed.clear();
  for (const name of options.failpoints ?? []) armed.add(name);
}

function fail(name: CallbackName, error: unknown): void {
  try {
    report(name, error);
  } catch {
    reportToStderr(name, error);
  }
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";

/** `fn`, made total: whatever it throws or rejects with is logged, never thrown out of the process. */
export function guarded<A extends unknown[]>(name: CallbackName, fn: (...args: A) => unknown): (...args: A) => void {
  return (...args: A) => {
    try {
      const result = fn(...args);
      if (isThenable(result)) result.then(undefined, (error: unknown) => fail(name, error));
      if (armed.delete(name)) throw new InjectedFault(name);
    } catch (error) {
      fail(name, error);
    }
  };
}
