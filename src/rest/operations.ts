// The GraphQL operations behind the /api/v1 routes: one query per route. Each is parsed and
// type-checked against schema/schema.graphql at codegen time; `npm run generate` refreshes
// src/rest/gql/, whose result types the presenters in ./present.ts consume.
import { graphql } from "./gql/gql.ts";

export const Fragments = graphql(`
  fragment CompanyRefFields on Company {
    id
    slug
    name
    logoUrl
  }

  fragment SectorRefFields on Sector {
    id
    slug
    name
  }

  fragment SkillRefFields on Skill {
    id
    slug
    name
    category
  }

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
    distanceKm
    salary {
      min
      max
      currency
      period
    }
    company {
      ...CompanyRefFields
    }
    publishedAt
  }

  fragment TalentSummaryFields on Talent {
    id
    handle
    displayName
    headline
    avatarUrl
    location {
      city
      state
      country
    }
    availability
    workModels
    yearsExperience
  }

  fragment AgentSummaryFields on Agent {
    id
    slug
    name
    tagline
    category
    pricing {
      model
      amount
      currency
      period
      unit
    }
    vendor {
      ...CompanyRefFields
    }
    publishedAt
  }

  fragment CompanySummaryFields on Company {
    id
    slug
    name
    tagline
    logoUrl
    size
    headquarters {
      city
      state
      country
    }
    openJobCount
  }

  fragment SectorFields on Sector {
    id
    slug
    name
    openJobCount
    companyCount
    talentCount
  }

  fragment SkillFields on Skill {
    id
    slug
    name
    category
    openJobCount
    talentCount
    agentCount
  }
`);

export const JobsListOperation = graphql(`
  query RestJobsList($limit: Int!, $offset: Int!, $after: String, $filter: JobFilter, $sort: JobSort) {
    jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {
      total
      totalExact
      offset
      nextCursor
      search {
        words
        phrases
        excluded
        ignored
        expansions {
          word
          kind
          to
        }
        place {
          city
          state
          country
          location
        }
        company {
          name
          slugs
        }
        synonymsVersion
      }
      items {
        ...JobSummaryFields
      }
    }
  }
`);

export const JobFacetsOperation = graphql(`
  query RestJobFacets($filter: JobFilter, $facets: [JobFacet!]!, $facetLimit: Int!, $salaryInterval: Int!) {
    jobFacets(filter: $filter, facets: $facets, facetLimit: $facetLimit, salaryInterval: $salaryInterval) {
      total
      exact
      workModel {
        ...FacetCountFields
      }
      employmentType {
        ...FacetCountFields
      }
      sector {
        ...FacetCountFields
      }
      skill {
        ...FacetCountFields
      }
      country {
        ...FacetCountFields
      }
      salary {
        currency
        period
        interval
        ranges {
          from
          to
          count
        }
      }
    }
  }
`);

export const FacetCountFields = graphql(`
  fragment FacetCountFields on FacetCount {
    value
    name
    count
  }
`);

export const JobOperation = graphql(`
  query RestJob($slug: String!) {
    job(slug: $slug) {
      ...JobSummaryFields
      location {
        country
      }
      seniority
      descriptionHtml
      descriptionText
      applyUrl
      validThrough
      updatedAt
      sector {
        ...SectorRefFields
      }
      skills {
        ...SkillRefFields
      }
    }
  }
`);

export const TalentsListOperation = graphql(`
  query RestTalentsList($limit: Int!, $offset: Int!, $after: String, $filter: TalentFilter, $sort: TalentSort) {
    talents(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {
      total
      totalExact
      offset
      nextCursor
      items {
        ...TalentSummaryFields
      }
    }
  }
`);

export const TalentOperation = graphql(`
  query RestTalent($handle: String!) {
    talent(handle: $handle) {
      ...TalentSummaryFields
      bio
      memberSince
      updatedAt
      links {
        kind
        url
      }
      skills {
        ...SkillRefFields
      }
      sectors {
        ...SectorRefFields
      }
    }
  }
`);

export const AgentsListOperation = graphql(`
  query RestAgentsList($limit: Int!, $offset: Int!, $after: String, $filter: AgentFilter) {
    agents(limit: $limit, offset: $offset, after: $after, filter: $filter) {
      total
      totalExact
      offset
      nextCursor
      items {
        ...AgentSummaryFields
      }
    }
  }
`);

export const AgentOperation = graphql(`
  query RestAgent($slug: String!) {
    agent(slug: $slug) {
      ...AgentSummaryFields
      description
      capabilities
      version
      websiteUrl
      updatedAt
      skills {
        ...SkillRefFields
      }
    }
  }
`);

export const CompaniesListOperation = graphql(`
  query RestCompaniesList($limit: Int!, $offset: Int!) {
    companies(limit: $limit, offset: $offset) {
      total
      totalExact
      items {
        ...CompanySummaryFields
      }
    }
  }
`);

export const CompanyOperation = graphql(`
  query RestCompany($slug: String!, $openJobsLimit: Int!) {
    company(slug: $slug) {
      ...CompanySummaryFields
      description
      websiteUrl
      foundedYear
      updatedAt
      sectors {
        ...SectorRefFields
      }
      openJobs(limit: $openJobsLimit) {
        ...JobSummaryFields
      }
    }
  }
`);

export const SectorsListOperation = graphql(`
  query RestSectorsList {
    sectors {
      ...SectorFields
    }
  }
`);

export const SectorOperation = graphql(`
  query RestSector($slug: String!) {
    sector(slug: $slug) {
      ...SectorFields
    }
  }
`);

export const SkillsListOperation = graphql(`
  query RestSkillsList($limit: Int!, $offset: Int!, $category: String) {
    skills(limit: $limit, offset: $offset, category: $category) {
      total
      totalExact
      items {
        ...SkillFields
      }
    }
  }
`);

export const SkillOperation = graphql(`
  query RestSkill($slug: String!) {
    skill(slug: $slug) {
      ...SkillFields
    }
  }
`);

export const JobChangesOperation = graphql(`
  query RestJobChanges($since: String, $limit: Int!) {
    jobChanges(since: $since, limit: $limit) {
      nextSince
      hasMore
      items {
        kind
        slug
        at
      }
    }
  }
`);

export const SuggestOperation = graphql(`
  query RestSuggest($q: String!, $kinds: [SuggestionKind!], $limit: Int!) {
    suggest(q: $q, kinds: $kinds, limit: $limit) {
      kind
      text
      openJobs
      typos
      filter {
        q
        skill
        company
        location
      }
    }
  }
`);
