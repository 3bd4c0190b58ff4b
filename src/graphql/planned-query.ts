// The Prisma query a field's selection asks for (Pothos' planner, @pothos/plugin-prisma), planned
// once per place in an operation instead of once per request. `t.prismaField` walks the field's
// selection set, calls every select function beneath it and folds the result into a query on every
// call: about a tenth of the CPU of GET /api/v1/jobs/{slug}. The REST and MCP operations are module
// constants (compiled once, ./compiled-operations.ts) and /graphql's documents come from yoga's
// parse cache, so the same selection comes back with the same AST nodes request after request.
//
// A plan is kept only when it cannot differ between two requests: it is a function of the AST,
// the schema and what its select functions read of the context and the variables. Planning runs
// behind watches on both; a plan that read either (a company's open jobs read the request's
// instant and their limit) is not kept, and that place is planned per request from then on, as
// Pothos does. A kept plan is replayed as Pothos replays its own (fallbackQueryFromInfo): a fresh
// query from the settled node, and its mappings recorded on this request's context, so the fields
// beneath find the data the query loaded.
import { isThenable } from "@pothos/core";
import { queryFromInfo } from "@pothos/plugin-prisma";
import { Plan, setLoaderMappings, type Mappings } from "@pothos/selection-mapper";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type PrismaTypes from "../generated/pothos-prisma-types.ts";
import type { GraphQLContext } from "./context.ts";

type Model = keyof PrismaTypes;
/** The query the planner gives a field of model M: Prisma's select (or include) for its rows. */
export type PlannedQuery<M extends Model> = { include?: PrismaTypes[M]["Include"]; select?: PrismaTypes[M]["Select"] };

// The planner's adapter for Prisma is a module of the plugin that its package does not export
// (its index plans through it, as `queryFromInfo`); the same module instance, by its resolved path.
type PrismaAdapter = Parameters<typeof Plan.fromInfo>[0];
const adapterModule = new URL("./util/adapter.js", import.meta.resolve("@pothos/plugin-prisma"));
const { prismaAdapter } = (await import(adapterModule.href)) as { prismaAdapter?: PrismaAdapter };

/** A settled play of a plan that depends on nothing but its place in the operation. */
interface Played {
  root: unknown;
  mappings: Mappings;
}

/** A kept play with its query, written once and frozen: every request of the place shares it. */
interface Kept extends Played {
  query: object;
}

/** One place: the field's nodes (graphql merges every occurrence of a response key) and its parent type. */
interface Place {
  nodes: readonly FieldNode[];
  parentType: string;
  /** null: this place's plan reads the context or the variables, so it is planned per request. */
  kept: Kept | null;
}

const places = new WeakMap<FieldNode, Place[]>();

function placeOf(info: GraphQLResolveInfo): Place | undefined {
  const nodes = info.fieldNodes;
  return places
    .get(nodes[0]!)
    ?.find(
      (p) =>
        p.parentType === info.parentType.name &&
        p.nodes.length === nodes.length &&
        p.nodes.every((node, i) => node === nodes[i]),
    );
}

/** Whether a plan is kept; false leaves every field to Pothos (tests compare both). */
let keeping = prismaAdapter !== undefined;
export function keepPlans(on: boolean): void {
  keeping = on && prismaAdapter !== undefined;
}

/** How many places have a kept plan, and how many are planned per request (tests). */
export const planCounts = { kept: 0, perRequest: 0 };

/** What the field `info` resolves needs loaded: Pothos' query for it, planned once where it can be. */
export function plannedQuery<M extends Model>(
  context: GraphQLContext,
  info: GraphQLResolveInfo,
): PlannedQuery<M> | Promise<PlannedQuery<M>> {
  if (!keeping || !prismaAdapter) return queryFromInfo({ context, info, awaitSelections: true });
  const place = placeOf(info);
  if (place?.kept) {
    setLoaderMappings(context, info, place.kept.mappings);
    return place.kept.query;
  }
  if (place) return queryFromInfo({ context, info, awaitSelections: true });
  return planPlace(prismaAdapter, context, info);
}

/** Plans a place for the first time, behind watches on the context and the variables, and keeps it if neither was read. */
function planPlace(adapter: PrismaAdapter, context: GraphQLContext, info: GraphQLResolveInfo): object {
  let read = false;
  const onRead = () => (read = true);
  // The same info with the variables behind the watch (graphql-jit's and graphql-js's are plain objects).
  const variables = info.variableValues as Record<string, unknown> | null | undefined;
  const info$ = { ...info, variableValues: variables ? watched(variables, onRead) : variables } as GraphQLResolveInfo;
  const plan = Plan.fromInfo(adapter, { context: watched(context, onRead), info: info$, skipDeferredFragments: true });
  const place: Place = { nodes: info.fieldNodes, parentType: info.parentType.name, kept: null };
  places.set(info.fieldNodes[0]!, [...(places.get(info.fieldNodes[0]!) ?? []), place]);
  if (!plan) return {};
  // A select function that answered with a promise (none of ours does): never kept.
  if (isThenable(plan))
    return Promise.resolve(plan as PromiseLike<{ play(): Played }>).then((p) =>
      played(adapter, context, info, p.play()),
    );
  const play = plan.play();
  planCounts[read ? "perRequest" : "kept"]++;
  if (read) return played(adapter, context, info, play);
  place.kept = { ...play, query: deepFreeze(adapter.toQuery(play.root as never) as object) };
  setLoaderMappings(context, info, play.mappings);
  return place.kept.query;
}

/** The query of a play, its mappings recorded on this request's context for the fields beneath. */
function played(adapter: PrismaAdapter, context: GraphQLContext, info: GraphQLResolveInfo, play: Played): object {
  setLoaderMappings(context, info, play.mappings);
  return adapter.toQuery(play.root as never) as object;
}

/**
 * A kept query is shared by every request of its place: frozen, so a resolver that changed it
 * instead of spreading it would throw rather than change the next request's query. Lets the
 * readers of a query remember what they made of it by its identity (./types/job/rows-sql.ts).
 */
function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value))
    if (typeof inner === "object" && inner !== null) deepFreeze(inner as object);
  return Object.freeze(value);
}

/**
 * `target` behind a proxy that calls `onRead` when a property is read, tested or listed. Symbols
 * are Pothos' own bookkeeping (its per-request caches key on the context), not what a select reads.
 */
function watched<T extends object>(target: T, onRead: () => void): T {
  const named = (key: string | symbol) => {
    if (typeof key === "string") onRead();
  };
  return new Proxy(target, {
    get(t, key) {
      named(key);
      return Reflect.get(t, key) as unknown;
    },
    has(t, key) {
      named(key);
      return Reflect.has(t, key);
    },
    getOwnPropertyDescriptor(t, key) {
      named(key);
      return Reflect.getOwnPropertyDescriptor(t, key);
    },
    ownKeys(t) {
      onRead();
      return Reflect.ownKeys(t);
    },
  });
}

const derivations = new WeakMap<object, Map<unknown, unknown>>();

/**
 * What `make` derives from a query, remembered per `key` when the query is a kept one (frozen:
 * the same object, with the same content, for every request of its place); made afresh otherwise.
 */
export function derivedFrom<T>(query: object, key: unknown, make: () => T): T {
  if (!Object.isFrozen(query)) return make();
  let derived = derivations.get(query);
  if (!derived) derivations.set(query, (derived = new Map()));
  if (!derived.has(key)) {
    const value = make();
    // A query derived from a kept one is kept too: frozen, so what is derived from it is remembered.
    derived.set(key, typeof value === "object" && value !== null ? deepFreeze(value) : value);
  }
  return derived.get(key) as T;
}

/**
 * A root field's resolver that loads `model` with the planner's query, as Pothos's
 * `t.prismaField` hands `query` to its resolver first: `resolve: planned("Skill", (query, { slug },
 * ctx) => ctx.prisma.skill.findUnique({ ...query, where: { slug } }))`. The row a planned query
 * loads is the field's shape, which Prisma's types cannot say for a query built at run time: the
 * one cast of it is here.
 */
export function planned<M extends Model, Args>(
  _model: M,
  load: (query: PlannedQuery<M>, args: Args, ctx: GraphQLContext) => Promise<unknown>,
) {
  // never: the field's shape, whichever it is (an object, a list of them, or null).
  return async (_root: unknown, args: Args, ctx: GraphQLContext, info: GraphQLResolveInfo): Promise<never> =>
    (await load(await plannedQuery<M>(ctx, info), args, ctx)) as never;
}
