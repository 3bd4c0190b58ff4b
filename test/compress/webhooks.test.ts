// Webhook safety without a database: which callback URLs are accepted (https and public hosts by
// default; loopback only where allowed; link-local and metadata never), the address classifier
// under property tests (every IPv6 spelling and IPv4 embedding), which addresses a call may connect
// to (checked on the connection's own lookup, so a name resolving to a refused address is refused,
// with no second lookup to rebind), and the signature's round trip, tampering and replay window.
import { createServer } from "node:http";
import { BlockList, type AddressInfo } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  classifyAddress,
  ipv6Bytes,
  mayReach,
  type Resolver,
  type WebhookTargets,
} from "../../src/compress/address-policy.ts";
import { signWebhook, verifyWebhook, webhookHeaders } from "../../src/compress/async-jobs/signature.ts";
import { backoffMs, callWebhook, checkCallbackUrl } from "../../src/compress/async-jobs/webhooks.ts";
import { loadConfig } from "../../src/config/env.ts";
import { HttpError } from "../../src/errors.ts";

describe("callback_url by default (no private targets)", () => {
  it("is the default outside development: public hosts only unless WEBHOOK_ALLOW_PRIVATE is set", () => {
    for (const NODE_ENV of ["test", "production"]) {
      expect(loadConfig({ NODE_ENV, PGLITE_DATA_DIR: "memory://" }).webhookTargets, NODE_ENV).toBe("public");
    }
    expect(loadConfig({ NODE_ENV: "development" }).webhookTargets).toBe("loopback");
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).webhookTargets).toBe("private");
  });

  it("in development takes this machine alone: loopback by address or localhost, http:// to it too", () => {
    for (const url of ["http://127.0.0.1:4101/hooks", "http://localhost:4101/hooks", "http://[::1]:4101/hooks"]) {
      expect(checkCallbackUrl(url, "loopback")).toBe(url);
    }
    for (const url of ["http://10.0.0.1/hook", "https://192.168.1.2/hook", "http://hooks.example.com/pdf"]) {
      expect(refusal(url, "loopback"), url).toBe("invalid_callback_url");
    }
    expect(mayReach("127.0.0.1", "loopback")).toBe(true);
    expect(mayReach("::ffff:127.0.0.1", "loopback")).toBe(true);
    expect(mayReach("10.0.0.1", "loopback")).toBe(false);
    expect(mayReach("169.254.169.254", "loopback")).toBe(false);
  });

  it.each([
    "http://example.com/hook",
    "https://127.0.0.1/hook",
    "https://10.1.2.3/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://[fd00::1]/hook",
    "https://[::ffff:192.168.0.1]/hook",
    "https://[::127.0.0.1]/hook",
    "https://[::ffff:0:7f00:1]/hook",
    "https://[2002:c0a8:101::1]/hook",
    "https://[64:ff9b::10.0.0.1]/hook",
    "https://[fec0::1]/hook",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
    "https://2130706433/hook",
    "https://0x7f.1/hook",
    "https://localhost/hook",
    "https://intranet/hook",
    "https://db.internal/hook",
    "https://user:pass@example.com/hook",
    "ftp://example.com/hook",
    "not a url",
  ])("refuses %s with 400 invalid_callback_url", (url) => {
    expect(refusal(url, "public")).toBe("invalid_callback_url");
  });

  it("accepts an https URL of a public host, and loopback http only where allowed", () => {
    expect(checkCallbackUrl("https://hooks.example.com/pdf?x=1", "public")).toBe("https://hooks.example.com/pdf?x=1");
    expect(checkCallbackUrl("https://93.184.216.34/pdf", "public")).toBe("https://93.184.216.34/pdf");
    expect(checkCallbackUrl("https://[2606:4700:4700::1111]/pdf", "public")).toBe("https://[2606:4700:4700::1111]/pdf");
    expect(checkCallbackUrl("http://127.0.0.1:8080/hook", "private")).toBe("http://127.0.0.1:8080/hook");
    expect(checkCallbackUrl("http://receiver:8080/hook", "private")).toBe("http://receiver:8080/hook");
  });

  it.each([
    "http://169.254.169.254/latest/meta-data",
    "http://[fe80::1]/hook",
    "http://[::ffff:169.254.169.254]/hook",
    "http://[fd00:ec2::254]/latest/meta-data",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/computeMetadata/v1/",
    "http://instance-data.ec2.internal/latest/",
    "http://100.100.100.200/latest/meta-data",
    "http://[::127.0.0.1]/hook",
    "http://[fec0::1]/hook",
  ])("refuses %s even where private targets are allowed", (url) => {
    expect(refusal(url, "private")).toBe("invalid_callback_url");
  });

  it.each([
    ["8.8.8.8", "public"],
    ["2606:4700:4700::1111", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::8.8.8.8", "public"],
    ["2002:808:808::1", "public"],
    ["127.0.0.1", "private"],
    ["10.0.0.1", "private"],
    ["172.20.1.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["::1", "private"],
    ["fd12:3456::1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:7f00:1", "private"],
    ["2002:a00:1::", "private"],
    ["64:ff9b::7f00:1", "private"],
    ["169.254.169.254", "never"],
    ["100.100.100.200", "never"],
    ["0.0.0.0", "never"],
    ["255.255.255.255", "never"],
    ["224.0.0.1", "never"],
    ["::", "never"],
    ["::127.0.0.1", "never"],
    ["::ffff:0:7f00:1", "never"],
    ["fe80::1%eth0", "never"],
    ["fec0::1", "never"],
    ["ff02::1", "never"],
    ["2001:db8::1", "never"],
    ["2001::1", "never"],
    ["fd00:ec2::254", "never"],
    ["::ffff:169.254.169.254", "never"],
    ["2002:a9fe:a9fe::", "never"],
  ])("%s is %s", (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

const TARGETS: readonly WebhookTargets[] = ["public", "loopback", "private"];

function refusal(url: string, targets: WebhookTargets): string | undefined {
  try {
    checkCallbackUrl(url, targets);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return (error as HttpError).code;
  }
}

// ---- Property tests of the classifier: any spelling, any embedding ----

/** Ranges that are not public, as Node's BlockList (an independent range matcher) holds them. */
const NOT_PUBLIC_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["168.63.129.16", 32],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 3],
];
const notPublicV4 = new BlockList();
for (const [net, bits] of NOT_PUBLIC_V4) notPublicV4.addSubnet(net, bits, "ipv4");

const dotted = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 0xff).join(".");
const hexPair = (n: number) => `${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
const anyV4 = fc.integer({ min: 0, max: 0xffffffff });
/** An address inside one of the ranges above. */
const nonPublicV4 = fc
  .tuple(fc.constantFrom(...NOT_PUBLIC_V4), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([[net, bits], host]) => {
    const size = 2 ** (32 - bits);
    const network = net.split(".").reduce((value, part) => value * 256 + Number(part), 0);
    return network + (host % size);
  });

/** Every way of carrying an IPv4 address in IPv6 that the policy knows, each spelled two ways. */
function carriers(v4: number, suffix: number): string[] {
  const d = dotted(v4);
  const h = hexPair(v4);
  const tail = (suffix & 0xffff).toString(16);
  return [
    `::ffff:${d}`,
    `::ffff:${h}`,
    `0:0:0:0:0:FFFF:${h.toUpperCase()}`,
    `64:ff9b::${d}`,
    `64:ff9b:0:0:0:0:${h}`,
    `2002:${h}::${tail}`,
    `2002:${h}:0:0:0:0:${tail}`,
  ];
}

describe("the address classifier (property-based)", () => {
  it("classifies IPv4 as an independent range matcher does", () => {
    fc.assert(
      fc.property(anyV4, (n) => {
        const address = dotted(n);
        expect(classifyAddress(address) === "public").toBe(!notPublicV4.check(address, "ipv4"));
      }),
      { numRuns: 2000 },
    );
  });

  it("judges IPv4-mapped, NAT64 and 6to4 addresses as the IPv4 address they carry, however spelled", () => {
    fc.assert(
      fc.property(fc.oneof(anyV4, nonPublicV4), fc.nat(), (n, suffix) => {
        const expected = classifyAddress(dotted(n));
        for (const form of carriers(n, suffix)) expect(classifyAddress(form), form).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("never lets a non-public IPv4 address through any IPv6 form, obsolete ones included", () => {
    fc.assert(
      fc.property(nonPublicV4, fc.nat(), fc.constantFrom(...TARGETS), (n, suffix, targets) => {
        // ::0.0.0.1 is ::1, the IPv6 loopback itself (private), not an obsolete spelling of an IPv4 address.
        const compatible = n === 1 ? [] : [`::${dotted(n)}`, `::${hexPair(n)}`];
        const obsolete = [...compatible, `::ffff:0:${dotted(n)}`, `::ffff:0:${hexPair(n)}`];
        for (const form of [...carriers(n, suffix), ...obsolete]) {
          expect(mayReach(form, "public"), form).toBe(false);
          if (classifyAddress(dotted(n)) === "never") expect(mayReach(form, targets), form).toBe(false);
        }
        for (const form of obsolete) expect(classifyAddress(form), form).toBe("never");
      }),
      { numRuns: 1000 },
    );
  });

  it("gives an IPv6 address one answer however it is spelled", () => {
    const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
    // Often zeros, so that compressed spellings and the special prefixes come up.
    const sparse = groups.map((g) => g.map((x, i) => (i > 0 && i < 7 && x % 3 === 0 ? 0 : x)));
    fc.assert(
      fc.property(fc.oneof(groups, sparse), (g) => {
        const full = g.map((x) => x.toString(16).padStart(4, "0")).join(":");
        const canonical = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        const withDots = `${g
          .slice(0, 6)
          .map((x) => x.toString(16))
          .join(":")}:${dotted(((g[6]! << 16) | g[7]!) >>> 0)}`;
        const expected = classifyAddress(full);
        for (const form of [canonical, full.toUpperCase(), withDots, `${canonical}%eth0`]) {
          expect(classifyAddress(form), form).toBe(expected);
        }
        expect(Array.from(ipv6Bytes(canonical))).toEqual(Array.from(ipv6Bytes(full)));
        // Outside 2000::/3 only loopback, unique-local and the IPv4 carriers can be anything but "never".
        if ((g[0]! & 0xe000) !== 0x2000 && classifyAddress(full) !== "never") {
          expect(
            full === "0000:0000:0000:0000:0000:0000:0000:0001" ||
              (g[0]! & 0xfe00) === 0xfc00 ||
              (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) ||
              (g[0] === 0x64 && g[1] === 0xff9b),
          ).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

// ---- At delivery: the address the name resolves to, on the connection itself ----

/** A loopback receiver counting the calls it gets. */
async function receiver() {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    calls.push(req.headers.host ?? "");
    req.resume();
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { calls, server, port: (server.address() as AddressInfo).port };
}

/** A resolver that answers each lookup with the next of `answers`, counting the lookups. */
function scriptedResolver(answers: string[][]) {
  const lookups: string[] = [];
  const resolve: Resolver = (hostname, _options, callback) => {
    lookups.push(hostname);
    const next = answers[(lookups.length - 1) % answers.length]!;
    callback(
      null,
      next.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  };
  return { resolve, lookups };
}

describe("calls at delivery time", () => {
  it("refuses localhost and metadata names at the call, before any lookup", async () => {
    const resolver = scriptedResolver([["127.0.0.1"]]);
    for (const [url, targets] of [
      ["http://localhost:9/hook", "public"],
      ["http://metadata.google.internal/computeMetadata/v1/", "private"],
    ] as const) {
      const outcome = await callWebhook(url, { id: "msg_1", body: "{}" }, "whsec_x", targets, resolver.resolve);
      expect(outcome, url).toMatchObject({ error: expect.stringContaining("not an allowed webhook target") as string });
    }
    expect(resolver.lookups).toEqual([]);
  });

  it("checks every address a name resolves to, and connects to the address it checked", async () => {
    const hook = await receiver();
    try {
      const url = `http://receiver.test:${hook.port}/hook`;
      const loopback = scriptedResolver([["127.0.0.1"]]);
      expect(await callWebhook(url, { id: "msg_1", body: "{}" }, "whsec_x", "private", loopback.resolve)).toEqual({
        status: 200,
      });
      expect(hook.calls).toEqual([`receiver.test:${hook.port}`]);
      expect(await callWebhook(url, { id: "msg_1", body: "{}" }, "whsec_x", "public", loopback.resolve)).toMatchObject({
        error: expect.stringContaining("non-public address (127.0.0.1)") as string,
      });
      for (const answer of [["127.0.0.1", "169.254.169.254"], ["::ffff:a9fe:a9fe"], ["fe80::1"], ["::127.0.0.1"]]) {
        const outcome = await callWebhook(
          url,
          { id: "msg_1", body: "{}" },
          "whsec_x",
          "private",
          scriptedResolver([answer]).resolve,
        );
        expect(outcome, answer.join()).toMatchObject({
          error: expect.stringContaining("link-local or metadata address") as string,
        });
      }
      // A name that rebinds between lookups: one lookup per call, and the call goes where it checked.
      const rebinding = scriptedResolver([["127.0.0.1"], ["169.254.169.254"]]);
      const first = await callWebhook(url, { id: "msg_1", body: "{}" }, "whsec_x", "private", rebinding.resolve);
      const second = await callWebhook(url, { id: "msg_1", body: "{}" }, "whsec_x", "private", rebinding.resolve);
      expect([first, second]).toMatchObject([{ status: 200 }, { error: expect.any(String) as string }]);
      expect(rebinding.lookups).toHaveLength(2);
      expect(hook.calls).toHaveLength(2);
    } finally {
      hook.server.close();
    }
  });

  it("checks an address literal again at the call: a URL accepted under another policy is not called", async () => {
    const hook = await receiver();
    try {
      const outcome = await callWebhook(
        `http://127.0.0.1:${hook.port}/hook`,
        { id: "msg_1", body: "{}" },
        "whsec_x",
        "public",
      );
      expect(outcome).toMatchObject({ error: expect.stringContaining("not an allowed webhook target") as string });
      expect(hook.calls).toEqual([]);
    } finally {
      hook.server.close();
    }
  });
});

describe("calls and signatures", () => {
  it("signs as Standard Webhooks specifies: the example of Svix's manual verification guide", () => {
    // docs.svix.com/receiving/verifying-payloads/how-manual: this secret, id, time and body sign so.
    const headers = webhookHeaders(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      { id: "msg_p5jXN8AQM9LWM0D4loKWxJek", body: '{"test": 2432232314}' },
      1614265330,
    );
    expect(headers).toMatchObject({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
    expect(
      verifyWebhook(
        '{"test": 2432232314}',
        headers["Marketplace-Signature"],
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        300,
        1614265330_000,
      ),
    ).toBe(true);
  });

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
      expect(await callWebhook(url, { id: "msg_1", body }, "whsec_test", "private")).toEqual({ status: 200 });
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
