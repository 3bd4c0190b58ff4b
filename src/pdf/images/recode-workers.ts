// Worker threads that recode a document's JPEG images off the main thread (./optimise.ts says
// which and why; ./recode-worker.ts is what each runs). A request is plain data: the image's
// stored bytes (copied out of the document's buffer, and the copy moved) and what its
// recoding depends on. A recoding that throws there fails its request (the image stays as it
// was, as on the main thread); a thread that cannot start or dies fails its requests with
// WorkerUnavailable, and the caller recodes those images itself.
import { Worker } from "node:worker_threads";
import type { JpegEffort, JpegHeader } from "./codecs.ts";
import type { DirectColour } from "../shared/colour.ts";
import type { Placement } from "../shared/placement.ts";
import type { ImageSettings } from "../shared/profiles.ts";
import type { ImageInfo } from "./samples.ts";
import type { Replacement } from "./candidates.ts";

/** A JPEG image's recoding as a worker gets it: plain data (./recode-worker.ts). */
export interface DetachedRecode {
  /** The stream's stored bytes. */
  contents: Uint8Array;
  /** The JPEG inside them, when other filters wrap it. */
  jpeg: Uint8Array | undefined;
  header: JpegHeader;
  /** The stream's /Filter and /DecodeParms, as a dictionary in PDF syntax. */
  dict: string;
  info: Omit<ImageInfo, "colour"> & { colour: Omit<DirectColour, "object"> };
  mask: boolean;
  masked: boolean;
  placement: Placement | undefined;
  fixedSize: boolean;
  settings: ImageSettings;
  effort: JpegEffort;
}

/** A worker's replacement: that of a JPEG, whose colour space stays (its filter by name). */
export type DetachedReplacement = Omit<Replacement, "filter" | "colour" | "indexed"> & { filter: string };

/** The request was not recoded: no thread was running, or its thread died. */
export class WorkerUnavailable extends Error {}

export interface RecodeWorkers {
  /** Threads started. */
  readonly threads: number;
  /** Whether a running thread has room for another image (THREAD_QUEUE of them). */
  hasRoom(): boolean;
  /** The image's replacement, or undefined when it is to stay as it is. */
  recode(request: DetachedRecode): Promise<DetachedReplacement | undefined>;
  /** Ends the threads (requests still running fail). */
  close(): Promise<void>;
}

/**
 * A worker's young generation, in MB. The engine process's is small (2 MB semi-spaces: its
 * objects live for the whole job, and small documents keep their peak low); a worker only
 * recodes page images, whose working objects are short-lived: on the 100 MB scan-like file 16
 * and 8 MB cost 7 and 14 % more CPU than 48, for no lower peak.
 */
const YOUNG_GENERATION_MB = 48;

/**
 * Images a thread holds at once: the one it recodes and the next. Images are handed out by the
 * main thread, between its own pieces of work (a page's segmentation is some 100 ms of it): a
 * thread given one image at a time sat idle that long after each.
 */
const THREAD_QUEUE = 2;

type Reply = { id: number; result: DetachedReplacement | undefined } | { id: number; error: string };

interface Thread {
  worker: Worker;
  pending: Map<number, { resolve: (r: DetachedReplacement | undefined) => void; reject: (e: Error) => void }>;
  alive: boolean;
}

function startThread(): Thread {
  const worker = new Worker(new URL("./recode-worker.ts", import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    stdout: false,
    stderr: false,
  });
  const thread: Thread = { worker, pending: new Map(), alive: true };
  const failAll = (error: Error) => {
    thread.alive = false;
    for (const { reject } of thread.pending.values()) reject(error);
    thread.pending.clear();
  };
  worker.on("message", (reply: Reply) => {
    const waiting = thread.pending.get(reply.id);
    if (!waiting) return;
    thread.pending.delete(reply.id);
    if ("error" in reply) waiting.reject(new Error(reply.error));
    else waiting.resolve(reply.result);
  });
  worker.on("error", (error) => failAll(new WorkerUnavailable(`image worker failed: ${error.message}`)));
  worker.on("exit", (code) => failAll(new WorkerUnavailable(`image worker exited (${code})`)));
  return thread;
}

export function createRecodeWorkers(count: number): RecodeWorkers {
  const threads = Array.from({ length: count }, startThread);
  let nextId = 0;
  return {
    threads: count,
    hasRoom: () => threads.some((thread) => thread.alive && thread.pending.size < THREAD_QUEUE),
    recode(request) {
      const alive = threads.filter((thread) => thread.alive);
      if (alive.length === 0) return Promise.reject(new WorkerUnavailable("no image worker is running"));
      // The least busy thread: images differ a great deal in size.
      const thread = alive.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const id = nextId++;
      // Copies of the bytes, moved to the worker: the document's buffer is never handed over
      // (and posting a view would copy the whole buffer behind it).
      const contents = new Uint8Array(request.contents);
      const jpeg = request.jpeg && new Uint8Array(request.jpeg);
      const moved = jpeg ? [contents.buffer, jpeg.buffer] : [contents.buffer];
      return new Promise((resolve, reject) => {
        thread.pending.set(id, { resolve, reject });
        thread.worker.postMessage({ id, request: { ...request, contents, jpeg } }, moved);
      });
    },
    async close() {
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
    },
  };
}
