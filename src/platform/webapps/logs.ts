import type { LogRow } from './store.js';

/**
 * Container log rows from the engine's `GET /containers/{id}/logs?timestamps=1` answer of a container
 * without a TTY: frames of an 8-byte header (stream type 1 = stdout, 2 = stderr; big-endian length
 * at byte 4) and a payload of lines, each starting with an RFC 3339 timestamp with nanoseconds.
 * @returns rows `{source: 'stdout' | 'stderr', message, time}` in the order written (time in ISO 8601 with milliseconds).
 */
export function parseContainerLogs(buffer: Buffer): LogRow[] {
  const rows: LogRow[] = [];
  let offset = 0;
  const partial: Record<string, string> = { stdout: '', stderr: '' };
  while (offset + 8 <= buffer.length) {
    const type = buffer[offset];
    const size = buffer.readUInt32BE(offset + 4);
    const payload = buffer.subarray(offset + 8, offset + 8 + size).toString('utf8');
    offset += 8 + size;
    const source = type === 2 ? 'stderr' : 'stdout';
    const lines = (partial[source] + payload).split('\n');
    partial[source] = lines.pop() ?? '';
    for (const line of lines) rows.push(rowOf(source, line));
  }
  for (const source of ['stdout', 'stderr']) if (partial[source]) rows.push(rowOf(source, partial[source]!));
  return rows;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2}) /;

function rowOf(source: string, line: string): LogRow {
  const text = line.replace(/\r$/, '');
  const match = TIMESTAMP.exec(text);
  if (!match) return { source, message: text, time: new Date().toISOString() };
  const millis = (match[2] ?? '').padEnd(3, '0').slice(0, 3);
  const time = new Date(`${match[1]}.${millis}${match[3]}`);
  return { source, message: text.slice(match[0].length), time: Number.isNaN(time.getTime()) ? new Date().toISOString() : time.toISOString() };
}
