// The change feed of public jobs: what entered the public set (published), changed in it
// (updated) or left it (removed: filled, closed, unpublished, expired or deleted), in the order
// the changes were committed, resumable from an opaque position. Written by the database (the
// migration job_change_feed: triggers in the transaction that changed the job, and
// job_feed_sweep() for what the clock changes); read here up to the oldest transaction still
// running, so an event committed late is never skipped by a client that resumed past it.
import { GraphQLError } from "graphql";
import { builder } from "../builder.ts";
import { JobChangeKindEnum } from "../enums.ts";
import { listSize } from "../cost.ts";
import { badArgument } from "../paging.ts";

export const CHANGES_LIMIT_DEFAULT = 100;
export const CHANGES_LIMIT_MAX = 1_000;

interface JobChangeShape {
  kind: "published" | "updated" | "removed";
  slug: string;
  at: Date;
}

interface FeedShape {
  items: JobChangeShape[];
  nextSince: string;
  hasMore: boolean;
}

/** A position in the feed: the writing transaction and the event's sequence number. */
interface Position {
  txid: bigint;
  seq: bigint;
}

type FeedRow = Partial<JobChangeShape> & {
  txid: string | null;
  seq: bigint | null;
  pruned_txid: bigint;
  pruned_seq: bigint;
  horizon: bigint;
};

/** The largest sequence number (bigint) and transaction id (xid8) there can be. */
const MAX_SEQ = 2n ** 63n - 1n;
const MAX_TXID = 2n ** 64n - 1n;
const before = (a: Position, b: Position) => a.txid < b.txid || (a.txid === b.txid && a.seq < b.seq);
const latest = (a: Position, b: Position) => (before(a, b) ? b : a);

const encodePosition = (p: Position) => Buffer.from(`${p.txid}.${p.seq}`).toString("base64url");

function decodePosition(since: string): Position {
  const text = since.length <= 100 ? Buffer.from(since, "base64url").toString("latin1") : "";
  const match = /^(\d{1,20})\.(\d{1,20})$/.exec(text);
  const position = match ? { txid: BigInt(match[1]!), seq: BigInt(match[2]!) } : null;
  // Beyond xid8 or bigint the database refuses the statement (a 500 before): no position is there.
  if (!position || position.txid > MAX_TXID || position.seq > MAX_SEQ) {
    throw badArgument("since", "since must be a next_since this API returned; start without it");
  }
  return position;
}

const JobChange = builder.objectRef<JobChangeShape>("JobChange").implement({
  description: "One change of the public job set. A removal names the slug and the time, nothing else.",
  fields: (t) => ({
    kind: t.field({ type: JobChangeKindEnum, resolve: (c) => c.kind }),
    slug: t.exposeString("slug"),
    at: t.field({ type: "DateTime", description: "When the change took effect.", resolve: (c) => c.at }),
  }),
});

const JobChangeFeed = builder.objectRef<FeedShape>("JobChangeFeed").implement({
  description: "Changes in commit order after a position; pass nextSince as since to read on.",
  fields: (t) => ({
    items: t.field({ type: [JobChange], ...listSize({ page: true }), resolve: (f) => f.items }),
    nextSince: t.exposeString("nextSince", { description: "The position after the last change returned." }),
    hasMore: t.exposeBoolean("hasMore", { description: "true when more changes are ready now." }),
  }),
});

builder.queryField("jobChanges", (t) =>
  t.field({
    ...listSize({ argument: "limit", max: CHANGES_LIMIT_MAX }),
    type: JobChangeFeed,
    description:
      "Changes of the public job set (published, updated, removed) in commit order, after `since` (from the oldest kept without it). Kept 30 days: an older since is refused (SINCE_EXPIRED); sync again from jobs.",
    args: {
      since: t.arg.string({ description: "A nextSince from an earlier call." }),
      limit: t.arg.int({
        defaultValue: CHANGES_LIMIT_DEFAULT,
        description: `Changes per call, 1 to ${CHANGES_LIMIT_MAX}.`,
      }),
    },
    resolve: async (_root, args, ctx) => {
      const limit = args.limit ?? CHANGES_LIMIT_DEFAULT;
      if (limit < 1 || limit > CHANGES_LIMIT_MAX) {
        throw badArgument("limit", `limit must be an integer from 1 to ${CHANGES_LIMIT_MAX}`);
      }
      const after = args.since == null ? { txid: 0n, seq: 0n } : decodePosition(args.since);
      // One statement: the changes after the position, below the horizon (every change below it is
      // committed or never will be), and the pruned position. The horizon is the oldest write
      // transaction still running in this database: transaction ids are server-wide, but one in
      // another database cannot write this feed, so a long one there (a migration, a seed, another
      // service) does not stall it. An id is passed over only when pg_stat_activity names another
      // database for it; one it no longer shows (committed since the snapshot) still holds the horizon.
      const rows = await ctx.prisma.$queryRaw<FeedRow[]>`
        WITH snapshot AS (SELECT pg_current_snapshot() AS s),
        horizon AS (
          SELECT COALESCE(
                   (SELECT min(x) FROM pg_snapshot_xip(snapshot.s) x
                     WHERE (x::text::bigint % 4294967296) NOT IN (
                       SELECT a.backend_xid::text::bigint FROM pg_stat_activity a
                        WHERE a.backend_xid IS NOT NULL
                          AND a.datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database()))),
                   pg_snapshot_xmax(snapshot.s)) AS h
            FROM snapshot
        )
        SELECT c.seq, c.txid::text AS txid, c.kind::text AS kind, c.slug, c.at,
               s.pruned_txid, s.pruned_seq, (horizon.h::text::bigint - 1) AS horizon
          FROM job_feed_state s
          CROSS JOIN horizon
          LEFT JOIN LATERAL (
            SELECT * FROM job_changes
             WHERE (txid, seq) > (${after.txid.toString()}::xid8, ${after.seq})
               AND txid < horizon.h
             ORDER BY txid, seq
             LIMIT ${limit + 1}
          ) c ON true`;
      const [first] = rows;
      if (!first) throw new Error("job_feed_state has no row: the migration job_change_feed inserts it");
      const pruned = { txid: first.pruned_txid, seq: first.pruned_seq };
      if (args.since != null && before(after, pruned)) {
        throw new GraphQLError("since is older than the 30 days of changes kept; sync again from the job list", {
          extensions: { code: "SINCE_EXPIRED", argument: "since" },
        });
      }
      const changes = rows.filter((r): r is FeedRow & JobChangeShape & { txid: string; seq: bigint } => r.seq !== null);
      const items = changes.slice(0, limit);
      const last = items.at(-1);
      // Nothing after the position: every change below the horizon has been read, and every one up
      // to the pruned position is gone, so the next call starts at the later of the two (never
      // behind what pruning removed, which would be refused as expired).
      const next = last
        ? { txid: BigInt(last.txid), seq: last.seq }
        : latest(latest(after, pruned), { txid: first.horizon, seq: MAX_SEQ });
      return {
        items: items.map(({ kind, slug, at }) => ({ kind, slug, at })),
        nextSince: encodePosition(next),
        hasMore: changes.length > limit,
      };
    },
  }),
);
