import { readFileSync } from 'node:fs';
import { PDFDocument as Cantoo, PDFName, PDFRawStream, PDFDict, PDFInvalidObject } from '@cantoo/pdf-lib';
import { PDFDocument as PdfLib } from 'pdf-lib';

/** Returns {encrypted, needsUserPassword, V, R} without a password. */
export async function inspect(bytes) {
  const doc = await Cantoo.load(bytes, { ignoreEncryption: true, updateMetadata: false });
  const enc = doc.context.lookup(doc.context.trailerInfo.Encrypt);
  if (!(enc instanceof PDFDict)) return { encrypted: false };
  const V = enc.lookup(PDFName.of('V'))?.asNumber?.(), R = enc.lookup(PDFName.of('R'))?.asNumber?.();
  const filter = enc.lookup(PDFName.of('Filter'))?.asString?.();
  const P = enc.lookup(PDFName.of('P'))?.asNumber?.();
  try { await Cantoo.load(bytes, { password: '', updateMetadata: false }); return { encrypted: true, needsUserPassword: false, filter, V, R, P }; }
  catch (e) {
    if (/NEEDS PASSWORD|Password incorrect/.test(e.message)) return { encrypted: true, needsUserPassword: true, filter, V, R, P };
    throw e; // unsupported handler (e.g. /Filter /Adobe.PubSec), malformed, ...
  }
}

/** Decrypt with user or owner password; returns unencrypted bytes. Throws on wrong pw. */
export async function unlock(bytes, password) {
  const doc = await Cantoo.load(bytes, { password, updateMetadata: false });
  const ctx = doc.context;
  // Pitfall workaround: @cantoo/pdf-lib keeps the source's cross-reference *stream* objects
  // (which carry /Encrypt and /ID) and writes them back out; upstream pdf-lib then re-reads
  // /Encrypt from them and refuses the file. Drop them (and the old Encrypt dict) before saving.
  for (const [ref, obj] of ctx.enumerateIndirectObjects()) {
    if (obj instanceof PDFRawStream && obj.dict.lookup(PDFName.of('Type')) === PDFName.of('XRef')) ctx.delete(ref);
    // ...and in the decrypting parse they sometimes come back as PDFInvalidObject (raw bytes), written verbatim.
    else if (obj instanceof PDFInvalidObject && /\/Type\s*\/XRef\b/.test(Buffer.from(obj.data).toString('latin1'))) ctx.delete(ref);
  }
  return doc.save({ useObjectStreams: false });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = '/work/shared/corpus/pdf/files/';
  const cases = [
    ['enc_user_libreoffice_rc4.pdf', 'openpassword'], ['enc_user_libreoffice_rc4.pdf', 'permissionpassword'],
    ['enc_user_libreoffice_rc4.pdf', 'wrong'],
    ['enc_user_aes256_r6.pdf', 'view'], ['enc_user_aes256_r6.pdf', 'master'], ['enc_user_aes256_r6.pdf', 'nope'],
    ['enc_user_pdfjs_issue6010.pdf', 'abc'],
    ['enc_owner_only_aes256.pdf', ''], ['enc_owner_only_images.pdf', ''],
    ['enc_user_pdflib_old_r2.pdf', ''], ['text_tracemonkey_14p_type1.pdf', ''],
  ];
  for (const [f, pw] of cases) {
    const bytes = readFileSync(dir + f);
    let info;
    try { info = await inspect(bytes); } catch (e) { info = 'inspect ERR ' + e.message; }
    try {
      const out = await unlock(bytes, pw);
      const plain = await PdfLib.load(out);           // upstream pdf-lib 1.17.1, no ignoreEncryption
      console.log(f, JSON.stringify(pw), JSON.stringify(info), '=> pdf-lib pages', plain.getPageCount(), 'in', bytes.length, 'out', out.length);
    } catch (e) { console.log(f, JSON.stringify(pw), JSON.stringify(info), '=> ERR', e.message.slice(0, 90)); }
  }
}
