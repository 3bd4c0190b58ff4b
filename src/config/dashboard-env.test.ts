// The dashboard's settings: defaults that sign in on the embedded database with no mail server,
// and the SMTP and lifetime settings validated with the others.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./env.ts";

describe("dashboard settings", () => {
  it("default to the outbox, 15-minute links, 12-hour sessions and hourly sign-in limits", () => {
    expect(loadConfig({ NODE_ENV: "test" }).dashboard).toEqual({
      smtpUrl: null,
      mailFrom: "Marketplace <no-reply@marketplace.example.com>",
      outboxDir: ".data/outbox",
      signInLinkTtlMs: 15 * 60_000,
      sessionTtlMs: 12 * 3_600_000,
      signInPerAddress: 5,
      signInPerIp: 30,
      signInMailsPerAddress: 10,
      linkOrigin: "http://localhost:3000",
      linkOriginFromLoopbackRequest: false,
    });
  });

  it("relax the sign-in limits in development (npm start), unless they are set", () => {
    expect(loadConfig({}).dashboard).toMatchObject({
      signInPerAddress: 50,
      signInPerIp: 300,
      signInMailsPerAddress: 100,
      linkOriginFromLoopbackRequest: true,
    });
    expect(loadConfig({ SIGN_IN_LIMIT_PER_ADDRESS: "2" }).dashboard.signInPerAddress).toBe(2);
    expect(loadConfig({ PUBLIC_API_BASE_URL: "https://api.example.com" }).dashboard.linkOriginFromLoopbackRequest).toBe(
      false,
    );
  });

  it("point sign-in links at PUBLIC_API_BASE_URL, else at localhost on the service's port", () => {
    expect(loadConfig({ PORT: "8080" }).dashboard.linkOrigin).toBe("http://localhost:8080");
    expect(loadConfig({ PUBLIC_API_BASE_URL: "https://api.example.com/" }).dashboard.linkOrigin).toBe(
      "https://api.example.com",
    );
  });

  it("take an SMTP server and other lifetimes", () => {
    const config = loadConfig({
      SMTP_URL: "smtps://user:secret@smtp.example.com:465",
      PUBLIC_API_BASE_URL: "https://api.example.com",
      SIGN_IN_LINK_MINUTES: "5",
      SESSION_HOURS: "1",
    }).dashboard;
    expect(config).toMatchObject({
      smtpUrl: "smtps://user:secret@smtp.example.com:465",
      signInLinkTtlMs: 300_000,
      sessionTtlMs: 3_600_000,
    });
  });

  it("refuse SMTP_URL without PUBLIC_API_BASE_URL: a mailed link must not take its origin from the request", () => {
    expect(() => loadConfig({ SMTP_URL: "smtp://mail:25" })).toThrow(/SMTP_URL: needs PUBLIC_API_BASE_URL/);
  });

  it("report every invalid one", () => {
    try {
      loadConfig({ SMTP_URL: "http://mail", SIGN_IN_LINK_MINUTES: "120", SESSION_HOURS: "0" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const issues = (error as ConfigError).issues.join("\n");
      expect(issues).toContain("SMTP_URL: must be an smtp:// or smtps:// URL");
      expect(issues).toContain("SIGN_IN_LINK_MINUTES");
      expect(issues).toContain("SESSION_HOURS");
    }
  });
});
