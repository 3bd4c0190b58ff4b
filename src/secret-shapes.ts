// The shapes of the secrets this service issues, on the ground floor (no imports): src/auth mints
// them, src/logger.ts scrubs them from every line, and neither depends on the other for it.

/** The prefix of the compression API's personal access tokens (src/auth/api-keys.ts). */
export const API_KEY_PREFIX = "mkp_";
