// The one promise-with-a-time-limit of the service (readiness checks, the rate-limit store, the
// shutdown's waits, sign-in mail), on the ground floor: it imports nothing.

/**
 * What `promise` settles with, if it settles within `ms`; otherwise what `onTimeout` returns, or
 * the error it throws. The timer is cleared either way, and a late rejection of `promise` is
 * handled (it is not an unhandled rejection).
 *
 * When the timer fires, I/O gets one turn of the event loop before the time is up (setImmediate
 * runs after the loop's poll phase): after the thread was held up past the limit (a module
 * compiled, a large body parsed, a busy machine), the timer and an answer that arrived meanwhile
 * are both due, and Node runs timers first; without that turn an answer in time was taken for
 * none (a Redis reply as `rate_limit_unavailable`, a readiness check as failed).
 */
export function withTimeout<T, U = T>(promise: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let turn: ReturnType<typeof setImmediate> | undefined;
  const timeout = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      turn = setImmediate(() => {
        try {
          resolve(onTimeout());
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
    if (turn) clearImmediate(turn);
  });
}
