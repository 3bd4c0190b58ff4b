// /graphql's limit on what one operation may answer (./cost.ts): an operation whose answer can
// hold more rows or field values than allowed is refused before it executes, with a 400 and the
// stable code QUERY_LIMIT_EXCEEDED, so a client learns the figures and no resolver or statement runs.
// It runs at execution, not validation: the size of a list may come from a variable, and yoga
// caches validation by the document's text alone.
import { GraphQLError, type ExecutionArgs } from "graphql";
import type { Plugin } from "graphql-yoga";
import { operationCost, type OperationCost } from "./cost.ts";

export interface CostLimits {
  /** Most rows (objects) an answer may hold. */
  maxRows: number;
  /** Most field values an answer may hold. */
  maxCost: number;
}

/** The limits when the configuration sets none (GRAPHQL_MAX_ROWS, GRAPHQL_MAX_COST in src/config/env.ts). */
export const DEFAULT_COST_LIMITS: CostLimits = { maxRows: 5_000, maxCost: 50_000 };

const figure = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "too many");

/** The refusal of an operation over a limit, naming both figures and both limits; null when within them. */
export function costRefusal(estimate: OperationCost, limits: CostLimits): GraphQLError | null {
  const over = estimate.rows > limits.maxRows ? "rows" : estimate.cost > limits.maxCost ? "cost" : null;
  if (!over) return null;
  const upTo = estimate.partial ? "more than" : "up to";
  const message =
    `This query can answer ${upTo} ${figure(estimate.rows)} rows and ${figure(estimate.cost)} field values; ` +
    `the limits are ${figure(limits.maxRows)} rows and ${figure(limits.maxCost)} field values. ` +
    "Each list multiplies what it nests by its limit: lower the limits or nest fewer lists.";
  return new GraphQLError(message, {
    extensions: {
      code: "QUERY_LIMIT_EXCEEDED",
      limit: over,
      rows: estimate.rows,
      maxRows: limits.maxRows,
      cost: estimate.cost,
      maxCost: limits.maxCost,
      http: { status: 400 },
    },
  });
}

export function useCostLimit(limits: CostLimits): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { schema, document, operationName, variableValues } = args as ExecutionArgs;
      const estimate = operationCost(schema, document, {
        operationName,
        variables: variableValues as Record<string, unknown> | null | undefined,
        stopAbove: limits,
      });
      const refusal = costRefusal(estimate, limits);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
