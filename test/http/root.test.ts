// GET / over real HTTP: the map of the surfaces, and every link in it answers (none is a 404).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SURFACES } from "../../src/http/root.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer(db);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

describe("GET /", () => {
  it("answers the links to every surface, absolute on this origin", async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { links: Record<string, string> };
    expect(Object.keys(body.links)).toEqual(Object.keys(SURFACES));
    expect(body.links["catalog_docs"]).toBe(`${server.url}/api/v1/docs`);
  });

  it("links only to paths the app serves", async () => {
    const body = (await (await fetch(`${server.url}/`)).json()) as { links: Record<string, string> };
    for (const [name, link] of Object.entries(body.links)) {
      // The compression surfaces need a storage and runner this server was not given: 404 there
      // would be this test's setup, so only the catalog, GraphQL and health links are fetched.
      if (name.startsWith("compression") || name === "dashboard") continue;
      // MCP answers POST only (GET is 405 by design: docs/mcp.md).
      if (name === "mcp") {
        expect((await fetch(link)).status, link).toBe(405);
        continue;
      }
      const response = await fetch(link, { headers: { accept: "text/html,application/json" } });
      expect(response.status, `${name} ${link}`).toBeLessThan(400);
    }
  });
});
