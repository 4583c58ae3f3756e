import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each non-empty line of a Docker event stream (`GET /events`: one JSON object
 * per line, a line possibly split across chunks), trimmed.
 */
export function eachEventLine(stream: Pick<Readable, 'on'>, onLine: (line: string) => void): void {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) onLine(line);
    }
  });
}
