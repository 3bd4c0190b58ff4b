// Sectors and skills: the taxonomy jobs, talents, companies and agents are tagged with.
// Their counts go through the gates, so a hidden row never shows up even as a number.
import { builder } from "../builder.ts";
import { listedAgentWhere, publicCompanyWhere, publicJobWhere, publicTalentWhere } from "../gates.ts";
import { badArgument, definePage, pageArgs, pageRequest } from "../paging.ts";

export const Sector = builder.prismaObject("Sector", {
  description: "An industry sector.",
  fields: (t) => ({
    id: t.exposeID("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    openJobCount: t.relationCount("jobs", {
      description: "Public open jobs in this sector.",
      where: (_args, ctx) => publicJobWhere(ctx.now),
    }),
    companyCount: t.relationCount("companies", { where: publicCompanyWhere }),
    talentCount: t.relationCount("talents", { where: publicTalentWhere }),
  }),
});

export const Skill = builder.prismaObject("Skill", {
  description: "A skill, in a category such as llm, mlops or cv.",
  fields: (t) => ({
    id: t.exposeID("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    category: t.exposeString("category"),
    openJobCount: t.relationCount("jobs", {
      description: "Public open jobs asking for this skill.",
      where: (_args, ctx) => publicJobWhere(ctx.now),
    }),
    talentCount: t.relationCount("talents", { where: publicTalentWhere }),
    agentCount: t.relationCount("agents", { where: listedAgentWhere }),
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
  sectors: t.prismaField({
    type: ["Sector"],
    description: "Every sector, by name then slug.",
    resolve: (query, _root, _args, ctx) =>
      ctx.prisma.sector.findMany({ ...query, orderBy: [{ name: "asc" }, { slug: "asc" }] }),
  }),
  sector: t.prismaField({
    type: "Sector",
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: (query, _root, { slug }, ctx) => ctx.prisma.sector.findUnique({ ...query, where: { slug } }),
  }),
  skills: t.field({
    type: SkillPage,
    description: "Skills by name then slug, optionally of one category.",
    args: { ...pageArgs, category: t.arg.string({ description: "Only skills of this category, e.g. llm." }) },
    resolve: (_root, args) => {
      const category = args.category?.trim().toLowerCase();
      if (args.category != null && !category) throw badArgument("category", "category must not be empty");
      return { ...pageRequest(args), countKey: category ?? "", where: category ? { category } : {} };
    },
  }),
  skill: t.prismaField({
    type: "Skill",
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    resolve: (query, _root, { slug }, ctx) => ctx.prisma.skill.findUnique({ ...query, where: { slug } }),
  }),
}));
