// Continuation cursors of the paged lists: an opaque token standing for "the rows after this one,
// in this list's order, under this filter", so the next page is a seek on the list's index
// instead of a skip over every earlier row.
//
// A cursor carries the list, a digest of its filter, the offset it stands for (so meta.offset
// stays exact) and the order key of the last row served. It is validated, not encrypted: a digest
// over those fields detects a cursor that was cut short or edited, and the filter digest refuses
// one used with another filter. A client that forges a well-formed cursor only moves its own
// window over rows the gates let it see anyway, so no secret (and no key rotation across
// instances) is needed. Cursors do not expire: a key is a position in the order, still valid after
// rows were added or removed (the offset it carries is then approximate, as any offset is).
import { hash } from "node:crypto";
import { GraphQLError } from "graphql";

/** One value of the order key: a string, an integer, or an instant (kept as ISO 8601 in the token). */
export type KeyValue = string | number | Date;

/**
 * What an order column holds, so a decoded key is checked before it reaches a query: a well-formed
 * cursor can be forged (the digest has no secret), and a value of the wrong kind would otherwise
 * fail in the database (a 500) instead of being refused (a 400).
 */
export type KeyKind = "instant" | "uuid" | "text" | "int" | "float";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Cursor {
  offset: number;
  key: KeyValue[];
}

const VERSION = 1;
/** A cursor is short; anything longer was not made here. */
const MAX_LENGTH = 1_000;
const DIGEST_LENGTH = 16;

// One-shot hashing: a Hash object per digest cost more than the digest of these few bytes.
const digest = (text: string) => hash("sha256", text, "base64url").slice(0, DIGEST_LENGTH);

/** How many scopes are remembered: a busy list asks for the same few filters again and again. */
const SCOPES_KEPT = 1_000;
const scopes = new Map<string, string>();

/**
 * What the cursor is bound to: the list and its filter (the same key its remembered total uses).
 * Remembered, as every page of a list encodes one (a SHA-256 a request: 1 % of a list's CPU).
 */
function scopeOf(list: string, filterKey: string): string {
  const text = `${list}\u0000${filterKey}`;
  let scope = scopes.get(text);
  if (scope === undefined) {
    if (scopes.size >= SCOPES_KEPT) scopes.clear();
    scopes.set(text, (scope = digest(text)));
  }
  return scope;
}

type Encoded = [version: number, scope: string, offset: number, key: (string | number | { t: string })[]];

export function encodeCursor(list: string, filterKey: string, cursor: Cursor): string {
  const key = cursor.key.map((v) => (v instanceof Date ? { t: v.toISOString() } : v));
  const body: Encoded = [VERSION, scopeOf(list, filterKey), cursor.offset, key];
  const payload = Buffer.from(JSON.stringify(body)).toString("base64url");
  return `${payload}.${digest(payload)}`;
}

// The shape of paging.ts's badArgument (not imported: paging.ts imports this module).
const invalid = (message: string) =>
  new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT", argument: "after" } });

/** The cursor a client sent back, or a BAD_USER_INPUT error naming the argument `after`. */
export function decodeCursor(list: string, filterKey: string, token: string, kinds: readonly KeyKind[]): Cursor {
  const [payload = "", check, extra] = token.split(".");
  if (token.length > MAX_LENGTH || extra !== undefined || !check || digest(payload) !== check) {
    throw invalid("The cursor is not one this API issued, or it was altered; start again from offset 0");
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw invalid("The cursor is not one this API issued; start again from offset 0");
  }
  if (!Array.isArray(body) || body[0] !== VERSION) {
    throw invalid("The cursor is from another version of this API; start again from offset 0");
  }
  const [, scope, offset, key] = body as Encoded;
  if (scope !== scopeOf(list, filterKey)) {
    throw invalid("The cursor belongs to another list or another filter; use it with the parameters it came with");
  }
  const values = Array.isArray(key) && key.length === kinds.length ? key.map((v, i) => keyValue(v, kinds[i]!)) : [];
  if (!Number.isSafeInteger(offset) || offset < 0 || values.length !== kinds.length || values.includes(null)) {
    throw invalid("The cursor is not one this API issued; start again from offset 0");
  }
  return { offset, key: values as KeyValue[] };
}

function keyValue(value: unknown, kind: KeyKind): KeyValue | null {
  if (typeof value === "number") {
    return (kind === "int" && Number.isSafeInteger(value)) || (kind === "float" && Number.isFinite(value))
      ? value
      : null;
  }
  if (typeof value === "string") return kind === "text" || (kind === "uuid" && UUID.test(value)) ? value : null;
  if (kind !== "instant") return null;
  if (typeof value === "object" && value !== null && typeof (value as { t?: unknown }).t === "string") {
    const date = new Date((value as { t: string }).t);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}
