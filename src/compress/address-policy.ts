// Which network addresses the service may reach on a subscriber's word: a webhook's callback_url and a
// file_url it fetches (docs/webhooks-and-sign-in.md, "Webhook address policy"; docs/compression-api.md,
// "Files by URL"). Every address falls in one of three classes:
// - public: globally reachable unicast; always allowed.
// - private: this host and private networks (loopback, RFC 1918, carrier-grade NAT, unique local
//   IPv6); allowed only with WEBHOOK_ALLOW_PRIVATE, for tests and local receivers. Loopback alone
//   (this machine) is allowed by default in development, so a receiver on a developer's laptop works
//   with `npm start` (WebhookTargets "loopback").
// - never: link-local (169.254.169.254 and fe80:: are cloud metadata servers), the cloud metadata
//   addresses by name and number, and everything the IANA special-purpose registries mark as not
//   globally reachable (unspecified, documentation, benchmarking, multicast, reserved), plus the
//   obsolete IPv6 forms no receiver uses (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d,
//   site-local fec0::/10, Teredo). No setting allows these, as Stripe and GitHub refuse them.
// IPv6 that carries an IPv4 address to be reached through it (IPv4-mapped ::ffff:0:0/96, NAT64
// 64:ff9b::/96, 6to4 2002::/16) is judged as that IPv4 address. IPv6 is judged from its 16 bytes,
// so no spelling (hex or dotted tail, zeros compressed or not, a zone id) changes the answer; only
// global unicast (2000::/3) can be public.
import type { LookupAddress, LookupAllOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";

export type AddressClass = "public" | "private" | "never";

type Range = readonly [network: number, bits: number, cls: Exclude<AddressClass, "public">];

// IANA IPv4 Special-Purpose Address Registry, and the metadata servers that sit on public or
// carrier-grade NAT space (Alibaba's 100.100.100.200; Azure's platform address 168.63.129.16).
const IPV4: readonly Range[] = [
  [v4("0.0.0.0"), 8, "never"], // "this network"
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.100.100.200"), 32, "never"],
  [v4("100.64.0.0"), 10, "private"], // carrier-grade NAT
  [v4("127.0.0.0"), 8, "private"], // loopback
  [v4("168.63.129.16"), 32, "never"],
  [v4("169.254.0.0"), 16, "never"], // link-local: 169.254.169.254 is the metadata server
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "never"], // IETF protocol assignments
  [v4("192.0.2.0"), 24, "never"], // documentation
  [v4("192.88.99.0"), 24, "never"], // 6to4 relay anycast (deprecated)
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "never"], // benchmarking
  [v4("198.51.100.0"), 24, "never"], // documentation
  [v4("203.0.113.0"), 24, "never"], // documentation
  [v4("224.0.0.0"), 4, "never"], // multicast
  [v4("240.0.0.0"), 4, "never"], // reserved, and the broadcast address
];

function v4(dotted: string): number {
  return dotted.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

function inV4Range(address: number, [network, bits]: Range): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(address / size) === Math.floor(network / size);
}

function classifyV4(address: number): AddressClass {
  // Longest prefix first where ranges nest (a /32 metadata address inside a private /10).
  const matches = IPV4.filter((range) => inV4Range(address, range)).sort((a, b) => b[1] - a[1]);
  return matches[0]?.[2] ?? "public";
}

/** The 16 bytes of a valid IPv6 address (isIP() === 6), a zone id ignored. */
export function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

const u32 = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

/** True when the first `bits` bits of bytes equal those of prefix (given as bytes). */
function hasPrefix(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if ((bytes[bit / 8]! & mask) !== ((prefix[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

const zeros = (n: number) => new Array<number>(n).fill(0);

function classifyV6(bytes: Uint8Array): AddressClass {
  // Forms that carry an IPv4 address reached through them: judged as that address.
  if (hasPrefix(bytes, [...zeros(10), 0xff, 0xff], 96)) return classifyV4(u32(bytes, 12)); // ::ffff:a.b.c.d
  if (hasPrefix(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)], 96)) return classifyV4(u32(bytes, 12)); // NAT64
  if (hasPrefix(bytes, [0x20, 0x02], 16)) return classifyV4(u32(bytes, 2)); // 6to4
  if (hasPrefix(bytes, [...zeros(15), 1], 128)) return "private"; // ::1
  if (hasPrefix(bytes, [0xfd, 0, 0x0e, 0xc2, ...zeros(10), 0x02, 0x54], 128)) return "never"; // AWS metadata fd00:ec2::254
  if (hasPrefix(bytes, [0xfc], 7)) return "private"; // unique local fc00::/7
  if (hasPrefix(bytes, [0, 0x64, 0xff, 0x9b, 0, 1], 48)) return "private"; // local-use NAT64 (RFC 8215)
  if (!hasPrefix(bytes, [0x20], 3)) return "never"; // ::/96, SIIT, fe80::/10, fec0::/10, ff00::/8, 100::/64, …
  if (hasPrefix(bytes, [0x20, 0x01, 0x00], 23)) return "never"; // 2001::/23: Teredo, benchmarking, ORCHID
  if (hasPrefix(bytes, [0x20, 0x01, 0x0d, 0xb8], 32)) return "never"; // documentation
  if (hasPrefix(bytes, [0x3f, 0xff], 20)) return "never"; // documentation (RFC 9637)
  return "public";
}

/** The class of an IP address literal; anything that is not one is "never". */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address.replace(/%.*$/, ""));
  if (family === 4) return classifyV4(v4(address));
  if (family === 6) return classifyV6(ipv6Bytes(address));
  return "never";
}

/**
 * What webhooks may reach beside public addresses: nothing (`public`), this machine (`loopback`: the
 * development default), or private networks too (`private`: WEBHOOK_ALLOW_PRIVATE=true).
 */
export type WebhookTargets = "public" | "loopback" | "private";

/** 127/8, ::1 and ::ffff:127.0.0.0/104: this machine. */
export function isLoopback(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ""));
  if (family === 4) return address.startsWith("127.");
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  if (hasPrefix(bytes, [...zeros(15), 1], 128)) return true;
  return hasPrefix(bytes, [...zeros(10), 0xff, 0xff, 127], 104);
}

/** Whether a webhook may connect to this address under the policy. */
export function mayReach(address: string, targets: WebhookTargets): boolean {
  const cls = classifyAddress(address);
  if (cls !== "private") return cls === "public";
  return targets === "private" || (targets === "loopback" && isLoopback(address));
}

/** `localhost` and `*.localhost` (RFC 6761: they resolve to this machine). */
const isLocalhostName = (name: string) => name === "localhost" || name.endsWith(".localhost");

/** Whether a host (a name, or an address without brackets) is this machine by its spelling. */
export function namesLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return isIP(name) ? isLoopback(name) : isLocalhostName(name);
}

// Names of metadata servers: they resolve to link-local addresses (refused when resolved), and are
// refused by name too, so the mistake is a 400 when the job is submitted.
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data"]);

/** Whether a callback URL may name this host (a name, or an address without brackets). */
export function mayName(host: string, targets: WebhookTargets): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (isIP(name)) return mayReach(name, targets);
  if (METADATA_NAMES.has(name) || name.startsWith("instance-data.")) return false;
  if (targets === "private") return true;
  if (targets === "loopback" && isLocalhostName(name)) return true;
  return name.includes(".") && !isLocalhostName(name) && !name.endsWith(".internal");
}

/** The URL's host without the brackets of an IPv6 literal. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** Why an outbound URL (callback_url, file_url) is refused before any connection. */
export type UrlProblem = "malformed" | "scheme" | "credentials" | "host";

/**
 * Checks a URL the service is asked to reach: absolute, https (http only where the network is not the
 * internet: private networks when allowed, this machine in development), no credentials, a host the
 * policy may name. Answers the parsed URL, or the problem.
 */
export function checkOutboundUrl(
  raw: string,
  targets: WebhookTargets,
): { url: URL } | { problem: UrlProblem; protocol: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: "malformed", protocol: "" };
  }
  const { protocol } = url;
  const host = hostOf(url);
  const plainHttp = targets === "private" || (targets === "loopback" && namesLoopback(host));
  if (protocol !== "https:" && !(protocol === "http:" && plainHttp)) return { problem: "scheme", protocol };
  if (url.username || url.password) return { problem: "credentials", protocol };
  if (!mayName(host, targets)) return { problem: "host", protocol };
  return { url };
}

/** A DNS lookup (dns.lookup's signature); tests hand one that answers what they choose. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** The error a refused address fails its connection with (its code names the refusal). */
export const ADDRESS_REFUSED = "EFORBIDDEN";

const refused = (message: string) => Object.assign(new Error(message), { code: ADDRESS_REFUSED });

/**
 * The connection's own lookup: every address the name resolves to is checked against the policy,
 * and the socket connects to a checked one (so a name cannot resolve to a public address when it is
 * checked and to 10.0.0.1 when it is connected: there is one lookup, and it is the check). A name
 * with any refused address is refused whole.
 */
export function checkedLookup(targets: WebhookTargets, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const bad = addresses.find((entry) => !mayReach(entry.address, targets));
      if (bad || addresses.length === 0) {
        const what = targets === "private" ? "a link-local or metadata" : "a non-public";
        return callback(refused(`${hostname} resolves to ${what} address (${bad?.address ?? "none"})`), "", 0);
      }
      if (options.all) return callback(null, addresses, 0);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
