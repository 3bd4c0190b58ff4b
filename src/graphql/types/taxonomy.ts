// Sectors and skills: the taxonomy jobs, talents, companies and agents are tagged with.
// Their counts are the gated counters the database keeps (src/graphql/counters.ts), so a hidden
// row never shows up even as a number, and a count costs no scan of the rows behind it.
import { builder } from "../builder.ts";
import type { GraphQLContext } from "../context.ts";
import { countsOf, type Counts } from "../counters.ts";
import { badArgument, definePage, pageArgs, pagedByLimit, pageRequest } from "../paging.ts";
import { listSize } from "../cost.ts";
import { planned } from "../planned-query.ts";

/** The bound the cost estimate assumes for the list of every sector (about 25 today). */
export const SECTORS_AT_MOST = 200;

/** An Int field answering one of a sector's or skill's counters. */
const counted = (key: keyof Counts, description: string) => ({
  description,
  resolve: async (row: { id: string }, _args: object, ctx: GraphQLContext) => (await countsOf(ctx, row.id))[key],
});

export const Sector = builder.prismaObject("Sector", {
  description: "An industry sector.",
  fields: (t) => ({
    id: t.exposeID("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    openJobCount: t.int(counted("openJobs", "Public open jobs in this sector.")),
    companyCount: t.int(counted("companies", "Public companies in this sector.")),
    talentCount: t.int(counted("talents", "Public talents in this sector.")),
  }),
});

export const Skill = builder.prismaObject("Skill", {
  description: "A skill, in a category such as llm, mlops or cv.",
  fields: (t) => ({
    id: t.exposeID("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    category: t.exposeString("category"),
    openJobCount: t.int(counted("openJobs", "Public open jobs asking for this skill.")),
    talentCount: t.int(counted("talents", "Public talents with this skill.")),
    agentCount: t.int(counted("agents", "Listed agents with this skill.")),
  }),
});

const SkillPage = definePage("Skill", "SkillPage", {
  items: (ctx, query, page) =>
    ctx.prisma.skill.findMany({
      ...query,
      where: page.where,
      orderBy: [{ name: "asc" }, { slug: "asc" }],
      take: page.limit,
      skip: page.offset,
    }),
  total: (ctx, where) => ctx.prisma.skill.count({ where }),
});

builder.queryFields((t) => ({
  sectors: t.field({
    type: [Sector],
    // The whole taxonomy, which has no limit: a bound for the cost estimate, well above its size.
    ...listSize({ atMost: SECTORS_AT_MOST }),
    description: "Every sector, by name then slug.",
    resolve: planned("Sector", (query, _args, ctx) =>
      ctx.prisma.sector.findMany({ ...query, orderBy: [{ name: "asc" }, { slug: "asc" }] }),
    ),
  }),
  sector: t.field({
    type: Sector,
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: planned("Sector", (query, { slug }, ctx) => ctx.prisma.sector.findUnique({ ...query, where: { slug } })),
  }),
  skills: t.field({
    ...pagedByLimit,
    type: SkillPage,
    description: "Skills by name then slug, optionally of one category.",
    args: { ...pageArgs, category: t.arg.string({ description: "Only skills of this category, e.g. llm." }) },
    resolve: (_root, args) => {
      const category = args.category?.trim().toLowerCase();
      if (args.category != null && !category) throw badArgument("category", "category must not be empty");
      return { ...pageRequest(args), countKey: category ?? "", where: category ? { category } : {} };
    },
  }),
  skill: t.field({
    type: Skill,
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: planned("Skill", (query, { slug }, ctx) => ctx.prisma.skill.findUnique({ ...query, where: { slug } })),
  }),
}));
