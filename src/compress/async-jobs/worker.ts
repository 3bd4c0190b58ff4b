// The worker of asynchronous jobs, run by every instance with COMPRESS_JOB_WORKERS > 0: it claims
// due jobs (queue.ts), runs each through the lifecycle of one compression (compression.ts: run →
// store → succeed | fail and release once) in the isolated engine, and sends the webhooks of jobs
// that ended. It polls the database every second, and is woken at once by a job accepted here.
//
// Failures: the file's own (422: damaged, encrypted, past its time limit) end the job at once; a
// busy engine puts it back without counting the attempt; anything else (storage, database) is
// retried with backoff until max_attempts. A worker that dies leaves its lease to expire, and the
// next claim runs the job again; its quota unit was reserved once, at acceptance, and a result
// already recorded is not produced twice (the compression's own status says so).
import { randomUUID } from "node:crypto";
import type { Config } from "../../config/env.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { HttpError } from "../../errors.ts";
import type { Logger } from "../../logger.ts";
import * as compression from "../compression.ts";
import type { EngineRunner } from "../compression.ts";
import { BOOT_ID } from "../holds.ts";
import type { ObjectStorage } from "../storage/storage.ts";
import * as queue from "./queue.ts";
import type { ClaimedJob } from "./queue.ts";
import { progressWriter } from "./progress.ts";
import { jobResource, WITH_REPORT } from "./resource.ts";
import type { CompressionReportBody } from "../report.ts";
import { produceFromStorage } from "../workflow/produce.ts";
import { maxRetentionSeconds } from "../workflow/results.ts";
import { backoffMs, callWebhook, MAX_ATTEMPTS, webhookBody, webhookSecretState } from "./webhooks.ts";
import { guarded } from "../../callbacks.ts";

export interface WorkerDeps {
  config: Config;
  prisma: PrismaClient;
  storage: ObjectStorage;
  runner: EngineRunner;
  logger: Logger;
  /** How often the database is asked for due work. Default 1000 ms. */
  pollMs?: number;
  /** The first retry's delay of a failed job attempt and of a webhook call (then x4). Default 10 s. */
  retryBaseMs?: number;
}

export interface JobWorker {
  readonly id: string;
  /** Looks for due work now (a job was just accepted, or a webhook queued). */
  wake(): void;
  /** Stops claiming; running jobs are cut off and put back in the queue for another worker. */
  stop(): Promise<void>;
  /**
   * Stops everything without a word to the database, as a killed process would: the jobs it held
   * keep their lease until it expires (tests of a worker that dies).
   */
  abandon(): void;
}

/** A worker's id: its process's boot id, then its own (a process may run more than one worker). */
export const workerIdOf = (bootId: string) => `${bootId}:${randomUUID().slice(0, 8)}`;

interface WorkerState {
  readonly deps: WorkerDeps;
  readonly id: string;
  readonly slots: number;
  readonly running: Map<string, AbortController>;
  readonly abandon: AbortController;
  stopped: boolean;
  polling: boolean;
  sending: boolean;
}

export function startJobWorker(deps: WorkerDeps, slots = deps.config.jobs.workers): JobWorker {
  const state: WorkerState = {
    deps,
    // Led by the boot id: a restart frees the leases of its dead predecessor's jobs at once (boot.ts).
    id: workerIdOf(BOOT_ID),
    slots,
    running: new Map(),
    abandon: new AbortController(),
    stopped: false,
    polling: false,
    sending: false,
  };
  const timer = setInterval(
    guarded("async-jobs", () => poll(state)),
    deps.pollMs ?? 1000,
  );
  timer.unref();
  poll(state);
  return {
    id: state.id,
    wake: () => poll(state),
    stop: async () => {
      clearInterval(timer);
      if (state.abandon.signal.aborted) return; // abandoned: nothing of it is waited for
      state.stopped = true;
      for (const cancel of state.running.values()) cancel.abort(new Error("the worker stopped"));
      while (state.running.size > 0 || state.polling || state.sending) await new Promise((r) => setTimeout(r, 20));
    },
    abandon: () => {
      clearInterval(timer);
      state.stopped = true;
      state.abandon.abort();
    },
  };
}

/** Claims jobs while slots are free, and sends due webhooks; never two polls at once. */
function poll(state: WorkerState): void {
  if (state.stopped) return;
  if (!state.polling && state.slots > 0) {
    state.polling = true;
    void claimWhileFree(state).finally(() => (state.polling = false));
  }
  if (!state.sending) {
    state.sending = true;
    void sendDueWebhooks(state).finally(() => (state.sending = false));
  }
}

async function claimWhileFree(state: WorkerState): Promise<void> {
  const { prisma, config, logger } = state.deps;
  try {
    while (!state.stopped && state.running.size < state.slots) {
      const job = await queue.claim(prisma, state.id, config.jobs.leaseMs);
      if (!job) return;
      const cancel = new AbortController();
      state.running.set(job.id, cancel);
      void processJob(state, job, cancel).finally(() => {
        state.running.delete(job.id);
        poll(state);
      });
    }
  } catch (error) {
    logger.warn({ err: error }, "could not claim compression jobs; retrying at the next poll");
  }
}

/** Renews the job's lease every third of it; aborts `cancel` when the lease is lost. */
function keepLease(state: WorkerState, job: ClaimedJob, cancel: AbortController): () => void {
  const { prisma, config, logger } = state.deps;
  const timer: NodeJS.Timeout = setInterval(
    guarded("async-jobs", () => {
      if (state.abandon.signal.aborted) return clearInterval(timer);
      queue.renewLease(prisma, job, config.jobs.leaseMs).then(
        (held) => {
          if (!held) cancel.abort(new LeaseLost());
        },
        (error: unknown) => logger.warn({ err: error, jobId: job.id }, "could not renew a job's lease"),
      );
    }),
    config.jobs.leaseMs / 3,
  );
  timer.unref();
  return () => clearInterval(timer);
}

class LeaseLost extends Error {
  constructor() {
    super("the job's lease passed to another worker");
    this.name = "LeaseLost";
  }
}

async function processJob(state: WorkerState, job: ClaimedJob, cancel: AbortController): Promise<void> {
  const { logger, prisma } = state.deps;
  if (job.attempts > job.maxAttempts || job.compressionStatus !== "running") return settleUnrun(state, job);
  const stopLease = keepLease(state, job, cancel);
  const signal = AbortSignal.any([cancel.signal, state.abandon.signal]);
  const progress = progressWriter(prisma, job, (error) =>
    logger.warn({ err: error, jobId: job.id }, "could not record a job's progress"),
  );
  try {
    // fetch the input → run → store, in a workspace of the attempt's own (the workflow's produce.ts).
    const work = { operation: { kind: "compress" as const }, options: job.options, uploadedName: job.filename };
    const result = await produceFromStorage(state.deps, job.inputObject, work, signal, (p) => progress.report(p));
    await progress.settled();
    if (state.abandon.signal.aborted) return;
    await settleSucceeded(state, job, result);
  } catch (error) {
    if (state.abandon.signal.aborted) return;
    await settleFailure(state, job, error, cancel.signal.reason);
  } finally {
    stopLease();
    logger.debug({ jobId: job.id, attempt: job.attempts }, "compression job attempt over");
  }
}

const reservedOf = (job: ClaimedJob) => ({ id: job.compressionId, subscriberId: job.subscriberId, month: job.month });

async function settleSucceeded(
  state: WorkerState,
  job: ClaimedJob,
  result: { compressedSize: number; objectName: string; pages: number; report?: CompressionReportBody },
) {
  const { prisma, storage } = state.deps;
  // The compression first: once it says succeeded, a worker that takes this job over after a crash
  // here finishes the job from it instead of compressing again (settleUnrun).
  const { pages, ...stored } = result; // the pages go to the job's progress
  await compression.succeed(
    prisma,
    { id: job.compressionId },
    {
      profile: job.options.profile,
      originalSize: job.originalSize,
      ...stored,
    },
    { maxSeconds: maxRetentionSeconds(state.deps.config) },
  );
  const { compressedSize, objectName } = stored; // the report stays with the compression record
  if (await queue.finishSucceeded(prisma, job, { compressedSize, objectName, pages })) {
    await storage.deleteInput(job.inputObject).catch(() => undefined);
    await queueWebhook(state, job);
  }
}

/** Why an attempt ended, decided: the file's fault ends the job, a busy engine or a fault of ours retries. */
async function settleFailure(state: WorkerState, job: ClaimedJob, error: unknown, cancelReason: unknown) {
  const { prisma, logger } = state.deps;
  if (cancelReason instanceof LeaseLost) return; // another worker has the job now
  if (state.stopped) {
    // Shutdown: the job goes back for another instance, this attempt not counted.
    await queue.retryLater(prisma, job, 0, false);
    return;
  }
  if (error instanceof HttpError && error.code === "busy") {
    const seconds = Number(error.headers["Retry-After"] ?? 1);
    await queue.retryLater(prisma, job, seconds * 1000, false);
    return;
  }
  if (error instanceof HttpError && error.status < 500) {
    await settleFailed(state, job, { code: error.code, message: error.message });
    return;
  }
  logger.warn({ err: error, jobId: job.id, attempt: job.attempts }, "a compression job attempt failed");
  if (job.attempts < job.maxAttempts) {
    await queue.retryLater(prisma, job, backoffMs(job.attempts, state.deps.retryBaseMs ?? 10_000), true);
    return;
  }
  await settleFailed(state, job, {
    code: "processing_failed",
    message: `Processing failed ${job.attempts} times; the file was not compressed and not charged.`,
  });
}

/** Ends the job failed, and its compression with it: the unit is released once. */
async function settleFailed(state: WorkerState, job: ClaimedJob, error: { code: string; message: string }) {
  const { prisma, storage } = state.deps;
  if (!(await queue.finishFailed(prisma, job, error))) return;
  await compression.fail(prisma, reservedOf(job), error.code);
  await storage.deleteInput(job.inputObject).catch(() => undefined);
  await queueWebhook(state, job);
}

/**
 * A job claimed that must not run: its attempts are used up (its workers died each time), or its
 * compression already ended (a worker died between recording it and finishing the job).
 */
async function settleUnrun(state: WorkerState, job: ClaimedJob) {
  const { prisma, storage } = state.deps;
  const record = await prisma.compression.findUniqueOrThrow({ where: { id: job.compressionId } });
  if (record.status === "succeeded" && record.objectName && record.compressedSize !== null) {
    const result = { compressedSize: Number(record.compressedSize), objectName: record.objectName };
    if (await queue.finishSucceeded(prisma, job, result)) {
      await storage.deleteInput(job.inputObject).catch(() => undefined);
      await queueWebhook(state, job);
    }
    return;
  }
  if (record.status === "failed") {
    const code = record.errorCode ?? "processing_failed";
    if (await queue.finishFailed(prisma, job, { code, message: "The compression failed." }))
      await queueWebhook(state, job);
    return;
  }
  await settleFailed(state, job, {
    code: "interrupted",
    message: `The job was interrupted ${job.maxAttempts} times; the file was not compressed and not charged.`,
  });
}

async function queueWebhook(state: WorkerState, job: ClaimedJob) {
  if (!job.callbackUrl) return;
  await state.deps.prisma.webhookDelivery.create({ data: { jobId: job.id, url: job.callbackUrl } });
  poll(state);
}

/** Sends every due webhook delivery (claimed like jobs); reschedules those not answered 2xx. */
async function sendDueWebhooks(state: WorkerState): Promise<void> {
  const { prisma, logger } = state.deps;
  try {
    for (;;) {
      const [due] = await prisma.$queryRaw<{ id: string; job_id: string; url: string; attempts: number }[]>`
        UPDATE webhook_deliveries SET attempts = attempts + 1, locked_until = now() + interval '60 seconds'
        WHERE id = (
          SELECT id FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, job_id, url, attempts`;
      if (!due || state.stopped) return;
      await deliver(state, due);
    }
  } catch (error) {
    logger.warn({ err: error }, "could not send webhooks; retrying at the next poll");
  }
}

async function deliver(state: WorkerState, due: { id: string; job_id: string; url: string; attempts: number }) {
  const { prisma, storage, config, logger } = state.deps;
  const job = await prisma.compressionJob.findUniqueOrThrow({ where: { id: due.job_id }, include: WITH_REPORT });
  const body = webhookBody(await jobResource(job, { storage, config }));
  // The secret, and in a rotation's overlap window the one it replaced: both sign the call.
  const { secrets } = await webhookSecretState(prisma, job.subscriberId);
  // The delivery's id is the message's: every retry of it carries the same webhook-id.
  const outcome = await callWebhook(due.url, { id: due.id, body }, secrets, config.webhookTargets);
  const ok = "status" in outcome && outcome.status >= 200 && outcome.status < 300;
  const last = "status" in outcome ? { lastStatus: outcome.status, lastError: null } : { lastError: outcome.error };
  if (ok) {
    await prisma.webhookDelivery.update({
      where: { id: due.id },
      data: { status: "delivered", deliveredAt: new Date(), lockedUntil: null, ...last },
    });
    return;
  }
  const giveUp = due.attempts >= MAX_ATTEMPTS;
  const nextAttemptAt = new Date(Date.now() + backoffMs(due.attempts, state.deps.retryBaseMs ?? 10_000));
  await prisma.webhookDelivery.update({
    where: { id: due.id },
    data: { ...(giveUp ? { status: "failed" } : { nextAttemptAt }), lockedUntil: null, ...last },
  });
  logger.info({ jobId: job.id, url: due.url, attempt: due.attempts, ...last, giveUp }, "webhook not accepted");
}
