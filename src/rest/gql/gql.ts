/* eslint-disable */
import * as types from './graphql.ts';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment CompanyRefFields on Company {\n    id\n    slug\n    name\n    logoUrl\n  }\n\n  fragment SectorRefFields on Sector {\n    id\n    slug\n    name\n  }\n\n  fragment SkillRefFields on Skill {\n    id\n    slug\n    name\n    category\n  }\n\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment TalentSummaryFields on Talent {\n    id\n    handle\n    displayName\n    headline\n    avatarUrl\n    location {\n      city\n      state\n      country\n    }\n    availability\n    workModels\n    yearsExperience\n  }\n\n  fragment AgentSummaryFields on Agent {\n    id\n    slug\n    name\n    tagline\n    category\n    pricing {\n      model\n      amount\n      currency\n      period\n      unit\n    }\n    vendor {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment CompanySummaryFields on Company {\n    id\n    slug\n    name\n    tagline\n    logoUrl\n    size\n    headquarters {\n      city\n      state\n      country\n    }\n    openJobCount\n  }\n\n  fragment SectorFields on Sector {\n    id\n    slug\n    name\n    openJobCount\n    companyCount\n    talentCount\n  }\n\n  fragment SkillFields on Skill {\n    id\n    slug\n    name\n    category\n    openJobCount\n    talentCount\n    agentCount\n  }\n": typeof types.CompanyRefFieldsFragmentDoc,
    "\n  query RestJobsList($limit: Int!, $offset: Int!, $after: String, $filter: JobFilter, $sort: JobSort) {\n    jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n": typeof types.RestJobsListDocument,
    "\n  query RestJob($slug: String!) {\n    job(slug: $slug) {\n      ...JobSummaryFields\n      location {\n        country\n      }\n      seniority\n      descriptionHtml\n      descriptionText\n      applyUrl\n      validThrough\n      updatedAt\n      sector {\n        ...SectorRefFields\n      }\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n": typeof types.RestJobDocument,
    "\n  query RestTalentsList($limit: Int!, $offset: Int!, $after: String, $filter: TalentFilter) {\n    talents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...TalentSummaryFields\n      }\n    }\n  }\n": typeof types.RestTalentsListDocument,
    "\n  query RestTalent($handle: String!) {\n    talent(handle: $handle) {\n      ...TalentSummaryFields\n      bio\n      memberSince\n      updatedAt\n      links {\n        kind\n        url\n      }\n      skills {\n        ...SkillRefFields\n      }\n      sectors {\n        ...SectorRefFields\n      }\n    }\n  }\n": typeof types.RestTalentDocument,
    "\n  query RestAgentsList($limit: Int!, $offset: Int!, $after: String, $filter: AgentFilter) {\n    agents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...AgentSummaryFields\n      }\n    }\n  }\n": typeof types.RestAgentsListDocument,
    "\n  query RestAgent($slug: String!) {\n    agent(slug: $slug) {\n      ...AgentSummaryFields\n      description\n      capabilities\n      version\n      websiteUrl\n      updatedAt\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n": typeof types.RestAgentDocument,
    "\n  query RestCompaniesList($limit: Int!, $offset: Int!) {\n    companies(limit: $limit, offset: $offset) {\n      total\n      totalExact\n      items {\n        ...CompanySummaryFields\n      }\n    }\n  }\n": typeof types.RestCompaniesListDocument,
    "\n  query RestCompany($slug: String!, $openJobsLimit: Int!) {\n    company(slug: $slug) {\n      ...CompanySummaryFields\n      description\n      websiteUrl\n      foundedYear\n      updatedAt\n      sectors {\n        ...SectorRefFields\n      }\n      openJobs(limit: $openJobsLimit) {\n        ...JobSummaryFields\n      }\n    }\n  }\n": typeof types.RestCompanyDocument,
    "\n  query RestSectorsList {\n    sectors {\n      ...SectorFields\n    }\n  }\n": typeof types.RestSectorsListDocument,
    "\n  query RestSector($slug: String!) {\n    sector(slug: $slug) {\n      ...SectorFields\n    }\n  }\n": typeof types.RestSectorDocument,
    "\n  query RestSkillsList($limit: Int!, $offset: Int!, $category: String) {\n    skills(limit: $limit, offset: $offset, category: $category) {\n      total\n      totalExact\n      items {\n        ...SkillFields\n      }\n    }\n  }\n": typeof types.RestSkillsListDocument,
    "\n  query RestSkill($slug: String!) {\n    skill(slug: $slug) {\n      ...SkillFields\n    }\n  }\n": typeof types.RestSkillDocument,
    "\n  query RestJobChanges($since: String, $limit: Int!) {\n    jobChanges(since: $since, limit: $limit) {\n      nextSince\n      hasMore\n      items {\n        kind\n        slug\n        at\n      }\n    }\n  }\n": typeof types.RestJobChangesDocument,
};
const documents: Documents = {
    "\n  fragment CompanyRefFields on Company {\n    id\n    slug\n    name\n    logoUrl\n  }\n\n  fragment SectorRefFields on Sector {\n    id\n    slug\n    name\n  }\n\n  fragment SkillRefFields on Skill {\n    id\n    slug\n    name\n    category\n  }\n\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment TalentSummaryFields on Talent {\n    id\n    handle\n    displayName\n    headline\n    avatarUrl\n    location {\n      city\n      state\n      country\n    }\n    availability\n    workModels\n    yearsExperience\n  }\n\n  fragment AgentSummaryFields on Agent {\n    id\n    slug\n    name\n    tagline\n    category\n    pricing {\n      model\n      amount\n      currency\n      period\n      unit\n    }\n    vendor {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment CompanySummaryFields on Company {\n    id\n    slug\n    name\n    tagline\n    logoUrl\n    size\n    headquarters {\n      city\n      state\n      country\n    }\n    openJobCount\n  }\n\n  fragment SectorFields on Sector {\n    id\n    slug\n    name\n    openJobCount\n    companyCount\n    talentCount\n  }\n\n  fragment SkillFields on Skill {\n    id\n    slug\n    name\n    category\n    openJobCount\n    talentCount\n    agentCount\n  }\n": types.CompanyRefFieldsFragmentDoc,
    "\n  query RestJobsList($limit: Int!, $offset: Int!, $after: String, $filter: JobFilter, $sort: JobSort) {\n    jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n": types.RestJobsListDocument,
    "\n  query RestJob($slug: String!) {\n    job(slug: $slug) {\n      ...JobSummaryFields\n      location {\n        country\n      }\n      seniority\n      descriptionHtml\n      descriptionText\n      applyUrl\n      validThrough\n      updatedAt\n      sector {\n        ...SectorRefFields\n      }\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n": types.RestJobDocument,
    "\n  query RestTalentsList($limit: Int!, $offset: Int!, $after: String, $filter: TalentFilter) {\n    talents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...TalentSummaryFields\n      }\n    }\n  }\n": types.RestTalentsListDocument,
    "\n  query RestTalent($handle: String!) {\n    talent(handle: $handle) {\n      ...TalentSummaryFields\n      bio\n      memberSince\n      updatedAt\n      links {\n        kind\n        url\n      }\n      skills {\n        ...SkillRefFields\n      }\n      sectors {\n        ...SectorRefFields\n      }\n    }\n  }\n": types.RestTalentDocument,
    "\n  query RestAgentsList($limit: Int!, $offset: Int!, $after: String, $filter: AgentFilter) {\n    agents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...AgentSummaryFields\n      }\n    }\n  }\n": types.RestAgentsListDocument,
    "\n  query RestAgent($slug: String!) {\n    agent(slug: $slug) {\n      ...AgentSummaryFields\n      description\n      capabilities\n      version\n      websiteUrl\n      updatedAt\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n": types.RestAgentDocument,
    "\n  query RestCompaniesList($limit: Int!, $offset: Int!) {\n    companies(limit: $limit, offset: $offset) {\n      total\n      totalExact\n      items {\n        ...CompanySummaryFields\n      }\n    }\n  }\n": types.RestCompaniesListDocument,
    "\n  query RestCompany($slug: String!, $openJobsLimit: Int!) {\n    company(slug: $slug) {\n      ...CompanySummaryFields\n      description\n      websiteUrl\n      foundedYear\n      updatedAt\n      sectors {\n        ...SectorRefFields\n      }\n      openJobs(limit: $openJobsLimit) {\n        ...JobSummaryFields\n      }\n    }\n  }\n": types.RestCompanyDocument,
    "\n  query RestSectorsList {\n    sectors {\n      ...SectorFields\n    }\n  }\n": types.RestSectorsListDocument,
    "\n  query RestSector($slug: String!) {\n    sector(slug: $slug) {\n      ...SectorFields\n    }\n  }\n": types.RestSectorDocument,
    "\n  query RestSkillsList($limit: Int!, $offset: Int!, $category: String) {\n    skills(limit: $limit, offset: $offset, category: $category) {\n      total\n      totalExact\n      items {\n        ...SkillFields\n      }\n    }\n  }\n": types.RestSkillsListDocument,
    "\n  query RestSkill($slug: String!) {\n    skill(slug: $slug) {\n      ...SkillFields\n    }\n  }\n": types.RestSkillDocument,
    "\n  query RestJobChanges($since: String, $limit: Int!) {\n    jobChanges(since: $since, limit: $limit) {\n      nextSince\n      hasMore\n      items {\n        kind\n        slug\n        at\n      }\n    }\n  }\n": types.RestJobChangesDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CompanyRefFields on Company {\n    id\n    slug\n    name\n    logoUrl\n  }\n\n  fragment SectorRefFields on Sector {\n    id\n    slug\n    name\n  }\n\n  fragment SkillRefFields on Skill {\n    id\n    slug\n    name\n    category\n  }\n\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment TalentSummaryFields on Talent {\n    id\n    handle\n    displayName\n    headline\n    avatarUrl\n    location {\n      city\n      state\n      country\n    }\n    availability\n    workModels\n    yearsExperience\n  }\n\n  fragment AgentSummaryFields on Agent {\n    id\n    slug\n    name\n    tagline\n    category\n    pricing {\n      model\n      amount\n      currency\n      period\n      unit\n    }\n    vendor {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment CompanySummaryFields on Company {\n    id\n    slug\n    name\n    tagline\n    logoUrl\n    size\n    headquarters {\n      city\n      state\n      country\n    }\n    openJobCount\n  }\n\n  fragment SectorFields on Sector {\n    id\n    slug\n    name\n    openJobCount\n    companyCount\n    talentCount\n  }\n\n  fragment SkillFields on Skill {\n    id\n    slug\n    name\n    category\n    openJobCount\n    talentCount\n    agentCount\n  }\n"): (typeof documents)["\n  fragment CompanyRefFields on Company {\n    id\n    slug\n    name\n    logoUrl\n  }\n\n  fragment SectorRefFields on Sector {\n    id\n    slug\n    name\n  }\n\n  fragment SkillRefFields on Skill {\n    id\n    slug\n    name\n    category\n  }\n\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment TalentSummaryFields on Talent {\n    id\n    handle\n    displayName\n    headline\n    avatarUrl\n    location {\n      city\n      state\n      country\n    }\n    availability\n    workModels\n    yearsExperience\n  }\n\n  fragment AgentSummaryFields on Agent {\n    id\n    slug\n    name\n    tagline\n    category\n    pricing {\n      model\n      amount\n      currency\n      period\n      unit\n    }\n    vendor {\n      ...CompanyRefFields\n    }\n    publishedAt\n  }\n\n  fragment CompanySummaryFields on Company {\n    id\n    slug\n    name\n    tagline\n    logoUrl\n    size\n    headquarters {\n      city\n      state\n      country\n    }\n    openJobCount\n  }\n\n  fragment SectorFields on Sector {\n    id\n    slug\n    name\n    openJobCount\n    companyCount\n    talentCount\n  }\n\n  fragment SkillFields on Skill {\n    id\n    slug\n    name\n    category\n    openJobCount\n    talentCount\n    agentCount\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestJobsList($limit: Int!, $offset: Int!, $after: String, $filter: JobFilter, $sort: JobSort) {\n    jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestJobsList($limit: Int!, $offset: Int!, $after: String, $filter: JobFilter, $sort: JobSort) {\n    jobs(limit: $limit, offset: $offset, after: $after, filter: $filter, sort: $sort) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestJob($slug: String!) {\n    job(slug: $slug) {\n      ...JobSummaryFields\n      location {\n        country\n      }\n      seniority\n      descriptionHtml\n      descriptionText\n      applyUrl\n      validThrough\n      updatedAt\n      sector {\n        ...SectorRefFields\n      }\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestJob($slug: String!) {\n    job(slug: $slug) {\n      ...JobSummaryFields\n      location {\n        country\n      }\n      seniority\n      descriptionHtml\n      descriptionText\n      applyUrl\n      validThrough\n      updatedAt\n      sector {\n        ...SectorRefFields\n      }\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestTalentsList($limit: Int!, $offset: Int!, $after: String, $filter: TalentFilter) {\n    talents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...TalentSummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestTalentsList($limit: Int!, $offset: Int!, $after: String, $filter: TalentFilter) {\n    talents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...TalentSummaryFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestTalent($handle: String!) {\n    talent(handle: $handle) {\n      ...TalentSummaryFields\n      bio\n      memberSince\n      updatedAt\n      links {\n        kind\n        url\n      }\n      skills {\n        ...SkillRefFields\n      }\n      sectors {\n        ...SectorRefFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestTalent($handle: String!) {\n    talent(handle: $handle) {\n      ...TalentSummaryFields\n      bio\n      memberSince\n      updatedAt\n      links {\n        kind\n        url\n      }\n      skills {\n        ...SkillRefFields\n      }\n      sectors {\n        ...SectorRefFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestAgentsList($limit: Int!, $offset: Int!, $after: String, $filter: AgentFilter) {\n    agents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...AgentSummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestAgentsList($limit: Int!, $offset: Int!, $after: String, $filter: AgentFilter) {\n    agents(limit: $limit, offset: $offset, after: $after, filter: $filter) {\n      total\n      totalExact\n      offset\n      nextCursor\n      items {\n        ...AgentSummaryFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestAgent($slug: String!) {\n    agent(slug: $slug) {\n      ...AgentSummaryFields\n      description\n      capabilities\n      version\n      websiteUrl\n      updatedAt\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestAgent($slug: String!) {\n    agent(slug: $slug) {\n      ...AgentSummaryFields\n      description\n      capabilities\n      version\n      websiteUrl\n      updatedAt\n      skills {\n        ...SkillRefFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestCompaniesList($limit: Int!, $offset: Int!) {\n    companies(limit: $limit, offset: $offset) {\n      total\n      totalExact\n      items {\n        ...CompanySummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestCompaniesList($limit: Int!, $offset: Int!) {\n    companies(limit: $limit, offset: $offset) {\n      total\n      totalExact\n      items {\n        ...CompanySummaryFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestCompany($slug: String!, $openJobsLimit: Int!) {\n    company(slug: $slug) {\n      ...CompanySummaryFields\n      description\n      websiteUrl\n      foundedYear\n      updatedAt\n      sectors {\n        ...SectorRefFields\n      }\n      openJobs(limit: $openJobsLimit) {\n        ...JobSummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestCompany($slug: String!, $openJobsLimit: Int!) {\n    company(slug: $slug) {\n      ...CompanySummaryFields\n      description\n      websiteUrl\n      foundedYear\n      updatedAt\n      sectors {\n        ...SectorRefFields\n      }\n      openJobs(limit: $openJobsLimit) {\n        ...JobSummaryFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestSectorsList {\n    sectors {\n      ...SectorFields\n    }\n  }\n"): (typeof documents)["\n  query RestSectorsList {\n    sectors {\n      ...SectorFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestSector($slug: String!) {\n    sector(slug: $slug) {\n      ...SectorFields\n    }\n  }\n"): (typeof documents)["\n  query RestSector($slug: String!) {\n    sector(slug: $slug) {\n      ...SectorFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestSkillsList($limit: Int!, $offset: Int!, $category: String) {\n    skills(limit: $limit, offset: $offset, category: $category) {\n      total\n      totalExact\n      items {\n        ...SkillFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestSkillsList($limit: Int!, $offset: Int!, $category: String) {\n    skills(limit: $limit, offset: $offset, category: $category) {\n      total\n      totalExact\n      items {\n        ...SkillFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestSkill($slug: String!) {\n    skill(slug: $slug) {\n      ...SkillFields\n    }\n  }\n"): (typeof documents)["\n  query RestSkill($slug: String!) {\n    skill(slug: $slug) {\n      ...SkillFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestJobChanges($since: String, $limit: Int!) {\n    jobChanges(since: $since, limit: $limit) {\n      nextSince\n      hasMore\n      items {\n        kind\n        slug\n        at\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestJobChanges($since: String, $limit: Int!) {\n    jobChanges(since: $since, limit: $limit) {\n      nextSince\n      hasMore\n      items {\n        kind\n        slug\n        at\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;