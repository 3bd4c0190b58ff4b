import type { Prisma } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { AvailabilityEnum, TalentLinkKindEnum, WorkModelEnum } from "../enums.ts";
import { publicTalentWhere } from "../gates.ts";
import { cursorArgs, definePage, loadStrategy, pageArgs, pagedByLimit, pageRequest, tagList } from "../paging.ts";
import { Location, LOCATION_FILTER_DESCRIPTION, locationOf, locationWhere } from "./location.ts";

const TalentLink = builder.prismaObject("TalentLink", {
  description: "A public link on a talent's profile.",
  fields: (t) => ({
    kind: t.expose("kind", { type: TalentLinkKindEnum }),
    url: t.exposeString("url"),
  }),
});

export const Talent = builder.prismaObject("Talent", {
  description: "A candidate with a public profile.",
  fields: (t) => ({
    id: t.exposeID("id"),
    handle: t.exposeString("handle", { description: "Without the leading @." }),
    displayName: t.exposeString("displayName"),
    headline: t.exposeString("headline", { nullable: true }),
    bio: t.exposeString("bio", { nullable: true }),
    location: t.field({
      type: Location,
      nullable: true,
      resolve: (p) => locationOf(p.locationCity, p.locationState, p.locationCountry),
    }),
    workModels: t.expose("workModels", { type: [WorkModelEnum], description: "Work models the talent accepts." }),
    availability: t.expose("availability", { type: AvailabilityEnum }),
    yearsExperience: t.exposeInt("yearsExperience", { nullable: true }),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    links: t.relation("links", {
      type: TalentLink,
      ...tagList,
      query: { orderBy: [{ position: "asc" }, { id: "asc" }] },
    }),
    skills: t.relation("skills", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
    sectors: t.relation("sectors", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
    memberSince: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const TalentFilter = builder.inputType("TalentFilter", {
  fields: (t) => ({
    skill: t.string({ description: "Slug of a skill the talent has." }),
    sector: t.string({ description: "Slug of a sector the talent works in." }),
    location: t.string({ description: LOCATION_FILTER_DESCRIPTION }),
  }),
});

const TalentPage = definePage("Talent", "TalentPage", {
  order: [{ field: "handle", direction: "asc", kind: "text" }],
  items: (ctx, query, page) =>
    ctx.prisma.talent.findMany({
      ...query,
      relationLoadStrategy: loadStrategy("Talent", query),
      where: page.where,
      orderBy: { handle: "asc" },
      take: page.limit,
      skip: page.skip,
    }),
  total: (ctx, where) => ctx.prisma.talent.count({ where }),
});

builder.queryFields((t) => ({
  talents: t.field({
    ...pagedByLimit,
    type: TalentPage,
    description: "Public talents by handle.",
    args: { ...pageArgs, ...cursorArgs, filter: t.arg({ type: TalentFilter }) },
    resolve: (_root, args) => {
      const where: Prisma.TalentWhereInput[] = [publicTalentWhere];
      if (args.filter?.skill) where.push({ skills: { some: { slug: args.filter.skill } } });
      if (args.filter?.sector) where.push({ sectors: { some: { slug: args.filter.sector } } });
      if (args.filter?.location != null) where.push(locationWhere(args.filter.location));
      const countKey = JSON.stringify(args.filter ?? null);
      return { ...pageRequest(args), after: args.after, countKey, where: { AND: where } };
    },
  }),
  talent: t.prismaField({
    type: "Talent",
    nullable: true,
    args: { handle: t.arg.string({ required: true, description: "With or without the leading @." }) },
    resolve: (query, _root, { handle }, ctx) =>
      ctx.prisma.talent.findFirst({
        ...query,
        where: { handle: handle.replace(/^@/, "").toLowerCase(), ...publicTalentWhere },
      }),
  }),
}));
