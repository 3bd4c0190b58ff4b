// Configures the schema builder and its plugins; types are defined in ./types/.
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import type PrismaTypes from "../generated/pothos-prisma-types.ts";
import { getDatamodel } from "../generated/pothos-prisma-types.ts";
import type { GraphQLContext } from "./context.ts";
import { DateTimeScalar } from "./instant.ts";

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
  };
}>({
  plugins: [PrismaPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    // Off: Pothos' check that a resolver spreads the planner's `query` into its Prisma call. A
    // relation loaded by a statement of its own shows in the SQL-log snapshot tests instead
    // (test/read-model/query-count.test.ts).
    onUnusedQuery: null,
  },
});

builder.addScalarType("DateTime", DateTimeScalar);

builder.queryType({
  description:
    "The public catalog: everything here is visible to anonymous users. Every operation is costed before it runs, in what its answer can hold at the most: each list multiplies what it nests by its limit (as given, else its default; a list without one, such as a job's skills, counts as 20 and sectors as 200). An operation over 5,000 rows (objects) or 50,000 field values by default is refused with QUERY_LIMIT_EXCEEDED, naming both figures: lower the limits or nest fewer lists.",
});

/**
 * Options that make a field a plain read of its parent's property of the same name: the schema
 * gets no resolver for it, so graphql-jit (./compiled-operations.ts) reads the property inline where a field
 * with a resolver costs a call and a resolve-info object per row (about 200 KiB of garbage on a
 * 50-job page before this). This is Pothos's own mark of an exposed field (core's createField
 * drops the resolver when the field's name is `name`, and keeps it otherwise, so a misnamed mark
 * changes nothing). `t.expose*` would set it too, but on a Prisma object in select mode the
 * Prisma plugin wraps exposed fields with a loader lookup per row; these fields read columns the
 * type always selects. The field's own `resolve` states the read for the types.
 */
export const plainRead = (name: string) => ({ extensions: { pothosExposedField: name } }) as const;
