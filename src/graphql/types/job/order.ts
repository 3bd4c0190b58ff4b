// The orders of the job list (JobSort): each ends with the id, so pages are stable and continue by
// cursor; the same columns in Prisma's orderBy (here) and in SQL (./rows-sql.ts).
import type { Prisma } from "../../../generated/prisma/client.ts";
import { builder } from "../../builder.ts";
import type { ListOrder, OrderField } from "../../paging.ts";

export const JobSort = builder.enumType("JobSort", {
  description: "The order of a job list; each ends with the id, so pages are stable and continue by cursor.",
  values: {
    PUBLISHED_AT_DESC: { description: "Newest first (the default)." },
    PUBLISHED_AT_ASC: { description: "Oldest first." },
    SALARY_DESC: { description: "Highest salary first (the top of the range). Needs filter.salaryCurrency." },
    SALARY_ASC: { description: "Lowest salary first (the top of the range). Needs filter.salaryCurrency." },
    RELEVANCE: {
      description:
        "Best match of filter.q first: jobs whose title holds every word, then those whose title and skills hold them, then the rest (some word only in the description); newest first within each, then the id. Needs filter.q.",
    },
    DISTANCE: {
      description: "Nearest to filter.near first (great-circle distance), then the id. Needs filter.near.",
    },
  },
});

export type JobSortValue = typeof JobSort.$inferType;

const byId = (direction: "asc" | "desc") => ({ field: "id", direction, kind: "uuid" }) as const;

/** Each order of the job list, with the unique id last (the keyset continuation needs a total order). */
export const JOB_ORDERS = {
  PUBLISHED_AT_DESC: [{ field: "publishedAt", direction: "desc", kind: "instant" }, byId("desc")],
  PUBLISHED_AT_ASC: [{ field: "publishedAt", direction: "asc", kind: "instant" }, byId("asc")],
  SALARY_DESC: [{ field: "salaryTop", direction: "desc", kind: "int" }, byId("desc")],
  SALARY_ASC: [{ field: "salaryTop", direction: "asc", kind: "int" }, byId("asc")],
} as const satisfies Record<Exclude<JobSortValue, ComputedSort>, readonly OrderField<"Job">[]>;

/** The orders by a value computed per request (no column holds it): their rows are read by SQL (./ranked-sql.ts). */
export type ComputedSort = "RELEVANCE" | "DISTANCE";

/** The computed orders' keys: the value (named as the row carries it), then columns. */
export const COMPUTED_ORDERS = {
  RELEVANCE: [
    { field: "relevanceTier", direction: "desc", kind: "int" },
    { field: "publishedAt", direction: "desc", kind: "instant" },
    byId("desc"),
  ],
  DISTANCE: [{ field: "distanceKm", direction: "asc", kind: "float" }, byId("asc")],
} as const satisfies Record<ComputedSort, ListOrder>;

/** The fields of the computed orders' keys that are not columns. */
export const COMPUTED_FIELDS = ["relevanceTier", "distanceKm"];

export const isComputedSort = (sort: JobSortValue): sort is ComputedSort => sort === "RELEVANCE" || sort === "DISTANCE";

export const orderByOf = (order: ListOrder) =>
  order.map((o) => ({ [o.field]: o.direction })) as Prisma.JobOrderByWithRelationInput[];
