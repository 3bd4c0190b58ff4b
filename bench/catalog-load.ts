// The load generator of bench/catalog.ts, run in a worker thread so that it has its own event loop
// and the servers under test keep the main one. Closed loop: each of `connections` keep-alive
// connections sends its next request as soon as the previous answer has been read in full.
import http from "node:http";
import { parentPort } from "node:worker_threads";

export interface LoadRequest {
  port: number;
  /** The Host header of every request, so both servers build the same absolute links. */
  host: string;
  /** Paths (with query) to request in turn, round robin over all connections. */
  paths: string[];
  connections: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** First non-200 status or error message seen, for the report. */
  firstError: string | null;
  /** Every measured failure by status ("503", "ECONNRESET", ...), so no non-2xx goes unreported. */
  failures: Record<string, number>;
  elapsedMs: number;
  /** Latencies of the measured (post warm-up) successful requests, in ms, unsorted. */
  latencies: Float64Array;
  bytes: number;
}

function once(agent: http.Agent, request: LoadRequest, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        agent,
        host: "127.0.0.1",
        port: request.port,
        path,
        headers: { host: request.host, accept: "application/json" },
      },
      (res) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => (bytes += chunk.length));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
  });
}

async function run(request: LoadRequest): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: request.connections });
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let errors = 0;
  let bytes = 0;
  let firstError: string | null = null;
  const failures: Record<string, number> = {};
  let next = 0;
  const start = performance.now();
  const measureFrom = start + request.warmupMs;
  const end = measureFrom + request.durationMs;

  const loop = async () => {
    for (;;) {
      const sent = performance.now();
      if (sent >= end) return;
      const path = request.paths[next++ % request.paths.length]!;
      let ok = false;
      let failure = "";
      try {
        const res = await once(agent, request, path);
        ok = res.status === 200;
        if (!ok) {
          failure = String(res.status);
          firstError ??= `HTTP ${res.status} for ${path}`;
        }
        bytes += sent >= measureFrom ? res.bytes : 0;
      } catch (error) {
        failure = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        firstError ??= `${(error as Error).message} for ${path}`;
      }
      if (sent < measureFrom) continue;
      if (!ok) {
        errors++;
        failures[failure] = (failures[failure] ?? 0) + 1;
        continue;
      }
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = performance.now() - sent;
    }
  };
  await Promise.all(Array.from({ length: request.connections }, loop));
  const elapsedMs = performance.now() - measureFrom;
  agent.destroy();
  return { requests: count, errors, firstError, failures, elapsedMs, latencies: latencies.slice(0, count), bytes };
}

parentPort?.on("message", (request: LoadRequest) => {
  void run(request).then((result) => parentPort?.postMessage(result));
});
