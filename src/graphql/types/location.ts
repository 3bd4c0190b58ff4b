import { builder } from "../builder.ts";
import { badArgument } from "../paging.ts";

export interface LocationShape {
  city: string | null;
  state: string | null;
  country: string | null;
}

export const Location = builder.objectRef<LocationShape>("Location").implement({
  description: "A place. country is an ISO 3166-1 alpha-2 code.",
  fields: (t) => ({
    city: t.exposeString("city", { nullable: true }),
    state: t.exposeString("state", { nullable: true }),
    country: t.exposeString("country", { nullable: true }),
  }),
});

/** null when nothing is known, so clients test one field rather than three. */
export function locationOf(city: string | null, state: string | null, country: string | null): LocationShape | null {
  return city === null && state === null && country === null ? null : { city, state, country };
}

/** How the `location` filter matches, for the descriptions of every list that has it. */
export const LOCATION_FILTER_DESCRIPTION =
  'A place: comma-separated parts (e.g. "Toronto", "Portland, OR", "DE"), each equal, case-insensitively, to the city, the state or region, or the ISO 3166-1 alpha-2 country code; every part must match ("CA" matches California and Canada: add a city to tell them apart). Rows without a location never match.';

const LOCATION_MAX_LENGTH = 200;

/**
 * The `location` filter's condition on a model with locationTerms (the lowercased city, state and
 * country, a generated column): has every part. An array containment, which a GIN index answers.
 */
export function locationWhere(location: string): { locationTerms: { hasEvery: string[] } } {
  const parts = [...new Set(location.split(",").map((part) => part.trim().toLowerCase()))].filter(Boolean);
  if (location.length > LOCATION_MAX_LENGTH || parts.length === 0) {
    throw badArgument("location", `location must be 1 to ${LOCATION_MAX_LENGTH} characters of comma-separated places`);
  }
  return { locationTerms: { hasEvery: parts } };
}
