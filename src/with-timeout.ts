// The one promise-with-a-time-limit of the service (readiness checks, the rate-limit store, the
// shutdown's waits), on the ground floor: it imports nothing.

/**
 * What `promise` settles with, if it settles within `ms`; otherwise what `onTimeout` returns, or
 * the error it throws. The timer is cleared either way, and a late rejection of `promise` is
 * handled (it is not an unhandled rejection).
 */
export function withTimeout<T, U = T>(promise: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
