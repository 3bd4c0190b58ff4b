// Runs a typed GraphQL operation against the read model in-process, compiled once
// (../graphql/compiled-operations.ts): no HTTP hop, no JSON round trip, the same schema and gates as
// /graphql. Errors become HttpErrors the REST error middleware renders in the documented shape.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { GraphQLError } from "graphql";
import { executeCompiled } from "../graphql/compiled-operations.ts";
import type { ContextFactory } from "../graphql/context.ts";
import { TotalNotReady } from "../graphql/totals.ts";
import { databaseUnavailable, HttpError } from "../errors.ts";

/** GraphQL arguments whose REST parameter has another name. */
const PARAMETER_OF: Record<string, string> = {
  after: "cursor",
  salaryMin: "salary_min",
  salaryCurrency: "salary_currency",
  salaryPeriod: "salary_period",
  facetLimit: "limit",
  salaryInterval: "salary_interval",
  radiusKm: "radius_km",
};

/** The error to throw for a failed operation: a 400 for a bad argument, else the fault itself. */
function failure(error: GraphQLError): Error {
  // A compiled operation's error has no extensions unless what was thrown had some.
  const extensions = error.extensions ?? {};
  if (extensions["code"] === "BAD_USER_INPUT") {
    const argument = extensions["argument"];
    if (typeof argument !== "string") return new HttpError(400, "invalid_request", error.message);
    return new HttpError(400, `invalid_${PARAMETER_OF[argument] ?? argument}`, error.message);
  }
  if (extensions["code"] === "SINCE_EXPIRED") return new HttpError(410, "since_expired", error.message);
  // A first count still running is the same kind of wait (and code) as a database that cannot be
  // reached, but the database is fine.
  if (error.originalError instanceof TotalNotReady) {
    return databaseUnavailable("This list's total is still being counted; retry shortly.");
  }
  // A database that cannot be reached becomes 503 database_unavailable in the app's dependency
  // faults (src/http/health.ts); anything else is a fault of ours: the error middleware logs it
  // and answers a masked 500.
  return error.originalError ?? error;
}

export async function runOperation<Result, Variables extends Record<string, unknown>>(
  context: ContextFactory,
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Result> {
  const result = await executeCompiled(document, variables, context());
  const [first] = result.errors ?? [];
  if (first) throw failure(first);
  return result.data as Result;
}
