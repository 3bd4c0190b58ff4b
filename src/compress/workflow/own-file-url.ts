// A file_url this service signed itself (issue 44 item 5: "https, or a URL the service signed
// itself"): a result's download url (a previous compression's, from its answer or GET
// /v1/compressions/{id}), a download-once url (retention 0), or on local storage a direct upload's
// upload_url. Such an address is recognised by its shape (the API's origin and a signed path, or
// the bucket's V4 signed url), its signature checked as the storage checks it, and its object read
// straight from storage, never fetched over HTTP: on the embedded defaults the address is this
// machine's, which the address policy refuses for any other URL. The object must be the key's
// account's; a signature that does not hold is 400 invalid_file_url, another account's object 400
// file_url_forbidden, a deleted one 422 file_url_unreachable (docs/compression-api.md, "Files by
// URL"). The limits are a fetched file's: at most maxBytes, %PDF- in the first 1024 bytes.
import { HttpError, retryAfter } from "../../errors.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { downloadName } from "../compression.ts";
import type { ObjectStorage, SignedObject } from "../storage/storage.ts";
import { resultOfObject } from "./compressions.ts";
import { uploadOfObject } from "./direct-uploads.ts";
import {
  forbidden,
  invalidFileUrl,
  notPdf,
  receiveStream,
  tooLarge,
  unreachable,
  type FetchedFile,
  type FileUrlPolicy,
} from "./file-url.ts";
import { hasPdfHeader, SNIFF_BYTES } from "./pdf-signature.ts";
import { onceObject, type ResultDeps } from "./results.ts";

/**
 * A call to the storage (a signature computed again, an object opened or copied): a failure of the
 * storage itself is 503 storage_unavailable with Retry-After, as a deletion's is; the request's own
 * refusals (HttpError) pass as they are.
 */
async function fromStorage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw Object.assign(
      new HttpError(
        503,
        "storage_unavailable",
        "The storage of this service's results could not be reached to read file_url; nothing was charged. Retry shortly.",
        retryAfter(5),
      ),
      { cause: error },
    );
  }
}

export interface OwnUrlDeps {
  prisma: PrismaClient;
  storage: ObjectStorage;
  config: ResultDeps["config"];
}

/**
 * The object a file_url names when it is an address this service signed (origin: the API's public
 * origin, as the address was signed with); null when it is any other URL, to fetch. A signed address
 * whose signature does not hold, or that has expired, is refused: 400 invalid_file_url.
 */
export async function ownObject(deps: OwnUrlDeps, raw: string, origin: string): Promise<SignedObject | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const verdict = onceObject(deps, url, origin) ?? (await fromStorage(() => deps.storage.signedObject(url, origin)));
  if (verdict === "invalid") {
    throw invalidFileUrl("is an address this service signed, but its signature does not verify (was it altered?)");
  }
  if (verdict === "expired") {
    throw invalidFileUrl(
      "is an address this service signed that has expired; read the compression again for a new url",
    );
  }
  return verdict;
}

/** Reads an object of the account's (ownObject's) into dest, with a fetched file's limits; its size and name. */
export async function readOwnObject(
  deps: OwnUrlDeps,
  object: SignedObject,
  subscriberId: string,
  dest: string,
  policy: Pick<FileUrlPolicy, "maxBytes" | "idleTimeoutMs">,
  signal: AbortSignal,
): Promise<FetchedFile> {
  const notOurs = () => forbidden("names a file of another account");
  if (object.kind === "input") {
    const upload = await uploadOfObject(deps.prisma, object.name);
    if (upload?.subscriberId !== subscriberId) throw notOurs();
    const info = await fromStorage(() => deps.storage.inputInfo(object.name, SNIFF_BYTES));
    if (!info) throw unreachable("nothing has been uploaded to this upload_url yet");
    if (info.size > policy.maxBytes) throw tooLarge(policy.maxBytes);
    if (info.size === 0 || !hasPdfHeader(info.head)) throw notPdf();
    await fromStorage(() => deps.storage.fetchInput(object.name, dest));
    return { size: info.size, filename: upload.filename };
  }
  const result = await resultOfObject(deps.prisma, object.name);
  if (result?.subscriberId !== subscriberId) throw notOurs();
  const opened = result.deletedAt ? null : await fromStorage(() => deps.storage.openResult(object.name));
  if (!opened) throw unreachable("the result it names has been deleted");
  const size = await receiveStream(opened.stream, opened.size, dest, policy, signal);
  return { size, filename: downloadName(result.filename ?? result.job?.filename ?? "document.pdf", result.kind) };
}
