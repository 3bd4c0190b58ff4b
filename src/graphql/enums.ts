// GraphQL enums mirror the database enums: SCREAMING_CASE names over the stored lowercase
// values, so resolvers pass Prisma values straight through.
import {
  Availability,
  BillingPeriod,
  CompanySize,
  EmploymentType,
  JobChangeKind,
  PricingModel,
  SalaryPeriod,
  Seniority,
  TalentLinkKind,
  WorkModel,
} from "../generated/prisma/enums.ts";
import { builder } from "./builder.ts";

function enumOf<const V extends string>(name: string, values: Record<string, V>, description: string) {
  return builder.enumType(name, {
    description,
    values: Object.fromEntries(Object.values(values).map((value) => [value.toUpperCase(), { value }])),
  });
}

export const WorkModelEnum = enumOf("WorkModel", WorkModel, "Where the work happens.");
export const EmploymentTypeEnum = enumOf("EmploymentType", EmploymentType, "The contract of a job.");
export const SeniorityEnum = enumOf("Seniority", Seniority, "The level of a job.");
export const SalaryPeriodEnum = enumOf("SalaryPeriod", SalaryPeriod, "The period a salary amount is paid for.");
export const CompanySizeEnum = enumOf("CompanySize", CompanySize, "Head-count range of a company.");
export const AvailabilityEnum = enumOf("Availability", Availability, "Whether a talent is looking for work.");
export const TalentLinkKindEnum = enumOf("TalentLinkKind", TalentLinkKind, "What a talent's public link points to.");
export const PricingModelEnum = enumOf("PricingModel", PricingModel, "How an agent is sold.");
export const BillingPeriodEnum = enumOf("BillingPeriod", BillingPeriod, "The billing period of a subscription.");
export const JobChangeKindEnum = enumOf(
  "JobChangeKind",
  JobChangeKind,
  "What happened to a job in the public set: it entered it, changed in it, or left it.",
);
