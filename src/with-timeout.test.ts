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
