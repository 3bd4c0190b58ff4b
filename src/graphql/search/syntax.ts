// The query syntax of `q`, as job boards and web search engines spell it: words (all must occur),
// "quoted phrases" (the words next to each other, in that order), -word or -"phrase" (left out),
// and OR between two terms (either may occur; binds tighter than the implicit AND, so
// `python OR rust engineer` is (python OR rust) AND engineer). A term is a word or a phrase.
// Malformed input is refused with a message that says what to change, never guessed at.

export type Term = { kind: "word"; text: string; prefix: boolean } | { kind: "phrase"; text: string };

/** A parsed `q`: every group must hold (any of its terms), and no excluded term may occur. */
export interface ParsedQuery {
  groups: Term[][];
  excluded: Term[];
}

export class QuerySyntaxError extends Error {
  override name = "QuerySyntaxError";
}

type Token = { kind: "term"; term: Term; exclude: boolean } | { kind: "or" };

/** Splits q into terms and OR operators. */
function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    const exclude = c === "-" && i + 1 < q.length && !/\s/u.test(q[i + 1]!);
    if (c === "-" && !exclude)
      throw new QuerySyntaxError('a "-" must be followed by the word or "phrase" to leave out');
    const start = exclude ? i + 1 : i;
    if (q[start] === '"') {
      const end = q.indexOf('"', start + 1);
      if (end < 0) throw new QuerySyntaxError('a quoted phrase is not closed: add the closing "');
      const text = q.slice(start + 1, end).trim();
      if (!/[\p{L}\p{N}]/u.test(text)) throw new QuerySyntaxError('a quoted phrase "" must hold a word');
      tokens.push({ kind: "term", term: { kind: "phrase", text }, exclude });
      i = end + 1;
      continue;
    }
    let end = start;
    while (end < q.length && !/\s/u.test(q[end]!) && q[end] !== '"') end++;
    const text = q.slice(start, end);
    if (text === "OR" && !exclude) tokens.push({ kind: "or" });
    else tokens.push({ kind: "term", term: { kind: "word", text, prefix: false }, exclude });
    i = end;
  }
  return tokens;
}

/** Parses q. The last word is a prefix (search as you type) when nothing follows it, not even a space. */
export function parseQuery(q: string): ParsedQuery {
  const tokens = tokenize(q);
  const groups: Term[][] = [];
  const excluded: Term[] = [];
  let joinNext = false;
  tokens.forEach((token, index) => {
    if (token.kind === "or") {
      const before = tokens[index - 1];
      const after = tokens[index + 1];
      if (!before || before.kind !== "term" || before.exclude || !after || after.kind !== "term" || after.exclude) {
        throw new QuerySyntaxError("OR must stand between two words or phrases to find, e.g. python OR rust");
      }
      joinNext = true;
      return;
    }
    if (token.exclude) excluded.push(token.term);
    else if (joinNext) groups[groups.length - 1]!.push(token.term);
    else groups.push([token.term]);
    joinNext = false;
  });
  if (groups.length === 0) {
    throw new QuerySyntaxError(
      excluded.length > 0 ? "q needs a word to find besides the ones it leaves out" : "q must contain a word",
    );
  }
  const last = tokens[tokens.length - 1];
  if (last?.kind === "term" && !last.exclude && last.term.kind === "word" && !/\s$/u.test(q)) last.term.prefix = true;
  return { groups, excluded };
}
