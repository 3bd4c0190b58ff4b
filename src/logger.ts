import { pino, type Logger } from "pino";
import type { Config } from "./config/env.ts";

export type { Logger };

export function createLogger(config: Pick<Config, "logLevel">): Logger {
  return pino({
    level: config.logLevel,
    // Cloud Logging reads `severity`; `message` is its field for the text.
    messageKey: "message",
    formatters: { level: (label) => ({ severity: label.toUpperCase() }) },
    redact: { paths: ["req.headers.authorization", "req.headers.cookie"], censor: "[redacted]" },
  });
}
