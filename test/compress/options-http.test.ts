// The output options (target_size, grayscale, max_image_ppi, remove_metadata, linearize) through real HTTP with
// the real engine in its isolated processes: on POST /v1/compress (synchronous and as a job), a direct
// upload's JSON body and POST /v1/unlock. A target that is met, one that cannot be (422
// target_unreachable, not charged), grey pages, no document information left, a linearized result that
// qpdf --check-linearization accepts, and every invalid value
// or combination refused with a 400 naming its field. Results are downloaded and read with poppler.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { multipart, subscriberWithKey } from "../helpers/compress.ts";
import { startCompressionStack, type CompressionStack } from "../helpers/compression-stack.ts";
import type { TestDatabase } from "../helpers/database.ts";
import type { TestServer } from "../helpers/server.ts";
import { hasPoppler, popplerScratch, type PopplerScratch } from "../pdf/helpers/poppler.ts";
import { findBinary } from "../../bench/pdf/tools.ts";
import { corpusDir, documentWithInformation, photoPdf, textPdf } from "../pdf/fixtures.ts";
import { scanDocument } from "../pdf/helpers/scans.ts";

let stack: CompressionStack;
let db: TestDatabase;
let server: TestServer;
let photo: Buffer;
let poppler: PopplerScratch;

beforeAll(async () => {
  stack = await startCompressionStack({ name: "compress-options", jobWorker: true, runner: { timeoutMs: 120_000 } });
  ({ db, server } = stack);
  poppler = popplerScratch("compress-options-pages");
  photo = Buffer.from((await photoPdf()).bytes);
});
afterAll(async () => {
  await stack?.close();
  poppler?.remove();
});

interface Answer {
  status: number;
  json: {
    compressed_size?: number;
    original_size?: number;
    url?: string;
    status?: string;
    options?: Record<string, unknown>;
    error?: { code: string; message: string };
    report?: {
      linearization?: { linearized: boolean; reason?: string };
      ocr?: { pages_read: number; pages_with_text: number; languages: string[] };
    };
  };
  location: string | null;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    json: (await response.json()) as Answer["json"],
    location: response.headers.get("location"),
  };
}

/** POST a multipart form to /v1/compress (or `route`) with the file and the fields. */
async function post(
  token: string,
  file: Buffer,
  fields: Record<string, string>,
  options: { async?: boolean; route?: string } = {},
) {
  const { body, contentType } = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: "file", value: file, filename: "cv.pdf" },
  ]);
  const response = await fetch(`${server.url}${options.route ?? "/v1/compress"}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": contentType,
      ...(options.async ? { prefer: "respond-async" } : {}),
    },
    body: new Uint8Array(body),
  });
  return answerOf(response);
}

/** A direct upload of the file, then POST /v1/compress with its upload_id and the members. */
async function postDirect(token: string, file: Buffer, members: Record<string, unknown>, async = false) {
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = (await (
    await fetch(`${server.url}/v1/uploads`, { method: "POST", headers: auth, body: "{}" })
  ).json()) as {
    upload_id: string;
    upload_url: string;
    headers: Record<string, string>;
  };
  const put = await fetch(created.upload_url, { method: "PUT", headers: created.headers, body: new Uint8Array(file) });
  expect(put.status).toBe(200);
  const response = await fetch(`${server.url}/v1/compress`, {
    method: "POST",
    headers: { ...auth, ...(async ? { prefer: "respond-async" } : {}) },
    body: JSON.stringify({ upload_id: created.upload_id, ...members }),
  });
  return answerOf(response);
}

async function pollJob(token: string, location: string): Promise<Answer["json"]> {
  const deadline = Date.now() + 170_000;
  for (;;) {
    const response = await fetch(`${server.url}${location}`, { headers: { authorization: `Bearer ${token}` } });
    const job = (await response.json()) as Answer["json"];
    if (job.status === "succeeded" || job.status === "failed" || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The result's bytes, downloaded from its url. */
async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** The largest difference between the colour channels of any pixel of any page (0: all grey). */
function colourfulness(pdf: Uint8Array): number {
  let most = 0;
  for (const page of poppler.pixelsOf(pdf)) {
    const header = /^P6\s+\d+\s+\d+\s+255\s/.exec(page.subarray(0, 64).toString("latin1"))!;
    const data = page.subarray(header[0].length);
    for (let i = 0; i < data.length; i += 3) {
      const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
      most = Math.max(most, Math.max(r, g, b) - Math.min(r, g, b));
    }
  }
  return most;
}

/** The document information fields pdfinfo shows of the file. */
function informationOf(pdf: Uint8Array): string[] {
  const info = execFileSync("pdfinfo", [poppler.write(pdf)], { encoding: "utf8" });
  return ["Title", "Author", "Creator", "Producer"].filter((field) => new RegExp(`^${field}:`, "m").test(info));
}

/** qpdf's verdict on a file's linearization (one line when all is well). */
function linearizationCheck(pdf: Uint8Array): string {
  const file = poppler.write(pdf);
  const result = spawnSync("qpdf", ["--check-linearization", file], { encoding: "utf8" });
  return `${result.stdout}${result.stderr}`.replaceAll(file, "out.pdf").trim();
}

const scanPath = (() => {
  const dir = corpusDir();
  return dir && path.join(dir, "files", "scan_epson_6p_jpeg.pdf");
})();

describe.skipIf(!hasPoppler())("the output options through HTTP", () => {
  it.skipIf(!scanPath)(
    "meets target_size=600000 on the 3.4 MB corpus scan",
    async () => {
      const scan = readFileSync(scanPath!);
      const { subscriber, token } = await subscriberWithKey(db.prisma);
      const { status, json } = await post(token, scan, { target_size: "600000" });
      expect(status, JSON.stringify(json)).toBe(200);
      expect(json.original_size).toBe(scan.length);
      expect(json.compressed_size).toBeLessThanOrEqual(600_000);
      const output = await download(json.url!);
      expect(output.length).toBe(json.compressed_size);
      expect(poppler.pixelsOf(output)).toHaveLength(6);
      expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    },
    300_000,
  );

  it("answers 422 target_unreachable with the smallest size reached, not charged, at once and as a job", async () => {
    const { subscriber, token } = await subscriberWithKey(db.prisma);
    const refused = await post(token, photo, { target_size: "2048" });
    expect(refused.status, JSON.stringify(refused.json)).toBe(422);
    expect(refused.json.error?.code).toBe("target_unreachable");
    const smallest = Number(/smallest reached is (\d+) bytes/.exec(refused.json.error!.message)?.[1]);
    expect(smallest).toBeGreaterThan(2048);
    expect(smallest).toBeLessThan(photo.length);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);

    const accepted = await post(token, photo, { target_size: "2048", profile: "extreme" }, { async: true });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
    const job = await pollJob(token, accepted.location!);
    expect(job).toMatchObject({ status: "failed", error: { code: "target_unreachable" } });
    expect(job.options).toEqual({ signatures: "refuse", target_size: 2048 });
    expect(job.error!.message).toMatch(/smallest reached is \d+ bytes/);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
  }, 300_000);

  it("renders grey pages with grayscale=true, at once, as a job and from a direct upload", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    expect(colourfulness(photo)).toBeGreaterThan(50);
    const direct = await post(token, photo, { grayscale: "true" });
    expect(direct.status, JSON.stringify(direct.json)).toBe(200);
    expect(colourfulness(await download(direct.json.url!))).toBeLessThanOrEqual(2);

    const accepted = await post(token, photo, { grayscale: "true", max_image_ppi: "72" }, { async: true });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
    // The job says what it was asked, as the request named it.
    expect(accepted.json.options).toEqual({ signatures: "refuse", grayscale: true, max_image_ppi: 72 });
    const job = await pollJob(token, accepted.location!);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(colourfulness(await download(job.url!))).toBeLessThanOrEqual(2);

    const uploaded = await postDirect(token, photo, { grayscale: true, profile: "extreme" });
    expect(uploaded.status, JSON.stringify(uploaded.json)).toBe(200);
    expect(colourfulness(await download(uploaded.json.url!))).toBeLessThanOrEqual(2);
  }, 300_000);

  it("leaves no Author, Creator, Producer or Title with remove_metadata=true, every profile and path", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const input = Buffer.from(await documentWithInformation());
    expect(informationOf(input)).toEqual(["Title", "Author", "Creator", "Producer"]);
    const kept = await post(token, input, { profile: "lossless" });
    expect(informationOf(await download(kept.json.url!))).toContain("Author");

    for (const profile of ["lossless", "balanced", "extreme"]) {
      const { status, json } = await post(token, input, { profile, remove_metadata: "true" });
      expect(status, JSON.stringify(json)).toBe(200);
      expect(informationOf(await download(json.url!))).toEqual([]);
    }
    const accepted = await post(token, input, { remove_metadata: "true" }, { async: true });
    const job = await pollJob(token, accepted.location!);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(informationOf(await download(job.url!))).toEqual([]);

    const uploaded = await postDirect(token, input, { remove_metadata: true }, true);
    expect(uploaded.status, JSON.stringify(uploaded.json)).toBe(202);
    const uploadedJob = await pollJob(token, uploaded.location!);
    expect(uploadedJob.status, JSON.stringify(uploadedJob)).toBe("succeeded");
    expect(informationOf(await download(uploadedJob.url!))).toEqual([]);
  }, 300_000);

  it.skipIf(!findBinary("qpdf"))(
    "gives a linearized result with linearize=true (qpdf --check-linearization), at once, as a job and from a direct upload",
    async () => {
      const { token } = await subscriberWithKey(db.prisma);
      const book = Buffer.from(await textPdf(4));
      const plain = await post(token, book, {});
      expect(linearizationCheck(await download(plain.json.url!))).toContain("not linearized");
      for (const profile of ["lossless", "balanced", "extreme"]) {
        const { status, json } = await post(token, book, { profile, linearize: "true" });
        expect(status, JSON.stringify(json)).toBe(200);
        expect(json.report?.linearization).toEqual({ linearized: true });
        expect(linearizationCheck(await download(json.url!))).toBe("out.pdf: no linearization errors");
      }
      const accepted = await post(token, photo, { linearize: "true", grayscale: "true" }, { async: true });
      expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
      const job = await pollJob(token, accepted.location!);
      expect(job.status, JSON.stringify(job)).toBe("succeeded");
      expect(job.report?.linearization).toEqual({ linearized: true });
      expect(linearizationCheck(await download(job.url!))).toBe("out.pdf: no linearization errors");

      const uploaded = await postDirect(token, book, { linearize: true, remove_metadata: true });
      expect(uploaded.status, JSON.stringify(uploaded.json)).toBe(200);
      expect(linearizationCheck(await download(uploaded.json.url!))).toBe("out.pdf: no linearization errors");
    },
    300_000,
  );

  it("reads scans with ocr=true: at once, as a job in German, and from a direct upload", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const english = ["Searchable scans for every subscriber", "come back small and readable"];
    const german = ["Größere Straßen führen über", "grüne Wiesen zum Flußufer"];
    const wordsOf = (pdf: Uint8Array) => poppler.textOf(pdf).split(/\s+/).filter(Boolean);
    const scan = Buffer.from(await scanDocument([{ lines: english, dpi: 300 }]));
    const { status, json } = await post(token, scan, { ocr: "true" });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json.report?.ocr).toMatchObject({ pages_read: 1, pages_with_text: 0, languages: ["eng"] });
    expect(wordsOf(await download(json.url!))).toEqual(english.join(" ").split(" "));

    const germanScan = Buffer.from(await scanDocument([{ lines: german, dpi: 300 }]));
    const accepted = await post(token, germanScan, { ocr: "true", ocr_languages: "deu" }, { async: true });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
    const job = await pollJob(token, accepted.location!);
    expect(job.status, JSON.stringify(job)).toBe("succeeded");
    expect(job.options).toMatchObject({ ocr: true, ocr_languages: "deu" });
    expect(job.report?.ocr).toMatchObject({ pages_read: 1, languages: ["deu"] });
    expect(wordsOf(await download(job.url!))).toEqual(german.join(" ").split(" "));

    const uploaded = await postDirect(token, scan, { ocr: true, ocr_languages: "eng+deu" });
    expect(uploaded.status, JSON.stringify(uploaded.json)).toBe(200);
    expect(uploaded.json.report?.ocr).toMatchObject({ pages_read: 1, languages: ["eng", "deu"] });
  }, 300_000);

  it("takes the options on /v1/unlock: the decrypted file compressed with them", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const locked = Buffer.from((await photoPdf({ encrypt: { userPassword: "open", ownerPassword: "own" } })).bytes);
    const fields = { password: "open", grayscale: "true", remove_metadata: "true" };
    const { status, json } = await post(token, locked, fields, { route: "/v1/unlock" });
    expect(status, JSON.stringify(json)).toBe(200);
    const output = await download(json.url!);
    expect(colourfulness(output)).toBeLessThanOrEqual(2);
    expect(informationOf(output)).toEqual([]);
    const lossless = await post(
      token,
      locked,
      { password: "open", profile: "lossless", grayscale: "true" },
      { route: "/v1/unlock" },
    );
    expect(lossless.status).toBe(400);
    expect(lossless.json.error?.code).toBe("invalid_grayscale");
  }, 300_000);
});

describe("invalid options", () => {
  // [fields, the code naming the field]
  const cases: [Record<string, string>, string][] = [
    [{ grayscale: "yes" }, "invalid_grayscale"],
    [{ grayscale: "true", profile: "lossless" }, "invalid_grayscale"],
    [{ remove_metadata: "1" }, "invalid_remove_metadata"],
    [{ linearize: "yes" }, "invalid_linearize"],
    [{ max_image_ppi: "10" }, "invalid_max_image_ppi"],
    [{ max_image_ppi: "2401" }, "invalid_max_image_ppi"],
    [{ max_image_ppi: "150dpi" }, "invalid_max_image_ppi"],
    [{ max_image_ppi: "150", profile: "lossless" }, "invalid_max_image_ppi"],
    [{ target_size: "1000" }, "invalid_target_size"],
    [{ target_size: "-600000" }, "invalid_target_size"],
    [{ target_size: "600000.5" }, "invalid_target_size"],
    [{ target_size: "600000", profile: "lossless" }, "invalid_target_size"],
    [{ ocr: "yes" }, "invalid_ocr"],
    [{ ocr: "true", target_size: "600000" }, "invalid_ocr"],
    [{ ocr: "true", ocr_languages: "klingon" }, "invalid_ocr_languages"],
    [{ ocr: "true", ocr_languages: "eng+deu+fra+ita" }, "invalid_ocr_languages"],
    [{ ocr_languages: "deu" }, "invalid_ocr_languages"],
  ];

  it.each(cases)(
    "%j: 400 %s, its message naming the field, not charged, at once and as a job",
    async (fields, code) => {
      const { subscriber, token } = await subscriberWithKey(db.prisma);
      const field = code.slice("invalid_".length);
      for (const async of [false, true]) {
        const { status, json } = await post(token, photo, fields, { async });
        expect(status, JSON.stringify(json)).toBe(400);
        expect(json.error?.code).toBe(code);
        expect(json.error?.message).toMatch(new RegExp(`^${field}: `));
        // A number out of its bounds is quoted; one the profile alone refuses is not (the profile is the fault).
        if (fields["profile"] === "lossless") expect(json.error?.message).toMatch(/lossless(?!.*got)/);
        else if (/^-?[0-9.]+$/.test(fields[field] ?? ""))
          expect(json.error?.message).toContain(`got "${fields[field]}"`);
      }
      expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    },
  );

  it.each([
    [{ grayscale: "maybe" }, "invalid_grayscale"],
    [{ target_size: 1200.5 }, "invalid_target_size"],
    [{ max_image_ppi: { dpi: 150 } }, "invalid_max_image_ppi"],
    [{ remove_metadata: [true] }, "invalid_remove_metadata"],
    [{ linearize: "fast" }, "invalid_linearize"],
    [{ target_size: 4096, profile: "lossless" }, "invalid_target_size"],
    [{ ocr: "sure" }, "invalid_ocr"],
    [{ ocr: true, ocr_languages: "eng+xyz" }, "invalid_ocr_languages"],
  ])("a direct upload's %j: 400 %s", async (members, code) => {
    const { token } = await subscriberWithKey(db.prisma);
    for (const async of [false, true]) {
      const { status, json } = await postDirect(token, photo, members, async);
      expect(status, JSON.stringify(json)).toBe(400);
      expect(json.error?.code).toBe(code);
      expect(json.error?.message).toContain(code.slice("invalid_".length));
    }
  });

  it("takes an empty field as not set (a form sends every field it shows)", async () => {
    const { token } = await subscriberWithKey(db.prisma);
    const small = Buffer.from(await textPdf(1));
    const fields = {
      grayscale: "",
      max_image_ppi: "",
      remove_metadata: "",
      target_size: "",
      linearize: "",
      ocr: "",
      ocr_languages: "",
      callback_url: "",
    };
    const { status, json } = await post(token, small, fields);
    expect(status, JSON.stringify(json)).toBe(200);
  });
});
