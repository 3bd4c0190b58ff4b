// The Job object type (and its Salary): the fields a public job shows, read from Prisma's row or
// from the same row shape by the read model's own statement (./rows-sql.ts).
import { builder, plainRead } from "../../builder.ts";
import { EmploymentTypeEnum, SalaryPeriodEnum, SeniorityEnum, WorkModelEnum } from "../../enums.ts";
import { isPublicCompany, publicJobWhere } from "../../gates.ts";
import { pageArgs, pagedByLimit, pageRequest, tagList } from "../../paging.ts";
import { Company } from "../company.ts";
import { Location } from "../location.ts";
import { shapeJobs, type SalaryShape, type ShapedJob } from "./shape.ts";

const Salary = builder.objectRef<SalaryShape>("Salary").implement({
  description: "A salary range in whole units of an ISO 4217 currency per period.",
  fields: (t) => ({
    min: t.exposeInt("min", { nullable: true }),
    max: t.exposeInt("max", { nullable: true }),
    currency: t.exposeString("currency"),
    period: t.expose("period", { type: SalaryPeriodEnum }),
  }),
});

export const Job = builder.prismaObject("Job", {
  description: "A published, open job.",
  // Select mode: a row loads only the columns the query asks for, so a list of summaries never
  // reads the descriptions, and the search lexemes are never read at all. The small columns every
  // summary shows are always loaded instead, and their fields read them plainly: in select mode an
  // exposed field, or one with its own selection, is wrapped to look up for every row where its
  // data was loaded, which cost more CPU on a 50-row page than reading these columns. Those that
  // are the row's own property are plain reads (../../builder.ts plainRead): no resolver at all.
  select: {
    id: true,
    slug: true,
    title: true,
    employmentType: true,
    workModel: true,
    locationCity: true,
    locationState: true,
    locationCountry: true,
    // For distanceKm: a `near` page measures each row from them (./page.ts).
    latitude: true,
    longitude: true,
    salaryMin: true,
    salaryMax: true,
    salaryCurrency: true,
    salaryPeriod: true,
    publishedAt: true,
    // Every job shows its company's reference: loaded with the row, so the field below is a plain
    // read. A field with its own selection is resolved through the planner's mapping for its row,
    // which compiled operations (../../compiled-operations.ts) cannot find beneath a relation (their response
    // paths are rebuilt per call), and which costs a lookup per row either way.
    company: { select: { id: true, hasPublicPage: true, slug: true, name: true, logoUrl: true } },
  },
  fields: (t) => ({
    id: t.id({ ...plainRead("id"), resolve: (j) => j.id }),
    slug: t.string({ ...plainRead("slug"), resolve: (j) => j.slug }),
    title: t.string({ ...plainRead("title"), resolve: (j) => j.title }),
    descriptionHtml: t.exposeString("descriptionHtml"),
    descriptionText: t.exposeString("descriptionText"),
    employmentType: t.field({
      ...plainRead("employmentType"),
      type: EmploymentTypeEnum,
      resolve: (j) => j.employmentType,
    }),
    workModel: t.field({ ...plainRead("workModel"), type: WorkModelEnum, resolve: (j) => j.workModel }),
    seniority: t.expose("seniority", { type: SeniorityEnum, nullable: true }),
    // Location and salary are made where the row is read (./shape.ts) and read plainly here.
    location: t.field({
      ...plainRead("location"),
      type: Location,
      nullable: true,
      resolve: (j) => (j as unknown as ShapedJob).location,
    }),
    // A page filtered by near or sorted by distance sets it on its rows (./page.ts); elsewhere the
    // row has none, which a plain read answers as null.
    distanceKm: t.float({
      ...plainRead("distanceKm"),
      nullable: true,
      description:
        "Kilometres from filter.near (great-circle distance) on a page filtered by near or sorted by DISTANCE; null otherwise.",
      resolve: (j) => (j as { distanceKm?: number }).distanceKm ?? null,
    }),
    salary: t.field({
      ...plainRead("salary"),
      type: Salary,
      nullable: true,
      description: "null when the employer did not publish a salary.",
      resolve: (j) => (j as unknown as ShapedJob).salary,
    }),
    applyUrl: t.exposeString("applyUrl", { nullable: true }),
    // Every job the schema returns passed the public gate, whose published_at <= now leaves no
    // null (the column is nullable for drafts): a plain read. Were the gate to let a draft through,
    // the non-null field would fail loudly instead of showing its creation as its publication.
    publishedAt: t.field({ ...plainRead("publishedAt"), type: "DateTime", resolve: (j) => j.publishedAt! }),
    validThrough: t.expose("validThrough", { type: "DateTime", nullable: true }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    company: t.field({
      type: Company,
      nullable: true,
      description: "null for a confidential posting or a company without a public page.",
      resolve: (j) => isPublicCompany(j.company),
    }),
    sector: t.relation("sector", { nullable: true }),
    skills: t.relation("skills", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
  }),
});

// A company's open jobs: the jobs relation, selected with the company (no statement of its own),
// its rows shaped as every job row is (./shape.ts); a t.relation would hand them to Job unshaped.
// Defined here, beside Job, so Company's module need not import Job's (which imports Company's).
builder.prismaObjectField(Company, "openJobs", (t) =>
  t.field({
    ...pagedByLimit,
    type: [Job],
    description: "The company's public open jobs, newest first.",
    args: pageArgs,
    select: (args, ctx, nestedSelection) => {
      const { limit, offset } = pageRequest(args);
      return {
        jobs: nestedSelection({
          where: publicJobWhere(ctx.now),
          orderBy: [{ publishedAt: "desc" as const }, { id: "desc" as const }],
          take: limit,
          skip: offset,
        }),
      };
    },
    // The rows hold what nestedSelection planned (Job's own select, its company among it), which the
    // relation's model type does not know.
    resolve: (company) => shapeJobs(company.jobs) as never,
  }),
);
