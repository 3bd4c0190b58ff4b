// A faithful local stand-in for Google's identity keys: google-auth-library's own OAuth2Client,
// whose key fetches return keys generated here instead of calling Google, and tokens signed with
// those keys the way Google (RS256 ID tokens) and IAP (ES256 assertions) sign theirs. Everything
// else, signature, issuer, audience and expiry checks included, is the library's code.
import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from "node:crypto";
import { OAuth2Client } from "google-auth-library";

type Claims = Record<string, unknown>;

const base64url = (value: Buffer | string) => Buffer.from(value).toString("base64url");

function jwt(header: Claims, claims: Claims, key: KeyObject): string {
  const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  // ES256 signatures are r||s (JOSE), not DER.
  const signature =
    header["alg"] === "ES256"
      ? sign("sha256", Buffer.from(signed), { key, dsaEncoding: "ieee-p1363" })
      : sign("sha256", Buffer.from(signed), key);
  return `${signed}.${base64url(signature)}`;
}

const now = () => Math.floor(Date.now() / 1000);

export class LocalGoogleKeys {
  private readonly rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  private readonly ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  readonly idTokenKid = randomUUID();
  readonly iapKid = randomUUID();
  /** The client the app is given: Google's verifier, fed these keys. */
  readonly client: OAuth2Client;

  constructor() {
    const certs = { [this.idTokenKid]: this.rsa.publicKey.export({ type: "spki", format: "pem" }).toString() };
    const pubkeys = { [this.iapKid]: this.ec.publicKey.export({ type: "spki", format: "pem" }).toString() };
    this.client = new (class extends OAuth2Client {
      override getFederatedSignonCertsAsync() {
        return Promise.resolve({ certs, format: "PEM" as never });
      }
      override getIapPublicKeysAsync() {
        return Promise.resolve({ pubkeys });
      }
    })();
  }

  /** A Google ID token as the metadata server or `gcloud auth print-identity-token` issues one. */
  idToken(claims: Claims, key: KeyObject = this.rsa.privateKey): string {
    return jwt(
      { alg: "RS256", kid: this.idTokenKid, typ: "JWT" },
      { iss: "https://accounts.google.com", iat: now(), exp: now() + 3600, email_verified: true, ...claims },
      key,
    );
  }

  /** IAP's signed header (x-goog-iap-jwt-assertion). */
  iapAssertion(claims: Claims): string {
    return jwt(
      { alg: "ES256", kid: this.iapKid, typ: "JWT" },
      { iss: "https://cloud.google.com/iap", iat: now(), exp: now() + 600, ...claims },
      this.ec.privateKey,
    );
  }
}

/** A key Google never published: what a forged token is signed with. */
export const strangerKey = (): KeyObject =>
  createPrivateKey(
    generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }),
  );
