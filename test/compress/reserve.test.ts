// Reserving a compression: the quota unit and the record accounting for it are written together
// (src/compress/compression.ts reserve), so no failure between them leaves a unit used without a
// record that the failure path or the housekeeping would give back.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usedThisMonth } from "../../src/auth/quota.ts";
import { reserve } from "../../src/compress/compression.ts";
import { HttpError } from "../../src/errors.ts";
import { subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe("reserve", () => {
  it("writes the unit and the record together", async () => {
    const { subscriber, key } = await subscriberWithKey(db.prisma, { quota: 2 });
    const chargeable = { id: key.id, subscriberId: subscriber.id, monthlyQuota: 2 };
    const reserved = await reserve(db.prisma, chargeable);
    expect(reserved).toMatchObject({ subscriberId: subscriber.id, used: 1, limit: 2 });
    expect(await db.prisma.compression.count({ where: { id: reserved.id, status: "running" } })).toBe(1);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });

  it("uses no unit when the record cannot be written", async () => {
    const { subscriber } = await subscriberWithKey(db.prisma, { quota: 2 });
    // A key that does not exist: the record's foreign key refuses it after the unit was taken.
    const chargeable = { id: randomUUID(), subscriberId: subscriber.id, monthlyQuota: 2 };
    await expect(reserve(db.prisma, chargeable)).rejects.toThrow();
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);
    expect(await db.prisma.compression.count({ where: { subscriberId: subscriber.id } })).toBe(0);
  });

  it("refuses past the quota with 402 and writes nothing", async () => {
    const { subscriber, key } = await subscriberWithKey(db.prisma, { quota: 1 });
    const chargeable = { id: key.id, subscriberId: subscriber.id, monthlyQuota: 1 };
    const results = await Promise.allSettled([reserve(db.prisma, chargeable), reserve(db.prisma, chargeable)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.reason).toBeInstanceOf(HttpError);
    expect(refused?.reason).toMatchObject({ status: 402, code: "quota_exceeded" });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(await db.prisma.compression.count({ where: { subscriberId: subscriber.id } })).toBe(1);
  });
});
