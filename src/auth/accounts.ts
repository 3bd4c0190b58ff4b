// Managing the compression API's subscribers and their keys: what the command-line tool
// (scripts/accounts.ts) and the dashboard's key settings do, against whichever database is
// configured. Results never hold a key's secret, except issueKey's, which is the one time it is shown.
import type { Plan, PrismaClient } from "../generated/prisma/client.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import { currentMonth } from "./quota.ts";

export const PLANS = ["corporate", "professional", "starter"] as const satisfies readonly Plan[];
/** The plans whose keys work on /v1/compress. */
export const COMPRESSION_PLANS: readonly Plan[] = ["corporate"];
export const DEFAULT_MONTHLY_QUOTA: Record<Plan, number> = { corporate: 10_000, professional: 1_000, starter: 100 };

export class AccountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AccountError";
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parsePlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw new AccountError(`plan must be one of ${PLANS.join(", ")}`);
  return plan as Plan;
}

export const KEY_NAME_MAX_LENGTH = 60;

function parseKeyName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new AccountError("a key's name must not be empty");
  if (trimmed.length > KEY_NAME_MAX_LENGTH) {
    throw new AccountError(`a key's name must be at most ${KEY_NAME_MAX_LENGTH} characters`);
  }
  return trimmed;
}

/** Why a subscriber on this plan cannot hold a working key (null: it can). */
export function keyRefusal(email: string, plan: Plan): string | null {
  return COMPRESSION_PLANS.includes(plan)
    ? null
    : `${email} is on the ${plan} plan; only ${COMPRESSION_PLANS.join(", ")} subscribers may hold a key`;
}

function parseQuota(quota: number | string): number {
  const value = Number(quota);
  if (!Number.isInteger(value) || value < 0) throw new AccountError("quota must be a whole number of at least 0");
  return value;
}

export interface SubscriberView {
  id: string;
  name: string;
  email: string;
  plan: Plan;
  monthlyQuota: number;
  usedThisMonth: number;
  activeKeys: number;
}

export interface KeyView {
  id: string;
  prefix: string;
  name: string;
  subscriber: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** The operations, bound to one database and the key pepper. */
export function accounts(prisma: PrismaClient, pepper: string | null) {
  return {
    createSubscriber: (input: NewSubscriber) => createSubscriber(prisma, input),
    updateSubscriber: (ref: string, change: SubscriberChange) => updateSubscriber(prisma, ref, change),
    listSubscribers: () => listSubscribers(prisma),
    /** The only result that holds a secret: show it to the subscriber once. */
    issueKey: (ref: string, name = "default") => issueKey(prisma, pepper, ref, name),
    listKeys: (ref?: string) => listKeys(prisma, ref),
    /**
     * Revokes at once: the next request with the key is refused. With owner (a subscriber's id),
     * only a key of that subscriber's is found (the dashboard's revoke).
     */
    revokeKey: (ref: string, owner?: string) => revokeKey(prisma, ref, owner),
  };
}

interface NewSubscriber {
  name: string;
  email: string;
  plan: string;
  quota?: number | string;
}

interface SubscriberChange {
  plan?: string;
  quota?: number | string;
  name?: string;
}

/** A subscriber by id or by e-mail address (any case). */
async function findSubscriber(prisma: PrismaClient, ref: string) {
  const subscriber = await prisma.subscriber.findFirst({
    where: UUID.test(ref) ? { id: ref } : { email: ref.toLowerCase() },
  });
  if (!subscriber) throw new AccountError(`no subscriber ${ref}`);
  return subscriber;
}

async function subscriberView(prisma: PrismaClient, id: string): Promise<SubscriberView> {
  const s = await prisma.subscriber.findUniqueOrThrow({
    where: { id },
    include: {
      usage: { where: { month: currentMonth() } },
      _count: { select: { apiKeys: { where: { revokedAt: null } } } },
    },
  });
  return {
    id: s.id,
    name: s.name,
    email: s.email,
    plan: s.plan,
    monthlyQuota: s.monthlyQuota,
    usedThisMonth: s.usage[0]?.used ?? 0,
    activeKeys: s._count.apiKeys,
  };
}

async function createSubscriber(prisma: PrismaClient, input: NewSubscriber): Promise<SubscriberView> {
  const plan = parsePlan(input.plan);
  const email = input.email.trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new AccountError("email must be an email address");
  if (!input.name.trim()) throw new AccountError("name must not be empty");
  if (await prisma.subscriber.findUnique({ where: { email } })) {
    throw new AccountError(`a subscriber with email ${email} exists`);
  }
  const created = await prisma.subscriber.create({
    data: {
      name: input.name.trim(),
      email,
      plan,
      monthlyQuota: input.quota === undefined ? DEFAULT_MONTHLY_QUOTA[plan] : parseQuota(input.quota),
    },
  });
  return subscriberView(prisma, created.id);
}

async function updateSubscriber(prisma: PrismaClient, ref: string, change: SubscriberChange): Promise<SubscriberView> {
  const subscriber = await findSubscriber(prisma, ref);
  await prisma.subscriber.update({
    where: { id: subscriber.id },
    data: {
      ...(change.plan !== undefined ? { plan: parsePlan(change.plan) } : {}),
      ...(change.quota !== undefined ? { monthlyQuota: parseQuota(change.quota) } : {}),
      ...(change.name !== undefined ? { name: change.name } : {}),
    },
  });
  return subscriberView(prisma, subscriber.id);
}

async function listSubscribers(prisma: PrismaClient): Promise<SubscriberView[]> {
  const all = await prisma.subscriber.findMany({ orderBy: { email: "asc" }, select: { id: true } });
  return Promise.all(all.map((s) => subscriberView(prisma, s.id)));
}

async function issueKey(prisma: PrismaClient, pepper: string | null, ref: string, name: string) {
  const label = parseKeyName(name);
  const subscriber = await findSubscriber(prisma, ref);
  const refusal = keyRefusal(subscriber.email, subscriber.plan);
  if (refusal) throw new AccountError(refusal);
  const { token, prefix } = generateApiKey();
  const key = await prisma.apiKey.create({
    data: { subscriberId: subscriber.id, name: label, prefix, hash: hashApiKey(token, pepper) },
  });
  return { id: key.id, prefix, name: label, subscriber: subscriber.email, createdAt: key.createdAt, token };
}

async function listKeys(prisma: PrismaClient, ref?: string): Promise<KeyView[]> {
  const where = ref ? { subscriberId: (await findSubscriber(prisma, ref)).id } : {};
  const keys = await prisma.apiKey.findMany({
    where,
    orderBy: { createdAt: "asc" },
    include: { subscriber: { select: { email: true } } },
  });
  return keys.map((k) => keyView(k));
}

/** What is shown of a key: never its stored hash (which would let anyone who reads it test guesses offline). */
function keyView(key: Omit<KeyView, "subscriber"> & { subscriber: { email: string } }): KeyView {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    subscriber: key.subscriber.email,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
  };
}

/** A key by id or by prefix; a prefix that two keys share is refused rather than guessed. */
async function revokeKey(prisma: PrismaClient, ref: string, owner?: string): Promise<KeyView> {
  const matches = await prisma.apiKey.findMany({
    where: {
      ...(UUID.test(ref) ? { id: ref } : { prefix: ref }),
      ...(owner !== undefined ? { subscriberId: owner } : {}),
    },
    include: { subscriber: { select: { email: true } } },
  });
  if (matches.length === 0) throw new AccountError(`no key ${ref}`);
  if (matches.length > 1) throw new AccountError(`${ref} names ${matches.length} keys; use the key id`);
  const [key] = matches as [(typeof matches)[number]];
  const revokedAt = key.revokedAt ?? new Date();
  await prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt } });
  return keyView({ ...key, revokedAt });
}

export type Accounts = ReturnType<typeof accounts>;
