import { builder } from "../builder.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
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

/** How `near` and `radiusKm` work, for the descriptions of every list that has them. */
export const NEAR_DESCRIPTION =
  'A place to search around: a known city by name (any case, accents optional: "Berlin", "Sao Paulo"; the cities the catalog places rows in), or "latitude,longitude" in decimal degrees (e.g. "52.52,13.405"). Rows within radiusKm (default 50) by great-circle distance; rows without coordinates (no location, or a city not among the known places) never match.';

export const RADIUS_KM_DEFAULT = 50;
export const RADIUS_KM_MAX = 1_000;
const COORDINATES = /^\s*(-?\d{1,3}(?:\.\d{1,12})?)\s*,\s*(-?\d{1,3}(?:\.\d{1,12})?)\s*$/;

/** A place name as places.name_key holds it: lowercase, accents removed, single spaces. */
export const placeKey = (name: string) =>
  name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .trim()
    .replace(/\s+/g, " ");

// The known places change with a migration, not per request: each name is looked up once a minute.
const PLACE_CACHE_MS = 60_000;
const placeCache = new Map<string, { at: number; place: Promise<{ latitude: number; longitude: number } | null> }>();

function placeNamed(prisma: PrismaClient, key: string) {
  const hit = placeCache.get(key);
  if (hit && Date.now() - hit.at < PLACE_CACHE_MS) return hit.place;
  const place = prisma.place.findUnique({ where: { nameKey: key }, select: { latitude: true, longitude: true } });
  // Unknown names are not remembered (any text may be sent); a failed lookup is not either.
  place.then(
    (found) => (found ? undefined : placeCache.delete(key)),
    () => placeCache.delete(key),
  );
  if (placeCache.size >= 1_000) placeCache.delete(placeCache.keys().next().value!);
  placeCache.set(key, { at: Date.now(), place });
  return place;
}

export interface NearPoint {
  lat: number;
  lon: number;
  radiusKm: number;
}

/** The point and radius of `near` and `radiusKm`; a BAD_USER_INPUT for an unknown place or a bad radius. */
export async function resolveNear(
  prisma: PrismaClient,
  near: string | null | undefined,
  radiusKm: number | null | undefined,
): Promise<NearPoint | null> {
  if (near == null) {
    if (radiusKm != null) throw badArgument("radiusKm", "radius_km needs near: the place to measure from");
    return null;
  }
  const radius = radiusKm ?? RADIUS_KM_DEFAULT;
  if (!(radius > 0 && radius <= RADIUS_KM_MAX)) {
    throw badArgument("radiusKm", `radius_km must be a number above 0 and at most ${RADIUS_KM_MAX}`);
  }
  const coordinates = COORDINATES.exec(near);
  if (coordinates) {
    const lat = Number(coordinates[1]);
    const lon = Number(coordinates[2]);
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180) {
      throw badArgument("near", "near's latitude must be from -90 to 90 and its longitude from -180 to 180");
    }
    return { lat, lon, radiusKm: radius };
  }
  const key = placeKey(near);
  const place = key.length > 0 && key.length <= 100 ? await placeNamed(prisma, key) : null;
  if (!place) {
    throw badArgument(
      "near",
      `near must be a known city (e.g. Berlin, New York) or "latitude,longitude"; got "${near.slice(0, 100)}"`,
    );
  }
  return { lat: place.latitude, lon: place.longitude, radiusKm: radius };
}
