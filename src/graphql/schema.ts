// Imports every domain type for its side effect of registering with the builder, then builds.
import { lexicographicSortSchema } from "graphql";
import { builder } from "./builder.ts";
import "./types/agent.ts";
import "./types/company.ts";
import "./types/job/object.ts";
import "./types/job/root-fields.ts";
import "./types/job/facets.ts";
import "./search/reading-type.ts";
import "./search/suggest.ts";
import "./types/job-changes.ts";
import "./types/talent.ts";
import "./types/taxonomy.ts";

export const schema = lexicographicSortSchema(builder.toSchema());
