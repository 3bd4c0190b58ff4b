// A catalog with rows of every hidden kind beside public ones, shared by the gate tests of the
// read model and of the REST API: `seen` names what must be visible, `hidden` every identifier
// or secret that must never appear, and `hiddenByKind` the detail keys that must be a 404.
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { daysAgo, daysFromNow, factories } from "./factories.ts";

export interface GatedCatalog {
  seen: Record<string, string>;
  hidden: string[];
  hiddenByKind: { companies: string[]; jobs: string[]; talents: string[]; agents: string[] };
}

export async function seedGatedCatalog(prisma: PrismaClient): Promise<GatedCatalog> {
  const f = factories(prisma);
  const seen = {} as Record<string, string>;
  const hidden: string[] = [];
  const hiddenByKind: GatedCatalog["hiddenByKind"] = { companies: [], jobs: [], talents: [], agents: [] };
  const sector = await f.sector("sector");
  const skill = await f.skill("skill");
  const tags = { sectorId: sector.id, skills: { connect: { id: skill.id } } };
  const company = await f.company("public-company", { sectors: { connect: { id: sector.id } } });
  const hiddenCompany = await f.company("hidden-company", {
    hasPublicPage: false,
    sectors: { connect: { id: sector.id } },
  });
  seen["company"] = company.slug;
  hidden.push(hiddenCompany.slug, hiddenCompany.contactEmail as string);
  hiddenByKind.companies.push(hiddenCompany.slug);

  seen["openJob"] = (await f.job("open-job", { companyId: company.id, ...tags })).slug;
  seen["jobOfHiddenCompany"] = (await f.job("job-of-hidden-company", { companyId: hiddenCompany.id, ...tags })).slug;
  seen["confidentialJob"] = (await f.job("confidential-job", { companyId: null, ...tags })).slug;
  const hiddenJobs = await Promise.all([
    f.job("draft-job", { companyId: company.id, status: "draft", publishedAt: null, ...tags }),
    f.job("closed-job", { companyId: company.id, status: "closed", ...tags }),
    f.job("archived-job", { companyId: company.id, status: "archived", ...tags }),
    f.job("filled-job", { companyId: company.id, filled: true, ...tags }),
    f.job("expired-job", { companyId: company.id, validThrough: daysAgo(1), ...tags }),
    f.job("scheduled-job", { companyId: company.id, publishedAt: daysFromNow(3), ...tags }),
  ]);
  for (const job of hiddenJobs) {
    hidden.push(job.slug, job.recruiterEmail as string);
    hiddenByKind.jobs.push(job.slug);
  }

  const talentTags = { skills: { connect: { id: skill.id } }, sectors: { connect: { id: sector.id } } };
  seen["talent"] = (await f.talent("public-talent", talentTags)).handle;
  const hiddenTalents = await Promise.all([
    f.talent("private-talent", { visibility: "private", ...talentTags }),
    f.talent("suspended-talent", { accountState: "suspended", ...talentTags }),
    f.talent("deactivated-talent", { accountState: "deactivated", ...talentTags }),
  ]);
  for (const t of hiddenTalents) {
    hidden.push(t.handle, t.email);
    hiddenByKind.talents.push(t.handle);
  }

  const agentTags = { skills: { connect: { id: skill.id } } };
  seen["agent"] = (await f.agent("published-agent", { vendorCompanyId: company.id, ...agentTags })).slug;
  seen["agentOfHiddenVendor"] = (
    await f.agent("agent-of-hidden-vendor", { vendorCompanyId: hiddenCompany.id, ...agentTags })
  ).slug;
  seen["unlistedAgent"] = (await f.agent("unlisted-agent", { status: "unlisted", ...agentTags })).slug;
  for (const a of await Promise.all([
    f.agent("draft-agent", { status: "draft", publishedAt: null, ...agentTags }),
    f.agent("retired-agent", { status: "retired", ...agentTags }),
  ])) {
    hidden.push(a.slug);
    hiddenByKind.agents.push(a.slug);
  }
  seen["skill"] = skill.slug;
  seen["sector"] = sector.slug;
  return { seen, hidden, hiddenByKind };
}
