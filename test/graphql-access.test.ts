// /graphql's access setting (GRAPHQL_ACCESS), each mode over real HTTP: public answers anyone,
// off answers 404, internal admits a Google ID token for the configured audience from an allowed
// domain or service account, or IAP's signed header, and refuses everything else. Tokens are signed
// with keys made here and verified by google-auth-library fed those keys (test/helpers/google-keys.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IAP_HEADER } from "../src/graphql/access.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { LocalGoogleKeys, strangerKey } from "./helpers/google-keys.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const AUDIENCE = "https://api.example.com";
const IAP_AUDIENCE = "/projects/123456/global/backendServices/789";
const QUERY = JSON.stringify({ query: "{ sectors { slug } }" });

let db: TestDatabase;
const google = new LocalGoogleKeys();
const servers: TestServer[] = [];

async function serve(env: Record<string, string>): Promise<TestServer> {
  const server = await startServer(db, env, { googleAuth: google.client });
  servers.push(server);
  return server;
}

async function ask(server: TestServer, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: QUERY,
  });
  const body = (await response.json()) as { data?: unknown; error?: { code: string } };
  return {
    status: response.status,
    code: body.error?.code,
    body,
    authenticate: response.headers.get("www-authenticate"),
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const server of servers) await server.close();
  await db?.close();
});

describe("GRAPHQL_ACCESS", () => {
  it("is public by default outside production, internal in production", async () => {
    const embedded = await serve({});
    expect(embedded.config.graphql.access.mode).toBe("public");
    expect(await ask(embedded)).toMatchObject({ status: 200, body: { data: { sectors: [] } } });
    const production = await serve({ NODE_ENV: "production" });
    expect(production.config.graphql.access.mode).toBe("internal");
    expect(await ask(production)).toMatchObject({ status: 401, code: "missing_identity_token" });
  });

  it("off: /graphql is not there", async () => {
    const server = await serve({ GRAPHQL_ACCESS: "off" });
    expect(await ask(server)).toMatchObject({ status: 404, code: "not_found" });
    const explorer = await fetch(`${server.url}/graphql`, { headers: { accept: "text/html" } });
    expect(explorer.status).toBe(404);
  });

  describe("internal, with Google ID tokens", () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await serve({
        GRAPHQL_ACCESS: "internal",
        GRAPHQL_AUDIENCE: AUDIENCE,
        GRAPHQL_ALLOWED_DOMAINS: "example.com",
        GRAPHQL_ALLOWED_SERVICE_ACCOUNTS: "reports@acme-prod.iam.gserviceaccount.com",
      });
    });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    it.each([
      ["an account of an allowed domain", { aud: AUDIENCE, email: "ana@example.com", hd: "example.com" }],
      ["an allowed service account", { aud: AUDIENCE, email: "reports@acme-prod.iam.gserviceaccount.com" }],
    ])("admits %s", async (_who, claims) => {
      expect(await ask(server, bearer(google.idToken(claims)))).toMatchObject({
        status: 200,
        body: { data: { sectors: [] } },
      });
    });

    it("asks for a token when there is none, with WWW-Authenticate", async () => {
      expect(await ask(server)).toMatchObject({
        status: 401,
        code: "missing_identity_token",
        authenticate: 'Bearer realm="graphql"',
      });
    });

    it.each([
      [
        "issued for another audience",
        google.idToken({ aud: "https://elsewhere.example", email: "ana@example.com", hd: "example.com" }),
      ],
      [
        "expired",
        google.idToken({
          aud: AUDIENCE,
          email: "ana@example.com",
          hd: "example.com",
          iat: 1_700_000_000,
          exp: 1_700_003_600,
        }),
      ],
      [
        "signed by a key Google never published",
        google.idToken({ aud: AUDIENCE, email: "ana@example.com", hd: "example.com" }, strangerKey()),
      ],
      [
        "not issued by Google",
        google.idToken({ aud: AUDIENCE, email: "ana@example.com", hd: "example.com", iss: "https://evil.example" }),
      ],
      ["an IAP assertion without an IAP audience configured", undefined],
    ])("refuses a token %s", async (_why, token) => {
      const headers = token
        ? bearer(token)
        : { [IAP_HEADER]: google.iapAssertion({ aud: IAP_AUDIENCE, email: "ana@example.com" }) };
      const { status, code } = await ask(server, headers);
      expect(status).toBe(401);
      expect(code).toBe(token ? "invalid_identity_token" : "missing_identity_token");
    });

    it.each([
      ["another domain", { aud: AUDIENCE, email: "eve@other.example", hd: "other.example" }],
      ["a consumer account that names an allowed domain in its address", { aud: AUDIENCE, email: "eve@example.com" }],
      ["another service account", { aud: AUDIENCE, email: "intruder@acme-prod.iam.gserviceaccount.com" }],
      ["an unverified address", { aud: AUDIENCE, email: "ana@example.com", hd: "example.com", email_verified: false }],
    ])("forbids %s", async (_who, claims) => {
      expect(await ask(server, bearer(google.idToken(claims)))).toMatchObject({
        status: 403,
        code: "identity_not_allowed",
      });
    });
  });

  describe("internal, behind IAP", () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await serve({ GRAPHQL_ACCESS: "internal", GRAPHQL_IAP_AUDIENCE: IAP_AUDIENCE });
    });

    it("admits IAP's signed header for this backend", async () => {
      const assertion = google.iapAssertion({
        aud: IAP_AUDIENCE,
        email: "ana@example.com",
        sub: "accounts.google.com:1",
      });
      expect(await ask(server, { [IAP_HEADER]: assertion })).toMatchObject({ status: 200 });
    });

    it.each([
      [
        "for another backend",
        google.iapAssertion({ aud: "/projects/123456/global/backendServices/1", email: "ana@example.com" }),
      ],
      ["signed like an ID token, not by IAP", google.idToken({ aud: IAP_AUDIENCE, email: "ana@example.com" })],
    ])("refuses a header %s", async (_why, assertion) => {
      expect(await ask(server, { [IAP_HEADER]: assertion })).toMatchObject({
        status: 401,
        code: "invalid_identity_token",
      });
    });

    it("takes no ID token when only IAP is configured", async () => {
      const token = google.idToken({ aud: AUDIENCE, email: "ana@example.com", hd: "example.com" });
      expect(await ask(server, { authorization: `Bearer ${token}` })).toMatchObject({
        status: 401,
        code: "missing_identity_token",
      });
    });
  });
});
