import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The server's logger: structured JSON lines on stdout, or readable lines when stdout is a
 * terminal. Fastify's request logs and the runtime's failures both go through it.
 */
export function createLogger(level: LogLevel = 'info', terminal = process.stdout.isTTY === true): Logger {
  const options = { level, base: { service: 'baton' } };
  return terminal
    ? pino(options, pretty({ colorize: true, ignore: 'pid,hostname,service', translateTime: 'SYS:HH:MM:ss' }))
    : pino(options);
}
