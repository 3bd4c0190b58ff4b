// Recall of the words people type (issue 40), on the demo catalog (the seed's default scale): for
// each seeded role and skill, a hyphenated spelling, an unfinished last word and a one-typo
// spelling must each find at least 90 % of what the exact spelling finds. Prints the table. A
// spelling a name has no form of is "-": a one-word name has no hyphenated form, a last word of two
// letters no shorter prefix, a name without a word of 4+ letters no typo (no engine corrects one).
// The spellings below 90 % are listed (KNOWN_SHORT, empty) so the test holds them exactly.
import { graphql } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContext } from "../../src/graphql/context.ts";
import { schema } from "../../src/graphql/schema.ts";
import { roles, skills } from "../../src/db/seed/vocabulary.ts";
import { seedCatalog } from "../../src/db/seed/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedCatalog(db, { seed: 1 });
}, 600_000);

afterAll(async () => {
  await db?.close();
});

async function hits(q: string): Promise<number> {
  const result = await graphql({
    schema,
    source: "query ($q: String) { jobs(filter: { q: $q }, limit: 1) { total } }",
    variableValues: { q },
    contextValue: createContext({ prisma: db.prisma, sql: db.sql }),
  });
  expect(result.errors, q).toBeUndefined();
  return (result.data as { jobs: { total: number } }).jobs.total;
}

const wordsOf = (name: string) => name.split(/[\s/&-]+/u).filter(Boolean);

/** The name's words joined by hyphens ("machine-learning-engineer"); null for one word. */
function hyphenated(name: string): string | null {
  const words = wordsOf(name);
  return words.length > 1 ? words.join("-").toLowerCase() : null;
}

/** The name with its last word cut to about 60 % (at least 2 letters, at least one less). */
function prefix(name: string): string | null {
  const words = name.split(/\s+/u);
  const last = words.pop()!;
  const keep = Math.max(2, Math.ceil(last.length * 0.6));
  return keep >= last.length ? null : [...words, last.slice(0, keep)].join(" ");
}

/** One typo: two neighbouring letters of the name's longest word swapped, past its first letter. */
function oneTypo(name: string): string | null {
  const words = name.split(/\s+/u);
  const longest = words.reduce((a, b) => (b.length > a.length ? b : a));
  if (longest.length < 4) return null;
  const i = Math.floor(longest.length / 2);
  if (longest[i] === longest[i - 1]) return null;
  const typo = longest.slice(0, i - 1) + longest[i] + longest[i - 1] + longest.slice(i + 1);
  return words.map((w) => (w === longest ? typo : w)).join(" ");
}

/**
 * Spellings below 90 %, held exactly so that one falling below fails the test: none since the
 * spellings of titles and skills joined the vocabulary (a typo is measured against "engineer", not
 * the stem "engin"), compounds with an abbreviation inside are read as their words ("nlp-engineer"),
 * and an expression of the synonyms is recognised with a typo or its last word unfinished.
 */
const KNOWN_SHORT: string[] = [];

interface Row {
  kind: string;
  name: string;
  exact: number;
  spellings: { label: string; q: string | null; found: number | null }[];
}

const pct = (found: number | null, exact: number) =>
  found === null ? "-" : exact === 0 ? "n/a" : `${Math.round((found / exact) * 100)}%`;

describe("recall of the spellings people type, on the demo catalog", () => {
  it("finds at least 90 % of the exact spelling's jobs by a hyphenated, a prefix and a one-typo spelling, but for the known shortfalls", async () => {
    const names = [...roles.map((r) => ["role", r] as const), ...skills.map(([s]) => ["skill", s] as const)];
    const rows: Row[] = [];
    for (const [kind, name] of names) {
      const exact = await hits(name);
      const spellings = [];
      for (const [label, q] of [
        ["hyphenated", hyphenated(name)],
        ["prefix", prefix(name)],
        ["one typo", oneTypo(name)],
      ] as const) {
        spellings.push({ label, q, found: q === null ? null : await hits(q) });
      }
      rows.push({ kind, name, exact, spellings });
    }
    const lines = [
      "| kind | name | exact | hyphenated | prefix | one typo |",
      "| --- | --- | ---: | --- | --- | --- |",
      ...rows.map(
        (r) =>
          `| ${r.kind} | ${r.name} | ${r.exact} | ${r.spellings
            .map((s) => (s.q === null ? "-" : `\`${s.q}\` ${s.found} (${pct(s.found, r.exact)})`))
            .join(" | ")} |`,
      ),
    ];
    console.log(lines.join("\n"));
    const short = rows.flatMap((r) =>
      r.spellings
        .filter((s) => s.found !== null && r.exact > 0 && s.found < 0.9 * r.exact)
        .map((s) => `${r.name} / ${s.label}`),
    );
    const measured = rows.reduce((n, r) => n + r.spellings.filter((s) => s.found !== null).length, 0);
    console.log(`${measured - short.length} of ${measured} spellings find at least 90 % of the exact spelling's jobs`);
    expect(short).toEqual(KNOWN_SHORT);
    expect(rows.every((r) => r.exact > 0)).toBe(true);
  }, 900_000);
});
