-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "EmploymentType" AS ENUM ('full_time', 'part_time', 'contract', 'temporary', 'internship', 'freelance');

-- CreateEnum
CREATE TYPE "WorkModel" AS ENUM ('remote', 'hybrid', 'onsite');

-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('draft', 'published', 'closed', 'archived');

-- CreateEnum
CREATE TYPE "Seniority" AS ENUM ('intern', 'junior', 'mid', 'senior', 'lead', 'principal', 'executive');

-- CreateEnum
CREATE TYPE "SalaryPeriod" AS ENUM ('hour', 'day', 'week', 'month', 'year');

-- CreateEnum
CREATE TYPE "CompanySize" AS ENUM ('size_1_10', 'size_11_50', 'size_51_200', 'size_201_500', 'size_501_1000', 'size_1001_5000', 'size_5001_plus');

-- CreateEnum
CREATE TYPE "ProfileVisibility" AS ENUM ('public', 'private');

-- CreateEnum
CREATE TYPE "AccountState" AS ENUM ('active', 'suspended', 'deactivated');

-- CreateEnum
CREATE TYPE "Availability" AS ENUM ('actively_looking', 'open_to_offers', 'not_looking');

-- CreateEnum
CREATE TYPE "TalentLinkKind" AS ENUM ('website', 'github', 'linkedin', 'portfolio', 'other');

-- CreateEnum
CREATE TYPE "AgentStatus" AS ENUM ('draft', 'published', 'unlisted', 'retired');

-- CreateEnum
CREATE TYPE "PricingModel" AS ENUM ('free', 'one_time', 'subscription', 'usage_based');

-- CreateEnum
CREATE TYPE "BillingPeriod" AS ENUM ('month', 'year');

-- CreateTable
CREATE TABLE "sectors" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "sectors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "skills" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "category" TEXT NOT NULL,

    CONSTRAINT "skills_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "companies" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tagline" TEXT,
    "description" TEXT,
    "logo_url" TEXT,
    "website_url" TEXT,
    "size" "CompanySize",
    "founded_year" INTEGER,
    "hq_city" TEXT,
    "hq_state" TEXT,
    "hq_country" CHAR(2),
    "has_public_page" BOOLEAN NOT NULL DEFAULT false,
    "contact_email" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "companies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description_html" TEXT NOT NULL,
    "description_text" TEXT NOT NULL,
    "employment_type" "EmploymentType" NOT NULL,
    "work_model" "WorkModel" NOT NULL,
    "seniority" "Seniority",
    "location_city" TEXT,
    "location_state" TEXT,
    "location_country" CHAR(2),
    "salary_min" INTEGER,
    "salary_max" INTEGER,
    "salary_currency" CHAR(3),
    "salary_period" "SalaryPeriod",
    "apply_url" TEXT,
    "status" "JobStatus" NOT NULL DEFAULT 'draft',
    "filled" BOOLEAN NOT NULL DEFAULT false,
    "published_at" TIMESTAMPTZ(3),
    "valid_through" TIMESTAMPTZ(3),
    "recruiter_email" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "company_id" UUID,
    "sector_id" UUID,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "talents" (
    "id" UUID NOT NULL,
    "handle" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "headline" TEXT,
    "bio" TEXT,
    "location_city" TEXT,
    "location_state" TEXT,
    "location_country" CHAR(2),
    "work_models" "WorkModel"[],
    "availability" "Availability" NOT NULL DEFAULT 'not_looking',
    "years_experience" INTEGER,
    "avatar_url" TEXT,
    "visibility" "ProfileVisibility" NOT NULL DEFAULT 'private',
    "account_state" "AccountState" NOT NULL DEFAULT 'active',
    "email" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "talents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "talent_links" (
    "id" UUID NOT NULL,
    "talent_id" UUID NOT NULL,
    "kind" "TalentLinkKind" NOT NULL,
    "url" TEXT NOT NULL,
    "position" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "talent_links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tagline" TEXT,
    "description" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "capabilities" TEXT[],
    "version" TEXT NOT NULL,
    "pricing_model" "PricingModel" NOT NULL,
    "price_amount" DECIMAL(12,2),
    "price_currency" CHAR(3),
    "price_period" "BillingPeriod",
    "price_unit" TEXT,
    "website_url" TEXT,
    "status" "AgentStatus" NOT NULL DEFAULT 'draft',
    "published_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "vendor_company_id" UUID,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "_TalentSectors" (
    "A" UUID NOT NULL,
    "B" UUID NOT NULL,

    CONSTRAINT "_TalentSectors_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateTable
CREATE TABLE "_TalentSkills" (
    "A" UUID NOT NULL,
    "B" UUID NOT NULL,

    CONSTRAINT "_TalentSkills_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateTable
CREATE TABLE "_CompanySectors" (
    "A" UUID NOT NULL,
    "B" UUID NOT NULL,

    CONSTRAINT "_CompanySectors_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateTable
CREATE TABLE "_JobSkills" (
    "A" UUID NOT NULL,
    "B" UUID NOT NULL,

    CONSTRAINT "_JobSkills_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateTable
CREATE TABLE "_AgentSkills" (
    "A" UUID NOT NULL,
    "B" UUID NOT NULL,

    CONSTRAINT "_AgentSkills_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateIndex
CREATE UNIQUE INDEX "sectors_slug_key" ON "sectors"("slug");

-- CreateIndex
CREATE INDEX "sectors_name_slug_idx" ON "sectors"("name", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "skills_slug_key" ON "skills"("slug");

-- CreateIndex
CREATE INDEX "skills_name_slug_idx" ON "skills"("name", "slug");

-- CreateIndex
CREATE INDEX "skills_category_name_slug_idx" ON "skills"("category", "name", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "companies_slug_key" ON "companies"("slug");

-- CreateIndex
CREATE INDEX "companies_has_public_page_name_slug_idx" ON "companies"("has_public_page", "name", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_slug_key" ON "jobs"("slug");

-- CreateIndex
CREATE INDEX "jobs_status_filled_published_at_id_idx" ON "jobs"("status", "filled", "published_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_company_id_status_published_at_id_idx" ON "jobs"("company_id", "status", "published_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_sector_id_idx" ON "jobs"("sector_id");

-- CreateIndex
CREATE INDEX "jobs_updated_at_idx" ON "jobs"("updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "talents_handle_key" ON "talents"("handle");

-- CreateIndex
CREATE UNIQUE INDEX "talents_email_key" ON "talents"("email");

-- CreateIndex
CREATE INDEX "talents_visibility_account_state_handle_idx" ON "talents"("visibility", "account_state", "handle");

-- CreateIndex
CREATE INDEX "talent_links_talent_id_position_idx" ON "talent_links"("talent_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "agents_slug_key" ON "agents"("slug");

-- CreateIndex
CREATE INDEX "agents_status_published_at_id_idx" ON "agents"("status", "published_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "agents_status_category_published_at_id_idx" ON "agents"("status", "category", "published_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "agents_vendor_company_id_idx" ON "agents"("vendor_company_id");

-- CreateIndex
CREATE INDEX "_TalentSectors_B_index" ON "_TalentSectors"("B");

-- CreateIndex
CREATE INDEX "_TalentSkills_B_index" ON "_TalentSkills"("B");

-- CreateIndex
CREATE INDEX "_CompanySectors_B_index" ON "_CompanySectors"("B");

-- CreateIndex
CREATE INDEX "_JobSkills_B_index" ON "_JobSkills"("B");

-- CreateIndex
CREATE INDEX "_AgentSkills_B_index" ON "_AgentSkills"("B");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_sector_id_fkey" FOREIGN KEY ("sector_id") REFERENCES "sectors"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "talent_links" ADD CONSTRAINT "talent_links_talent_id_fkey" FOREIGN KEY ("talent_id") REFERENCES "talents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_vendor_company_id_fkey" FOREIGN KEY ("vendor_company_id") REFERENCES "companies"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_TalentSectors" ADD CONSTRAINT "_TalentSectors_A_fkey" FOREIGN KEY ("A") REFERENCES "sectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_TalentSectors" ADD CONSTRAINT "_TalentSectors_B_fkey" FOREIGN KEY ("B") REFERENCES "talents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_TalentSkills" ADD CONSTRAINT "_TalentSkills_A_fkey" FOREIGN KEY ("A") REFERENCES "skills"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_TalentSkills" ADD CONSTRAINT "_TalentSkills_B_fkey" FOREIGN KEY ("B") REFERENCES "talents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_CompanySectors" ADD CONSTRAINT "_CompanySectors_A_fkey" FOREIGN KEY ("A") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_CompanySectors" ADD CONSTRAINT "_CompanySectors_B_fkey" FOREIGN KEY ("B") REFERENCES "sectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_JobSkills" ADD CONSTRAINT "_JobSkills_A_fkey" FOREIGN KEY ("A") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_JobSkills" ADD CONSTRAINT "_JobSkills_B_fkey" FOREIGN KEY ("B") REFERENCES "skills"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_AgentSkills" ADD CONSTRAINT "_AgentSkills_A_fkey" FOREIGN KEY ("A") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_AgentSkills" ADD CONSTRAINT "_AgentSkills_B_fkey" FOREIGN KEY ("B") REFERENCES "skills"("id") ON DELETE CASCADE ON UPDATE CASCADE;
