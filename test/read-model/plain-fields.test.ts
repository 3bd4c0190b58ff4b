// The fields a page of jobs reads for every row are plain reads of the row's own properties: no
// resolver in the schema, so compiled operations (src/graphql/compiled-operations.ts) read them inline instead
// of calling a resolver with a resolve-info object per row. The answers themselves are covered by
// the REST and read-model tests; this pins the shape that makes them cheap.
import type { GraphQLObjectType } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.ts";

const fieldsOf = (name: string) => (schema.getType(name) as GraphQLObjectType).getFields();

describe("plain-read fields", () => {
  it.each([
    ["Job", ["id", "slug", "title", "employmentType", "workModel", "publishedAt", "distanceKm", "location", "salary"]],
    ["Company", ["id", "slug", "name", "logoUrl"]],
  ])("%s reads %j without a resolver", (type, names) => {
    const fields = fieldsOf(type);
    for (const name of names) expect(fields[name]?.resolve, `${type}.${name}`).toBeUndefined();
  });

  it("keeps the resolvers of fields that gate or load (a job's company is gated)", () => {
    const job = fieldsOf("Job");
    for (const name of ["company", "skills", "sector"]) {
      expect(job[name]?.resolve, `Job.${name}`).toBeTypeOf("function");
    }
  });
});
