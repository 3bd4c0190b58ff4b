// The SQL statements a request sent, as their kind and the tables they read ("SELECT jobs +
// companies", "COUNT agents"), sorted: on a server the relation loads run concurrently over the
// pool, so their order varies. Query-count tests snapshot this, so an extra statement or join
// shows up as a diff.
export function statementLog(queries: string[]): string[] {
  return queries
    .map((sql) => {
      // Prisma's statements name "public"."table", raw ones (counters, lexemes) the bare table.
      const tables = [...sql.matchAll(/(?:FROM|JOIN) (?:"public"\.)?"?(\w+)"?/g)]
        .map((m) => m[1]!)
        .filter((t) => t !== "LATERAL");
      const kind = /COUNT\(/.test(sql) ? "COUNT" : "SELECT";
      return `${kind} ${tables.length ? [...new Set(tables)].join(" + ") : "(no table)"}`;
    })
    .sort();
}
