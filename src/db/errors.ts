// Which database errors mean "the database is not there right now" (answer 503 and let the
// client retry) rather than a fault in our code (answer 500 and log).
const UNAVAILABLE_PRISMA_CODES = new Set([
  "P1001", // can't reach the server
  "P1002", // the server timed out
  "P1008", // operation timed out
  "P1017", // the server closed the connection
  "P2024", // timed out waiting for a pool connection
]);

const UNAVAILABLE_ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "DatabaseDoesNotExist",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TransactionAlreadyClosed",
]);

// SQLSTATEs the server answers when it cannot serve now, which a client may retry: a statement over
// statement_timeout (57014, an overloaded or stuck server); shutting down, starting up, a crash
// recovery, a dropped or idle-ended session (57P01-57P05); a database not accepting connections
// (55000: ALLOW_CONNECTIONS false, as during a failover or maintenance; issue 39); a read-only
// server, e.g. a primary demoted by a failover (25006); insufficient resources (class 53: a full
// disk, out of memory, too many connections); a serialization failure or deadlock (40001, 40P01);
// and connection exceptions (class 08).
const UNAVAILABLE_SQLSTATES = /^(57014|57P0[1-5]|55000|25006|53\w{3}|40001|40P01|08\w{3})$/;

// What node-postgres itself throws (these reach us unwrapped through the driver adapter): the
// client's statement limit (./query-deadline.ts ends the connection: "Connection terminated"; node-postgres'
// own query_timeout says "Query read timeout"), the pool's connection timeout, a connection that ended or broke.
const UNAVAILABLE_MESSAGES =
  /Query read timeout|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|is not queryable|Can't reach database server|PGlite is closed/i;

const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH"]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, meta } = error as {
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } };
  };
  if (typeof code === "string" && (UNAVAILABLE_PRISMA_CODES.has(code) || SOCKET_CODES.has(code))) return true;
  // node-postgres' own error for a statement the server refused: the SQLSTATE is its code.
  if (typeof code === "string" && UNAVAILABLE_SQLSTATES.test(code)) return true;
  const cause = meta?.driverAdapterError?.cause;
  if (typeof cause?.kind === "string" && UNAVAILABLE_ADAPTER_KINDS.has(cause.kind)) return true;
  if (typeof cause?.originalCode === "string" && UNAVAILABLE_SQLSTATES.test(cause.originalCode)) return true;
  // The embedded database after close() says "PGlite is closed".
  return UNAVAILABLE_MESSAGES.test(error.message);
}

/**
 * What a client is told of a database it may retry: a statement past its time limit (57014, or
 * node-postgres' own read timeout) is an answer that took too long, not a database out of reach.
 */
export function unavailableMessage(error: unknown): string {
  if (error instanceof Error) {
    const { code, meta } = error as {
      code?: unknown;
      meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
    };
    const states = [code, meta?.driverAdapterError?.cause?.originalCode];
    if (states.includes("57014") || /Query read timeout/i.test(error.message)) {
      return "The database did not answer in time; retry shortly.";
    }
  }
  return "The database is not reachable; retry shortly.";
}
