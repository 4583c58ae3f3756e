import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stderr (fd 2), never stdout: stdout belongs to the MCP stdio transport
 * and to commands whose output scripts read (`backyard account create`).
 * Fields that could carry secrets are redacted wherever they appear.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { name: 'backyard' },
      redact: {
        paths: [
          'token',
          '*.token',
          'authorization',
          '*.authorization',
          'req.headers.authorization',
          'masterKey',
          '*.masterKey',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}
