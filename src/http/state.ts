// What ctx.state holds on every request, typed (Koa<AppState>, Router<AppState>) instead of read
// with casts. A router adds what its own middleware puts there (the dashboard its viewer); the
// compression API's key is named here because the request log reports it for any route.
import type { ParameterizedContext } from "koa";

export interface AppState {
  /** The request's id, echoed as X-Request-Id (src/app.ts sets it before anything can fail). */
  requestId: string;
  /** The key a compression request authenticated with (src/auth/authenticate.ts), once known. */
  apiKey?: { id: string; prefix: string; subscriberId: string };
}

export type AppContext = ParameterizedContext<AppState>;
