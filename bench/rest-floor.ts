// The REST stack's fixed cost per request, layer by layer, on an answer served from memory (by
// default facets-filtered of bench:catalog: after its first count, both the service and the
// direct-SQL baseline answer it from memory, so the difference is the stack alone). Run by hand,
// never in CI, on any migrated database with jobs (embedded or DATABASE_URL=...):
//   npm run bench:rest-floor -- [--path /api/v1/...] [--duration 4] [--rounds 3] [--connections 8]
//
// Four servers in this process answer the same bytes, measured in turn, round after round:
// - node:http: the app's body, JSON-encoded and hashed for its ETag per request, as the baseline of
//   bench:catalog writes it;
// - koa+router: the same through Koa and @koa/router (the framework the card prescribes);
// - +edge: the app's edge (src/app.ts useEdge: request log, request id, errors, CORS, dependency
//   faults, the per-IP limit) in front of that route;
// - app: the service itself (createApp): the route parses its parameters, runs the compiled GraphQL
//   operation (the gates, the remembered counts) and presents it.
// What it prints: the main thread's CPU per request (the load generator runs in a worker thread),
// each layer's median over the rounds and what it adds to the layer before, and the p50 latency.
// With the closed-loop load of bench:catalog (8 connections), a route answered from memory keeps the
// main thread busy, so its p50 ratio follows its CPU ratio.
import { benchNodeEnv } from "./production-env.ts";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import Router from "@koa/router";
import Koa from "koa";
import { createApp, useEdge } from "../src/app.ts";
import { openDatabase } from "../src/db/database.ts";
import type { AppState } from "../src/http/state.ts";
import { createLogger } from "../src/logger.ts";
import { strongEtag } from "../src/rest/respond.ts";
import { startLoadWorker } from "./load-worker.ts";
import { benchServiceConfig } from "./service-config.ts";

const { values: flags } = parseArgs({
  options: {
    path: {
      type: "string",
      default: "/api/v1/jobs/facets?work_model=remote&facets=work_model,employment_type,sector,skill,country",
    },
    duration: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "8" },
  },
});
const durationMs = Number(flags.duration) * 1000;
const rounds = Number(flags.rounds);
const connections = Number(flags.connections);
if (!(durationMs > 0 && rounds >= 1 && connections >= 1))
  throw new Error("--duration, --rounds, --connections: positive");
const HOST = "catalog.bench.test";

const config = benchServiceConfig();
const db = await openDatabase(config.database, { timeouts: config.databaseTimeouts });
const logger = createLogger(config);
const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

const app = createApp({ config, db, logger });
const handleApp = app.callback();
const appServer = http.createServer((req, res) => void handleApp(req, res));
const appPort = await listen(appServer);

// The app's answer, asked until it is served from memory (a first count may answer 503 while it runs).
async function appBody(): Promise<unknown> {
  for (let attempt = 0; attempt < 60; attempt++) {
    const res = await fetch(`http://127.0.0.1:${appPort}${flags.path}`, { headers: { host: HOST } });
    if (res.status === 200) return res.json();
    if (res.status !== 503) throw new Error(`${flags.path}: HTTP ${res.status} ${await res.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${flags.path}: still 503 after 30 s`);
}
const body = await appBody();

/** What every layer but the app writes: the body encoded and hashed per request, as the baseline does. */
function encoded(): { bytes: Buffer; etag: string } {
  const bytes = Buffer.from(JSON.stringify(body));
  return { bytes, etag: strongEtag(bytes) };
}
const CACHE_CONTROL = `public, max-age=${config.catalogCacheMaxAge}`;
const pathname = flags.path.split("?", 1)[0]!;

const bare = http.createServer((req, res) => {
  // As the baseline: the query parsed, the answer after a turn of the event loop (its cache is a promise).
  void new URL(req.url ?? "/", "http://baseline").searchParams;
  void Promise.resolve().then(() => {
    const { bytes, etag } = encoded();
    res.writeHead(200, {
      "content-type": "application/json",
      etag,
      "cache-control": CACHE_CONTROL,
      "content-length": bytes.length,
    });
    res.end(bytes);
  });
});

function koaServer(withEdge: boolean): http.Server {
  const koa = new Koa<AppState>({ proxy: config.trustProxy, maxIpsCount: 1 });
  koa.silent = true;
  if (withEdge) useEdge(koa, config, logger, null);
  const router = new Router<AppState>();
  router.get(pathname, async (ctx) => {
    void new URLSearchParams(ctx.querystring);
    const { bytes, etag } = await Promise.resolve(encoded());
    ctx.status = 200;
    ctx.type = "application/json";
    ctx.set("ETag", etag);
    ctx.set("Cache-Control", CACHE_CONTROL);
    ctx.body = bytes;
  });
  koa.use(router.routes());
  const handle = koa.callback();
  return http.createServer((req, res) => void handle(req, res));
}

const servers = { "node:http": bare, "koa+router": koaServer(false), "+edge": koaServer(true), app: appServer };
// The app listens already (its body was asked for above); the others start here.
const layers: { name: string; port: number }[] = [];
for (const [name, server] of Object.entries(servers)) {
  layers.push({ name, port: server.listening ? (server.address() as AddressInfo).port : await listen(server) });
}

const worker = startLoadWorker();
const load = worker.load;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const samples = new Map(layers.map((l) => [l.name, { cpu: [] as number[], p50: [] as number[] }]));
console.log(
  `NODE_ENV=${benchNodeEnv}, ${db.kind}; ${flags.path}; ${connections} connections, ${rounds} round(s) of ${durationMs / 1000} s a layer`,
);
for (const layer of layers) {
  await load({ port: layer.port, host: HOST, paths: [flags.path], connections, warmupMs: 0, durationMs: 2000 });
}
for (let round = 1; round <= rounds; round++) {
  for (const layer of layers) {
    const request = { port: layer.port, host: HOST, paths: [flags.path], connections, warmupMs: 0, durationMs };
    const before = process.threadCpuUsage();
    const result = await load(request);
    const cpu = process.threadCpuUsage(before);
    if (result.errors > 0) throw new Error(`${layer.name}: ${result.errors} failures, first: ${result.firstError}`);
    const sorted = result.latencies.sort();
    const s = samples.get(layer.name)!;
    s.cpu.push((cpu.user + cpu.system) / result.requests);
    s.p50.push(sorted[sorted.length >> 1]!);
    console.log(
      `  round ${round} ${layer.name.padEnd(10)} ${result.requests} requests, CPU ${s.cpu.at(-1)!.toFixed(1)} µs/req, p50 ${s.p50.at(-1)!.toFixed(3)} ms`,
    );
  }
}
await worker.terminate();

console.log(`\nlayer       CPU µs/req (median)  added   / node:http   p50 ms (median)`);
let previous: number | null = null;
const floor = median(samples.get("node:http")!.cpu);
for (const layer of layers) {
  const s = samples.get(layer.name)!;
  const cpu = median(s.cpu);
  console.log(
    `${layer.name.padEnd(10)}  ${cpu.toFixed(1).padStart(18)}  ${previous === null ? "".padStart(5) : `${cpu - previous >= 0 ? "+" : ""}${(cpu - previous).toFixed(1)}`.padStart(5)}  ${`${(cpu / floor).toFixed(2)}x`.padStart(11)}  ${median(s.p50).toFixed(3).padStart(15)}`,
  );
  previous = cpu;
}
console.log(
  `\n1.2x of node:http is ${(1.2 * floor).toFixed(1)} µs/req: the most the service may spend on this answer for bench:catalog's bar (p50 at most 1.2x the baseline's).`,
);

for (const server of Object.values(servers)) server.close();
await db.close();
process.exit(0);
