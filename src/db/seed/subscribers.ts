// Demo subscribers of the compression API: a corporate one (whose keys work) and a starter one
// (whose cannot hold a key). Created once; their keys are issued with `npm run accounts`.
import type { PrismaClient } from "../../generated/prisma/client.ts";

export const DEMO_SUBSCRIBERS = [
  { name: "Demo Corporation", email: "demo-corporate@example.com", plan: "corporate", monthlyQuota: 1_000 },
  { name: "Demo Starter", email: "demo-starter@example.com", plan: "starter", monthlyQuota: 100 },
] as const;

/** Creates the demo subscribers that are missing; returns the emails created. */
export async function seedDemoSubscribers(prisma: PrismaClient): Promise<string[]> {
  const created: string[] = [];
  for (const subscriber of DEMO_SUBSCRIBERS) {
    const result = await prisma.subscriber.createMany({ data: [subscriber], skipDuplicates: true });
    if (result.count) created.push(subscriber.email);
  }
  return created;
}
