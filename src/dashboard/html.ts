// HTML built from template literals: every interpolated value is escaped unless it is already
// Html (made by this tag), arrays are joined, null/undefined/false render nothing. The pages
// have no other way to put text into markup, so no value can inject any.
import { encode } from "html-entities";

export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join("");
  return encode(String(part), { mode: "specialChars" });
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? "")));
  return new Html(out);
}

/**
 * A file name that may wrap after `_`, `-` and `.` (a <wbr> after each), escaped like any text:
 * `Q3_financial_report-final.pdf` wraps between its words rather than mid-word.
 */
export function breakableName(name: string): Html {
  return html`${name.split(/(?<=[_\-.])/).map((piece, i) => (i === 0 ? piece : [new Html("<wbr />"), piece]))}`;
}
