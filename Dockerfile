# syntax=docker/dockerfile:1
# The service's container image, for Cloud Run (README, "Deployment"). Built by cloudbuild.yaml;
# locally: docker build -t marketplace-api . (BuildKit, for the npm cache mounts).
#
# The base image is the official Node image on Debian (glibc, which sharp's prebuilt libvips
# needs), at the same Node version as the `node` devDependency that runs the tests.
# test/deploy/ checks this file and runs its commands (production-install.test.ts).

# ---- build: the full install, whose postinstall generates the Prisma client (src/generated/)
# with the prisma CLI, a dev dependency.
FROM node:22.23.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma/schema.prisma ./prisma/
COPY scripts/prisma-generate.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# ---- the image: production dependencies, the generated client, the source. No build step:
# Node runs the TypeScript directly (type stripping).
FROM node:22.23.3-bookworm-slim
ENV NODE_ENV=production
# Cloud Run sets PORT itself (8080 unless told otherwise); this is for `docker run`.
ENV PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/prisma-generate.mjs scripts/prune-dev-optional.mjs ./scripts/
# Before the install: its postinstall checks the client is there instead of generating it.
COPY --from=build /app/src/generated ./src/generated
# npm keeps the prisma CLI and TypeScript in a production install (optional peers of
# @prisma/client); the prune removes them and their ~130 dependencies.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund \
  && node scripts/prune-dev-optional.mjs
COPY prisma ./prisma
COPY scripts ./scripts
COPY src ./src
# Files stay root-owned and read-only to the service; it writes only under /tmp (uploads).
USER node
EXPOSE 8080
# Exec form: node is PID 1 and receives Cloud Run's SIGTERM itself (npm would swallow it).
# Runtime flags (the same in package.json's start): a 64 MB young generation, since a page of jobs
# allocates a few MB and the default 16 MB made the scavenger ~13 % of a catalog request's CPU; and
# AsyncLocalStorage (the log's request context) on async context frames instead of promise hooks,
# which ran on every promise (Node 24's default). bench:catalog measured both (README, Performance).
# Migrations are a separate command from the same image (cloudbuild.yaml runs it as a job):
#   node --disable-warning=ExperimentalWarning scripts/migrate.ts
CMD ["node", "--max-semi-space-size=64", "--experimental-async-context-frame", "--disable-warning=ExperimentalWarning", "src/main.ts"]
