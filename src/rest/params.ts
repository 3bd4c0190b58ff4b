// Query parameters of the list routes: one definition per parameter gives its parser, its
// canonical spelling in meta.self/next, and its OpenAPI description.
//
// Decisions (docs/catalog-api.md, "Out-of-range and malformed values"): a malformed or out-of-range value is a 400 naming the
// parameter (`invalid_<name>`), never clamped or ignored; an unknown parameter is a 400
// `unknown_parameter`, so a typo such as `limt=10` cannot silently return the default page; a
// single-valued parameter given twice is malformed; an empty value is malformed.
import { HttpError } from "../errors.ts";
import { INSTANT_RANGE, parseInstant } from "../graphql/instant.ts";
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from "../graphql/paging.ts";

export type JsonSchema = Record<string, unknown>;

export interface ParamDef<T> {
  name: string;
  description: string;
  /** JSON Schema of one value, for the OpenAPI document. */
  schema: JsonSchema;
  /** Parses every occurrence of the parameter; throws a 400 naming it. */
  parse(values: string[]): T;
  /** The canonical query-string value, or undefined to leave the parameter out. */
  format(value: T): string | undefined;
}

// GraphQL's Int is 32-bit; an offset beyond it could never address a row anyway.
export const OFFSET_MAX = 2_147_483_647;

export function invalid(name: string, message: string): HttpError {
  return new HttpError(400, `invalid_${name}`, message);
}

function single(name: string, values: string[]): string {
  if (values.length > 1) throw invalid(name, `${name} must be given at most once`);
  const [value = ""] = values;
  if (value === "") throw invalid(name, `${name} must not be empty`);
  return value;
}

const ruleOf = (min: number, max: number) =>
  max === OFFSET_MAX ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;

/** Digits only: no sign, fraction, exponent or whitespace, so "1e2" and " 5" are refused. */
function parseInteger(name: string, raw: string, min: number, max: number): number {
  const rule = ruleOf(min, max);
  const value = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw invalid(name, `${name} must be ${rule}; got "${raw}"`);
  return value;
}

export function integer(
  name: string,
  min: number,
  max: number,
  fallback: number,
  description: string,
): ParamDef<number> {
  const rule = ruleOf(min, max);
  return {
    name,
    description: `${description} ${rule[0]!.toUpperCase()}${rule.slice(1)}; default ${fallback}.`,
    schema: { type: "integer", minimum: min, maximum: max, default: fallback },
    parse: (values) => (values.length === 0 ? fallback : parseInteger(name, single(name, values), min, max)),
    format: (value) => String(value),
  };
}

/** An integer from 0 that may be left out. */
export function amountParam(name: string, description: string): ParamDef<number | undefined> {
  return {
    name,
    description: `${description} A whole number of at least 0.`,
    schema: { type: "integer", minimum: 0, maximum: OFFSET_MAX },
    parse: (values) => (values.length === 0 ? undefined : parseInteger(name, single(name, values), 0, OFFSET_MAX)),
    format: (value) => value?.toString(),
  };
}

/** true or false, spelled so. */
export function booleanParam(name: string, description: string): ParamDef<boolean | undefined> {
  return {
    name,
    description: `${description} true or false.`,
    schema: { type: "boolean" },
    parse(values) {
      if (values.length === 0) return undefined;
      const raw = single(name, values);
      if (raw !== "true" && raw !== "false") throw invalid(name, `${name} must be true or false; got "${raw}"`);
      return raw === "true";
    },
    format: (value) => value?.toString(),
  };
}

/** One of a closed set, given once; `fallback` when left out (and then left out of links too). */
export function enumParam<V extends string>(
  name: string,
  allowed: readonly V[],
  description: string,
  fallback?: V,
): ParamDef<V | undefined> {
  return {
    name,
    description: `${description} One of ${allowed.join(", ")}${fallback ? `; default ${fallback}` : ""}.`,
    schema: { type: "string", enum: [...allowed], ...(fallback ? { default: fallback } : {}) },
    parse(values) {
      if (values.length === 0) return undefined;
      const raw = single(name, values);
      if (!(allowed as readonly string[]).includes(raw)) {
        throw invalid(name, `${name} must be one of ${allowed.join(", ")}; got "${raw}"`);
      }
      return raw as V;
    },
    format: (value) => value,
  };
}

export const limitParam = integer("limit", 1, PAGE_LIMIT_MAX, PAGE_LIMIT_DEFAULT, "Page size.");
export const offsetParam = integer(
  "offset",
  0,
  OFFSET_MAX,
  0,
  "Rows to skip, for random access. Skipped rows are still walked, so a deep offset costs more; to read on, follow meta.next, which continues by cursor at constant cost.",
);

// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL = /[\u0000-\u001f\u007f]/;

export function textParam(name: string, description: string, maxLength = 200): ParamDef<string | undefined> {
  return {
    name,
    description,
    schema: { type: "string", minLength: 1, maxLength },
    parse(values) {
      if (values.length === 0) return undefined;
      const value = single(name, values).trim();
      if (value === "") throw invalid(name, `${name} must not be blank`);
      if (value.length > maxLength) throw invalid(name, `${name} must be at most ${maxLength} characters`);
      // PostgreSQL text cannot hold NUL, and no slug, category or search contains control characters.
      if (CONTROL.test(value)) throw invalid(name, `${name} must not contain control characters`);
      return value;
    },
    format: (value) => value,
  };
}

/** The continuation token of meta.next; opaque, bound to the list and its filter. */
export const cursorParam = textParam(
  "cursor",
  "Continuation from meta.next: the page after the previous one, found by seeking on the list order (constant cost at any depth). Opaque; only valid with the filter it came with. It stands for an offset: leave offset out, or give that same offset.",
  1_000,
);

/** Any of a closed set: comma-separated, repeated, or both (`a,b` = `a&x=b`). */
export function enumListParam<V extends string>(
  name: string,
  allowed: readonly V[],
  description: string,
): ParamDef<V[] | undefined> {
  return {
    name,
    description: `${description} One or more of ${allowed.join(", ")}, comma-separated or repeated; any of them matches.`,
    schema: { type: "array", items: { type: "string", enum: [...allowed] }, minItems: 1 },
    parse(values) {
      if (values.length === 0) return undefined;
      const parts = values.flatMap((v) => v.split(","));
      const unknown = parts.find((p) => !(allowed as readonly string[]).includes(p));
      if (unknown !== undefined) {
        throw invalid(name, `${name} must be one or more of ${allowed.join(", ")}; got "${unknown}"`);
      }
      return [...new Set(parts as V[])];
    },
    format: (value) => value?.join(","),
  };
}

/** A decimal number above 0 and at most max that may be left out (digits, one point: no sign or exponent). */
export function decimalParam(name: string, max: number, description: string): ParamDef<number | undefined> {
  return {
    name,
    description: `${description} A decimal number above 0 and at most ${max}.`,
    schema: { type: "number", exclusiveMinimum: 0, maximum: max },
    parse(values) {
      if (values.length === 0) return undefined;
      const raw = single(name, values);
      const value = /^\d{1,10}(\.\d{1,10})?$/.test(raw) ? Number(raw) : NaN;
      if (!(value > 0 && value <= max))
        throw invalid(name, `${name} must be a number above 0 and at most ${max}; got "${raw}"`);
      return value;
    },
    format: (value) => (value === undefined ? undefined : String(value)),
  };
}

/** Short free values (codes), comma-separated, repeated, or both; checked by the read model. */
export function codeListParam(name: string, description: string, maxLength = 10): ParamDef<string[] | undefined> {
  return {
    name,
    description: `${description} Comma-separated or repeated; any of them matches.`,
    schema: { type: "array", items: { type: "string", minLength: 1, maxLength }, minItems: 1, maxItems: 50 },
    parse(values) {
      if (values.length === 0) return undefined;
      const parts = values.flatMap((v) => v.split(","));
      const bad = parts.find((p) => p === "" || p.length > maxLength || CONTROL.test(p));
      if (bad !== undefined || parts.length > 50) {
        throw invalid(name, `${name} must be 1 to 50 comma-separated values of 1 to ${maxLength} characters`);
      }
      return [...new Set(parts)];
    },
    format: (value) => value?.join(","),
  };
}

export function instantParam(name: string, description: string): ParamDef<Date | undefined> {
  return {
    name,
    description: `${description} An RFC 3339 date-time with offset, or a date (midnight UTC); ${INSTANT_RANGE}.`,
    schema: { type: "string", format: "date-time" },
    parse(values) {
      if (values.length === 0) return undefined;
      const raw = single(name, values);
      const date = parseInstant(raw);
      if (!date) {
        throw invalid(
          name,
          `${name} must be an RFC 3339 date-time such as 2026-01-31T00:00:00Z, on a day that exists, within ${INSTANT_RANGE}; got "${raw}"`,
        );
      }
      return date;
    },
    format: (value) => value?.toISOString(),
  };
}

type Defs = Record<string, ParamDef<unknown>>;
export type ParamValues<D extends Defs> = { [K in keyof D]: D[K] extends ParamDef<infer T> ? T : never };

/** A route's parameters by query name, and its keys beside their definitions: built once per route. */
interface Lookup {
  byName: Map<string, ParamDef<unknown>>;
  entries: [string, ParamDef<unknown>][];
}
const lookups = new WeakMap<Defs, Lookup>();
/** What a parameter not given parses from (parsers never change the array they are given). */
const NOT_GIVEN: string[] = Object.freeze([]) as unknown as string[];

function lookupOf(defs: Defs): Lookup {
  let lookup = lookups.get(defs);
  if (!lookup) {
    const entries = Object.entries(defs);
    lookup = { byName: new Map(entries.map(([, d]) => [d.name, d] as const)), entries };
    lookups.set(defs, lookup);
  }
  return lookup;
}

/** Parses a query string against a route's parameters; anything else is an unknown parameter. */
export function parseQuery<D extends Defs>(defs: D, search: URLSearchParams, path: string): ParamValues<D> {
  const { byName, entries } = lookupOf(defs);
  // One pass over the query: each name's values in order (getAll per parameter scans it each time).
  const given = new Map<string, string[]>();
  for (const [key, value] of search) {
    if (!byName.has(key)) {
      const accepted = [...byName.keys()];
      throw new HttpError(
        400,
        "unknown_parameter",
        accepted.length
          ? `Unknown parameter "${key}"; ${path} accepts ${accepted.join(", ")}`
          : `Unknown parameter "${key}"; ${path} takes no parameters`,
      );
    }
    const values = given.get(key);
    if (values) values.push(value);
    else given.set(key, [value]);
  }
  const values: Record<string, unknown> = {};
  for (const [key, def] of entries) values[key] = def.parse(given.get(def.name) ?? NOT_GIVEN);
  return values as ParamValues<D>;
}

/** The canonical query string of a page: every given parameter, in definition order. */
export function formatQuery<D extends Defs>(defs: D, values: ParamValues<D>): string {
  const search = new URLSearchParams();
  for (const [key, def] of Object.entries(defs)) {
    const value = def.format(values[key as keyof D]);
    if (value !== undefined) search.set(def.name, value);
  }
  const query = search.toString();
  return query ? `?${query}` : "";
}
