// One factory per model, each row public unless the overrides hide it. Unique suffixes keep
// rows of different tests apart; slugs say what a row is, so a failing assertion reads well.
import type { Prisma, PrismaClient } from "../../src/generated/prisma/client.ts";

let counter = 0;
const unique = (label: string) => `${label}-${process.pid.toString(36)}-${(++counter).toString(36)}`;
const day = 86_400_000;
export const daysAgo = (n: number) => new Date(Date.now() - n * day);
export const daysFromNow = (n: number) => new Date(Date.now() + n * day);

export function factories(prisma: PrismaClient) {
  return {
    sector: (label = "sector", data: Partial<Prisma.SectorCreateInput> = {}) => {
      const slug = unique(label);
      return prisma.sector.create({ data: { slug, name: slug, ...data } });
    },
    skill: (label = "skill", data: Partial<Prisma.SkillCreateInput> = {}) => {
      const slug = unique(label);
      return prisma.skill.create({ data: { slug, name: slug, category: "llm", ...data } });
    },
    company: (label = "company", data: Partial<Prisma.CompanyUncheckedCreateInput> = {}) => {
      const slug = unique(label);
      return prisma.company.create({
        data: { slug, name: slug, hasPublicPage: true, contactEmail: `${slug}@internal.example`, ...data },
      });
    },
    job: (label = "job", data: Partial<Prisma.JobUncheckedCreateInput> = {}) => {
      const slug = unique(label);
      return prisma.job.create({
        data: {
          slug,
          title: slug,
          descriptionHtml: `<p>${slug}</p>`,
          descriptionText: slug,
          employmentType: "full_time",
          workModel: "remote",
          status: "published",
          publishedAt: daysAgo(1),
          recruiterEmail: `${slug}@internal.example`,
          ...data,
        },
      });
    },
    talent: (label = "talent", data: Partial<Prisma.TalentUncheckedCreateInput> = {}) => {
      const handle = unique(label);
      return prisma.talent.create({
        data: { handle, displayName: handle, visibility: "public", email: `${handle}@internal.example`, ...data },
      });
    },
    agent: (label = "agent", data: Partial<Prisma.AgentUncheckedCreateInput> = {}) => {
      const slug = unique(label);
      return prisma.agent.create({
        data: {
          slug,
          name: slug,
          description: slug,
          category: "recruiting",
          version: "1.0.0",
          pricingModel: "free",
          status: "published",
          publishedAt: daysAgo(1),
          ...data,
        },
      });
    },
  };
}
