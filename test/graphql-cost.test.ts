// The cost estimate of an operation (src/graphql/cost.ts): rows and field values, lists multiplied
// by their limits; every list of the schema declares its size; every REST operation fits the
// default limits at its maximum limits. No database: the estimate runs no resolver.
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  parse,
  type DocumentNode,
} from "graphql";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/env.ts";
import { costRefusal, DEFAULT_COST_LIMITS } from "../src/graphql/cost-limit.ts";
import { operationCost, type CostOptions, type ListSize } from "../src/graphql/cost.ts";
import { CHANGES_LIMIT_MAX } from "../src/graphql/types/job-changes.ts";
import { PAGE_LIMIT_MAX, TAGS_AT_MOST } from "../src/graphql/paging.ts";
import { schema } from "../src/graphql/schema.ts";
import * as operations from "../src/rest/operations.ts";

const cost = (query: string, options?: CostOptions) => operationCost(schema, parse(query), options);

/** The nested query of issue 25: three pages of jobs, each job's company's jobs' company's jobs. */
const NESTED = `{ ${["a", "b", "c"]
  .map(
    (alias) =>
      `${alias}: jobs(limit: 100) { items { company { openJobs(limit: 100) { company { openJobs(limit: 100) { slug title descriptionHtml } } } } } }`,
  )
  .join(" ")} }`;

describe("operationCost", () => {
  it("multiplies what a list nests by its limit", () => {
    // Per alias: the page 1, its 100 jobs, their 100 companies, 100 x 100 jobs and their
    // companies, 10,000 x 100 jobs; then 3 values for each of the last jobs.
    const rowsPerAlias = 1 + 100 + 100 + 10_000 + 10_000 + 1_000_000;
    expect(cost(NESTED)).toEqual({ rows: 3 * rowsPerAlias, cost: 3 * (rowsPerAlias + 3 * 1_000_000) });
  });

  it.each([
    ["a page's total and items", `{ jobs(limit: 10) { total items { slug } } }`, { rows: 11, cost: 11 + 1 + 10 }],
    ["the default limit when left out", `{ jobs { items { slug } } }`, { rows: 51, cost: 101 }],
    ["a limit above the maximum at the maximum", `{ jobs(limit: 5000) { items { slug } } }`, { rows: 101, cost: 201 }],
    [
      "a list without a limit at its declared bound",
      `{ job(slug: "x") { skills { name } } }`,
      { rows: 1 + TAGS_AT_MOST, cost: 1 + 2 * TAGS_AT_MOST },
    ],
    ["a to-one relation once per row", `{ jobs(limit: 2) { items { company { name } } } }`, { rows: 5, cost: 7 }],
    [
      "__typename as a value, introspection as nothing",
      `{ __typename __schema { types { name } } }`,
      { rows: 0, cost: 1 },
    ],
    [
      "the change feed by its own maximum",
      `{ jobChanges(limit: 100000) { items { slug } } }`,
      { rows: 1 + CHANGES_LIMIT_MAX, cost: 1 + 2 * CHANGES_LIMIT_MAX },
    ],
    [
      "facet counts at 100 values a list, whatever limit, and a histogram at 100 ranges",
      `{ jobFacets(facets: [SKILL], facetLimit: 5) { total skill { value count } salary { ranges { from } } } }`,
      { rows: 1 + 100 + 1 + 100, cost: 202 + 1 + 200 + 100 },
    ],
    [
      "named and inline fragments",
      `{ jobs(limit: 3) { ...P } } fragment P on JobPage { items { ... on Job { slug } } }`,
      { rows: 4, cost: 7 },
    ],
  ])("counts %s", (_case, query, expected) => {
    expect(cost(query)).toEqual(expected);
  });

  it.each([
    ["a variable as given", { n: 7 }, 8],
    ["the variable's default when it is not given", {}, 4],
    ["the maximum for a value that is not an integer", { n: "7" }, 101],
    ["the maximum for a negative value", { n: -1 }, 101],
  ])("sizes by %s", (_case, variables, rows) => {
    const query = `query Q($n: Int = 3) { jobs(limit: $n) { items { slug } } }`;
    expect(cost(query, { variables }).rows).toBe(rows);
  });

  it("sizes by the field's default when a variable has neither value nor default", () => {
    expect(cost(`query Q($n: Int) { jobs(limit: $n) { items { slug } } }`).rows).toBe(51);
  });

  it("costs the operation named, and every limit at its maximum in the worst case", () => {
    const document = `query A { jobs(limit: 1) { items { slug } } } query B { companies(limit: 2) { items { slug } } }`;
    expect(cost(document, { operationName: "B" }).rows).toBe(3);
    expect(cost(document, { operationName: "A", worstCase: true }).rows).toBe(1 + PAGE_LIMIT_MAX);
  });

  it("refuses over either limit with both figures and both limits in the message", () => {
    const refusal = costRefusal(cost(NESTED), DEFAULT_COST_LIMITS);
    expect(refusal?.extensions).toMatchObject({ code: "QUERY_LIMIT_EXCEEDED", limit: "rows", maxRows: 5_000 });
    expect(refusal?.message).toContain("up to 3,060,603 rows and 12,060,603 field values");
    expect(refusal?.message).toContain("the limits are 5,000 rows and 50,000 field values");
    expect(costRefusal({ rows: 10, cost: 50_001 }, DEFAULT_COST_LIMITS)?.extensions["limit"]).toBe("cost");
    expect(costRefusal({ rows: 5_000, cost: 50_000 }, DEFAULT_COST_LIMITS)).toBeNull();
  });
});

/** Three levels of named fragments, each spread `n` times by the level above (issue 39's fan-out). */
function fanOut(n: number): string {
  const spreads = (name: string) => Array.from({ length: n }, () => `...${name}`).join(" ");
  return (
    `{ jobs(limit: 1) { items { ${spreads("A")} } } } ` +
    `fragment A on Job { ${spreads("B")} } fragment B on Job { ${spreads("C")} } fragment C on Job { slug title }`
  );
}

/** The same operation with every fragment spread written out in place. */
function inlined(query: string): string {
  const document = parse(query);
  const bodies = new Map(
    document.definitions.flatMap((d) =>
      d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet.loc!] as const] : [],
    ),
  );
  let text = query.slice(0, query.indexOf(" fragment "));
  for (let changed = true; changed;) {
    changed = false;
    text = text.replace(/\.\.\.(\w+)/, (_spread, name: string) => {
      changed = true;
      const loc = bodies.get(name)!;
      return `... on Job ${query.slice(loc.start, loc.end)}`;
    });
  }
  return text;
}

describe("fragments", () => {
  it("cost a fragment once and multiply it: the same figures as the spreads written out", () => {
    const query = fanOut(3) + " fragment D on Company { name }";
    expect(cost(query)).toEqual(cost(inlined(fanOut(3))));
    expect(cost(fanOut(3))).toEqual({ rows: 2, cost: 2 + 27 * 2 });
  });

  it("a fragment's cost depends on the page size its spread sits under", () => {
    const query = `{ a: jobs(limit: 2) { ...P } b: jobs(limit: 7) { ...P } } fragment P on JobPage { items { slug } }`;
    expect(cost(query)).toEqual({ rows: 1 + 2 + 1 + 7, cost: 1 + 2 + 2 + 1 + 7 + 7 });
  });

  it("issue 39's fan-out (320 spreads on three levels) is costed at once and stops at the first limit passed", () => {
    const query = fanOut(320);
    const started = performance.now();
    const full = cost(query);
    const stopped = cost(query, { stopAbove: DEFAULT_COST_LIMITS });
    // Not a timing test: 32 million visits took seconds; a linear walk is about a thousand.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(full).toEqual({ rows: 2, cost: 2 + 320 ** 3 * 2 });
    expect(stopped.partial).toBe(true);
    expect(stopped.cost).toBeGreaterThan(DEFAULT_COST_LIMITS.maxCost);
    expect(stopped.cost).toBeLessThanOrEqual(full.cost);
    expect(costRefusal(stopped, DEFAULT_COST_LIMITS)?.message).toMatch(/^This query can answer more than /);
  });
});

describe("the schema's lists", () => {
  const fields = Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith("__"))
    .flatMap((type) =>
      Object.values(isObjectType(type) ? type.getFields() : {}).map((f) => [`${type.name}.${f.name}`, f] as const),
    );

  it.each(fields.filter(([, f]) => isListType(getNullableType(f.type)) && isCompositeType(getNamedType(f.type))))(
    "%s declares its size for the cost estimate",
    (_name, field) => {
      expect(field.extensions["listSize"]).toBeDefined();
    },
  );

  it.each(fields.filter(([, f]) => f.args.some((a) => a.name === "limit")))(
    "%s is sized by its limit",
    (_name, field) => {
      expect((field.extensions["listSize"] as ListSize | undefined) ?? {}).toHaveProperty("argument", "limit");
    },
  );
});

describe("the REST operations", () => {
  const documents = Object.entries(operations).filter(
    (entry): entry is [string, DocumentNode] =>
      typeof entry[1] === "object" && entry[1].definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION),
  );

  it("are all here", () => {
    expect(documents.length).toBeGreaterThanOrEqual(13);
  });

  it.each(documents)("%s fits the default limits at its maximum limits", (_name, document) => {
    const worst = operationCost(schema, document, { worstCase: true });
    expect(worst.rows).toBeLessThanOrEqual(DEFAULT_COST_LIMITS.maxRows);
    expect(worst.cost).toBeLessThanOrEqual(DEFAULT_COST_LIMITS.maxCost);
  });

  it("are held to the limits the configuration defaults to", () => {
    const { graphql } = loadConfig({ NODE_ENV: "test", PGLITE_DATA_DIR: "memory://" });
    expect({ maxRows: graphql.maxRows, maxCost: graphql.maxCost }).toEqual(DEFAULT_COST_LIMITS);
  });
});
