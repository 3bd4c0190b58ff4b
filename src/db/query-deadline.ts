// The client's own limit on one statement, for a server that no longer answers at all (the
// server's statement_timeout covers the rest). node-postgres' query_timeout does the same with a
// timer per statement, and under load those timers made V8 keep most of every request's rows past
// a scavenge: on the job page at 8 connections, 6-8 MB promoted per scavenge and 24-36 ms pauses,
// against 1.3-1.4 MB and 11-14 ms with this sweep (docs/benchmarks.md). One sweep per pool instead
// watches every connection's running statement.
import type pg from "pg";
import { guarded } from "../callbacks.ts";

/** What a pool connection exposes of its running statement (node-postgres 8.x, one at a time). */
interface Watched {
  _activeQuery?: object | null;
  connection?: { stream?: { destroy(error?: Error): void } };
}

export interface QueryDeadline {
  stop(): void;
}

/**
 * Ends the connection of any statement still running limitMs after it was first seen, so that it
 * rejects with "Connection terminated" (a connection fault: 503, and the pool drops the client).
 * Checked every limitMs / 20 (at most 50 ms: a few connections to look at), so a statement is cut
 * between limitMs and 1.05 x limitMs.
 */
export function watchQueryDeadline(pool: pg.Pool, limitMs: number): QueryDeadline {
  // Each connection of the pool, with the statement it was last seen running and since when.
  const clients = new Map<Watched, { query: object; at: number } | null>();
  pool.on(
    "connect",
    guarded("query-deadline", (client: pg.PoolClient) => clients.set(client as unknown as Watched, null)),
  );
  pool.on(
    "remove",
    guarded("query-deadline", (client: pg.PoolClient) => clients.delete(client as unknown as Watched)),
  );
  // A statement past the limit is cut only if it is still running after I/O had one turn of the
  // loop (setImmediate runs after the poll phase): after the thread was held up past the limit, the
  // sweep and the server's answer that arrived meanwhile are both due, and timers run first.
  const cutIfStillRunning = guarded("query-deadline", (client: Watched, query: object) => {
    if (client._activeQuery !== query) return;
    clients.set(client, null);
    client.connection?.stream?.destroy(new Error("Connection terminated: the server did not answer in time"));
  });
  const sweep = () => {
    const now = performance.now();
    for (const [client, first] of clients) {
      const query = client._activeQuery;
      if (!query) continue;
      if (first?.query !== query) clients.set(client, { query, at: now });
      else if (now - first.at >= limitMs) setImmediate(cutIfStillRunning, client, query);
    }
  };
  const timer = setInterval(guarded("query-deadline", sweep), Math.max(10, Math.min(50, limitMs / 20))).unref();
  return { stop: () => clearInterval(timer) };
}
