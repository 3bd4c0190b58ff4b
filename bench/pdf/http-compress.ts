// The engine as a subscriber reaches it: a file sent to POST /v1/compress of a running service on
// this machine (streamed from disk, multipart), the answer awaited, the result downloaded. Wall time
// is from the first byte sent to the answer. bench:compress:scale --http and bench:compress:http.
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { request } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { CompressionProfile } from "../../src/pdf/index.ts";
import type { Contender, ToolRun } from "./contenders.ts";

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/** The service's address, refused unless it is http:// on this machine (benchmarks send nothing elsewhere). */
export function loopbackBase(address: string): URL | string {
  const base = new URL(address);
  if (!LOOPBACK.includes(base.hostname) || base.protocol !== "http:") {
    return "--http must be an http:// address on this machine (127.0.0.1, localhost)";
  }
  return base;
}

function postCompress(base: URL, key: string, file: string, size: number, profile: string) {
  const boundary = `scale${Date.now().toString(36)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="profile"\r\n\r\n${profile}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(file)}"\r\n` +
      "Content-Type: application/pdf\r\n\r\n",
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise<{ status: number; body: Record<string, unknown>; wallMs: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(new URL("/v1/compress", base), {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": String(head.length + size + tail.length),
      },
    });
    req.once("error", reject);
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("error", reject);
      res.once("end", () => {
        const wallMs = performance.now() - started;
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, wallMs });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: { raw: text.slice(0, 500) }, wallMs });
        }
      });
    });
    req.write(head);
    const stream = createReadStream(file);
    stream.once("error", reject);
    stream.on("data", (chunk) => {
      if (!req.write(chunk)) {
        stream.pause();
        req.once("drain", () => stream.resume());
      }
    });
    stream.once("end", () => req.end(tail));
  });
}

async function download(url: string, to: string): Promise<void> {
  const target = new URL(url);
  if (!LOOPBACK.includes(target.hostname)) {
    throw new Error(`the result is at ${target.origin}, not on this machine: not downloaded`);
  }
  const response = await fetch(target);
  if (!response.ok || !response.body) throw new Error(`download: HTTP ${response.status}`);
  await pipeline(response.body, createWriteStream(to));
}

export function httpContender(base: URL, key: string, profile: CompressionProfile): Contender {
  return {
    id: `engine:${profile}`,
    tool: "engine",
    label: `POST /v1/compress ${profile}`,
    ssimThreshold: 0.95,
    identicalText: false,
    async run(input, output): Promise<ToolRun> {
      const { size } = await stat(input);
      const answer = await postCompress(base, key, input, size, profile);
      if (answer.status !== 200) {
        const error = answer.body["error"] as { code?: string; message?: string } | undefined;
        return {
          status: error?.code === "processing_timeout" ? "timeout" : "failed",
          wallMs: answer.wallMs,
          message: `HTTP ${answer.status} ${error?.code ?? ""}: ${error?.message ?? JSON.stringify(answer.body)}`,
        };
      }
      const url = answer.body["url"];
      if (typeof url !== "string") return { status: "failed", wallMs: answer.wallMs, message: "no url in the answer" };
      await download(url, output);
      return { status: "ok", wallMs: answer.wallMs };
    },
  };
}
