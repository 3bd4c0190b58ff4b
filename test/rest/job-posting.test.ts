// GET /api/v1/jobs/{slug} with Accept: application/ld+json: the job as schema.org JobPosting, checked
// against Google's job-posting requirements (required: title, description, datePosted,
// hiringOrganization, jobLocation or, for a remote job, jobLocationType TELECOMMUTE; recommended:
// applicantLocationRequirements, baseSalary, employmentType, identifier, validThrough), against the
// served OpenAPI document (by the client), and against what the JSON representation says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobPostingLd } from "../../src/rest/job-posting.ts";
import { createApiClient, type ApiClient } from "../helpers/api.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { daysAgo, daysFromNow, factories } from "../helpers/factories.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let db: TestDatabase;
let server: TestServer;
let api: ApiClient;
const slug: Record<string, string> = {};

type Ld = Record<string, unknown> & { [key: string]: unknown };

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const ml = await f.sector("ml", { name: "Machine Learning" });
  const python = await f.skill("python", { name: "Python" });
  const acme = await f.company("acme", { name: "Acme Robotics", logoUrl: "https://cdn.example.com/acme.png" });
  const hidden = await f.company("stealth", { hasPublicPage: false });
  const common = { descriptionHtml: "<p>Build <b>robots</b>.</p><ul><li>Python</li></ul>", publishedAt: daysAgo(2) };
  slug["onsite"] = (
    await f.job("onsite", {
      ...common,
      title: "Robotics Engineer",
      workModel: "onsite",
      employmentType: "freelance",
      companyId: acme.id,
      sectorId: ml.id,
      locationCity: "Munich",
      locationState: "BY",
      locationCountry: "DE",
      salaryMin: 70_000,
      salaryMax: 90_000,
      salaryCurrency: "EUR",
      salaryPeriod: "year",
      validThrough: daysFromNow(30),
      skills: { connect: { id: python.id } },
    })
  ).slug;
  slug["remote"] = (
    await f.job("remote", {
      ...common,
      workModel: "remote",
      companyId: acme.id,
      locationCountry: "US",
      salaryMax: 60,
      salaryCurrency: "USD",
      salaryPeriod: "hour",
    })
  ).slug;
  slug["confidential"] = (await f.job("confidential", { ...common, workModel: "hybrid", companyId: hidden.id })).slug;
  server = await startServer(db, { RATE_LIMIT_REQUESTS: "100000" });
  api = await createApiClient(server.url);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const ldOf = (key: string, accept = "application/ld+json") =>
  api.get<Ld>(`/api/v1/jobs/${slug[key]}`, { headers: { accept } });

/** Google's required and recommended JobPosting properties this posting's data can give. */
function googleProblems(ld: Ld): string[] {
  const problems: string[] = [];
  for (const name of ["title", "description", "datePosted", "hiringOrganization"]) {
    if (!ld[name]) problems.push(`required ${name} missing`);
  }
  const remote = ld["jobLocationType"] === "TELECOMMUTE";
  if (!remote && !ld["jobLocation"]) problems.push("required jobLocation missing (not TELECOMMUTE)");
  if (remote && !ld["applicantLocationRequirements"])
    problems.push("TELECOMMUTE without applicantLocationRequirements");
  for (const name of ["employmentType", "identifier", "baseSalary"]) {
    if (!ld[name]) problems.push(`recommended ${name} missing`);
  }
  if (typeof ld["datePosted"] === "string" && Number.isNaN(Date.parse(ld["datePosted"]))) {
    problems.push("datePosted is not ISO 8601");
  }
  const employment = ["FULL_TIME", "PART_TIME", "CONTRACTOR", "TEMPORARY", "INTERN", "VOLUNTEER", "PER_DIEM", "OTHER"];
  if (!employment.includes(String(ld["employmentType"]))) problems.push("employmentType is not one of Google's");
  return problems;
}

describe("GET /jobs/{slug} as JSON-LD", () => {
  it("answers an onsite job as a complete JobPosting, with Vary: Accept and its own ETag", async () => {
    const { status, headers, body } = await ldOf("onsite");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^application\/ld\+json/);
    expect(headers.get("vary")).toMatch(/accept/i);
    expect(JobPostingLd.safeParse(body).success).toBe(true);
    expect(googleProblems(body)).toEqual([]);
    const json = await api.get<{ data: Record<string, unknown> }>(`/api/v1/jobs/${slug["onsite"]}`);
    expect(json.headers.get("etag")).not.toBe(headers.get("etag"));
    expect(json.headers.get("vary")).toMatch(/accept/i);
    expect(body).toEqual({
      "@context": "https://schema.org/",
      "@type": "JobPosting",
      title: "Robotics Engineer",
      description: "<p>Build <b>robots</b>.</p><ul><li>Python</li></ul>",
      datePosted: json.body.data["published_at"],
      validThrough: json.body.data["valid_through"],
      employmentType: "CONTRACTOR",
      url: (json.body.data["links"] as { html: string }).html,
      identifier: { "@type": "PropertyValue", name: "Acme Robotics", value: json.body.data["id"] },
      hiringOrganization: {
        "@type": "Organization",
        name: "Acme Robotics",
        sameAs: expect.stringMatching(/\/companies\/acme-/) as string,
        logo: "https://cdn.example.com/acme.png",
      },
      jobLocation: {
        "@type": "Place",
        address: { "@type": "PostalAddress", addressLocality: "Munich", addressRegion: "BY", addressCountry: "DE" },
      },
      baseSalary: {
        "@type": "MonetaryAmount",
        currency: "EUR",
        value: { "@type": "QuantitativeValue", minValue: 70_000, maxValue: 90_000, unitText: "YEAR" },
      },
      industry: "Machine Learning",
      skills: "Python",
    });
  });

  it("answers a remote job as TELECOMMUTE with its country as the applicants' location", async () => {
    const { body } = await ldOf("remote");
    expect(googleProblems(body)).toEqual([]);
    expect(body).toMatchObject({
      jobLocationType: "TELECOMMUTE",
      applicantLocationRequirements: { "@type": "Country", name: "US" },
      baseSalary: { currency: "USD", value: { value: 60, unitText: "HOUR" } },
    });
    expect(body).not.toHaveProperty("jobLocation");
  });

  it("leaves out what the posting does not say publicly: a confidential job has no hiringOrganization", async () => {
    const { status, body } = await ldOf("confidential");
    expect(status).toBe(200);
    expect(JobPostingLd.safeParse(body).success).toBe(true);
    expect(body).not.toHaveProperty("hiringOrganization");
    expect(body).not.toHaveProperty("baseSalary");
    expect(googleProblems(body)).toContain("required hiringOrganization missing");
  });

  it("reads the media type case-insensitively, as RFC 9110 says", async () => {
    const { headers } = await ldOf("onsite", "Application/LD+JSON");
    expect(headers.get("content-type")).toMatch(/^application\/ld\+json/);
  });

  it("answers JSON to application/json, */* and a JSON-LD preference that JSON outranks", async () => {
    for (const accept of ["application/json", "*/*", "application/ld+json;q=0.5, application/json"]) {
      const { headers, body } = await ldOf("onsite", accept);
      expect(headers.get("content-type"), accept).toMatch(/^application\/json/);
      expect(body).toHaveProperty("data");
    }
  });

  it("keeps a 404 in the documented JSON error shape, and HEAD answers the JSON-LD headers", async () => {
    const missing = await api.get<{ error: { code: string } }>("/api/v1/jobs/no-such-job", {
      headers: { accept: "application/ld+json" },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const head = await api.request(`/api/v1/jobs/${slug["onsite"]}`, {
      method: "HEAD",
      headers: { accept: "application/ld+json" },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^application\/ld\+json/);
    expect(head.text).toBe("");
  });
});
