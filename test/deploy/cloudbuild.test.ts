// cloudbuild.yaml: the pipeline's order (test → build → push → migrate → deploy), one image
// tagged with the commit throughout, commands and files that exist, HTTP/2 end to end, secrets
// from Secret Manager only, and substitutions that are both declared and used.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/env.ts";
import { readDockerfile, repoRoot } from "./dockerfile.ts";

interface Step {
  id?: string;
  name: string;
  entrypoint?: string;
  args?: string[];
  env?: string[];
  waitFor?: string[];
  script?: string;
}
interface BuildConfig {
  steps: Step[];
  substitutions?: Record<string, string>;
  options?: Record<string, unknown>;
  images?: string[];
}

const text = readFileSync(path.join(repoRoot, "cloudbuild.yaml"), "utf8");
const build = parse(text) as BuildConfig;
const steps = build.steps;
const scripts = (
  JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts;

const IMAGE = "${_REGION}-docker.pkg.dev/$PROJECT_ID/${_REPOSITORY}/${_SERVICE}:$COMMIT_SHA";

/** The command a step runs: its entrypoint (or the builder's own) and arguments. */
function command(step: Step): string[] {
  const builderEntrypoint: Record<string, string> = {
    "gcr.io/cloud-builders/docker": "docker",
    "gcr.io/cloud-builders/gcloud": "gcloud",
  };
  const entrypoint = step.entrypoint ?? builderEntrypoint[step.name];
  if (!entrypoint) throw new Error(`step ${step.id}: no entrypoint and no known builder`);
  return [entrypoint, ...(step.args ?? []).map(String)];
}

/** --name=value and bare --name flags of a command (a repeated flag keeps its last value). */
function flags(args: string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const arg of args) {
    const match = /^--([\w-]+)(?:=(.*))?$/s.exec(arg);
    if (match) found.set(match[1]!, match[2] ?? "");
  }
  return found;
}

const positionals = (args: string[]) => args.filter((a) => !a.startsWith("-"));

function findStep(label: string, predicate: (cmd: string[]) => boolean): { step: Step; index: number; cmd: string[] } {
  const index = steps.findIndex((s) => predicate(command(s)));
  expect(index, `a step that ${label}`).toBeGreaterThan(-1);
  return { step: steps[index]!, index, cmd: command(steps[index]!) };
}

const starts = (cmd: string[], ...prefix: string[]) => prefix.every((word, i) => cmd[i] === word);
const install = findStep("runs npm ci", (c) => starts(c, "npm", "ci"));
const check = findStep("runs npm run check", (c) => starts(c, "npm", "run", "check"));
const test = findStep("runs npm test", (c) => starts(c, "npm", "test"));
const dockerBuild = findStep("builds the image", (c) => starts(c, "docker", "build"));
const push = findStep("pushes the image", (c) => starts(c, "docker", "push"));
const job = findStep("deploys the migration job", (c) => starts(c, "gcloud", "run", "jobs", "deploy"));
const execute = findStep("executes the migration job", (c) => starts(c, "gcloud", "run", "jobs", "execute"));
const deploy = findStep("deploys the service", (c) => starts(c, "gcloud", "run", "deploy"));
const deployFlags = flags(deploy.cmd);
const jobFlags = flags(job.cmd);

/** "A=x,B=y" (gcloud's list syntax) as entries. */
const keyValues = (list: string) =>
  list.split(",").map((entry) => {
    const at = entry.indexOf("=");
    return [entry.slice(0, at), entry.slice(at + 1)] as const;
  });

/** Every string in a step (name, entrypoint, args, env, script): where substitutions can appear. */
const stepStrings = (step: Step) =>
  [step.name, step.entrypoint, step.script, ...(step.args ?? []), ...(step.env ?? [])].filter(
    (v): v is string => typeof v === "string",
  );

describe("cloudbuild.yaml", () => {
  it("tests, builds, pushes, migrates and deploys, in that order and one step after another", () => {
    const order = [install, check, test, dockerBuild, push, job, execute, deploy].map((s) => s.index);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    const ids = steps.map((s) => s.id);
    expect(new Set(ids).size, "step ids are unique").toBe(steps.length);
    // waitFor could run a step early (e.g. the deploy beside the migration); none is used.
    for (const step of steps) expect(step.waitFor, `step ${step.id} waits for the previous one`).toBeUndefined();
  });

  it("tests on the image's Node version with PGlite (no DATABASE_URL), as CI does", () => {
    const base = readDockerfile().at(-1)!.base;
    for (const step of [install, check, test]) expect(step.step.name).toBe(base);
    for (const step of steps) {
      expect(stepStrings(step).join(" "), `step ${step.id} sets no database`).not.toMatch(/DATABASE_URL=postgres/);
    }
  });

  it("tags the image with the commit and deploys exactly the image it built and pushed", () => {
    expect(flags(dockerBuild.cmd).get("tag")).toBe(IMAGE);
    expect(positionals(dockerBuild.cmd.slice(2))).toEqual(["."]);
    expect(push.cmd.slice(2)).toEqual([IMAGE]);
    expect(jobFlags.get("image")).toBe(IMAGE);
    expect(deployFlags.get("image")).toBe(IMAGE);
  });

  it("runs npm scripts that exist, and files that exist, all the way down", () => {
    const seen = new Set<string>();
    const visit = (commandText: string, where: string) => {
      for (const match of commandText.matchAll(/\bnpm run(?:-script)?(?: -s)? ([\w:-]+)|\bnpm (test|start)\b/g)) {
        const name = match[1] ?? match[2]!;
        expect(scripts[name], `npm run ${name} (${where}) is a package.json script`).toBeDefined();
        if (seen.has(name)) continue;
        seen.add(name);
        visit(scripts[name]!, `script ${name}`);
      }
      for (const file of commandText.match(/\b(?:scripts|src|bench)\/[\w./-]+\.(?:ts|mjs|js)\b/g) ?? []) {
        expect(existsSync(path.join(repoRoot, file)), `${file} (${where}) exists`).toBe(true);
      }
    };
    for (const step of steps) visit(command(step).join(" ") + " " + (step.script ?? ""), `step ${step.id}`);
    for (const name of ["check", "test"]) expect(seen).toContain(name);
    // The migration drift check is one of the tests (test/migrations-drift.test.ts), run once.
    expect(readFileSync(path.join(repoRoot, "test/migrations-drift.test.ts"), "utf8")).toContain(
      "scripts/check-migrations.ts",
    );
  });

  it("migrates with a Cloud Run job from the same image and waits for it, so a failure stops the deploy", () => {
    const name = positionals(job.cmd.slice(4))[0];
    expect(name).toBe("${_SERVICE}-migrate");
    expect(positionals(execute.cmd.slice(4))[0]).toBe(name);
    expect(flags(execute.cmd).has("wait")).toBe(true);
    expect(flags(execute.cmd).get("region")).toBe(jobFlags.get("region"));
    expect(jobFlags.get("command")).toBe("node");
    const args = jobFlags.get("args")!.split(",");
    expect(args).toEqual(["--disable-warning=ExperimentalWarning", "scripts/migrate.ts"]);
    expect(existsSync(path.join(repoRoot, args[1]!))).toBe(true);
    expect(jobFlags.get("max-retries")).toBe("0");
    expect(jobFlags.get("set-cloudsql-instances")).toBe(deployFlags.get("add-cloudsql-instances"));
    expect(jobFlags.get("service-account")).toBe(deployFlags.get("service-account"));
    const jobSecrets = new Map(keyValues(jobFlags.get("set-secrets")!));
    const serviceSecrets = new Map(keyValues(deployFlags.get("set-secrets")!));
    expect(jobSecrets.get("DATABASE_URL")).toBe(serviceSecrets.get("DATABASE_URL"));
  });

  it("deploys with HTTP/2 end to end, a long enough timeout, its own service account and the VPC", () => {
    expect(deployFlags.has("use-http2")).toBe(true);
    // ...which the service must then speak: h2c (it answers HTTP/1.1 on the same port too).
    expect(Object.fromEntries(keyValues(deployFlags.get("set-env-vars")!))["HTTP_PROTOCOL"]).toBe("h2c");
    expect(deployFlags.get("port")).toBe("8080");
    const timeout = deployFlags.get("timeout")!;
    const seconds = /^\d+$/.test(timeout) ? Number(timeout) : Number(/^(\d+)m$/.exec(timeout)?.[1]) * 60;
    expect(seconds, "a 300 MB upload fits in the request timeout").toBeGreaterThanOrEqual(900);
    expect(seconds, "Cloud Run's maximum").toBeLessThanOrEqual(3600);
    expect(deployFlags.get("service-account")).toMatch(/@\$PROJECT_ID\.iam\.gserviceaccount\.com$/);
    expect(deployFlags.get("add-cloudsql-instances")).toMatch(/^\$PROJECT_ID:\$\{_REGION\}:/);
    expect(deployFlags.has("network") || deployFlags.has("vpc-connector"), "a route to Memorystore").toBe(true);
    expect(deployFlags.get("vpc-egress")).toBe("private-ranges-only");
    for (const flag of ["cpu-boost", "concurrency", "cpu", "memory", "min-instances", "max-instances"]) {
      expect(deployFlags.has(flag), `--${flag}`).toBe(true);
    }
  });

  it("takes secrets from Secret Manager only, and the environment it sets is one the service accepts", () => {
    const secrets = keyValues(deployFlags.get("set-secrets")!);
    expect(secrets.map(([k]) => k).sort()).toEqual(["API_KEY_PEPPER", "DATABASE_URL", "REDIS_URL", "SMTP_URL"]);
    for (const [, reference] of secrets) expect(reference).toMatch(/^[\w${}-]+:(latest|\d+)$/);
    const env = keyValues(deployFlags.get("set-env-vars")!);
    const secretNames = ["DATABASE_URL", "REDIS_URL", "API_KEY_PEPPER", "DOWNLOAD_SIGNING_SECRET", "SMTP_URL"];
    for (const [name] of env) expect(secretNames, `${name} is not a plain variable`).not.toContain(name);
    expect(text).not.toMatch(/postgres(ql)?:\/\/|rediss?:\/\/|GOOGLE_APPLICATION_CREDENTIALS/);
    expect(Object.fromEntries(env)["GCS_BUCKET"]).toBe("${_BUCKET}");
    // Cloud Run does not set it; the request log needs it for \`logging.googleapis.com/trace\`.
    expect(Object.fromEntries(env)["GOOGLE_CLOUD_PROJECT"]).toBe("$PROJECT_ID");

    // Every name is one src/config/env.ts reads.
    const envSource = readFileSync(path.join(repoRoot, "src/config/env.ts"), "utf8");
    const known = new Set([...envSource.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!));
    for (const [name] of [...env, ...secrets]) expect(known, `${name} is read by src/config/env.ts`).toContain(name);

    // With the substitutions filled in, the configuration is valid and uses the managed services.
    const fill = (value: string) =>
      value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => {
        const name = (a ?? b)!;
        return name === "PROJECT_ID" ? "acme-prod" : (build.substitutions?.[name] ?? "");
      });
    const values: Record<string, string> = Object.fromEntries(env.map(([k, v]) => [k, fill(v)]));
    values["GCS_BUCKET"] = "acme-prod-results";
    values["PORT"] = deployFlags.get("port")!;
    values["DATABASE_URL"] = "postgresql://app:pw@localhost/marketplace?host=/cloudsql/acme-prod:europe-west1:db";
    values["REDIS_URL"] = "redis://:auth@10.0.0.3:6379";
    values["API_KEY_PEPPER"] = "0123456789abcdef0123456789abcdef";
    values["SMTP_URL"] = "smtps://mailer:pw@smtp.example.com:465";
    // Required by the preflight step (the mailed sign-in links point there).
    values["PUBLIC_API_BASE_URL"] = "https://api.acme.example";
    // The image's NODE_ENV, and K_SERVICE as Cloud Run sets it (so a bucket and a database are required).
    const runtimeEnv = { NODE_ENV: "production", K_SERVICE: "marketplace-api" };
    const config = loadConfig({ ...runtimeEnv, ...values });
    expect(config.database.kind).toBe("postgres");
    expect(config.storage).toMatchObject({ kind: "gcs", bucket: "acme-prod-results" });
    expect(config.redis).not.toBeNull();
    expect(config.apiKeyPepper).not.toBeNull();
    expect(config.publicApiBaseUrl).toBe("https://api.acme.example");
    // /graphql is for internal teams: Google ID tokens minted for the API's public origin.
    expect(config.graphql.access.mode).toBe("internal");
    expect(Object.fromEntries(env)["GRAPHQL_AUDIENCE"]).toBe("${_PUBLIC_API_BASE_URL}");
    // Sign-in mail goes out by SMTP: the production image has no writable outbox.
    expect(config.dashboard.smtpUrl).toMatch(/^smtps:/);
    const preflight = steps.find((step) => step.id === "preflight");
    expect(stepStrings(preflight!).join("\n")).toContain('test -n "${_PUBLIC_API_BASE_URL}"');
    expect(config.port).toBe(8080);
    expect(config.httpProtocol).toBe("h2c");
    expect(config.logging.projectId).toBe("acme-prod");
  });

  it("declares every substitution it uses and uses every one it declares", () => {
    const used = new Set<string>();
    for (const value of steps.flatMap(stepStrings)) {
      for (const match of value.replace(/\$\$/g, "").matchAll(/\$\{(\w+)\}|\$(\w+)/g))
        used.add((match[1] ?? match[2])!);
    }
    const declared = Object.keys(build.substitutions ?? {});
    for (const name of declared) expect(name, "user substitutions start with _").toMatch(/^_[A-Z0-9_]+$/);
    expect([...used].filter((n) => n.startsWith("_")).sort()).toEqual([...declared].sort());
    const builtIn = ["PROJECT_ID", "PROJECT_NUMBER", "BUILD_ID", "LOCATION", "COMMIT_SHA", "SHORT_SHA"];
    for (const name of [...used].filter((n) => !n.startsWith("_"))) expect(builtIn).toContain(name);
  });
});
