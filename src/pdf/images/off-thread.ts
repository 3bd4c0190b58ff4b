// Off the main thread (./recode-workers.ts, for the image pass, optimise.ts). A long scan is hundreds of JPEG page images, each
// some 300 ms of decoding, segmenting, checking and encoding, three quarters of it JavaScript and
// WebAssembly on one thread: an engine process so used one core of several. Its JPEG images are
// also recoded on worker threads (one per core beside the main thread), each handed an image's
// stored bytes and what its recoding depends on (plain data) while it has room for one
// (recode-workers.ts), and answering with the replacement the main thread writes.
import { PDFContext, PDFDict, PDFName, PDFObjectParser, PDFRawStream } from "@cantoo/pdf-lib";
import type { JpegEffort } from "./codecs.ts";
import { filtersOf, N, numberOf } from "../streams/filters.ts";
import type { ImageSettings } from "../shared/profiles.ts";
import type { JobBounds } from "../shared/bounded-jobs.ts";
import { createRecodeWorkers, WorkerUnavailable } from "./recode-workers.ts";
import type { RecodeWorkers } from "./recode-workers.ts";
import type { ImageInfo, Source } from "./samples.ts";
import type { Replacement } from "./candidates.ts";
import { recodeImage } from "./recode.ts";
import type { ImageToRecode } from "./recode.ts";
import type { DetachedRecode, DetachedReplacement } from "./recode-workers.ts";

/** JPEG images (their pixels) a document must have for worker threads to be worth starting. */
const WORKERS_MIN_PIXELS = 40_000_000;

export function recodeWorkersFor(
  jobs: readonly { stream: PDFRawStream }[],
  bounds: JobBounds,
): RecodeWorkers | undefined {
  // The main thread recodes too: of the jobs in flight, one is its own.
  const threads = Math.min(bounds.workerThreads ?? 0, bounds.concurrency - 1);
  if (threads < 1) return undefined;
  let pixels = 0;
  for (const { stream } of jobs) {
    try {
      if (filtersOf(stream.dict)?.at(-1) !== "DCTDecode") continue;
      pixels += (numberOf(stream.dict.lookup(N.Width)) ?? 0) * (numberOf(stream.dict.lookup(N.Height)) ?? 0);
    } catch {
      // A dictionary that is not what it seems: that image is left alone when recoded.
    }
  }
  return pixels >= WORKERS_MIN_PIXELS ? createRecodeWorkers(threads) : undefined;
}

/** The entries of an image's dictionary its recoding reads (its filters), written out, if they are direct. */
function filterEntries(dict: PDFDict): string | undefined {
  const entries: string[] = [];
  for (const key of [N.Filter, N.DecodeParms]) {
    const value = dict.lookup(key);
    if (value === undefined) continue;
    const text = value.toString();
    // A reference inside (rare) would need the document: such an image is recoded here.
    if (/\bR\b/.test(text)) return undefined;
    entries.push(`${key.toString()} ${text}`);
  }
  return `<< ${entries.join(" ")} >>`;
}

/** A JPEG image's recoding as plain data for a worker, or undefined when it must stay here. */
export function detachJpeg(
  image: ImageToRecode,
  source: Extract<Source, { kind: "jpeg" }>,
  settings: ImageSettings,
  effort: JpegEffort,
): DetachedRecode | undefined {
  const { stream, info } = image;
  const dict = filterEntries(stream.dict);
  if (!dict || info.colour.kind !== "direct") return undefined;
  const { kind, components, ranges, rgbLike } = info.colour;
  return {
    contents: stream.contents,
    // The JPEG is most often the stream's data itself: it crosses once.
    jpeg: source.data === stream.contents ? undefined : source.data,
    header: source.header,
    dict,
    info: { ...info, colour: { kind, components, ranges, rgbLike } },
    mask: image.mask,
    masked: image.masked,
    placement: image.placement,
    fixedSize: image.fixedSize,
    settings,
    effort,
  };
}

/** A worker's replacement for the image; where no worker could take it, `here`'s. */
export async function recodeOffThread(
  workers: RecodeWorkers,
  request: DetachedRecode,
  here: () => Promise<Replacement | undefined>,
): Promise<Replacement | undefined> {
  let recoded: DetachedReplacement | undefined;
  try {
    recoded = await workers.recode(request);
  } catch (error) {
    if (error instanceof WorkerUnavailable) return here();
    throw error;
  }
  if (!recoded) return undefined;
  const { filter, ...rest } = recoded;
  return { ...rest, filter: PDFName.of(filter) };
}

/** Runs in a worker (./recode-worker.ts): the image rebuilt from plain data, then recodeImage. */
export async function recodeDetached(request: DetachedRecode): Promise<DetachedReplacement | undefined> {
  const context = PDFContext.create();
  const dict = PDFObjectParser.forBytes(new TextEncoder().encode(request.dict), context).parseObject();
  if (!(dict instanceof PDFDict)) throw new TypeError("recodeDetached: the filters are not a dictionary");
  const stream = PDFRawStream.of(dict, request.contents);
  // The colour space object is only written when an image changes colour space, which a JPEG's
  // recoding does not (its working pixels are never recoloured): a name stands in for it.
  const info: ImageInfo = { ...request.info, colour: { ...request.info.colour, object: PDFName.of("DeviceRGB") } };
  const source: Source = { kind: "jpeg", data: request.jpeg ?? request.contents, header: request.header };
  const { mask, masked, placement, fixedSize } = request;
  const image: ImageToRecode = { stream, info, mask, masked, placement, fixedSize };
  const replacement = await recodeImage(image, source, request.settings, request.effort);
  if (!replacement) return undefined;
  const { filter, colour, indexed, ...rest } = replacement;
  if (colour || indexed) throw new Error("recodeDetached: a JPEG's recoding changed its colour space");
  return { ...rest, filter: filter.asString().slice(1) };
}
