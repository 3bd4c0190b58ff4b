// Webhook safety without a database: which callback URLs are accepted (https and public hosts in
// production; loopback only where allowed), which addresses a call may connect to (checked on the
// connection's own lookup, so a name resolving to a private address is refused), and the
// signature's round trip, tampering and replay window.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook } from "../../src/compress/jobs/signature.ts";
import { backoffMs, callWebhook, checkCallbackUrl, isPublicAddress } from "../../src/compress/jobs/webhooks.ts";
import { HttpError } from "../../src/errors.ts";

describe("callback_url in production (no private targets)", () => {
  it.each([
    "http://example.com/hook",
    "https://127.0.0.1/hook",
    "https://10.1.2.3/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://[fd00::1]/hook",
    "https://[::ffff:192.168.0.1]/hook",
    "https://localhost/hook",
    "https://intranet/hook",
    "https://user:pass@example.com/hook",
    "ftp://example.com/hook",
    "not a url",
  ])("refuses %s with 400 invalid_callback_url", (url) => {
    let caught: unknown;
    try {
      checkCallbackUrl(url, false);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).code).toBe("invalid_callback_url");
  });

  it("accepts an https URL of a public host, and loopback http only where allowed", () => {
    expect(checkCallbackUrl("https://hooks.example.com/pdf?x=1", false)).toBe("https://hooks.example.com/pdf?x=1");
    expect(checkCallbackUrl("https://93.184.216.34/pdf", false)).toBe("https://93.184.216.34/pdf");
    expect(checkCallbackUrl("http://127.0.0.1:8080/hook", true)).toBe("http://127.0.0.1:8080/hook");
  });

  it.each([
    ["8.8.8.8", true],
    ["2606:4700:4700::1111", true],
    ["127.0.0.1", false],
    ["10.0.0.1", false],
    ["172.20.1.1", false],
    ["192.168.1.1", false],
    ["100.64.0.1", false],
    ["169.254.169.254", false],
    ["::1", false],
    ["fe80::1", false],
    ["::ffff:10.0.0.1", false],
    ["::ffff:8.8.8.8", true],
  ])("%s is public: %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it("refuses to connect to a name that resolves to a private address, at call time", async () => {
    const outcome = await callWebhook("http://localhost:9/hook", "{}", "whsec_x", false);
    expect(outcome).toMatchObject({ error: expect.stringContaining("no public address") as string });
  });
});

describe("calls and signatures", () => {
  it("posts a body a receiver verifies with the secret; a tampered body or another secret fails", async () => {
    let received: { body: string; signature: string } | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received = { body: Buffer.concat(chunks).toString(), signature: String(req.headers["marketplace-signature"]) };
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const body = JSON.stringify({ id: "j", status: "succeeded" });
      expect(await callWebhook(url, body, "whsec_test", true)).toEqual({ status: 200 });
      expect(verifyWebhook(received!.body, received!.signature, "whsec_test")).toBe(true);
      expect(verifyWebhook(received!.body.replace("succeeded", "failed"), received!.signature, "whsec_test")).toBe(
        false,
      );
      expect(verifyWebhook(received!.body, received!.signature, "whsec_other")).toBe(false);
      expect(verifyWebhook(received!.body, undefined, "whsec_test")).toBe(false);
    } finally {
      server.close();
    }
  });

  it("signs the timestamp: an old signature is refused past the tolerance", () => {
    const signedAt = Math.floor(Date.now() / 1000) - 600;
    const header = signWebhook("whsec_t", "{}", signedAt);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook("{}", header, "whsec_t")).toBe(false);
    expect(verifyWebhook("{}", header, "whsec_t", 900)).toBe(true);
  });

  it("backs off fourfold from the base, at most 6 hours", () => {
    expect([1, 2, 3].map((n) => backoffMs(n, 10_000))).toEqual([10_000, 40_000, 160_000]);
    expect(backoffMs(20, 10_000)).toBe(6 * 3_600_000);
  });
});
