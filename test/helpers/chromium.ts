// Debian's Chromium driven by playwright-core (a test tool's own browser download does not work
// on these machines): where it is, whether it is there, and how to launch it headless.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
export const hasChromium = existsSync(chromiumPath);

export function warnWithoutChromium(): void {
  if (!hasChromium) {
    console.warn(
      `Skipping browser tests: no Chromium at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH).`,
    );
  }
}

/** playwright gives every launch a fresh, temporary profile; nothing reaches out on its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}
