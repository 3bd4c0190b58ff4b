// Paging by continuation: meta.next carries a cursor beside the offset it stands for, following it
// walks the whole list in order without overlap or gap, and a cursor that was altered, cut short,
// used with another filter or with a different offset is a 400 invalid_cursor.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;

type Meta = { total: number; limit: number; offset: number; self: string; next: string | null };
type List = { data: { slug?: string; handle?: string }[]; meta: Meta };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  // Ties on published_at, so the id must break them the same way by offset and by cursor.
  const sameInstant = daysAgo(2);
  for (let i = 0; i < 6; i++) await f.job("tie", { publishedAt: sameInstant, workModel: i % 2 ? "remote" : "onsite" });
  for (let i = 0; i < 7; i++) await f.job("dated", { publishedAt: daysAgo(3 + i), workModel: "remote" });
  for (let i = 0; i < 5; i++) await f.talent("talent", { visibility: "public" });
  server = await startServer(db);
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function walk(first: string): Promise<{ keys: string[]; metas: Meta[] }> {
  const keys: string[] = [];
  const metas: Meta[] = [];
  let path: string | null = first;
  for (let guard = 0; path && guard < 50; guard++) {
    const response: Awaited<ReturnType<typeof api.get<List>>> = await api.get<List>(path);
    const { status, body, headers } = response;
    expect(status).toBe(200);
    keys.push(...body.data.map((d) => d.slug ?? d.handle ?? ""));
    metas.push(body.meta);
    expect(headers.get("link")).toBe(body.meta.next ? `<${body.meta.next}>; rel="next"` : null);
    path = body.meta.next ? pathOf(body.meta.next) : null;
  }
  return { keys, metas };
}

describe("paging by cursor", () => {
  it.each([
    ["/api/v1/jobs", 4],
    ["/api/v1/jobs?work_model=remote", 3],
    ["/api/v1/talents", 2],
  ])("following next from %s (limit %i) walks the same rows as offsets, with exact offsets", async (path, limit) => {
    const all = await api.get<List>(`${path}${path.includes("?") ? "&" : "?"}limit=100`);
    const expected = all.body.data.map((d) => d.slug ?? d.handle);
    const { keys, metas } = await walk(`${path}${path.includes("?") ? "&" : "?"}limit=${limit}`);
    expect(keys).toEqual(expected);
    expect(metas.map((m) => m.offset)).toEqual(metas.map((_, i) => i * limit));
    // Every next after the first page continues by cursor, beside the offset it stands for.
    for (const meta of metas.slice(0, -1)) {
      const next = new URL(meta.next!);
      expect(next.searchParams.get("cursor")).toMatch(/^[\w-]+\.[\w-]+$/);
      expect(Number(next.searchParams.get("offset"))).toBe(meta.offset + limit);
    }
    expect(metas.at(-1)!.next).toBeNull();
  });

  it("serves the same page for a cursor alone, and for the cursor with its own offset", async () => {
    const first = await api.get<List>("/api/v1/jobs?limit=5");
    const next = new URL(first.body.meta.next!);
    const cursor = next.searchParams.get("cursor")!;
    const alone = await api.get<List>(`/api/v1/jobs?limit=5&cursor=${cursor}`);
    const withOffset = await api.get<List>(`/api/v1/jobs?limit=5&offset=5&cursor=${cursor}`);
    const byOffset = await api.get<List>("/api/v1/jobs?limit=5&offset=5");
    expect(alone.body.data).toEqual(byOffset.body.data);
    expect(withOffset.body.data).toEqual(byOffset.body.data);
    expect(alone.body.meta).toMatchObject({ offset: 5, total: byOffset.body.meta.total });
    expect(alone.body.meta.self).toBe(`${server.url}/api/v1/jobs?limit=5&offset=5&cursor=${cursor}`);
  });

  /** The cursor with its order key replaced, re-signed as anyone reading the source could. */
  function forged(cursor: string, rekey: (key: unknown[]) => unknown[]): string {
    const body = JSON.parse(Buffer.from(cursor.split(".")[0]!, "base64url").toString("utf8")) as unknown[];
    body[3] = rekey(body[3] as unknown[]);
    const payload = Buffer.from(JSON.stringify(body)).toString("base64url");
    return `${payload}.${createHash("sha256").update(payload).digest("base64url").slice(0, 16)}`;
  }

  async function cursorOf(path: string): Promise<string> {
    const { body } = await api.get<List>(path);
    return new URL(body.meta.next!).searchParams.get("cursor")!;
  }

  it.each([
    ["altered", (c: string) => `${c.slice(0, 5)}${c[5] === "A" ? "B" : "A"}${c.slice(6)}`],
    ["cut short", (c: string) => c.slice(0, -3)],
    ["not a cursor", () => "hello"],
    ["without its check", (c: string) => c.split(".")[0]!],
    ["used with another filter", (c: string) => c, "&work_model=remote"],
    ["used with another offset", (c: string) => c, "&offset=40"],
    ["from another list", () => cursorOf("/api/v1/talents?limit=1"), ""],
    // Well-formed, with a valid check (it has no secret), but keys the order's columns cannot hold.
    ["forged with an id that is not a UUID", (c: string) => forged(c, (key) => [key[0], "1; drop table jobs"])],
    ["forged with an instant that is not one", (c: string) => forged(c, (key) => [{ t: "yesterday" }, key[1]])],
    ["forged with a text where an instant goes", (c: string) => forged(c, (key) => [key[1], key[1]])],
  ] as const)("is a 400 invalid_cursor when %s", async (_case, make, extra = "") => {
    const cursor = await make(await cursorOf("/api/v1/jobs?limit=3"));
    const response = await api.get<{ error: { code: string; message: string } }>(
      `/api/v1/jobs?limit=3&cursor=${encodeURIComponent(cursor)}${extra}`,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_cursor");
    expect(response.body.error.message).not.toBe("");
  });

  it("continues by cursor in GraphQL too: nextCursor and after", async () => {
    const query = `query ($after: String) { jobs(limit: 4, after: $after) { offset nextCursor items { slug } } }`;
    type Page = { jobs: { offset: number; nextCursor: string | null; items: { slug: string }[] } };
    const slugs: string[] = [];
    let after: string | null = null;
    const offsets: number[] = [];
    for (let guard = 0; guard < 20; guard++) {
      const response: Awaited<ReturnType<typeof server.graphql<Page>>> = await server.graphql<Page>(query, { after });
      const { data, errors } = response;
      expect(errors).toBeUndefined();
      slugs.push(...data!.jobs.items.map((j) => j.slug));
      offsets.push(data!.jobs.offset);
      after = data!.jobs.nextCursor;
      if (!after) break;
    }
    const all = await server.graphql<Page>(`{ jobs(limit: 100) { offset nextCursor items { slug } } }`);
    expect(slugs).toEqual(all.data!.jobs.items.map((j) => j.slug));
    expect(offsets).toEqual([0, 4, 8, 12]);
    // nextCursor alone (without items) names the same position.
    const bare = await server.graphql<{ jobs: { nextCursor: string } }>(`{ jobs(limit: 4) { nextCursor } }`);
    const withItems = await server.graphql<Page>(`{ jobs(limit: 4) { items { slug } nextCursor } }`);
    expect(bare.data!.jobs.nextCursor).toBe(withItems.data!.jobs.nextCursor);
    const bad = await server.graphql(`{ jobs(after: "x.y") { offset } }`);
    expect(bad.errors?.[0]?.extensions).toEqual({ code: "BAD_USER_INPUT", argument: "after" });
  });
});
