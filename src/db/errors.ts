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

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, meta } = error as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown } } } };
  if (typeof code === "string" && UNAVAILABLE_PRISMA_CODES.has(code)) return true;
  const kind = meta?.driverAdapterError?.cause?.kind;
  if (typeof kind === "string" && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
  // The embedded database after close().
  return /PGlite is closed/i.test(error.message);
}
