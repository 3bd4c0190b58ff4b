// Receives the multipart upload of /v1/compress and /v1/unlock: streamed to a temporary file,
// never held in memory, under strict limits (one file part, a few small fields, few headers),
// its %PDF- signature checked as soon as the first bytes arrive, and cut off when it stalls.
// Every failure removes what was written and rejects with the HttpError to answer.
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import path from "node:path";
import busboy from "busboy";
import { HttpError } from "../../http/errors.ts";

export interface Upload {
  path: string;
  /** Bytes of the file part. */
  size: number;
  /** The client's file name, or "document.pdf". */
  filename: string;
  fields: Record<string, string>;
}

export interface UploadOptions {
  /** A directory of this request's own; the file is written inside it. */
  dir: string;
  maxBytes: number;
  idleTimeoutMs: number;
  /** Names of the text fields allowed besides `file`. */
  fields: readonly string[];
  /** Gives up the upload, rejecting with the signal's reason (the service shutting down). */
  signal?: AbortSignal;
}

/** Thrown when the client went away mid-upload: there is no one to answer. */
export class UploadAborted extends Error {
  constructor() {
    super("the client closed the connection during the upload");
    this.name = "UploadAborted";
  }
}

// The PDF header may follow a little junk (ISO 32000: within the first 1024 bytes).
const SIGNATURE = Buffer.from("%PDF-");
const SNIFF_BYTES = 1024;
// Room for the multipart framing and the small fields around the file.
export const MULTIPART_OVERHEAD = 64 * 1024;

export const tooLarge = (maxBytes: number) =>
  new HttpError(
    413,
    "file_too_large",
    `The file is larger than ${maxBytes.toLocaleString("en")} bytes (${Math.round(maxBytes / 1048576)} MB), the most one request may carry.`,
  );

export function receiveUpload(req: IncomingMessage, options: UploadOptions): Promise<Upload> {
  const type = req.headers["content-type"] ?? "";
  if (!/^multipart\/form-data\b/i.test(type)) {
    return Promise.reject(
      new HttpError(415, "unsupported_media_type", "Send the file as multipart/form-data with a part named file."),
    );
  }
  const target = path.join(options.dir, "upload.pdf");
  return new Promise<Upload>((resolve, reject) => {
    let settled = false;
    let fileSeen = false;
    let fileDone: Promise<void> | null = null;
    let size = 0;
    let filename = "document.pdf";
    const fields: Record<string, string> = {};
    let out: ReturnType<typeof createWriteStream> | null = null;
    let fileStream: NodeJS.ReadableStream | null = null;

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: {
          files: 1,
          fields: options.fields.length,
          // busboy signals these two on reaching the limit, not on passing it: one more than allowed.
          parts: options.fields.length + 2,
          fieldNameSize: 64,
          fieldSize: 1024,
          headerPairs: 16,
          fileSize: options.maxBytes + 1,
        },
      });
    } catch {
      reject(new HttpError(400, "invalid_multipart", "The multipart body has no boundary."));
      return;
    }

    const idle = setTimeout(() => fail(timeout()), options.idleTimeoutMs);
    const timeout = () =>
      new HttpError(
        408,
        "upload_timeout",
        `No data arrived for ${options.idleTimeoutMs / 1000} s; the upload was cut off.`,
      );
    const onData = () => idle.refresh();
    const onAborted = () => fail(new UploadAborted());
    // What closes when the client goes away: the connection (HTTP/1.1) or the request's stream
    // (HTTP/2, where the connection carries other requests).
    const transport: NodeJS.EventEmitter = "stream" in req ? (req as unknown as Http2ServerRequest).stream : req.socket;
    const onSignal = () => {
      const reason: unknown = options.signal?.reason;
      fail(reason instanceof Error ? reason : new UploadAborted());
    };
    req.on("data", onData);
    req.on("aborted", onAborted);
    transport.on("close", onAborted);
    options.signal?.addEventListener("abort", onSignal, { once: true });
    if (options.signal?.aborted) queueMicrotask(onSignal);

    const cleanup = () => {
      clearTimeout(idle);
      req.off("data", onData);
      req.off("aborted", onAborted);
      transport.off("close", onAborted);
      options.signal?.removeEventListener("abort", onSignal);
      req.unpipe(parser);
    };

    function fail(error: Error) {
      if (settled) return;
      settled = true;
      cleanup();
      fileStream?.unpipe();
      fileStream?.resume();
      out?.destroy();
      parser.removeAllListeners();
      parser.on("error", () => undefined);
      void rm(target, { force: true }).then(() => reject(error));
    }

    parser.on("file", (name, stream, info) => {
      if (name !== "file") {
        stream.resume();
        return fail(new HttpError(400, "unexpected_field", `Unexpected file field "${name}"; send the PDF as "file".`));
      }
      fileSeen = true;
      fileStream = stream;
      if (info.filename) filename = path.basename(info.filename.replace(/\\/g, "/"));
      out = createWriteStream(target, { flags: "wx", mode: 0o600 });
      const head: Buffer[] = [];
      let headBytes = 0;
      let sniffed = false;
      const sniff = (final: boolean) => {
        if (sniffed) return;
        const bytes = Buffer.concat(head);
        if (bytes.indexOf(SIGNATURE) >= 0) sniffed = true;
        else if (final || bytes.length >= SNIFF_BYTES) {
          sniffed = true;
          fail(new HttpError(422, "not_a_pdf", "The file is not a PDF: it does not start with a %PDF- header."));
        }
      };
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (!sniffed) {
          head.push(chunk);
          headBytes += chunk.length;
          sniff(false);
          if (headBytes >= SNIFF_BYTES) head.length = 0;
        }
      });
      stream.on("limit", () => fail(tooLarge(options.maxBytes)));
      fileDone = new Promise<void>((done, error) => {
        out!.on("finish", done);
        out!.on("error", error);
      });
      // Awaited on success; after a failure nobody waits for it.
      fileDone.catch(() => undefined);
      stream.on("end", () => sniff(true));
      stream.pipe(out);
    });

    parser.on("field", (name, value, info) => {
      if (!options.fields.includes(name)) {
        return fail(
          new HttpError(
            400,
            "unexpected_field",
            `Unexpected field "${name}"; this endpoint takes file and ${options.fields.join(", ")}.`,
          ),
        );
      }
      if (info.valueTruncated || info.nameTruncated)
        return fail(new HttpError(400, `invalid_${name}`, `${name} is too long.`));
      if (name in fields) return fail(new HttpError(400, `invalid_${name}`, `${name} was sent more than once.`));
      fields[name] = value;
    });
    parser.on("filesLimit", () => fail(new HttpError(400, "too_many_files", "Send exactly one file per request.")));
    parser.on("fieldsLimit", () =>
      fail(
        new HttpError(
          400,
          "unexpected_field",
          `Too many fields; this endpoint takes file and ${options.fields.join(", ")}.`,
        ),
      ),
    );
    parser.on("partsLimit", () =>
      fail(new HttpError(400, "unexpected_field", "Too many parts in the multipart body.")),
    );
    parser.on("error", (error: Error) =>
      fail(new HttpError(400, "invalid_multipart", `Malformed multipart body: ${error.message}`)),
    );
    parser.on("close", () => {
      void (async () => {
        if (settled) return;
        if (!fileSeen)
          return fail(
            new HttpError(400, "missing_file", 'The request has no file: send the PDF in a part named "file".'),
          );
        try {
          await fileDone;
        } catch (error) {
          return fail(error as Error);
        }
        if (settled) return;
        if (size === 0) return fail(new HttpError(422, "not_a_pdf", "The file is empty."));
        settled = true;
        cleanup();
        resolve({ path: target, size, filename, fields });
      })();
    });
    req.pipe(parser);
  });
}
