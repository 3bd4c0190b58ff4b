// The drain state: what the application sees of a shutdown (src/lifecycle.ts runs it). Readiness
// (./health.ts) answers 503 while draining; in-flight uploads and compressions give up when the
// deadline signal aborts. It imports nothing, so the HTTP layer reads it without depending on the
// shutdown sequence above it.

/** What the application sees of the lifecycle. */
export interface Lifecycle {
  /** True from the moment shutdown begins: readiness answers 503. */
  readonly draining: boolean;
  /** Aborted (with a ShuttingDown reason) when in-flight work must give up. */
  readonly deadline: AbortSignal;
}

/** The reason of the deadline signal. */
export class ShuttingDown extends Error {
  constructor() {
    super("The service is shutting down.");
    this.name = "ShuttingDown";
  }
}

export interface LifecycleController extends Lifecycle {
  beginDraining(): void;
  abortInFlight(): void;
}

export function createLifecycle(): LifecycleController {
  const controller = new AbortController();
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    deadline: controller.signal,
    beginDraining() {
      draining = true;
    },
    abortInFlight() {
      draining = true;
      if (!controller.signal.aborted) controller.abort(new ShuttingDown());
    },
  };
}
