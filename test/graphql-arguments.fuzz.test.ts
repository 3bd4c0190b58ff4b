// Property-based tests of every GraphQL argument through real HTTP: for every field that takes
// arguments (the root fields, and those beneath them such as Company.openJobs), any values, sent
// as variables or written inline, answer below 500 with GraphQL's error shape, and never with a
// masked fault ("Unexpected error."), which GraphQL would otherwise hide in a 200. The values
// follow each argument's type (the schema is walked, so a new argument is fuzzed without a word
// here) out to and past its edges, with any JSON at all mixed in.
//
// Bounded for CI (a few hundred requests in all); FUZZ_RUNS=10000 runs that many per field
// (docs/input-validation.md). A failure prints the shrunk document and variables and the seed.
import fc from "fast-check";
import {
  astFromValue,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  print,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../src/graphql/schema.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/database.ts";
import { factories } from "./helpers/factories.ts";
import { fuzzRuns, hostileInstant, hostileText } from "./helpers/fuzz.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  const f = factories(db.prisma);
  const company = await f.company("fuzz-company");
  await f.job("fuzz-job", { companyId: company.id });
  server = await startServer(db);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

type AnyField = GraphQLField<unknown, unknown>;

/** Every field with arguments within three fields of Query, each with the fields leading to it. */
function fieldsWithArguments(): AnyField[][] {
  const found: AnyField[][] = [];
  const seen = new Set<string>();
  const queue: { type: GraphQLObjectType; path: AnyField[] }[] = [{ type: schema.getQueryType()!, path: [] }];
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const field of Object.values(next.type.getFields())) {
      const key = `${next.type.name}.${field.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const path = [...next.path, field];
      if (field.args.length) found.push(path);
      const named = getNamedType(field.type);
      if (isObjectType(named) && path.length < 3) queue.push({ type: named, path });
    }
  }
  return found;
}

const INT_EDGES = [0, 1, 50, 100, 101, 1_000, 1_001, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53, 1.5, -0];

/** A value for an argument of this type: mostly of its kind, at and past its edges; any JSON sometimes. */
function valueOf(type: GraphQLInputType, name: string): fc.Arbitrary<unknown> {
  const anything = fc.jsonValue({ maxDepth: 2 });
  if (isNonNullType(type)) return valueOf(type.ofType, name);
  if (isListType(type)) {
    const item = valueOf(type.ofType, name);
    return fc.oneof({ weight: 4, arbitrary: fc.array(item, { maxLength: 3 }) }, item, anything);
  }
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const record = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, f.name)])), {
      requiredKeys: [],
    });
    return fc.oneof({ weight: 6, arbitrary: record }, anything);
  }
  if (isEnumType(type)) {
    const values = type.getValues().map((v) => v.name);
    return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, hostileText, anything);
  }
  const own: fc.Arbitrary<unknown>[] = [];
  if (isScalarType(type) && type.name === "Int") own.push(fc.integer(), fc.constantFrom(...INT_EDGES));
  if (isScalarType(type) && type.name === "Boolean") own.push(fc.boolean());
  if (isScalarType(type) && type.name === "DateTime") own.push(hostileInstant);
  if (isScalarType(type) && ["String", "ID"].includes(type.name)) {
    own.push(hostileText, fc.constantFrom("fuzz-job", "fuzz-company", "@fuzz"));
    if (["since", "after"].includes(name)) {
      // Up to 20 digits (the most a position's parts may have), edges of bigint and xid8 often.
      const edges = fc.constantFrom(2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, 10n ** 20n - 1n);
      const big = fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }), edges);
      own.push(fc.tuple(big, big).map(([a, b]) => Buffer.from(`${a}.${b}`).toString("base64url")));
    }
  }
  return fc.oneof(...own.map((arbitrary) => ({ weight: 4, arbitrary })), { weight: 1, arbitrary: anything });
}

/** The scalar fields a field's type shows without arguments of their own (its page's total, a job's slug). */
function leavesOf(field: AnyField): string {
  const named = getNamedType(field.type);
  if (!isCompositeType(named) || !isObjectType(named)) return "";
  const leaves = Object.values(named.getFields())
    .filter((f) => isLeafType(getNamedType(f.type)) && f.args.length === 0)
    .map((f) => f.name);
  return ` { __typename ${leaves.join(" ")} }`;
}

interface Call {
  query: string;
  variables: Record<string, unknown>;
}

/** The document reaching `path`, every argument on the way given: inline when it prints, else as a variable. */
function callOf(path: AnyField[], values: unknown[][], inline: boolean[][]): Call {
  const variables: Record<string, unknown> = {};
  const definitions: string[] = [];
  const argumentsOf = (field: AnyField, depth: number) =>
    field.args.map((arg: GraphQLArgument, i) => {
      const value = values[depth]![i];
      const literal = inline[depth]![i] ? safeLiteral(value, arg.type) : null;
      if (literal !== null) return `${arg.name}: ${literal}`;
      const name = `v${depth}_${arg.name}`;
      definitions.push(`$${name}: ${String(arg.type)}`);
      variables[name] = value;
      return `${arg.name}: $${name}`;
    });
  let selection = leavesOf(path.at(-1)!);
  for (let depth = path.length - 1; depth >= 0; depth--) {
    const field = path[depth]!;
    const args = argumentsOf(field, depth);
    // A page's items are a list beneath a field that is not: reaching through them is a plain field.
    selection = ` { ${field.name}${args.length ? `(${args.join(", ")})` : ""}${selection} }`;
  }
  const header = definitions.length ? `query Fuzz(${definitions.join(", ")})` : "query Fuzz";
  return { query: `${header}${selection}`, variables };
}

function safeLiteral(value: unknown, type: GraphQLInputType): string | null {
  try {
    const ast = astFromValue(value, type);
    return ast ? print(ast) : null;
  } catch {
    return null;
  }
}

async function post(call: Call) {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify(call),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as { errors?: { message: unknown }[] } };
}

describe("any argument of any field answers below 500, never a masked fault", () => {
  const targets = fieldsWithArguments();

  it("reaches every field with arguments, nested ones included", () => {
    const names = targets.map((path) => path.map((f) => f.name).join("."));
    expect(names).toEqual(expect.arrayContaining(["jobs", "jobChanges", "company.openJobs"]));
  });

  it.each(targets.map((path) => [path.map((f) => f.name).join("."), path] as const))("%s", async (_name, path) => {
    const args = fc.tuple(...path.map((field) => fc.tuple(...field.args.map((a) => valueOf(a.type, a.name)))));
    const inline = fc.tuple(...path.map((field) => fc.tuple(...field.args.map(() => fc.boolean()))));
    await fc.assert(
      fc.asyncProperty(args, inline, async (values, literal) => {
        const call = callOf(path, values, literal);
        const { status, text, body } = await post(call);
        expect(status, text).toBeLessThan(500);
        for (const error of body.errors ?? []) {
          expect(typeof error.message, text).toBe("string");
          expect(error.message, text).not.toBe("Unexpected error.");
        }
      }),
      { numRuns: fuzzRuns(20) },
    );
  });
});

describe("fragment spreads: levels of named fragments, each spread many times by the one above", () => {
  // Issue 39: three levels spread 320 times each were costed by expanding every spread (32 million
  // visits, 4.9 s with the event loop held). Any shape answers below 500 (test/graphql-endpoint.test.ts times that one).
  it("answer below 500, never a masked fault", async () => {
    const level = fc.record({
      spreads: fc.integer({ min: 1, max: 400 }),
      on: fc.constantFrom("Query", "JobPage", "Job"),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(level, { minLength: 1, maxLength: 4 }), fc.boolean(), async (levels, inlineLeaf) => {
        const name = (i: number) => `F${i}`;
        const spreads = (i: number, n: number) => Array.from({ length: n }, () => `...${name(i)}`).join(" ");
        const fragments = levels.map(({ on }, i) => {
          const next = levels[i + 1];
          const body = next ? spreads(i + 1, next.spreads) : inlineLeaf ? "... on Job { slug }" : "__typename";
          return `fragment ${name(i)} on ${on} { ${body} }`;
        });
        const query = `{ jobs(limit: 2) { ${spreads(0, levels[0]!.spreads)} } } ${fragments.join(" ")}`;
        const { status, text, body } = await post({ query, variables: {} });
        expect(status, text.slice(0, 300)).toBeLessThan(500);
        for (const error of body.errors ?? []) {
          expect(typeof error.message, text.slice(0, 300)).toBe("string");
          expect(error.message, text.slice(0, 300)).not.toBe("Unexpected error.");
        }
      }),
      { numRuns: fuzzRuns(20) },
    );
  });
});
