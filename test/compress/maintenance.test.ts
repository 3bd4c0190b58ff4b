// Housekeeping: interrupted compressions give their quota back exactly once, stale temporary
// uploads and expired local results are deleted.
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reserveQuota, usedThisMonth } from "../../src/auth/quota.ts";
import { expireDirectUploads, reconcileInterrupted } from "../../src/compress/maintenance.ts";
import { sweepWorkspaces } from "../../src/compress/workflow/workspace.ts";
import { createLocalStorage } from "../../src/compress/storage/local.ts";
import { subscriberWithKey } from "../helpers/compress.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let db: TestDatabase;
let work: string;
beforeAll(async () => {
  db = await createTestDatabase();
  work = await mkdtemp(path.join(tmpdir(), "housekeeping-"));
});
afterAll(async () => {
  await db?.close();
  await rm(work, { recursive: true, force: true });
});

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

describe("housekeeping", () => {
  it("releases the quota of compressions a dead process left running, once even when two instances race", async () => {
    const { subscriber, key } = await subscriberWithKey(db.prisma, { quota: 5 });
    const reservation = (await reserveQuota(db.prisma, subscriber.id, 5))!;
    await reserveQuota(db.prisma, subscriber.id, 5);
    const base = {
      subscriberId: subscriber.id,
      apiKeyId: key.id,
      month: reservation.month,
      profile: "balanced" as const,
    };
    await db.prisma.compression.create({ data: { ...base, createdAt: hoursAgo(2) } });
    await db.prisma.compression.create({ data: { ...base } }); // still within its time limit
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(2);
    const released = await Promise.all([
      reconcileInterrupted(db.prisma, hoursAgo(1)),
      reconcileInterrupted(db.prisma, hoursAgo(1)),
    ]);
    expect(released[0] + released[1]).toBe(1);
    expect(await usedThisMonth(db.prisma, subscriber.id)).toBe(1);
    expect(
      await db.prisma.compression.count({ where: { subscriberId: subscriber.id, errorCode: "interrupted" } }),
    ).toBe(1);
  });

  it("removes temporary upload directories older than the limit, and only those", async () => {
    const root = path.join(work, "uploads");
    await mkdir(path.join(root, "req-old"), { recursive: true });
    await mkdir(path.join(root, "req-new"), { recursive: true });
    await writeFile(path.join(root, "req-old", "upload.pdf"), "x");
    await utimes(path.join(root, "req-old"), hoursAgo(3), hoursAgo(3));
    expect(await sweepWorkspaces(root, 3_600_000)).toBe(1);
    expect(await readdir(root)).toEqual(["req-new"]);
  });

  it("deletes local results older than the retention period", async () => {
    const dir = path.join(work, "objects");
    const storage = await createLocalStorage(dir, null);
    const source = path.join(work, "result.pdf");
    await writeFile(source, "%PDF-1.7");
    await storage.put("oldoldoldoldoldoldold1.pdf", source, { contentType: "application/pdf", downloadName: "a.pdf" });
    await storage.put("newnewnewnewnewnewnew1.pdf", source, { contentType: "application/pdf", downloadName: "a.pdf" });
    await utimes(path.join(dir, "oldoldoldoldoldoldold1.pdf"), hoursAgo(25), hoursAgo(25));
    expect(await storage.deleteOlderThan(hoursAgo(24))).toBe(1);
    expect((await readdir(dir)).filter((f) => f.endsWith(".pdf"))).toEqual(["newnewnewnewnewnewnew1.pdf"]);
  });

  it("deletes direct uploads older than the retention period, file and row, and only those", async () => {
    const { subscriber, key } = await subscriberWithKey(db.prisma, { quota: 5 });
    const storage = await createLocalStorage(path.join(work, "uploads-objects"), null);
    const source = path.join(work, "upload.pdf");
    await writeFile(source, "%PDF-1.7");
    const rows = [
      ["staleunusedupload01.pdf", hoursAgo(30), null],
      ["freshunusedupload01.pdf", hoursAgo(1), null],
      ["staleusedupload0001.pdf", hoursAgo(30), hoursAgo(29)],
    ] as const;
    for (const [objectName, createdAt, usedAt] of rows) {
      await storage.putInput(objectName, source);
      await db.prisma.directUpload.create({
        data: {
          subscriberId: subscriber.id,
          apiKeyId: key.id,
          objectName,
          filename: "a.pdf",
          expiresAt: createdAt,
          createdAt,
          usedAt,
        },
      });
    }
    // A used upload with no job left running is deleted too: whatever its file holds was written
    // after it was used (test/compress/direct-upload-lifecycle.test.ts keeps a running job's).
    expect(await expireDirectUploads(db.prisma, storage, hoursAgo(24))).toBe(2);
    const left = await db.prisma.directUpload.findMany({ where: { subscriberId: subscriber.id } });
    expect(left.map((row) => row.objectName)).toEqual(["freshunusedupload01.pdf"]);
    expect(await storage.inputInfo("staleunusedupload01.pdf", 8)).toBeNull();
    expect(await storage.inputInfo("staleusedupload0001.pdf", 8)).toBeNull();
    expect(await storage.inputInfo("freshunusedupload01.pdf", 8)).not.toBeNull();
  });
});
