import { builder } from "../builder.ts";

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
