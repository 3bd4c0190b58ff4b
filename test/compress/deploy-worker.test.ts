// The deploy gives asynchronous jobs CPU: a worker service from the same image with CPU always
// allocated (Cloud Run throttles an instance's CPU outside requests otherwise) and at least one
// instance, while the request-serving service runs no job.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

interface Step {
  id?: string;
  args?: string[];
}
const build = parse(readFileSync(new URL("../../cloudbuild.yaml", import.meta.url), "utf8")) as {
  steps: Step[];
  substitutions: Record<string, string>;
};
const deploys = build.steps.filter((step) => step.args?.[0] === "run" && step.args[1] === "deploy");
const flag = (step: Step, name: string) =>
  step.args
    ?.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))
    ?.split("=")
    .slice(1)
    .join("=");
const envOf = (step: Step): Record<string, string> =>
  Object.fromEntries(
    (flag(step, "set-env-vars") ?? "").split(",").map((kv): [string, string] => {
      const at = kv.indexOf("=");
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
  );

describe("cloudbuild.yaml and asynchronous jobs", () => {
  const [web, worker] = deploys;
  it("deploys the API and a worker service from the one image built", () => {
    expect(deploys).toHaveLength(2);
    expect(worker!.args![2]).toBe("${_SERVICE}-worker");
    expect(flag(worker!, "image")).toBe(flag(web!, "image"));
  });

  it("gives the worker CPU between requests and an instance always, and keeps it private", () => {
    expect(flag(worker!, "no-cpu-throttling")).toBeDefined();
    expect(Number(build.substitutions[flag(worker!, "min-instances")!.replace(/^\$\{(\w+)\}$/, "$1")])).toBeGreaterThan(
      0,
    );
    expect(flag(worker!, "ingress")).toBe("internal");
    expect(flag(worker!, "no-allow-unauthenticated")).toBeDefined();
    expect(
      Number(build.substitutions[envOf(worker!)["COMPRESS_JOB_WORKERS"]!.replace(/^\$\{(\w+)\}$/, "$1")]),
    ).toBeGreaterThan(0);
    expect(flag(worker!, "set-secrets")).toBe(flag(web!, "set-secrets"));
  });

  it("runs no job in the request-serving service, whose CPU is throttled between requests", () => {
    expect(envOf(web!)["COMPRESS_JOB_WORKERS"]).toBe("0");
    expect(flag(web!, "no-cpu-throttling")).toBeUndefined();
  });
});
