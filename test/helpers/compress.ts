// Helpers for the compression API's tests: subscribers with keys, generated PDFs, and
// multipart requests built by hand, so a test controls every byte, header and timing.
import { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import { copyFile, stat } from "node:fs/promises";
import http from "node:http";
import { PDFDocument, StandardFonts } from "@cantoo/pdf-lib";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { accounts } from "../../src/auth/accounts.ts";
import type { EngineRunner } from "../../src/compress/compression.ts";

/**
 * For tests of the HTTP contract only (keys, limits, quota, uploads, storage), where what the
 * engine does is beside the point and a 300 MB upload must not be compressed: hands the upload
 * back unchanged. The engine itself is tested through the real runner elsewhere.
 */
export const passThroughRunner: EngineRunner = {
  async run(job) {
    await copyFile(job.inputPath, job.outputPath);
    return { ok: true, outputSize: (await stat(job.outputPath)).size, pages: 0 };
  },
};

let counter = 0;

export async function subscriberWithKey(
  prisma: PrismaClient,
  options: { plan?: "corporate" | "professional" | "starter"; quota?: number } = {},
) {
  const admin = accounts(prisma, null);
  const email = `sub-${process.pid}-${++counter}-${randomBytes(3).toString("hex")}@example.com`;
  const subscriber = await admin.createSubscriber({
    name: email,
    email,
    plan: "corporate",
    quota: options.quota ?? 1000,
  });
  const key = await admin.issueKey(email, "test");
  if (options.plan && options.plan !== "corporate") await admin.updateSubscriber(email, { plan: options.plan });
  return { subscriber, key, token: key.token, admin, email };
}

/** A small, valid PDF of n pages with text. */
export async function makePdf(pages = 2): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    doc.addPage([595, 842]).drawText(`Page ${i + 1} of a generated test document`, { x: 50, y: 780, size: 14, font });
  }
  return Buffer.from(await doc.save());
}

/** A direct upload of the file to the service at `base` (POST /v1/uploads, then the PUT): its upload_id. */
export async function directUpload(base: string, token: string, file: Buffer): Promise<string> {
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await fetch(`${base}/v1/uploads`, { method: "POST", headers: auth, body: "{}" });
  const { upload_id, upload_url, headers } = (await created.json()) as {
    upload_id: string;
    upload_url: string;
    headers: Record<string, string>;
  };
  const put = await fetch(upload_url, { method: "PUT", headers, body: new Uint8Array(file) });
  if (put.status !== 200) throw new Error(`the upload's PUT answered ${put.status}`);
  return upload_id;
}

export interface MultipartPart {
  name: string;
  value: string | Buffer;
  filename?: string;
  contentType?: string;
}

export function multipart(parts: MultipartPart[]): { body: Buffer; contentType: string } {
  const boundary = `----test${randomBytes(8).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ""}`;
    const type = part.contentType ?? (part.filename !== undefined ? "application/pdf" : undefined);
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type ? `Content-Type: ${type}\r\n` : ""}\r\n`,
      ),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Whether the server sent 100 Continue. */
  continued: boolean;
  /** Bytes of the body this client wrote before the answer came. */
  sent: number;
}

/**
 * POST with `Expect: 100-continue`: the body is sent only after the server's 100, as curl does.
 * Resolves with the final answer and how much of the body was sent.
 */
export function postExpectingContinue(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    let continued = false;
    let sent = 0;
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { ...headers, "content-length": String(body.length), expect: "100-continue" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, continued, sent });
        });
      },
    );
    req.on("continue", () => {
      continued = true;
      sent = body.length;
      req.end(body);
    });
    req.on("error", reject);
    req.flushHeaders();
  });
}

/** Opens a POST whose body the caller writes (or never finishes); `response` settles with the answer. */
export function openPost(
  url: string,
  headers: Record<string, string>,
): { req: http.ClientRequest; response: Promise<{ status: number; body: string }> } {
  const target = new URL(url);
  let req!: http.ClientRequest;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
  });
  // What the client still writes after the server has answered may fail; the answer is what counts.
  req.on("error", () => undefined);
  return { req, response };
}

/**
 * A multipart upload whose file part is `size` bytes (a PDF header, then spaces), generated as it
 * is sent so that a 300 MB upload never sits in the test's memory.
 */
export function largePdfUpload(size: number, boundary = "----large-upload-boundary") {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const fill = size - 9;
  function* chunks() {
    yield head;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    for (let left = fill; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + fill + tail.length,
    body: () => Readable.from(chunks()),
  };
}
