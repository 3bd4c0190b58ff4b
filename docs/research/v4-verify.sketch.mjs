// V4 signed URL: generate offline with a throwaway RSA key, then verify independently per Google's V4 spec.
import net from 'node:net';
import dns from 'node:dns';
import { generateKeyPairSync, createHash, verify } from 'node:crypto';
import { Storage } from '@google-cloud/storage';

// Hard-fail on ANY network use (TCP connect / DNS) so "offline" is proven, not assumed.
const netCalls = [];
const origConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...a) { netCalls.push(JSON.stringify(a[0]).slice(0, 80)); throw new Error('NETWORK BLOCKED'); };
dns.lookup = (h, ...r) => { netCalls.push('dns ' + h); r.at(-1)(new Error('DNS BLOCKED')); };
globalThis.fetch = async (u) => { netCalls.push('fetch ' + u); throw new Error('FETCH BLOCKED'); };

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const credentials = {
  client_email: 'pdf-signer@test-project.iam.gserviceaccount.com',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
};
const storage = new Storage({ projectId: 'test-project', credentials }); // NB: no apiEndpoint -> host storage.googleapis.com

const now = Date.now();
const [url] = await storage.bucket('pdf-out').file('jobs/42/My Report (final).pdf').getSignedUrl({
  version: 'v4', action: 'read', expires: now + 3600 * 1000,
  responseDisposition: 'attachment; filename="My Report (final).pdf"',
});
console.log('URL:', url, '\nnetwork calls during signing:', netCalls);

// ---------- independent verifier (no library code) ----------
const rfc3986 = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
function verifyV4SignedUrl(signedUrl, pubKey, { expectedEmail, nowMs = Date.now() } = {}) {
  const u = new URL(signedUrl);
  const params = [...u.searchParams.entries()];
  const get = (k) => u.searchParams.get(k);
  if (get('X-Goog-Algorithm') !== 'GOOG4-RSA-SHA256') throw new Error('algorithm');
  const credential = get('X-Goog-Credential'); // <email>/<YYYYMMDD>/auto/storage/goog4_request
  const [email, ...scopeParts] = credential.split('/');
  const scope = scopeParts.join('/');
  if (expectedEmail && email !== expectedEmail) throw new Error('email');
  const date = get('X-Goog-Date'); // YYYYMMDDTHHMMSSZ
  if (!scope.startsWith(date.slice(0, 8) + '/auto/storage/goog4_request')) throw new Error('scope/date');
  const signedAt = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
  const expires = Number(get('X-Goog-Expires'));
  if (!(nowMs >= signedAt && nowMs < signedAt + expires * 1000)) throw new Error('expired/not yet valid');
  const signedHeaderNames = get('X-Goog-SignedHeaders').split(';');
  const headers = { host: u.host }; // for a GET read only `host` is signed
  const canonicalHeaders = signedHeaderNames.map((h) => `${h}:${headers[h]}\n`).join('');
  const canonicalQuery = params.filter(([k]) => k !== 'X-Goog-Signature')
    .map(([k, v]) => [rfc3986(k), rfc3986(v)]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`).join('&');
  const canonicalRequest = ['GET', u.pathname, canonicalQuery, canonicalHeaders, signedHeaderNames.join(';'), 'UNSIGNED-PAYLOAD'].join('\n');
  const stringToSign = ['GOOG4-RSA-SHA256', date, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const ok = verify('RSA-SHA256', Buffer.from(stringToSign), pubKey, Buffer.from(get('X-Goog-Signature'), 'hex'));
  return { ok, email, expires, canonicalRequest, stringToSign };
}

const r = verifyV4SignedUrl(url, publicKey, { expectedEmail: credentials.client_email });
console.log('\ncanonical request:\n' + r.canonicalRequest + '\n\nstring-to-sign:\n' + r.stringToSign);
console.log('\nsignature valid:', r.ok, '| X-Goog-Expires:', r.expires, '| disposition:', new URL(url).searchParams.get('response-content-disposition'));
// negative checks
const tampered = url.replace('jobs/42', 'jobs/43');
console.log('tampered path valid:', verifyV4SignedUrl(tampered, publicKey).ok);
const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
console.log('other key valid:', verifyV4SignedUrl(url, other).ok);
try { verifyV4SignedUrl(url, publicKey, { nowMs: now + 3601 * 1000 }); } catch (e) { console.log('after expiry ->', e.message); }
net.Socket.prototype.connect = origConnect;
