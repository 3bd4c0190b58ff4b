// Offset paging shared by every list: arguments with the documented bounds, and a page object
// whose items are loaded with the planner's query (so nested relations are preloaded) and whose
// total is counted only when asked for.
import { GraphQLError } from "graphql";
import type PrismaTypes from "../generated/pothos-prisma-types.ts";
import type { GraphQLContext } from "./context.ts";
import { builder } from "./builder.ts";

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 100;

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<Where> extends PageRequest {
  where: Where;
  /** Names the list and its filter (not the request's instant): the key of its remembered total. */
  countKey: string;
}

export function badArgument(argument: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT", argument } });
}

/** Validates limit and offset; the bounds are part of the public contract. */
export function pageRequest(args: { limit?: number | null; offset?: number | null }): PageRequest {
  const limit = args.limit ?? PAGE_LIMIT_DEFAULT;
  const offset = args.offset ?? 0;
  if (limit < 1 || limit > PAGE_LIMIT_MAX) {
    throw badArgument("limit", `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}`);
  }
  if (offset < 0) throw badArgument("offset", "offset must be an integer of at least 0");
  return { limit, offset };
}

export const pageArgs = builder.args((t) => ({
  limit: t.int({ defaultValue: PAGE_LIMIT_DEFAULT, description: `Page size, 1 to ${PAGE_LIMIT_MAX}.` }),
  offset: t.int({ defaultValue: 0, description: "Rows to skip, at least 0." }),
}));

type Model = keyof PrismaTypes;
type Where<M extends Model> = PrismaTypes[M]["Where"];
type PlannedQuery<M extends Model> = { include?: PrismaTypes[M]["Include"]; select?: PrismaTypes[M]["Select"] };

export interface PageLoader<M extends Model> {
  items(ctx: GraphQLContext, query: PlannedQuery<M>, page: Page<Where<M>>): Promise<PrismaTypes[M]["Shape"][]>;
  total(ctx: GraphQLContext, where: Where<M>): Promise<number>;
}

/** A page object type `<Name>` over model M: items, total, limit, offset. */
export function definePage<M extends Model>(model: M, name: string, load: PageLoader<M>) {
  return builder.objectRef<Page<Where<M>>>(name).implement({
    description: `A page of ${model} items in the documented list order.`,
    fields: (t) => ({
      items: t.prismaField({
        type: [model] as [Model],
        resolve: (query, page, _args, ctx) => load.items(ctx, query as PlannedQuery<M>, page) as never,
      }),
      total: t.int({
        description: "Rows matching the request, ignoring limit and offset.",
        resolve: (page, _args, ctx) =>
          ctx.totals
            ? ctx.totals.count(`${name}:${page.countKey}`, (prisma) => load.total({ ...ctx, prisma }, page.where))
            : load.total(ctx, page.where),
      }),
      limit: t.exposeInt("limit"),
      offset: t.exposeInt("offset"),
    }),
  });
}
