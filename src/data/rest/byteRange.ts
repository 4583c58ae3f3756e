/**
 * The `Range` header of a download (RFC 9110, section 14.2), for one range of bytes. A request for
 * several ranges is answered whole, as the RFC lets a server (section 14.2: "A server MAY ignore
 * the Range header field"), and so is a header that is not a valid `bytes` range.
 */

/** Bytes `start` to `end` of a file, both inclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

/** One range-spec: `first-last`, `first-` or `-suffixLength` (RFC 9110, section 14.1.1). */
const SINGLE = /^bytes[ \t]*=[ \t]*(?:(\d+)[ \t]*-[ \t]*(\d*)|-[ \t]*(\d+))[ \t]*$/i;

/**
 * The range a `Range` header asks of a file of `size` bytes (`size` > 0).
 * @returns the range, clamped to the file (`last` beyond its end means its end); `'unsatisfiable'`
 *   when it starts at or after the end, or asks for the last 0 bytes (answered 416); undefined when
 *   the header is absent, not one valid bytes range (several, another unit, `first` > `last`): then
 *   the whole file is sent.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = SINGLE.exec(header.trim());
  if (!match) return undefined;
  const [, first, last, suffix] = match;
  if (suffix !== undefined) {
    const length = Number(suffix);
    if (length === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last ? Number(last) : Infinity;
  if (end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
