// One of the image worker threads (./recode-workers.ts): recodes the JPEG images it is sent,
// one at a time, and answers with their replacements, whose bytes it moves back.
import { parentPort } from "node:worker_threads";
import { recodeDetached } from "./off-thread.ts";
import type { DetachedRecode, DetachedReplacement } from "./recode-workers.ts";

/**
 * The replacement's bytes, each copied into an ArrayBuffer of its own so that it can be moved
 * (sharp's output buffers are marked untransferable, and small ones share a pool). They are small
 * beside the image: the encoded data.
 */
function movable(result: DetachedReplacement): { result: DetachedReplacement; moved: ArrayBuffer[] } {
  const moved: ArrayBuffer[] = [];
  const own = (bytes: Uint8Array) => {
    const copy = new Uint8Array(bytes);
    moved.push(copy.buffer);
    return copy;
  };
  const { layered } = result;
  if (!layered) return { result: { ...result, data: own(result.data) }, moved };
  const background =
    "jpeg" in layered.background ? { ...layered.background, jpeg: own(layered.background.jpeg) } : layered.background;
  const mask = { ...layered.mask, data: own(layered.mask.data) };
  return { result: { ...result, layered: { ...layered, mask, background } }, moved };
}

async function answer(id: number, request: DetachedRecode): Promise<void> {
  try {
    const result = await recodeDetached(request);
    if (!result) return parentPort!.postMessage({ id, result });
    const { result: reply, moved } = movable(result);
    parentPort!.postMessage({ id, result: reply }, moved);
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}

parentPort!.on("message", ({ id, request }: { id: number; request: DetachedRecode }) => void answer(id, request));
