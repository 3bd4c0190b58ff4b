// Imported first by bench/catalog.ts, before anything that loads graphql, Koa or Prisma: the
// service is measured as Cloud Run runs it. graphql-js reads NODE_ENV once, when it is loaded, and
// in development checks every schema type it meets against other copies of the module
// (instanceOf), which production skips. NODE_ENV set by the caller is kept, and the bench says
// which one it ran with.
process.env["NODE_ENV"] ??= "production";

export const benchNodeEnv = process.env["NODE_ENV"];
