import type { Prisma } from "../../generated/prisma/client.ts";
import type { GraphQLContext } from "../context.ts";
import { builder } from "../builder.ts";
import { AvailabilityEnum, TalentLinkKindEnum, WorkModelEnum } from "../enums.ts";
import { publicTalentSql, publicTalentWhere } from "../gates.ts";
import {
  badArgument,
  cursorArgs,
  definePage,
  loadStrategy,
  pageArgs,
  pagedByLimit,
  pageRequest,
  tagList,
  type PageWindow,
} from "../paging.ts";
import { prismaSql, SqlParams } from "../sql.ts";
import { distanceSql, withinSql } from "./job/ranked-sql.ts";
import {
  Location,
  LOCATION_FILTER_DESCRIPTION,
  locationOf,
  locationWhere,
  NEAR_DESCRIPTION,
  RADIUS_KM_MAX,
  resolveNear,
} from "./location.ts";
import { planned } from "../planned-query.ts";

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

export const TalentSort = builder.enumType("TalentSort", {
  description: "The order of a talent list; each continues by cursor.",
  values: {
    HANDLE: { description: "By handle (the default)." },
    DISTANCE: { description: "Nearest to filter.near first (great-circle distance), then the id. Needs filter.near." },
  },
});

/** The distance order's key: the distance (not a column: computed per request), then the id. */
const BY_DISTANCE = [
  { field: "distanceKm", direction: "asc", kind: "float" },
  { field: "id", direction: "asc", kind: "uuid" },
] as const;

/** What the distance order needs: the place, and the filter without a cursor's seek (which Prisma cannot express on a distance). */
interface TalentRanking {
  lat: number;
  lon: number;
  where: Prisma.TalentWhereInput;
}

/**
 * A page of talents nearest first. The filter's ids (the radius already narrows them to a place's
 * share of the talents) by Prisma, their distances, order and page by SQL, then the page's rows by
 * Prisma, each carrying its distance for the cursor.
 */
async function talentsByDistance(
  ctx: GraphQLContext,
  query: { select?: object; include?: object },
  window: PageWindow<Prisma.TalentWhereInput>,
  ranking: TalentRanking,
) {
  const matching = await ctx.prisma.talent.findMany({ select: { id: true }, where: ranking.where });
  const params = new SqlParams();
  const distance = distanceSql("t", ranking.lat, ranking.lon)(params);
  const ids = params.add(
    matching.map((t) => t.id),
    "uuid[]",
  );
  const seek = window.seek as [number, string] | undefined;
  const after = seek
    ? ` AND (${distance}, t.id) > (${params.add(seek[0], "float8")}, ${params.add(seek[1], "uuid")})`
    : "";
  const ranked = await prismaSql(ctx.prisma).query<{ id: string; distanceKm: number }>(
    `SELECT t.id, ${distance} AS "distanceKm" FROM talents t WHERE t.id = ANY(${ids})${after}
      ORDER BY 2, t.id LIMIT ${params.add(window.limit, "int")} OFFSET ${params.add(window.skip, "int")}`,
    params.values,
  );
  if (ranked.length === 0) return [];
  // The order's key is not a column: the rows are read without it, and carry it after.
  const select = "select" in query && query.select && Object.entries(query.select).filter(([k]) => k !== "distanceKm");
  const plain = select ? { ...query, select: Object.fromEntries(select) } : query;
  const rows = await ctx.prisma.talent.findMany({
    ...(plain as object),
    relationLoadStrategy: loadStrategy("Talent", plain),
    where: { id: { in: ranked.map((r) => r.id) } },
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ranked.flatMap((key) => {
    const row = byId.get(key.id);
    return row ? [Object.assign(row, { distanceKm: key.distanceKm })] : [];
  });
}

const TalentPage = definePage("Talent", "TalentPage", {
  order: [{ field: "handle", direction: "asc", kind: "text" }],
  items: (ctx, query, page) =>
    page.ranking
      ? talentsByDistance(ctx, query, page, page.ranking as TalentRanking)
      : ctx.prisma.talent.findMany({
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
    description: "Public talents by handle, or nearest first (sort DISTANCE, with filter.near).",
    args: {
      ...pageArgs,
      ...cursorArgs,
      filter: t.arg({ type: TalentFilter }),
      sort: t.arg({ type: TalentSort, defaultValue: "HANDLE" }),
    },
    resolve: async (_root, args, ctx) => {
      const page = pageRequest(args);
      const where: Prisma.TalentWhereInput[] = [publicTalentWhere];
      const near = await resolveNear(ctx.prisma, args.filter?.near, args.filter?.radiusKm);
      if (near) where.push(await nearWhere(ctx, near));
      if (args.filter?.skill) where.push({ skills: { some: { slug: args.filter.skill } } });
      if (args.filter?.sector) where.push({ sectors: { some: { slug: args.filter.sector } } });
      if (args.filter?.location != null) where.push(locationWhere(args.filter.location));
      const countKey = JSON.stringify(args.filter ?? null);
      const filter = { ...page, after: args.after, countKey, where: { AND: where } };
      if (args.sort !== "DISTANCE") return filter;
      if (!near) throw badArgument("sort", "sort by distance needs near: the place to measure from");
      const ranking: TalentRanking = { lat: near.lat, lon: near.lon, where: filter.where };
      return { ...filter, order: BY_DISTANCE, ranking };
    },
  }),
  talent: t.field({
    type: Talent,
    nullable: true,
    args: { handle: t.arg.string({ required: true, description: "With or without the leading @." }) },
    resolve: planned("Talent", (query, { handle }, ctx) =>
      ctx.prisma.talent.findFirst({
        ...query,
        where: { handle: handle.replace(/^@/, "").toLowerCase(), ...publicTalentWhere },
      }),
    ),
  }),
}));
