// Paging shared by every list: arguments with the documented bounds, and a page object whose
// items are loaded with the planner's query (so nested relations are preloaded) and whose total is
// counted only when asked for. Lists with a keyset order also continue by cursor: `nextCursor`
// names the last row served, and `after` seeks past it on the list's index, so following pages
// costs the same at any depth while `offset` keeps working for random access.
import { getRefFromModel } from "@pothos/plugin-prisma";
import { GraphQLError } from "graphql";
import type PrismaTypes from "../generated/pothos-prisma-types.ts";
import { getDatamodel } from "../generated/pothos-prisma-types.ts";
import type { GraphQLContext } from "./context.ts";
import { builder } from "./builder.ts";
import { listSize } from "./cost.ts";
import { decodeCursor, encodeCursor, type KeyKind, type KeyValue } from "./cursor.ts";
import { derivedFrom, plannedQuery, type PlannedQuery } from "./planned-query.ts";
import type { SqlCondition } from "./sql.ts";
import type { CountAtMost, Total } from "./totals.ts";

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 100;
/**
 * How deep an offset reaches into a search (a list with words): offset + limit at most this. A
 * deep offset page of a broad reading sorts every match past its walk (`q=ö&remote=true&offset=2000`:
 * 170,000 remote jobs, past the statement limit at a million jobs, a 503); as Algolia's, Meilisearch's
 * and GitHub's searches do, offsets reach the first thousand matches, and the cursor (`next`) any
 * depth, seeking after the last row at the same cost on every page.
 */
export const SEARCH_OFFSET_WINDOW = 1_000;

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<Where> extends PageRequest {
  where: Where;
  /** Names the list and its filter (not the request's instant): the key of its remembered total. */
  countKey: string;
  /** The `after` argument as given; decoded by the page type, which knows its list and order. */
  after?: string | null;
  /** This request's order, when the list offers more than its default one. */
  order?: ListOrder;
  /** `where` in SQL, for a list whose rows can be read by a statement of its own (./sql.ts). */
  sqlWhere?: SqlCondition;
  /**
   * The filter or the order has a condition Prisma cannot express (a distance): `where` is then only
   * a superset, and rows, totals and bounds are taken through `sqlWhere`.
   */
  sqlOnly?: boolean;
  /** What an order computed per request needs (the words of q, a place), passed to the list's loader. */
  ranking?: unknown;
  /** A point the rows' distance is measured from (a `near` filter), passed to the list's loader. */
  near?: { lat: number; lon: number; radiusKm: number };
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

/** The cost estimate's size of a field paged by `limit` (./cost.ts): its items count as `limit` rows each. */
export const pagedByLimit = listSize({ argument: "limit", max: PAGE_LIMIT_MAX });

/**
 * The size the cost estimate assumes for a list of tags, which has no limit (a job's skills, a
 * talent's links): well above what any row carries.
 */
export const TAGS_AT_MOST = 20;
export const tagList = listSize({ atMost: TAGS_AT_MOST });

export const pageArgs = builder.args((t) => ({
  limit: t.int({
    defaultValue: PAGE_LIMIT_DEFAULT,
    description: `Page size, 1 to ${PAGE_LIMIT_MAX}. Each item counts toward the operation's row limit, times the lists around it (see Query).`,
  }),
  offset: t.int({ defaultValue: 0, description: "Rows to skip, at least 0." }),
}));

/** `after`, for the root lists that continue by cursor. */
export const cursorArgs = builder.args((t) => ({
  after: t.string({
    description:
      "A page's nextCursor: continue after its last item by seeking on the list's order (constant cost at any depth). The cursor stands for its offset; offset may be left out or must equal it.",
  }),
}));

type Model = keyof PrismaTypes;
type Where<M extends Model> = PrismaTypes[M]["Where"];

/** A list's order, whatever its model: the columns, the last one unique. */
export type ListOrder = readonly { field: string; direction: "asc" | "desc"; kind: KeyKind }[];

/** A list order column; the last one must be unique so that the order is total. */
export interface OrderField<M extends Model> {
  field: keyof PrismaTypes[M]["Shape"] & string;
  direction: "asc" | "desc";
  /** What the column holds: a cursor's key is checked against it. */
  kind: KeyKind;
}

/** Where a page's rows come from: the filter (and the seek past a cursor's row), skip and take. */
export interface PageWindow<Where> {
  where: Where;
  /** Rows to skip: the offset, or 0 for a page reached by cursor, which seeks instead. */
  skip: number;
  limit: number;
  /** The offset the page stands for. */
  offset: number;
  /** The page's order: the request's, else the list's default. */
  order?: ListOrder;
  /** The page's filter in SQL, when its list has one; `where`'s seek is `seek` there. */
  sqlWhere?: SqlCondition;
  /** For a page reached by cursor: the order key of the row it continues after. */
  seek?: KeyValue[];
  /** As Page.sqlOnly, Page.ranking and Page.near. */
  sqlOnly?: boolean;
  ranking?: unknown;
  near?: { lat: number; lon: number; radiusKm: number };
}

export interface PageLoader<M extends Model> {
  /** The list's order, when it continues by cursor (every column non-null, the last unique). */
  order?: readonly OrderField<M>[];
  items(ctx: GraphQLContext, query: PlannedQuery<M>, page: PageWindow<Where<M>>): Promise<PrismaTypes[M]["Shape"][]>;
  total(ctx: GraphQLContext, where: Where<M>, page: Page<Where<M>>): Promise<number>;
  /**
   * How to count at most `cap` matching rows, for a list large enough that an exact first count can
   * take longer than a request should wait: the request then answers with a lower bound (see
   * ./totals.ts). null for a filter whose exact count is cheap anyway.
   */
  countAtMost?(where: Where<M>, now: Date, page: Page<Where<M>>): CountAtMost | null;
}

const toManyRelations = new Map<string, Set<string>>(
  Object.entries(getDatamodel().datamodel.models).map(([model, { fields }]) => [
    model,
    new Set(fields.filter((f) => f.kind === "object" && f.isList).map((f) => f.name)),
  ]),
);

/**
 * How Prisma loads a page's relations. "join" (relationJoins) answers a row with its to-one
 * relations in one statement; for a list that nests a to-many relation (a page of jobs with their
 * skills) PostgreSQL aggregates the JSON per row, which measured 2x slower at 50 rows than one
 * statement per relation ("query").
 */
export function loadStrategy(model: Model, query: { select?: object; include?: object }): "join" | "query" {
  const many = toManyRelations.get(model);
  const nested = Object.keys(query.select ?? query.include ?? {});
  return nested.some((name) => many?.has(name)) ? "query" : "join";
}

/** Prisma's `where` for the rows after `key` in `order`: an index range, then the tie excluded. */
function seekWhere<M extends Model>(order: readonly OrderField<M>[], key: KeyValue[]): Where<M> {
  const [first, ...rest] = order;
  const value = key[0];
  if (!first || value === undefined) return {};
  const after = first.direction === "desc" ? "lt" : "gt";
  if (rest.length === 0) return { [first.field]: { [after]: value } };
  // (a, b) after (x, y) is a ≤ x (an index range) and not (a = x and b at or before y), written
  // without a row comparison, which Prisma cannot express.
  const within = first.direction === "desc" ? "lte" : "gte";
  return {
    AND: [{ [first.field]: { [within]: value } }, { NOT: { [first.field]: value, ...tieUpTo(rest, key.slice(1)) } }],
  };
}

/** The rows of a tie on the leading columns that come at or before the key's. */
function tieUpTo(rest: readonly { field: string; direction: "asc" | "desc" }[], key: KeyValue[]): object {
  const [next, ...more] = rest;
  const value = key[0];
  if (!next || value === undefined) return {};
  const upTo = next.direction === "desc" ? "gte" : "lte";
  if (more.length === 0) return { [next.field]: { [upTo]: value } };
  return {
    OR: [
      { [next.field]: { [upTo === "gte" ? "gt" : "lt"]: value } },
      { [next.field]: value, ...tieUpTo(more, key.slice(1)) },
    ],
  };
}

interface Resolved<W> {
  window: PageWindow<W>;
  rows?: Promise<Record<string, unknown>[]>;
}

/**
 * What a cursor is bound to: the filter, and the order when it is not the default one (so a
 * cursor of one order is refused by another, and the default order's cursors stay as they were).
 */
function cursorScope(page: Page<unknown>, order: ListOrder): string {
  return page.order
    ? `${page.countKey}\u0000${order.map((o) => `${o.direction === "desc" ? "-" : ""}${o.field}`).join(",")}`
    : page.countKey;
}

/** The window of list `name`'s page in `order`, its cursor decoded; a bad cursor is a BAD_USER_INPUT on `after`. */
function windowFor<M extends Model>(
  name: string,
  page: Page<Where<M>>,
  order: ListOrder | undefined,
): Resolved<Where<M>> {
  if (page.after == null) {
    const { where, sqlWhere, sqlOnly, ranking, near, offset, limit } = page;
    return { window: { where, sqlWhere, sqlOnly, ranking, near, skip: offset, limit, offset, order } };
  }
  if (!order) throw badArgument("after", `${name} does not continue by cursor; use offset`);
  const cursor = decodeCursor(
    name,
    cursorScope(page, order),
    page.after,
    order.map((o) => o.kind),
  );
  if (page.offset !== 0 && page.offset !== cursor.offset) {
    throw badArgument(
      "after",
      `The cursor stands for offset ${cursor.offset}, but offset ${page.offset} was given; give one or the other`,
    );
  }
  const where = { AND: [page.where, seekWhere(order as readonly OrderField<M>[], cursor.key)] } as Where<M>;
  const seek = {
    sqlWhere: page.sqlWhere,
    sqlOnly: page.sqlOnly,
    ranking: page.ranking,
    near: page.near,
    seek: cursor.key,
  };
  return { window: { where, skip: 0, limit: page.limit, offset: cursor.offset, order, ...seek } };
}

/** The query with the order columns added, so the last row can name its position (a kept query's, frozen, once per order). */
function withKeys<M extends Model>(query: PlannedQuery<M>, order: ListOrder | undefined): PlannedQuery<M> {
  if (!order || !query.select) return query;
  const select = query.select;
  return derivedFrom(query, order, () => ({
    ...query,
    select: { ...select, ...Object.fromEntries(order.map((o) => [o.field, true])) },
  }));
}

/** The cursor after the last row of a full page; null on the last page. */
function cursorAfter(
  name: string,
  page: Page<unknown>,
  window: PageWindow<unknown>,
  rows: Record<string, unknown>[],
): string | null {
  const order = window.order!;
  const last = rows.length === page.limit ? rows[rows.length - 1] : undefined;
  if (!last) return null;
  const key: unknown[] = order.map((o) => last[o.field]);
  if (!key.every((v): v is KeyValue => ["string", "number"].includes(typeof v) || v instanceof Date)) return null;
  return encodeCursor(name, cursorScope(page, order), { offset: window.offset + rows.length, key });
}

/** A lower bound is at least the rows up to this page, and one more after a full page. */
async function totalShown(page: Page<unknown>, total: Total, r: Resolved<unknown>): Promise<number> {
  if (total.exact || !r.rows) return total.value;
  const rows = await r.rows;
  return Math.max(total.value, r.window.offset + rows.length + (rows.length === page.limit ? 1 : 0));
}

/** A page object type `<Name>` over model M: items, total, limit, offset (and nextCursor when ordered). */
export function definePage<M extends Model>(model: M, name: string, load: PageLoader<M>) {
  const resolved = new WeakMap<Page<Where<M>>, Resolved<Where<M>>>();
  const totals = new WeakMap<Page<Where<M>>, Promise<Total>>();

  /** The page's total, asked once for both of its fields. */
  function totalOf(page: Page<Where<M>>, ctx: GraphQLContext): Promise<Total> {
    let total = totals.get(page);
    if (!total) {
      total = ctx.totals
        ? ctx.totals.count(
            `${name}:${page.countKey}`,
            (prisma) => load.total({ ...ctx, prisma }, page.where, page),
            load.countAtMost?.(page.where, ctx.now, page),
          )
        : load.total(ctx, page.where, page).then((value) => ({ value, exact: true }));
      totals.set(page, total);
    }
    return total;
  }

  /** The page's window, decoded once (the page's order: the request's, else the list's). */
  function windowOf(page: Page<Where<M>>): Resolved<Where<M>> {
    let r = resolved.get(page);
    if (!r) resolved.set(page, (r = windowFor(name, page, page.order ?? load.order)));
    return r;
  }

  return builder.objectRef<Page<Where<M>>>(name).implement({
    description: `A page of ${model} items in the documented list order.`,
    fields: (t) => ({
      // t.prismaField, with the planner's query kept per place in the operation (./planned-query.ts).
      items: t.field({
        type: [getRefFromModel(model, builder)],
        ...listSize({ page: true }),
        resolve: (page, _args, ctx, info) => {
          const r = windowOf(page);
          const planned = plannedQuery<M>(ctx, info);
          const items = (query: PlannedQuery<M>) =>
            load.items(ctx, withKeys(query, r.window.order), r.window) as Promise<Record<string, unknown>[]>;
          // Started in this turn, so that nextCursor (one turn later) finds the rows already loading.
          const rows = planned instanceof Promise ? planned.then(items) : items(planned);
          r.rows = rows;
          return rows as never;
        },
      }),
      total: t.int({
        description: "Rows matching the request, ignoring limit and offset; a lower bound when totalExact is false.",
        resolve: async (page, _args, ctx) => totalShown(page, await totalOf(page, ctx), windowOf(page)),
      }),
      totalExact: t.boolean({
        description:
          "false while the first count of a new filter is still running: total is then a lower bound (1,000, or the rows up to this page and one more after a full page); a later request gets the exact total.",
        resolve: async (page, _args, ctx) => (await totalOf(page, ctx)).exact,
      }),
      limit: t.exposeInt("limit"),
      offset: t.int({
        description: "Rows before this page: as given, or the offset the `after` cursor stands for.",
        resolve: (page) => windowOf(page).window.offset,
      }),
      ...(load.order
        ? {
            nextCursor: t.string({
              nullable: true,
              description:
                "Pass as `after` for the next page (a seek, constant cost at any depth); null on the last page.",
              resolve: async (page, _args, ctx) => {
                // graphql-js starts every field of an object in one synchronous pass: one turn later
                // the sibling `items` (if asked for) has begun loading, and its rows are reused.
                await Promise.resolve();
                const r = windowOf(page);
                const keys = Object.fromEntries(r.window.order!.map((o) => [o.field, true]));
                const rows: Record<string, unknown>[] = await (r.rows ?? load.items(ctx, { select: keys }, r.window));
                return cursorAfter(name, page, r.window, rows);
              },
            }),
          }
        : {}),
    }),
  });
}
