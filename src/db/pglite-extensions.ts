// The PostgreSQL extensions the schema uses (migration search_that_forgives), as PGlite loads
// them: pg_trgm (the search vocabulary's trigram index: typo correction and last-word prefixes) and
// unaccent (accents folded: "zurich" finds Zürich). A PostgreSQL server ships both in its contrib
// package; PGlite ships them as archives loaded when the database opens.
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";

export const pgliteExtensions = { pg_trgm, unaccent };
