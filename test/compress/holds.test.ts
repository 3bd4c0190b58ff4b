// Who holds a reserved unit (src/compress/holds.ts) and what a restart clears (boot.ts), against
// the database: a lapsed hold is released and a renewed one is not; renewals drop what is settled
// or handed to the queue; succeed takes back a request's record released while its process was cut
// off, not a job's; settle calls are retried through a failing write; a restart releases a dead
// process's units, ends its jobs' leases and removes its files, and leaves a live one's alone.
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentMonth, usedThisMonth } from "../../src/auth/quota.ts";
import { deadBoots, recoverDeadBoots } from "../../src/compress/boot.ts";
import { fail, reserve, succeed, withRetries } from "../../src/compress/compression.ts";
import { BOOT_ID, heldHere, renewHolds } from "../../src/compress/holds.ts";
import { reconcileInterrupted } from "../../src/compress/maintenance.ts";
import { createLocalStorage, type LocalStorage } from "../../src/compress/storage/local.ts";
import { subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let db: TestDatabase;
let work: string;
let storage: LocalStorage;
beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "holds-"));
  storage = await createLocalStorage(path.join(work, "objects"), null);
});
afterAll(async () => {
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

const secondsAgo = (s: number) => new Date(Date.now() - s * 1000);
const outcome = (objectName: string) => ({
  profile: "balanced" as const,
  originalSize: 10,
  compressedSize: 5,
  objectName,
});

async function chargeable(quota = 10) {
  const { subscriber, key } = await subscriberWithKey(db.prisma, { quota });
  return { subscriber, key: { id: key.id, subscriberId: subscriber.id, monthlyQuota: quota } };
}

async function jobFor(compressionId: string, subscriberId: string, apiKeyId: string, lockedBy: string | null) {
  return db.prisma.compressionJob.create({
    data: {
      subscriberId,
      apiKeyId,
      compressionId,
      profile: "balanced",
      inputObject: "holdsjobinput0000001.pdf",
      filename: "a.pdf",
      originalSize: 10,
      apiOrigin: "http://127.0.0.1",
      status: lockedBy ? "running" : "queued",
      lockedBy,
      lockedUntil: lockedBy ? new Date(Date.now() + 600_000) : null,
    },
  });
}

/** A pid that ran and is gone. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid;

describe("holds", () => {
  it("records the boot id and a hold, releases a record whose hold lapsed, and not one still held", async () => {
    const { subscriber, key } = await chargeable();
    const lapsed = await reserve(db.prisma, key);
    const held = await reserve(db.prisma, key);
    const record = await db.prisma.compression.findUniqueOrThrow({ where: { id: held.id } });
    expect(record.bootId).toBe(BOOT_ID);
    expect(record.heldUntil!.getTime()).toBeGreaterThan(Date.now());
    await db.prisma.compression.update({ where: { id: lapsed.id }, data: { heldUntil: secondsAgo(1) } });

    expect(await reconcileInterrupted(db.prisma, secondsAgo(3600))).toBe(1);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    const after = await db.prisma.compression.findUniqueOrThrow({ where: { id: lapsed.id } });
    expect(after).toMatchObject({ status: "failed", errorCode: "interrupted" });
    await fail(db.prisma, held, "test_over");
  });

  it("renews what is in flight, and drops what was settled or handed to the queue", async () => {
    const { subscriber, key } = await chargeable();
    const flying = await reserve(db.prisma, key);
    const queued = await reserve(db.prisma, key);
    await jobFor(queued.id, subscriber.id, key.id, null);
    await db.prisma.compression.updateMany({
      where: { id: { in: [flying.id, queued.id] } },
      data: { heldUntil: secondsAgo(5) },
    });
    expect(heldHere().has(queued.id)).toBe(true);
    await renewHolds(db.prisma);
    expect(heldHere().has(flying.id)).toBe(true);
    expect(heldHere().has(queued.id)).toBe(false);
    const renewed = await db.prisma.compression.findUniqueOrThrow({ where: { id: flying.id } });
    expect(renewed.heldUntil!.getTime()).toBeGreaterThan(Date.now());
    await fail(db.prisma, flying, "test_over");
    expect(heldHere().has(flying.id)).toBe(false);
  });

  it("lets succeed take back a request's record released as interrupted, charged again; not a job's", async () => {
    const { subscriber, key } = await chargeable();
    const request = await reserve(db.prisma, key);
    const job = await reserve(db.prisma, key);
    await jobFor(job.id, subscriber.id, key.id, null);
    for (const reserved of [request, job]) await fail(db.prisma, reserved, "interrupted");
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(0);

    await succeed(db.prisma, request, outcome("holdsresult000000001.pdf"), { maxSeconds: 86_400 });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    // A retry of a write whose answer was lost: the same result, accepted once.
    await succeed(db.prisma, request, outcome("holdsresult000000001.pdf"), { maxSeconds: 86_400 });
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    await expect(succeed(db.prisma, job, outcome("holdsresult000000002.pdf"), { maxSeconds: 86_400 })).rejects.toThrow(
      /no longer running/,
    );
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
  });

  it("retries a settle write that fails, a bounded number of times", async () => {
    let calls = 0;
    const flaky = () => (++calls < 3 ? Promise.reject(new Error("connection cut")) : Promise.resolve("written"));
    expect(await withRetries(flaky, [1, 1, 1])).toBe("written");
    expect(calls).toBe(3);
    calls = 0;
    await expect(withRetries(() => Promise.reject(new Error(`down ${++calls}`)), [1, 1])).rejects.toThrow("down 3");
  });
});

describe("a restart after a kill", () => {
  it("releases a dead process's units, ends its jobs' leases, removes its files; leaves a live one's", async () => {
    const root = path.join(work, "uploads");
    await mkdir(root, { recursive: true });
    const { subscriber, key } = await chargeable();
    const dead = { bootId: "00000000-0000-4000-8000-00000000dead", pid: deadPid() };
    const live = { bootId: "00000000-0000-4000-8000-0000000a11fe", pid: process.ppid };
    const month = currentMonth();
    const base = { subscriberId: subscriber.id, apiKeyId: key.id, month, profile: "balanced" as const };
    const later = new Date(Date.now() + 600_000);
    const records = [];
    for (const owner of [dead, live]) {
      await writeFile(path.join(root, `.boot-${owner.bootId}`), `${owner.pid}\n`);
      await mkdir(path.join(root, `req-${owner.bootId}-abc123`));
      await writeFile(path.join(work, "objects", "inputs", `holdsinput00000001.pdf.${owner.bootId}.0a0b.part`), "%PDF");
      records.push(await db.prisma.compression.create({ data: { ...base, bootId: owner.bootId, heldUntil: later } }));
      // An Idempotency-Key claimed by a request in flight in that process.
      await db.prisma.idempotencyKey.create({
        data: {
          apiKeyId: key.id,
          key: `claimed-by-${owner.bootId}`,
          bootId: owner.bootId,
          lockedUntil: later,
          expiresAt: later,
        },
      });
    }
    await db.prisma.quotaUsage.create({ data: { subscriberId: subscriber.id, month, used: 2 } });
    const jobRecord = await db.prisma.compression.create({ data: { ...base, bootId: dead.bootId, heldUntil: later } });
    const job = await jobFor(jobRecord.id, subscriber.id, key.id, `${dead.bootId}:0a0b0c0d`);

    expect(await deadBoots(root)).toEqual([dead.bootId]);
    const recovery = await recoverDeadBoots(db.prisma, root, storage);
    expect(recovery).toEqual({ deadBoots: [dead.bootId], released: 1, jobs: 1, claims: 1, files: 2 });
    const claims = await db.prisma.idempotencyKey.findMany({ where: { apiKeyId: key.id }, select: { bootId: true } });
    expect(claims).toEqual([{ bootId: live.bootId }]);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    const [killed, alive] = records;
    expect((await db.prisma.compression.findUniqueOrThrow({ where: { id: killed!.id } })).status).toBe("failed");
    expect((await db.prisma.compression.findUniqueOrThrow({ where: { id: alive!.id } })).status).toBe("running");
    // The job's record is the queue's: its lease ends now, for the next claim to take it over.
    expect((await db.prisma.compression.findUniqueOrThrow({ where: { id: jobRecord.id } })).status).toBe("running");
    const freed = await db.prisma.compressionJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(freed.lockedUntil!.getTime()).toBeLessThanOrEqual(Date.now());

    expect((await readdir(root)).sort()).toEqual(
      [`.boot-${BOOT_ID}`, `.boot-${live.bootId}`, `req-${live.bootId}-abc123`].sort(),
    );
    const parts = (await readdir(path.join(work, "objects", "inputs"))).filter((name) => name.endsWith(".part"));
    expect(parts).toEqual([`holdsinput00000001.pdf.${live.bootId}.0a0b.part`]);
  });
});
