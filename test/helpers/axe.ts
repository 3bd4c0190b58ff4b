// axe-core run in a page as shown (evaluated through the DevTools protocol, which the page's CSP
// does not govern): its serious and critical violations, each with a few of its targets.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface Violation {
  id: string;
  impact: string;
  targets: string[];
}

/** `within`: a CSS selector to check only that part of the page (default: all of it). */
export async function seriousViolations(page: Page, within?: string): Promise<Violation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async (context) => {
    const axe = (window as unknown as { axe: { run: (context?: string) => Promise<{ violations: unknown[] }> } }).axe;
    const result = await (context === null ? axe.run() : axe.run(context));
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(" ")).slice(0, 3),
    }));
  }, within ?? null);
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
