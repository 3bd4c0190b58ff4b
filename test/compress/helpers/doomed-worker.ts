// A job worker in a process of its own, for the test of a worker killed mid-job: it claims jobs
// from DATABASE_URL with a lease of 2 s, and its engine takes a job and never answers, printing
// "taken <input>" when it does, so the test knows when to SIGKILL it.
import { startJobWorker } from "../../../src/compress/async-jobs/worker.ts";
import { createLocalStorage } from "../../../src/compress/storage/local.ts";
import { loadConfig } from "../../../src/config/env.ts";
import { openDatabase } from "../../../src/db/database.ts";
import { createLogger } from "../../../src/logger.ts";

const config = loadConfig({ ...process.env, LOG_LEVEL: "silent", COMPRESS_JOB_LEASE_SECONDS: "2" });
if (config.database.kind !== "postgres") throw new Error("doomed-worker needs DATABASE_URL");
const db = await openDatabase(config.database);
const storage = await createLocalStorage(process.argv[2]!, process.argv[3]!);
startJobWorker(
  {
    config,
    prisma: db.prisma,
    storage,
    logger: createLogger(config),
    pollMs: 50,
    runner: {
      run: (job) => {
        process.stdout.write(`taken ${job.inputPath}\n`);
        return new Promise(() => undefined);
      },
    },
  },
  1,
);
