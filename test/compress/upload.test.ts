// receiveUpload on a request whose client went away before the route started reading it (while
// its key was checked and its unit reserved): the close events fired before its listeners, so it
// must notice from the request's state, at once, not when the idle timeout runs out.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { UploadAborted } from "../../src/compress/workflow/failure.ts";
import { receiveUpload } from "../../src/compress/workflow/upload.ts";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "upload-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("rejects with UploadAborted at once when the client left before the upload was read", async () => {
  let outcome: Promise<{ error: unknown; ms: number }> | undefined;
  const handled = new Promise<void>((resolveHandled) => {
    const server = http.createServer((req) => {
      // Wait until the connection is gone, as a slow reservation would, then start reading.
      req.socket.once("close", () => {
        const started = performance.now();
        outcome = receiveUpload(req, { dir, maxBytes: 1_000_000, idleTimeoutMs: 30_000, fields: [] }).then(
          () => ({ error: null, ms: performance.now() - started }),
          (error: unknown) => ({ error, ms: performance.now() - started }),
        );
        server.close();
        resolveHandled();
      });
    });
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      const req = http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=x", "content-length": "500000" },
      });
      req.on("error", () => undefined);
      req.write('--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n');
      setTimeout(() => req.destroy(), 50);
    });
  });
  await handled;
  const { error, ms } = await outcome!;
  expect(error).toBeInstanceOf(UploadAborted);
  expect(ms).toBeLessThan(5_000);
  expect(await readdir(dir)).toEqual([]);
});
