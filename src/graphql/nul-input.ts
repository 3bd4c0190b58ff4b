// PostgreSQL text cannot hold the NUL character (U+0000): a string argument carrying one reached
// the database and failed there, a masked fault ("Unexpected error.") for what is bad input (found
// by test/graphql-arguments.fuzz.test.ts on job(slug:), company(slug:) and the other lookups). No
// slug, handle, filter or search holds one, so an operation with one anywhere in its arguments or
// variables is refused before it runs, as the REST parameters refuse control characters.
import { GraphQLError, Kind, visit, type DocumentNode, type ExecutionArgs } from "graphql";
import type { Plugin } from "graphql-yoga";

const NUL = "\u0000";

function holdsNul(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return value.includes(NUL);
  // Variables are parsed JSON: shallow in practice, and bounded here whatever they are.
  if (depth > 20 || value === null || typeof value !== "object") return false;
  return Object.values(value).some((v: unknown) => holdsNul(v, depth + 1));
}

// yoga hands the same parsed document for the same text (its parse cache): walk each once.
const literalsChecked = new WeakMap<DocumentNode, boolean>();

function literalHoldsNul(document: DocumentNode): boolean {
  const known = literalsChecked.get(document);
  if (known !== undefined) return known;
  let found = false;
  visit(document, {
    [Kind.STRING]: (node) => {
      if (node.value.includes(NUL)) found = true;
    },
  });
  literalsChecked.set(document, found);
  return found;
}

export const refuseNulInStrings: Plugin = {
  onExecute({ args, setResultAndStopExecution }) {
    const { document, variableValues } = args as ExecutionArgs;
    if (!holdsNul(variableValues) && !literalHoldsNul(document)) return;
    const error = new GraphQLError("Strings must not contain the NUL character (U+0000).", {
      extensions: { code: "BAD_USER_INPUT", http: { status: 400 } },
    });
    setResultAndStopExecution({ errors: [error] });
  },
};
