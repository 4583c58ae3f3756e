/**
 * The output of a command execution as Interface A returns it: each stream kept to its last
 * `OUTPUT_LIMIT_BYTES` (1 MiB), with a marker line in front when the start was cut.
 */

/** How much of each stream is kept: the last 1 MiB (1,048,576 bytes) of it. */
export const OUTPUT_LIMIT_BYTES = 1024 * 1024;

/** The line put before the kept tail when earlier output was dropped. */
export const cutMarker = (droppedBytes: number) =>
  `[backyard: ${droppedBytes} earlier bytes of this stream were cut; only its last 1 MiB is kept]\n`;

/**
 * The tail of a byte stream: appends chunks and keeps at most `limit` bytes, counting what it drops.
 * Renders as UTF-8 text that starts and ends on character boundaries (a character split by the cut
 * is dropped whole; an incomplete last character waits for its remaining bytes).
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes dropped from the front so far. */
  dropped = 0;

  constructor(private readonly limit = OUTPUT_LIMIT_BYTES) {}

  /** Total bytes ever appended. */
  get total(): number {
    return this.dropped + this.size;
  }

  /** Forgets everything appended so far (what came was not the command's output). */
  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.dropped = 0;
  }

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (chunk.length >= this.limit) {
      this.dropped += this.size + chunk.length - this.limit;
      this.chunks = [chunk.subarray(chunk.length - this.limit)];
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /**
   * The kept text, with the cut marker first when something was dropped.
   * @param final true once the stream has ended: an incomplete last character is then shown as U+FFFD
   *   instead of being held back.
   */
  render(final = false): string {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    let bytes = this.chunks[0] ?? Buffer.alloc(0);
    let skipped = 0;
    if (this.dropped > 0) {
      // Skip continuation bytes (10xxxxxx) of a character whose first bytes were cut.
      while (skipped < bytes.length && skipped < 4 && (bytes[skipped]! & 0xc0) === 0x80) skipped++;
      bytes = bytes.subarray(skipped);
    }
    if (!final) bytes = bytes.subarray(0, completeUtf8Length(bytes));
    const text = bytes.toString('utf8');
    return this.dropped > 0 ? cutMarker(this.dropped + skipped) + text : text;
  }
}

/** The length of the longest prefix of `bytes` that does not end inside a UTF-8 character. */
export function completeUtf8Length(bytes: Buffer): number {
  const n = bytes.length;
  // Look back over at most 3 bytes for the lead byte of the last character.
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}
