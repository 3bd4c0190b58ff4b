// What the compression runner's events say in the log, and at which level. A warm process that
// ends while idle was killed from outside or failed to start: a warning, but not when the service
// is stopping or the terminal's Ctrl+C (SIGINT to the whole process group) ended it with the
// service: that is the normal end of a run (three warnings on every Ctrl+C said otherwise). Lines
// carry no request's fields: the process may have been forked while some request was handled. A
// process that became ready is a debug line with its start-up time (one a job: the pool refills).
import type { RunnerEvent } from "./isolation/runner.ts";
import { outsideRequest, type Logger } from "../logger.ts";

export function logRunnerEvents(logger: Logger, isStopping: () => boolean) {
  return {
    onEvent: (event: RunnerEvent) =>
      outsideRequest(() => {
        if (event.type === "ready") logger.debug(event, "a warm compression process is ready");
        if (event.type !== "exited") return;
        const withService = isStopping() || event.signal === "SIGINT";
        if (withService) logger.debug(event, "a warm compression process ended with the service");
        else logger.warn(event, "a warm compression process ended while idle");
      }),
    onChildStderr: (text: string) =>
      outsideRequest(() => logger.warn({ stderr: text.slice(0, 2000) }, "compression process wrote to stderr")),
  };
}
