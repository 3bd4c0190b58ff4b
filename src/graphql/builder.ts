// Configures the schema builder and its plugins; types are defined in ./types/.
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import { DateTimeResolver } from "graphql-scalars";
import type PrismaTypes from "../generated/pothos-prisma-types.ts";
import { getDatamodel } from "../generated/pothos-prisma-types.ts";
import type { GraphQLContext } from "./context.ts";

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

builder.addScalarType("DateTime", DateTimeResolver);

builder.queryType({ description: "The public catalog: everything here is visible to anonymous users." });
