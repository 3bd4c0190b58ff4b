// A local stand-in for Cloud Storage, faithful to what @google-cloud/storage sends with
// apiEndpoint set (JSON API: multipart and resumable uploads, metadata, media, delete, list)
// and to how a browser downloads a V4 signed URL (XML API path /<bucket>/<object>, refused
// unless the signature verifies against the test key pair). The request formats were taken
// from the real client (docs/research/compression-libraries.md).
import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CRC32C } from "@google-cloud/storage";
import { verifyV4SignedUrl } from "./gcs-v4.ts";

type Meta = Record<string, unknown> & { contentType?: string; contentDisposition?: string; name?: string };
interface StoredObject {
  data: Buffer;
  resource: Record<string, unknown> & {
    contentType: string;
    crc32c: string;
    md5Hash: string;
    generation: string;
    contentDisposition?: string;
  };
}

export interface FakeGcs {
  url: string;
  objects: Map<string, StoredObject>;
  requests: { method: string; path: string; query: Record<string, string> }[];
  /** Ages an object, for tests of deletion by age. */
  setCreated(name: string, date: Date): void;
  close(): Promise<void>;
}

/** A service account of the tests: its credentials (the private key signs URLs) and the public key the stand-in checks with. */
export function testServiceAccount(): {
  publicKey: KeyObject;
  credentials: { client_email: string; private_key: string };
} {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    publicKey,
    credentials: {
      client_email: "compressor@test-project.iam.gserviceaccount.com",
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    },
  };
}

export async function startFakeGcs(bucketName: string, signingKey: KeyObject): Promise<FakeGcs> {
  const objects = new Map<string, StoredObject>();
  const sessions = new Map<string, { name: string; meta: Meta; chunks: Buffer[]; received: number }>();
  const requests: FakeGcs["requests"] = [];
  let generation = 1_700_000_000_000_000;
  let base = "";

  const store = (name: string, data: Buffer, meta: Meta) => {
    const crc = new CRC32C();
    crc.update(data);
    const now = new Date().toISOString();
    const resource = {
      kind: "storage#object",
      name,
      bucket: bucketName,
      generation: String(++generation),
      metageneration: "1",
      contentType: meta.contentType ?? "application/octet-stream",
      size: String(data.length),
      md5Hash: createHash("md5").update(data).digest("base64"),
      crc32c: crc.toString(),
      timeCreated: now,
      updated: now,
      ...(meta.contentDisposition ? { contentDisposition: meta.contentDisposition } : {}),
    };
    objects.set(name, { data, resource });
    return resource;
  };

  const json = (res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };
  const notFound = (res: http.ServerResponse) => json(res, 404, { error: { code: 404, message: "No such object" } });

  function parseRelated(body: Buffer, contentType: string) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1] ?? "";
    const delimiter = Buffer.from(`--${boundary}`);
    const parts: { headers: Record<string, string>; content: Buffer }[] = [];
    let at = body.indexOf(delimiter);
    while (at !== -1) {
      const start = at + delimiter.length;
      if (body.subarray(start, start + 2).toString() === "--") break;
      const next = body.indexOf(delimiter, start);
      let part = body.subarray(start, next === -1 ? body.length : next);
      part = part.subarray(part.indexOf("\r\n") + 2);
      const headerEnd = part.indexOf("\r\n\r\n");
      const headers = Object.fromEntries(
        part
          .subarray(0, headerEnd)
          .toString()
          .split("\r\n")
          .filter(Boolean)
          .map((line) => [
            line.slice(0, line.indexOf(":")).trim().toLowerCase(),
            line.slice(line.indexOf(":") + 1).trim(),
          ]),
      );
      let content = part.subarray(headerEnd + 4);
      if (content.subarray(-2).toString() === "\r\n") content = content.subarray(0, -2);
      parts.push({ headers, content });
      at = next;
    }
    return parts;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", base);
      const q = Object.fromEntries(url.searchParams);
      const p = url.pathname;
      requests.push({ method: req.method ?? "", path: p, query: q });
      const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(p);
      if (upload) {
        if (req.method === "POST" && q["uploadType"] === "multipart") {
          const [metaPart, dataPart] = parseRelated(body, req.headers["content-type"] ?? "");
          const meta = JSON.parse(metaPart?.content.toString() || "{}") as Meta;
          meta.contentType ??= dataPart?.headers["content-type"];
          return json(res, 200, store(q["name"] ?? meta.name ?? "", dataPart?.content ?? Buffer.alloc(0), meta));
        }
        if (req.method === "POST" && q["uploadType"] === "resumable") {
          const meta = (body.length ? JSON.parse(body.toString()) : {}) as Meta;
          meta.contentType ??= req.headers["x-upload-content-type"] as string | undefined;
          const id = randomUUID();
          const name = q["name"] ?? meta.name ?? "";
          sessions.set(id, { name, meta, chunks: [], received: 0 });
          const location = `${base}/upload/storage/v1/b/${bucketName}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${id}`;
          return json(res, 200, undefined, { location });
        }
        if (req.method === "PUT" && q["upload_id"]) {
          const session = sessions.get(q["upload_id"]);
          if (!session) return notFound(res);
          const range = /^bytes (?:(\d+)-(\d+|\*)|\*)\/(\d+|\*)$/.exec(req.headers["content-range"] ?? "");
          if (!range) return json(res, 400, { error: { code: 400, message: "bad Content-Range" } });
          const [, start, end, total] = range;
          if (start !== undefined) {
            session.chunks.push(body);
            session.received += body.length;
          }
          const final = start !== undefined && (end === "*" || (total !== "*" && Number(total) === session.received));
          if (final) {
            sessions.delete(q["upload_id"]);
            return json(res, 200, store(session.name, Buffer.concat(session.chunks), session.meta));
          }
          res.writeHead(308, session.received ? { range: `bytes=0-${session.received - 1}` } : {});
          return res.end();
        }
      }
      const object = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(p);
      if (object) {
        const name = decodeURIComponent(object[2] ?? "");
        const found = objects.get(name);
        if (!found) return notFound(res);
        if (req.method === "DELETE") {
          objects.delete(name);
          res.writeHead(204);
          return res.end();
        }
        if (q["alt"] === "media") {
          res.writeHead(200, { "content-type": found.resource.contentType });
          return res.end(found.data);
        }
        return json(res, 200, found.resource);
      }
      if (/^\/storage\/v1\/b\/([^/]+)\/o$/.test(p) && req.method === "GET") {
        const items = [...objects.values()]
          .map((o) => o.resource)
          .filter((o) => !q["prefix"] || o["name"] === q["prefix"]);
        return json(res, 200, {
          kind: "storage#objects",
          items: q["prefix"] ? items : [...objects.values()].map((o) => o.resource),
        });
      }
      // A browser following a signed URL (XML API, path style).
      const signed = new RegExp(`^/${bucketName}/(.+)$`).exec(p);
      if (signed && req.method === "GET") {
        const verdict = verifyV4SignedUrl(url.toString(), signingKey);
        if (!verdict.ok) {
          res.writeHead(verdict.reason === "expired" ? 400 : 403, { "content-type": "application/xml" });
          return res.end(
            `<Error><Code>${verdict.reason === "expired" ? "ExpiredToken" : "SignatureDoesNotMatch"}</Code></Error>`,
          );
        }
        const found = objects.get(decodeURIComponent(signed[1] ?? ""));
        if (!found) return notFound(res);
        res.writeHead(200, {
          "content-type": url.searchParams.get("response-content-type") ?? found.resource.contentType,
          "content-disposition":
            url.searchParams.get("response-content-disposition") ?? found.resource.contentDisposition ?? "",
        });
        return res.end(found.data);
      }
      json(res, 501, { error: { code: 501, message: `fake GCS: ${req.method} ${p} is not implemented` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    objects,
    requests,
    setCreated(name, date) {
      const found = objects.get(name);
      if (found) found.resource["timeCreated"] = date.toISOString();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
