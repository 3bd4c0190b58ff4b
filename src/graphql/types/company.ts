import { builder, plainRead } from "../builder.ts";
import { countsOf } from "../counters.ts";
import { CompanySizeEnum } from "../enums.ts";
import { publicCompanyWhere } from "../gates.ts";
import { definePage, pageArgs, pagedByLimit, pageRequest, tagList } from "../paging.ts";
import { Location, locationOf } from "./location.ts";
import { planned } from "../planned-query.ts";

export const Company = builder.prismaObject("Company", {
  description: "A company with a branded public page.",
  // Select mode: a nested company (50 per page of jobs) loads only the columns asked for, never
  // the description or the internal contact; hasPublicPage always, for the gate of to-one relations.
  // The reference columns every nested company shows are always loaded and read plainly (an exposed
  // field in select mode costs a loader lookup per row; see Job in ./job/object.ts), without a resolver.
  select: { id: true, hasPublicPage: true, slug: true, name: true, logoUrl: true },
  fields: (t) => ({
    id: t.id({ ...plainRead("id"), resolve: (c) => c.id }),
    slug: t.string({ ...plainRead("slug"), resolve: (c) => c.slug }),
    name: t.string({ ...plainRead("name"), resolve: (c) => c.name }),
    tagline: t.exposeString("tagline", { nullable: true }),
    description: t.exposeString("description", { nullable: true }),
    logoUrl: t.string({ ...plainRead("logoUrl"), nullable: true, resolve: (c) => c.logoUrl }),
    websiteUrl: t.exposeString("websiteUrl", { nullable: true }),
    size: t.expose("size", { type: CompanySizeEnum, nullable: true }),
    foundedYear: t.exposeInt("foundedYear", { nullable: true }),
    headquarters: t.field({
      type: Location,
      nullable: true,
      select: { hqCity: true, hqState: true, hqCountry: true },
      resolve: (c) => locationOf(c.hqCity, c.hqState, c.hqCountry),
    }),
    sectors: t.relation("sectors", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
    openJobCount: t.int({
      description: "The company's public open jobs.",
      resolve: async (c, _args, ctx) => (await countsOf(ctx, c.id)).openJobs,
    }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const CompanyPage = definePage("Company", "CompanyPage", {
  items: (ctx, query, page) =>
    ctx.prisma.company.findMany({
      ...query,
      where: page.where,
      orderBy: [{ name: "asc" }, { slug: "asc" }],
      take: page.limit,
      skip: page.offset,
    }),
  total: (ctx, where) => ctx.prisma.company.count({ where }),
});

builder.queryFields((t) => ({
  companies: t.field({
    ...pagedByLimit,
    type: CompanyPage,
    description: "Public companies by name then slug.",
    args: pageArgs,
    resolve: (_root, args) => ({ ...pageRequest(args), countKey: "", where: publicCompanyWhere }),
  }),
  company: t.field({
    type: Company,
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: planned("Company", (query, { slug }, ctx) =>
      ctx.prisma.company.findFirst({ ...query, where: { slug, ...publicCompanyWhere } }),
    ),
  }),
}));
