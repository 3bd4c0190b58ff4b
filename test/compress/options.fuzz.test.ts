// Any value of any option field (and any file_url, below), in any combination: parsed, or refused with 400 invalid_<field>
// naming one of the fields sent (never another error, never a throw of anything else). FUZZ_RUNS
// sets the runs for a long run (docs/input-validation.md).
import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../src/errors.ts";
import { fuzzRuns, hostileText, integerEdges } from "../helpers/fuzz.ts";
import { OPTION_FIELDS, parseOptions } from "../../src/compress/workflow/options.ts";
import { mayReach } from "../../src/compress/address-policy.ts";
import { checkFileUrl } from "../../src/compress/workflow/file-url.ts";

const value = fc.oneof(
  hostileText,
  integerEdges,
  fc.constantFrom("true", "false", "balanced", "lossless", "remove", "eng", "eng+deu", "deu,fra", "eng+eng", "xx"),
);
const fields = fc.dictionary(fc.constantFrom(...OPTION_FIELDS), value, { maxKeys: OPTION_FIELDS.length });

describe("option fields, fuzzed", () => {
  it("are parsed or refused with 400 naming a field that was sent", () => {
    fc.assert(
      fc.property(fields, (sent) => {
        try {
          const options = parseOptions(sent);
          expect(["lossless", "balanced", "extreme"]).toContain(options.profile);
        } catch (error) {
          expect(error).toBeInstanceOf(HttpError);
          const { status, code } = error as HttpError;
          expect(status).toBe(400);
          expect(Object.keys(sent).map((field) => `invalid_${field}`)).toContain(code);
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});

// file_url (workflow/file-url.ts): any text, any URL (fast-check's web URLs, IP literals of every
// class in every spelling), under each policy: a URL to fetch, or 400 invalid_file_url or
// file_url_forbidden; an accepted one is https (http only where the policy allows it) and names a
// host the policy may reach.
const ipLiteral = fc.oneof(
  fc.ipV4().map((ip) => ip),
  fc.ipV4Extended(),
  fc.ipV6().map((ip) => `[${ip}]`),
);
const fileUrl = fc.oneof(
  hostileText,
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc
    .tuple(fc.constantFrom("https", "http", "ftp", "file", "HTTPS"), ipLiteral, fc.webPath())
    .map(([scheme, host, rest]) => `${scheme}://${host}${rest}`),
);

describe("file_url, fuzzed", () => {
  it.each(["public", "loopback", "private"] as const)(
    "is a URL to fetch or a 400 invalid_file_url / file_url_forbidden (%s)",
    (targets) => {
      fc.assert(
        fc.property(fileUrl, (raw) => {
          try {
            const url = checkFileUrl(raw, targets);
            expect(["https:", "http:"]).toContain(url.protocol);
            if (targets === "public") expect(url.protocol).toBe("https:");
            const host = url.hostname.replace(/^\[|\]$/g, "");
            if (isIP(host)) expect(mayReach(host, targets), host).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(HttpError);
            const { status, code } = error as HttpError;
            expect(status).toBe(400);
            expect(["invalid_file_url", "file_url_forbidden"]).toContain(code);
          }
        }),
        { numRuns: fuzzRuns(500) },
      );
    },
  );
});
