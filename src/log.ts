import { pino, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger };

/**
 * How log lines are written (`BACKYARD_LOG_FORMAT`): `json`, one JSON object a line (for machines
 * and log collectors); `pretty`, a readable line (time, level, message, then the fields) for a
 * person at a terminal; `auto`, `pretty` when stderr is a terminal and `json` otherwise.
 */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** The format `auto` stands for here: pretty on a terminal, JSON when stderr goes to a file or a pipe. */
export function resolveLogFormat(format: LogFormat, stderrIsTerminal = Boolean(process.stderr.isTTY)): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return stderrIsTerminal ? 'pretty' : 'json';
}

/**
 * Logs on stderr (fd 2), never stdout: stdout belongs to the MCP stdio transport and to commands
 * whose output scripts read (`backyard account create`). Written synchronously in this thread in
 * both formats (pino-pretty as a stream, not a worker transport), so the last lines before an exit
 * are never lost. Fields that could carry secrets are redacted wherever they appear, before either
 * format sees them.
 */
export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  const pretty = resolveLogFormat(format) === 'pretty';
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
    pretty
      ? PinoPretty({
          destination: 2,
          sync: true,
          colorize: Boolean(process.stderr.isTTY),
          translateTime: 'SYS:HH:MM:ss.l',
          // The process is always the same one; its name and host add nothing to a line read on its own terminal.
          ignore: 'pid,hostname,name',
          singleLine: true,
        })
      : pino.destination({ fd: 2, sync: true }),
  );
}
