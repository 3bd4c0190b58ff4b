// The cost of an operation before it runs, counted in what its answer can hold at the most: rows
// (objects: a job, its company, each of its skills) and field values. Lists multiply what they
// nest by their size: the `limit` argument as given (its default when left out, never more than
// its maximum), or, for a list without one, the bound its field declares. graphql-armor's cost
// limit weighs each field once whatever list it sits in, so a page of companies each with a page
// of jobs each with a page of companies... stayed under it while answering 38,152 jobs in 18 s.
//
// The estimate is a walk of the document (no resolver runs, no database): /graphql refuses an
// operation over either limit before executing it (./cost-limit.ts), and the REST operations are
// checked at their maximum limits when first compiled (./compiled-operations.ts).
//
// The walk is linear in the document, not in its expansion: a named fragment is costed once per
// type and page size, and each spread adds that cost multiplied (three levels of fragments, each
// spreading the next 320 times, were 32 million visits and held the event loop 4.9 s; issue 39).
// Given limits, it stops as soon as the total passes one of them.
import {
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

/**
 * How a list field's size is known, set on the field as `extensions.listSize` (see `listSize`):
 * - `argument`: the size is that argument (default as the schema says), at most `max`. On a field
 *   answering a page object, the size goes to the page's `items`.
 * - `page`: the list of a page object (`items`), as long as the field that made the page said.
 * - `atMost`: a list without a size argument (a job's skills): the bound the costing assumes.
 */
export type ListSize = { argument: string; max: number } | { page: true } | { atMost: number };

/** Field options that declare a list's size for the cost estimate. */
export const listSize = (size: ListSize) => ({ extensions: { listSize: size } });

export interface OperationCost {
  /** Objects the answer can hold at the most. */
  rows: number;
  /** Field values (objects included) the answer can hold at the most. */
  cost: number;
  /** Set when the walk stopped at a limit (stopAbove): the figures are then at least these. */
  partial?: true;
}

export interface CostOptions {
  operationName?: string | null;
  /** The request's variables, as sent; a size argument given by a missing one takes its default. */
  variables?: Record<string, unknown> | null;
  /** Every size argument at its maximum, whatever is given: what a fixed document can ever cost. */
  worstCase?: boolean;
  /** Stop counting once the total passes either (the total returned is then over it, not complete). */
  stopAbove?: { maxRows: number; maxCost: number };
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  /** Variable defaults from the operation's definitions. */
  defaults: Map<string, ValueNode>;
  worstCase: boolean;
  total: OperationCost;
  /** A named fragment's cost, once per (name, type, page size), for one pass over its selections. */
  fragmentCosts: Map<string, OperationCost>;
  /** The totals set aside while a fragment is costed alone, and the times each is added (innermost last). */
  outer: { total: OperationCost; times: number }[];
  stopAbove: { maxRows: number; maxCost: number } | null;
}

/** Thrown to end the walk once the total passed a limit, with the total then. */
class OverLimit extends Error {
  readonly total: OperationCost;
  constructor(total: OperationCost) {
    super("over a cost limit");
    this.total = total;
  }
}

/** A thrown fault of ours: a list field without a declared size (a schema test keeps this from shipping). */
export class UnsizedListError extends Error {}

export function operationCost(schema: GraphQLSchema, document: DocumentNode, options: CostOptions = {}): OperationCost {
  const operation = getOperationAST(document, options.operationName ?? undefined);
  const total = { rows: 0, cost: 0 };
  if (!operation) return total;
  const root = schema.getRootType(operation.operation);
  if (!root) return total;
  const walk: Walk = {
    schema,
    fragments: new Map(
      document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    ),
    variables: options.variables ?? {},
    defaults: new Map(
      (operation.variableDefinitions ?? []).flatMap((d) =>
        d.defaultValue ? [[d.variable.name.value, d.defaultValue] as const] : [],
      ),
    ),
    worstCase: options.worstCase ?? false,
    total,
    fragmentCosts: new Map(),
    outer: [],
    stopAbove: options.stopAbove ?? null,
  };
  try {
    visit(walk, operation.selectionSet, root, 1, null, new Set());
  } catch (error) {
    if (!(error instanceof OverLimit)) throw error;
    return { ...error.total, partial: true };
  }
  return walk.total;
}

/** The operation's total so far, counting what the fragments being costed alone have added. */
function effectiveTotal(walk: Walk): OperationCost {
  let { rows, cost } = walk.total;
  for (let i = walk.outer.length - 1; i >= 0; i--) {
    const { total, times } = walk.outer[i]!;
    [rows, cost] = [total.rows + times * rows, total.cost + times * cost];
  }
  return { rows, cost };
}

function add(walk: Walk, rows: number, cost: number): void {
  walk.total.rows += rows;
  walk.total.cost += cost;
  const limits = walk.stopAbove;
  if (!limits) return;
  const effective = walk.outer.length ? effectiveTotal(walk) : walk.total;
  if (effective.rows > limits.maxRows || effective.cost > limits.maxCost) throw new OverLimit(effective);
}

/** What a named fragment's selections answer once, on `type`, computed on first use. */
function fragmentCost(
  walk: Walk,
  name: string,
  fragment: FragmentDefinitionNode,
  type: GraphQLCompositeType,
  times: number,
  pageSize: number | null,
  spread: Set<string>,
): OperationCost {
  const key = `${name}\u0000${type.name}\u0000${pageSize}`;
  const known = walk.fragmentCosts.get(key);
  if (known) return known;
  walk.outer.push({ total: walk.total, times });
  walk.total = { rows: 0, cost: 0 };
  visit(walk, fragment.selectionSet, type, 1, pageSize, new Set([...spread, name]));
  const cost = walk.total;
  walk.total = walk.outer.pop()!.total;
  walk.fragmentCosts.set(key, cost);
  return cost;
}

/**
 * Adds what `selections` answer `times` times over. `pageSize` is the size the field above gave a
 * page object, for its `items`. `spread` holds the fragments being expanded (validation refuses
 * cycles; this keeps a walk of an unvalidated document finite).
 */
function visit(
  walk: Walk,
  selections: SelectionSetNode,
  parent: GraphQLCompositeType,
  times: number,
  pageSize: number | null,
  spread: Set<string>,
): void {
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      visitField(walk, selection, parent, times, pageSize, spread);
      continue;
    }
    const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : walk.fragments.get(selection.name.value);
    if (!fragment) continue;
    const name = selection.kind === Kind.FRAGMENT_SPREAD ? selection.name.value : null;
    if (name !== null && spread.has(name)) continue;
    const condition = fragment.typeCondition ? walk.schema.getType(fragment.typeCondition.name.value) : parent;
    const type = condition && isCompositeType(condition) ? condition : parent;
    if (name === null) {
      visit(walk, fragment.selectionSet, type, times, pageSize, spread);
      continue;
    }
    const once = fragmentCost(walk, name, fragment as FragmentDefinitionNode, type, times, pageSize, spread);
    add(walk, times * once.rows, times * once.cost);
  }
}

function visitField(
  walk: Walk,
  node: FieldNode,
  parent: GraphQLCompositeType,
  times: number,
  pageSize: number | null,
  spread: Set<string>,
): void {
  const name = node.name.value;
  if (name === "__typename") return add(walk, 0, times);
  // Introspection reads the schema in memory, bounded by the depth and token limits.
  if (name.startsWith("__") || !isObjectType(parent)) return;
  const field = parent.getFields()[name];
  if (!field) return;
  const named = getNamedType(field.type);
  if (!isCompositeType(named) || !node.selectionSet) return add(walk, 0, times);
  const { size, childPageSize } = sizeOf(walk, field, node, pageSize, parent.name);
  const count = times * size;
  add(walk, count, count);
  visit(walk, node.selectionSet, named, count, childPageSize, spread);
}

function sizeOf(
  walk: Walk,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  pageSize: number | null,
  parentName: string,
): { size: number; childPageSize: number | null } {
  const declared = field.extensions["listSize"] as ListSize | undefined;
  const isList = isListType(getNullableType(field.type));
  if (declared && "argument" in declared) {
    const n = argumentSize(walk, field, node, declared);
    return isList ? { size: n, childPageSize: null } : { size: 1, childPageSize: n };
  }
  if (!isList) return { size: 1, childPageSize: null };
  if (declared && "page" in declared) {
    if (pageSize === null) throw new UnsizedListError(`${parentName}.${field.name} is a page's list outside a page`);
    return { size: pageSize, childPageSize: null };
  }
  if (declared && "atMost" in declared) return { size: declared.atMost, childPageSize: null };
  throw new UnsizedListError(`${parentName}.${field.name} is a list without a declared size (extensions.listSize)`);
}

/** The size argument's value: as given (a literal or a variable), else its default; within 0..max. */
function argumentSize(
  walk: Walk,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  declared: { argument: string; max: number },
): number {
  if (walk.worstCase) return declared.max;
  const given = node.arguments?.find((a) => a.name.value === declared.argument)?.value;
  let value: unknown = field.args.find((a) => a.name === declared.argument)?.defaultValue;
  if (given?.kind === Kind.VARIABLE) {
    const variable = given.name.value;
    const fallback = walk.defaults.get(variable);
    if (walk.variables[variable] !== undefined) value = walk.variables[variable];
    else if (fallback) value = valueFromASTUntyped(fallback);
  } else if (given) value = valueFromASTUntyped(given);
  // Anything but an integer in range is refused when the field runs (no rows): counting it at the
  // maximum keeps the estimate an upper bound without judging the value here.
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? Math.min(value, declared.max)
    : declared.max;
}
