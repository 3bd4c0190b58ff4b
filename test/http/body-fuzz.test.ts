// A body fuzzer against the real service (src/main.ts as a child process, production mode, the h2c
// listener): every route that reads a body (the sign-in forms, a signed-in form, MCP, GraphQL, the
// JSON routes, multipart, the direct upload's PUT) gets bodies under, exactly at, one byte over and
// far over its limit, sent in one write, in pieces with pauses, chunked in pieces, and with lying
// lengths (shorter than the body, or longer and then silent), over HTTP/1.1 and over h2c.
//
// What must hold after every request: an answer in 2xx-4xx (a lie that stalls gets 408), never 5xx
// and never silence; and the same process answers /healthz. At the end: it logged no CRITICAL and
// never exited. Issue 39: on dc094a6 a body that a route stopped reading before it had fully
// arrived killed the process about a second later (the body watch read a socket Node had detached).
//
// Issue 44: the JSON bodies of /v1/compress, /v1/unlock, jobs and /v1/mcp that name a file_url are
// routes of the grid too, and FUZZ_RUNS JSON bodies give file_url (this service's own addresses, a
// real result's among them, altered ones, refused ones), retention, upload_id, password,
// callback_url and options (ocr and ocr_languages among them, issue 43) any value, on the three routes.
//
// Bounded for CI: the grid of route x size x delivery (HTTP/1.1), a smaller grid over h2c, and
// FUZZ_RUNS random cases (default 20: random route, size, split points and pauses). A long run:
//   FUZZ_RUNS=2000 npx vitest run test/http/body-fuzz.test.ts
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../helpers/compress.ts";
import { hostileText, integerEdges } from "../helpers/fuzz.ts";
import { h2connect } from "../helpers/h2.ts";
import {
  createServiceDatabase,
  signedInSubscriber,
  startService,
  type ServiceDatabase,
  type ServiceProcess,
} from "../helpers/service-process.ts";
import { exchange, head, type RawAnswer, type Step } from "./raw-http.ts";

const FUZZ_RUNS = Number(process.env["FUZZ_RUNS"] ?? 20);
// How long a client waits for an answer. A body the engine compresses waits for a fresh engine
// process (COMPRESS_WARM_PROCESSES 0 below): importing and warming the engine took 9-11 s at load 9
// on these 2-core machines, and 10 s timed out ("under the limit, one write", the first of its route).
const ANSWER_MS = 10_000;
const ENGINE_ANSWER_MS = 30_000;
const IDLE_SECONDS = 1;
const MAX_UPLOAD = 48 * 1024;
const KIB = 1024;

let work: string;
let database: ServiceDatabase;
let service: ServiceProcess;
let token: string;
let keyId: string;
let cookie: string;
let csrf: string;
let pdf: Buffer;
let exitedEarly: string | null = null;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "body-fuzz-"));
  database = await createServiceDatabase(work);
  ({ token, keyId, cookie } = await signedInSubscriber(database, 100_000));
  pdf = await makePdf(1);
  service = await startService(
    {
      ...database.env,
      HTTP_PROTOCOL: "h2c",
      UPLOAD_TMP_DIR: path.join(work, "uploads"),
      LOCAL_STORAGE_DIR: path.join(work, "objects"),
      DOWNLOAD_SIGNING_SECRET: "body-fuzz-signing-secret-of-32-chars!",
      BODY_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS),
      HEADERS_TIMEOUT_SECONDS: "2",
      RATE_LIMIT_REQUESTS: "1000000",
      COMPRESS_RATE_LIMIT_PER_MINUTE: "1000000",
      SIGN_IN_LIMIT_PER_ADDRESS: "1000000",
      SIGN_IN_LIMIT_PER_IP: "1000000",
      SIGN_IN_MAILS_PER_ADDRESS: "1000000",
      COMPRESS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
      COMPRESS_CONCURRENCY: "1",
      COMPRESS_WARM_PROCESSES: "0",
    },
    { name: "body fuzz service" },
  );
  void service.exited.then((exit) => {
    exitedEarly = `exited (${exit.code ?? exit.signal}):\n${service.logs().slice(-25).join("\n")}`;
  });
  const page = await (await fetch(`${service.url}/dashboard/keys`, { headers: { cookie } })).text();
  csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
  expect(csrf).not.toBe("");
}, 120_000);

afterAll(async () => {
  await service?.stop(5_000);
  await database?.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

// ---- The routes that read a body, each with its limit and a body of any size ----

interface Route {
  name: string;
  method: "POST" | "PUT";
  /** The request target; for the direct upload, a new signed address each time. */
  target: () => Promise<string>;
  headers: () => Record<string, string>;
  /** The most bytes the route takes. */
  limit: number;
  /** A body of exactly `size` bytes, shaped for the route (valid when small enough). */
  body: (size: number) => Buffer;
  /** A valid body goes to the engine (a fresh process): answers wait for it. */
  engine?: true;
}

const answerMs = (route: Route) => (route.engine ? ENGINE_ANSWER_MS : ANSWER_MS);

const pad = (prefix: string, suffix: string, size: number, fill = "a") =>
  Buffer.from(prefix + fill.repeat(Math.max(0, size - prefix.length - suffix.length)) + suffix).subarray(0, size);
const form = (fields: string) => (size: number) => pad(`${fields}&pad=`, "", size);
const json = (head: string) => (size: number) => pad(`${head},"pad":"`, `"}`, size);
const B = "bodyFuzzB0undary";
/** A whole multipart body: the fields, then the PDF as its file. */
const multipartBody = (fields: string) =>
  Buffer.concat([
    Buffer.from(
      `${fields}--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    pdf,
    Buffer.from(`\r\n--${B}--\r\n`),
  ]);
const multipart = (fields: string) => (size: number) => {
  const start = Buffer.from(
    `${fields}--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  );
  const end = Buffer.from(`\r\n--${B}--\r\n`);
  const file = Buffer.concat([pdf, Buffer.alloc(Math.max(0, size - start.length - end.length - pdf.length), 0x20)]);
  return Buffer.concat([start, file.subarray(0, Math.max(0, size - start.length - end.length)), end]).subarray(0, size);
};
const field = (name: string, value: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

const origin = () => ({ origin: service.url, host: new URL(service.url).host });
const keyed = () => ({ authorization: `Bearer ${token}` });
const formType = { "content-type": "application/x-www-form-urlencoded" };
const jsonType = { "content-type": "application/json" };
const multipartType = { "content-type": `multipart/form-data; boundary=${B}` };
const at = (target: string) => () => Promise.resolve(target);

async function uploadTarget(): Promise<string> {
  const created = await fetch(`${service.url}/v1/uploads`, { method: "POST", headers: keyed() });
  const { upload_url: url } = (await created.json()) as { upload_url: string };
  const target = new URL(url);
  return `${target.pathname}${target.search}`;
}

const ROUTES: Route[] = [
  {
    name: "POST /dashboard/sign-in",
    method: "POST",
    target: at("/dashboard/sign-in"),
    headers: () => ({ ...origin(), ...formType }),
    limit: 16 * KIB,
    body: form("email=fuzz%40example.com"),
  },
  {
    name: "POST /dashboard/sign-in/link",
    method: "POST",
    target: at("/dashboard/sign-in/link"),
    headers: () => ({ ...origin(), ...formType }),
    limit: 16 * KIB,
    body: form("code=not-a-code"),
  },
  {
    name: "POST /dashboard/keys (signed in)",
    method: "POST",
    target: at("/dashboard/keys"),
    headers: () => ({ ...origin(), ...formType, cookie }),
    limit: 16 * KIB,
    body: (size) => form(`csrf_token=${encodeURIComponent(csrf)}&name=fuzz`)(size),
  },
  {
    name: "POST /mcp",
    method: "POST",
    target: at("/mcp"),
    headers: () => ({ ...jsonType, accept: "application/json, text/event-stream" }),
    limit: 64 * KIB,
    body: json('{"jsonrpc":"2.0","id":1,"method":"ping"'),
  },
  {
    name: "POST /graphql",
    method: "POST",
    target: at("/graphql"),
    headers: () => jsonType,
    limit: 64 * KIB,
    body: json('{"query":"{ __typename }"'),
  },
  {
    name: "POST /v1/uploads (JSON)",
    method: "POST",
    target: at("/v1/uploads"),
    headers: () => ({ ...keyed(), ...jsonType }),
    limit: 16 * KIB,
    body: json('{"file_name":"a.pdf"'),
  },
  {
    name: "POST /v1/compress (JSON)",
    method: "POST",
    target: at("/v1/compress"),
    headers: () => ({ ...keyed(), ...jsonType }),
    limit: 16 * KIB,
    body: json('{"upload_id":"00000000-0000-4000-8000-000000000000"'),
  },
  {
    name: "POST /v1/compress (JSON, file_url: this service's address, altered)",
    method: "POST",
    target: at("/v1/compress"),
    headers: () => ({ ...keyed(), ...jsonType }),
    limit: 16 * KIB,
    body: (size) =>
      json(
        `{"file_url":"${service.url}/v1/files/AAAAAAAAAAAAAAAAAAAAAAAA.pdf?expires=1&filename=a.pdf&signature=x","retention":"0","profile":"extreme","grayscale":"true"`,
      )(size),
  },
  {
    name: "POST /v1/compress (JSON, file_url, a job)",
    method: "POST",
    target: at("/v1/compress"),
    headers: () => ({ ...keyed(), ...jsonType, prefer: "respond-async" }),
    limit: 16 * KIB,
    body: json(
      '{"file_url":"https://169.254.169.254/latest/meta-data/","retention":"60","callback_url":"https://10.0.0.1/hook"',
    ),
  },
  {
    name: "POST /v1/unlock (JSON, file_url)",
    method: "POST",
    target: at("/v1/unlock"),
    headers: () => ({ ...keyed(), ...jsonType }),
    limit: 16 * KIB,
    body: json('{"file_url":"https://10.0.0.1/cv.pdf","password":"secret","retention":"3600","signatures":"remove"'),
  },
  {
    name: "POST /v1/mcp (compress_pdf with a file_url)",
    method: "POST",
    target: at("/v1/mcp"),
    headers: () => ({ ...keyed(), ...jsonType, accept: "application/json, text/event-stream" }),
    limit: 64 * KIB,
    body: json(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compress_pdf","arguments":{"file_url":"https://[::1]/a.pdf","profile":"lossless"}}',
    ),
  },
  {
    name: "POST /v1/compress (multipart)",
    method: "POST",
    target: at("/v1/compress"),
    headers: () => ({ ...keyed(), ...multipartType }),
    limit: MAX_UPLOAD,
    body: multipart(field("profile", "lossless")),
    engine: true,
  },
  {
    name: "POST /dashboard/try (multipart, signed in)",
    method: "POST",
    target: at("/dashboard/try"),
    headers: () => ({ ...origin(), ...multipartType, cookie }),
    limit: MAX_UPLOAD,
    body: (size) => multipart(field("csrf_token", csrf) + field("key_id", keyId))(size),
    engine: true,
  },
  {
    name: "PUT /v1/uploads/content/… (a PDF)",
    method: "PUT",
    target: uploadTarget,
    headers: () => ({ "content-type": "application/pdf" }),
    limit: MAX_UPLOAD,
    body: (size) => Buffer.concat([pdf, Buffer.alloc(Math.max(0, size - pdf.length), 0x20)]).subarray(0, size),
  },
  {
    name: "PUT /v1/uploads/content/… (not a PDF)",
    method: "PUT",
    target: uploadTarget,
    headers: () => ({ "content-type": "application/pdf" }),
    limit: MAX_UPLOAD,
    body: (size) => pad("GIF89a", "", size),
  },
];

// ---- Sizes and deliveries ----

const SIZES = {
  under: (limit: number) => Math.floor(limit / 2),
  exact: (limit: number) => limit,
  "one over": (limit: number) => limit + 1,
  "far over": (limit: number) => limit * 4,
} as const;
type SizeName = keyof typeof SIZES;

/** How the body goes out: the header it is announced by, and the steps that carry it. */
type Delivery = "one write" | "pieces" | "chunked" | "length too short" | "length too long";
const DELIVERIES: Delivery[] = ["one write", "pieces", "chunked", "length too short", "length too long"];

const chunk = (bytes: Buffer) =>
  Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);

/** `body` cut at `cuts` (sorted offsets), a pause of `pauseMs` between the pieces. */
function pieces(body: Buffer, cuts: number[], pauseMs: number, wrap = (b: Buffer): Step => b): Step[] {
  const steps: Step[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    if (cut <= from) continue;
    if (steps.length) steps.push({ pauseMs });
    steps.push(wrap(body.subarray(from, cut)));
    from = cut;
  }
  return steps;
}

const thirds = (body: Buffer) => [Math.floor(body.length / 3), Math.floor((2 * body.length) / 3)];

function steps(
  route: Route,
  target: string,
  body: Buffer,
  delivery: Delivery,
  cuts = thirds(body),
  pauseMs = 250,
): Step[] {
  const announce = (length: number | null) =>
    head(route.method, target, {
      ...route.headers(),
      ...(length === null ? { "transfer-encoding": "chunked" } : { "content-length": length }),
    });
  switch (delivery) {
    case "one write":
      return [announce(body.length), body];
    case "pieces":
      return [announce(body.length), ...pieces(body, cuts, pauseMs)];
    case "chunked":
      return [announce(null), ...pieces(body, cuts, pauseMs, chunk), "0\r\n\r\n"];
    case "length too short":
      return [announce(Math.floor(body.length / 2)), body];
    case "length too long":
      return [announce(body.length + 100), body];
  }
}

// ---- What must hold ----

async function alive(context: string): Promise<void> {
  expect(exitedEarly, context).toBeNull();
  const health = await fetch(`${service.url}/healthz`).then(
    (response) => response.status,
    () => 0,
  );
  expect(health, `${context}: the service died:\n${service.logs().slice(-20).join("\n")}`).toBe(200);
}

/** Any answer but silence or a 5xx; a 4xx carries the error shape (JSON, or the dashboard's page). */
function expectAnswered(answer: RawAnswer, context: string, delivery: Delivery): void {
  const detail = `${context}: ${answer.status} ${answer.body.slice(0, 200)}`;
  expect(answer.status, detail).toBeGreaterThanOrEqual(200);
  expect(answer.status, detail).toBeLessThan(500);
  // A body that never ends cannot have been taken: refused (by its start, or as stalled).
  if (delivery === "length too long") expect(answer.status, detail).toBeGreaterThanOrEqual(400);
  if (answer.status >= 400) {
    const type = answer.headers["content-type"] ?? "";
    expect(type, detail).toMatch(/^(application\/json|text\/html)/);
    // JSON-RPC (MCP) and GraphQL answer a message they refuse in their own protocol's shape.
    const ownProtocol = answer.body.startsWith('{"jsonrpc"') || answer.body.startsWith('{"errors"');
    if (type.startsWith("application/json") && !ownProtocol) {
      expect(answer.headers["x-error-code"], detail).toMatch(/^[a-z_]+$/);
    }
  }
}

async function send(route: Route, size: SizeName, delivery: Delivery): Promise<RawAnswer> {
  const body = route.body(SIZES[size](route.limit));
  return exchange(service.port, steps(route, await route.target(), body, delivery), { timeoutMs: answerMs(route) });
}

// ---- The cases ----

describe("every route that reads a body, every size, every delivery, over HTTP/1.1", () => {
  for (const route of ROUTES) {
    it(`${route.name}`, async () => {
      for (const size of Object.keys(SIZES) as SizeName[]) {
        for (const delivery of DELIVERIES) {
          const context = `${route.name}, ${size} the limit, ${delivery}`;
          expectAnswered(await send(route, size, delivery), context, delivery);
          await alive(context);
        }
      }
    }, 120_000);
  }
});

/** An HTTP/2 request with `body` written in `cuts` pieces `pauseMs` apart; its status and body. */
async function h2send(
  route: Route,
  body: Buffer,
  announceLength: boolean,
  cuts: number[],
  pauseMs: number,
): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  const session = await h2connect(service.url);
  try {
    const target = await route.target();
    const stream = session.request({
      ":method": route.method,
      ":path": target,
      ...route.headers(),
      ...(announceLength ? { "content-length": String(body.length) } : {}),
    });
    stream.on("error", () => undefined);
    const answer = new Promise<{ status: number; body: string; headers: Record<string, string> }>((resolve) => {
      let status = 0;
      let headers: Record<string, string> = {};
      let text = "";
      const timer = setTimeout(
        () => resolve({ status: 0, body: `no answer in ${answerMs(route) / 1000} s`, headers }),
        answerMs(route),
      );
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        headers = Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
      });
      stream.on("data", (data: Buffer) => (text += data.toString()));
      stream.on("close", () => {
        clearTimeout(timer);
        resolve({ status, body: text, headers });
      });
    });
    for (const step of pieces(body, cuts, pauseMs)) {
      if (stream.destroyed || stream.closed) break;
      if (Buffer.isBuffer(step)) stream.write(step);
      else await new Promise((resolve) => setTimeout(resolve, (step as { pauseMs: number }).pauseMs));
    }
    if (!stream.destroyed) stream.end();
    return await answer;
  } finally {
    session.close();
  }
}

describe("over h2c: every route, under and over its limit, in one write and in pieces, with and without a length", () => {
  for (const route of ROUTES) {
    it(`${route.name}`, async () => {
      for (const size of ["under", "one over", "far over"] as SizeName[]) {
        for (const [piecesOf, announce] of [
          [false, true],
          [true, true],
          [true, false],
        ] as const) {
          const body = route.body(SIZES[size](route.limit));
          const context = `h2c ${route.name}, ${size}, ${piecesOf ? "in pieces" : "one write"}, ${announce ? "with" : "without"} content-length`;
          const answer = await h2send(route, body, announce, piecesOf ? thirds(body) : [], 200);
          expectAnswered({ ...answer, ms: 0 }, context, "one write");
          await alive(context);
        }
      }
    }, 120_000);
  }
});

describe("over h2c, a body without a length is what its Content-Type says", () => {
  it.each([
    ["a sign-in form", ROUTES[0]!, 200],
    ["a JSON body (POST /v1/uploads)", ROUTES[5]!, 201],
  ])("%s: read, not 415", async (_name, route, status) => {
    const body = route.body(200);
    const answer = await h2send(route, body, false, [], 0);
    expect(answer.status, answer.body.slice(0, 300)).toBe(status);
    await alive(route.name);
  });
});

// A client that keeps writing a body far over the limit after the answer, and Connection: close
// (the random case POST /mcp, 194,539 B chunked, seed -1730000793, that got no answer in CI): Node
// closes such a connection once its answer is written; closed with the client's bytes unread, the
// kernel resets it and can drop the 413 still in its send buffer. The lingering close must keep it.
describe("a client still writing after its 413 (lingering close)", () => {
  it.each(["POST /mcp", "POST /graphql", "POST /dashboard/sign-in"])("%s: reads its 413 every time", async (name) => {
    const route = ROUTES.find((r) => r.name.startsWith(name))!;
    const body = route.body(route.limit * 32);
    const pieces16k = Array.from({ length: Math.ceil(body.length / 16_384) }, (_, i) =>
      chunk(body.subarray(i * 16_384, (i + 1) * 16_384)),
    );
    for (let attempt = 0; attempt < 10; attempt++) {
      const target = await route.target();
      const answer = await exchange(
        service.port,
        [head(route.method, target, { ...route.headers(), "transfer-encoding": "chunked" }), ...pieces16k, "0\r\n\r\n"],
        { timeoutMs: answerMs(route) },
      );
      expect(answer.status, `${name}, attempt ${attempt}: ${answer.body.slice(0, 200)}`).toBe(413);
    }
    await alive(name);
  });
  it("a client that goes silent after its 413 is cut off by the body watch, not held for the linger", async () => {
    const route = ROUTES.find((r) => r.name === "POST /mcp")!;
    const body = route.body(route.limit * 4);
    const socket = net.connect(service.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let received = "";
    socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
    socket.on("error", () => undefined);
    const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
    const started = Date.now();
    socket.write(head(route.method, await route.target(), { ...route.headers(), "transfer-encoding": "chunked" }));
    socket.write(chunk(body.subarray(0, route.limit * 2)));
    // ...and nothing more: no last chunk, no FIN.
    const closedAt = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(0), 15_000))]);
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(closedAt, "the connection was still open after 15 s").toBeGreaterThan(0);
    expect(closedAt - started).toBeLessThan((IDLE_SECONDS + 5) * 1000);
    await alive("silent after 413");
  });
});

describe(`random routes, sizes, cuts and pauses (${FUZZ_RUNS} runs)`, () => {
  it("never a 5xx, never silence, never a dead process", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.constantFrom<Delivery>("one write", "pieces", "chunked", "length too short"),
        fc.uniqueArray(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 400 }),
        async (route, scale, delivery, fractions, pauseMs) => {
          const body = route.body(Math.max(1, Math.round(route.limit * scale)));
          const cuts = fractions.map((f) => Math.floor(f * body.length)).sort((a, b) => a - b);
          const answer = await exchange(
            service.port,
            steps(route, await route.target(), body, delivery, cuts, pauseMs),
            {
              timeoutMs: answerMs(route),
            },
          );
          const context = `${route.name}, ${body.length} B, ${delivery}, cuts ${cuts.join(",")}, pause ${pauseMs} ms`;
          expectAnswered(answer, context, delivery);
          await alive(context);
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  }, 300_000);
});

// The fields of issue 44 with any value, in JSON bodies of /v1/compress, /v1/unlock and jobs: file_url
// (this service's own addresses, a real result's url among them, altered ones, refused addresses,
// hostile text, values that are not strings), retention, upload_id, password, callback_url and the
// options. Nothing is fetched from outside: every address is this service's or refused by its spelling.
describe(`JSON bodies with file_url, retention and the other fields, any values (${FUZZ_RUNS} runs)`, () => {
  it("2xx-4xx in the documented shape on every route, never a 5xx, the same process", async () => {
    const made = multipartBody(field("retention", "3600"));
    const first = await fetch(`${service.url}/v1/compress`, {
      method: "POST",
      headers: { ...keyed(), ...multipartType },
      body: new Uint8Array(made),
    });
    expect(first.status).toBe(200);
    const resultUrl = ((await first.json()) as { url: string }).url;
    const name = new URL(resultUrl).pathname.split("/").pop()!;
    const fileUrl = fc.oneof(
      fc.constantFrom(
        resultUrl,
        resultUrl.replace(/signature=[^&]+/, "signature=AAAA"),
        resultUrl.replace(/expires=\d+/, "expires=9999999999"),
        `${service.url}/v1/results/${name}?expires=9999999999&signature=abc`,
        `${service.url}/v1/uploads/content/${name}?expires=9999999999&max=1&signature=x`,
        `${service.url}/v1/files/../${name}`,
        "https://10.0.0.1/cv.pdf",
        "https://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:9/cv.pdf",
        "https://[::ffff:127.0.0.1]/a.pdf",
        "ftp://files.example.com/a.pdf",
      ),
      hostileText,
    );
    const text = fc.oneof(hostileText, integerEdges, fc.constantFrom("0", "60", "true", "balanced", "remove", ""));
    const value = fc.oneof(
      { weight: 4, arbitrary: text },
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
    );
    const fields = fc.record(
      {
        file_url: fc.oneof({ weight: 4, arbitrary: fileUrl }, value),
        retention: value,
        upload_id: value,
        password: value,
        callback_url: value,
        profile: value,
        grayscale: value,
        target_size: value,
        ocr: value,
        ocr_languages: fc.oneof(value, fc.constantFrom("eng+deu", "eng+deu+fra+ita", "klingon", "eng,,deu", "+")),
      },
      { requiredKeys: [] },
    );
    const routes = fc.constantFrom("/v1/compress", "/v1/unlock", "job");
    await fc.assert(
      fc.asyncProperty(routes, fields, async (route, sent) => {
        const headers = { ...keyed(), ...jsonType, ...(route === "job" ? { prefer: "respond-async" } : {}) };
        const target = route === "job" ? "/v1/compress" : route;
        const body = Buffer.from(JSON.stringify(sent));
        const answer = await exchange(
          service.port,
          [head("POST", target, { ...headers, "content-length": body.length }), body],
          {
            timeoutMs: ENGINE_ANSWER_MS,
          },
        );
        const context = `${route} ${body.toString().slice(0, 300)}`;
        expectAnswered(answer, context, "one write");
        await alive(context);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, 300_000);
});

describe("afterwards", () => {
  it("the same process, a moment later (the body watch's next tick), with no CRITICAL in its log", async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await alive("afterwards");
    expect(service.records().filter((record) => record["severity"] === "CRITICAL")).toEqual([]);
  });
});
