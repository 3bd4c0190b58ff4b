// Minimal in-process fake of the GCS JSON API, enough for @google-cloud/storage 8.x:
// save()/createWriteStream() (multipart + resumable), getMetadata, download, delete, getFiles, exists.
import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { CRC32C } from '@google-cloud/storage';

export function createFakeGcs({ log = false } = {}) {
  const buckets = new Map(); // bucket -> Map(name -> {data, meta})
  const sessions = new Map(); // upload_id -> {bucket, name, meta, chunks: Buffer[], received}
  const requests = [];
  let gen = 1_700_000_000_000_000;
  let base = '';

  const objBucket = (b) => { if (!buckets.has(b)) buckets.set(b, new Map()); return buckets.get(b); };
  const resource = (bucket, name, data, meta) => {
    const generation = String(++gen);
    const now = new Date().toISOString();
    const crc = new CRC32C(); crc.update(data);
    return {
      kind: 'storage#object', id: `${bucket}/${name}/${generation}`, name, bucket, generation, metageneration: '1',
      contentType: meta.contentType ?? 'application/octet-stream', size: String(data.length),
      md5Hash: createHash('md5').update(data).digest('base64'),
      ...(!process.env.FAKE_NO_CRC && { crc32c: crc.toString() }), // REQUIRED: client validates crc32c by default and deletes+throws FILE_NO_UPLOAD if absent
      etag: randomUUID(), timeCreated: now, updated: now, storageClass: 'STANDARD',
      ...(meta.contentDisposition && { contentDisposition: meta.contentDisposition }),
      ...(meta.cacheControl && { cacheControl: meta.cacheControl }),
      ...(meta.contentEncoding && { contentEncoding: meta.contentEncoding }),
      ...(meta.metadata && { metadata: meta.metadata }),
      selfLink: `${base}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}`,
      mediaLink: `${base}/download/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?generation=${generation}&alt=media`,
    };
  };
  const store = (bucket, name, data, meta) => {
    const r = resource(bucket, name, data, meta);
    objBucket(bucket).set(name, { data, meta: r });
    return r;
  };
  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const notFound = (res, msg = 'No such object') => json(res, 404, { error: { code: 404, message: msg, errors: [{ reason: 'notFound', message: msg }] } });

  // multipart/related: --B\r\nContent-Type: application/json\r\n\r\n{json}\r\n--B\r\nContent-Type: x\r\n\r\n<bytes>\r\n--B--
  function parseMultipart(body, contentType) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)[1];
    const delim = Buffer.from(`--${boundary}`);
    const parts = [];
    let pos = body.indexOf(delim);
    while (pos !== -1) {
      const start = pos + delim.length;
      if (body.subarray(start, start + 2).toString() === '--') break;
      const next = body.indexOf(delim, start);
      let part = body.subarray(start, next === -1 ? body.length : next);
      part = part.subarray(part.indexOf('\r\n') + 2); // skip CRLF after boundary
      const hdrEnd = part.indexOf('\r\n\r\n');
      const headers = Object.fromEntries(part.subarray(0, hdrEnd).toString().split('\r\n').filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let content = part.subarray(hdrEnd + 4);
      if (content.subarray(-2).toString() === '\r\n') content = content.subarray(0, -2);
      parts.push({ headers, content });
      pos = next;
    }
    return parts;
  }

  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url, base);
    const q = Object.fromEntries(url.searchParams);
    const p = url.pathname;
    requests.push({ method: req.method, path: p, query: q, headers: req.headers, bodyLength: body.length });
    if (log) console.log('>>', req.method, req.url, JSON.stringify(pick(req.headers)), `body=${body.length}B`, body.length < 400 ? JSON.stringify(body.toString('latin1')) : '');
    let m;
    try {
      // ---- uploads
      if ((m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(p))) {
        const bucket = m[1];
        if (req.method === 'POST' && q.uploadType === 'multipart') {
          const [metaPart, dataPart] = parseMultipart(body, req.headers['content-type']);
          const meta = JSON.parse(metaPart.content.toString() || '{}');
          meta.contentType ??= dataPart.headers['content-type'];
          return json(res, 200, store(bucket, q.name ?? meta.name, dataPart.content, meta));
        }
        if (req.method === 'POST' && q.uploadType === 'resumable') {
          const meta = body.length ? JSON.parse(body.toString()) : {};
          meta.contentType ??= req.headers['x-upload-content-type'];
          const id = randomUUID();
          sessions.set(id, { bucket, name: q.name ?? meta.name, meta, chunks: [], received: 0 });
          const loc = `${base}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&name=${encodeURIComponent(q.name ?? meta.name)}&upload_id=${id}`;
          return json(res, 200, undefined, { location: loc });
        }
        if (req.method === 'PUT' && q.upload_id) {
          const s = sessions.get(q.upload_id);
          if (!s) return notFound(res, 'No such upload');
          const cr = req.headers['content-range'] ?? '';
          // Forms seen from the client:  "bytes 0-*/*"   whole (remaining) stream in this one request -> final
          //   "bytes a-b/*" intermediate chunk (chunkSize mode)   "bytes a-b/N" chunk, final when b+1==N
          //   "bytes */*" or "bytes */N"  status query (resume/retry) -> 308 + Range
          const mm = /^bytes (?:(\d+)-(\d+|\*)|\*)\/(\d+|\*)$/.exec(cr);
          if (!mm) return json(res, 400, { error: { code: 400, message: 'bad Content-Range ' + cr } });
          const [, start, end, total] = mm;
          if (start !== undefined) {
            if (Number(start) !== s.received) return json(res, 400, { error: { code: 400, message: 'bad offset' } });
            s.chunks.push(body); s.received += body.length;
          }
          const final = start !== undefined && (end === '*' || (total !== '*' && Number(total) === s.received));
          if (final) {
            sessions.delete(q.upload_id);
            return json(res, 200, store(s.bucket, s.name, Buffer.concat(s.chunks), s.meta));
          }
          const headers = s.received > 0 ? { range: `bytes=0-${s.received - 1}` } : {};
          res.writeHead(308, headers); return res.end();
        }
      }
      // ---- object metadata / media / delete
      if ((m = /^\/(?:download\/)?storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(p))) {
        const [bucket, name] = [m[1], decodeURIComponent(m[2])];
        const o = buckets.get(bucket)?.get(name);
        if (req.method === 'DELETE') { if (!o) return notFound(res); buckets.get(bucket).delete(name); res.writeHead(204); return res.end(); }
        if (req.method === 'GET') {
          if (!o) return notFound(res);
          if (q.alt === 'media') {
            res.writeHead(200, { 'content-type': o.meta.contentType, 'content-length': o.data.length,
              'x-goog-hash': `crc32c=${o.meta.crc32c},md5=${o.meta.md5Hash}`, 'x-goog-generation': o.meta.generation,
              'x-goog-stored-content-encoding': o.meta.contentEncoding ?? 'identity' });
            return res.end(o.data);
          }
          return json(res, 200, o.meta);
        }
      }
      // ---- list
      if ((m = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(p)) && req.method === 'GET') {
        const items = [...(buckets.get(m[1])?.values() ?? [])].map((o) => o.meta)
          .filter((o) => !q.prefix || o.name.startsWith(q.prefix)).sort((a, b) => a.name.localeCompare(b.name));
        return json(res, 200, { kind: 'storage#objects', items });
      }
      // ---- bucket get/create (optional)
      if ((m = /^\/storage\/v1\/b\/([^/]+)$/.exec(p)) && req.method === 'GET') return json(res, 200, { kind: 'storage#bucket', name: m[1], id: m[1] });
      json(res, 501, { error: { code: 501, message: `fake-gcs: not implemented ${req.method} ${p}` } });
    } catch (e) { json(res, 500, { error: { code: 500, message: String(e) } }); }
  });
  const pick = (h) => Object.fromEntries(Object.entries(h).filter(([k]) => /content-|x-upload|x-goog-hash|authorization|^range$|user-agent|x-goog-api-client/.test(k)));
  return {
    server, buckets, requests,
    async listen() { await new Promise((r) => server.listen(0, '127.0.0.1', r)); base = `http://127.0.0.1:${server.address().port}`; return base; },
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}
