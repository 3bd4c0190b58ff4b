// The job list's filter argument (JobFilter): every condition a client can put on the list. Its
// conditions in Prisma and SQL are in ./conditions.ts.
import { builder } from "../../builder.ts";
import { EmploymentTypeEnum, SalaryPeriodEnum, WorkModelEnum } from "../../enums.ts";
import { LOCATION_FILTER_DESCRIPTION, NEAR_DESCRIPTION, RADIUS_KM_MAX } from "../location.ts";

export const JobFilter = builder.inputType("JobFilter", {
  description: "All given conditions must hold.",
  fields: (t) => ({
    q: t.string({
      description:
        "Words that must all occur in the title, the skills' names or the description. English stemming (developers matches developer), case-insensitive; common words are ignored. sort RELEVANCE ranks the matches.",
    }),
    workModel: t.field({ type: [WorkModelEnum], description: "Any of these work models." }),
    employmentType: t.field({ type: [EmploymentTypeEnum], description: "Any of these employment types." }),
    sector: t.string({ description: "Slug of a sector." }),
    skill: t.string({ description: "Slug of a skill the job asks for." }),
    company: t.string({ description: "Slug of a public company." }),
    updatedSince: t.field({ type: "DateTime", description: "Only jobs updated at or after this instant." }),
    location: t.string({ description: LOCATION_FILTER_DESCRIPTION }),
    near: t.string({ description: NEAR_DESCRIPTION }),
    radiusKm: t.float({
      description: `Kilometres from near, above 0 and at most ${RADIUS_KM_MAX}; default 50. Needs near.`,
    }),
    country: t.stringList({
      description: "ISO 3166-1 alpha-2 codes (case-insensitive): jobs located in any of these countries.",
    }),
    remote: t.boolean({
      description: "true: remote jobs only (workModel REMOTE); false: hybrid and onsite jobs only.",
    }),
    salaryMin: t.int({
      description:
        "Jobs whose published salary range reaches this amount (its maximum, or its minimum when it has no maximum, is at least this), in salaryCurrency per salaryPeriod. Needs salaryCurrency; jobs without a salary never match.",
    }),
    salaryCurrency: t.string({
      description:
        "ISO 4217 code (e.g. EUR): jobs paying in this currency. Amounts are never converted between currencies.",
    }),
    salaryPeriod: t.field({
      type: SalaryPeriodEnum,
      description:
        "Jobs paying per this period. Default YEAR when salaryMin is given or the order is by salary; amounts are never converted between periods.",
    }),
  }),
});

export type JobFilterShape = typeof JobFilter.$inferInput;
