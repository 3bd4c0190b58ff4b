// The GraphQL operations behind the /api/v1 routes. Each is parsed and type-checked against
// schema/schema.graphql at codegen time; `npm run generate` refreshes src/rest/gql/.
import { graphql } from "./gql/gql.ts";

export const JobSummaryFields = graphql(`
  fragment JobSummaryFields on Job {
    id
    slug
    title
    workModel
    employmentType
    location {
      city
      state
      country
    }
    salary {
      min
      max
      currency
      period
    }
    company {
      id
      slug
      name
      logoUrl
    }
    publishedAt
  }
`);

export const JobsListOperation = graphql(`
  query RestJobsList($limit: Int!, $offset: Int!, $filter: JobFilter) {
    jobs(limit: $limit, offset: $offset, filter: $filter) {
      total
      limit
      offset
      items {
        ...JobSummaryFields
      }
    }
  }
`);
