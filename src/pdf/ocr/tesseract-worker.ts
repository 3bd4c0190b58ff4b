// The worker thread tesseract.js runs recognition on (its createWorker's workerPath): its own Node
// worker script (tesseract.js/src/worker-script/node/index.js) with two changes. Nothing is read
// from the network or written to disk: the traineddata arrive with the load message, read by
// recognise.ts from the @tesseract.js-data packages (fetch and the cache refuse). And languages
// handed over as { code, data } are initialized by their code: tesseract.js 7's initialize joins
// their data instead (src/worker-script/index.js, `l.data`), so its own object form fails.
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import { gunzipSync } from "node:zlib";

const require = createRequire(import.meta.url);

interface Packet {
  action: string;
  payload?: { langs?: string | (string | { code: string })[] };
}

interface WorkerScript {
  dispatchHandlers(packet: Packet, send: (message: unknown) => void): void;
  setAdapter(adapter: Record<string, unknown>): void;
}

const script = require("tesseract.js/src/worker-script/index.js") as WorkerScript;
const getCore: unknown = require("tesseract.js/src/worker-script/node/getCore.js");

const refuse = () => Promise.reject(new Error("the OCR worker reads nothing but what it is handed"));

script.setAdapter({
  getCore,
  gunzip: gunzipSync,
  fetch: refuse,
  readCache: refuse,
  writeCache: () => Promise.resolve(),
  deleteCache: () => Promise.resolve(),
  checkCache: () => Promise.resolve(false),
});

const port = parentPort;
port?.on("message", (packet: Packet) => {
  const langs = packet.payload?.langs;
  if (packet.action === "initialize" && Array.isArray(langs)) {
    packet.payload = { ...packet.payload, langs: langs.map((l) => (typeof l === "string" ? l : l.code)).join("+") };
  }
  script.dispatchHandlers(packet, (message) => port.postMessage(message));
});
