// The GraphQL endpoint for internal teams: the read-model schema behind graphql-yoga, with
// query limits (depth, aliases, tokens, and the rows and field values an answer may hold:
// ./cost-limit.ts), masked unexpected errors, operations compiled with
// graphql-jit. The explorer page is ./explorer.ts.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { GraphQLError, type ValidationRule } from "graphql";
import { createYoga, maskError, type Plugin } from "graphql-yoga";
import type { Config } from "../config/env.ts";
import { isDatabaseUnavailable, unavailableMessage } from "../db/errors.ts";
import { DEPENDENCY_RETRY_SECONDS, retryAfter } from "../errors.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Logger } from "../logger.ts";
import { contextFactory } from "./context.ts";
import { useCostLimit } from "./cost-limit.ts";
import { refuseNulInStrings } from "./nul-input.ts";
import { schema } from "./schema.ts";
import type { SqlRunner } from "./sql.ts";
import type { TotalsCache } from "./totals.ts";

const defaultQuery = `# The public catalog. Every list is paged with limit (1-100) and offset.
query LatestJobs {
  jobs(limit: 5, filter: { workModel: [REMOTE] }) {
    total
    items {
      slug
      title
      workModel
      salary { min max currency period }
      company { name slug }
      skills { name category }
    }
  }
}
`;

/** The explorer page's title and first query (./explorer.ts). */
export const EXPLORER = { title: "Marketplace catalog · GraphQL explorer", defaultQuery };

/** graphql-js gives parse and validation errors no code; every error here gets a stable one. */
function withCode<E extends { extensions: Record<string, unknown> }>(error: E, code: string): E {
  if (error.extensions["code"] === undefined) Object.assign(error.extensions, { code });
  return error;
}

/**
 * graphql-js 16 validates a mutation against a schema without mutations and then fails to execute
 * it (a 500 with a stack trace in development, issue 25); graphql 17 has this rule built in.
 */
const KnownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`The catalog is read-only: this schema has no ${node.operation} type; send a query.`, {
        nodes: node,
      }),
    );
  },
});

const stableErrorCodes: Plugin = {
  onParse:
    () =>
    ({ result }) => {
      if (result instanceof GraphQLError) withCode(result, "GRAPHQL_PARSE_FAILED");
    },
  onValidate: ({ addValidationRule }) => {
    addValidationRule(KnownOperationTypes);
    return ({ result }) => {
      for (const error of result) withCode(error, "GRAPHQL_VALIDATION_FAILED");
    };
  },
};

/**
 * A database that cannot be reached is not our fault and worth retrying: the answer keeps GraphQL's
 * shape ({errors: [...]}, code DATABASE_UNAVAILABLE) with HTTP status 503 and Retry-After, which
 * GraphQL over HTTP allows. Every other unexpected error is masked as usual.
 */
function maskErrorUnlessUnavailable(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (!isDatabaseUnavailable(original)) return maskError(error, message, isDev);
  const located = error instanceof GraphQLError ? error : null;
  return new GraphQLError(unavailableMessage(original), {
    ...(located
      ? { nodes: located.nodes, source: located.source, positions: located.positions, path: located.path }
      : {}),
    extensions: { code: "DATABASE_UNAVAILABLE", http: { status: 503, headers: retryAfter(DEPENDENCY_RETRY_SECONDS) } },
  });
}

/** Armor's rejections (depth, aliases, cost, tokens, directives) share one code. */
const limitExceeded = [(_ctx: unknown, error: GraphQLError) => void withCode(error, "QUERY_LIMIT_EXCEEDED")];

/**
 * graphql-yoga logs `(message)`, `(error)` or a mix: the error goes under `err` (pino serializes it,
 * src/logger.ts adds its `stack_trace`) and the strings become the line's message.
 */
function yogaLog(logger: Logger, level: "debug" | "info" | "warn" | "error") {
  return (...args: unknown[]) => {
    const err = args.find((arg): arg is Error => arg instanceof Error);
    const text = args.filter((arg) => typeof arg === "string").join(" ");
    const message = text || (err ? `graphql-yoga: ${err.message}` : "graphql-yoga");
    logger[level](err ? { err } : {}, message);
  };
}

export function createGraphQLServer(options: {
  prisma: PrismaClient;
  /** The same database's plain SQL, for the reads that run their own statement (./sql.ts). */
  sql: SqlRunner | null;
  config: Config;
  logger: Logger;
  /** The app's cache of list totals, shared with REST; null counts every time. */
  totals: TotalsCache | null;
}) {
  const { config, prisma, logger } = options;
  return createYoga({
    schema,
    graphqlEndpoint: "/graphql",
    context: contextFactory({ prisma, sql: options.sql, totals: options.totals }),
    // The explorer page is served before yoga, compressed and under a CSP (./explorer.ts).
    graphiql: false,
    landingPage: false,
    batching: false,
    maskedErrors: { isDev: config.env === "development", maskError: maskErrorUnlessUnavailable },
    logging: {
      debug: yogaLog(logger, "debug"),
      info: yogaLog(logger, "info"),
      warn: yogaLog(logger, "warn"),
      error: yogaLog(logger, "error"),
    },
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: config.graphql.maxDepth, onReject: limitExceeded },
        maxAliases: { n: config.graphql.maxAliases, onReject: limitExceeded },
        // Armor's cost weighs each field once, whatever list it sits in: ./cost-limit.ts instead.
        costLimit: { enabled: false },
        maxTokens: { n: config.graphql.maxTokens, onReject: limitExceeded },
        maxDirectives: { n: 10, onReject: limitExceeded },
        // Suggestions would let a client map the schema with introspection turned off.
        blockFieldSuggestion: { enabled: config.env === "production" },
      }),
      stableErrorCodes,
      refuseNulInStrings,
      useCostLimit({ maxRows: config.graphql.maxRows, maxCost: config.graphql.maxCost }),
      // Executes each parsed document compiled once (see ./compiled-operations.ts); the compiled form goes
      // with yoga's parsed-document cache, and armor's limits above bound what gets compiled.
      useGraphQlJit(),
    ],
  });
}

export type GraphQLServer = ReturnType<typeof createGraphQLServer>;
