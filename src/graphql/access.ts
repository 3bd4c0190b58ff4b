// Who may use /graphql (GRAPHQL_ACCESS). The design card gives it to internal teams:
// - `public`: anyone (the embedded default);
// - `internal` (the production default): the caller proves a Google identity, either
//   `Authorization: Bearer <ID token>`, a Google-signed ID token issued for GRAPHQL_AUDIENCE to an
//   account of an allowed Workspace domain (its `hd` claim) or to an allowed service account (its
//   `email`), verified by google-auth-library's OAuth2Client.verifyIdToken (signature against
//   Google's certificates, issuer, audience, expiry); or, behind Identity-Aware Proxy, the
//   `x-goog-iap-jwt-assertion` header IAP signs for GRAPHQL_IAP_AUDIENCE, verified the same way
//   against IAP's public keys (https://cloud.google.com/iap/docs/signed-headers-howto). With no
//   allow-list IAP's own access policy decides; an allow-list applies to both;
// - `off`: /graphql answers 404 like any path the service does not have.
import { gaxios, OAuth2Client, type TokenPayload } from "google-auth-library";
import type { Middleware, Next, ParameterizedContext } from "koa";
import type { GraphQLAccess } from "../config/env.ts";
import { HttpError, retryAfter } from "../errors.ts";

export const IAP_HEADER = "x-goog-iap-jwt-assertion";
const IAP_ISSUERS = ["https://cloud.google.com/iap"];
const KEYS_RETRY_SECONDS = 5;

/** The identity a request to /graphql proved. */
export interface Caller {
  email: string;
  via: "id_token" | "iap";
}

const unauthenticated = (code: "missing_identity_token" | "invalid_identity_token", message: string) =>
  new HttpError(401, code, message, { "WWW-Authenticate": 'Bearer realm="graphql"' });

/** A verification's payload, or the error to answer: Google's keys unreachable is not the caller's fault. */
async function verified(verify: () => Promise<TokenPayload | undefined>): Promise<TokenPayload> {
  let payload: TokenPayload | undefined;
  try {
    payload = await verify();
  } catch (error) {
    if (error instanceof gaxios.GaxiosError) {
      throw new HttpError(
        503,
        "identity_keys_unavailable",
        "Google's signing keys could not be fetched to verify the identity; retry shortly.",
        retryAfter(KEYS_RETRY_SECONDS),
      );
    }
    throw unauthenticated("invalid_identity_token", "The identity token is not valid (signature, audience or expiry).");
  }
  if (!payload) throw unauthenticated("invalid_identity_token", "The identity token carries no claims.");
  return payload;
}

function allowed(access: GraphQLAccess, payload: TokenPayload, via: Caller["via"]): boolean {
  const email = payload.email?.toLowerCase();
  if (via === "id_token" && payload.email_verified !== true) return false;
  if (via === "iap" && access.allowedDomains.length === 0 && access.allowedServiceAccounts.length === 0) {
    return email !== undefined;
  }
  const domain = payload.hd?.toLowerCase();
  return (
    (domain !== undefined && access.allowedDomains.includes(domain)) ||
    (email !== undefined && access.allowedServiceAccounts.includes(email))
  );
}

/** Verifies the request's Google identity and its place on the allow-list (internal mode). */
export async function verifyCaller(
  access: GraphQLAccess,
  google: OAuth2Client,
  header: (name: string) => string,
): Promise<Caller> {
  const assertion = header(IAP_HEADER);
  const bearer = /^Bearer +(\S+) *$/i.exec(header("authorization"))?.[1];
  let payload: TokenPayload;
  let via: Caller["via"];
  if (assertion && access.iapAudience) {
    const audience = access.iapAudience;
    via = "iap";
    payload = await verified(async () => {
      const keys = await google.getIapPublicKeysAsync();
      const ticket = await google.verifySignedJwtWithCertsAsync(assertion, keys.pubkeys, audience, IAP_ISSUERS);
      return ticket.getPayload();
    });
  } else if (bearer && access.audience) {
    const audience = access.audience;
    via = "id_token";
    payload = await verified(async () => (await google.verifyIdToken({ idToken: bearer, audience })).getPayload());
  } else {
    throw unauthenticated(
      "missing_identity_token",
      "/graphql is for internal teams: send a Google-signed ID token as Authorization: Bearer <token>.",
    );
  }
  if (!allowed(access, payload, via)) {
    throw new HttpError(403, "identity_not_allowed", "This Google identity may not use /graphql.");
  }
  return { email: payload.email ?? "", via };
}

/** The gate in front of /graphql; `google` verifies tokens (tests give one with local keys). */
export function graphqlAccess(access: GraphQLAccess, google: OAuth2Client = new OAuth2Client()): Middleware {
  return async (ctx: ParameterizedContext, next: Next) => {
    if (access.mode === "off") throw new HttpError(404, "not_found", `No route for ${ctx.method} ${ctx.path}`);
    if (access.mode === "internal") await verifyCaller(access, google, (name) => ctx.get(name));
    await next();
  };
}

/** What an internal setting lacks for anyone to get in (logged as a warning at start), or null. */
export function accessWarning(access: GraphQLAccess): string | null {
  if (access.mode !== "internal") return null;
  const idTokens = access.audience !== null && access.allowedDomains.length + access.allowedServiceAccounts.length > 0;
  if (idTokens || access.iapAudience !== null) return null;
  return "GRAPHQL_ACCESS is internal but no caller can be admitted: set GRAPHQL_AUDIENCE with GRAPHQL_ALLOWED_DOMAINS or GRAPHQL_ALLOWED_SERVICE_ACCOUNTS, or GRAPHQL_IAP_AUDIENCE";
}
