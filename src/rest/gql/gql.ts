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
    "\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n      country\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      id\n      slug\n      name\n      logoUrl\n    }\n    publishedAt\n  }\n": typeof types.JobSummaryFieldsFragmentDoc,
    "\n  query RestJobsList($limit: Int!, $offset: Int!, $filter: JobFilter) {\n    jobs(limit: $limit, offset: $offset, filter: $filter) {\n      total\n      limit\n      offset\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n": typeof types.RestJobsListDocument,
};
const documents: Documents = {
    "\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n      country\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      id\n      slug\n      name\n      logoUrl\n    }\n    publishedAt\n  }\n": types.JobSummaryFieldsFragmentDoc,
    "\n  query RestJobsList($limit: Int!, $offset: Int!, $filter: JobFilter) {\n    jobs(limit: $limit, offset: $offset, filter: $filter) {\n      total\n      limit\n      offset\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n": types.RestJobsListDocument,
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
export function graphql(source: "\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n      country\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      id\n      slug\n      name\n      logoUrl\n    }\n    publishedAt\n  }\n"): (typeof documents)["\n  fragment JobSummaryFields on Job {\n    id\n    slug\n    title\n    workModel\n    employmentType\n    location {\n      city\n      state\n      country\n    }\n    salary {\n      min\n      max\n      currency\n      period\n    }\n    company {\n      id\n      slug\n      name\n      logoUrl\n    }\n    publishedAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestJobsList($limit: Int!, $offset: Int!, $filter: JobFilter) {\n    jobs(limit: $limit, offset: $offset, filter: $filter) {\n      total\n      limit\n      offset\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestJobsList($limit: Int!, $offset: Int!, $filter: JobFilter) {\n    jobs(limit: $limit, offset: $offset, filter: $filter) {\n      total\n      limit\n      offset\n      items {\n        ...JobSummaryFields\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;