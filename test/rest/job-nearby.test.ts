// near and radius_km on /jobs and /talents, sort=distance on both: coordinates come from the known
// places (a trigger); rows within the radius by great-circle distance, nearest first with the id
// breaking ties, continued by cursor; rows without coordinates never match; hidden rows never
// appear; unknown places and bad radii are 400s naming the parameter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../src/generated/prisma/client.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const slug: Record<string, string> = {};
const handle: Record<string, string> = {};

type List = { data: { slug?: string; handle?: string }[]; meta: { total: number; next: string | null } };

const at = (city: string | null, country: string | null) => ({ locationCity: city, locationCountry: country });

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  // From Paris: London ~344 km, Amsterdam ~430 km, Munich ~685 km, Berlin ~878 km. Berlin to Munich ~504 km, to Amsterdam ~577 km.
  const jobs: Record<string, Partial<Prisma.JobUncheckedCreateInput>> = {
    p: at("Paris", "FR"),
    l: at("London", "GB"),
    a: at("Amsterdam", "NL"),
    b: at("Berlin", "DE"),
    m: at("munich", "DE"), // any case
    n: at(null, null), // no place: never near anything
    x: at("Atlantis", "DE"), // not a known place: no coordinates
    h: { ...at("Paris", "FR"), status: "draft" }, // hidden
  };
  for (const [i, [letter, data]] of Object.entries(jobs).entries()) {
    slug[letter] = (await f.job(`near-${letter}`, { publishedAt: daysAgo(i + 1), ...data })).slug;
  }
  handle["P"] = (await f.talent("near-tp", at("Paris", "FR"))).handle;
  handle["B"] = (await f.talent("near-tb", at("Berlin", "DE"))).handle;
  handle["H"] = (await f.talent("near-th", { ...at("Paris", "FR"), visibility: "private" })).handle;
  handle["L"] = (await f.talent("near-tl", at("London", "GB"))).handle;
  handle["A"] = (await f.talent("near-ta", at("Amsterdam", "NL"))).handle;
  handle["M"] = (await f.talent("near-tm", at("Munich", "DE"))).handle;
  handle["N"] = (await f.talent("near-tn", at(null, null))).handle;
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const letterOf = (s: string | undefined) => Object.entries({ ...slug, ...handle }).find(([, v]) => v === s)?.[0] ?? "?";

async function letters(path: string): Promise<string> {
  const { status, body } = await api.get<List>(path);
  expect(status, path).toBe(200);
  return body.data.map((r) => letterOf(r.slug ?? r.handle)).join("");
}

async function follow(path: string): Promise<string> {
  let next: string | null = path;
  let all = "";
  while (next) {
    const { status, body }: { status: number; body: List } = await api.get<List>(next.replace(/^https?:\/\/[^/]+/, ""));
    expect(status, next).toBe(200);
    all += body.data.map((r) => letterOf(r.slug ?? r.handle)).join("");
    next = body.meta.next;
  }
  return all;
}

describe("GET /jobs?near=", () => {
  it("lists the jobs within the radius, newest first by default", async () => {
    expect(await letters("/api/v1/jobs?near=Paris&radius_km=500")).toBe("pla");
    expect(await letters("/api/v1/jobs?near=paris")).toBe("p"); // default 50 km
    expect(await letters("/api/v1/jobs?near=48.8566,2.3522&radius_km=900")).toBe("plabm");
  });

  it("orders by distance, then id, continued by cursor and offset, with the same total", async () => {
    expect(await letters("/api/v1/jobs?near=Paris&radius_km=1000&sort=distance")).toBe("plamb");
    expect(await follow("/api/v1/jobs?near=Paris&radius_km=1000&sort=distance&limit=2")).toBe("plamb");
    const { body } = await api.get<List>("/api/v1/jobs?near=Paris&radius_km=1000&sort=distance&limit=2&offset=2");
    expect(body.data.map((r) => letterOf(r.slug)).join("")).toBe("am");
    expect(body.meta.total).toBe(5);
    expect(await letters("/api/v1/jobs?near=Berlin&radius_km=600&sort=distance")).toBe("bma");
  });

  it("combines with other filters and the facets", async () => {
    expect(await letters("/api/v1/jobs?near=Paris&radius_km=1000&country=DE")).toBe("bm");
    const { body } = await api.get<{ data: { total: number; country: { value: string; count: number }[] } }>(
      "/api/v1/jobs/facets?near=Paris&radius_km=1000&facets=country",
    );
    expect(body.data.total).toBe(5);
    expect(Object.fromEntries(body.data.country.map((c) => [c.value, c.count]))).toEqual({
      DE: 2,
      FR: 1,
      GB: 1,
      NL: 1,
    });
  });

  it("refuses an unknown place, a bad radius, a radius alone and distance without near", async () => {
    for (const [query, code] of [
      ["near=Atlantis", "invalid_near"],
      ["near=91,0", "invalid_near"],
      ["near=Paris&radius_km=0", "invalid_radius_km"],
      ["near=Paris&radius_km=1001", "invalid_radius_km"],
      ["near=Paris&radius_km=-5", "invalid_radius_km"],
      ["radius_km=5", "invalid_radius_km"],
      ["sort=distance", "invalid_sort"],
    ]) {
      const { status, body } = await api.get<{ error: { code: string } }>(`/api/v1/jobs?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code, query).toBe(code);
    }
  });
});

describe("GET /talents?near=", () => {
  it("lists the public talents within the radius", async () => {
    expect(await letters("/api/v1/talents?near=Paris")).toBe("P");
    expect(await letters("/api/v1/talents?near=Paris&radius_km=1000")).toBe(
      ["B", "P", "L", "A", "M"]
        .map((k) => handle[k]!)
        .sort()
        .map(letterOf)
        .join(""),
    );
    expect((await api.get<List>("/api/v1/talents?near=Paris&radius_km=1000")).body.meta.total).toBe(5);
  });

  it("orders by distance, then id, continued by cursor and offset, with the same total", async () => {
    expect(await letters("/api/v1/talents?near=Paris&radius_km=1000&sort=distance")).toBe("PLAMB");
    expect(await follow("/api/v1/talents?near=Paris&radius_km=1000&sort=distance&limit=2")).toBe("PLAMB");
    const { body } = await api.get<List>("/api/v1/talents?near=Paris&radius_km=1000&sort=distance&limit=2&offset=2");
    expect(body.data.map((r) => letterOf(r.handle)).join("")).toBe("AM");
    expect(body.meta.total).toBe(5);
    expect(await letters("/api/v1/talents?near=Berlin&radius_km=600&sort=distance")).toBe("BMA");
    expect(await letters("/api/v1/talents?near=Paris&radius_km=600&sort=distance&location=London")).toBe("L");
  });

  it("refuses distance without near, and a cursor of the handle order", async () => {
    const { status, body } = await api.get<{ error: { code: string } }>("/api/v1/talents?sort=distance");
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_sort");
    const page = await api.get<List>("/api/v1/talents?near=Paris&radius_km=1000&limit=1");
    const cursor = new URL(page.body.meta.next!).searchParams.get("cursor")!;
    const other = await api.get<{ error: { code: string } }>(
      `/api/v1/talents?near=Paris&radius_km=1000&sort=distance&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe("invalid_cursor");
  });
});
