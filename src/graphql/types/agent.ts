import type { Agent as AgentRow } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { BillingPeriodEnum, PricingModelEnum } from "../enums.ts";
import { isPublicCompany, listedAgentWhere, reachableAgentWhere } from "../gates.ts";
import { cursorArgs, definePage, loadStrategy, pageArgs, pagedByLimit, pageRequest, tagList } from "../paging.ts";
import { Company } from "./company.ts";
import { planned } from "../planned-query.ts";

type PricingShape = Pick<AgentRow, "pricingModel" | "priceAmount" | "priceCurrency" | "pricePeriod" | "priceUnit">;

const AgentPricing = builder.objectRef<PricingShape>("AgentPricing").implement({
  description: "How an agent is priced. amount is a decimal string in currency (ISO 4217); null when free.",
  fields: (t) => ({
    model: t.expose("pricingModel", { type: PricingModelEnum }),
    amount: t.string({ nullable: true, resolve: (p) => p.priceAmount?.toFixed(2) ?? null }),
    currency: t.exposeString("priceCurrency", { nullable: true }),
    period: t.expose("pricePeriod", { type: BillingPeriodEnum, nullable: true, description: "For subscriptions." }),
    unit: t.exposeString("priceUnit", { nullable: true, description: "For usage prices, e.g. 1k requests." }),
  }),
});

export const Agent = builder.prismaObject("Agent", {
  description: "An AI agent sold as a product.",
  fields: (t) => ({
    id: t.exposeID("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    tagline: t.exposeString("tagline", { nullable: true }),
    description: t.exposeString("description"),
    category: t.exposeString("category"),
    capabilities: t.exposeStringList("capabilities"),
    version: t.exposeString("version"),
    pricing: t.field({ type: AgentPricing, resolve: (a) => a }),
    websiteUrl: t.exposeString("websiteUrl", { nullable: true }),
    publishedAt: t.field({ type: "DateTime", resolve: (a) => a.publishedAt ?? a.createdAt }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    vendor: t.field({
      type: Company,
      nullable: true,
      description: "The selling company; null when it has no public page.",
      select: (_args, _ctx, nestedSelection) => ({ vendorCompany: nestedSelection(true) }),
      resolve: (a) => isPublicCompany(a.vendorCompany),
    }),
    skills: t.relation("skills", { ...tagList, query: { orderBy: [{ name: "asc" }, { slug: "asc" }] } }),
  }),
});

const AgentFilter = builder.inputType("AgentFilter", {
  fields: (t) => ({
    category: t.string({ description: "Only agents of this category, e.g. recruiting." }),
  }),
});

const AgentPage = definePage("Agent", "AgentPage", {
  // An agent without published_at sorts first (NULLS FIRST when descending) and cannot name a
  // position by key: a page that ends on one has no nextCursor, and the next link uses offset.
  order: [
    { field: "publishedAt", direction: "desc", kind: "instant" },
    { field: "id", direction: "desc", kind: "uuid" },
  ],
  items: (ctx, query, page) =>
    ctx.prisma.agent.findMany({
      ...query,
      relationLoadStrategy: loadStrategy("Agent", query),
      where: page.where,
      orderBy: [{ publishedAt: "desc" }, { id: "desc" }],
      take: page.limit,
      skip: page.skip,
    }),
  total: (ctx, where) => ctx.prisma.agent.count({ where }),
});

builder.queryFields((t) => ({
  agents: t.field({
    ...pagedByLimit,
    type: AgentPage,
    description: "Published agents, newest first (published_at descending, then id descending).",
    args: { ...pageArgs, ...cursorArgs, filter: t.arg({ type: AgentFilter }) },
    resolve: (_root, args) => ({
      ...pageRequest(args),
      after: args.after,
      countKey: JSON.stringify(args.filter ?? null),
      where: args.filter?.category ? { ...listedAgentWhere, category: args.filter.category } : listedAgentWhere,
    }),
  }),
  agent: t.field({
    type: Agent,
    nullable: true,
    description: "A published or unlisted agent.",
    args: { slug: t.arg.string({ required: true }) },
    resolve: planned("Agent", (query, { slug }, ctx) =>
      ctx.prisma.agent.findFirst({ ...query, where: { slug, ...reachableAgentWhere } }),
    ),
  }),
}));
