// Operations compiled once with graphql-jit: a compiled query resolves and completes its fields
// with generated code instead of graphql-js's per-field walk (argument coercion, resolve info and
// completion checks for every field of every row). The REST routes run their operations here;
// /graphql gets the same through @envelop/graphql-jit (./yoga.ts). Each operation is costed at
// its maximum limits when first compiled (./cost.ts): a REST operation that could answer more
// than /graphql's default limits allow is a fault of ours, refused before it ever runs.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { DocumentNode, ExecutionResult } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import type { GraphQLContext } from "./context.ts";
import { operationCost } from "./cost.ts";
import { costRefusal, DEFAULT_COST_LIMITS } from "./cost-limit.ts";
import { schema } from "./schema.ts";

// Keyed by the document object: the REST operations are module constants, compiled on first use.
const compiled = new WeakMap<object, CompiledQuery>();

function compiledQuery(document: DocumentNode): CompiledQuery {
  let query = compiled.get(document);
  if (!query) {
    const result = compileQuery(schema, document);
    // An operation that does not compile is a fault of ours (codegen checked it against the schema).
    if (!isCompiledQuery(result)) throw new Error(`operation does not compile: ${JSON.stringify(result.errors)}`);
    const refusal = costRefusal(operationCost(schema, document, { worstCase: true }), DEFAULT_COST_LIMITS);
    if (refusal) throw new Error(`operation over the cost limits: ${refusal.message}`);
    query = result;
    compiled.set(document, query);
  }
  return query;
}

export async function executeCompiled<Result, Variables extends Record<string, unknown>>(
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
  context: GraphQLContext,
): Promise<ExecutionResult<Result>> {
  const query = compiledQuery(document);
  return (await query.query(undefined, context, variables)) as ExecutionResult<Result>;
}
