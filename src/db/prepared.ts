// Lookups by a unique key as named prepared statements (issue 40). PostgreSQL plans every unnamed
// statement again: a job's page by its slug spent 0.27 ms parsing and 0.75 ms planning for 0.11 ms
// of execution at a million jobs (the server's log, warm). A named statement is parsed once per
// connection, and after five executions the server keeps a generic plan when it costs no more than
// the custom ones: for a lookup by a unique key it is the same plan (the key's index, then the
// gate's conditions on one row), so nothing is lost. Lists are not prepared: their plans depend on
// the values (a rare salary floor wants another index than a common one), and a generic plan chosen
// on common values could walk the table for a rare one.
//
// A text becomes a name only while the process has named fewer than `capacity` texts: the texts of
// a lookup depend on the GraphQL selection, and /graphql lets a client make as many selections as
// it likes; each named text costs memory on every connection that runs it, and node-postgres never
// forgets one. Past the capacity a new text runs unnamed (planned each time, as every statement did
// before), which costs time, never correctness.

/** The SQLSTATE of "cached plan must not change result type": a migration changed a column under a named statement. */
export const CACHED_PLAN_CHANGED = "0A000";

export class PreparedNames {
  readonly #names = new Map<string, string | null>();
  #count = 0;
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** The name to prepare `text` under, or undefined to run it unnamed. */
  nameOf(text: string): string | undefined {
    const known = this.#names.get(text);
    if (known !== undefined) return known ?? undefined;
    if (this.#count >= this.capacity) return undefined;
    const name = `lookup_${this.#count++}`;
    this.#names.set(text, name);
    return name;
  }

  /** Runs `text` unnamed from now on (its named form failed on a connection that kept an old plan). */
  refuse(text: string): void {
    this.#names.set(text, null);
  }
}

/** How many lookup texts a process prepares: the REST API's few, with room for /graphql's selections. */
export const PREPARED_CAPACITY = 64;

interface Queryable {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
}

/**
 * Runs a lookup, named when `names` gives it a name. A named statement that the server refuses
 * because a migration changed its result's type since this connection prepared it runs again
 * unnamed, and its text is not named again in this process.
 */
export async function runLookup<Row>(
  target: Queryable,
  names: PreparedNames,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  const name = names.nameOf(text);
  if (name === undefined) return (await target.query({ text, values })).rows as Row[];
  try {
    return (await target.query({ name, text, values })).rows as Row[];
  } catch (error) {
    if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
    names.refuse(text);
    return (await target.query({ text, values })).rows as Row[];
  }
}
