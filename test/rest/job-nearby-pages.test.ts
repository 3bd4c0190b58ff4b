// The pages of a radius walked point by point (src/graphql/types/job/ranked-sql.ts, pointsWithin):
// many jobs at each of a few places, equal publication instants among them, hidden jobs, and a
// place inside the radius's latitude band but outside the radius. Every page, by cursor and by
// offset, in the list order and nearest first, must be the slice of what sorting every public job
// of the radius gives.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distanceKm } from "../../src/graphql/types/job/ranked-sql.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;

interface Placed {
  slug: string;
  id: string;
  publishedAt: number;
  lat: number;
  lon: number;
}
const publicJobs: Placed[] = [];

// From Paris: London ~344 km, Amsterdam ~430 km (inside 700 km); Berlin ~878 km (inside the
// latitude band of 700 km, outside the radius).
const CITIES = [
  ["Paris", "FR"],
  ["London", "GB"],
  ["Amsterdam", "NL"],
  ["Berlin", "DE"],
] as const;
const PARIS = { lat: 48.8566, lon: 2.3522 };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  let n = 0;
  const now = Date.now();
  for (const [city, country] of CITIES) {
    for (let i = 0; i < 9; i++) {
      // Three jobs share each instant: the id breaks the tie.
      const publishedAt = new Date(now - (1 + Math.floor(n / 3) / 10) * 86_400_000);
      const hidden = i === 4;
      const job = await f.job(`pages-${city.toLowerCase()}-${i}`, {
        locationCity: city,
        locationCountry: country,
        publishedAt,
        ...(hidden ? { status: "draft" as const } : {}),
      });
      n++;
      const row = await db.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
      if (!hidden && row.latitude !== null && row.longitude !== null) {
        publicJobs.push({
          slug: row.slug,
          id: row.id,
          publishedAt: publishedAt.getTime(),
          lat: row.latitude,
          lon: row.longitude,
        });
      }
    }
  }
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

type List = { data: { slug: string }[]; meta: { total: number; next: string | null } };

async function follow(path: string): Promise<string[]> {
  const slugs: string[] = [];
  let next: string | null = path;
  while (next) {
    const { status, body }: { status: number; body: List } = await api.get<List>(next.replace(/^https?:\/\/[^/]+/, ""));
    expect(status, next).toBe(200);
    slugs.push(...body.data.map((j) => j.slug));
    next = body.meta.next;
  }
  return slugs;
}

async function page(path: string): Promise<string[]> {
  const { status, body } = await api.get<List>(path);
  expect(status, path).toBe(200);
  return body.data.map((j) => j.slug);
}

const within = (radiusKm: number) =>
  publicJobs.filter((j) => distanceKm(PARIS.lat, PARIS.lon, j.lat, j.lon) <= radiusKm);
const byId = (a: Placed, b: Placed) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const newestFirst = (jobs: Placed[]) => [...jobs].sort((a, b) => b.publishedAt - a.publishedAt || byId(b, a));
const nearestFirst = (jobs: Placed[]) =>
  [...jobs].sort(
    (a, b) =>
      distanceKm(PARIS.lat, PARIS.lon, a.lat, a.lon) - distanceKm(PARIS.lat, PARIS.lon, b.lat, b.lon) || byId(a, b),
  );

describe("a radius walked point by point", () => {
  it("lists newest first, by cursor and by offset, as sorting every public job of the radius does", async () => {
    const expected = newestFirst(within(700)).map((j) => j.slug);
    expect(expected).toHaveLength(24);
    expect(await follow("/api/v1/jobs?near=48.8566,2.3522&radius_km=700&limit=5")).toEqual(expected);
    for (const offset of [0, 4, 7, 20, 23, 24]) {
      expect(await page(`/api/v1/jobs?near=48.8566,2.3522&radius_km=700&limit=4&offset=${offset}`)).toEqual(
        expected.slice(offset, offset + 4),
      );
    }
  });

  it("orders nearest first, by cursor and by offset, as sorting every public job of the radius does", async () => {
    const expected = nearestFirst(within(700)).map((j) => j.slug);
    expect(await follow("/api/v1/jobs?near=48.8566,2.3522&radius_km=700&sort=distance&limit=5")).toEqual(expected);
    for (const offset of [0, 5, 8, 16, 22]) {
      expect(
        await page(`/api/v1/jobs?near=48.8566,2.3522&radius_km=700&sort=distance&limit=3&offset=${offset}`),
      ).toEqual(expected.slice(offset, offset + 3));
    }
  });

  it("keeps other filters inside each point's walk", async () => {
    const expected = newestFirst(within(700).filter((j) => j.slug.includes("london"))).map((j) => j.slug);
    expect(await follow("/api/v1/jobs?near=48.8566,2.3522&radius_km=700&country=GB&limit=3")).toEqual(expected);
    const nearest = nearestFirst(within(1000).filter((j) => !j.slug.includes("paris"))).map((j) => j.slug);
    expect(await follow("/api/v1/jobs?near=Paris&radius_km=1000&country=GB,NL,DE&sort=distance&limit=4")).toEqual(
      nearest,
    );
  });
});
