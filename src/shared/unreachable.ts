/** Socket errors of a database connection. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE']);

/**
 * Whether a failure means PostgreSQL cannot be reached (rather than refused a statement): a socket
 * error, SQLSTATE class 08 (connection exception) but 08P01, 57P01-57P03 (shutting down, starting
 * up) or 53300 (too many connections), or node-postgres's "Connection terminated".
 */
export function isUnreachableDatabase(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // 08P01 (protocol violation) is a statement the server refused, not a lost connection.
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || (code.startsWith('08') && code !== '08P01') || ['57P01', '57P02', '57P03', '53300'].includes(code))) return true;
  return /^Connection terminated/.test(error.message);
}

/**
 * The text for a PostgreSQL that cannot be reached at start: the URL without its password, what
 * failed, and what to do (`backyard serve` prints it).
 */
export function unreachableText(url: string, error: unknown): string {
  const shown = new URL(url);
  shown.password = '';
  return `PostgreSQL at ${shown.toString()} cannot be reached (${(error as Error).message}). Start it, or fix BACKYARD_DATABASE_URL.`;
}
