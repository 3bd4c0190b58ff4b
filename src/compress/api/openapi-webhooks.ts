// The webhooks of the compression API in the OpenAPI 3.1 document: the `webhooks` section (the
// call a job with a callback_url makes, its headers, body and the answers that end it) with the
// verification recipe, and the answer of GET/POST /v1/webhook-secret naming the headers sent.
type Json = Record<string, unknown>;

/** How a receiver checks a call: the same recipe as docs/compression-api.md's snippet. */
const RECIPE = [
  "Every call is signed as [Standard Webhooks](https://www.standardwebhooks.com/) specifies, so its libraries (`new Webhook(secret).verify(body, headers)`) and the typed client's `verifyWebhook` accept it as it is. By hand:",
  "",
  "1. Read the **raw body**, before any JSON parsing.",
  "2. Build the signed content: `${webhook-id}.${webhook-timestamp}.${raw body}`.",
  "3. Key: the secret (GET /v1/webhook-secret) after `whsec_`, base64-decoded.",
  "4. Compute base64(HMAC-SHA256(key, signed content)) and compare it, in constant time, with each space-separated `v1,<signature>` of `webhook-signature`: one matching is enough (after a rotation, calls carry a signature per secret until `previous_secret_valid_until`).",
  "5. Refuse a `webhook-timestamp` more than 5 minutes from your clock (replays).",
  "6. Answer any 2xx within 10 s; handle each `webhook-id` once (a retry keeps it).",
  "",
  "`Marketplace-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>' under the whole secret>` is also sent, for receivers written before Standard Webhooks.",
].join("\n");

const header = (name: string, description: string, example: string) => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string" },
  example,
});

export const webhooks: Json = {
  compressionJobEnded: {
    post: {
      operationId: "compressionJobEnded",
      tags: ["Webhooks"],
      summary: "A job with a callback_url ended: POSTed to that URL",
      description: RECIPE,
      parameters: [
        header(
          "webhook-id",
          "The delivery's id, the same on every retry of it.",
          "0f5c2b8e-7d0a-4d51-9a55-3f1f6a9e2c11",
        ),
        header("webhook-timestamp", "When this call was signed, in unix seconds.", "1764921600"),
        header(
          "webhook-signature",
          "Space-separated `v1,<base64 signature>`, one per secret that signs (two during a rotation's overlap).",
          "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
        ),
        header(
          "Marketplace-Signature",
          "The older scheme: t=<unix seconds>,v1=<hex> (one v1 per secret).",
          "t=1764921600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
        ),
      ],
      requestBody: {
        required: true,
        description: "The job resource (as GET /v1/jobs/{id} answers it) with the event's type first.",
        content: {
          "application/json": {
            schema: {
              allOf: [
                { $ref: "#/components/schemas/Job" },
                {
                  type: "object",
                  required: ["type"],
                  properties: {
                    type: { type: "string", enum: ["compression_job.succeeded", "compression_job.failed"] },
                  },
                },
              ],
            },
          },
        },
      },
      responses: {
        "2XX": { description: "Received: the delivery ends." },
        default: {
          description:
            "Any other answer, or none within 10 s: the call is made again with the same webhook-id, 8 calls at most over about a day (10 s, 40 s, 160 s, … at most 6 h apart).",
        },
      },
    },
  },
};

export const webhookSecretAnswer = {
  description: "The subscriber's webhook secret and how calls are signed with it.",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: [
          "secret",
          "algorithm",
          "scheme",
          "headers",
          "signed_content",
          "previous_secret_valid_until",
          "header",
        ],
        properties: {
          secret: { type: "string", description: "whsec_ and the key's bytes in base64 (Standard Webhooks' form)." },
          algorithm: { type: "string", const: "HMAC-SHA256" },
          scheme: { type: "string", const: "standard-webhooks" },
          headers: {
            type: "object",
            description: "The headers each call carries, as Standard Webhooks names them.",
            required: ["id", "timestamp", "signature"],
            properties: {
              id: { type: "string", const: "webhook-id" },
              timestamp: { type: "string", const: "webhook-timestamp" },
              signature: { type: "string", const: "webhook-signature" },
            },
          },
          signed_content: { type: "string", const: "{webhook-id}.{webhook-timestamp}.{raw body}" },
          previous_secret_valid_until: {
            type: ["string", "null"],
            format: "date-time",
            description:
              "After a rotation: until when the replaced secret still signs calls beside this one (WEBHOOK_ROTATION_OVERLAP_HOURS, 24 by default); null when only this secret signs.",
          },
          header: {
            type: "string",
            const: "Marketplace-Signature",
            deprecated: true,
            description: "The older signature header, also sent; prefer the headers above.",
          },
        },
      },
      example: {
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        algorithm: "HMAC-SHA256",
        scheme: "standard-webhooks",
        headers: { id: "webhook-id", timestamp: "webhook-timestamp", signature: "webhook-signature" },
        signed_content: "{webhook-id}.{webhook-timestamp}.{raw body}",
        previous_secret_valid_until: null,
        header: "Marketplace-Signature",
      },
    },
  },
};
