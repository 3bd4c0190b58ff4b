import { once } from "node:events";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { withTimeout } from "./with-timeout.ts";

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("withTimeout", () => {
  it("answers what the promise settles with in time", async () => {
    await expect(withTimeout(after(5, "done"), 200, () => "late")).resolves.toBe("done");
    await expect(withTimeout(Promise.reject(new Error("failed")), 200, () => "late")).rejects.toThrow("failed");
  });

  it("answers what onTimeout returns or throws once the time is up", async () => {
    await expect(withTimeout(after(200, "done"), 5, () => "late")).resolves.toBe("late");
    const slow = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("too late")), 50));
    const limited = withTimeout(slow, 5, () => {
      throw new Error("no answer in 5 ms");
    });
    await expect(limited).rejects.toThrow("no answer in 5 ms");
    // The slow promise's own rejection, after the race, is handled: nothing is left unhandled.
    await expect(slow).rejects.toThrow("too late");
  });
});

describe("withTimeout after the event loop was held up", () => {
  it("answers what arrived while the loop was blocked past the limit, not the timeout", async () => {
    // A loopback socket whose data is in the kernel before the limit, while this thread is busy (as a
    // process is when it compiles a module or a large JSON is parsed): when the loop runs again the
    // timer is due too, and timers run before I/O. The answer that was there in time must win.
    const server = net.createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const accepted = once(server, "connection") as Promise<[net.Socket]>;
    const client = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
    await once(client, "connect");
    const [peer] = await accepted;
    try {
      const answer = once(client, "data").then(([chunk]) => String(chunk));
      const limited = withTimeout(answer, 20, () => "late");
      peer.write("answer");
      const blockedUntil = performance.now() + 150;
      while (performance.now() < blockedUntil); // the loop held up past the 20 ms limit
      await expect(limited).resolves.toBe("answer");
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });

  it("still times out when nothing arrived, one turn of the loop later at most", async () => {
    const started = performance.now();
    await expect(withTimeout(new Promise<never>(() => {}), 20, () => "late")).resolves.toBe("late");
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
  });
});
