// A job as schema.org JobPosting in JSON-LD, the structured data Google's job search reads
// (developers.google.com/search/docs/appearance/structured-data/job-posting): GET /jobs/{slug}
// answers it to `Accept: application/ld+json`. Built from the REST representation itself, so the
// two cannot disagree about what is public.
//
// Where the data cannot say what Google requires, the property is left out rather than invented:
// a confidential posting has no hiringOrganization, and an onsite or hybrid job without a location
// has no jobLocation (such postings are not eligible for Google's job search; the web page does not
// show an employer or place either). A remote job is TELECOMMUTE, its country (when known) the
// applicants' location requirement.
import { z } from "zod";
import type { EMPLOYMENT_TYPES, SALARY_PERIODS } from "./resources.ts";
import { type JobDetail } from "./resources.ts";

export const JSON_LD = "application/ld+json";

/** Google's employmentType values for ours (a freelance engagement is a contractor's). */
const EMPLOYMENT_TYPE = {
  full_time: "FULL_TIME",
  part_time: "PART_TIME",
  contract: "CONTRACTOR",
  temporary: "TEMPORARY",
  internship: "INTERN",
  freelance: "CONTRACTOR",
} as const satisfies Record<(typeof EMPLOYMENT_TYPES)[number], string>;

const UNIT_TEXT = {
  hour: "HOUR",
  day: "DAY",
  week: "WEEK",
  month: "MONTH",
  year: "YEAR",
} as const satisfies Record<(typeof SALARY_PERIODS)[number], string>;

const Country = z.object({ "@type": z.literal("Country"), name: z.string().length(2) });

export const JobPostingLd = z
  .object({
    "@context": z.literal("https://schema.org/"),
    "@type": z.literal("JobPosting"),
    title: z.string(),
    description: z.string().meta({ description: "The posting's HTML, as on the web page." }),
    datePosted: z.iso.datetime({ offset: true }),
    validThrough: z.iso.datetime({ offset: true }).optional(),
    employmentType: z.enum(Object.values(EMPLOYMENT_TYPE) as [string, ...string[]]),
    url: z.url().meta({ description: "The job's public web page." }),
    identifier: z.object({ "@type": z.literal("PropertyValue"), name: z.string(), value: z.uuid() }),
    hiringOrganization: z
      .object({
        "@type": z.literal("Organization"),
        name: z.string(),
        sameAs: z.url(),
        logo: z.url().optional(),
      })
      .optional()
      .meta({ description: "Absent for a confidential posting." }),
    jobLocation: z
      .object({
        "@type": z.literal("Place"),
        address: z.object({
          "@type": z.literal("PostalAddress"),
          addressLocality: z.string().optional(),
          addressRegion: z.string().optional(),
          addressCountry: z.string().length(2).optional(),
        }),
      })
      .optional()
      .meta({ description: "Absent for a remote job, and for a job without a known place." }),
    jobLocationType: z.literal("TELECOMMUTE").optional().meta({ description: "Present for a remote job." }),
    applicantLocationRequirements: Country.optional().meta({
      description: "A remote job's country, when known.",
    }),
    baseSalary: z
      .object({
        "@type": z.literal("MonetaryAmount"),
        currency: z.string().length(3),
        value: z.object({
          "@type": z.literal("QuantitativeValue"),
          value: z.int().optional(),
          minValue: z.int().optional(),
          maxValue: z.int().optional(),
          unitText: z.enum(Object.values(UNIT_TEXT) as [string, ...string[]]),
        }),
      })
      .optional()
      .meta({ description: "Absent when the employer did not publish a salary." }),
    industry: z.string().optional(),
    skills: z.string().optional().meta({ description: "The skills asked for, comma-separated." }),
  })
  .meta({
    id: "JobPosting",
    description:
      "The job as schema.org JobPosting (JSON-LD), as Google's job search reads it; answered to Accept: application/ld+json.",
  });

type JobPostingBody = z.infer<typeof JobPostingLd>;
type JobDetailBody = z.infer<typeof JobDetail>;

/** Only the properties that have a value: JSON-LD leaves out what is unknown. */
const given = <T extends object>(value: T | null | undefined | false): T | object => value || {};

export function jobPosting(job: JobDetailBody): JobPostingBody {
  const remote = job.work_model === "remote";
  const place = {
    ...given(job.location_city !== null && { addressLocality: job.location_city }),
    ...given(job.location_state !== null && { addressRegion: job.location_state }),
    ...given(job.location_country !== null && { addressCountry: job.location_country }),
  };
  const salary = job.salary;
  return {
    "@context": "https://schema.org/",
    "@type": "JobPosting",
    title: job.title,
    description: job.description_html,
    datePosted: job.published_at,
    ...given(job.valid_through !== null && { validThrough: job.valid_through }),
    employmentType: EMPLOYMENT_TYPE[job.employment_type],
    url: job.links.html,
    identifier: { "@type": "PropertyValue", name: job.company?.name ?? "Marketplace", value: job.id },
    ...given(
      job.company && {
        hiringOrganization: {
          "@type": "Organization",
          name: job.company.name,
          sameAs: job.company.links.html,
          ...given(job.company.logo_url !== null && { logo: job.company.logo_url }),
        },
      },
    ),
    ...(remote
      ? {
          jobLocationType: "TELECOMMUTE" as const,
          ...given(
            job.location_country !== null && {
              applicantLocationRequirements: { "@type": "Country" as const, name: job.location_country },
            },
          ),
        }
      : given(
          Object.keys(place).length > 0 && {
            jobLocation: { "@type": "Place", address: { "@type": "PostalAddress", ...place } },
          },
        )),
    ...given(
      salary && {
        baseSalary: {
          "@type": "MonetaryAmount",
          currency: salary.currency,
          value: {
            "@type": "QuantitativeValue",
            ...(salary.min !== null && salary.max !== null && salary.min !== salary.max
              ? { minValue: salary.min, maxValue: salary.max }
              : { value: (salary.max ?? salary.min)! }),
            unitText: UNIT_TEXT[salary.period],
          },
        },
      },
    ),
    ...given(job.sector && { industry: job.sector.name }),
    ...given(job.skills.length > 0 && { skills: job.skills.map((s) => s.name).join(", ") }),
  };
}
