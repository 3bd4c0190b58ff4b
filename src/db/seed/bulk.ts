// Bulk insert through one `INSERT ... SELECT FROM unnest(...)` statement per batch: a handful
// of array parameters instead of one parameter per value, the fastest portable path on both
// PGlite and a PostgreSQL server. Column names are the snake_case of the Prisma field names,
// as every @map in schema.prisma is.
import type { SqlRunner } from "../database.ts";

/** A PostgreSQL scalar type, an enum type name in quotes, or either followed by []. */
export type ColumnType = string;

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function arrayLiteral(values: readonly unknown[]): string {
  return `{${values.map((v) => `"${String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`).join(",")}}`;
}

function toParam(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  // Prisma.Decimal and friends print their exact value.
  if (typeof value === "object") return (value as { toString(): string }).toString();
  return value;
}

export async function insertRows<Row extends object>(
  sql: SqlRunner,
  table: string,
  columns: ReadonlyArray<readonly [field: keyof Row & string, type: ColumnType]>,
  rows: readonly Row[],
): Promise<void> {
  if (rows.length === 0) return;
  const names = columns.map(([field]) => `"${snake(field)}"`);
  // Enums and arrays travel as text and are cast in the SELECT list.
  const transport = (type: string) => (type.startsWith('"') || type.endsWith("[]") ? "text" : type);
  const unnestArgs = columns.map(([, type], i) => `$${i + 1}::${transport(type)}[]`);
  const select = columns.map(([, type], i) => (transport(type) === type ? `c${i}` : `c${i}::${type}`));
  const alias = columns.map((_, i) => `c${i}`);
  const params = columns.map(([field]) => rows.map((row) => toParam(row[field])));
  await sql.query(
    `INSERT INTO "${table}" (${names.join(", ")}) SELECT ${select.join(", ")} FROM unnest(${unnestArgs.join(", ")}) AS t(${alias.join(", ")})`,
    params,
  );
}

/** Rows of an implicit many-to-many table: Prisma names its columns A and B. */
export async function insertLinks(sql: SqlRunner, table: string, pairs: ReadonlyArray<readonly [string, string]>) {
  if (pairs.length === 0) return;
  await sql.query(`INSERT INTO "${table}" ("A", "B") SELECT * FROM unnest($1::uuid[], $2::uuid[])`, [
    pairs.map(([a]) => a),
    pairs.map(([, b]) => b),
  ]);
}
