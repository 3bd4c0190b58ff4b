// A `Range: bytes=…` request header (RFC 9110 section 14.2), for downloads: one range, as a first-last
// pair, an open end (`500-`) or a suffix (`-500`). Several ranges are answered whole (a server may
// ignore Range); a range that starts past the end is unsatisfiable (416 with `Content-Range: bytes */size`).

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

const ONE_RANGE = /^bytes=(\d*)-(\d*)$/i;

/** The bytes `header` asks for in a file of `size` bytes; null: the whole file; "unsatisfiable": 416. */
export function byteRange(header: string | undefined, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = ONE_RANGE.exec(header.trim());
  if (!match) return null; // several ranges, another unit, or malformed: the whole file
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== "" && Number(last) < start) return null; // invalid: ignored, as RFC 9110 allows
  if (start >= size) return "unsatisfiable";
  return { start, end };
}
