// Receives the multipart upload of /v1/compress and /v1/unlock: streamed to a temporary file,
// never held in memory, under strict limits (one file part, a few small fields, few headers),
// its %PDF- signature checked as soon as the first bytes arrive, and cut off when it stalls.
// Every failure removes what was written and rejects with the HttpError to answer; every stream
// involved (the request, the parser, the file part, the file written) has its error handled here,
// so no body a client sends can raise an error nobody listens to (issue 25: a body that ended inside
// the file part used to take the process down).
import { createHash, type Hash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import path from "node:path";
import type { Readable } from "node:stream";
import busboy from "busboy";
import { HttpError } from "../../errors.ts";
import { guarded } from "../../callbacks.ts";
import { claimBodyTimeout } from "../../http/body-timeout.ts";
import { expectsContinue } from "../../http/continue.ts";
import { recordBodyDigest } from "./body-digest.ts";
import { UploadAborted } from "./failure.ts";
import { invalidFileUrl } from "./file-url.ts";
import { FILE_NAMING } from "./options.ts";
import { notPdf, pdfSniffer } from "./pdf-signature.ts";

export interface Upload {
  path: string;
  /** Bytes of the file part. */
  size: number;
  /** The client's file name, or "document.pdf". */
  filename: string;
  fields: Record<string, string>;
  /**
   * The form's file_url, when it sent one instead of a file (an endpoint that takes the field): the
   * file is still to fetch (./file-url.ts) to `path`, and size is 0 until then.
   */
  fileUrl?: string;
}

export interface UploadOptions {
  /** A directory of this request's own; the file is written inside it. */
  dir: string;
  maxBytes: number;
  idleTimeoutMs: number;
  /** Names of the text fields allowed besides `file`. */
  fields: readonly string[];
  /**
   * The request's response: a client that sent `Expect: 100-continue` is invited to send the body
   * (100 Continue) when reading begins, after every check that comes from the headers.
   */
  response?: { writeContinue(): void };
  /** Gives up the upload, rejecting with the signal's reason (the service shutting down). */
  signal?: AbortSignal;
  /**
   * Called with the fields received so far and the file's name when the file part begins, before a
   * byte of the file is read or written; a rejection refuses the upload with that error. Lets a form
   * whose credentials come in the body (the dashboard's Try it) be checked before the file is taken,
   * and a call's record say what it asked for even when its upload then fails.
   */
  beforeFile?: (fields: Readonly<Record<string, string>>, filename: string) => Promise<void>;
}

const malformed = (detail: string) => new HttpError(400, "invalid_multipart", `Malformed multipart body: ${detail}`);
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
  return new Promise<Upload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = createParser(req, options);
    } catch {
      reject(new HttpError(400, "invalid_multipart", "The multipart body has no boundary."));
      return;
    }
    const upload = startReceiving(req, parser, options, { resolve, reject });
    if (options.response && expectsContinue(req)) options.response.writeContinue();
    parser.on(
      "file",
      guarded("upload-stream", (name: string, stream: Readable, info: busboy.FileInfo) =>
        onFilePart(upload, name, stream, info),
      ),
    );
    parser.on(
      "field",
      guarded("upload-stream", (name: string, value: string, info: busboy.FieldInfo) =>
        onField(upload, name, value, info),
      ),
    );
    parser.on("filesLimit", () =>
      fail(upload, new HttpError(400, "too_many_files", "Send exactly one file per request.")),
    );
    parser.on("fieldsLimit", () =>
      fail(
        upload,
        new HttpError(
          400,
          "unexpected_field",
          `Too many fields; this endpoint takes file and ${options.fields.join(", ")}.`,
        ),
      ),
    );
    parser.on("partsLimit", () =>
      fail(upload, new HttpError(400, "unexpected_field", "Too many parts in the multipart body.")),
    );
    parser.on("error", (error: Error) => fail(upload, malformed(error.message)));
    parser.on(
      "close",
      guarded("upload-stream", () => finish(upload)),
    );
    req.pipe(parser);
  });
}

function createParser(req: IncomingMessage, options: UploadOptions): busboy.Busboy {
  return busboy({
    headers: req.headers,
    // Browsers and HTTP clients send a file name's UTF-8 bytes as they are (RFC 7578 section 4.2);
    // busboy's default reads them as latin1 ("résumé" came back as "rÃ©sumÃ©"; issue 39).
    defParamCharset: "utf8",
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
}

/** One upload being received: what has arrived, and how to stop listening. */
interface Receiving {
  readonly req: IncomingMessage;
  readonly parser: busboy.Busboy;
  readonly options: UploadOptions;
  readonly target: string;
  readonly settle: { resolve: (upload: Upload) => void; reject: (error: Error) => void };
  /** Removes the listeners on the request, its transport and the signal, and the idle timer. */
  stopWatching: () => void;
  settled: boolean;
  fileSeen: boolean;
  /** Settles when the file is written (awaited on success; after a failure nobody waits for it). */
  fileDone: Promise<void> | null;
  size: number;
  /** SHA-256 of the file's bytes, for the body's digest (body-digest.ts). */
  hash: Hash;
  filename: string;
  fields: Record<string, string>;
  out: WriteStream | null;
  fileStream: NodeJS.ReadableStream | null;
}

/** Starts watching the request: idle timeout, client gone, the signal. */
function startReceiving(
  req: IncomingMessage,
  parser: busboy.Busboy,
  options: UploadOptions,
  settle: Receiving["settle"],
): Receiving {
  const upload: Receiving = {
    req,
    parser,
    options,
    target: path.join(options.dir, "upload.pdf"),
    settle,
    stopWatching: () => undefined,
    settled: false,
    fileSeen: false,
    fileDone: null,
    size: 0,
    hash: createHash("sha256"),
    filename: "document.pdf",
    fields: {},
    out: null,
    fileStream: null,
  };
  const idle = setTimeout(
    guarded("upload-stream", () =>
      fail(
        upload,
        new HttpError(
          408,
          "upload_timeout",
          `No data arrived for ${options.idleTimeoutMs / 1000} s; the upload was cut off.`,
        ),
      ),
    ),
    options.idleTimeoutMs,
  );
  const onData = () => idle.refresh();
  const onAborted = () => fail(upload, new UploadAborted());
  // What closes when the client goes away: the connection (HTTP/1.1) or the request's stream
  // (HTTP/2, where the connection carries other requests).
  const transport: NodeJS.EventEmitter = "stream" in req ? (req as unknown as Http2ServerRequest).stream : req.socket;
  const onSignal = () => {
    const reason: unknown = options.signal?.reason;
    fail(upload, reason instanceof Error ? reason : new UploadAborted());
  };
  // This upload answers its own stall (408 upload_timeout, its files removed and its unit released
  // before the answer), not the server's watch over every body.
  const releaseClaim = claimBodyTimeout(req);
  req.on("data", onData);
  req.on("aborted", onAborted);
  transport.on("close", onAborted);
  options.signal?.addEventListener("abort", onSignal, { once: true });
  if (options.signal?.aborted) queueMicrotask(onSignal);
  // A client that left before the route started reading (while its key was checked and its unit
  // reserved) fired its close events before these listeners existed: its state says so.
  else if (req.destroyed || (transport as { destroyed?: boolean }).destroyed) queueMicrotask(onAborted);
  upload.stopWatching = () => {
    clearTimeout(idle);
    releaseClaim();
    req.off("data", onData);
    req.off("aborted", onAborted);
    transport.off("close", onAborted);
    options.signal?.removeEventListener("abort", onSignal);
    req.unpipe(parser);
  };
  return upload;
}

/** Ends the upload with `error`: stops reading, removes what was written, then rejects. */
function fail(upload: Receiving, error: Error): void {
  if (upload.settled) return;
  upload.settled = true;
  upload.stopWatching();
  upload.fileStream?.unpipe();
  upload.fileStream?.resume();
  upload.out?.destroy();
  upload.parser.removeAllListeners();
  upload.parser.on("error", () => undefined);
  void rm(upload.target, { force: true }).then(() => upload.settle.reject(error));
}

function onFilePart(upload: Receiving, name: string, stream: Readable, info: busboy.FileInfo): void {
  // busboy destroys the part's stream with "Unexpected end of form" when the body ends inside it:
  // an error event with no listener would be thrown out of the event loop.
  stream.on("error", (error: Error) => fail(upload, malformed(error.message)));
  // Listened for at once: busboy counts the bytes as they arrive, not as they are read, so a part
  // held back for beforeFile can pass the limit before writeFile listens (it was then taken,
  // truncated, as a whole file).
  stream.on("limit", () => fail(upload, tooLarge(upload.options.maxBytes)));
  if (name !== "file") {
    stream.resume();
    return fail(
      upload,
      new HttpError(400, "unexpected_field", `Unexpected file field "${name}"; send the PDF as "file".`),
    );
  }
  if (upload.fields[FILE_URL]) {
    stream.resume();
    return fail(upload, bothFileAndUrl());
  }
  upload.fileSeen = true;
  upload.fileStream = stream;
  if (info.filename) upload.filename = path.basename(info.filename.replace(/\\/g, "/"));
  const { beforeFile } = upload.options;
  if (!beforeFile) return writeFile(upload, stream);
  // Not read until the check passes: busboy, then the request, then the client are held back.
  stream.pause();
  upload.fileDone = beforeFile({ ...upload.fields }, upload.filename).then(
    () => {
      if (upload.settled) return;
      writeFile(upload, stream);
      return upload.fileDone!;
    },
    (error: unknown) => fail(upload, error instanceof Error ? error : new Error(String(error))),
  );
  upload.fileDone.catch(() => undefined);
}

/** Streams the file part to the upload's file, sniffing its signature and counting its bytes. */
function writeFile(upload: Receiving, stream: Readable): void {
  const out = createWriteStream(upload.target, { flags: "wx", mode: 0o600 });
  upload.out = out;
  const sniffer = pdfSniffer();
  stream.on(
    "data",
    guarded("upload-stream", (chunk: Buffer) => {
      upload.size += chunk.length;
      upload.hash.update(chunk);
      if (sniffer.push(chunk) === "not_pdf") fail(upload, notPdf());
    }),
  );
  upload.fileDone = new Promise<void>((done, error) => {
    out.on("finish", done);
    out.on("error", error);
  });
  upload.fileDone.catch(() => undefined);
  // A write that fails (a full disk) ends the upload at once, not when the client stops waiting.
  out.on("error", (error) => fail(upload, error));
  stream.on(
    "end",
    guarded("upload-stream", () => {
      if (sniffer.end() === "not_pdf") fail(upload, notPdf());
    }),
  );
  stream.pipe(out);
}

function onField(upload: Receiving, name: string, value: string, info: busboy.FieldInfo): void {
  const allowed = upload.options.fields;
  if (!allowed.includes(name)) {
    return fail(
      upload,
      new HttpError(
        400,
        "unexpected_field",
        `Unexpected field "${name}"; this endpoint takes file and ${allowed.join(", ")}.`,
      ),
    );
  }
  if (info.valueTruncated || info.nameTruncated)
    return fail(upload, new HttpError(400, `invalid_${name}`, `${name} is too long.`));
  if (name in upload.fields)
    return fail(upload, new HttpError(400, `invalid_${name}`, `${name} was sent more than once.`));
  if (name === FILE_URL && value && upload.fileSeen) return fail(upload, bothFileAndUrl());
  upload.fields[name] = value;
}

/** The multipart body ended: resolves once the file is on disk, or fails for what is missing. */
async function finish(upload: Receiving): Promise<void> {
  if (upload.settled) return;
  const fileUrl = upload.fields[FILE_URL];
  if (!upload.fileSeen && fileUrl) return resolveWithUrl(upload, fileUrl);
  if (!upload.fileSeen) {
    const orUrl = upload.options.fields.includes(FILE_URL) ? ", or its address as file_url" : "";
    return fail(
      upload,
      new HttpError(400, "missing_file", `The request has no file: send the PDF in a part named "file"${orUrl}.`),
    );
  }
  try {
    await upload.fileDone;
  } catch (error) {
    return fail(upload, error as Error);
  }
  if (upload.settled) return;
  if (upload.size === 0) return fail(upload, new HttpError(422, "not_a_pdf", "The file is empty."));
  upload.settled = true;
  upload.stopWatching();
  recordBodyDigest(upload.req, { fields: upload.fields, fileSha256: upload.hash.digest("hex") });
  upload.settle.resolve({ path: upload.target, size: upload.size, filename: upload.filename, fields: upload.fields });
}

/** The form's field naming the file by its address instead of a file part (./file-url.ts). */
const FILE_URL = FILE_NAMING.form[0];

const bothFileAndUrl = () => invalidFileUrl("was sent beside a file; send the file or its address, not both");

/** A form with a file_url and no file: nothing to write; the service fetches the file. */
function resolveWithUrl(upload: Receiving, fileUrl: string): void {
  upload.settled = true;
  upload.stopWatching();
  recordBodyDigest(upload.req, { fields: upload.fields });
  upload.settle.resolve({ path: upload.target, size: 0, filename: "document.pdf", fields: upload.fields, fileUrl });
}
