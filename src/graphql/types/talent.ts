import type { Prisma } from "../../generated/prisma/client.ts";
import type { GraphQLContext } from "../context.ts";
import { builder } from "../builder.ts";
import { AvailabilityEnum, TalentLinkKindEnum, WorkModelEnum } from "../enums.ts";
import { publicTalentSql, publicTalentWhere } from "../gates.ts";
import { cursorArgs, definePage, loadStrategy, pageArgs, pagedByLimit, pageRequest, tagList } from "../paging.ts";
import { prismaSql, SqlParams } from "../sql.ts";
import { withinSql } from "./job/ranked-sql.ts";
import {
  Location,
  LOCATION_FILTER_DESCRIPTION,
  locationOf,
  locationWhere,
  NEAR_DESCRIPTION,
  RADIUS_KM_MAX,
  resolveNear,
} from "./location.ts";

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
    near: t.string({ description: NEAR_DESCRIPTION }),
    radiusKm: t.float({
      description: `Kilometres from near, above 0 and at most ${RADIUS_KM_MAX}; default 50. Needs near.`,
    }),
  }),
});

/**
 * The talents within a radius, as Prisma's condition: their ids, found by SQL (a distance is not a
 * condition Prisma can express). Talents are thousands, a city's share of them an id list Prisma
 * sends as one array parameter.
 */
async function nearWhere(
  ctx: GraphQLContext,
  near: { lat: number; lon: number; radiusKm: number },
): Promise<Prisma.TalentWhereInput> {
  const params = new SqlParams();
  const within = withinSql("t", near.lat, near.lon, near.radiusKm)(params);
  const rows = await prismaSql(ctx.prisma).query<{ id: string }>(
    `SELECT t.id FROM talents t WHERE ${publicTalentSql} AND ${within}`,
    params.values,
  );
  return { id: { in: rows.map((r) => r.id) } };
}

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
    resolve: async (_root, args, ctx) => {
      const where: Prisma.TalentWhereInput[] = [publicTalentWhere];
      const near = await resolveNear(ctx.prisma, args.filter?.near, args.filter?.radiusKm);
      if (near) where.push(await nearWhere(ctx, near));
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
